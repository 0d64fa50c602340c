//! FromDump: reads packets from a pcap or pcapng file.

use super::{encap_name, io_error_text, set_extra_length};
use click::element_any;
use click::prelude::*;
use click_lang::args::Seconds;
use click_pcap::{linktype, PcapReader};
use click_wire::{ethertype, EthernetFrame, Ipv4Packet, VlanHeader};
use std::fs::File;

const SAMPLING_SHIFT: u32 = 28;
const TIMER_TIMING: u32 = 0;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum EndKind {
    Absolute,
    AfterFirstInFile,
    Interval,
}

/// `FromDump(FILENAME [, KEYWORDS])`.
pub struct FromDump {
    filename: String,
    timing: bool,
    stop: bool,
    active: bool,
    force_ip: bool,
    burst: usize,
    sampling_prob: u32,
    start: Option<(i64, bool)>,
    end: Option<(i64, EndKind)>,

    reader: Option<PcapReader<File>>,
    linktype: u32,
    next: Option<Packet>,
    eof: bool,
    count: u64,
    time_offset: i64,
    have_times: bool,
    first_out: Option<i64>,
    rng: u64,
    stopped_driver: bool,
}

impl Default for FromDump {
    fn default() -> Self {
        FromDump {
            filename: String::new(),
            timing: false,
            stop: false,
            active: true,
            force_ip: false,
            burst: 1,
            sampling_prob: 1 << SAMPLING_SHIFT,
            start: None,
            end: None,
            reader: None,
            linktype: linktype::EN10MB,
            next: None,
            eof: false,
            count: 0,
            time_offset: 0,
            have_times: false,
            first_out: None,
            rng: 0x9e37_79b9_7f4a_7c15,
            stopped_driver: false,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "FromDump",
    port_count: "0/1-2",
    processing: "a/ah",
    group: "userlevel",
    signature: "FromDump(FILENAME [, KEYWORDS])",
    summary: "Reads packets from a tcpdump (pcap or pcapng) file.",
    description: "Reads packets from FILENAME, a file written by `tcpdump -w`, ToDump, or any \
pcap/pcapng writer (microsecond or nanosecond, either byte order; pcapng with several sections and \
interfaces). Sets each packet's timestamp annotation to its capture time and its extra-length \
annotation to the bytes the capture left out. For raw-IP link types it sets the IP header \
annotation; for Linux cooked captures, the packet type annotation. In push context a task emits \
packets; in pull context they are returned on request. A truncated or corrupt file stops the \
reading with one error message.\n\nKeyword arguments:\n\n\
- `STOP` (boolean): when the file is exhausted, ask the driver to stop. Default false.\n\
- `ACTIVE` (boolean): if false, emit nothing until the `active` handler is written. Default true.\n\
- `TIMING` (boolean): emit packets spaced as their timestamps (relative to the first). Default false.\n\
- `FORCE_IP` (boolean): emit only IP packets, with the IP header annotation set; non-IP packets go \
to output 1 if it exists, else are dropped. Default false (true for raw-IP files).\n\
- `SAMPLE` (real 0..1): emit each packet with this probability. Default 1.\n\
- `START`, `END` (timestamps): skip packets before START; stop at the first packet at or after END.\n\
- `START_AFTER`, `END_AFTER` (time): the same, relative to the first packet in the file.\n\
- `INTERVAL` (time): stop INTERVAL after the first packet emitted.\n\
- `BURST` (integer): packets per task run. Default 1.\n\
- `MMAP` (boolean): accepted and ignored.",
    ports: "no inputs; output 0 agnostic (packets), optional output 1 push (non-IP packets under FORCE_IP)",
    handlers: &[
        HandlerDoc { name: "count", mode: HandlerMode::Read, text: "Packets emitted so far." },
        HandlerDoc { name: "reset_counts", mode: HandlerMode::Write, text: "Resets `count` to zero." },
        HandlerDoc { name: "sampling_prob", mode: HandlerMode::Read, text: "The sampling probability." },
        HandlerDoc { name: "active", mode: HandlerMode::ReadWrite, text: "Whether packets are emitted (boolean)." },
        HandlerDoc { name: "encap", mode: HandlerMode::Read, text: "The file's link type, as Click names it (ETHER, IP, SLL, ...)." },
        HandlerDoc { name: "filename", mode: HandlerMode::Read, text: "The file name." },
        HandlerDoc { name: "filesize", mode: HandlerMode::Read, text: "The file's length in bytes, or `-`." },
        HandlerDoc { name: "filepos", mode: HandlerMode::Read, text: "Bytes of the file consumed so far." },
        HandlerDoc { name: "stop", mode: HandlerMode::Write, text: "Deactivates the element and asks the driver to stop." },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(FromDump::default()),
};

fn unparse_real2(v: u32, shift: u32) -> String {
    let x = v as f64 / (1u64 << shift) as f64;
    let s = format!("{:.6}", x);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// Sets the IP header annotation at `off` when an IPv4 header is there.
fn mark_ip(p: &mut Packet, off: usize) -> bool {
    let Some(ip) = p
        .data()
        .get(off..)
        .and_then(|d| Ipv4Packet::new_fixed_checked(d).ok())
    else {
        return false;
    };
    if ip.version() != 4 || ip.check_header_len().is_err() {
        return false;
    }
    let hl = usize::from(ip.header_len());
    p.set_network_header(off, hl);
    true
}

/// Link-type specific annotations; returns whether the packet is IP. As in
/// Click, link-layer packets get an IP header annotation only under FORCE_IP.
fn annotate(p: &mut Packet, lt: u32, force_ip: bool) -> bool {
    let be16 = |d: &[u8], i: usize| d.get(i..i + 2).map(|b| u16::from_be_bytes([b[0], b[1]]));
    match linktype::normalize(lt) {
        linktype::EN10MB => {
            p.set_mac_header(0);
            if !force_ip {
                return false;
            }
            let Ok(f) = EthernetFrame::new_checked(p.data()) else {
                return false;
            };
            let inner_ip = || {
                VlanHeader::new_checked(f.payload()).is_ok_and(|v| v.ethertype() == ethertype::IPV4)
            };
            match f.ethertype() {
                ethertype::IPV4 => mark_ip(p, 14),
                ethertype::VLAN if inner_ip() => mark_ip(p, 18),
                _ => false,
            }
        }
        linktype::RAW | linktype::IPV4 => {
            if mark_ip(p, 0) {
                true
            } else if p.data().first().is_some_and(|b| b >> 4 == 6) && p.len() >= 40 {
                p.set_network_header(0, 40);
                false
            } else {
                false
            }
        }
        linktype::IPV6 => {
            if p.len() >= 40 {
                p.set_network_header(0, 40);
            }
            false
        }
        linktype::LINUX_SLL => {
            let d = p.data();
            if let Some(t) = be16(d, 0) {
                if t <= 4 {
                    p.anno_mut().packet_type = PacketType::from_u8(t as u8);
                }
            }
            p.set_mac_header(0);
            force_ip && be16(p.data(), 14) == Some(0x0800) && mark_ip(p, 16)
        }
        linktype::LINUX_SLL2 => {
            let d = p.data();
            if let Some(&t) = d.get(10) {
                if t <= 4 {
                    p.anno_mut().packet_type = PacketType::from_u8(t);
                }
            }
            force_ip && be16(p.data(), 0) == Some(0x0800) && mark_ip(p, 20)
        }
        linktype::NULL | linktype::LOOP => {
            let d = p.data();
            let fam = d.get(0..4).map(|b| [b[0], b[1], b[2], b[3]]);
            let is_inet =
                fam.is_some_and(|b| u32::from_le_bytes(b) == 2 || u32::from_be_bytes(b) == 2);
            force_ip && is_inet && mark_ip(p, 4)
        }
        _ => false,
    }
}

impl FromDump {
    fn random(&mut self) -> u32 {
        // xorshift64*
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    }

    /// Reads the next packet to emit, applying the time window, sampling
    /// and FORCE_IP. Sets `eof` at the end (or on error).
    fn read_packet(&mut self, cx: &Ctx) -> Option<Packet> {
        loop {
            if self.eof {
                return None;
            }
            let reader = self.reader.as_mut()?;
            let (meta, mut p) = match reader.next_borrowed() {
                Ok(Some((m, d))) => (m, cx.pool().make(DEFAULT_HEADROOM, d, 0)),
                Ok(None) => {
                    self.eof = true;
                    return None;
                }
                Err(e) => {
                    self.eof = true;
                    cx.error_line(&format!("{}: {}: {}", cx.declaration(), self.filename, e));
                    return None;
                }
            };
            let ts = Timestamp::from_sec_nsec(meta.ts_sec, meta.ts_nsec);
            if !self.have_times {
                self.have_times = true;
                if let Some((t, true)) = self.start {
                    self.start = Some((ts.nsec().saturating_add(t), false));
                }
                if let Some((t, EndKind::AfterFirstInFile)) = self.end {
                    self.end = Some((ts.nsec().saturating_add(t), EndKind::Absolute));
                }
            }
            if let Some((t, _)) = self.start {
                if ts.nsec() < t {
                    continue;
                }
                self.start = None;
            }
            match self.end {
                Some((t, EndKind::Absolute)) if ts.nsec() >= t => {
                    self.eof = true;
                    return None;
                }
                Some((t, EndKind::Interval)) => {
                    if let Some(f) = self.first_out {
                        if ts.nsec() >= f.saturating_add(t) {
                            self.eof = true;
                            return None;
                        }
                    }
                }
                _ => {}
            }
            if self.sampling_prob < (1 << SAMPLING_SHIFT) {
                let r = self.random() & ((1 << SAMPLING_SHIFT) - 1);
                if r >= self.sampling_prob {
                    continue;
                }
            }
            let lt = meta.linktype;
            p.set_timestamp(ts);
            set_extra_length(&mut p, meta.orig_len.saturating_sub(meta.caplen));
            let is_ip = annotate(&mut p, lt, self.force_ip);
            if self.force_ip && !is_ip {
                if cx.noutputs() > 1 {
                    cx.push(1, p);
                }
                continue;
            }
            if self.first_out.is_none() {
                self.first_out = Some(ts.nsec());
            }
            return Some(p);
        }
    }

    fn due(&self, cx: &Ctx) -> Option<Timestamp> {
        if !self.timing {
            return None;
        }
        let p = self.next.as_ref()?;
        let when = p.timestamp().add_nsec(self.time_offset);
        if when > cx.now() {
            Some(when)
        } else {
            None
        }
    }

    fn at_end(&mut self, cx: &Ctx) {
        if self.stop && !self.stopped_driver {
            self.stopped_driver = true;
            cx.please_stop_driver();
        }
    }

    /// Takes the read-ahead packet and reads the following one.
    fn take(&mut self, cx: &Ctx) -> Option<Packet> {
        let p = self.next.take()?;
        self.next = self.read_packet(cx);
        self.count += 1;
        Some(p)
    }
}

impl Element for FromDump {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let filename: String = a.read_mp("FILENAME")?;
        let mut timing = a.read_p::<bool>("TIMING")?.unwrap_or(false);
        if let Some(t) = a.read::<bool>("TIMING")? {
            timing = t;
        }
        let stop = a.read::<bool>("STOP")?.unwrap_or(false);
        let active = a.read::<bool>("ACTIVE")?.unwrap_or(true);
        let _mmap = a.read::<bool>("MMAP")?;
        let sample = a.read::<f64>("SAMPLE")?;
        let force_ip = a.read::<bool>("FORCE_IP")?.unwrap_or(false);
        let burst = a.read::<usize>("BURST")?.unwrap_or(1);
        let start = a.read::<Seconds>("START")?;
        let start_after = a.read::<Seconds>("START_AFTER")?;
        let end = a.read::<Seconds>("END")?;
        let end_after = a.read::<Seconds>("END_AFTER")?;
        let interval = a.read::<Seconds>("INTERVAL")?;
        a.complete()?;
        if burst == 0 {
            return Err("BURST must be positive".into());
        }
        let mut sampling_prob = 1u32 << SAMPLING_SHIFT;
        if let Some(s) = sample {
            if !(0.0..=1.0).contains(&s) {
                return Err("SAMPLE: expected a probability between 0 and 1".into());
            }
            sampling_prob = (s * (1u64 << SAMPLING_SHIFT) as f64).round() as u32;
        }
        if start.is_some() && start_after.is_some() {
            return Err("'START' and 'START_AFTER' are mutually exclusive".into());
        }
        if [end.is_some(), end_after.is_some(), interval.is_some()]
            .iter()
            .filter(|x| **x)
            .count()
            > 1
        {
            return Err("'END', 'END_AFTER', and 'INTERVAL' are mutually exclusive".into());
        }
        self.filename = filename;
        self.timing = timing;
        self.stop = stop;
        self.active = active;
        self.force_ip = force_ip;
        self.burst = burst;
        self.sampling_prob = sampling_prob;
        self.start = start
            .map(|s| (s.0, false))
            .or(start_after.map(|s| (s.0, true)));
        self.end = end
            .map(|s| (s.0, EndKind::Absolute))
            .or(end_after.map(|s| (s.0, EndKind::AfterFirstInFile)))
            .or(interval.map(|s| (s.0, EndKind::Interval)));
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let f = &self.filename;
        let reader = if f == "-" {
            return Err("reading from standard input is not supported; give a file name".into());
        } else {
            match File::open(f) {
                Ok(file) => PcapReader::new(file),
                Err(e) => return Err(format!("{}: {}", f, io_error_text(&e))),
            }
        };
        let reader = match reader {
            Ok(r) => r,
            Err(click_pcap::Error::Empty) => return Err(format!("{f}: empty file")),
            Err(click_pcap::Error::BadMagic { .. }) => {
                return Err(format!("{f}: not a tcpdump file (bad magic number)"))
            }
            Err(e) => return Err(format!("{f}: {e}")),
        };
        self.linktype = reader.linktype().unwrap_or(linktype::EN10MB);
        if linktype::is_raw_ip(self.linktype) {
            self.force_ip = true;
        }
        if self.force_ip && linktype::header_len(self.linktype).is_none() {
            return Err(format!(
                "{f}: unknown linktype {}; can't force IP packets",
                self.linktype
            ));
        }
        self.reader = Some(reader);
        self.next = self.read_packet(cx);
        if let Some(p) = &self.next {
            self.linktype = self
                .reader
                .as_ref()
                .and_then(|r| r.linktype())
                .unwrap_or(self.linktype);
            self.time_offset = (cx.now() - p.timestamp()).nsec();
        }
        if cx.output_is_push(0) && self.active {
            cx.schedule_task();
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        if !self.active {
            return false;
        }
        if self.next.is_none() {
            // As Click: the stop request comes one task run after the last
            // packet, so downstream tasks get a chance to drain it.
            self.at_end(cx);
            return false;
        }
        let mut out = Emitter::new(cx, 0);
        for _ in 0..self.burst {
            if self.next.is_none() {
                break;
            }
            if let Some(when) = self.due(cx) {
                out.flush(cx);
                cx.schedule_timer_at(TIMER_TIMING, when);
                return false;
            }
            let Some(p) = self.take(cx) else { break };
            out.emit(cx, p);
        }
        out.flush(cx);
        true
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        if self.active {
            cx.schedule_task();
        }
    }

    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        if !self.active {
            return None;
        }
        if self.next.is_none() {
            self.at_end(cx);
            return None;
        }
        if self.due(cx).is_some() {
            return None;
        }
        self.take(cx)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "count" => self.count.to_string(),
            "sampling_prob" => unparse_real2(self.sampling_prob, SAMPLING_SHIFT),
            "active" => self.active.to_string(),
            "encap" => {
                let lt = match &self.reader {
                    Some(r) => r.linktype().unwrap_or(self.linktype),
                    // not yet initialized (USE_ENCAP_FROM): peek at the file
                    None => PcapReader::open(&self.filename)
                        .ok()
                        .and_then(|r| r.linktype())
                        .unwrap_or(self.linktype),
                };
                encap_name(lt).to_string()
            }
            "filename" => self.filename.clone(),
            "filesize" => match std::fs::metadata(&self.filename) {
                Ok(m) if m.is_file() => m.len().to_string(),
                _ => "-".to_string(),
            },
            "filepos" => self
                .reader
                .as_ref()
                .map(|r| r.offset())
                .unwrap_or(0)
                .to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        Some(match name {
            "active" => match click_lang::parse_bool(value.trim()) {
                Ok(b) => {
                    self.active = b;
                    if b && cx.output_is_push(0) && !cx.task_scheduled() {
                        cx.schedule_task();
                    }
                    Ok(())
                }
                Err(_) => Err("active: expected boolean".into()),
            },
            "reset_counts" => {
                self.count = 0;
                Ok(())
            }
            "stop" => {
                self.active = false;
                cx.please_stop_driver();
                Ok(())
            }
            _ => return None,
        })
    }

    fn cleanup(&mut self, _cx: &Ctx) {
        self.next = None;
        self.reader = None;
    }

    element_any!();
}
