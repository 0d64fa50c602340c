//! InfiniteSource: generates packets as fast as it can.

use crate::common::args::DEFAULT_DATA;
use crate::common::{args, handlers};
use crate::prelude::*;
use click_lang::args::RawString;

/// `InfiniteSource([DATA, LIMIT, BURST, ACTIVE, KEYWORDS])`.
pub struct InfiniteSource {
    data: Vec<u8>,
    datasize: i64,
    packet: Vec<u8>,
    /// `packet` as the shared buffer every packet sent refers to (made at
    /// the first send after `packet` changes).
    shared: Option<SharedData>,
    limit: i64,
    burst: usize,
    active: bool,
    timestamp: bool,
    count: u64,
    end_call: Option<String>,
    pull_signal: Option<SignalId>,
    /// Click's downstream full notifier: sleep while the queues we feed are full.
    nonfull: Option<UpstreamSignal>,
}

impl Default for InfiniteSource {
    fn default() -> Self {
        InfiniteSource {
            data: DEFAULT_DATA.to_vec(),
            datasize: -1,
            packet: DEFAULT_DATA.to_vec(),
            shared: None,
            limit: -1,
            burst: 1,
            active: true,
            timestamp: true,
            count: 0,
            end_call: None,
            pull_signal: None,
            nonfull: None,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "InfiniteSource",
    port_count: "0/1",
    processing: "a/a",
    group: "standard",
    signature: "InfiniteSource([DATA, LIMIT, BURST, ACTIVE, KEYWORDS])",
    summary: "Generates packets whenever scheduled.",
    description: "Creates packets consisting of DATA. In push context it pushes BURST packets each \
time its task runs; in pull context it returns a packet on every pull. It stops after LIMIT packets \
(negative means no limit). When every path downstream ends at a full Queue, it sleeps until one \
has room (Click's full notifier).\n\nKeyword arguments:\n\n\
- `DATA` (string): packet contents. Default is Click's 69-byte \"Random bullshit in a packet, ...\".\n\
- `LIMIT` (integer): total packets to send; -1 (default) means no limit.\n\
- `BURST` (integer): packets per task run. Default 1.\n\
- `ACTIVE` (boolean): whether to send. Default true.\n\
- `LENGTH` (integer): if given, DATA is cut or repeated to this length (`DATASIZE` is a deprecated synonym).\n\
- `STOP` (boolean): when LIMIT is reached, ask the driver to stop. Default false.\n\
- `END_CALL` (handler call): write handler to call when LIMIT is reached.\n\
- `TIMESTAMP` (boolean): set each packet's timestamp annotation. Default true.",
    ports: "no inputs, one output",
    handlers: &[
        HandlerDoc { name: "count", mode: HandlerMode::Read, text: "Packets generated so far." },
        HandlerDoc { name: "reset", mode: HandlerMode::Write, text: "Resets count to zero." },
        HandlerDoc { name: "data", mode: HandlerMode::ReadWrite, text: "The packet data." },
        HandlerDoc { name: "limit", mode: HandlerMode::ReadWrite, text: "The LIMIT value." },
        HandlerDoc { name: "burst", mode: HandlerMode::ReadWrite, text: "The BURST value." },
        HandlerDoc { name: "active", mode: HandlerMode::ReadWrite, text: "The ACTIVE value." },
        HandlerDoc { name: "length", mode: HandlerMode::ReadWrite, text: "The LENGTH value (-1: DATA's length)." },
        HandlerDoc { name: "burstsize", mode: HandlerMode::ReadWrite, text: "Deprecated synonym for `burst`." },
        HandlerDoc { name: "datasize", mode: HandlerMode::ReadWrite, text: "Deprecated synonym for `length`." },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(InfiniteSource::default()),
};

impl InfiniteSource {
    /// A packet sharing the source's data buffer, as Click's
    /// InfiniteSource sends clones of one packet (a writer downstream gets
    /// its own copy: see [`crate::packet`]).
    #[inline]
    fn make_packet(&mut self, cx: &Ctx, now: Timestamp) -> Packet {
        let packet = &self.packet;
        let d = self
            .shared
            .get_or_insert_with(|| SharedData::new(DEFAULT_HEADROOM, packet));
        let mut p = cx.pool().make_shared(d);
        if self.timestamp {
            p.set_timestamp(now);
        }
        p
    }

    fn limit_reached(&self) -> bool {
        self.limit >= 0 && self.count >= self.limit as u64
    }

    fn call_end(&self, cx: &Ctx) {
        if let Some(h) = &self.end_call {
            handlers::call_write_desc(cx, h);
        }
    }
}

impl Element for InfiniteSource {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let data = args::read_data(&mut a, "DATA", true)?;
        let limit = a.read_p::<i64>("LIMIT")?.unwrap_or(-1);
        let burst = a.read_p::<i32>("BURST")?.unwrap_or(1);
        let active = a.read_p::<bool>("ACTIVE")?.unwrap_or(true);
        let timestamp = a.read::<bool>("TIMESTAMP")?.unwrap_or(true);
        let mut datasize = a.read::<i32>("LENGTH")?.map(i64::from);
        if let Some(d) = a.read::<i32>("DATASIZE")? {
            datasize = Some(i64::from(d));
        }
        let stop = a.read::<bool>("STOP")?.unwrap_or(false);
        let end_call = a.read::<RawString>("END_CALL")?;
        a.complete()?;
        if burst < 1 {
            return Err("burst size must be >= 1".into());
        }
        if stop && end_call.is_some() {
            return Err("END_CALL and STOP are mutually exclusive".into());
        }
        self.data = data.unwrap_or_else(|| DEFAULT_DATA.to_vec());
        self.datasize = datasize.unwrap_or(-1);
        self.packet = args::source_data(&self.data, self.datasize);
        self.shared = None;
        self.limit = limit;
        self.burst = burst as usize;
        self.count = 0;
        self.active = active;
        self.timestamp = timestamp;
        self.end_call = match end_call {
            Some(RawString(s)) => Some(s),
            None if stop => Some("stop".into()),
            None => None,
        };
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        if cx.output_is_push(0) {
            if self.active {
                cx.schedule_task();
            }
        } else {
            self.pull_signal = Some(cx.new_signal(self.active && !self.limit_reached()));
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        if !self.active {
            return false;
        }
        // looked up at the first run, when every element is initialized
        let sig = self.nonfull.get_or_insert_with(|| cx.downstream_signal(0));
        if !matches!(sig, UpstreamSignal::AlwaysActive) && !cx.signal_active(sig) {
            // woken when a queue downstream has room again
            return false;
        }
        let mut n = self.burst;
        if self.limit >= 0 {
            n = n.min((self.limit as u64).saturating_sub(self.count) as usize);
        }
        if n == 0 {
            if self.limit_reached() {
                self.call_end(cx);
            }
            return false;
        }
        let now = if self.timestamp {
            cx.now()
        } else {
            Timestamp::ZERO
        };
        let packet = &self.packet;
        let d = self
            .shared
            .get_or_insert_with(|| SharedData::new(DEFAULT_HEADROOM, packet));
        let (pool, timestamp) = (cx.pool(), self.timestamp);
        let max = cx.max_batch();
        if max > 1 {
            // whole batches at once, pushed as an Emitter would push them
            let mut left = n;
            while left > 0 {
                let k = left.min(max);
                let mut b = cx.take_batch();
                pool.make_shared_batch(d, k, now, &mut b);
                if k == 1 {
                    if let Some(p) = b.pop() {
                        cx.push(0, p);
                    }
                } else {
                    cx.push_batch(0, b);
                }
                left -= k;
            }
            self.count += n as u64;
            return true;
        }
        let mut out = Emitter::new(cx, 0);
        for _ in 0..n {
            let mut p = pool.make_shared(d);
            if timestamp {
                p.set_timestamp(now);
            }
            out.emit(cx, p);
        }
        self.count += n as u64;
        out.flush(cx);
        true
    }

    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        if self.active && !self.limit_reached() {
            self.count += 1;
            let now = if self.timestamp {
                cx.now()
            } else {
                Timestamp::ZERO
            };
            return Some(self.make_packet(cx, now));
        }
        if self.active {
            self.call_end(cx);
        }
        if let Some(s) = self.pull_signal {
            cx.set_signal(s, false);
        }
        None
    }

    fn empty_signal(&self) -> Option<SignalId> {
        self.pull_signal
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "count" => self.count.to_string(),
            "data" => String::from_utf8_lossy(&self.data).into_owned(),
            "limit" => self.limit.to_string(),
            "burst" | "burstsize" => self.burst.to_string(),
            "active" => self.active.to_string(),
            "length" | "datasize" => self.datasize.to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        let r: Result<(), String> = match name {
            "data" => {
                self.data = value.as_bytes().to_vec();
                self.packet = args::source_data(&self.data, self.datasize);
                self.shared = None;
                Ok(())
            }
            "limit" => match handlers::parse_int(value) {
                Some(x) => {
                    self.limit = x;
                    Ok(())
                }
                None => Err("limit parameter must be integer".into()),
            },
            "burst" | "burstsize" => match handlers::parse_int(value) {
                Some(x) if x >= 1 && x <= i64::from(i32::MAX) => {
                    self.burst = x as usize;
                    Ok(())
                }
                _ => Err("burstsize parameter must be integer >= 1".into()),
            },
            "active" => match handlers::parse_bool(value) {
                Some(x) => {
                    self.active = x;
                    Ok(())
                }
                None => Err("active parameter must be boolean".into()),
            },
            "reset" => {
                self.count = 0;
                Ok(())
            }
            "length" | "datasize" => match handlers::parse_int(value) {
                Some(x) if x <= i64::from(i32::MAX) => {
                    self.datasize = x;
                    self.packet = args::source_data(&self.data, self.datasize);
                    self.shared = None;
                    Ok(())
                }
                _ => Err("length must be integer".into()),
            },
            _ => return None,
        };
        if r.is_ok() && self.active && !self.limit_reached() {
            if cx.output_is_push(0) {
                cx.schedule_task();
            } else if let Some(s) = self.pull_signal {
                cx.set_signal(s, true);
            }
        }
        Some(r)
    }

    crate::element_any!();
}
