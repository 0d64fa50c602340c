//! ToIPSummaryDump: writes one text line per packet.

use super::io_error_text;
use super::ipsumdump::{parse_fields, summary_line, Field};
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
    file: Option<BufWriter<std::fs::File>>,
    to_stdout: bool,
    line: String,
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
            file: None,
            to_stdout: false,
            line: String::new(),
            count: 0,
            failed: false,
            signal: None,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "ToIPSummaryDump",
    port_count: "1/0",
    processing: "a/h",
    group: "userlevel",
    signature: "ToIPSummaryDump(FILENAME [, CONTENTS, KEYWORDS])",
    summary: "Writes packet summaries in ASCII (Click's IP summary dump format).",
    description: "Writes one line per packet to FILENAME (`-` means standard output), after a \
header: `!IPSummaryDump 1.3`, an optional `!creator` line, and a `!data` line naming the fields. \
Fields are separated by single spaces; a field the packet lacks prints as `-`. IP fields need the \
IP header annotation (set by CheckIPHeader, MarkIPHeader, or FromDump with FORCE_IP). In pull \
context a task pulls packets. Packets are dropped after being written.\n\n\
Field names (Click's spellings; synonyms in parentheses): `timestamp` (`ts`), `ts_sec` (`sec`), \
`ts_usec` (`usec`), `ts_usec1`, `ntimestamp`, `ip_src` (`src`), `ip_dst` (`dst`), `sport`, \
`dport`, `ip_len` (`len`, `length`), `ip_id` (`id`), `ip_proto` (`proto`: `T`, `U`, `I` or a \
number), `ip_ttl`, `ip_tos`, `ip_ecn` (`no`, `ect1`, `ect2` or `ce`), `ip_frag` (`F` first fragment, `f` later fragment, `.` none), \
`ip_fragoff` (bytes, `+` if more fragments), `ip_hl`, `ip_sum`, `ip_capture_len`, `tcp_seq`, \
`tcp_ack`, `tcp_flags` (letters of `FSRPAUECN`, `.` for none), `tcp_window`, `tcp_urp`, \
`udp_len`, `icmp_type`, `icmp_code`, `payload_len`, `payload` (quoted), `count`, `direction` \
(`>` or `<` from the paint annotation), `link` or `paint` (the paint annotation as a number), `aggregate`, `wire_len`.\n\nKeyword arguments:\n\n\
- `CONTENTS` (words): the fields, in order. Default `timestamp ip_src`. `FIELDS` (Click's \
current name) and `DATA` (deprecated) are synonyms.\n\
- `BANNER` (string): written as a `!creator` line.\n\
- `VERBOSE` (boolean): also write `!host` and `!runtime` lines. Default false.\n\
- `HEADER` (boolean): write the header lines. Default true.\n\
- `UNBUFFERED` (boolean): flush after every line. Default false.\n\
- `BINARY`, `MULTIPACKET`, `BAD_PACKETS`, `CAREFUL_TRUNC`: `BINARY true` is not supported; \
the others are accepted.",
    ports: "one input (agnostic), no outputs",
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
        if self.to_stdout {
            cx.stdout(text);
            return;
        }
        if self.failed {
            return;
        }
        if let Some(f) = self.file.as_mut() {
            let r = f.write_all(text.as_bytes()).and_then(|_| {
                if self.unbuffered {
                    f.flush()
                } else {
                    Ok(())
                }
            });
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

    fn write_packet(&mut self, p: &Packet, cx: &Ctx) {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        summary_line(p, &self.fields, &mut line);
        line.push('\n');
        self.emit(&line, cx);
        self.line = line;
        self.count += 1;
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
        let _ = a.read::<bool>("MULTIPACKET")?;
        let _ = a.read::<bool>("BAD_PACKETS")?;
        let _ = a.read::<bool>("CAREFUL_TRUNC")?;
        let _ = a.read::<bool>("EXTRA_LENGTH")?;
        // As in Click, further positional arguments are more contents.
        let extra = a.rest();
        a.complete()?;
        if binary {
            return Err("BINARY: binary summary dumps are not supported".into());
        }
        let mut words: Vec<String> = contents.into_iter().map(|c| c.0).collect();
        words.extend(extra);
        let text = if words.is_empty() {
            "timestamp ip_src".to_string()
        } else {
            words.join(" ")
        };
        let fields = parse_fields(&text)?;
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
            let mut h = String::from("!IPSummaryDump 1.3\n");
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
                h.push_str(f.name());
            }
            h.push('\n');
            self.emit(&h, cx);
        }
        if cx.input_is_pull(0) {
            cx.schedule_task();
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        self.write_packet(&p, cx);
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        let mut any = false;
        for _ in 0..cx.max_batch().max(1) {
            match cx.pull(0) {
                Some(p) => {
                    any = true;
                    self.write_packet(&p, cx);
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
