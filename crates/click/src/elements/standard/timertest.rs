//! TimerTest: a timer to schedule from handlers, reporting when it fires.

use crate::common::handlers::{self, clean};
use crate::prelude::*;
use alloc::format;
use click_lang::args::{parse_time_ns, Seconds};

/// `TimerTest([DELAY, SCHEDULE])`.
#[derive(Default)]
pub struct TimerTest {
    /// The timer's expiry, kept while it is unscheduled (Click's
    /// `expiry_steady`).
    expiry: Timestamp,
    /// Scheduled at configuration (DELAY or SCHEDULE).
    initial: Option<i64>,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "TimerTest",
    port_count: "0/0",
    processing: "a/a",
    group: "test",
    signature: "TimerTest([KEYWORDS])",
    summary: "Tests timers.",
    description: "Owns one timer. When it fires, prints `EXPIRY: NAME :: TimerTest fired` \
(the timer's expiry time) to standard error. With DELAY, or SCHEDULE true, the timer is \
scheduled DELAY (default 0) after initialization. Unlike Click's TimerTest, it has no \
BENCHMARK keyword and prints nothing about Click's C++ Timer constructors.\n\n\
Keyword arguments:\n\n\
- `DELAY` (time): schedule the timer this long after initialization.\n\
- `SCHEDULE` (boolean): schedule it (after DELAY, or at once).",
    ports: "none",
    handlers: &[
        HandlerDoc {
            name: "scheduled",
            mode: HandlerMode::ReadWrite,
            text: "Whether the timer is scheduled; writing true schedules it at its last \
expiry, false unschedules it.",
        },
        HandlerDoc {
            name: "expiry",
            mode: HandlerMode::Read,
            text: "The timer's expiry.",
        },
        HandlerDoc {
            name: "schedule_after",
            mode: HandlerMode::Write,
            text: "Schedules the timer this long (a time) from now.",
        },
        HandlerDoc {
            name: "unschedule",
            mode: HandlerMode::Write,
            text: "Unschedules the timer.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: true,
    make: || Box::new(TimerTest::default()),
};

impl TimerTest {
    fn schedule_at(&mut self, t: Timestamp, cx: &Ctx) {
        self.expiry = t;
        cx.schedule_timer_at(0, t);
    }
}

impl Element for TimerTest {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let delay = a.read::<Seconds>("DELAY")?.map(|s| s.0);
        let schedule = a.read::<bool>("SCHEDULE")?.unwrap_or(false);
        a.complete()?;
        self.initial = match delay {
            Some(d) if d != 0 => Some(d),
            _ if schedule => Some(delay.unwrap_or(0)),
            _ => None,
        };
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        if let Some(d) = self.initial {
            self.schedule_at(cx.now().add_nsec(d), cx);
        }
        Ok(())
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        cx.error_line(&format!("{}: {} fired", self.expiry, cx.declaration()));
    }

    fn read_handler(&mut self, name: &str, cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "scheduled" => cx.timer_scheduled(0).to_string(),
            "expiry" => self.expiry.to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        Some(match name {
            "scheduled" => match handlers::parse_bool(value) {
                Some(true) => {
                    self.schedule_at(self.expiry, cx);
                    Ok(())
                }
                Some(false) => {
                    cx.unschedule_timer(0);
                    Ok(())
                }
                None => Err("syntax error".into()),
            },
            "schedule_after" => match parse_time_ns(&clean(value)) {
                Ok(d) => {
                    self.schedule_at(cx.now().add_nsec(d), cx);
                    Ok(())
                }
                Err(_) => Err("syntax error".into()),
            },
            "unschedule" => {
                cx.unschedule_timer(0);
                Ok(())
            }
            _ => return None,
        })
    }

    crate::element_any!();
}
