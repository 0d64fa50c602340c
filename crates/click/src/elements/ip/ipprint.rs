//! IPPrint: pretty-prints IP packets, one tcpdump-like line each.

use super::iputil::is_fragment;
use crate::packet::{AGGREGATE_ANNO_OFFSET, PAINT_ANNO_OFFSET};
use crate::prelude::*;
use alloc::format;
use click_lang::args::parse_bool;
use click_wire::names;
use core::fmt::Write as _;
use core::net::Ipv4Addr;

/// `IPPrint([LABEL, KEYWORDS])`.
pub struct IPPrint {
    label: String,
    bytes: i32,
    /// 0 none, 1 hex, 2 ASCII.
    contents: u8,
    payload: bool,
    swap: bool,
    active: bool,
    print_id: bool,
    print_timestamp: bool,
    print_paint: bool,
    print_tos: bool,
    print_ttl: bool,
    print_len: bool,
    print_aggregate: bool,
    line: String,
}

impl Default for IPPrint {
    fn default() -> Self {
        IPPrint {
            label: String::new(),
            bytes: 1500,
            contents: 0,
            payload: false,
            swap: true,
            active: true,
            print_id: false,
            print_timestamp: true,
            print_paint: false,
            print_tos: false,
            print_ttl: false,
            print_len: false,
            print_aggregate: false,
            line: String::new(),
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "IPPrint",
    port_count: "1/1",
    processing: "a/a",
    group: "ip",
    signature: "IPPrint([LABEL, KEYWORDS])",
    summary: "Pretty-prints IP packets.",
    description: "Expects IP packets with the IP header annotation set (place it downstream of \
CheckIPHeader or MarkIPHeader); packets without it pass silently. Prints each packet on \
standard error in Click's tcpdump-like one-line format, preceded by the LABEL text:\n\n\
- TCP: `SRC.SPORT > DST.DPORT: FLAGS SEQ:END(SEQLEN,PKTLEN,IPLEN) ack ACK win WIN`, FLAGS \
being `S`, `F`, `R`, `P` or `.`;\n\
- UDP: `SRC.SPORT > DST.DPORT: udp ULEN`;\n\
- ICMP: `SRC > DST: icmp echo (ID, SEQ)`, `icmp echo-reply (ID, SEQ)`, `icmp ADDR unreachable \
CODE [PROTO/PORT | (mtu N)]`, or `icmp TYPE [CODE]` with Click's type and code names;\n\
- other protocols: `SRC > DST: ip-proto-N`;\n\
- fragments append ` (frag ID:LEN@OFFSET[+])`; later fragments print only `tcp`, `udp` or \
`icmp` after the addresses. Truncated headers print `truncated-ip`, `truncated-tcp`, ...\n\n\
Keyword arguments:\n\n\
- `CONTENTS`: `NONE`, `HEX` or `ASCII` (or a boolean): also print the packet data, from the \
start of the packet, on following lines. Default `NONE`.\n\
- `PAYLOAD`: like CONTENTS (`false`, `hex`, `ascii`), but print only the payload after the \
TCP or UDP header (after the IP header for other protocols and later fragments). At most one \
of CONTENTS and PAYLOAD.\n\
- `MAXLENGTH` (integer): most bytes of contents to print; -1 means all. Default 1500. \
(`NBYTES` is a deprecated synonym.)\n\
- `ID`, `TTL`, `TOS`, `LENGTH` (booleans): print the IP ID, TTL, TOS or total length field \
before the protocol part. Default false.\n\
- `TIMESTAMP` (boolean): print each packet's timestamp annotation. Default true.\n\
- `AGGREGATE` (boolean): print the aggregate annotation as `#N`. Default false.\n\
- `PAINT` (boolean): print the paint annotation. Default false.\n\
- `SWAP` (boolean): print ICMP echo IDs and sequence numbers in network byte order (false: \
as a little-endian host reads them). Default true, as in Click's code (its documentation says \
false).\n\
- `ACTIVE` (boolean): if false, print nothing. Default true.\n\
- `CHANNEL` (word): accepted for compatibility; output always goes to standard error.\n\n\
Click's user-level `OUTFILE` keyword is not supported.",
    ports: "one input, one output",
    handlers: &[HandlerDoc {
        name: "active",
        mode: HandlerMode::ReadWrite,
        text: "The ACTIVE value.",
    }],
    live_reconfigure: false,
    order_sensitive: true,
    make: || Box::new(IPPrint::default()),
};

const HEX: &[u8; 16] = b"0123456789abcdef";

fn be16(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}

fn be32(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

fn src_dst(ip: &[u8]) -> (Ipv4Addr, Ipv4Addr) {
    (
        Ipv4Addr::new(ip[12], ip[13], ip[14], ip[15]),
        Ipv4Addr::new(ip[16], ip[17], ip[18], ip[19]),
    )
}

fn first_frag(ip: &[u8]) -> bool {
    be16(ip, 6) & 0x1fff == 0
}

/// Click's `unparse_proto`.
fn unparse_proto(p: u8, prepend: bool) -> String {
    match names::ip_proto_name(u16::from(p)) {
        Some(n) => n.into(),
        None if prepend => format!("protocol {}", p),
        None => p.to_string(),
    }
}

impl IPPrint {
    fn tcp_line(sa: &mut String, ip: &[u8], th: &[u8], tlen: i64, pkt_len: usize) {
        let (s, d) = src_dst(ip);
        if tlen < 4 || !first_frag(ip) {
            let what = if first_frag(ip) {
                "truncated-tcp"
            } else {
                "tcp"
            };
            let _ = write!(sa, "{} > {}: {}", s, d, what);
            return;
        }
        let _ = write!(sa, "{}.{} > {}.{}: ", s, be16(th, 0), d, be16(th, 2));
        if tlen < 14 {
            sa.push_str("truncated-tcp");
            return;
        }
        let ip_len = i64::from(be16(ip, 2));
        let flags = th[13];
        let mut seqlen = ip_len - (i64::from(ip[0] & 0xf) << 2) - (i64::from(th[12] >> 4) << 2);
        if flags & 0x02 != 0 {
            sa.push('S');
            seqlen += 1;
        }
        if flags & 0x01 != 0 {
            sa.push('F');
            seqlen += 1;
        }
        if flags & 0x04 != 0 {
            sa.push('R');
        }
        if flags & 0x08 != 0 {
            sa.push('P');
        }
        if flags & 0x0f == 0 {
            sa.push('.');
        }
        let seq = be32(th, 4);
        let _ = write!(
            sa,
            " {}:{}({},{},{})",
            seq,
            seq.wrapping_add(seqlen as u32),
            seqlen as i32,
            pkt_len,
            ip_len
        );
        if flags & 0x10 != 0 {
            let _ = write!(sa, " ack {}", be32(th, 8));
        }
        if tlen < 16 {
            sa.push_str("truncated-tcp");
            return;
        }
        let _ = write!(sa, " win {}", be16(th, 14));
    }

    fn udp_line(sa: &mut String, ip: &[u8], th: &[u8], tlen: i64) {
        let (s, d) = src_dst(ip);
        if tlen < 4 || !first_frag(ip) {
            let what = if first_frag(ip) {
                "truncated-udp"
            } else {
                "udp"
            };
            let _ = write!(sa, "{} > {}: {}", s, d, what);
            return;
        }
        let _ = write!(sa, "{}.{} > {}.{}: ", s, be16(th, 0), d, be16(th, 2));
        if tlen < 8 {
            sa.push_str("truncated-udp");
            return;
        }
        let _ = write!(sa, "udp {}", be16(th, 4));
    }

    fn icmp_line(&self, sa: &mut String, ip: &[u8], th: &[u8], tlen: i64) {
        let (s, d) = src_dst(ip);
        let _ = write!(sa, "{} > {}: ", s, d);
        if !first_frag(ip) {
            sa.push_str("icmp");
            return;
        }
        if tlen < 2 {
            sa.push_str("truncated-icmp");
            return;
        }
        let (ty, code) = (th[0], th[1]);
        match ty {
            0 | 8 => {
                sa.push_str(if ty == 0 {
                    "icmp echo-reply "
                } else {
                    "icmp echo "
                });
                if tlen < 8 {
                    sa.push_str("truncated-icmp");
                    return;
                }
                let rd = |i: usize| {
                    if self.swap {
                        u16::from_be_bytes([th[i], th[i + 1]])
                    } else {
                        u16::from_le_bytes([th[i], th[i + 1]])
                    }
                };
                let _ = write!(sa, "({}, {})", rd(4), rd(6));
            }
            3 => {
                let cname = match names::icmp_code_name(3, code) {
                    Some(n) => String::from(n),
                    None => format!("code {}", code),
                };
                let eiph_len = tlen - 8;
                if eiph_len < 20 {
                    let _ = write!(sa, "icmp unreachable {} truncated-icmp", cname);
                    return;
                }
                let eip = &th[8..];
                let ehl = i64::from(eip[0] & 0xf) << 2;
                let eudph_len = eiph_len - ehl;
                let _ = write!(
                    sa,
                    "icmp {} unreachable {}",
                    Ipv4Addr::new(eip[16], eip[17], eip[18], eip[19]),
                    cname
                );
                match code {
                    2 => {
                        let _ = write!(sa, " {}", unparse_proto(eip[9], false));
                    }
                    3 => {
                        let _ = write!(sa, " {}", unparse_proto(eip[9], true));
                        if eudph_len < 4 {
                            sa.push_str("truncated-icmp");
                            return;
                        }
                        let u = ehl as usize;
                        let _ = write!(sa, "/{}", be16(eip, u + 2));
                    }
                    4 => {
                        // The next-hop MTU sits in bytes 6..8 of the ICMP
                        // header (present: tlen >= 28).
                        let mtu = be16(th, 6);
                        if mtu != 0 {
                            let _ = write!(sa, " (mtu {})", mtu);
                        }
                    }
                    _ => {}
                }
            }
            _ => {
                sa.push_str("icmp ");
                match names::icmp_type_name(ty) {
                    Some(n) => sa.push_str(n),
                    None => {
                        let _ = write!(sa, "type {}", ty);
                    }
                }
                if let Some(n) = names::icmp_code_name(ty, code) {
                    let _ = write!(sa, " {}", n);
                } else if code != 0 {
                    let _ = write!(sa, " code {}", code);
                }
            }
        }
    }

    fn print(&mut self, p: &Packet, cx: &Ctx) {
        if !p.has_network_header() {
            return;
        }
        // A header annotation past the end of the packet reads as empty
        // (Click: a negative network length), hence `truncated-ip`.
        let ip = p.network_header().unwrap_or(&[]);
        let mut sa = core::mem::take(&mut self.line);
        sa.clear();
        if !self.label.is_empty() {
            sa.push_str(&self.label);
            sa.push_str(": ");
        }
        if self.print_timestamp {
            let _ = write!(sa, "{}: ", p.timestamp());
        }
        let anno = p.anno();
        if self.print_aggregate {
            let _ = write!(sa, "#{}", anno.u32_at(AGGREGATE_ANNO_OFFSET));
        }
        if self.print_paint {
            sa.push_str(if self.print_aggregate { "." } else { "paint " });
            let _ = write!(sa, "{}", anno.u8_at(PAINT_ANNO_OFFSET));
        }
        if self.print_aggregate || self.print_paint {
            sa.push_str(": ");
        }
        if ip.len() < 20 {
            sa.push_str("truncated-ip");
        } else {
            let ip_len = i64::from(be16(ip, 2));
            let payload_len = ip_len - (i64::from(ip[0] & 0xf) << 2);
            let th = p.transport_header().unwrap_or(&[]);
            let tlen = (th.len() as i64).min(payload_len);
            // The transport bytes the printers may read.
            let th = &th[..tlen.clamp(0, th.len() as i64) as usize];
            if self.print_id {
                let _ = write!(sa, "id {} ", be16(ip, 4));
            }
            if self.print_ttl {
                let _ = write!(sa, "ttl {} ", ip[8]);
            }
            if self.print_tos {
                let _ = write!(sa, "tos {} ", ip[1]);
            }
            if self.print_len {
                let _ = write!(sa, "length {} ", ip_len);
            }
            match ip[9] {
                6 => Self::tcp_line(&mut sa, ip, th, tlen, p.len()),
                17 => Self::udp_line(&mut sa, ip, th, tlen),
                1 => self.icmp_line(&mut sa, ip, th, tlen),
                proto => {
                    let (s, d) = src_dst(ip);
                    let _ = write!(sa, "{} > {}: ip-proto-{}", s, d, proto);
                }
            }
            if is_fragment(ip) {
                let fo = be16(ip, 6);
                let _ = write!(
                    sa,
                    " (frag {}:{}@{}{})",
                    be16(ip, 4),
                    payload_len,
                    u32::from(fo & 0x1fff) << 3,
                    if fo & 0x2000 != 0 { "+" } else { "" }
                );
            }
            if self.contents > 0 {
                let data: &[u8] = if self.payload {
                    let all = p.transport_header().unwrap_or(&[]);
                    let skip = if first_frag(ip) && ip[9] == 6 {
                        all.get(12).map_or(all.len(), |b| usize::from(b >> 4) << 2)
                    } else if first_frag(ip) && ip[9] == 17 {
                        8
                    } else {
                        0
                    };
                    all.get(skip..).unwrap_or(&[])
                } else {
                    p.data()
                };
                let n = if self.bytes < 0 {
                    data.len()
                } else {
                    data.len().min(self.bytes as usize)
                };
                for (i, &b) in data[..n].iter().enumerate() {
                    if self.contents == 1 {
                        if i % 24 == 0 {
                            sa.push_str("\n  ");
                        } else if i % 4 == 0 {
                            sa.push(' ');
                        }
                        sa.push(HEX[usize::from(b >> 4)] as char);
                        sa.push(HEX[usize::from(b & 15)] as char);
                    } else {
                        if i % 48 == 0 {
                            sa.push_str("\n  ");
                        } else if i % 8 == 0 {
                            sa.push(' ');
                        }
                        sa.push(if (32..=126).contains(&b) {
                            b as char
                        } else {
                            '.'
                        });
                    }
                }
            }
        }
        cx.error_line(&sa);
        self.line = sa;
    }
}

impl Element for IPPrint {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let label = a.read_p::<String>("LABEL")?.unwrap_or_default();
        let contents = a.read::<String>("CONTENTS")?.unwrap_or_else(|| "no".into());
        let payload = a.read::<String>("PAYLOAD")?.unwrap_or_else(|| "no".into());
        let mut bytes = a.read::<i32>("MAXLENGTH")?.unwrap_or(1500);
        if let Some(b) = a.read::<i32>("NBYTES")? {
            bytes = b;
        }
        let print_id = a.read::<bool>("ID")?.unwrap_or(false);
        let print_timestamp = a.read::<bool>("TIMESTAMP")?.unwrap_or(true);
        let print_paint = a.read::<bool>("PAINT")?.unwrap_or(false);
        let print_tos = a.read::<bool>("TOS")?.unwrap_or(false);
        let print_ttl = a.read::<bool>("TTL")?.unwrap_or(false);
        let swap = a.read::<bool>("SWAP")?.unwrap_or(true);
        let print_len = a.read::<bool>("LENGTH")?.unwrap_or(false);
        let print_aggregate = a.read::<bool>("AGGREGATE")?.unwrap_or(false);
        let active = a.read::<bool>("ACTIVE")?.unwrap_or(true);
        let _channel = a.read::<String>("CHANNEL")?;
        a.complete()?;
        let mut contents_v = match parse_bool(&contents) {
            Ok(b) => u8::from(b),
            Err(_) => match contents.to_ascii_uppercase().as_str() {
                "NONE" => 0,
                "HEX" => 1,
                "ASCII" => 2,
                u => {
                    return Err(format!(
                        "bad contents value '{}'; should be 'NONE', 'HEX', or 'ASCII'",
                        u
                    ))
                }
            },
        };
        let payload_v = match payload.to_ascii_uppercase().as_str() {
            "NO" | "FALSE" => 0,
            "YES" | "TRUE" | "HEX" => 1,
            "ASCII" => 2,
            u => {
                return Err(format!(
                    "bad payload value '{}'; should be 'false', 'hex', or 'ascii'",
                    u
                ))
            }
        };
        if payload_v > 0 && contents_v > 0 {
            return Err("specify at most one of PAYLOAD and CONTENTS".into());
        }
        let is_payload = payload_v > 0;
        if is_payload {
            contents_v = payload_v;
        }
        self.label = label;
        self.bytes = bytes;
        self.contents = contents_v;
        self.payload = is_payload;
        self.swap = swap;
        self.active = active;
        self.print_id = print_id;
        self.print_timestamp = print_timestamp;
        self.print_paint = print_paint;
        self.print_tos = print_tos;
        self.print_ttl = print_ttl;
        self.print_len = print_len;
        self.print_aggregate = print_aggregate;
        Ok(())
    }

    #[inline]
    fn simple_action(&mut self, p: Packet, cx: &Ctx) -> Option<Packet> {
        if self.active {
            self.print(&p, cx);
        }
        Some(p)
    }

    fn push_batch(&mut self, _port: usize, b: Batch, cx: &Ctx) {
        if self.active {
            for p in &b {
                self.print(p, cx);
            }
        }
        cx.push_batch(0, b);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "active" => Some(Ok(self.active.to_string())),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "active" => Some(
                parse_bool(value.trim())
                    .map(|v| self.active = v)
                    .map_err(|_| String::from("expected boolean")),
            ),
            _ => None,
        }
    }

    crate::element_any!();
}
