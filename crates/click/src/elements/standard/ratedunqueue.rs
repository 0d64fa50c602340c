//! RatedUnqueue and BandwidthRatedUnqueue: pull-to-push converters that
//! move packets at a token-bucket rate (the rate configuration they share
//! with RatedSplitter and BandwidthRatedSplitter is `common::rate`).

use crate::common::handlers;
use crate::common::rate::{RateConfig, TokenBucket};
use crate::prelude::*;
use alloc::format;

/// `RatedUnqueue(RATE, [KEYWORDS])` and
/// `BandwidthRatedUnqueue(RATE, [KEYWORDS])`.
pub struct RatedUnqueue {
    cfg: RateConfig,
    tb: TokenBucket,
    active: bool,
    signal: Option<UpstreamSignal>,
    runs: u64,
    pushes: u64,
    failed_pulls: u64,
    empty_runs: u64,
}

impl RatedUnqueue {
    fn new(bandwidth: bool) -> RatedUnqueue {
        RatedUnqueue {
            cfg: RateConfig {
                bandwidth,
                ..RateConfig::default()
            },
            tb: TokenBucket::default(),
            active: true,
            signal: None,
            runs: 0,
            pushes: 0,
            failed_pulls: 0,
            empty_runs: 0,
        }
    }
}

const HANDLERS: &[HandlerDoc] = &[
    HandlerDoc {
        name: "rate",
        mode: HandlerMode::ReadWrite,
        text: "The RATE. Writing it reconfigures the rate, keeping the burst keywords.",
    },
    HandlerDoc {
        name: "active",
        mode: HandlerMode::ReadWrite,
        text: "Whether the element pulls (true or false).",
    },
    HandlerDoc {
        name: "calls",
        mode: HandlerMode::Read,
        text:
            "Task statistics: calls to run_task, empty runs, pushes and failed pulls, one per line.",
    },
];

pub static SPEC: ClassSpec = ClassSpec {
    name: "RatedUnqueue",
    port_count: "1/1",
    processing: "l/h",
    group: "standard",
    signature: "RatedUnqueue(RATE, [KEYWORDS])",
    summary: "Pull-to-push converter at a packet rate.",
    description: "Pulls packets at RATE packets per second and pushes them out its output. \
The rate is a token bucket whose capacity defaults to 20 milliseconds worth of tokens; it starts \
full. While the bucket is empty the element sleeps on a timer until the next token; while the \
notifiers upstream say no packet can come it sleeps until one does.\n\nKeyword arguments:\n\n\
- `RATE` (unsigned): packets per second. Mandatory.\n\
- `BURST_DURATION` (time): the bucket holds RATE × BURST_DURATION tokens.\n\
- `BURST_SIZE` (unsigned): the bucket holds this many tokens (`BURST` is a synonym). Not \
together with BURST_DURATION.\n\
- `ACTIVE` (boolean): whether to pull. Default true.",
    ports: "one pull input, one push output",
    handlers: HANDLERS,
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(RatedUnqueue::new(false)),
};

pub static BANDWIDTHRATEDUNQUEUE_SPEC: ClassSpec = ClassSpec {
    name: "BandwidthRatedUnqueue",
    port_count: "1/1",
    processing: "l/h",
    group: "standard",
    signature: "BandwidthRatedUnqueue(RATE, [KEYWORDS])",
    summary: "Pull-to-push converter at a bandwidth.",
    description: "Pulls packets at RATE, a bandwidth (`10Mbps`, `1MBps`; a bare number is bytes \
per second), and pushes them out its output. The rate is a token bucket of bytes: a packet may go \
when the bucket holds at least 131072 bytes, and costs its length. The capacity is 20 \
milliseconds worth of bytes (or BURST_BYTES) plus those 131072; the bucket starts full. While \
the bucket is short the element sleeps on a timer; while the notifiers upstream say no packet can \
come it sleeps until one does.\n\nKeyword arguments:\n\n\
- `RATE` (bandwidth): bytes per second. Mandatory.\n\
- `BURST_DURATION` (time): burst of RATE × BURST_DURATION bytes.\n\
- `BURST_BYTES` (unsigned): burst in bytes (`BURST` is a synonym). Not together with \
BURST_DURATION.\n\
- `ACTIVE` (boolean): whether to pull. Default true.",
    ports: "one pull input, one push output",
    handlers: HANDLERS,
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(RatedUnqueue::new(true)),
};

impl Element for RatedUnqueue {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let cfg = RateConfig::read(&mut a, self.cfg.bandwidth)?;
        let active = a.read::<bool>("ACTIVE")?.unwrap_or(true);
        a.complete()?;
        cfg.apply(&mut self.tb);
        self.cfg = cfg;
        self.active = active;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        self.tb.set_full();
        if self.active {
            cx.schedule_task();
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        self.runs += 1;
        if !self.active {
            return false;
        }
        if self.signal.is_none() {
            self.signal = Some(cx.upstream_signal(0));
        }
        let now = cx.now();
        self.tb.refill(now);
        let need = self.cfg.threshold();
        if !self.tb.contains(need) {
            let wait = self.tb.time_until_contains(need).max(1);
            cx.schedule_timer_at(0, now.add_nsec(wait));
            self.empty_runs += 1;
            return false;
        }
        let max = cx.max_batch().max(1);
        let mut out = Emitter::new(cx, 0);
        let mut worked = 0usize;
        while worked < max && self.tb.contains(need) {
            match cx.pull(0) {
                Some(p) => {
                    self.tb.remove(self.cfg.cost(p.len()));
                    worked += 1;
                    out.emit(cx, p);
                }
                None => break,
            }
        }
        out.flush(cx);
        self.pushes += worked as u64;
        if worked > 0 {
            return true;
        }
        self.failed_pulls += 1;
        self.empty_runs += 1;
        match &self.signal {
            Some(s) => cx.signal_active(s),
            None => true,
        }
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        if self.active {
            cx.schedule_task();
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "rate" => self.cfg.unparse_rate(),
            "active" => self.active.to_string(),
            "calls" => format!(
                "{} calls to run_task()\n{} empty runs\n{} pushes\n{} failed pulls\n",
                self.runs, self.empty_runs, self.pushes, self.failed_pulls
            ),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        let r = match name {
            "rate" => self.cfg.with_rate_text(value).map(|c| {
                self.tb.refill(cx.now());
                c.apply(&mut self.tb);
                self.cfg = c;
            }),
            "active" => handlers::parse_bool(value)
                .map(|v| self.active = v)
                .ok_or_else(|| String::from("active: expected boolean")),
            _ => return None,
        };
        if r.is_ok() && self.active {
            cx.unschedule_timer(0);
            cx.schedule_task();
        }
        Some(r)
    }

    fn current_config(&self) -> Option<String> {
        Some(self.cfg.unparse_rate())
    }

    crate::element_any!();
}
