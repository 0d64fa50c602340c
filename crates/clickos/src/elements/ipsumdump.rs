//! The IP summary dump format shared by FromIPSummaryDump and
//! ToIPSummaryDump: field names (Click's spellings and synonyms), how each
//! field is printed from a packet, and how packets are built from fields.

use super::extra_length;
use click::packet::{Packet, AGGREGATE_ANNO_OFFSET};
use click::time::Timestamp;
use std::fmt::Write as _;

/// One dump field.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Field {
    Timestamp,
    TsSec,
    TsUsec,
    TsUsec1,
    NTimestamp,
    IpSrc,
    IpDst,
    Sport,
    Dport,
    IpLen,
    IpId,
    IpProto,
    IpTtl,
    IpTos,
    /// `ip_ecn`: the TOS byte's ECN bits, as `no`, `ect1`, `ect2` or `ce`.
    IpEcn,
    IpFrag,
    IpFragoff,
    IpHl,
    IpSum,
    IpCaptureLen,
    TcpSeq,
    TcpAck,
    TcpFlags,
    TcpWindow,
    TcpUrp,
    UdpLen,
    IcmpType,
    IcmpCode,
    PayloadLen,
    Payload,
    Count,
    Direction,
    /// `link` / `paint`: the paint annotation as a number.
    Link,
    Aggregate,
    WireLen,
}

/// Canonical names, as Click writes them in `!data` lines.
const NAMES: &[(&str, Field)] = &[
    ("timestamp", Field::Timestamp),
    ("ts_sec", Field::TsSec),
    ("ts_usec", Field::TsUsec),
    ("ts_usec1", Field::TsUsec1),
    ("ntimestamp", Field::NTimestamp),
    ("ip_src", Field::IpSrc),
    ("ip_dst", Field::IpDst),
    ("sport", Field::Sport),
    ("dport", Field::Dport),
    ("ip_len", Field::IpLen),
    ("ip_id", Field::IpId),
    ("ip_proto", Field::IpProto),
    ("ip_ttl", Field::IpTtl),
    ("ip_tos", Field::IpTos),
    ("ip_ecn", Field::IpEcn),
    ("ip_frag", Field::IpFrag),
    ("ip_fragoff", Field::IpFragoff),
    ("ip_hl", Field::IpHl),
    ("ip_sum", Field::IpSum),
    ("ip_capture_len", Field::IpCaptureLen),
    ("tcp_seq", Field::TcpSeq),
    ("tcp_ack", Field::TcpAck),
    ("tcp_flags", Field::TcpFlags),
    ("tcp_window", Field::TcpWindow),
    ("tcp_urp", Field::TcpUrp),
    ("udp_len", Field::UdpLen),
    ("icmp_type", Field::IcmpType),
    ("icmp_code", Field::IcmpCode),
    ("payload_len", Field::PayloadLen),
    ("payload", Field::Payload),
    ("count", Field::Count),
    ("direction", Field::Direction),
    ("link", Field::Link),
    ("aggregate", Field::Aggregate),
    ("wire_len", Field::WireLen),
];

/// Click's synonyms.
const SYNONYMS: &[(&str, &str)] = &[
    ("ts", "timestamp"),
    ("sec", "ts_sec"),
    ("usec", "ts_usec"),
    ("usec1", "ts_usec1"),
    ("length", "ip_len"),
    ("ip_p", "ip_proto"),
    ("src_port", "sport"),
    ("dst_port", "dport"),
    ("tcp_seqno", "tcp_seq"),
    ("tcp_ackno", "tcp_ack"),
    ("tcp_win", "tcp_window"),
    ("payload_length", "payload_len"),
    ("pkt_count", "count"),
    ("packet_count", "count"),
    ("paint", "link"),
    ("agg", "aggregate"),
];

impl Field {
    /// The canonical name.
    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(_, f)| *f == self)
            .map(|(n, _)| *n)
            .unwrap_or("none")
    }

    /// Click's `find_field`: exact names and synonyms, then spaces changed
    /// to underscores, then `X` tried as `ip_X`.
    pub fn parse(name: &str) -> Option<Field> {
        if let Some((_, f)) = NAMES.iter().find(|(n, _)| *n == name) {
            return Some(*f);
        }
        if let Some((_, c)) = SYNONYMS.iter().find(|(n, _)| *n == name) {
            return Field::parse(c);
        }
        if name.contains(' ') {
            return Field::parse(&name.replacen(' ', "_", 1));
        }
        if !name.contains('_') && !name.is_empty() {
            return Field::parse(&format!("ip_{name}"));
        }
        None
    }
}

/// Parses a CONTENTS string (space-separated, possibly quoted words).
pub fn parse_fields(s: &str) -> Result<Vec<Field>, String> {
    let mut v = Vec::new();
    let mut errs = Vec::new();
    for w in click_lang::split_words(s) {
        let w = click_lang::unquote(&w);
        match Field::parse(&w) {
            Some(f) => v.push(f),
            None => errs.push(format!("unknown content type '{w}'")),
        }
    }
    if !errs.is_empty() {
        return Err(errs.join("\n"));
    }
    if v.is_empty() {
        return Err("no contents specified".into());
    }
    Ok(v)
}

/// Click's names for the ECN field values 0 to 3 (`ip_ecn`).
pub const ECN_NAMES: [&str; 4] = ["no", "ect1", "ect2", "ce"];

/// Parses an `ip_ecn` value: a name from [`ECN_NAMES`] (or `ect`, for
/// ECT(0), `ect2`) or a number from 0 to 3.
pub fn parse_ecn(s: &str) -> Option<u8> {
    if let Some(i) = ECN_NAMES.iter().position(|n| n.eq_ignore_ascii_case(s)) {
        return Some(i as u8);
    }
    if s.eq_ignore_ascii_case("ect") {
        return Some(2);
    }
    s.parse::<u8>().ok().filter(|&v| v <= 3)
}

/// Click's TCP flag letters, bit 0 (FIN) upward; bit 8 is NS.
pub const TCP_FLAGS_WORD: &[u8; 9] = b"FSRPAUECN";

/// `cp_quote` for arbitrary bytes.
pub fn quote_bytes(b: &[u8]) -> String {
    let mut out = String::from("\"");
    for &c in b {
        match c {
            b'\\' | b'"' | b'$' => {
                out.push('\\');
                out.push(c as char);
            }
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            b'\n' => out.push_str("\\n"),
            32..=126 => out.push(c as char),
            _ => {
                let _ = write!(out, "\\{:03o}", c);
            }
        }
    }
    out.push('"');
    out
}

/// A view of a packet's headers for printing.
struct Desc<'a> {
    ip: Option<&'a [u8]>,
    hl: usize,
    tcp: Option<&'a [u8]>,
    udp: Option<&'a [u8]>,
    icmp: Option<&'a [u8]>,
}

fn be16(b: &[u8], i: usize) -> u32 {
    ((b[i] as u32) << 8) | b[i + 1] as u32
}
fn be32(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

fn describe(p: &Packet) -> Desc<'_> {
    let mut d = Desc {
        ip: None,
        hl: 0,
        tcp: None,
        udp: None,
        icmp: None,
    };
    let Some(nh) = p.network_header() else {
        return d;
    };
    if nh.len() < 20 || nh[0] >> 4 != 4 {
        return d;
    }
    let hl = ((nh[0] & 15) as usize) * 4;
    if hl < 20 || nh.len() < hl {
        return d;
    }
    d.ip = Some(nh);
    d.hl = hl;
    let first_frag = be16(nh, 6) & 0x1fff == 0;
    if !first_frag {
        return d;
    }
    let th = &nh[hl..];
    match nh[9] {
        6 if th.len() >= 20 => d.tcp = Some(th),
        17 if th.len() >= 8 => d.udp = Some(th),
        1 if th.len() >= 2 => d.icmp = Some(th),
        _ => {}
    }
    d
}

/// One summary line (without the newline) for `p`.
pub fn summary_line(p: &Packet, fields: &[Field], out: &mut String) {
    let d = describe(p);
    let ts: Timestamp = p.timestamp();
    let extra = extra_length(p) as u64;
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let start = out.len();
        match f {
            Field::Timestamp => {
                let _ = write!(out, "{}", ts);
            }
            Field::TsSec => {
                let _ = write!(out, "{}", ts.sec());
            }
            Field::TsUsec => {
                let _ = write!(out, "{}", ts.subsec_usec());
            }
            Field::TsUsec1 => {
                let _ = write!(out, "{}", ts.sec() * 1_000_000 + ts.subsec_usec() as i64);
            }
            Field::NTimestamp => {
                let _ = write!(out, "{}.{:09}", ts.sec(), ts.subsec_nsec());
            }
            Field::IpSrc | Field::IpDst => {
                if let Some(ip) = d.ip {
                    let o = if *f == Field::IpSrc { 12 } else { 16 };
                    let _ = write!(out, "{}.{}.{}.{}", ip[o], ip[o + 1], ip[o + 2], ip[o + 3]);
                }
            }
            Field::Sport | Field::Dport => {
                let o = if *f == Field::Sport { 0 } else { 2 };
                if let Some(t) = d.tcp.or(d.udp) {
                    let _ = write!(out, "{}", be16(t, o));
                }
            }
            Field::IpLen => match d.ip {
                Some(ip) => {
                    let _ = write!(out, "{}", be16(ip, 2));
                }
                None => {
                    let _ = write!(out, "{}", p.len() as u64 + extra);
                }
            },
            Field::IpId => {
                if let Some(ip) = d.ip {
                    let _ = write!(out, "{}", be16(ip, 4));
                }
            }
            Field::IpProto => {
                if let Some(ip) = d.ip {
                    match ip[9] {
                        6 => out.push('T'),
                        17 => out.push('U'),
                        1 => out.push('I'),
                        n => {
                            let _ = write!(out, "{}", n);
                        }
                    }
                }
            }
            Field::IpTtl => {
                if let Some(ip) = d.ip {
                    let _ = write!(out, "{}", ip[8]);
                }
            }
            Field::IpTos => {
                if let Some(ip) = d.ip {
                    let _ = write!(out, "{}", ip[1]);
                }
            }
            Field::IpEcn => {
                if let Some(ip) = d.ip {
                    out.push_str(ECN_NAMES[usize::from(ip[1] & 3)]);
                }
            }
            Field::IpFrag => {
                if let Some(ip) = d.ip {
                    let off = be16(ip, 6);
                    out.push(if off & 0x3fff == 0 {
                        '.'
                    } else if off & 0x1fff == 0 {
                        'F'
                    } else {
                        'f'
                    });
                }
            }
            Field::IpFragoff => {
                if let Some(ip) = d.ip {
                    let off = be16(ip, 6);
                    let _ = write!(out, "{}", (off & 0x1fff) << 3);
                    if off & 0x2000 != 0 {
                        out.push('+');
                    }
                }
            }
            Field::IpHl => {
                if d.ip.is_some() {
                    let _ = write!(out, "{}", d.hl);
                }
            }
            Field::IpSum => {
                if let Some(ip) = d.ip {
                    let _ = write!(out, "{}", be16(ip, 10));
                }
            }
            Field::IpCaptureLen => {
                if let Some(ip) = d.ip {
                    let _ = write!(out, "{}", ip.len().min(be16(ip, 2) as usize));
                }
            }
            Field::TcpSeq => {
                if let Some(t) = d.tcp {
                    let _ = write!(out, "{}", be32(t, 4));
                }
            }
            Field::TcpAck => {
                if let Some(t) = d.tcp {
                    let _ = write!(out, "{}", be32(t, 8));
                }
            }
            Field::TcpFlags => {
                if let Some(t) = d.tcp {
                    let flags = t[13] as u32 | (((t[12] & 1) as u32) << 8);
                    for (b, c) in TCP_FLAGS_WORD.iter().enumerate() {
                        if flags & (1 << b) != 0 {
                            out.push(*c as char);
                        }
                    }
                    if flags == 0 {
                        out.push('.');
                    }
                }
            }
            Field::TcpWindow => {
                if let Some(t) = d.tcp {
                    let _ = write!(out, "{}", be16(t, 14));
                }
            }
            Field::TcpUrp => {
                if let Some(t) = d.tcp {
                    let _ = write!(out, "{}", be16(t, 18));
                }
            }
            Field::UdpLen => {
                if let Some(u) = d.udp {
                    let _ = write!(out, "{}", be16(u, 4));
                }
            }
            Field::IcmpType => {
                if let Some(c) = d.icmp {
                    let _ = write!(out, "{}", c[0]);
                }
            }
            Field::IcmpCode => {
                if let Some(c) = d.icmp {
                    let _ = write!(out, "{}", c[1]);
                }
            }
            Field::PayloadLen => match d.ip {
                Some(ip) => {
                    let th_len = if let Some(t) = d.tcp {
                        ((t[12] >> 4) as usize) * 4
                    } else if d.udp.is_some() {
                        8
                    } else {
                        0
                    };
                    let len = (be16(ip, 2) as usize).saturating_sub(d.hl + th_len);
                    let _ = write!(out, "{}", len);
                }
                None => {
                    let _ = write!(out, "{}", p.len() as u64 + extra);
                }
            },
            Field::Payload => {
                let bytes: &[u8] = match d.ip {
                    Some(ip) => {
                        let th_len = if let Some(t) = d.tcp {
                            ((t[12] >> 4) as usize) * 4
                        } else if d.udp.is_some() {
                            8
                        } else {
                            0
                        };
                        let end = (be16(ip, 2) as usize).min(ip.len());
                        let start = (d.hl + th_len).min(end);
                        &ip[start..end]
                    }
                    None => p.data(),
                };
                out.push_str(&quote_bytes(bytes));
            }
            Field::Count => out.push('1'),
            Field::Direction => match p.anno().paint() {
                0 => out.push('>'),
                1 => out.push('<'),
                n => {
                    let _ = write!(out, "{}", n);
                }
            },
            Field::Link => {
                let _ = write!(out, "{}", p.anno().paint());
            }
            Field::Aggregate => {
                let _ = write!(out, "{}", p.anno().u32_at(AGGREGATE_ANNO_OFFSET));
            }
            Field::WireLen => {
                let _ = write!(out, "{}", p.len() as u64 + extra);
            }
        }
        if out.len() == start {
            out.push('-');
        }
    }
}
