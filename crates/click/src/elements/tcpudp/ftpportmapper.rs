//! FTPPortMapper: rewrites FTP PORT commands for a NAT and installs the
//! data connection's mapping.

use super::iprewriterbase::{update_words, Rewriter};
use crate::common::iprw::{jiffies, FlowId, Kind, IP_PROTO_TCP};
use crate::prelude::*;
use alloc::format;
use click_wire::checksum::transport_checksum;
use core::net::Ipv4Addr;

pub static SPEC: ClassSpec = ClassSpec {
    name: "FTPPortMapper",
    port_count: "1/1",
    processing: "a/a",
    group: "tcpudp",
    signature: "FTPPortMapper(CONTROL_REWRITER, DATA_REWRITER, DATA_REWRITER_INPUT)",
    summary: "Manipulates IPRewriter for FTP.",
    description: "Expects FTP control packets (IP, with the transport header annotation set, as \
CheckIPHeader or MarkIPHeader leave them) on their way into CONTROL_REWRITER, a TCPRewriter or \
IPRewriter that must be downstream. When a packet's TCP payload starts with a PORT command \
(`PORT h1,h2,h3,h4,p1,p2` followed by CR or LF; the command word in any case) and \
CONTROL_REWRITER has a mapping for the packet's flow, FTPPortMapper:\n\n\
- asks DATA_REWRITER (any IP rewriter; it may be CONTROL_REWRITER) for the mapping of the data \
connection the server will open: from the address and port the command names to the packet's \
destination at one less than its destination port (FTP's data port). When there is none, \
DATA_REWRITER makes one as if a packet of that flow had arrived on its input \
DATA_REWRITER_INPUT (usually a pattern);\n\
- rewrites the command's argument to that mapping's new source address and port, growing or \
shrinking the packet as needed, and fixes the IP length, the IP checksum (incrementally) and \
the TCP checksum (recomputed);\n\
- tells CONTROL_REWRITER that this direction of the control connection changed length there: \
from the sequence number after this payload on, CONTROL_REWRITER shifts the direction's \
sequence numbers, and the other direction's acknowledgement numbers and SACK blocks, by the \
change (a retransmission of earlier data keeps the old shift);\n\
- copies the control mapping's REPLY_ANNO value to the data mapping.\n\n\
The packet's own addresses and ports are left to CONTROL_REWRITER. Packets without a complete \
PORT command first in their payload, with a malformed one (a number above 255), or of a \
control flow CONTROL_REWRITER does not know pass unchanged. Example, with \
`IPRewriterPatterns(pat 1.0.0.1 1024-65535# - -)` and `rw :: TCPRewriter(pattern pat 0 0)`: \
`FTPPortMapper(rw, rw, 0) -> rw` turns `PORT 200,200,200,200,200,200` from a mapped client \
into `PORT 1,0,0,1,4,1` (1.0.0.1 port 1025) and lowers that client's later sequence numbers \
by 12.",
    ports: "one input, one output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || {
        Box::new(FTPPortMapper {
            control: String::new(),
            data: String::new(),
            data_input: 0,
            control_elem: usize::MAX,
            data_elem: usize::MAX,
        })
    },
};

/// `FTPPortMapper`.
pub struct FTPPortMapper {
    control: String,
    data: String,
    data_input: usize,
    control_elem: usize,
    data_elem: usize,
}

/// A parsed PORT command: where its argument is in the payload, and the
/// address and port it names.
#[derive(Debug, PartialEq, Eq)]
pub struct PortCommand {
    /// Offset of the argument in the payload.
    pub arg_start: usize,
    /// Offset just after it (the CR or LF).
    pub arg_end: usize,
    pub addr: u32,
    pub port: u16,
}

/// Parses a PORT command at the start of FTP payload `data`: `PORT`
/// (any case), spaces, six decimal numbers below 256 separated by
/// commas, then CR or LF.
pub fn parse_port_command(data: &[u8]) -> Option<PortCommand> {
    if data.len() < 5 || !data[..4].eq_ignore_ascii_case(b"PORT") || data[4] != b' ' {
        return None;
    }
    let mut pos = 5;
    while pos < data.len() && data[pos] == b' ' {
        pos += 1;
    }
    let arg_start = pos;
    let mut nums = [0u32; 6];
    let mut which = 0;
    while pos < data.len() && which < 6 {
        match data[pos] {
            c @ b'0'..=b'9' => {
                nums[which] = nums[which]
                    .saturating_mul(10)
                    .saturating_add((c - b'0') as u32)
            }
            b',' => which += 1,
            _ => break,
        }
        pos += 1;
    }
    if which != 5 || pos >= data.len() || (data[pos] != b'\r' && data[pos] != b'\n') {
        return None;
    }
    if nums.iter().any(|&n| n >= 256) {
        return None;
    }
    Some(PortCommand {
        arg_start,
        arg_end: pos,
        addr: nums[0] << 24 | nums[1] << 16 | nums[2] << 8 | nums[3],
        port: (nums[4] << 8 | nums[5]) as u16,
    })
}

impl FTPPortMapper {
    fn with_rewriter<R>(
        &self,
        cx: &Ctx,
        elem: usize,
        f: impl FnOnce(&mut Rewriter) -> R,
    ) -> Option<R> {
        cx.with_element(elem, |e| {
            e.as_any_mut()
                .and_then(|a| a.downcast_mut::<Rewriter>())
                .map(f)
        })
        .flatten()
    }

    /// Rewrites `p`'s PORT command, if it has one this element can map.
    fn handle(&mut self, p: &mut Packet, cx: &Ctx) -> Option<()> {
        let nh_off = p.network_header_offset()?;
        let th_off = p.transport_header_offset()?;
        if nh_off < 0 || th_off < nh_off {
            return None;
        }
        let (nh_off, th_off) = (nh_off as usize, th_off as usize);
        let d = p.data();
        let ip = d.get(nh_off..nh_off + 20)?;
        if ip[9] != IP_PROTO_TCP || d.len() < th_off + 20 {
            return None;
        }
        let src = u32::from_be_bytes([ip[12], ip[13], ip[14], ip[15]]);
        let dst = u32::from_be_bytes([ip[16], ip[17], ip[18], ip[19]]);
        let t = &d[th_off..];
        let sport = u16::from_be_bytes([t[0], t[1]]);
        let dport = u16::from_be_bytes([t[2], t[3]]);
        let th_seq = u32::from_be_bytes([t[4], t[5], t[6], t[7]]);
        let data_off = th_off + (t[12] >> 4) as usize * 4;
        let payload = d.get(data_off..)?;
        let cmd = parse_port_command(payload)?;
        let len = payload.len();

        let control_flow = FlowId::new(src, sport, dst, dport);
        if !self.with_rewriter(cx, self.control_elem, |rw| rw.has_tcp_entry(&control_flow))? {
            return None;
        }
        // the data connection the server opens: to the named address and
        // port, from the control port's neighbour
        let data_flow = FlowId::new(cmd.addr, cmd.port, dst, dport.wrapping_sub(1));
        let now = jiffies(cx.now_coarse());
        let input = self.data_input;
        let mapped = self.with_rewriter(cx, self.data_elem, |rw| {
            rw.get_entry(IP_PROTO_TCP, &data_flow, Some(input), now)
        })??;

        let a = mapped.saddr.to_be_bytes();
        let text = format!(
            "{},{},{},{},{},{}",
            a[0],
            a[1],
            a[2],
            a[3],
            mapped.sport >> 8,
            mapped.sport & 255
        );
        let text = text.as_bytes();
        let old_len = cmd.arg_end - cmd.arg_start;
        let arg = data_off + cmd.arg_start;
        let rest = data_off + cmd.arg_end;
        let total = p.len();
        if text.len() > old_len {
            p.put(text.len() - old_len);
            let d = p.data_mut();
            d.copy_within(rest..total, arg + text.len());
            d[arg..arg + text.len()].copy_from_slice(text);
        } else {
            let d = p.data_mut();
            d.copy_within(rest..total, arg + text.len());
            d[arg..arg + text.len()].copy_from_slice(text);
            p.take(old_len - text.len());
        }

        // IP length, and the IP checksum incrementally
        let new_total = (p.len() - nh_off) as u16;
        let d = p.data_mut();
        let ip = &mut d[nh_off..];
        let old_ip_len = u16::from_be_bytes([ip[2], ip[3]]);
        ip[2..4].copy_from_slice(&new_total.to_be_bytes());
        let c = update_words(
            u16::from_be_bytes([ip[10], ip[11]]),
            &[old_ip_len],
            &[new_total],
        );
        ip[10..12].copy_from_slice(&c.to_be_bytes());

        // later sequence numbers of this direction move by the change
        let change = text.len() as i32 - old_len as i32;
        let trigger = th_seq.wrapping_add(len as u32);
        let reply_anno = self.with_rewriter(cx, self.control_elem, |rw| {
            rw.update_seqno_delta(&control_flow, trigger, change)
        });
        if let Some(Some(v)) = reply_anno {
            let _ = self.with_rewriter(cx, self.data_elem, |rw| {
                rw.set_reply_anno(IP_PROTO_TCP, &data_flow, v)
            });
        }

        // the TCP checksum, recomputed
        let d = p.data_mut();
        let seg = &mut d[th_off..];
        seg[16] = 0;
        seg[17] = 0;
        let c = transport_checksum(Ipv4Addr::from(src), Ipv4Addr::from(dst), IP_PROTO_TCP, seg);
        seg[16..18].copy_from_slice(&c.to_be_bytes());
        Some(())
    }
}

impl Element for FTPPortMapper {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let control: String = a.read_mp("CONTROL_REWRITER")?;
        let data: String = a.read_mp("DATA_REWRITER")?;
        let input: i64 = a.read_mp("DATA_REWRITER_INPUT")?;
        a.complete()?;
        if input < 0 {
            return Err("DATA_REWRITER_INPUT out of range".into());
        }
        self.control = control;
        self.data = data;
        self.data_input = input as usize;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        // (element, needs TCP sequence-number deltas)
        let find = |name: &str, tcp: bool| -> Result<(usize, usize), String> {
            let e = cx.find_element(name).ok_or_else(|| {
                format!(
                    "{}: no element named '{name}'",
                    if tcp {
                        "CONTROL_REWRITER"
                    } else {
                        "DATA_REWRITER"
                    }
                )
            })?;
            let r = cx
                .with_element(e, |el| {
                    el.as_any_mut()
                        .and_then(|a| a.downcast_mut::<Rewriter>())
                        .map(|rw| (rw.kind(), rw.ninput_specs()))
                })
                .flatten();
            match r {
                Some((k, _)) if tcp && !matches!(k, Kind::Tcp | Kind::Ip) => {
                    Err("CONTROL_REWRITER: type mismatch (not a TCPRewriter or IPRewriter)".into())
                }
                Some((_, n)) => Ok((e, n)),
                None if tcp => {
                    Err("CONTROL_REWRITER: type mismatch (not a TCPRewriter or IPRewriter)".into())
                }
                None => Err("DATA_REWRITER: type mismatch (not an IP rewriter)".into()),
            }
        };
        let (c, _) = find(&self.control, true)?;
        let (d, n) = find(&self.data, false)?;
        if self.data_input >= n {
            return Err("DATA_REWRITER_INPUT out of range".into());
        }
        self.control_elem = c;
        self.data_elem = d;
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, cx: &Ctx) -> Option<Packet> {
        let _ = self.handle(&mut p, cx);
        Some(p)
    }

    crate::element_any!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_commands_parse_as_click_reads_them() {
        let c = parse_port_command(b"PORT 200,200,200,200,200,200\n").unwrap();
        assert_eq!(c.arg_start, 5);
        assert_eq!(c.arg_end, 28);
        assert_eq!(c.addr, 0xc8c8_c8c8);
        assert_eq!(c.port, 200 * 256 + 200);
        let c = parse_port_command(b"port   1,0,0,2,3,9\r\nNOOP\r\n").unwrap();
        assert_eq!((c.arg_start, c.arg_end), (7, 18));
        assert_eq!((c.addr, c.port), (0x0100_0002, 777));
        // incomplete, malformed, out of range, not first
        assert!(parse_port_command(b"PORT 1,0,0,2,3,9").is_none());
        assert!(parse_port_command(b"PORT 1,0,0,2,3\n").is_none());
        assert!(parse_port_command(b"PORT 1,0,0,2,3,9,1\n").is_none());
        assert!(parse_port_command(b"PORT 1,0,0,256,3,9\n").is_none());
        assert!(parse_port_command(b"PORT 1,0,0,2,3,x\n").is_none());
        assert!(parse_port_command(b"PORTS 1,0,0,2,3,9\n").is_none());
        assert!(parse_port_command(b"NOOP\nPORT 1,0,0,2,3,9\n").is_none());
    }
}
