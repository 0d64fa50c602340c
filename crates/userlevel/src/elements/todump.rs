//! ToDump: writes packets to a pcap file.

use super::{encap_name, extra_length, io_error_text, parse_encap};
use click::element_any;
use click::prelude::*;
use click_pcap::{linktype, PcapWriter, TsPrecision, WriterOptions};
use std::io::{BufWriter, Write};

/// `ToDump(FILENAME [, KEYWORDS])`.
pub struct ToDump {
    filename: String,
    snaplen: u32,
    encap: u32,
    use_encap_from: Vec<String>,
    extra_length: bool,
    unbuffered: bool,
    nano: bool,
    writer: Option<PcapWriter<Box<dyn Write>>>,
    count: u64,
    failed: bool,
    signal: Option<UpstreamSignal>,
}

impl Default for ToDump {
    fn default() -> Self {
        ToDump {
            filename: String::new(),
            snaplen: 2000,
            encap: linktype::EN10MB,
            use_encap_from: Vec::new(),
            extra_length: true,
            unbuffered: false,
            nano: false,
            writer: None,
            count: 0,
            failed: false,
            signal: None,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "ToDump",
    port_count: "1/0-1",
    processing: "a/h",
    group: "userlevel",
    signature: "ToDump(FILENAME [, KEYWORDS])",
    summary: "Writes packets to a tcpdump (pcap) file.",
    description: "Writes incoming packets to FILENAME in classic pcap format, readable by \
tcpdump and FromDump, using each packet's timestamp annotation (the current time when it is \
zero). `-` means standard output. In push context packets are written as they arrive; in pull \
context a task pulls them. If the element has an output, written packets leave on it; otherwise \
they are dropped. The file is flushed when the router stops.\n\nKeyword arguments:\n\n\
- `SNAPLEN` (integer): longest packet prefix written. Default 2000; 0 means no limit.\n\
- `ENCAP` (word): link type written in the header: `ETHER` (default), `IP`, `SLL`, `NULL`, ... \
With `IP`, packets with an IP header annotation are written from the IP header on.\n\
- `USE_ENCAP_FROM` (element names): take ENCAP from the first of these elements' `encap` handler \
(FromDump, FromIPSummaryDump).\n\
- `EXTRA_LENGTH` (boolean): add the extra-length annotation to the recorded wire length. Default true.\n\
- `UNBUFFERED` (boolean): flush after every packet. Default false.\n\
- `NANO` (boolean): write nanosecond timestamps (magic 0xa1b23c4d). Default false.",
    ports: "one input (agnostic); optional push output for written packets",
    handlers: &[
        HandlerDoc { name: "count", mode: HandlerMode::Read, text: "Packets written so far." },
        HandlerDoc { name: "filename", mode: HandlerMode::Read, text: "The file name." },
        HandlerDoc { name: "encap", mode: HandlerMode::Read, text: "The link type written (Click's name)." },
        HandlerDoc { name: "reset_counts", mode: HandlerMode::Write, text: "Resets `count` to zero." },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(ToDump::default()),
};

impl ToDump {
    fn write(&mut self, p: &Packet, cx: &Ctx) {
        if self.failed {
            return;
        }
        let Some(w) = self.writer.as_mut() else {
            return;
        };
        let data: &[u8] = if linktype::is_raw_ip(self.encap) {
            p.network_header().unwrap_or(p.data())
        } else {
            p.data()
        };
        let mut ts = p.timestamp();
        if ts.is_zero() {
            ts = cx.now();
        }
        let mut orig = data.len() as u64;
        if self.extra_length {
            orig += extra_length(p) as u64;
        }
        let orig = orig.min(u32::MAX as u64) as u32;
        let r = w
            .write_packet(ts.sec(), ts.subsec_nsec(), orig, data)
            .and_then(|_| if self.unbuffered { w.flush() } else { Ok(()) });
        match r {
            Ok(()) => self.count += 1,
            Err(e) => {
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

    fn emit(&mut self, p: Packet, cx: &Ctx) {
        self.write(&p, cx);
        if cx.noutputs() > 0 {
            cx.push(0, p);
        }
    }
}

impl Element for ToDump {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let filename: String = a.read_mp("FILENAME")?;
        let snaplen = a.read_p::<u32>("SNAPLEN")?.unwrap_or(2000);
        let encap_s = a.read_p::<String>("ENCAP")?;
        let use_from = a.read::<String>("USE_ENCAP_FROM")?;
        let extra = a.read::<bool>("EXTRA_LENGTH")?.unwrap_or(true);
        let unbuffered = a.read::<bool>("UNBUFFERED")?.unwrap_or(false);
        let nano = a.read::<bool>("NANO")?.unwrap_or(false);
        a.complete()?;
        let encap = match &encap_s {
            None => linktype::EN10MB,
            Some(s) => parse_encap(s).ok_or_else(|| format!("bad encapsulation type '{s}'"))?,
        };
        if encap_s.is_some() && use_from.is_some() {
            return Err("specify at most one of 'ENCAP' and 'USE_ENCAP_FROM'".into());
        }
        self.filename = filename;
        self.snaplen = snaplen;
        self.encap = encap;
        self.use_encap_from = use_from
            .map(|s| click_lang::split_words(&s))
            .unwrap_or_default();
        self.extra_length = extra;
        self.unbuffered = unbuffered;
        self.nano = nano;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        if !self.use_encap_from.is_empty() {
            let mut found = None;
            for e in &self.use_encap_from {
                match cx.call_read(&format!("{e}.encap")) {
                    Ok(v) => {
                        let v = v.trim().to_string();
                        match found {
                            None => found = Some(v),
                            Some(ref f) if *f != v => {
                                return Err(
                                    "'USE_ENCAP_FROM' elements have different encapsulation types"
                                        .into(),
                                )
                            }
                            _ => {}
                        }
                    }
                    Err(_) => {
                        return Err(format!(
                            "'USE_ENCAP_FROM' element '{e}' has no 'encap' handler"
                        ))
                    }
                }
            }
            if let Some(f) = found {
                self.encap =
                    parse_encap(&f).ok_or_else(|| format!("bad encapsulation type '{f}'"))?;
            }
        }
        let out: Box<dyn Write> = if self.filename == "-" {
            Box::new(BufWriter::new(std::io::stdout()))
        } else {
            match std::fs::File::create(&self.filename) {
                Ok(f) => Box::new(BufWriter::with_capacity(1 << 16, f)),
                Err(e) => return Err(format!("{}: {}", self.filename, io_error_text(&e))),
            }
        };
        let opts = WriterOptions {
            linktype: self.encap,
            snaplen: self.snaplen,
            precision: if self.nano {
                TsPrecision::Nano
            } else {
                TsPrecision::Micro
            },
            big_endian: false,
        };
        let w = PcapWriter::with_options(out, opts)
            .map_err(|e| format!("{}: {}", self.filename, io_error_text(&e)))?;
        self.writer = Some(w);
        if cx.input_is_pull(0) {
            cx.schedule_task();
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        self.emit(p, cx);
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        if cx.noutputs() > 0 {
            for p in &batch {
                self.write(p, cx);
            }
            cx.push_batch(0, batch);
        } else {
            for p in batch {
                self.write(&p, cx);
            }
        }
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        let mut any = false;
        for _ in 0..cx.max_batch().max(1) {
            match cx.pull(0) {
                Some(p) => {
                    any = true;
                    self.emit(p, cx);
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
            "encap" => encap_name(self.encap).to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, _value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "reset_counts" => {
                self.count = 0;
                Some(Ok(()))
            }
            _ => None,
        }
    }

    fn cleanup(&mut self, cx: &Ctx) {
        if let Some(mut w) = self.writer.take() {
            if let Err(e) = w.flush() {
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
