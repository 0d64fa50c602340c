//! TimedSource: pushes a packet every INTERVAL.

use crate::common::args::DEFAULT_DATA;
use crate::common::{args, handlers};
use crate::prelude::*;
use click_lang::args::Seconds;

/// `TimedSource([INTERVAL, DATA, KEYWORDS])`.
pub struct TimedSource {
    data: Vec<u8>,
    interval: i64,
    limit: i64,
    active: bool,
    stop: bool,
    headroom: usize,
    count: u64,
    /// When the timer is due; the next one is due INTERVAL after it (Click's
    /// `reschedule_after`), so the rhythm does not drift.
    expiry: Timestamp,
}

impl Default for TimedSource {
    fn default() -> Self {
        TimedSource {
            data: DEFAULT_DATA.to_vec(),
            interval: 500_000_000,
            limit: -1,
            active: true,
            stop: false,
            headroom: DEFAULT_HEADROOM,
            count: 0,
            expiry: Timestamp::ZERO,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "TimedSource",
    port_count: "0/1",
    processing: "h/h",
    group: "standard",
    signature: "TimedSource([INTERVAL, DATA, KEYWORDS])",
    summary: "Periodically generates a packet.",
    description: "Creates packets consisting of DATA and pushes one every INTERVAL seconds. \
Each packet is due INTERVAL after the previous one was due (not after it was sent), so the \
rhythm does not drift.\n\n\
Keyword arguments:\n\n\
- `INTERVAL` (time): time between packets. Default 0.5 seconds.\n\
- `DATA` (string): packet contents. Default is Click's 69-byte string.\n\
- `LIMIT` (integer): total packets; -1 (default) means no limit.\n\
- `ACTIVE` (boolean): whether to send. Default true.\n\
- `STOP` (boolean): ask the driver to stop when LIMIT is reached. Default false.\n\
- `HEADROOM` (unsigned): packet headroom.",
    ports: "no inputs, one push output",
    handlers: &[
        HandlerDoc {
            name: "data",
            mode: HandlerMode::ReadWrite,
            text: "The packet data.",
        },
        HandlerDoc {
            name: "interval",
            mode: HandlerMode::ReadWrite,
            text: "The INTERVAL value.",
        },
        HandlerDoc {
            name: "active",
            mode: HandlerMode::ReadWrite,
            text: "The ACTIVE value.",
        },
        HandlerDoc {
            name: "limit",
            mode: HandlerMode::ReadWrite,
            text: "The LIMIT value.",
        },
        HandlerDoc {
            name: "count",
            mode: HandlerMode::Read,
            text: "Packets generated so far.",
        },
        HandlerDoc {
            name: "reset",
            mode: HandlerMode::Write,
            text: "Resets count to zero and restarts the timer.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(TimedSource::default()),
};

fn unparse_interval(ns: i64) -> String {
    Timestamp::from_nsec(ns).to_string()
}

impl TimedSource {
    /// Schedules the timer INTERVAL from now.
    fn schedule_from_now(&mut self, cx: &Ctx) {
        self.expiry = cx.now().add_nsec(self.interval);
        cx.schedule_timer_at(0, self.expiry);
    }
}

impl Element for TimedSource {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let interval = a
            .read_p::<Seconds>("INTERVAL")?
            .map(|s| s.0)
            .unwrap_or(500_000_000);
        let data = args::read_data(&mut a, "DATA", true)?;
        let limit = a.read_p::<i32>("LIMIT")?.unwrap_or(-1);
        let active = a.read::<bool>("ACTIVE")?.unwrap_or(true);
        let stop = a.read::<bool>("STOP")?.unwrap_or(false);
        let headroom = a
            .read::<u32>("HEADROOM")?
            .map(|h| h as usize)
            .unwrap_or(DEFAULT_HEADROOM);
        a.complete()?;
        self.data = data.unwrap_or_else(|| DEFAULT_DATA.to_vec());
        self.interval = interval.max(0);
        self.limit = i64::from(limit);
        self.active = active;
        self.stop = stop;
        self.headroom = headroom.min(1024);
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        if self.active {
            self.schedule_from_now(cx);
        }
        Ok(())
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        if !self.active {
            return;
        }
        if self.limit < 0 || self.count < self.limit as u64 {
            let mut p = cx.pool().make(self.headroom, &self.data, 0);
            p.set_timestamp(cx.now());
            self.count += 1;
            self.expiry = self.expiry.add_nsec(self.interval);
            cx.schedule_timer_at(0, self.expiry);
            cx.push(0, p);
        } else if self.stop {
            cx.please_stop_driver();
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "data" => String::from_utf8_lossy(&self.data).into_owned(),
            "interval" => unparse_interval(self.interval),
            "active" => self.active.to_string(),
            "limit" => self.limit.to_string(),
            "count" => self.count.to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        Some(match name {
            "data" => {
                self.data = value.as_bytes().to_vec();
                Ok(())
            }
            "interval" => match click_lang::args::parse_time_ns(&handlers::clean(value)) {
                Ok(ns) => {
                    self.interval = ns.max(0);
                    Ok(())
                }
                Err(_) => Err("syntax error".into()),
            },
            "limit" => match handlers::parse_int(value) {
                Some(l) => {
                    self.limit = l;
                    Ok(())
                }
                None => Err("syntax error".into()),
            },
            "active" => match handlers::parse_bool(value) {
                Some(v) => {
                    self.active = v;
                    if v && !cx.timer_scheduled(0) {
                        self.schedule_from_now(cx);
                    } else if !v {
                        cx.unschedule_timer(0);
                    }
                    Ok(())
                }
                None => Err("syntax error".into()),
            },
            "reset" => {
                self.count = 0;
                if self.active {
                    self.schedule_from_now(cx);
                }
                Ok(())
            }
            _ => return None,
        })
    }

    crate::element_any!();
}
