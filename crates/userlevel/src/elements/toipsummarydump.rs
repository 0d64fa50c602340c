//! ToIPSummaryDump: writes one text line per packet.

use super::ipsumdump::{
    parse_fields, summarize, BType, Field, WriteOpts, EXTRA_PACKETS_ANNO_OFFSET, MAJOR_VERSION,
    MINOR_VERSION,
};
use super::{extra_length, io_error_text, set_extra_length};
use click::element_any;
use click::prelude::*;
use std::io::{BufWriter, Write};

/// `ToIPSummaryDump(FILENAME [, CONTENTS, KEYWORDS])`.
pub struct ToIPSummaryDump {
    filename: String,
    fields: Vec<Field>,
    banner: Option<String>,
    verbose: bool,
    header: bool,
    unbuffered: bool,
    binary: bool,
    multipacket: bool,
    opts: WriteOpts,
    file: Option<BufWriter<std::fs::File>>,
    to_stdout: bool,
    line: String,
    record: Vec<u8>,
    count: u64,
    failed: bool,
    signal: Option<UpstreamSignal>,
}

impl Default for ToIPSummaryDump {
    fn default() -> Self {
        ToIPSummaryDump {
            filename: String::new(),
            fields: vec![Field::Timestamp, Field::IpSrc],
            banner: None,
            verbose: false,
            header: true,
            unbuffered: false,
            binary: false,
            multipacket: false,
            opts: WriteOpts::default(),
            file: None,
            to_stdout: false,
            line: String::new(),
            record: Vec::new(),
            count: 0,
            failed: false,
            signal: None,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "ToIPSummaryDump",
    port_count: "1/0-1",
    processing: "a/h",
    group: "userlevel",
    signature: "ToIPSummaryDump(FILENAME [, CONTENTS, KEYWORDS])",
    summary: "Writes packet summaries in ASCII (Click's IP summary dump format).",
    description: "Writes one line per packet to FILENAME (`-` means standard output), after a \
header: `!IPSummaryDump 1.3`, an optional `!creator` line, and a `!data` line naming the fields. \
Fields are separated by single spaces; a field the packet lacks prints as `-`. IP fields need the \
IP header annotation (set by CheckIPHeader, MarkIPHeader, or FromDump with FORCE_IP); transport \
fields need the first fragment's transport header. In pull context a task pulls packets. Packets \
are dropped after being written.\n\n\
Fields (Click's names; synonyms in parentheses; a name without `_` is also tried as `ip_NAME`, so \
`src`, `len`, `proto`, `opt`, ... work):\n\n\
- Annotations: `timestamp` (`ts`, `utimestamp`), `ntimestamp` (full precision; written as \
`timestamp` in the `!data` line of text dumps), `ts_sec` (`sec`), `ts_usec` (`usec`), `ts_usec1` \
(`usec1`: microseconds since the epoch), `first_timestamp` (`first_ts`, `first_utimestamp`), \
`first_ntimestamp`, `count` (`pkt_count`, `packet_count`: 1 + the extra-packets annotation), \
`direction` (`>` or `<` from the paint annotation, else its number), `link` and `paint` (the \
paint annotation), `aggregate` (`agg`), `wire_len` (`wire_length`: the packet's length).\n\
- Ethernet, when the packet has a MAC header just before its network header (or its data starts \
14 bytes before the network header): `eth_src` (`ether_src`), `eth_dst` (`ether_dst`) as \
`00-1A-2B-3C-4D-5E`, `eth_type` (`ether_type`) as four hex digits (`0800`).\n\
- IP: `ip_src`, `ip_dst`, `ip_len` (`length`), `ip_id`, `ip_proto` (`ip_p`: `T`, `U`, `I` or a \
number), `ip_ttl`, `ip_tos`, `ip_dscp` (the TOS byte's upper six bits), `ip_ecn` (`no`, `ect1`, \
`ect2`, `ce`), `ip_frag` (`F` first fragment, `f` later fragment, `!` unfragmented with DF, `.` \
none), `ip_fragoff` (the offset in bytes, then `+` if more fragments and `!` if DF), `ip_hl` \
(bytes), `ip_sum`, `ip_capture_len` (IP bytes captured), `ip_opt` (the IP options in Click's text \
form: `rr{1.2.3.4,5.6.7.8}+2` (record route; `+N` free slots), `ssrr{A^B,C}` and `lsrr{...}` \
(source routes, `^` before the next hop), `ts{...}`, `ts.ip{A=T,...}`, `ts.preip{...}` (timestamps, \
`!` for a set top bit, `++N` overflow), `NUM=B:B` for other options, joined by `;`; padding is not \
shown; `.` for none, `?` if malformed).\n\
- Ports: `sport` (`src_port`), `dport` (`dst_port`), for TCP, UDP, UDP-Lite and DCCP.\n\
- TCP: `tcp_seq` (`tcp_seqno`), `tcp_ack` (`tcp_ackno`), `tcp_flags` (letters of `FSRPAUECN`, `.` \
for none), `tcp_off` (header length in bytes), `tcp_window` (`tcp_win`), `tcp_urp`, `tcp_opt` (the \
options: `mss1460`, `wscale7`, `sackok`, `sack1-2`, `ts1:2`, `NUM=B:B`, joined by `;`; `.` for \
none, `?` if malformed), `tcp_ntopt` (the same without timestamps; a header whose only option is \
a padded timestamp counts as none), `tcp_sack` (SACK options only).\n\
- UDP: `udp_len`.\n\
- ICMP: `icmp_type`, `icmp_code`, `icmp_type_name` and `icmp_code_name` (Click's names: `echo`, \
`echo-reply`, `unreachable`, `timeexceeded`, ...; codes such as `needfrag`, `port`, `transit`; a \
number when there is no name), `icmp_flowid` and `icmp_seq` (identifier and sequence number of \
echo, timestamp and information messages), `icmp_nextmtu` (of a needfrag unreachable).\n\
- Payload: `payload_len` (`payload_length`), `payload` (quoted), `payload_md5` (Click's 22-character \
text digest), `payload_md5_hex` (32 hex digits).\n\n\
With `BINARY true` the `!data` line is followed by `!binary`, and each packet is a record: a 4-byte \
big-endian length (including itself), then the fields: 1, 2 or 4 bytes big-endian for numbers \
(`ip_src`/`ip_dst` in network order), 6 for Ethernet addresses, 8 for timestamps (`timestamp`: \
seconds then microseconds; `ntimestamp`: nanoseconds then seconds; `ts_usec1`: low then high \
word), 16 for MD5 digests, and for options a length byte then the option bytes. `payload` cannot \
be written in binary. `!bad` lines in binary dumps are records with the top length bit set.\n\n\
Keyword arguments:\n\n\
- `CONTENTS` (words): the fields, in order. Default `timestamp ip_src`. `FIELDS` (Click's \
current name) and `DATA` (deprecated) are synonyms.\n\
- `BANNER` (string): written as a `!creator` line.\n\
- `VERBOSE` (boolean): also write `!host` and `!runtime` lines. Default false.\n\
- `HEADER` (boolean): write the header lines. Default true.\n\
- `UNBUFFERED` (boolean): flush after every line. Default false.\n\
- `BINARY` (boolean): write binary records. Default false.\n\
- `BAD_PACKETS` (boolean): before the line of a bad packet (bad IP header, truncated or fragmented \
transport header a field needed, missing Ethernet header), write a `!bad` line saying why. Default \
false.\n\
- `CAREFUL_TRUNC` (boolean): with BAD_PACKETS, a capture shorter than its IP length is bad \
(`!bad truncated IP missing N`). Default true.\n\
- `EXTRA_LENGTH` (boolean): `ip_len` and `payload_len` include the extra-length annotation where \
it counts. Default true.\n\
- `MULTIPACKET` (boolean): a packet whose `count` is N writes N lines, dividing its length and \
spacing timestamps from its first timestamp. Default false.",
    ports: "one input (agnostic); an optional push output, where each packet goes on after its line is written",
    handlers: &[
        HandlerDoc {
            name: "count",
            mode: HandlerMode::Read,
            text: "Lines written so far.",
        },
        HandlerDoc {
            name: "filename",
            mode: HandlerMode::Read,
            text: "The file name.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: true,
    make: || Box::new(ToIPSummaryDump::default()),
};

impl ToIPSummaryDump {
    fn emit(&mut self, text: &str, cx: &Ctx) {
        self.emit_bytes(text.as_bytes(), cx);
    }

    fn emit_bytes(&mut self, b: &[u8], cx: &Ctx) {
        if self.to_stdout {
            if self.binary {
                use std::io::Write as _;
                let mut o = std::io::stdout().lock();
                let _ = o.write_all(b);
                if self.unbuffered {
                    let _ = o.flush();
                }
            } else {
                cx.stdout(&String::from_utf8_lossy(b));
            }
            return;
        }
        if self.failed {
            return;
        }
        if let Some(f) = self.file.as_mut() {
            let r = f
                .write_all(b)
                .and_then(|_| if self.unbuffered { f.flush() } else { Ok(()) });
            if let Err(e) = r {
                self.failed = true;
                cx.error_line(&format!(
                    "{}: {}: {}",
                    cx.declaration(),
                    self.filename,
                    io_error_text(&e)
                ));
            }
        }
    }

    fn write_one(&mut self, p: &Packet, cx: &Ctx) {
        if self.binary {
            let mut rec = std::mem::take(&mut self.record);
            rec.clear();
            let bad = summarize(p, &self.fields, &self.opts, None, Some(&mut rec));
            if let Some(b) = &bad {
                let mut m = ((b.len() as u32) | 0x8000_0000).to_be_bytes().to_vec();
                m.extend_from_slice(b.as_bytes());
                self.emit_bytes(&m, cx);
            }
            self.emit_bytes(&rec, cx);
            self.record = rec;
        } else {
            let mut line = std::mem::take(&mut self.line);
            line.clear();
            let bad = summarize(p, &self.fields, &self.opts, Some(&mut line), None);
            if let Some(b) = &bad {
                self.emit(b, cx);
            }
            self.emit(&line, cx);
            self.line = line;
        }
        self.count += 1;
    }

    /// Click's `write_packet`: with MULTIPACKET, a packet standing for N
    /// writes N lines.
    /// Writes the packet's line(s) and passes it on out the output, if
    /// there is one (Click's `checked_output_push`).
    fn write_packet(&mut self, p: Packet, cx: &Ctx) {
        let p = self.write_lines(p, cx);
        if cx.noutputs() > 0 {
            cx.push(0, p);
        }
    }

    fn write_lines(&mut self, mut p: Packet, cx: &Ctx) -> Packet {
        let extra_packets = p.anno().u32_at(EXTRA_PACKETS_ANNO_OFFSET);
        if !self.multipacket || extra_packets == 0 {
            self.write_one(&p, cx);
            return p;
        }
        let count = extra_packets as u64 + 1;
        let len = p.len() as u64;
        let mut total = len
            + if self.opts.extra_length {
                extra_length(&p) as u64
            } else {
                0
            };
        total = total.max(count * len);
        let (end_ts, delta) = super::ipsumdump::multipacket_times(&mut p, count);
        p.anno_mut().set_u32_at(EXTRA_PACKETS_ANNO_OFFSET, 0);
        for i in (1..=count).rev() {
            let l = total / i;
            set_extra_length(&mut p, (l - len).min(u32::MAX as u64) as u32);
            total -= l;
            self.write_one(&p, cx);
            let t = if i == 1 {
                end_ts
            } else {
                p.timestamp().add_nsec(delta)
            };
            p.set_timestamp(t);
        }
        p
    }
}

impl Element for ToIPSummaryDump {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let filename: String = a.read_mp("FILENAME")?;
        let mut contents = a.read_all::<click_lang::RawString>("CONTENTS")?;
        // Click's current name for CONTENTS, and its deprecated one
        contents.extend(a.read_all::<click_lang::RawString>("FIELDS")?);
        contents.extend(a.read_all::<click_lang::RawString>("DATA")?);
        let verbose = a.read::<bool>("VERBOSE")?.unwrap_or(false);
        let banner = a.read::<String>("BANNER")?;
        let header = a.read::<bool>("HEADER")?.unwrap_or(true);
        let unbuffered = a.read::<bool>("UNBUFFERED")?.unwrap_or(false);
        let binary = a.read::<bool>("BINARY")?.unwrap_or(false);
        let multipacket = a.read::<bool>("MULTIPACKET")?.unwrap_or(false);
        let bad_packets = a.read::<bool>("BAD_PACKETS")?.unwrap_or(false);
        let careful_trunc = a.read::<bool>("CAREFUL_TRUNC")?.unwrap_or(true);
        let extra_length = a.read::<bool>("EXTRA_LENGTH")?.unwrap_or(true);
        // As in Click, further positional arguments are more contents.
        let extra = a.rest();
        a.complete()?;
        let mut words: Vec<String> = contents.into_iter().map(|c| c.0).collect();
        words.extend(extra);
        let text = if words.is_empty() {
            "timestamp ip_src".to_string()
        } else {
            words.join(" ")
        };
        let fields = parse_fields(&text)?;
        if binary {
            let bad: Vec<String> = fields
                .iter()
                .filter(|f| f.btype() == BType::NotAllowed)
                .map(|f| format!("cannot use field {} with BINARY", f.name()))
                .collect();
            if !bad.is_empty() {
                return Err(bad.join("\n"));
            }
        }
        self.binary = binary;
        self.multipacket = multipacket;
        self.opts = WriteOpts {
            bad_packets,
            careful_trunc,
            extra_length,
        };
        self.filename = filename;
        self.fields = fields;
        self.verbose = verbose;
        self.banner = banner;
        self.header = header;
        self.unbuffered = unbuffered;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        if self.filename == "-" {
            self.to_stdout = true;
        } else {
            let f = std::fs::File::create(&self.filename)
                .map_err(|e| format!("{}: {}", self.filename, io_error_text(&e)))?;
            self.file = Some(BufWriter::with_capacity(1 << 16, f));
        }
        if self.header {
            let mut h = format!("!IPSummaryDump {MAJOR_VERSION}.{MINOR_VERSION}\n");
            if let Some(b) = &self.banner {
                h.push_str(&format!("!creator {}\n", click_lang::args::quote(b)));
            }
            if self.verbose {
                if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
                    h.push_str(&format!("!host {}\n", host.trim()));
                }
                h.push_str(&format!("!runtime {}\n", cx.now()));
            }
            h.push_str("!data");
            for f in &self.fields {
                h.push(' ');
                // Click names ntimestamp "timestamp" in text dumps (both
                // read back at full precision)
                h.push_str(if *f == Field::NTimestamp && !self.binary {
                    "timestamp"
                } else {
                    f.name()
                });
            }
            h.push('\n');
            if self.binary {
                h.push_str("!binary\n");
            }
            self.emit(&h, cx);
        }
        if cx.input_is_pull(0) {
            cx.schedule_task();
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        self.write_packet(p, cx);
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        let mut any = false;
        for _ in 0..cx.max_batch().max(1) {
            match cx.pull(0) {
                Some(p) => {
                    any = true;
                    self.write_packet(p, cx);
                }
                None => break,
            }
        }
        if any {
            return true;
        }
        let sig = self
            .signal
            .get_or_insert_with(|| cx.upstream_signal(0))
            .clone();
        cx.signal_active(&sig)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "count" => self.count.to_string(),
            "filename" => self.filename.clone(),
            _ => return None,
        }))
    }

    fn cleanup(&mut self, cx: &Ctx) {
        if let Some(mut f) = self.file.take() {
            if let Err(e) = f.flush() {
                if !self.failed {
                    cx.error_line(&format!(
                        "{}: {}: {}",
                        cx.declaration(),
                        self.filename,
                        io_error_text(&e)
                    ));
                }
            }
        }
    }

    element_any!();
}
