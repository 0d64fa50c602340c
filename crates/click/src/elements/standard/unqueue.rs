//! Unqueue: pulls packets and pushes them on.

use crate::common::handlers;
use crate::prelude::*;

/// `Unqueue([BURST, KEYWORDS])`.
pub struct Unqueue {
    burst: u32,
    active: bool,
    limit: i64,
    count: u64,
    signal: Option<UpstreamSignal>,
}

impl Default for Unqueue {
    fn default() -> Self {
        Unqueue {
            burst: 1,
            active: true,
            limit: -1,
            count: 0,
            signal: None,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "Unqueue",
    port_count: "1/1",
    processing: "l/h",
    group: "standard",
    signature: "Unqueue([BURST, KEYWORDS])",
    summary: "Pull-to-push converter.",
    description: "Pulls packets whenever they are available (at most BURST per task run) and \
pushes them out its output. It sleeps while the notifiers upstream say no packets can come.\n\n\
Keyword arguments:\n\n\
- `BURST` (integer): packets per task run; 0 or negative means no limit. Default 1.\n\
- `ACTIVE` (boolean): whether to pull. Default true.\n\
- `LIMIT` (integer): stop after this many packets; negative (default) means no limit.",
    ports: "one pull input, one push output",
    handlers: &[
        HandlerDoc {
            name: "count",
            mode: HandlerMode::Read,
            text: "Packets pulled so far.",
        },
        HandlerDoc {
            name: "reset",
            mode: HandlerMode::Write,
            text: "Resets `count` to 0.",
        },
        HandlerDoc {
            name: "active",
            mode: HandlerMode::ReadWrite,
            text: "The ACTIVE value.",
        },
        HandlerDoc {
            name: "burst",
            mode: HandlerMode::ReadWrite,
            text: "The BURST value.",
        },
        HandlerDoc {
            name: "limit",
            mode: HandlerMode::ReadWrite,
            text: "The LIMIT value.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Unqueue::default()),
};

fn burst_of(b: i64) -> u32 {
    if b <= 0 {
        u32::MAX
    } else {
        b.min(i64::from(u32::MAX)) as u32
    }
}

impl Element for Unqueue {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let burst = a.read_p::<i32>("BURST")?.unwrap_or(1);
        let active = a.read::<bool>("ACTIVE")?.unwrap_or(true);
        let limit = a.read::<i64>("LIMIT")?.unwrap_or(-1);
        a.complete()?;
        self.burst = burst_of(i64::from(burst));
        self.active = active;
        self.limit = limit;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        self.count = 0;
        if self.active {
            cx.schedule_task();
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        if !self.active {
            return false;
        }
        if self.signal.is_none() {
            self.signal = Some(cx.upstream_signal(0));
        }
        let mut want = self.burst as u64;
        if self.limit >= 0 {
            want = want.min((self.limit as u64).saturating_sub(self.count));
            if want == 0 {
                return false;
            }
        }
        let mut out = Emitter::new(cx, 0);
        let mut worked = 0u64;
        while worked < want {
            match cx.pull(0) {
                Some(p) => {
                    worked += 1;
                    // counted as it goes, as in Click (a handler called
                    // downstream sees the packet counted)
                    self.count += 1;
                    out.emit(cx, p);
                }
                None => break,
            }
        }
        out.flush(cx);
        if worked > 0 {
            return true;
        }
        match &self.signal {
            Some(s) => cx.signal_active(s),
            None => true,
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "count" => self.count.to_string(),
            "active" => self.active.to_string(),
            "burst" => {
                if self.burst == u32::MAX {
                    "0".into()
                } else {
                    self.burst.to_string()
                }
            }
            "limit" => self.limit.to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        let r = match name {
            "reset" => {
                self.count = 0;
                Ok(())
            }
            "active" => handlers::parse_bool(value)
                .map(|v| self.active = v)
                .ok_or("syntax error"),
            "burst" => handlers::parse_int(value)
                .map(|v| self.burst = burst_of(v))
                .ok_or("syntax error"),
            "limit" => handlers::parse_int(value)
                .map(|v| self.limit = v)
                .ok_or("syntax error"),
            _ => return None,
        };
        if r.is_ok() && self.active {
            cx.schedule_task();
        }
        Some(r.map_err(String::from))
    }

    crate::element_any!();
}
