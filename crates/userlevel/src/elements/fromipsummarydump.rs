//! FromIPSummaryDump: builds packets from an IP summary dump (text or
//! binary), as Click's FromIPSummaryDump does.

use super::ipsumdump::{
    field_words, tcp_flag_bit, BType, Field, EXTRA_PACKETS_ANNO_OFFSET, MAJOR_VERSION,
    MINOR_VERSION,
};
use super::ipsumdump_opt::{
    cp_uint, parse_ip_opt, parse_tcp_opt, parse_uint, DO_ALL, DO_TCPOPT_NTALL, DO_TCPOPT_SACK,
};
use super::ipsumdump_parse::{parse_frag, parse_ts, split_line, FlowId, Odesc, Val};
use super::{extra_length, io_error_text, set_extra_length};
use click::element_any;
use click::prelude::*;
use click_wire::{ip_proto, UdpPacket};
use std::io::{BufRead, BufReader, Read};

/// How many malformed fields are reported before the rest are only
/// counted.
const MAX_FIELD_REPORTS: u64 = 5;

/// `FromIPSummaryDump(FILENAME [, KEYWORDS])`.
pub struct FromIPSummaryDump {
    filename: String,
    /// `TIMING`: emit packets spaced as their timestamps.
    timing: bool,
    /// now − first packet's timestamp, once TIMING has seen one
    time_offset: Option<i64>,
    /// `DATA`: the dump's text given inline instead of a file.
    data: Option<String>,
    stop: bool,
    active: bool,
    zero: bool,
    checksum: bool,
    default_proto: u8,
    multipacket: bool,
    burst: usize,
    allow_nonexistent: bool,
    /// CONTENTS: fields for dumps without a `!data` line.
    default_fields: Option<Vec<Option<Field>>>,
    /// FLOWID: default addresses and ports.
    default_flowid: Option<FlowId>,

    reader: Option<Box<dyn BufRead>>,
    /// The first line, read at initialization to check the banner.
    stash: Option<Vec<u8>>,
    fields: Vec<Option<Field>>,
    /// Field indexes in injection order.
    order: Vec<usize>,
    flowid: Option<FlowId>,
    binary: bool,
    minor_version: u32,
    lineno: u64,
    pos: u64,
    eof: bool,
    count: u64,
    /// The next packet to emit, once read.
    next: Option<Packet>,
    /// MULTIPACKET: the packet still standing for several.
    multi: Option<Multi>,
    format_complaint: bool,
    bad_fields: u64,
    stopped_driver: bool,
    /// In pull mode, Click's empty notifier: active while packets may come.
    signal: Option<SignalId>,
}

impl Default for FromIPSummaryDump {
    fn default() -> Self {
        FromIPSummaryDump {
            filename: String::new(),
            timing: false,
            time_offset: None,
            data: None,
            stop: false,
            active: true,
            zero: true,
            checksum: false,
            default_proto: 6,
            multipacket: false,
            burst: 1,
            allow_nonexistent: false,
            default_fields: None,
            default_flowid: None,
            reader: None,
            stash: None,
            fields: Vec::new(),
            order: Vec::new(),
            flowid: None,
            binary: false,
            minor_version: MINOR_VERSION,
            lineno: 0,
            pos: 0,
            eof: false,
            count: 0,
            next: None,
            multi: None,
            format_complaint: false,
            bad_fields: 0,
            stopped_driver: false,
            signal: None,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "FromIPSummaryDump",
    port_count: "0/1",
    processing: "a/a",
    group: "userlevel",
    signature: "FromIPSummaryDump([FILENAME, KEYWORDS])",
    summary: "Reads packets from an IP summary dump file.",
    description: "Reads FILENAME (`-` means standard input), a file in Click's IP summary dump \
format as ToIPSummaryDump writes it, and emits one packet per line. The `!data` line names the \
fields (any of ToIPSummaryDump's, with the same spellings and synonyms; `ip_capture_len`, \
`payload_md5` and `payload_md5_hex` are ignored on input, with a warning); `-` marks a missing \
value. Other header lines: `!IPSummaryDump 1.x` (version 1.0 dumps give `ip_fragoff` in units of \
8 bytes), `!proto P` (the protocol for packets without `ip_proto`: a name, number, `T`, `U` or \
`I`), `!flowid SRC SPORT DST DPORT [PROTO]` (defaults for addresses and ports), `!aggregate N`, \
`!contents` (as `!data`), and `!binary`, after which the rest of the file is binary records as \
ToIPSummaryDump's BINARY writes them (a 4-byte length, then each field in its binary form; records \
with the top length bit set are text lines). `#` lines are comments.\n\n\
Packets are built as Click builds them: fields apply in header order (annotations, Ethernet, IP, \
transport, payload), whatever their column order. Ethernet fields (`eth_src`, `eth_dst`, \
`eth_type`) put an Ethernet header first (an `eth_type` other than IPv4 or IPv6 makes a non-IP \
packet). An IP header (version 4, TTL 100, protocol from `ip_proto`, `!proto` or PROTO) is made \
for any IP, transport or payload field; `ip_opt` writes its options into the header (padded with \
EOL to a multiple of 4) and sets the header length; `ip_hl` grows the header with EOL padding; \
`ip_dscp` and `ip_ecn` set their bits of the TOS byte; `ip_frag` and `ip_fragoff` set the \
fragment field (`ip_frag`: `.` none, `!` DF, `F` first fragment, `f` a later one). The first \
fragment of TCP, UDP, UDP-Lite, DCCP and ICMP packets gets a transport header: `tcp_opt`, \
`tcp_ntopt` and `tcp_sack` write TCP options and set the data offset, `tcp_off` grows the TCP \
header; `icmp_type` / `icmp_type_name` and `icmp_code` / `icmp_code_name` take Click's names \
(`echo`, `unreachable`, `needfrag`, ...) or numbers, and the header grows to the type's length \
(20 for timestamps); `icmp_flowid`, `icmp_seq` and `icmp_nextmtu` fill the identifier, sequence \
number and next-hop MTU. `payload` is copied after the headers. The IP length is `ip_len`, else \
`wire_len`, else the headers plus `payload_len` or `payload`; when `ip_len` (or `wire_len`) is \
longer than the headers and payload, Click's reading grows the TCP header and then the IP header \
with EOL options to make up the difference (unless their lengths were given). The UDP length \
follows the IP length. The extra-length annotation accounts for bytes not present. Timestamp, \
first-timestamp, paint (`link`, `paint`, `direction`), aggregate and extra-packets (`count`) \
annotations are set; the IP header annotation points at the IP header, the destination address \
annotation holds its destination.\n\n\
A field that does not parse (bad option text, a value out of range) is left out of the packet and \
reported (the first few, with the file and line); a line with no usable field is dropped with a \
`packet parse error` (once). Truncated binary records keep the fields that are complete; a record \
cut by the end of the file or shorter than its length word ends the dump with an error.\n\n\
Keyword arguments:\n\n\
- `DATA` (string): the dump's text itself, instead of FILENAME.\n\
- `TIMING` (boolean): emit packets spaced as their timestamps (relative to the first). Default \
false.\n\
- `STOP` (boolean): ask the driver to stop at the end of the file. Default false.\n\
- `ACTIVE` (boolean): if false, emit nothing until `active` is written. Default true.\n\
- `ZERO` (boolean): fill data the dump does not set with zeros. Default true (always zero here).\n\
- `CHECKSUM` (boolean): extend each packet to its IP length and compute IP, TCP, UDP and ICMP \
checksums. Default false.\n\
- `PROTO` (byte): IP protocol when the dump has none. Default 6 (TCP).\n\
- `MULTIPACKET` (boolean): a line whose `count` is N emits N packets, dividing the length \
between them and spacing their timestamps from `first_timestamp` to `timestamp`. Default \
false.\n\
- `CONTENTS` (words): fields, for files without a `!data` line (`FIELDS`, `DEFAULT_CONTENTS` and \
`DEFAULT_FIELDS` are synonyms).\n\
- `FLOWID` (words): `SRC SPORT DST DPORT [PROTO]`, as a `!flowid` line (`DEFAULT_FLOWID` is a \
synonym).\n\
- `ALLOW_NONEXISTENT` (boolean): a missing file is an empty dump. Default false.\n\
- `BURST` (integer): packets per task run. Default 1.",
    ports: "no inputs, one output (agnostic)",
    handlers: &[
        HandlerDoc {
            name: "count",
            mode: HandlerMode::Read,
            text: "Packets emitted so far.",
        },
        HandlerDoc {
            name: "active",
            mode: HandlerMode::ReadWrite,
            text: "Whether packets are emitted (boolean).",
        },
        HandlerDoc {
            name: "encap",
            mode: HandlerMode::Read,
            text: "Always `IP`.",
        },
        HandlerDoc {
            name: "filename",
            mode: HandlerMode::Read,
            text: "The file name.",
        },
        HandlerDoc {
            name: "filesize",
            mode: HandlerMode::Read,
            text: "The file's length in bytes, or `-`.",
        },
        HandlerDoc {
            name: "filepos",
            mode: HandlerMode::Read,
            text: "Bytes of the file consumed so far.",
        },
        HandlerDoc {
            name: "bad_fields",
            mode: HandlerMode::Read,
            text: "Fields left out because they did not parse.",
        },
        HandlerDoc {
            name: "stop",
            mode: HandlerMode::Write,
            text: "Deactivates the element and asks the driver to stop.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(FromIPSummaryDump::default()),
};

/// A MULTIPACKET packet still standing for more (Click's
/// `handle_multipacket` state).
struct Multi {
    work: Packet,
    /// IP length for all but the last packet.
    len_each: u32,
    end_ts: Timestamp,
    delta: i64,
}

fn extra_packets(p: &Packet) -> u32 {
    p.anno().u32_at(EXTRA_PACKETS_ANNO_OFFSET)
}

/// Click's `set_packet_lengths`: the IP (and UDP) length covering the data
/// plus `extra` bytes.
fn set_packet_lengths(p: &mut Packet, extra: u32) {
    let length = (p.len() as u64 + extra as u64).min(0xFFFF) as u16;
    let Some(mut ip) = p.ip_header_mut() else {
        return;
    };
    if ip.version() != 4 {
        return;
    }
    let hl = usize::from(ip.header_len());
    ip.set_total_len(length);
    if ip.protocol() == ip_proto::UDP {
        // Like Click, the length of a UDP header cut right after it too
        // (the length field ends at byte 6).
        let udp = ip.into_inner().get_mut(hl..).filter(|u| u.len() >= 6);
        if let Some(udp) = udp {
            UdpPacket::new_unchecked(udp).set_len(length.saturating_sub(hl as u16));
        }
    }
}

impl FromIPSummaryDump {
    fn file_label(&self) -> &str {
        if self.data.is_some() && self.filename.is_empty() {
            "<data>"
        } else {
            &self.filename
        }
    }

    fn landmark(&self) -> String {
        if self.binary {
            format!("{}:record {}", self.file_label(), self.lineno)
        } else {
            format!("{}:{}", self.file_label(), self.lineno)
        }
    }

    fn error(&self, cx: &Ctx, msg: &str) {
        cx.error_line(&format!(
            "{}: {}: {}",
            cx.declaration(),
            self.landmark(),
            msg
        ));
    }

    /// Installs the fields of a `!data` line or CONTENTS; unknown names are
    /// warnings (their columns are skipped).
    fn set_fields(&mut self, words: Vec<(String, Option<Field>)>, mut warn: impl FnMut(String)) {
        self.fields.clear();
        for (w, f) in words {
            match f {
                None => warn(format!("unknown content type '{w}'")),
                Some(f) if f.read_order().is_none() => {
                    warn(format!("content type '{w}' ignored on input"))
                }
                _ => {}
            }
            self.fields.push(f.filter(|f| f.read_order().is_some()));
        }
        let mut order: Vec<usize> = (0..self.fields.len()).collect();
        order.sort_by_key(|&i| (self.fields[i].and_then(|f| f.read_order()).unwrap_or(0), i));
        self.order = order;
    }

    fn bang_proto(&mut self, word: Option<&str>) -> bool {
        let Some(w) = word else { return false };
        let p = match w {
            "T" => Some(6),
            "U" => Some(17),
            "I" => Some(1),
            _ => click_wire::names::ip_proto_by_name(w)
                .map(|v| v as u64)
                .or_else(|| parse_uint(w, u64::MAX))
                .filter(|&v| v < 256),
        };
        match p {
            Some(p) => {
                self.default_proto = p as u8;
                true
            }
            None => false,
        }
    }

    fn parse_flowid(&mut self, words: &[String]) -> Option<FlowId> {
        if words.len() < 4 {
            return None;
        }
        let addr = |w: &str| -> Option<[u8; 4]> {
            if w == "-" {
                Some([0; 4])
            } else {
                click_lang::args::parse_ipv4(w).ok().map(|a| a.octets())
            }
        };
        let port = |w: &str| -> Option<u16> {
            if w == "-" {
                Some(0)
            } else {
                parse_uint(w, 65535).map(|v| v as u16)
            }
        };
        let f = FlowId {
            src: addr(&words[0])?,
            sport: port(&words[1])?,
            dst: addr(&words[2])?,
            dport: port(&words[3])?,
        };
        if let Some(p) = words.get(4) {
            if !self.bang_proto(Some(p)) {
                return None;
            }
        }
        Some(f)
    }

    /// A `!` line.
    fn bang(&mut self, line: &str, cx: &Ctx) {
        let mut it = line.splitn(2, |c: char| c.is_ascii_whitespace());
        let key = it.next().unwrap_or("");
        let rest = it.next().unwrap_or("");
        let words: Vec<String> = click_lang::split_words(rest)
            .iter()
            .map(|w| click_lang::unquote(w))
            .collect();
        match key {
            "!data" | "!contents" => {
                let mut warnings = Vec::new();
                self.set_fields(field_words(rest), |w| warnings.push(w));
                for w in warnings {
                    self.error(cx, &format!("warning: {w}"));
                }
                if self.fields.is_empty() {
                    self.error(cx, "no contents specified");
                }
            }
            "!proto" => {
                if words.len() != 1 {
                    self.error(cx, "bad !proto");
                } else if !self.bang_proto(words.first().map(String::as_str)) {
                    self.error(cx, "bad protocol in !proto");
                }
            }
            "!flowid" => {
                self.flowid = self.parse_flowid(&words);
                if self.flowid.is_none() {
                    self.error(cx, "bad !flowid specification");
                }
            }
            "!aggregate"
                if words.len() != 1 || parse_uint(&words[0], u32::MAX as u64).is_none() =>
            {
                self.error(cx, "bad !aggregate specification");
            }
            "!binary" => {
                if !words.is_empty() {
                    self.error(cx, "bad !binary specification");
                }
                self.binary = true;
                self.lineno = 0;
            }
            _ => {}
        }
    }

    fn read_bytes(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some(r) = self.reader.as_mut() else {
            return Ok(0);
        };
        let mut got = 0;
        while got < buf.len() {
            match r.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.pos += got as u64;
        Ok(got)
    }

    /// The next line, or binary record; `None` at the end (or after an
    /// error, reported). The flag says whether it is binary data.
    fn next_record(&mut self, cx: &Ctx) -> Option<(Vec<u8>, bool)> {
        if !self.binary {
            if let Some(l) = self.stash.take() {
                self.lineno += 1;
                return Some((l, false));
            }
            let r = self.reader.as_mut()?;
            let mut line = Vec::new();
            return match r.read_until(b'\n', &mut line) {
                Ok(0) => None,
                Ok(n) => {
                    self.pos += n as u64;
                    self.lineno += 1;
                    Some((line, false))
                }
                Err(e) => {
                    self.lineno += 1;
                    self.error(cx, &io_error_text(&e));
                    None
                }
            };
        }
        let mut head = [0u8; 4];
        self.lineno += 1;
        match self.read_bytes(&mut head) {
            Ok(0) => return None,
            Ok(4) => {}
            Ok(n) => {
                self.error(
                    cx,
                    &format!("truncated binary record ({n} of 4 length bytes)"),
                );
                return None;
            }
            Err(e) => {
                self.error(cx, &io_error_text(&e));
                return None;
            }
        }
        let word = u32::from_be_bytes(head);
        let len = (word & 0x7FFF_FFFF) as usize;
        if len < 4 {
            self.error(cx, "binary record too short");
            return None;
        }
        let mut body = vec![0u8; (len - 4).min(1 << 20)];
        if len - 4 > body.len() {
            self.error(cx, &format!("binary record too long ({len} bytes)"));
            return None;
        }
        match self.read_bytes(&mut body) {
            Ok(n) if n == body.len() => {}
            Ok(n) => {
                self.error(
                    cx,
                    &format!("truncated binary record ({} of {len} bytes)", n + 4),
                );
                return None;
            }
            Err(e) => {
                self.error(cx, &io_error_text(&e));
                return None;
            }
        }
        if word & 0x8000_0000 != 0 {
            // a text line inside a binary dump
            while body.last() == Some(&0) {
                body.pop();
            }
            let text = body.first().is_some_and(|&c| c == b'!' || c == b'#');
            return Some((body, !text));
        }
        Some((body, true))
    }

    fn report_bad_field(&mut self, cx: &Ctx, f: Field, tok: &str) {
        self.bad_fields += 1;
        if self.bad_fields <= MAX_FIELD_REPORTS {
            let more = if self.bad_fields == MAX_FIELD_REPORTS {
                " (further bad fields not reported)"
            } else {
                ""
            };
            self.error(cx, &format!("bad {} '{}'{more}", f.name(), tok));
        }
    }

    /// Click's text readers (`ina`): a field's value, or `None` if it does
    /// not parse.
    fn parse_text(&self, f: Field, t: &str, od: &Odesc) -> Option<Val> {
        let uint = |max: u64| parse_uint(t, max);
        let n = |max: u64| uint(max).map(|v| Val::N(v as u32));
        match f {
            Field::Timestamp
            | Field::NTimestamp
            | Field::FirstTimestamp
            | Field::FirstNTimestamp => parse_ts(t).map(Val::Ts),
            Field::TsSec | Field::Count | Field::Aggregate | Field::WireLen => n(u32::MAX as u64),
            Field::TsUsec => n(999_999),
            Field::TsUsec1 => uint(u64::MAX).map(Val::U64),
            Field::Link | Field::Paint | Field::Direction => match t {
                ">" => Some(Val::N(0)),
                "<" => Some(Val::N(1)),
                _ => n(255),
            },
            Field::EthSrc | Field::EthDst => click_lang::args::parse_ether(t).ok().map(Val::Mac),
            Field::EthType => match cp_uint(t.as_bytes(), 0, 16) {
                (Some(v), j) if j == t.len() && v <= 0xFFFF => Some(Val::N(v as u32)),
                _ => None,
            },
            Field::IpSrc | Field::IpDst => click_lang::args::parse_ipv4(t)
                .ok()
                .map(|a| Val::N(u32::from(a))),
            Field::IpTos | Field::IpDscp | Field::IpTtl => n(255),
            Field::IpHl | Field::TcpOff => n(60),
            Field::IpEcn => match t {
                "0" | "1" | "2" | "3" => n(3),
                "no" => Some(Val::N(0)),
                "ect1" | "ECT(1)" => Some(Val::N(1)),
                "ect2" | "ECT(0)" => Some(Val::N(2)),
                "ce" | "CE" => Some(Val::N(3)),
                _ => None,
            },
            Field::IpFrag | Field::IpFragoff => parse_frag(t, od.minor_version).map(Val::N),
            Field::IpId
            | Field::IpSum
            | Field::Sport
            | Field::Dport
            | Field::TcpWindow
            | Field::TcpUrp
            | Field::UdpLen
            | Field::IcmpFlowid
            | Field::IcmpSeq
            | Field::IcmpNextmtu => n(65535),
            Field::IpLen | Field::TcpSeq | Field::TcpAck | Field::PayloadLen => n(u32::MAX as u64),
            Field::IpProto => match t {
                "T" => Some(Val::N(6)),
                "U" => Some(Val::N(17)),
                "I" => Some(Val::N(1)),
                _ => n(255),
            },
            Field::IpOpt => parse_ip_opt(t).ok().map(Val::Opt),
            Field::TcpOpt => parse_tcp_opt(t, DO_ALL).ok().map(Val::Opt),
            Field::TcpNtopt => parse_tcp_opt(t, DO_TCPOPT_NTALL).ok().map(Val::Opt),
            Field::TcpSack => parse_tcp_opt(t, DO_TCPOPT_SACK).ok().map(Val::Opt),
            Field::TcpFlags => {
                if t == "." {
                    Some(Val::N(0))
                } else if t.starts_with(|c: char| c.is_ascii_digit()) {
                    n(0xFFF)
                } else if t.is_empty() {
                    None
                } else {
                    let mut v = 0u32;
                    for c in t.bytes() {
                        v |= 1 << tcp_flag_bit(c)?;
                    }
                    Some(Val::N(v))
                }
            }
            Field::IcmpType | Field::IcmpTypeName => click_wire::names::icmp_type_by_name(t)
                .map(|v| Val::N(v as u32))
                .or_else(|| n(255)),
            Field::IcmpCode | Field::IcmpCodeName => {
                let named = if od.have_icmp_type {
                    click_wire::names::icmp_code_by_name(od.buf[od.th()], t)
                } else {
                    None
                };
                named.map(|v| Val::N(v as u32)).or_else(|| n(255))
            }
            Field::Payload => Some(Val::Bytes(click_lang::args::unquote_bytes(t))),
            Field::IpCaptureLen | Field::PayloadMd5 | Field::PayloadMd5Hex => None,
        }
    }

    /// The values of a binary record, field by field (Click's `inb`):
    /// fixed-size fields that do not fit, and every field after them, are
    /// missing.
    fn parse_binary(&self, rec: &[u8]) -> Vec<Option<Val>> {
        let mut out = Vec::with_capacity(self.fields.len());
        let mut i = 0;
        let be32 = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        for f in &self.fields {
            let Some(f) = *f else {
                out.push(None);
                continue;
            };
            match f.btype() {
                BType::Special => {
                    let n = rec.get(i).copied().map(usize::from);
                    match n {
                        Some(n) if i + 1 + n <= rec.len() => {
                            out.push(Some(Val::Opt(Some(rec[i + 1..i + 1 + n].to_vec()))));
                            i += 1 + n;
                        }
                        _ => {
                            out.push(Some(Val::Opt(None)));
                            i = rec.len();
                        }
                    }
                }
                BType::NotAllowed => {
                    out.push(None);
                    i = rec.len();
                }
                t => {
                    let size = f.binary_size().unwrap_or(0);
                    if i + size > rec.len() {
                        out.push(None);
                        i = rec.len();
                        continue;
                    }
                    let b = &rec[i..i + size];
                    i += size;
                    out.push(Some(match (t, f) {
                        (BType::B1, _) => Val::N(b[0] as u32),
                        (BType::B2, _) => Val::N(u16::from_be_bytes([b[0], b[1]]) as u32),
                        (BType::B6, _) => Val::Mac([b[0], b[1], b[2], b[3], b[4], b[5]]),
                        (BType::B8, Field::Timestamp | Field::FirstTimestamp) => {
                            Val::Ts(Timestamp::from_sec_nsec(
                                be32(b) as i64,
                                be32(&b[4..]).wrapping_mul(1000),
                            ))
                        }
                        (BType::B8, Field::NTimestamp | Field::FirstNTimestamp) => {
                            Val::Ts(Timestamp::from_sec_nsec(be32(&b[4..]) as i64, be32(b)))
                        }
                        (BType::B8, _) => Val::U64(((be32(&b[4..]) as u64) << 32) | be32(b) as u64),
                        _ => Val::N(be32(b)),
                    }));
                }
            }
        }
        out
    }

    /// Builds the packet for one data line or binary record (`None`: the
    /// line gave no packet).
    fn build(&mut self, rec: &[u8], binary: bool, cx: &Ctx) -> Option<Packet> {
        let mut od = Odesc::new(self.default_proto, self.flowid, self.minor_version);
        let mut nfields = 0;
        let order = self.order.clone();
        if binary {
            let mut vals = self.parse_binary(rec);
            for &i in &order {
                let (Some(f), Some(v)) = (self.fields[i], vals[i].take()) else {
                    continue;
                };
                od.inject(f, v);
                nfields += 1;
            }
        } else {
            let line = String::from_utf8_lossy(rec);
            let toks = split_line(&line, self.fields.len());
            for &i in &order {
                let (Some(f), t) = (self.fields[i], toks[i]) else {
                    continue;
                };
                if t.is_empty() || t == "-" {
                    continue;
                }
                match self.parse_text(f, t, &od) {
                    Some(v) => {
                        od.inject(f, v);
                        nfields += 1;
                    }
                    None => self.report_bad_field(cx, f, t),
                }
            }
        }
        if nfields == 0 {
            if !self.format_complaint && (binary || !rec.iter().all(u8::is_ascii_whitespace)) {
                if self.fields.is_empty() {
                    self.error(cx, "no '!data' provided");
                } else {
                    self.error(cx, "packet parse error");
                }
                self.format_complaint = true;
            }
            return None;
        }
        Some(od.finish(self.checksum, cx))
    }

    /// Reads until a line yields a packet or the dump ends.
    fn read_packet(&mut self, cx: &Ctx) -> Option<Packet> {
        while !self.eof {
            let Some((rec, binary)) = self.next_record(cx) else {
                self.eof = true;
                self.reader = None;
                return None;
            };
            if !binary {
                let mut l = &rec[..];
                while let [rest @ .., b'\n' | b'\r'] = l {
                    l = rest;
                }
                if l.is_empty() || l[0] == b'#' {
                    continue;
                }
                if l[0] == b'!' {
                    let line = String::from_utf8_lossy(l).into_owned();
                    self.bang(&line, cx);
                    continue;
                }
                if let Some(p) = self.build(l, false, cx) {
                    return Some(p);
                }
            } else if let Some(p) = self.build(&rec, true, cx) {
                return Some(p);
            }
        }
        None
    }

    /// MULTIPACKET: the next packet a multi-packet line stands for.
    fn multi_step(&mut self, cx: &Ctx) -> Option<Packet> {
        let m = self.multi.as_mut()?;
        let count = extra_packets(&m.work) as u64 + 1;
        if count <= 1 {
            return self.multi.take().map(|m| m.work);
        }
        let len = m.work.len() as u32;
        let mut out = m.work.clone_in(cx.pool());
        out.anno_mut().set_u32_at(EXTRA_PACKETS_ANNO_OFFSET, 0);
        set_extra_length(&mut out, m.len_each.saturating_sub(len));
        let w = &mut m.work;
        w.anno_mut()
            .set_u32_at(EXTRA_PACKETS_ANNO_OFFSET, (count - 2) as u32);
        let left = extra_length(w).saturating_sub(m.len_each);
        set_extra_length(w, left);
        if count == 2 {
            w.set_timestamp(m.end_ts);
            set_packet_lengths(w, left);
        } else {
            let t = w.timestamp().add_nsec(m.delta);
            w.set_timestamp(t);
        }
        Some(out)
    }

    fn multi_setup(&mut self, mut p: Packet) {
        let count = extra_packets(&p) as u64 + 1;
        let len = p.len() as u64;
        let mut each = (len + extra_length(&p) as u64) / count;
        if each < len {
            each = len;
            set_extra_length(&mut p, (each * (count - 1)).min(u32::MAX as u64) as u32);
        }
        let (end_ts, delta) = super::ipsumdump::multipacket_times(&mut p, count);
        let each = each.min(u32::MAX as u64) as u32;
        set_packet_lengths(&mut p, each.saturating_sub(len as u32));
        self.multi = Some(Multi {
            work: p,
            len_each: each,
            end_ts,
            delta,
        });
    }

    /// Makes sure `next` holds the next packet, if there is one.
    fn fill(&mut self, cx: &Ctx) {
        if self.next.is_some() {
            return;
        }
        if self.multi.is_some() {
            self.next = self.multi_step(cx);
            return;
        }
        if let Some(p) = self.read_packet(cx) {
            if self.multipacket && extra_packets(&p) > 0 {
                self.multi_setup(p);
                self.next = self.multi_step(cx);
            } else {
                self.next = Some(p);
            }
        }
    }

    fn next_packet(&mut self, cx: &Ctx) -> Option<Packet> {
        self.fill(cx);
        let p = self.next.take();
        if p.is_some() {
            self.count += 1;
        }
        p
    }

    /// With TIMING, when the next packet is due (None: now).
    fn due(&mut self, cx: &Ctx) -> Option<Timestamp> {
        if !self.timing {
            return None;
        }
        self.fill(cx);
        let ts = self.next.as_ref()?.timestamp();
        let off = *self
            .time_offset
            .get_or_insert_with(|| (cx.now() - ts).nsec());
        let when = ts.add_nsec(off);
        (when > cx.now()).then_some(when)
    }

    fn at_end(&mut self, cx: &Ctx) {
        if let Some(sig) = self.signal {
            cx.set_signal(sig, false);
        }
        if self.stop && !self.stopped_driver {
            self.stopped_driver = true;
            cx.please_stop_driver();
        }
    }

    /// Reads the first line: the banner gives the format version; a file
    /// that starts otherwise gets Click's warning.
    fn check_banner(&mut self, cx: &Ctx) {
        let Some(r) = self.reader.as_mut() else {
            return;
        };
        let mut line = Vec::new();
        match r.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => {}
            Ok(n) => {
                let l = String::from_utf8_lossy(&line).into_owned();
                if let Some(v) = l.strip_prefix("!IPSummaryDump") {
                    self.pos += n as u64;
                    self.lineno += 1;
                    let v = v.trim();
                    if let Some((a, b)) = v.split_once('.') {
                        let b: String = b.chars().take_while(|c| c.is_ascii_digit()).collect();
                        if let (Ok(major), Ok(minor)) = (a.parse::<u32>(), b.parse::<u32>()) {
                            self.minor_version = minor;
                            if major != MAJOR_VERSION || minor > MINOR_VERSION {
                                self.error(
                                    cx,
                                    &format!(
                                        "warning: unexpected IPSummaryDump version {major}.{minor}"
                                    ),
                                );
                                self.minor_version = MINOR_VERSION;
                            }
                        }
                    }
                } else {
                    let known = ["!creator", "!data", "!contents", "!proto", "!flowid"];
                    if !known.iter().any(|k| l.starts_with(k)) && self.fields.is_empty() {
                        cx.error_line(&format!(
                            "{}: {}:1: warning: missing banner line; is this an IP summary dump?",
                            cx.declaration(),
                            self.file_label()
                        ));
                    }
                    self.pos += n as u64;
                    self.stash = Some(line);
                }
            }
        }
    }
}

impl Element for FromIPSummaryDump {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let filename: Option<String> = a.read_p("FILENAME")?;
        let data = a.read::<String>("DATA")?;
        let stop = a.read::<bool>("STOP")?.unwrap_or(false);
        let active = a.read::<bool>("ACTIVE")?.unwrap_or(true);
        let timing = a.read::<bool>("TIMING")?.unwrap_or(false);
        let zero = a.read::<bool>("ZERO")?.unwrap_or(true);
        let checksum = a.read::<bool>("CHECKSUM")?.unwrap_or(false);
        let proto = a.read::<u8>("PROTO")?.unwrap_or(6);
        let multipacket = a.read::<bool>("MULTIPACKET")?.unwrap_or(false);
        let burst = a.read::<usize>("BURST")?.unwrap_or(1);
        let mut contents = None;
        for k in ["DEFAULT_CONTENTS", "DEFAULT_FIELDS", "CONTENTS", "FIELDS"] {
            if let Some(c) = a.read::<click_lang::RawString>(k)? {
                contents = Some(c);
            }
        }
        let mut flowid = None;
        for k in ["DEFAULT_FLOWID", "FLOWID"] {
            if let Some(c) = a.read::<click_lang::RawString>(k)? {
                flowid = Some(c);
            }
        }
        let allow_nonexistent = a.read::<bool>("ALLOW_NONEXISTENT")?.unwrap_or(false);
        let _ = a.read::<f64>("SAMPLE")?;
        a.complete()?;
        if burst == 0 {
            return Err("BURST must be positive".into());
        }
        self.default_proto = proto;
        if let Some(c) = contents {
            let mut warnings = Vec::new();
            self.set_fields(field_words(&c.0), |w| warnings.push(w));
            for w in warnings {
                cx.warning(&w);
            }
            if self.fields.is_empty() {
                return Err("no contents specified".into());
            }
            self.default_fields = Some(self.fields.clone());
        }
        if let Some(f) = flowid {
            let words: Vec<String> = click_lang::split_words(&f.0)
                .iter()
                .map(|w| click_lang::unquote(w))
                .collect();
            self.default_flowid = Some(
                self.parse_flowid(&words)
                    .ok_or("bad FLOWID specification")?,
            );
        }
        match (&filename, &data) {
            (Some(_), Some(_)) => return Err("FILENAME and DATA conflict".into()),
            (None, None) => return Err("missing mandatory FILENAME argument".into()),
            _ => {}
        }
        self.filename = filename.unwrap_or_default();
        self.data = data;
        self.timing = timing;
        self.stop = stop;
        self.active = active;
        self.zero = zero;
        self.checksum = checksum;
        self.multipacket = multipacket;
        self.burst = burst;
        self.allow_nonexistent = allow_nonexistent;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        self.flowid = self.default_flowid;
        if let Some(f) = &self.default_fields {
            self.fields = f.clone();
        }
        let r: Option<Box<dyn BufRead>> = if let Some(d) = &self.data {
            let mut d = d.clone().into_bytes();
            if !d.ends_with(b"\n") {
                d.push(b'\n');
            }
            Some(Box::new(std::io::Cursor::new(d)))
        } else if self.filename == "-" {
            Some(Box::new(BufReader::new(std::io::stdin())))
        } else {
            match std::fs::File::open(&self.filename) {
                Ok(f) => Some(Box::new(BufReader::with_capacity(1 << 16, f))),
                Err(e) if self.allow_nonexistent && e.kind() == std::io::ErrorKind::NotFound => {
                    None
                }
                Err(e) => return Err(format!("{}: {}", self.filename, io_error_text(&e))),
            }
        };
        self.eof = r.is_none();
        self.reader = r;
        self.check_banner(cx);
        if cx.output_is_push(0) {
            if self.active {
                cx.schedule_task();
            }
        } else {
            self.signal = Some(cx.new_signal(self.active));
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        if !self.active {
            return false;
        }
        for _ in 0..self.burst {
            if let Some(when) = self.due(cx) {
                cx.schedule_timer_at(0, when);
                return false;
            }
            match self.next_packet(cx) {
                Some(p) => cx.push(0, p),
                None => {
                    self.at_end(cx);
                    return false;
                }
            }
        }
        true
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        if self.active && cx.output_is_push(0) {
            cx.schedule_task();
        }
    }

    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        if !self.active || self.due(cx).is_some() {
            return None;
        }
        let p = self.next_packet(cx);
        if p.is_none() {
            self.at_end(cx);
        }
        p
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "count" => self.count.to_string(),
            "active" => self.active.to_string(),
            "encap" => "IP".to_string(),
            "filename" => self.filename.clone(),
            "filesize" => match std::fs::metadata(&self.filename) {
                Ok(m) if m.is_file() => m.len().to_string(),
                _ => "-".to_string(),
            },
            "filepos" => self.pos.to_string(),
            "bad_fields" => self.bad_fields.to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        Some(match name {
            "active" => match click_lang::parse_bool(value.trim()) {
                Ok(b) => {
                    self.active = b;
                    if let Some(sig) = self.signal {
                        let more = !(self.eof && self.next.is_none() && self.multi.is_none());
                        cx.set_signal(sig, b && more);
                    }
                    if b && cx.output_is_push(0) && !cx.task_scheduled() {
                        cx.schedule_task();
                    }
                    Ok(())
                }
                Err(_) => Err("active: expected boolean".into()),
            },
            "stop" => {
                self.active = false;
                if let Some(sig) = self.signal {
                    cx.set_signal(sig, false);
                }
                cx.please_stop_driver();
                Ok(())
            }
            _ => return None,
        })
    }

    fn empty_signal(&self) -> Option<SignalId> {
        self.signal
    }

    fn cleanup(&mut self, _cx: &Ctx) {
        self.reader = None;
        self.next = None;
        self.multi = None;
    }

    element_any!();
}
