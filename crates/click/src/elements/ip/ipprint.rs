//! IPPrint: pretty-prints IP packets, one tcpdump-like line each.

use crate::packet::{AGGREGATE_ANNO_OFFSET, PAINT_ANNO_OFFSET};
use crate::prelude::*;
use alloc::format;
use click_lang::args::parse_bool;
use click_wire::{ip_proto, names, IcmpPacket, Ipv4Packet, TcpPacket, UdpPacket};
use core::fmt::Write as _;

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

/// An IP header of at least 20 bytes (the printers read fixed fields only).
type Ip<'a> = Ipv4Packet<&'a [u8]>;

/// Click's `unparse_proto`.
fn unparse_proto(p: u8, prepend: bool) -> String {
    match names::ip_proto_name(u16::from(p)) {
        Some(n) => n.into(),
        None if prepend => format!("protocol {}", p),
        None => p.to_string(),
    }
}

impl IPPrint {
    // The transport printers read the fields a cut header holds: unchecked
    // views, each field read only once `tlen` says it is there.
    fn tcp_line(sa: &mut String, ip: &Ip, th: &[u8], tlen: i64, pkt_len: usize) {
        let (s, d) = (ip.src_addr(), ip.dst_addr());
        if tlen < 4 || !ip.is_first_fragment() {
            let what = if ip.is_first_fragment() {
                "truncated-tcp"
            } else {
                "tcp"
            };
            let _ = write!(sa, "{} > {}: {}", s, d, what);
            return;
        }
        let tcp = TcpPacket::new_unchecked(th);
        let _ = write!(sa, "{}.{} > {}.{}: ", s, tcp.src_port(), d, tcp.dst_port());
        if tlen < 14 {
            sa.push_str("truncated-tcp");
            return;
        }
        let ip_len = i64::from(ip.total_len());
        let flags = tcp.flags();
        let mut seqlen = ip_len - i64::from(ip.header_len()) - i64::from(tcp.header_len());
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
        let seq = tcp.seq_number();
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
            let _ = write!(sa, " ack {}", tcp.ack_number());
        }
        if tlen < 16 {
            sa.push_str("truncated-tcp");
            return;
        }
        let _ = write!(sa, " win {}", tcp.window_len());
    }

    fn udp_line(sa: &mut String, ip: &Ip, th: &[u8], tlen: i64) {
        let (s, d) = (ip.src_addr(), ip.dst_addr());
        if tlen < 4 || !ip.is_first_fragment() {
            let what = if ip.is_first_fragment() {
                "truncated-udp"
            } else {
                "udp"
            };
            let _ = write!(sa, "{} > {}: {}", s, d, what);
            return;
        }
        let udp = UdpPacket::new_unchecked(th);
        let _ = write!(sa, "{}.{} > {}.{}: ", s, udp.src_port(), d, udp.dst_port());
        if tlen < 8 {
            sa.push_str("truncated-udp");
            return;
        }
        let _ = write!(sa, "udp {}", udp.len());
    }

    fn icmp_line(&self, sa: &mut String, ip: &Ip, th: &[u8], tlen: i64) {
        let (s, d) = (ip.src_addr(), ip.dst_addr());
        let _ = write!(sa, "{} > {}: ", s, d);
        if !ip.is_first_fragment() {
            sa.push_str("icmp");
            return;
        }
        if tlen < 2 {
            sa.push_str("truncated-icmp");
            return;
        }
        let icmp = IcmpPacket::new_unchecked(th);
        let (ty, code) = (icmp.msg_type(), icmp.msg_code());
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
                // SWAP false prints the fields in host (little-endian) order.
                let rd = |v: u16| if self.swap { v } else { v.swap_bytes() };
                let _ = write!(
                    sa,
                    "({}, {})",
                    rd(icmp.echo_ident()),
                    rd(icmp.echo_seq_no())
                );
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
                // The embedded header's 20 fixed bytes are there.
                let eip = Ipv4Packet::new_unchecked(icmp.data());
                let ehl = i64::from(eip.header_len());
                let eudph_len = eiph_len - ehl;
                let _ = write!(sa, "icmp {} unreachable {}", eip.dst_addr(), cname);
                match code {
                    2 => {
                        let _ = write!(sa, " {}", unparse_proto(eip.protocol(), false));
                    }
                    3 => {
                        let _ = write!(sa, " {}", unparse_proto(eip.protocol(), true));
                        if eudph_len < 4 {
                            sa.push_str("truncated-icmp");
                            return;
                        }
                        // Where the embedded header says it ends (its
                        // 4 bytes of ports are there).
                        let eudp = UdpPacket::new_unchecked(&icmp.data()[ehl as usize..]);
                        let _ = write!(sa, "/{}", eudp.dst_port());
                    }
                    4 => {
                        // The next-hop MTU sits in bytes 6..8 of the ICMP
                        // header (present: tlen >= 28).
                        let mtu = icmp.next_hop_mtu();
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
        let ip = p.ip_header();
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
        if let Some(ip) = &ip {
            let ip_len = i64::from(ip.total_len());
            let payload_len = ip_len - i64::from(ip.header_len());
            let th = p.transport_header().unwrap_or(&[]);
            let tlen = (th.len() as i64).min(payload_len);
            // The transport bytes the printers may read.
            let th = &th[..tlen.clamp(0, th.len() as i64) as usize];
            if self.print_id {
                let _ = write!(sa, "id {} ", ip.ident());
            }
            if self.print_ttl {
                let _ = write!(sa, "ttl {} ", ip.ttl());
            }
            if self.print_tos {
                let _ = write!(sa, "tos {} ", ip.tos());
            }
            if self.print_len {
                let _ = write!(sa, "length {} ", ip_len);
            }
            match ip.protocol() {
                ip_proto::TCP => Self::tcp_line(&mut sa, ip, th, tlen, p.len()),
                ip_proto::UDP => Self::udp_line(&mut sa, ip, th, tlen),
                ip_proto::ICMP => self.icmp_line(&mut sa, ip, th, tlen),
                proto => {
                    let (s, d) = (ip.src_addr(), ip.dst_addr());
                    let _ = write!(sa, "{} > {}: ip-proto-{}", s, d, proto);
                }
            }
            if ip.is_fragment() {
                let _ = write!(
                    sa,
                    " (frag {}:{}@{}{})",
                    ip.ident(),
                    payload_len,
                    ip.frag_offset(),
                    if ip.more_frags() { "+" } else { "" }
                );
            }
            if self.contents > 0 {
                let data: &[u8] = if self.payload {
                    let all = p.transport_header().unwrap_or(&[]);
                    let first = ip.is_first_fragment();
                    let skip = if first && ip.protocol() == ip_proto::TCP {
                        // The data offset, once its byte is there.
                        if all.len() > 12 {
                            usize::from(TcpPacket::new_unchecked(all).header_len())
                        } else {
                            all.len()
                        }
                    } else if first && ip.protocol() == ip_proto::UDP {
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
        } else {
            sa.push_str("truncated-ip");
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
