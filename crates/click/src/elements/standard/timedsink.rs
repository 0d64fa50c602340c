//! TimedSink: pulls one packet every INTERVAL and drops it.

use crate::common::{handlers, unparse};
use crate::prelude::*;
use click_lang::args::{self, Seconds};

/// `TimedSink([INTERVAL])`.
pub struct TimedSink {
    interval: i64,
    /// When the timer is next due (the next one is due INTERVAL after it).
    expiry: Timestamp,
}

impl Default for TimedSink {
    fn default() -> Self {
        TimedSink {
            interval: 500_000_000,
            expiry: Timestamp::ZERO,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "TimedSink",
    port_count: "1/0",
    processing: "l/",
    group: "standard",
    signature: "TimedSink([INTERVAL])",
    summary: "Periodically pulls and drops a packet.",
    description: "Pulls one packet every INTERVAL seconds from its input and discards it. The \
timer keeps its own rhythm: each pull is due INTERVAL after the previous one was due, whether or \
not a packet came.\n\nKeyword arguments:\n\n\
- `INTERVAL` (time): time between pulls. Default 0.5 seconds.",
    ports: "one pull input, no outputs",
    handlers: &[HandlerDoc {
        name: "interval",
        mode: HandlerMode::ReadWrite,
        text: "The INTERVAL (`500ms`, `1.500000s`); a write takes effect from the next pull.",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(TimedSink::default()),
};

impl Element for TimedSink {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let interval = a.read_p::<Seconds>("INTERVAL")?.map(|s| s.0);
        a.complete()?;
        let interval = interval.unwrap_or(500_000_000);
        if interval < 0 {
            return Err("INTERVAL: must be >= 0".into());
        }
        self.interval = interval;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        self.expiry = cx.now().add_nsec(self.interval);
        cx.schedule_timer_at(0, self.expiry);
        Ok(())
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        drop(cx.pull(0));
        self.expiry = self.expiry.add_nsec(self.interval);
        cx.schedule_timer_at(0, self.expiry);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        (name == "interval").then(|| Ok(unparse::unparse_interval(self.interval)))
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        (name == "interval").then(|| match args::parse_time_ns(&handlers::clean(value)) {
            Ok(d) if d >= 0 => {
                self.interval = d;
                Ok(())
            }
            _ => Err("interval must be a time".into()),
        })
    }

    crate::element_any!();
}
