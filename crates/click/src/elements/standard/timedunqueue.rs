//! TimedUnqueue and Burster: pull-to-push converters that pull a burst of
//! packets every INTERVAL.

use crate::prelude::*;
use click_lang::args::Seconds;

/// `TimedUnqueue(INTERVAL [, BURST])` and `Burster(INTERVAL [, BURST])`.
pub struct TimedUnqueue {
    /// The interval in nanoseconds, kept at millisecond precision as in
    /// Click.
    interval: i64,
    burst: u32,
    default_burst: u32,
    /// When the timer was last due, while it keeps its rhythm; `None` after
    /// the element went to sleep on an empty input.
    expiry: Option<Timestamp>,
    signal: Option<UpstreamSignal>,
}

impl TimedUnqueue {
    fn new(default_burst: u32) -> TimedUnqueue {
        TimedUnqueue {
            interval: 0,
            burst: default_burst,
            default_burst,
            expiry: None,
            signal: None,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "TimedUnqueue",
    port_count: "1/1",
    processing: "l/h",
    group: "standard",
    signature: "TimedUnqueue(INTERVAL [, BURST])",
    summary: "Pull-to-push converter pulling a burst every interval.",
    description: descriptions::TIMED,
    ports: "one pull input, one push output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(TimedUnqueue::new(1)),
};

pub static BURSTER_SPEC: ClassSpec = ClassSpec {
    name: "Burster",
    port_count: "1/1",
    processing: "l/h",
    group: "standard",
    signature: "Burster(INTERVAL [, BURST])",
    summary: "Pull-to-push converter pulling a burst every interval.",
    description: descriptions::BURSTER,
    ports: "one pull input, one push output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(TimedUnqueue::new(8)),
};

mod descriptions {
    macro_rules! desc {
        ($burst:literal, $extra:literal) => {
            concat!(
                $extra,
                "Pulls at most BURST packets from its input every INTERVAL seconds and pushes \
them out its output. The interval has millisecond precision. If the first pull of a round finds \
nothing and the notifiers upstream (a Queue's) say nothing can come, the element sleeps until a \
packet arrives and then pulls at once; otherwise it waits for the next interval. With BURST 1 \
and packets arriving more slowly than one per INTERVAL, little delay is added; otherwise packets \
may wait up to INTERVAL.\n\nKeyword arguments:\n\n\
- `INTERVAL` (time): time between bursts. Mandatory.\n\
- `BURST` (integer > 0): packets per interval. Default ",
                $burst,
                "."
            )
        };
    }
    pub const TIMED: &str = desc!("1", "");
    pub const BURSTER: &str = desc!("8", "A TimedUnqueue whose BURST defaults to 8. ");
}

impl Element for TimedUnqueue {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let interval = a.read_mp::<Seconds>("INTERVAL")?.0;
        let burst = a.read_p::<i32>("BURST")?;
        a.complete()?;
        if interval < 0 {
            return Err("INTERVAL: must be >= 0".into());
        }
        let burst = burst.unwrap_or(self.default_burst as i32);
        if burst <= 0 {
            return Err("bad BURST".into());
        }
        // Click keeps the interval in milliseconds (SecondsArg(3))
        self.interval = (interval + 500_000) / 1_000_000 * 1_000_000;
        self.burst = burst as u32;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        cx.schedule_task();
        Ok(())
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        // woken by a notifier while the timer runs: wait for the timer
        if cx.timer_scheduled(0) {
            return false;
        }
        if self.signal.is_none() {
            self.signal = Some(cx.upstream_signal(0));
        }
        let mut out = Emitter::new(cx, 0);
        for i in 0..self.burst {
            match cx.pull(0) {
                Some(p) => out.emit(cx, p),
                None => {
                    if i == 0 && !self.signal.as_ref().is_none_or(|s| cx.signal_active(s)) {
                        self.expiry = None;
                        return false;
                    }
                    break;
                }
            }
        }
        out.flush(cx);
        let next = self
            .expiry
            .unwrap_or_else(|| cx.now())
            .add_nsec(self.interval);
        self.expiry = Some(next);
        cx.schedule_timer_at(0, next);
        false
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        cx.schedule_task();
    }

    crate::element_any!();
}
