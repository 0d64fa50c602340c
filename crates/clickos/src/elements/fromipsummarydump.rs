//! FromIPSummaryDump: builds IPv4 packets from an IP summary dump.

use super::ipsumdump::{parse_fields, Field, TCP_FLAGS_WORD};
use super::{io_error_text, set_extra_length};
use click::element_any;
use click::packet::AGGREGATE_ANNO_OFFSET;
use click::prelude::*;
use std::io::{BufRead, BufReader};

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
    default_fields: Option<Vec<Field>>,

    reader: Option<Box<dyn BufRead>>,
    fields: Option<Vec<Field>>,
    lineno: u64,
    pos: u64,
    eof: bool,
    count: u64,
    pending: Vec<Packet>,
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
            default_fields: None,
            reader: None,
            fields: None,
            lineno: 0,
            pos: 0,
            eof: false,
            count: 0,
            pending: Vec::new(),
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
    description: "Reads lines from FILENAME (`-` means standard input), a file in Click's IP \
summary dump format as ToIPSummaryDump writes it, and emits one IPv4 packet per line. The `!data` \
line names the fields (see ToIPSummaryDump for the names); a `!proto P` line sets the protocol \
of packets whose lines give none (as PROTO does); other `!` lines and `#` comments are skipped; `-` marks a missing value. Packets hold an IP header and, for the first fragment of TCP, \
UDP and ICMP packets, a transport header (plus the payload when the dump has one); their IP length \
is the dump's `ip_len` (or headers plus `payload_len`), and the extra-length annotation accounts for \
the bytes not present. Timestamp, paint (`direction`, `link`) and aggregate annotations are set; the IP \
header annotation points at the IP header.\n\nKeyword arguments:\n\n\
- `DATA` (string): the dump's text itself, instead of FILENAME.\n\
- `TIMING` (boolean): emit packets spaced as their timestamps (relative to the first). Default \
false.\n\
- `STOP` (boolean): ask the driver to stop at the end of the file. Default false.\n\
- `ACTIVE` (boolean): if false, emit nothing until `active` is written. Default true.\n\
- `ZERO` (boolean): fill data the dump does not set with zeros. Default true (always zero here).\n\
- `CHECKSUM` (boolean): compute IP, TCP and UDP checksums. Default false.\n\
- `PROTO` (byte): IP protocol when the dump has none. Default 6 (TCP).\n\
- `MULTIPACKET` (boolean): emit `count` copies of each line's packet. Default false.\n\
- `CONTENTS` (words): fields, for files without a `!data` line (`FIELDS` is a synonym).\n\
- `BURST` (integer): packets per task run. Default 1.",
    ports: "no inputs, one output (agnostic)",
    handlers: &[
        HandlerDoc { name: "count", mode: HandlerMode::Read, text: "Packets emitted so far." },
        HandlerDoc { name: "active", mode: HandlerMode::ReadWrite, text: "Whether packets are emitted (boolean)." },
        HandlerDoc { name: "encap", mode: HandlerMode::Read, text: "Always `IP`." },
        HandlerDoc { name: "filename", mode: HandlerMode::Read, text: "The file name." },
        HandlerDoc { name: "filesize", mode: HandlerMode::Read, text: "The file's length in bytes, or `-`." },
        HandlerDoc { name: "filepos", mode: HandlerMode::Read, text: "Bytes of the file consumed so far." },
        HandlerDoc { name: "stop", mode: HandlerMode::Write, text: "Deactivates the element and asks the driver to stop." },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(FromIPSummaryDump::default()),
};

#[derive(Default)]
struct Values {
    ts: Option<Timestamp>,
    sec: Option<i64>,
    usec: Option<u32>,
    src: Option<[u8; 4]>,
    dst: Option<[u8; 4]>,
    sport: Option<u16>,
    dport: Option<u16>,
    len: Option<u32>,
    id: Option<u16>,
    proto: Option<u8>,
    ttl: Option<u8>,
    tos: Option<u8>,
    ecn: Option<u8>,
    frag: Option<char>,
    fragoff: Option<(u16, bool)>,
    seq: Option<u32>,
    ack: Option<u32>,
    flags: Option<u16>,
    win: Option<u16>,
    urp: Option<u16>,
    icmp_type: Option<u8>,
    icmp_code: Option<u8>,
    payload_len: Option<u32>,
    payload: Option<Vec<u8>>,
    count: Option<u32>,
    direction: Option<u8>,
    aggregate: Option<u32>,
}

fn parse_ts(s: &str) -> Option<Timestamp> {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (a, b) = s.split_once('.').unwrap_or((s, ""));
    let sec: i64 = a.parse().ok()?;
    if b.len() > 9 || !b.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let frac: u32 = if b.is_empty() {
        0
    } else {
        format!("{:0<9}", b).parse().ok()?
    };
    let t = Timestamp::from_sec_nsec(sec, frac);
    Some(if neg { Timestamp(-t.nsec()) } else { t })
}

fn parse_tcp_flags(s: &str) -> Option<u16> {
    if s == "." {
        return Some(0);
    }
    if let Ok(n) = s.parse::<u16>() {
        return Some(n);
    }
    let mut f = 0u16;
    for c in s.bytes() {
        let b = TCP_FLAGS_WORD
            .iter()
            .position(|x| *x == c.to_ascii_uppercase())?;
        f |= 1 << b;
    }
    Some(f)
}

/// Splits a data line into fields, keeping double-quoted strings whole.
fn split_line(line: &str) -> Vec<&str> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        let start = i;
        if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(b.len());
        } else {
            while i < b.len() && !b[i].is_ascii_whitespace() {
                i += 1;
            }
        }
        out.push(&line[start..i]);
    }
    out
}

fn ones_sum(data: &[u8]) -> u32 {
    let mut s = 0u32;
    let mut ch = data.chunks_exact(2);
    for c in &mut ch {
        s += ((c[0] as u32) << 8) | c[1] as u32;
    }
    if let [x] = ch.remainder() {
        s += (*x as u32) << 8;
    }
    s
}

fn fold(mut s: u32) -> u16 {
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

impl FromIPSummaryDump {
    fn parse_values(&self, toks: &[&str], fields: &[Field]) -> Values {
        let mut v = Values::default();
        for (f, t) in fields.iter().zip(toks.iter()) {
            let t = *t;
            if t == "-" {
                continue;
            }
            let ip = |s: &str| s.parse::<std::net::Ipv4Addr>().ok().map(|a| a.octets());
            match f {
                Field::Timestamp | Field::NTimestamp => v.ts = parse_ts(t),
                Field::TsSec => v.sec = t.parse().ok(),
                Field::TsUsec => v.usec = t.parse().ok(),
                Field::TsUsec1 => {
                    if let Ok(us) = t.parse::<i64>() {
                        v.ts = Some(Timestamp::from_nsec(us.saturating_mul(1000)));
                    }
                }
                Field::IpSrc => v.src = ip(t),
                Field::IpDst => v.dst = ip(t),
                Field::Sport => v.sport = t.parse().ok(),
                Field::Dport => v.dport = t.parse().ok(),
                Field::IpLen => v.len = t.parse().ok(),
                Field::IpId => v.id = t.parse().ok(),
                Field::IpProto => {
                    v.proto = match t {
                        "T" => Some(6),
                        "U" => Some(17),
                        "I" => Some(1),
                        _ => t.parse().ok(),
                    }
                }
                Field::IpTtl => v.ttl = t.parse().ok(),
                Field::IpTos => v.tos = t.parse().ok(),
                Field::IpEcn => v.ecn = super::ipsumdump::parse_ecn(t),
                Field::IpFrag => v.frag = t.chars().next(),
                Field::IpFragoff => {
                    let (n, mf) = match t.strip_suffix('+') {
                        Some(n) => (n, true),
                        None => (t, false),
                    };
                    v.fragoff = n
                        .parse::<u32>()
                        .ok()
                        .map(|x| (((x >> 3) & 0x1fff) as u16, mf));
                }
                Field::TcpSeq => v.seq = t.parse().ok(),
                Field::TcpAck => v.ack = t.parse().ok(),
                Field::TcpFlags => v.flags = parse_tcp_flags(t),
                Field::TcpWindow => v.win = t.parse().ok(),
                Field::TcpUrp => v.urp = t.parse().ok(),
                Field::IcmpType => v.icmp_type = t.parse().ok(),
                Field::IcmpCode => v.icmp_code = t.parse().ok(),
                Field::PayloadLen => v.payload_len = t.parse().ok(),
                Field::Payload => v.payload = Some(click_lang::args::unquote_bytes(t)),
                Field::Count => v.count = t.parse().ok(),
                Field::Link => v.direction = t.parse().ok(),
                Field::Direction => {
                    v.direction = match t {
                        ">" => Some(0),
                        "<" => Some(1),
                        _ => t.parse().ok(),
                    }
                }
                Field::Aggregate => v.aggregate = t.parse().ok(),
                Field::IpHl
                | Field::IpSum
                | Field::IpCaptureLen
                | Field::UdpLen
                | Field::WireLen => {}
            }
        }
        v
    }

    fn build(&self, v: &Values, cx: &Ctx) -> Packet {
        let proto = v.proto.unwrap_or(self.default_proto);
        let (off, mf) = match (v.fragoff, v.frag) {
            (Some(x), _) => x,
            (None, Some('F')) => (0, true),
            (None, Some('f')) => (1, false),
            _ => (0, false),
        };
        let first = off == 0;
        let th_len = if !first {
            0
        } else {
            match proto {
                6 => 20,
                17 => 8,
                1 => 8,
                _ => 0,
            }
        };
        let payload: &[u8] = v.payload.as_deref().unwrap_or(&[]);
        let plen = v.payload_len.unwrap_or(payload.len() as u32);
        let ip_len = v.len.unwrap_or(20 + th_len as u32 + plen).max(20);
        let data_len = 20 + th_len + payload.len();
        let mut b = vec![0u8; data_len];
        b[0] = 0x45;
        b[1] = v.tos.unwrap_or(0);
        if let Some(e) = v.ecn {
            b[1] = (b[1] & !3) | e;
        }
        b[2..4].copy_from_slice(&(ip_len.min(65535) as u16).to_be_bytes());
        b[4..6].copy_from_slice(&v.id.unwrap_or(0).to_be_bytes());
        let ff = (off & 0x1fff) | if mf { 0x2000 } else { 0 };
        b[6..8].copy_from_slice(&ff.to_be_bytes());
        b[8] = v.ttl.unwrap_or(64);
        b[9] = proto;
        b[12..16].copy_from_slice(&v.src.unwrap_or([0; 4]));
        b[16..20].copy_from_slice(&v.dst.unwrap_or([0; 4]));
        let tl = (ip_len as usize).saturating_sub(20);
        if th_len > 0 {
            let t = &mut b[20..20 + th_len];
            match proto {
                6 => {
                    t[0..2].copy_from_slice(&v.sport.unwrap_or(0).to_be_bytes());
                    t[2..4].copy_from_slice(&v.dport.unwrap_or(0).to_be_bytes());
                    t[4..8].copy_from_slice(&v.seq.unwrap_or(0).to_be_bytes());
                    t[8..12].copy_from_slice(&v.ack.unwrap_or(0).to_be_bytes());
                    let fl = v.flags.unwrap_or(0);
                    t[12] = 0x50 | ((fl >> 8) & 1) as u8;
                    t[13] = fl as u8;
                    t[14..16].copy_from_slice(&v.win.unwrap_or(0).to_be_bytes());
                    t[18..20].copy_from_slice(&v.urp.unwrap_or(0).to_be_bytes());
                }
                17 => {
                    t[0..2].copy_from_slice(&v.sport.unwrap_or(0).to_be_bytes());
                    t[2..4].copy_from_slice(&v.dport.unwrap_or(0).to_be_bytes());
                    t[4..6].copy_from_slice(&(tl.min(65535) as u16).to_be_bytes());
                }
                _ => {
                    t[0] = v.icmp_type.unwrap_or(0);
                    t[1] = v.icmp_code.unwrap_or(0);
                }
            }
        }
        b[20 + th_len..].copy_from_slice(payload);
        if self.checksum {
            let s = fold(ones_sum(&b[..20]));
            b[10..12].copy_from_slice(&s.to_be_bytes());
            // transport checksums only when the whole segment is present
            if th_len > 0 && data_len >= ip_len as usize {
                let seg = &b[20..ip_len as usize];
                let csum_at = match proto {
                    6 => Some(16),
                    17 => Some(6),
                    1 => Some(2),
                    _ => None,
                };
                if let Some(at) = csum_at {
                    let mut s = ones_sum(seg);
                    if proto != 1 {
                        s += ones_sum(&b[12..20]) + proto as u32 + seg.len() as u32;
                    }
                    let mut c = fold(s);
                    if proto == 17 && c == 0 {
                        c = 0xffff;
                    }
                    b[20 + at..22 + at].copy_from_slice(&c.to_be_bytes());
                }
            }
        }
        let mut p = cx.pool().make(DEFAULT_HEADROOM, &b, 0);
        p.set_network_header(0, 20);
        // as Click: the destination annotation is the header's destination
        p.anno_mut()
            .set_dst_ip(core::net::Ipv4Addr::new(b[16], b[17], b[18], b[19]));
        let ts = v.ts.or_else(|| {
            v.sec
                .map(|s| Timestamp::from_sec_usec(s, v.usec.unwrap_or(0)))
        });
        if let Some(ts) = ts {
            p.set_timestamp(ts);
        }
        set_extra_length(&mut p, (ip_len as usize).saturating_sub(data_len) as u32);
        if let Some(d) = v.direction {
            p.anno_mut().set_paint(d);
        }
        if let Some(a) = v.aggregate {
            p.anno_mut().set_u32_at(AGGREGATE_ANNO_OFFSET, a);
        }
        p
    }

    /// Reads lines until one yields packets (into `pending`) or the file ends.
    fn fill(&mut self, cx: &Ctx) {
        let mut line = String::new();
        while self.pending.is_empty() && !self.eof {
            let Some(r) = self.reader.as_mut() else {
                self.eof = true;
                return;
            };
            line.clear();
            match r.read_line(&mut line) {
                Ok(0) => {
                    self.eof = true;
                    return;
                }
                Ok(n) => {
                    self.pos += n as u64;
                    self.lineno += 1;
                }
                Err(e) => {
                    self.eof = true;
                    cx.error_line(&format!(
                        "{}: {}:{}: {}",
                        cx.declaration(),
                        self.filename,
                        self.lineno + 1,
                        io_error_text(&e)
                    ));
                    return;
                }
            }
            let l = line.trim_end_matches(['\n', '\r']);
            if l.trim().is_empty() || l.starts_with('#') {
                continue;
            }
            if let Some(rest) = l.strip_prefix('!') {
                if let Some(d) = rest.strip_prefix("data") {
                    match parse_fields(d) {
                        Ok(f) => self.fields = Some(f),
                        Err(e) => {
                            cx.error_line(&format!(
                                "{}: {}:{}: {}",
                                cx.declaration(),
                                self.filename,
                                self.lineno,
                                e
                            ));
                        }
                    }
                } else if let Some(p) = rest.strip_prefix("proto") {
                    // `!proto P`: the protocol of packets whose lines do
                    // not give one.
                    let p = p.trim();
                    let v = match p {
                        "T" => Some(6),
                        "U" => Some(17),
                        "I" => Some(1),
                        _ => p.parse::<u8>().ok(),
                    };
                    if let Some(v) = v {
                        self.default_proto = v;
                    }
                } else if rest.starts_with("binary") {
                    cx.error_line(&format!(
                        "{}: {}:{}: binary summary dumps are not supported",
                        cx.declaration(),
                        self.filename,
                        self.lineno
                    ));
                    self.eof = true;
                }
                continue;
            }
            let fields = match (&self.fields, &self.default_fields) {
                (Some(f), _) | (None, Some(f)) => f.clone(),
                (None, None) => {
                    cx.error_line(&format!(
                        "{}: {}: no '!data' line and no CONTENTS; stopping",
                        cx.declaration(),
                        self.filename
                    ));
                    self.eof = true;
                    return;
                }
            };
            let toks = split_line(l);
            let v = self.parse_values(&toks, &fields);
            let n = if self.multipacket {
                v.count.unwrap_or(1).max(1)
            } else {
                1
            };
            let p = self.build(&v, cx);
            for _ in 1..n {
                self.pending.push(p.clone_in(cx.pool()));
            }
            self.pending.push(p);
        }
    }

    fn next_packet(&mut self, cx: &Ctx) -> Option<Packet> {
        if self.pending.is_empty() {
            self.fill(cx);
        }
        let p = if self.pending.is_empty() {
            None
        } else {
            Some(self.pending.remove(0))
        };
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
        if self.pending.is_empty() {
            self.fill(cx);
        }
        let ts = self.pending.first()?.timestamp();
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
        let contents = a.read::<click_lang::RawString>("CONTENTS")?;
        let contents = match a.read::<click_lang::RawString>("FIELDS")? {
            Some(f) => Some(f),
            None => contents,
        };
        let _ = a.read::<f64>("SAMPLE")?;
        a.complete()?;
        if burst == 0 {
            return Err("BURST must be positive".into());
        }
        let default_fields = match contents {
            Some(c) => Some(parse_fields(&c.0)?),
            None => None,
        };
        if filename.is_none() && data.is_none() {
            return Err("missing mandatory FILENAME argument".into());
        }
        self.filename = filename.unwrap_or_default();
        self.data = data;
        self.timing = timing;
        self.stop = stop;
        self.active = active;
        self.zero = zero;
        self.checksum = checksum;
        self.default_proto = proto;
        self.multipacket = multipacket;
        self.burst = burst;
        self.default_fields = default_fields;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let r: Box<dyn BufRead> = if let Some(d) = &self.data {
            let mut d = d.clone().into_bytes();
            if !d.ends_with(b"\n") {
                d.push(b'\n');
            }
            Box::new(std::io::Cursor::new(d))
        } else if self.filename == "-" {
            Box::new(BufReader::new(std::io::stdin()))
        } else {
            let f = std::fs::File::open(&self.filename)
                .map_err(|e| format!("{}: {}", self.filename, io_error_text(&e)))?;
            Box::new(BufReader::with_capacity(1 << 16, f))
        };
        self.reader = Some(r);
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
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        Some(match name {
            "active" => match click_lang::parse_bool(value.trim()) {
                Ok(b) => {
                    self.active = b;
                    if let Some(sig) = self.signal {
                        cx.set_signal(sig, b && !(self.eof && self.pending.is_empty()));
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
        self.pending.clear();
    }

    element_any!();
}
