//! Discard: drops every packet.

use crate::common::handlers;
use crate::prelude::*;

/// `Discard([KEYWORDS])`: drops all packets. In pull context it pulls
/// continuously while active.
pub struct Discard {
    count: u64,
    active: bool,
    burst: u32,
    pull_mode: bool,
    signal: Option<UpstreamSignal>,
}

impl Default for Discard {
    fn default() -> Self {
        Discard {
            count: 0,
            active: true,
            burst: 1,
            pull_mode: false,
            signal: None,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "Discard",
    port_count: "1/0",
    processing: "a/a",
    group: "standard",
    signature: "Discard([KEYWORDS])",
    summary: "Drops all packets.",
    description: "Discards every packet it receives. In a pull context it runs a task that pulls \
packets as fast as they are available (sleeping while upstream notifiers say no packets can come).\n\n\
Keyword arguments:\n\n\
- `ACTIVE` (boolean): whether to pull packets in a pull context. Default true; meaningless (an \
error) in push context.\n\
- `BURST` (unsigned): packets pulled per task run; 0 means no limit. Default 1.",
    ports: "one input, no outputs",
    handlers: &[
        HandlerDoc { name: "count", mode: HandlerMode::Read, text: "Number of packets discarded." },
        HandlerDoc { name: "reset_counts", mode: HandlerMode::Write, text: "Resets `count` to zero." },
        HandlerDoc { name: "active", mode: HandlerMode::ReadWrite, text: "Whether the pull task is active (pull context)." },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Discard::default()),
};

impl Element for Discard {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let active = a.read::<bool>("ACTIVE")?;
        let burst = a.read::<u32>("BURST")?.unwrap_or(1);
        a.complete()?;
        // Click rejects ACTIVE in push context at configure time; the push
        // context is known here only in initialize, which checks it.
        self.active = active.unwrap_or(true);
        self.pull_mode = active.is_some() && !self.active;
        self.burst = if burst == 0 { u32::MAX } else { burst };
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let explicit_inactive = self.pull_mode;
        self.pull_mode = cx.input_is_pull(0);
        if explicit_inactive && !self.pull_mode {
            return Err("ACTIVE is meaningless in push context".into());
        }
        if self.pull_mode && self.active {
            cx.schedule_task();
        }
        Ok(())
    }

    #[inline]
    fn push(&mut self, _port: usize, _p: Packet, _cx: &Ctx) {
        self.count += 1;
    }

    #[inline]
    fn push_batch(&mut self, _port: usize, b: Batch, cx: &Ctx) {
        self.count += b.len() as u64;
        cx.recycle_batch(b);
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        if !self.active {
            return false;
        }
        // Resolved lazily: upstream queues create their notifiers in their
        // own initialize, which may run after ours.
        if self.signal.is_none() {
            self.signal = Some(cx.upstream_signal(0));
        }
        let mut n = 0u32;
        while n < self.burst {
            match cx.pull(0) {
                Some(_) => n += 1,
                None => break,
            }
        }
        self.count += u64::from(n);
        if n > 0 {
            return true;
        }
        match &self.signal {
            Some(sig) => cx.signal_active(sig),
            None => true,
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "count" => Some(Ok(self.count.to_string())),
            "active" => Some(Ok(self.active.to_string())),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "reset_counts" => {
                self.count = 0;
                Some(Ok(()))
            }
            "active" => Some(match handlers::parse_bool(value) {
                Some(v) => {
                    self.active = v;
                    if v && self.pull_mode {
                        cx.schedule_task();
                    } else {
                        cx.unschedule_task();
                    }
                    Ok(())
                }
                None => Err("syntax error".into()),
            }),
            _ => None,
        }
    }

    crate::element_any!();
}
