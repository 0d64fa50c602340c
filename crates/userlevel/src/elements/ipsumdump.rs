//! The IP summary dump format shared by FromIPSummaryDump and
//! ToIPSummaryDump: field names (Click's spellings and synonyms), how each
//! field is printed from a packet (text and binary), and the per-field
//! facts the reader needs (binary size, injection order).

use super::extra_length;
use super::ipsumdump_opt::{
    md5, md5_text, unparse_ip_opt, unparse_tcp_opt, DO_ALL_NOPAD, DO_TCPOPT_NTALL, DO_TCPOPT_SACK,
};
use click::packet::{Packet, AGGREGATE_ANNO_OFFSET};
use click::time::Timestamp;
use std::fmt::Write as _;

/// Click's EXTRA_PACKETS annotation (a 32-bit count of further packets a
/// packet stands for; the `count` field is one more than it).
pub const EXTRA_PACKETS_ANNO_OFFSET: usize = 32;

/// The format version ToIPSummaryDump writes (`!IPSummaryDump 1.3`).
pub const MAJOR_VERSION: u32 = 1;
pub const MINOR_VERSION: u32 = 3;

/// One dump field.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Field {
    Timestamp,
    NTimestamp,
    TsSec,
    TsUsec,
    TsUsec1,
    FirstTimestamp,
    FirstNTimestamp,
    Count,
    /// `link`: the paint annotation as a number.
    Link,
    /// `paint`: the same.
    Paint,
    Direction,
    Aggregate,
    WireLen,
    EthSrc,
    EthDst,
    EthType,
    IpSrc,
    IpDst,
    IpTos,
    IpDscp,
    IpEcn,
    IpTtl,
    IpFrag,
    IpFragoff,
    IpId,
    IpSum,
    IpProto,
    IpHl,
    IpLen,
    IpCaptureLen,
    IpOpt,
    Sport,
    Dport,
    TcpSeq,
    TcpAck,
    TcpOff,
    TcpFlags,
    TcpWindow,
    TcpUrp,
    TcpOpt,
    TcpNtopt,
    TcpSack,
    UdpLen,
    IcmpType,
    IcmpCode,
    IcmpTypeName,
    IcmpCodeName,
    IcmpFlowid,
    IcmpSeq,
    IcmpNextmtu,
    PayloadLen,
    Payload,
    PayloadMd5,
    PayloadMd5Hex,
}

/// How a field is stored in binary dumps (Click's `B_*`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BType {
    B1,
    B2,
    B4,
    /// An IPv4 address, network order.
    B4Net,
    /// An Ethernet address.
    B6,
    B8,
    B16,
    /// A length byte, then that many bytes (options).
    Special,
    /// Not allowed in binary dumps (`payload`).
    NotAllowed,
}

const ANNO: i32 = 100;
const LINK: i32 = 200;
const NET: i32 = 300;
const TRANSP: i32 = 400;
const PAYLOAD: i32 = 500;
const NONE: i32 = i32::MIN;

use BType::*;
use Field as F;

/// (Click's name, field, binary type, reader order — `NONE` when Click
/// cannot read the field back).
const TABLE: &[(&str, Field, BType, i32)] = &[
    ("timestamp", F::Timestamp, B8, ANNO),
    ("ntimestamp", F::NTimestamp, B8, ANNO),
    ("ts_sec", F::TsSec, B4, ANNO),
    ("ts_usec", F::TsUsec, B4, ANNO),
    ("ts_usec1", F::TsUsec1, B8, ANNO),
    ("first_timestamp", F::FirstTimestamp, B8, ANNO),
    ("first_ntimestamp", F::FirstNTimestamp, B8, ANNO),
    ("count", F::Count, B4, ANNO),
    ("link", F::Link, B1, ANNO),
    ("paint", F::Paint, B1, ANNO),
    ("direction", F::Direction, B1, ANNO),
    ("aggregate", F::Aggregate, B4, ANNO),
    ("wire_len", F::WireLen, B4, ANNO),
    ("eth_src", F::EthSrc, B6, LINK),
    ("eth_dst", F::EthDst, B6, LINK),
    ("eth_type", F::EthType, B2, LINK),
    ("ip_src", F::IpSrc, B4Net, NET),
    ("ip_dst", F::IpDst, B4Net, NET),
    ("ip_tos", F::IpTos, B1, NET),
    ("ip_dscp", F::IpDscp, B1, NET),
    ("ip_ecn", F::IpEcn, B1, NET),
    ("ip_ttl", F::IpTtl, B1, NET),
    ("ip_frag", F::IpFrag, B1, NET - 2),
    ("ip_fragoff", F::IpFragoff, B2, NET - 1),
    ("ip_id", F::IpId, B2, NET),
    ("ip_sum", F::IpSum, B2, NET + 2),
    ("ip_proto", F::IpProto, B1, NET),
    ("ip_hl", F::IpHl, B1, NET - 1),
    ("ip_len", F::IpLen, B4, NET + 1),
    ("ip_capture_len", F::IpCaptureLen, B4, NONE),
    ("ip_opt", F::IpOpt, Special, NET),
    ("sport", F::Sport, B2, TRANSP),
    ("dport", F::Dport, B2, TRANSP),
    ("tcp_seq", F::TcpSeq, B4, TRANSP),
    ("tcp_ack", F::TcpAck, B4, TRANSP),
    ("tcp_off", F::TcpOff, B1, TRANSP - 1),
    ("tcp_flags", F::TcpFlags, B1, TRANSP),
    ("tcp_window", F::TcpWindow, B2, TRANSP),
    ("tcp_urp", F::TcpUrp, B2, TRANSP),
    ("tcp_opt", F::TcpOpt, Special, TRANSP + 3),
    ("tcp_ntopt", F::TcpNtopt, Special, TRANSP + 2),
    ("tcp_sack", F::TcpSack, Special, TRANSP + 1),
    ("udp_len", F::UdpLen, B4, TRANSP),
    ("icmp_type", F::IcmpType, B1, TRANSP),
    ("icmp_code", F::IcmpCode, B1, TRANSP + 1),
    ("icmp_type_name", F::IcmpTypeName, B1, TRANSP),
    ("icmp_code_name", F::IcmpCodeName, B1, TRANSP + 1),
    ("icmp_flowid", F::IcmpFlowid, B2, TRANSP + 2),
    ("icmp_seq", F::IcmpSeq, B2, TRANSP + 2),
    ("icmp_nextmtu", F::IcmpNextmtu, B2, TRANSP + 2),
    ("payload_len", F::PayloadLen, B4, PAYLOAD + 1),
    ("payload", F::Payload, NotAllowed, PAYLOAD),
    ("payload_md5", F::PayloadMd5, B16, NONE),
    ("payload_md5_hex", F::PayloadMd5Hex, B16, NONE),
];

/// Click's synonyms (a synonym may name another synonym).
const SYNONYMS: &[(&str, &str)] = &[
    ("utimestamp", "timestamp"),
    ("ts", "utimestamp"),
    ("sec", "ts_sec"),
    ("usec", "ts_usec"),
    ("usec1", "ts_usec1"),
    ("first_utimestamp", "first_timestamp"),
    ("first_ts", "first_utimestamp"),
    ("pkt_count", "count"),
    ("packet_count", "count"),
    ("agg", "aggregate"),
    ("wire_length", "wire_len"),
    ("ether_src", "eth_src"),
    ("ether_dst", "eth_dst"),
    ("ether_type", "eth_type"),
    ("length", "ip_len"),
    ("ip_p", "ip_proto"),
    ("src_port", "sport"),
    ("dst_port", "dport"),
    ("tcp_seqno", "tcp_seq"),
    ("tcp_ackno", "tcp_ack"),
    ("tcp_win", "tcp_window"),
    ("payload_length", "payload_len"),
];

impl Field {
    fn entry(self) -> &'static (&'static str, Field, BType, i32) {
        // TABLE lists the fields in declaration order
        &TABLE[self as usize]
    }

    /// The canonical name, as Click writes it in `!data` lines.
    pub fn name(self) -> &'static str {
        self.entry().0
    }

    /// How the field is stored in binary dumps.
    pub fn btype(self) -> BType {
        self.entry().2
    }

    /// Bytes the field takes in a binary record (`None`: variable or not
    /// allowed).
    pub fn binary_size(self) -> Option<usize> {
        Some(match self.btype() {
            B1 => 1,
            B2 => 2,
            B4 | B4Net => 4,
            B6 => 6,
            B8 => 8,
            B16 => 16,
            Special | NotAllowed => return None,
        })
    }

    /// Where the reader applies the field (Click's `order`); `None` if the
    /// field cannot be read back (`ip_capture_len`, `payload_md5`, ...).
    pub fn read_order(self) -> Option<i32> {
        let o = self.entry().3;
        (o != NONE).then_some(o)
    }

    /// Whether printing the field looks at the IP headers (Click's
    /// `ip_prepare`, which also finds bad packets for BAD_PACKETS).
    pub fn uses_ip(self) -> bool {
        !matches!(self.entry().3, ANNO | LINK)
    }

    /// Click's `find`: synonyms, exact names, then the first space changed
    /// to an underscore, or `X` tried as `ip_X`.
    pub fn parse(name: &str) -> Option<Field> {
        if let Some((_, c)) = SYNONYMS.iter().find(|(n, _)| *n == name) {
            return Field::parse(c);
        }
        if let Some(e) = TABLE.iter().find(|e| e.0 == name) {
            return Some(e.1);
        }
        if name.contains(' ') {
            return Field::parse(&name.replacen(' ', "_", 1));
        }
        if !name.contains('_') {
            return Field::parse(&format!("ip_{name}"));
        }
        None
    }
}

/// MULTIPACKET: a packet standing for `count` packets whose first
/// timestamp annotation is set runs from that time to its own timestamp.
/// Puts the packet at the first time and returns (the last time, the step
/// between two packets); without a first timestamp the step is 0.
pub fn multipacket_times(p: &mut Packet, count: u64) -> (Timestamp, i64) {
    let end_ts = p.timestamp();
    let first = p.anno().first_timestamp();
    let delta = if first != Timestamp::ZERO {
        p.set_timestamp(first);
        (end_ts - first).nsec() / (count as i64 - 1)
    } else {
        0
    };
    (end_ts, delta)
}

/// The words of a CONTENTS string or `!data` line (possibly quoted), each
/// with its field if Click knows it.
pub fn field_words(s: &str) -> Vec<(String, Option<Field>)> {
    click_lang::split_words(s)
        .into_iter()
        .map(|w| {
            let w = click_lang::unquote(&w);
            let f = Field::parse(&w);
            (w, f)
        })
        .collect()
}

/// Parses ToIPSummaryDump's CONTENTS: every word must be a field.
pub fn parse_fields(s: &str) -> Result<Vec<Field>, String> {
    let mut v = Vec::new();
    let mut errs = Vec::new();
    for (w, f) in field_words(s) {
        match f {
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

/// Click's TCP flag letters, bit 0 (FIN) upward; bit 8 is NS.
pub const TCP_FLAGS_WORD: &[u8; 9] = b"FSRPAUECN";

/// Click's `tcp_flag_mapping`: the bit a flag letter stands for (`W` and
/// `Y` are old spellings of CWR, `X` of ECE).
pub fn tcp_flag_bit(c: u8) -> Option<u32> {
    Some(match c {
        b'F' => 0,
        b'S' => 1,
        b'R' => 2,
        b'P' => 3,
        b'A' => 4,
        b'U' => 5,
        b'E' | b'X' => 6,
        b'C' | b'W' | b'Y' => 7,
        b'N' => 8,
        _ => return None,
    })
}

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

fn be16(b: &[u8], i: usize) -> u32 {
    ((b[i] as u32) << 8) | b[i + 1] as u32
}
fn be32(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// Click's `MISSING_*` pseudo-protocols for `field_missing`.
const MISSING_IP: u32 = 0;
const MISSING_ETHERNET: u32 = 260;
const PROTO_TCP_OR_UDP: u32 = 256;

/// Options for printing (ToIPSummaryDump's keywords).
#[derive(Copy, Clone, Debug)]
pub struct WriteOpts {
    /// `BAD_PACKETS`: describe bad packets in `!bad` lines.
    pub bad_packets: bool,
    /// `CAREFUL_TRUNC`: a capture shorter than the IP length is bad.
    pub careful_trunc: bool,
    /// `EXTRA_LENGTH`: lengths include the extra-length annotation.
    pub extra_length: bool,
}

impl Default for WriteOpts {
    fn default() -> Self {
        WriteOpts {
            bad_packets: false,
            careful_trunc: true,
            extra_length: true,
        }
    }
}

/// A packet's headers as ToIPSummaryDump sees them (Click's `PacketDesc`
/// after `ip_prepare`).
struct Desc<'a> {
    p: &'a Packet,
    /// From the network header to the end of the packet.
    net: Option<&'a [u8]>,
    /// Whether `net` holds an acceptable IP header.
    ip: bool,
    /// The transport header's offset in `net`.
    th: Option<usize>,
    /// Bytes after the IP length (link padding).
    tailpad: usize,
    tcp: bool,
    udp: bool,
    icmp: bool,
    /// The extra-length annotation as Click's `ip_prepare` leaves it.
    extra: u32,
    /// EXTRA_LENGTH: lengths include the extra length.
    force_extra: bool,
    want_bad: bool,
    bad: Option<String>,
}

impl<'a> Desc<'a> {
    fn new(p: &'a Packet, prepare: bool, o: &WriteOpts) -> Desc<'a> {
        let net = p.network_header();
        let th = match (p.network_header_offset(), p.transport_header_offset()) {
            (Some(n), Some(t)) if t >= n => Some((t - n) as usize),
            _ => None,
        };
        let mut d = Desc {
            p,
            net,
            ip: net.is_some(),
            th,
            tailpad: 0,
            tcp: false,
            udp: false,
            icmp: false,
            extra: extra_length(p),
            force_extra: o.extra_length,
            want_bad: o.bad_packets,
            bad: None,
        };
        if !prepare {
            d.ip = false;
            return d;
        }
        if let Some(n) = net {
            if n.len() < 4 {
                d.set_bad("truncated IP header".into());
            } else if n[0] >> 4 != 4 {
                d.set_bad(format!("IP version {}", n[0] >> 4));
            } else if n[0] & 15 < 5 {
                d.set_bad(format!("IP header length {}", n[0] & 15));
            } else if be16(n, 2) < ((n[0] & 15) as u32) * 4 {
                d.set_bad(format!("IP length {}", be16(n, 2)));
            } else {
                let ip_len = be16(n, 2) as usize;
                if n.len() > ip_len {
                    d.extra = d.extra.saturating_add((n.len() - ip_len) as u32);
                    d.tailpad = n.len() - ip_len;
                } else if o.careful_trunc && (n.len() as u64 + d.extra as u64) < ip_len as u64 {
                    let missing = ip_len as u64 - n.len() as u64 - d.extra as u64;
                    if d.want_bad && d.bad.is_none() {
                        d.bad = Some(format!("!bad truncated IP missing {missing}\n"));
                    }
                }
            }
        }
        if let (true, Some(n)) = (d.ip, net) {
            let hl = ((n[0] & 15) as usize) * 4;
            let transport_ok =
                d.th.is_some() && d.network_length() > hl && be16(n, 6) & 0x1fff == 0;
            match if transport_ok { n[9] } else { 0 } {
                6 => {
                    d.tcp = true;
                    let tl = d.transport_length();
                    if tl > 12 {
                        let off = n[d.th.unwrap_or(0) + 12] >> 4;
                        if off < 5 {
                            d.tcp = false;
                            if d.want_bad && d.bad.is_none() {
                                d.bad = Some(format!("!bad TCP header length {off}\n"));
                            }
                        }
                    }
                }
                17 => d.udp = true,
                1 => d.icmp = true,
                _ => {}
            }
            // lengths come from the IP header, so the extra length only
            // counts past a 65535-byte IP length
            if d.extra > 0 {
                let full = d.network_length() as u64 + d.extra as u64;
                d.extra = if be16(n, 2) != 0xFFFF || full <= 0xFFFF {
                    0
                } else {
                    (full - 0xFFFF) as u32
                };
            }
        }
        d
    }

    fn set_bad(&mut self, msg: String) {
        if self.want_bad && self.bad.is_none() {
            self.bad = Some(format!("!bad {msg}\n"));
        }
        self.ip = false;
    }

    fn iph(&self) -> Option<&'a [u8]> {
        if self.ip {
            self.net
        } else {
            None
        }
    }

    fn network_length(&self) -> usize {
        self.net.map_or(0, |n| n.len() - self.tailpad)
    }

    fn transport_length(&self) -> i64 {
        match (self.net, self.th) {
            (Some(n), Some(t)) => n.len() as i64 - t as i64 - self.tailpad as i64,
            _ => 0,
        }
    }

    fn transport(&self) -> &'a [u8] {
        match (self.net, self.th) {
            (Some(n), Some(t)) if t <= n.len() - self.tailpad => &n[t..n.len() - self.tailpad],
            _ => &[],
        }
    }

    /// Click's `field_missing`: notes why a field is missing (for
    /// BAD_PACKETS) and returns `None`.
    fn missing<T>(&mut self, proto: u32, l: i64) -> Option<T> {
        if !self.want_bad || self.bad.is_some() {
            return None;
        }
        let name = match proto {
            6 => "TCP",
            17 => "UDP",
            1 => "ICMP",
            PROTO_TCP_OR_UDP => "TCP/UDP",
            _ => "?",
        };
        let msg = if proto == MISSING_ETHERNET {
            "Ethernet header".to_string()
        } else if let Some(n) = self.iph() {
            let ip_p = n.get(9).copied().unwrap_or(0) as u32;
            let frag = n.len() >= 8 && be16(n, 6) & 0x1fff != 0;
            if proto == MISSING_IP {
                "truncated IP header capture".to_string()
            } else if self.network_length() > 9
                && ((proto > MISSING_IP && proto < 256 && ip_p != proto)
                    || (proto == PROTO_TCP_OR_UDP && ip_p != 6 && ip_p != 17))
            {
                // wrong protocol is not a bad packet
                return None;
            } else if frag {
                format!("fragmented {name} header")
            } else if self.transport_length() + self.extra as i64 >= l {
                format!("truncated {name} header capture")
            } else {
                format!("truncated {name} header")
            }
        } else {
            "no IP header".to_string()
        };
        self.bad = Some(format!("!bad {msg}\n"));
        None
    }

    /// Click's `payload_info`: the payload bytes present and the payload
    /// length the headers claim.
    fn payload(&self) -> (&'a [u8], u32, bool) {
        if let Some(n) = self.iph() {
            let ip_len = be16(n, 2);
            let hl = ((n[0] & 15) as usize) * 4;
            let mut off = self.th.unwrap_or(hl);
            if n.len() >= 10 && be16(n, 6) & 0x1fff == 0 {
                match n[9] {
                    6 => {
                        let t = self.transport();
                        off += if t.len() >= 13 && (t[12] >> 4) >= 5 {
                            ((t[12] >> 4) as usize) * 4
                        } else {
                            20
                        };
                    }
                    17 | 136 => off += 8,
                    _ => {}
                }
            }
            let len = ip_len.saturating_sub(off as u32);
            let end = n.len() - self.tailpad;
            let present = off < n.len();
            let start = off.min(end);
            let stop = (off + len as usize).min(end).max(start);
            (&n[start..stop], len, len == 0 || present)
        } else {
            let d = self.p.data();
            (d, d.len() as u32, true)
        }
    }
}

/// A field's value.
enum V<'a> {
    N(u32),
    Big(u64),
    Ts(Timestamp),
    Mac(&'a [u8]),
    /// Option bytes (`None`: the header has none).
    Opt(Option<&'a [u8]>),
    Bytes(&'a [u8]),
    Md5([u8; 16]),
}

/// Click's ECN words.
fn ecn_word(v: u32) -> &'static str {
    ["no", "ect1", "ect2", "ce"][(v & 3) as usize]
}

/// TCP options, except that a header whose only option is a NOP-padded
/// timestamp counts as having none (`tcp_ntopt`, `tcp_sack`).
fn tcp_opts_nt(t: &[u8], tl: i64) -> Option<Option<&[u8]>> {
    let off = ((t[12] >> 4) as usize) * 4;
    if off <= 20 || (off == 32 && tl >= 24 && t[20..24] == [1, 1, 8, 10]) {
        Some(None)
    } else if (tl as usize) < off {
        None
    } else {
        Some(Some(&t[20..off]))
    }
}

fn extract<'a>(f: Field, d: &mut Desc<'a>) -> Option<V<'a>> {
    let p = d.p;
    let nl = d.network_length();
    let tl = d.transport_length();
    macro_rules! ip {
        ($l:expr) => {
            match d.iph() {
                Some(n) if nl >= $l => n,
                _ => return d.missing(MISSING_IP, $l),
            }
        };
    }
    macro_rules! hdr {
        ($ok:expr, $proto:expr, $l:expr) => {
            if !$ok || tl < $l {
                return d.missing($proto, $l);
            } else {
                d.transport()
            }
        };
    }
    Some(match f {
        F::Timestamp | F::NTimestamp => V::Ts(p.timestamp()),
        F::TsSec => V::Big(p.timestamp().sec() as u64),
        F::TsUsec => V::N(p.timestamp().subsec_usec()),
        F::TsUsec1 => {
            let ts = p.timestamp();
            V::Big((ts.sec() as u64).wrapping_mul(1_000_000) + ts.subsec_usec() as u64)
        }
        F::FirstTimestamp | F::FirstNTimestamp => V::Ts(p.anno().first_timestamp()),
        F::Count => V::N(p.anno().u32_at(EXTRA_PACKETS_ANNO_OFFSET).wrapping_add(1)),
        F::Link | F::Paint | F::Direction => V::N(p.anno().paint() as u32),
        F::Aggregate => V::N(p.anno().u32_at(AGGREGATE_ANNO_OFFSET)),
        F::WireLen => V::N(p.len() as u32),
        F::EthSrc | F::EthDst | F::EthType => {
            let (mac, mac_off) = match p.mac_header_offset() {
                Some(m) => (p.mac_header(), m),
                None if p.network_header_offset().is_none_or(|n| n > 0) => (Some(p.data()), 0),
                None => (None, 0),
            };
            let net_off = p.network_header_offset().unwrap_or(p.len() as isize);
            match mac {
                Some(m) if mac_off + 14 == net_off && m.len() >= 14 => match f {
                    F::EthSrc => V::Mac(&m[6..12]),
                    F::EthDst => V::Mac(&m[0..6]),
                    _ => V::N(be16(m, 12)),
                },
                _ => return d.missing(MISSING_ETHERNET, 0),
            }
        }
        F::IpSrc => V::N(be32(ip!(16), 12)),
        F::IpDst => V::N(be32(ip!(20), 16)),
        F::IpTos => V::N(ip!(2)[1] as u32),
        F::IpDscp => V::N((ip!(2)[1] >> 2) as u32),
        F::IpEcn => V::N((ip!(2)[1] & 3) as u32),
        F::IpTtl => V::N(ip!(9)[8] as u32),
        F::IpFrag => {
            let off = be16(ip!(8), 6);
            V::N(if off & 0x3fff != 0 {
                if off & 0x1fff == 0 {
                    b'F'
                } else {
                    b'f'
                }
            } else if off & 0x4000 != 0 {
                b'!'
            } else {
                b'.'
            } as u32)
        }
        F::IpFragoff => V::N(be16(ip!(8), 6)),
        F::IpId => V::N(be16(ip!(6), 4)),
        F::IpSum => V::N(be16(ip!(12), 10)),
        F::IpProto => V::N(ip!(10)[9] as u32),
        F::IpHl => V::N(((ip!(1)[0] & 15) as u32) * 4),
        F::IpOpt => match d.iph() {
            Some(n) => {
                let hl = ((n[0] & 15) as usize) * 4;
                if hl <= 20 {
                    V::Opt(None)
                } else if nl < hl {
                    return d.missing(MISSING_IP, hl as i64);
                } else {
                    V::Opt(Some(&n[20..hl]))
                }
            }
            None => return d.missing(MISSING_IP, 20),
        },
        F::IpLen => {
            let v = match d.iph() {
                Some(n) => be16(n, 2),
                None => (p.len() - d.tailpad) as u32,
            };
            V::N(v.wrapping_add(if d.force_extra { d.extra } else { 0 }))
        }
        F::IpCaptureLen => V::N(match d.iph() {
            Some(n) => be16(n, 2).min(nl as u32),
            None => (p.len() - d.tailpad) as u32,
        }),
        F::Sport | F::Dport => {
            let need = if f == F::Dport { 4 } else { 2 };
            match d.iph() {
                Some(n)
                    if nl > ((n[0] & 15) as usize) * 4
                        && be16(n, 6) & 0x1fff == 0
                        && matches!(n[9], 6 | 17 | 33 | 136)
                        && tl >= need =>
                {
                    V::N(be16(d.transport(), need as usize - 2))
                }
                _ => return d.missing(PROTO_TCP_OR_UDP, need),
            }
        }
        F::TcpSeq => V::N(be32(hdr!(d.tcp, 6, 8), 4)),
        F::TcpAck => V::N(be32(hdr!(d.tcp, 6, 12), 8)),
        F::TcpOff => V::N(((hdr!(d.tcp, 6, 13)[12] >> 4) as u32) * 4),
        F::TcpFlags => {
            let t = hdr!(d.tcp, 6, 14);
            V::N(t[13] as u32 | (((t[12] & 15) as u32) << 8))
        }
        F::TcpWindow => V::N(be16(hdr!(d.tcp, 6, 16), 14)),
        F::TcpUrp => V::N(be16(hdr!(d.tcp, 6, 20), 18)),
        F::TcpOpt => {
            if !d.tcp || tl < 13 {
                return d.missing(6, tl + 1);
            }
            let t = d.transport();
            let off = ((t[12] >> 4) as usize) * 4;
            if off <= 20 {
                V::Opt(None)
            } else if (tl as usize) < off {
                return d.missing(6, tl + 1);
            } else {
                V::Opt(Some(&t[20..off]))
            }
        }
        F::TcpNtopt | F::TcpSack => {
            if !d.tcp || tl < 13 {
                return d.missing(6, tl + 1);
            }
            match tcp_opts_nt(d.transport(), tl) {
                Some(o) => V::Opt(o),
                None => return d.missing(6, tl + 1),
            }
        }
        F::UdpLen => V::N(be16(hdr!(d.udp, 17, 6), 4)),
        F::IcmpType | F::IcmpTypeName => V::N(hdr!(d.icmp, 1, 1)[0] as u32),
        F::IcmpCode | F::IcmpCodeName => V::N(hdr!(d.icmp, 1, 2)[1] as u32),
        F::IcmpFlowid | F::IcmpSeq => {
            let ty = hdr!(d.icmp, 1, 1)[0];
            // echo, echo-reply, timestamp(-reply), info request(-reply)
            if !matches!(ty, 0 | 8 | 13 | 14 | 15 | 16) {
                return None;
            }
            if f == F::IcmpFlowid {
                V::N(be16(hdr!(true, 1, 6), 4))
            } else {
                V::N(be16(hdr!(true, 1, 8), 6))
            }
        }
        F::IcmpNextmtu => {
            let t = hdr!(d.icmp, 1, 2);
            if t[0] != 3 || t[1] != 4 {
                return None;
            }
            V::N(be16(hdr!(true, 1, 8), 6))
        }
        F::PayloadLen => {
            let (_, len, _) = d.payload();
            let extra = if d.iph().is_none() || d.force_extra {
                d.extra
            } else {
                0
            };
            V::N(len.wrapping_add(extra))
        }
        F::Payload | F::PayloadMd5 | F::PayloadMd5Hex => {
            let (bytes, _, ok) = d.payload();
            if !ok {
                return None;
            }
            match f {
                F::Payload => V::Bytes(bytes),
                _ => V::Md5(md5(bytes)),
            }
        }
    })
}

/// Text for one field value.
fn outa(f: Field, v: &V, d: &Desc, out: &mut String) {
    match (f, v) {
        (_, V::Ts(t)) => {
            let _ = write!(out, "{t}");
        }
        (F::TsSec, V::Big(n)) => {
            let _ = write!(out, "{}", *n as i64);
        }
        (_, V::Big(n)) => {
            let _ = write!(out, "{n}");
        }
        (F::Direction, V::N(0)) => out.push('>'),
        (F::Direction, V::N(1)) => out.push('<'),
        (F::EthType, V::N(n)) => {
            let _ = write!(out, "{n:04X}");
        }
        (F::IpSrc | F::IpDst, V::N(n)) => {
            let _ = write!(out, "{}", std::net::Ipv4Addr::from(*n));
        }
        (F::IpFrag, V::N(n)) => out.push(*n as u8 as char),
        (F::IpFragoff, V::N(n)) => {
            let _ = write!(out, "{}", (n & 0x1fff) << 3);
            if n & 0x2000 != 0 {
                out.push('+');
            }
            if n & 0x4000 != 0 {
                out.push('!');
            }
        }
        (F::IpProto, V::N(n)) => match n {
            6 => out.push('T'),
            17 => out.push('U'),
            1 => out.push('I'),
            n => {
                let _ = write!(out, "{n}");
            }
        },
        (F::IpEcn, V::N(n)) => out.push_str(ecn_word(*n)),
        (F::TcpFlags, V::N(n)) => {
            if *n == 0 {
                out.push('.');
            }
            for (b, c) in TCP_FLAGS_WORD.iter().enumerate() {
                if n & (1 << b) != 0 {
                    out.push(*c as char);
                }
            }
        }
        (F::IcmpTypeName, V::N(n)) => match click_wire::names::icmp_type_name(*n as u8) {
            Some(s) => out.push_str(s),
            None => {
                let _ = write!(out, "{n}");
            }
        },
        (F::IcmpCodeName, V::N(n)) => {
            let ty = d.transport().first().copied().unwrap_or(0);
            match click_wire::names::icmp_code_name(ty, *n as u8) {
                Some(s) => out.push_str(s),
                None => {
                    let _ = write!(out, "{n}");
                }
            }
        }
        (_, V::N(n)) => {
            let _ = write!(out, "{n}");
        }
        (_, V::Mac(m)) => {
            let _ = write!(
                out,
                "{:02X}-{:02X}-{:02X}-{:02X}-{:02X}-{:02X}",
                m[0], m[1], m[2], m[3], m[4], m[5]
            );
        }
        (_, V::Opt(None)) => out.push('.'),
        (F::IpOpt, V::Opt(Some(o))) => unparse_ip_opt(out, o, DO_ALL_NOPAD),
        (F::TcpNtopt, V::Opt(Some(o))) => unparse_tcp_opt(out, o, DO_TCPOPT_NTALL),
        (F::TcpSack, V::Opt(Some(o))) => unparse_tcp_opt(out, o, DO_TCPOPT_SACK),
        (_, V::Opt(Some(o))) => unparse_tcp_opt(out, o, DO_ALL_NOPAD),
        (_, V::Bytes(b)) => out.push_str(&quote_bytes(b)),
        (F::PayloadMd5Hex, V::Md5(m)) => {
            for b in m {
                let _ = write!(out, "{b:02x}");
            }
        }
        (_, V::Md5(m)) => out.push_str(&md5_text(m)),
    }
}

/// Binary bytes for one field (`None`: missing, written as zeros).
fn outb(f: Field, v: Option<&V>, d: &Desc, out: &mut Vec<u8>) {
    match f.btype() {
        Special => match v {
            Some(V::Opt(Some(o))) => {
                out.push(o.len() as u8);
                out.extend_from_slice(o);
            }
            _ => out.push(0),
        },
        B16 => {
            // Click writes the digest of whatever payload is present
            let m = match v {
                Some(V::Md5(m)) => *m,
                _ => md5(d.payload().0),
            };
            out.extend_from_slice(&m);
        }
        B8 => match v {
            // Click's timestamp: seconds, microseconds
            Some(V::Ts(t)) if matches!(f, F::Timestamp | F::FirstTimestamp) => {
                out.extend_from_slice(&(t.sec() as u32).to_be_bytes());
                out.extend_from_slice(&t.subsec_usec().to_be_bytes());
            }
            // ntimestamp: nanoseconds, then seconds
            Some(V::Ts(t)) => {
                out.extend_from_slice(&t.subsec_nsec().to_be_bytes());
                out.extend_from_slice(&(t.sec() as u32).to_be_bytes());
            }
            // ts_usec1: low word, then high word
            Some(V::Big(n)) => {
                out.extend_from_slice(&(*n as u32).to_be_bytes());
                out.extend_from_slice(&((*n >> 32) as u32).to_be_bytes());
            }
            _ => out.extend_from_slice(&[0; 8]),
        },
        B6 => match v {
            Some(V::Mac(m)) => out.extend_from_slice(m),
            _ => out.extend_from_slice(&[0; 6]),
        },
        t => {
            let n = match v {
                Some(V::N(n)) => *n,
                Some(V::Big(n)) => *n as u32,
                _ => 0,
            };
            match t {
                B1 => out.push(n as u8),
                B2 => out.extend_from_slice(&(n as u16).to_be_bytes()),
                _ => out.extend_from_slice(&n.to_be_bytes()),
            }
        }
    }
}

/// Writes one packet's summary: `text` gets the line (with its newline),
/// or `bin` the binary record; returns the `!bad` line, if BAD_PACKETS
/// found the packet bad.
pub fn summarize(
    p: &Packet,
    fields: &[Field],
    o: &WriteOpts,
    text: Option<&mut String>,
    bin: Option<&mut Vec<u8>>,
) -> Option<String> {
    let prepare = fields.iter().any(|f| f.uses_ip());
    let mut d = Desc::new(p, prepare, o);
    if let Some(out) = text {
        for (i, &f) in fields.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            match extract(f, &mut d) {
                Some(v) => outa(f, &v, &d, out),
                None => out.push('-'),
            }
        }
        out.push('\n');
    } else if let Some(out) = bin {
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        for &f in fields {
            let v = extract(f, &mut d);
            outb(f, v.as_ref(), &d, out);
        }
        let len = (out.len() - start) as u32;
        out[start..start + 4].copy_from_slice(&len.to_be_bytes());
    }
    d.bad.take()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_declaration_order() {
        for (i, e) in TABLE.iter().enumerate() {
            assert_eq!(e.1 as usize, i, "{}", e.0);
        }
        assert_eq!(TABLE.len(), Field::PayloadMd5Hex as usize + 1);
    }

    #[test]
    fn names_and_synonyms() {
        assert_eq!(Field::parse("ts"), Some(Field::Timestamp));
        assert_eq!(Field::parse("first_ts"), Some(Field::FirstTimestamp));
        assert_eq!(Field::parse("src"), Some(Field::IpSrc));
        assert_eq!(Field::parse("opt"), Some(Field::IpOpt));
        assert_eq!(Field::parse("ip opt"), Some(Field::IpOpt));
        assert_eq!(Field::parse("ether_type"), Some(Field::EthType));
        assert_eq!(Field::parse("paint"), Some(Field::Paint));
        assert_eq!(Field::parse("tcp_foo"), None);
        assert_eq!(Field::parse("foo"), None);
        assert_eq!(Field::IcmpCodeName.name(), "icmp_code_name");
        assert_eq!(Field::IpCaptureLen.read_order(), None);
        assert!(Field::IpOpt.uses_ip() && !Field::EthSrc.uses_ip());
    }
}
