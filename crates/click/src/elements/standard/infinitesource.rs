//! InfiniteSource: generates packets as fast as it can.

use crate::prelude::*;
use alloc::vec;

const DEFAULT_DATA: &[u8] = b"Random bullshit in a packet, at least 64 bytes long. Well, now it is.";

/// `InfiniteSource([DATA, LIMIT, BURST, ACTIVE, KEYWORDS])`.
pub struct InfiniteSource {
    data: Vec<u8>,
    limit: i64,
    burst: usize,
    active: bool,
    stop: bool,
    timestamp: bool,
    count: u64,
}

impl Default for InfiniteSource {
    fn default() -> Self {
        InfiniteSource {
            data: DEFAULT_DATA.to_vec(),
            limit: -1,
            burst: 1,
            active: true,
            stop: false,
            timestamp: true,
            count: 0,
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
(negative means no limit).\n\nKeyword arguments:\n\n\
- `DATA` (string): packet contents. Default is a 68-byte string.\n\
- `DATASIZE` / `LENGTH` (integer): if given, the packet is DATA repeated or cut to this length.\n\
- `LIMIT` (integer): total packets to send; -1 (default) means no limit.\n\
- `BURST` (integer): packets per task run. Default 1.\n\
- `ACTIVE` (boolean): whether to send. Default true.\n\
- `STOP` (boolean): when LIMIT is reached, ask the driver to stop. Default false.\n\
- `TIMESTAMP` (boolean): set each packet's timestamp annotation. Default true.",
    ports: "no inputs, one output",
    handlers: &[
        HandlerDoc { name: "count", mode: HandlerMode::Read, text: "Packets generated so far." },
        HandlerDoc { name: "reset", mode: HandlerMode::Write, text: "Resets count to zero and reactivates." },
        HandlerDoc { name: "data", mode: HandlerMode::ReadWrite, text: "The packet data." },
        HandlerDoc { name: "limit", mode: HandlerMode::ReadWrite, text: "The LIMIT value." },
        HandlerDoc { name: "burst", mode: HandlerMode::ReadWrite, text: "The BURST value." },
        HandlerDoc { name: "active", mode: HandlerMode::ReadWrite, text: "The ACTIVE value." },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(InfiniteSource::default()),
};

impl InfiniteSource {
    #[inline]
    fn make_packet(&self, cx: &Ctx, now: Timestamp) -> Packet {
        let mut p = cx.pool().make(DEFAULT_HEADROOM, &self.data, 0);
        if self.timestamp {
            p.set_timestamp(now);
        }
        p
    }

    fn remaining(&self) -> usize {
        if self.limit < 0 {
            usize::MAX
        } else {
            (self.limit as u64).saturating_sub(self.count) as usize
        }
    }
}

impl Element for InfiniteSource {
    fn configure(&mut self, config: &str, _cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = Args::new(config);
        let data = a.read_p::<String>("DATA")?;
        let limit = a.read_p::<i64>("LIMIT")?.unwrap_or(-1);
        let burst = a.read_p::<usize>("BURST")?.unwrap_or(1);
        let active = a.read_p::<bool>("ACTIVE")?.unwrap_or(true);
        let stop = a.read::<bool>("STOP")?.unwrap_or(false);
        let timestamp = a.read::<bool>("TIMESTAMP")?.unwrap_or(true);
        let mut len = a.read::<usize>("DATASIZE")?;
        if len.is_none() {
            len = a.read::<usize>("LENGTH")?;
        }
        a.complete()?;
        if burst == 0 {
            return Err("BURST must be positive".into());
        }
        let mut data = data.map(|s| s.into_bytes()).unwrap_or_else(|| DEFAULT_DATA.to_vec());
        if let Some(n) = len {
            if data.is_empty() {
                data = vec![0; n];
            } else {
                data = data.iter().copied().cycle().take(n).collect();
            }
        }
        self.data = data;
        self.limit = limit;
        self.burst = burst;
        self.active = active;
        self.stop = stop;
        self.timestamp = timestamp;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        if cx.output_is_push(0) && self.active {
            cx.schedule_task();
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        if !self.active {
            return false;
        }
        let n = self.burst.min(self.remaining());
        if n == 0 {
            if self.stop {
                cx.please_stop_driver();
            }
            return false;
        }
        let now = if self.timestamp { cx.now() } else { Timestamp::ZERO };
        let maxb = cx.max_batch();
        let mut left = n;
        while left > 0 {
            if maxb == 1 {
                let p = self.make_packet(cx, now);
                self.count += 1;
                left -= 1;
                cx.push(0, p);
            } else {
                let k = left.min(maxb);
                let mut b = Vec::with_capacity(k);
                for _ in 0..k {
                    b.push(self.make_packet(cx, now));
                }
                self.count += k as u64;
                left -= k;
                cx.push_batch(0, b);
            }
        }
        if self.remaining() == 0 {
            if self.stop {
                cx.please_stop_driver();
            }
            return false;
        }
        true
    }

    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        if !self.active || self.remaining() == 0 {
            if self.active && self.stop && self.remaining() == 0 {
                self.active = false;
                cx.please_stop_driver();
            }
            return None;
        }
        self.count += 1;
        let now = if self.timestamp { cx.now() } else { Timestamp::ZERO };
        Some(self.make_packet(cx, now))
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "count" => self.count.to_string(),
            "data" => String::from_utf8_lossy(&self.data).into_owned(),
            "limit" => self.limit.to_string(),
            "burst" => self.burst.to_string(),
            "active" => self.active.to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        use click_lang::args;
        let v = value.trim();
        let r = match name {
            "reset" => {
                self.count = 0;
                self.active = true;
                Ok(())
            }
            "data" => {
                self.data = args::unquote(v).into_bytes();
                Ok(())
            }
            "limit" => args::parse_i64(v).map(|x| self.limit = x),
            "burst" => args::parse_u64(v).and_then(|x| {
                if x == 0 {
                    Err("BURST must be positive".into())
                } else {
                    self.burst = x as usize;
                    Ok(())
                }
            }),
            "active" => args::parse_bool(v).map(|x| self.active = x),
            _ => return None,
        };
        if r.is_ok() && self.active && cx.output_is_push(0) {
            cx.schedule_task();
        }
        Some(r)
    }

    crate::element_any!();
}
