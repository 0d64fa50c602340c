//! LinkUnqueue: a pull-to-push converter that emulates a serial link
//! with latency and bandwidth.

use crate::common::handlers::clean;
use crate::common::unparse;
use crate::packet::EXTRA_LENGTH_ANNO_OFFSET;
use crate::prelude::*;
use alloc::collections::VecDeque;
use click_lang::args::{parse_bandwidth, parse_time_ns, Bandwidth, Seconds};

/// `LinkUnqueue(LATENCY, BANDWIDTH)`.
#[derive(Default)]
pub struct LinkUnqueue {
    latency: i64,
    /// Bytes per second, divided by 100 (as Click keeps it).
    bandwidth: u64,
    /// Packets on the link; each one's timestamp is when it leaves.
    q: VecDeque<Packet>,
    back_to_back: bool,
    signal: Option<UpstreamSignal>,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "LinkUnqueue",
    port_count: "1/1",
    processing: "l/h",
    group: "standard",
    signature: "LinkUnqueue(LATENCY, BANDWIDTH)",
    summary: "Link emulator: pulls packets and pushes them after a latency, at a bandwidth.",
    description: "Pulls packets from its input and pushes them out its output as a serial \
link of LATENCY (a time) and BANDWIDTH (a bandwidth, at least 100 bytes per second) would \
deliver them. A packet pulled while the link is idle leaves LATENCY plus its transmission \
time (its length plus its extra-length annotation, at BANDWIDTH, in whole microseconds) \
later; packets pulled back to back queue behind each other. Packets are pulled while the \
link holds less than LATENCY worth of them. Each packet's timestamp annotation is set to \
the time it leaves. As in Click.",
    ports: "one pull input, one push output",
    handlers: &[
        HandlerDoc {
            name: "latency",
            mode: HandlerMode::ReadWrite,
            text: "LATENCY. Writing it empties the link (its packets are dropped).",
        },
        HandlerDoc {
            name: "bandwidth",
            mode: HandlerMode::ReadWrite,
            text: "BANDWIDTH in bytes per second. Writing it empties the link.",
        },
        HandlerDoc {
            name: "size",
            mode: HandlerMode::Read,
            text: "Packets on the link.",
        },
        HandlerDoc {
            name: "reset",
            mode: HandlerMode::Write,
            text: "Empties the link.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(LinkUnqueue::default()),
};

impl LinkUnqueue {
    fn delay_by_bandwidth(&self, p: &mut Packet, from: Timestamp) {
        let len = p.len() as u64 + u64::from(p.anno().u32_at(EXTRA_LENGTH_ANNO_OFFSET));
        let usec = len * 10_000 / self.bandwidth.max(1);
        p.set_timestamp(from.add_nsec((usec as i64).saturating_mul(1000)));
    }

    fn reset(&mut self, cx: &Ctx) {
        self.q.clear();
        cx.unschedule_timer(0);
        cx.schedule_task();
    }
}

fn bandwidth_arg(b: u64) -> Result<u64, String> {
    if b < 100 {
        return Err("bandwidth too small, minimum 100Bps".into());
    }
    Ok(b.min(u64::from(u32::MAX)) / 100)
}

impl Element for LinkUnqueue {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let latency = a.read_mp::<Seconds>("LATENCY")?.0;
        let bw = a.read_mp::<Bandwidth>("BANDWIDTH")?.0;
        a.complete()?;
        self.bandwidth = bandwidth_arg(bw)?;
        self.latency = latency;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        cx.schedule_task();
        Ok(())
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        let sig = self
            .signal
            .get_or_insert_with(|| cx.upstream_signal(0))
            .clone();
        let now = cx.now();
        let now_delayed = now.add_nsec(self.latency);
        // pull while the link holds less than LATENCY worth
        while self.q.back().is_none_or(|t| t.timestamp() <= now_delayed) {
            let Some(mut p) = cx.pull(0) else {
                self.back_to_back = false;
                break;
            };
            let from = match self.q.back() {
                Some(t) if self.back_to_back => t.timestamp(),
                _ => now_delayed,
            };
            self.delay_by_bandwidth(&mut p, from);
            self.q.push_back(p);
            self.back_to_back = true;
        }
        // emit the packets whose time has come
        while self.q.front().is_some_and(|p| p.timestamp() <= now) {
            if let Some(p) = self.q.pop_front() {
                cx.push(0, p);
            }
        }
        let active = cx.signal_active(&sig);
        if let (Some(head), Some(tail)) = (self.q.front(), self.q.back()) {
            let mut expiry = head.timestamp();
            if active {
                expiry = expiry.min(tail.timestamp().add_nsec(-self.latency));
            }
            // Click's Timer::adjustment() is 0 here: timers fire on time
            if expiry <= now {
                return true;
            }
            cx.schedule_timer_at(0, expiry);
            return false;
        }
        // stay scheduled while the upstream notifier says packets may come
        active
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        cx.schedule_task();
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "latency" => unparse::unparse_interval(self.latency),
            "bandwidth" => (self.bandwidth * 100).to_string(),
            "size" => self.q.len().to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        let v = clean(value);
        let r = match name {
            "latency" => parse_time_ns(&v)
                .map(|l| self.latency = l)
                .map_err(|_| String::from("latency must be a timestamp")),
            "bandwidth" => parse_bandwidth(&v)
                .map_err(|_| String::from("invalid bandwidth"))
                .and_then(bandwidth_arg)
                .map(|b| self.bandwidth = b),
            "reset" => Ok(()),
            _ => return None,
        };
        if r.is_ok() {
            self.reset(cx);
        }
        Some(r)
    }

    fn queue_len(&self) -> Option<usize> {
        Some(self.q.len())
    }

    fn cleanup(&mut self, _cx: &Ctx) {
        self.q.clear();
    }

    crate::element_any!();
}
