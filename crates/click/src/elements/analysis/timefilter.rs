//! TimeFilter: passes packets whose timestamps lie in a range.

use crate::common::handlers;
use crate::prelude::*;
use click_lang::args::{self, RawString, Seconds};

/// `TimeFilter(KEYWORDS)`.
#[derive(Default)]
pub struct TimeFilter {
    first: i64,
    last: i64,
    ready: bool,
    first_relative: bool,
    first_init_relative: bool,
    last_relative: bool,
    last_init_relative: bool,
    last_interval: bool,
    /// The END_CALL handler call (`stop` for STOP).
    last_h: Option<String>,
    last_h_ready: bool,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "TimeFilter",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "analysis",
    signature: "TimeFilter(KEYWORDS)",
    summary: "Filters packets by timestamp.",
    description: "Passes packets through only if their timestamp annotations lie within a range: \
at least the start time and less than the end time. Other packets are dropped, or pushed out \
output 1 when it exists. The range may be absolute, relative to the first packet's timestamp, \
or relative to the time the router was initialized. A zero time counts as not given (so `START \
0` means the first packet's time).\n\n\
When the first packet at or after the end time arrives, the END_CALL write handler is called \
with the variable `$t` set to that packet's timestamp. If the call moves the end time later \
(writing `extend_interval`, say), the packet is checked again, and END_CALL called again while \
the packet is still too late and the end keeps moving. STOP true is END_CALL `stop`.\n\n\
Keyword arguments (at most one START-type and one END-type):\n\n\
- `START` (time): absolute start, seconds since the epoch.\n\
- `START_AFTER` (time): start this long after the first packet's timestamp.\n\
- `START_DELAY` (time): start this long after initialization.\n\
- `END` (time): absolute end.\n\
- `END_AFTER` (time): end this long after the first packet's timestamp.\n\
- `END_DELAY` (time): end this long after initialization.\n\
- `INTERVAL` (time): end this long after the start.\n\
- `STOP` (boolean): stop the driver when the end is passed. Default false.\n\
- `END_CALL` (handler call): write handler to call when the end is passed. Not with STOP.",
    ports: "one input; output 0 for packets in range, optional push output 1 for the others",
    handlers: &[
        HandlerDoc {
            name: "start",
            mode: HandlerMode::ReadWrite,
            text: "The start time. Writing it before the first packet arrives fixes the \
relative times to it.",
        },
        HandlerDoc {
            name: "end",
            mode: HandlerMode::ReadWrite,
            text: "The end time; a write sets an absolute end and re-arms END_CALL.",
        },
        HandlerDoc {
            name: "interval",
            mode: HandlerMode::ReadWrite,
            text: "The end time minus the start time; a write sets the end to start plus the \
value and re-arms END_CALL.",
        },
        HandlerDoc {
            name: "extend_interval",
            mode: HandlerMode::Write,
            text: "Adds the written time to the end time and re-arms END_CALL.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(TimeFilter::default()),
};

fn ts(ns: i64) -> String {
    Timestamp::from_nsec(ns).to_string()
}

/// `desc` with Click's `$t` / `${t}` variable replaced by `value`.
fn substitute_t(desc: &str, value: &str) -> String {
    let b = desc.as_bytes();
    let mut out = String::with_capacity(desc.len() + value.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' {
            let rest = &desc[i + 1..];
            if rest.starts_with("{t}") {
                out.push_str(value);
                i += 4;
                continue;
            }
            let after = rest.as_bytes().get(1).copied();
            if rest.starts_with('t')
                && !matches!(after, Some(c) if c.is_ascii_alphanumeric() || c == b'_')
            {
                out.push_str(value);
                i += 2;
                continue;
            }
        }
        let c = desc[i..].chars().next().unwrap_or(' ');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

impl TimeFilter {
    fn first_packet(&mut self, tv: i64) {
        if self.first_relative {
            self.first = self.first.saturating_add(tv);
        }
        if self.last_relative {
            self.last = self.last.saturating_add(tv);
        } else if self.last_interval {
            self.last = self.last.saturating_add(self.first);
        }
        self.ready = true;
    }

    fn filter(&mut self, p: Packet, cx: &Ctx) -> Option<Packet> {
        let tv = p.timestamp().nsec();
        if !self.ready {
            self.first_packet(tv);
        }
        if tv < self.first {
            cx.push(1, p);
            return None;
        }
        if tv >= self.last && self.last_h_ready {
            if let Some(h) = self.last_h.clone() {
                let call = substitute_t(&h, &ts(tv));
                loop {
                    let prev = self.last;
                    self.last_h_ready = false;
                    handlers::call_write_desc(cx, &call);
                    // writes the call made back to us were deferred: apply
                    // them now, as Click calls them at once
                    for (name, value) in cx.take_deferred_writes_to_self() {
                        if let Some(Err(e)) = self.write_handler(&name, &value, cx) {
                            cx.error_line(&alloc::format!(
                                "While calling '{}.{}':\n  {}",
                                cx.name(),
                                name,
                                e
                            ));
                        }
                    }
                    if !(tv >= self.last && self.last_h_ready && self.last > prev) {
                        break;
                    }
                }
            }
        }
        if tv >= self.last {
            cx.push(1, p);
            None
        } else {
            Some(p)
        }
    }
}

impl Element for TimeFilter {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let get = |v: Option<Seconds>| v.map(|s| s.0).unwrap_or(0);
        let first = get(a.read_p::<Seconds>("START")?);
        let last = get(a.read_p::<Seconds>("END")?);
        let first_init = get(a.read::<Seconds>("START_DELAY")?);
        let last_init = get(a.read::<Seconds>("END_DELAY")?);
        let first_delta = get(a.read::<Seconds>("START_AFTER")?);
        let last_delta = get(a.read::<Seconds>("END_AFTER")?);
        let interval = get(a.read::<Seconds>("INTERVAL")?);
        let stop = a.read::<bool>("STOP")?.unwrap_or(false);
        let last_h = a.read::<RawString>("END_CALL")?.map(|r| r.0);
        a.complete()?;
        let set = |x: i64| usize::from(x != 0);
        if set(first) + set(first_delta) + set(first_init) > 1 {
            return Err("START, START_AFTER, and START_DELAY are mutually exclusive".into());
        }
        if set(last) + set(last_delta) + set(last_init) + set(interval) > 1 {
            return Err("END, END_AFTER, END_DELAY, and INTERVAL are mutually exclusive".into());
        }
        if last_h.is_some() && stop {
            return Err("END_CALL and STOP are mutually exclusive".into());
        }
        let mut n = TimeFilter::default();
        if first != 0 {
            n.first = first;
        } else if first_init != 0 {
            n.first = first_init;
            n.first_init_relative = true;
        } else {
            n.first = first_delta;
            n.first_relative = true;
        }
        if last != 0 {
            n.last = last;
        } else if last_delta != 0 {
            n.last = last_delta;
            n.last_relative = true;
        } else if last_init != 0 {
            n.last = last_init;
            n.last_init_relative = true;
        } else if interval != 0 {
            n.last = interval;
            n.last_interval = true;
        } else {
            n.last = i64::MAX;
        }
        n.last_h = match last_h {
            Some(h) => Some(args::uncomment(&h)),
            None if stop => Some("stop true".into()),
            None => None,
        };
        *self = n;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let now = cx.now().nsec();
        if self.first_init_relative {
            self.first = self.first.saturating_add(now);
        }
        if self.last_init_relative {
            self.last = self.last.saturating_add(now);
        }
        self.last_h_ready = self.last_h.is_some();
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    fn simple_action(&mut self, p: Packet, cx: &Ctx) -> Option<Packet> {
        self.filter(p, cx)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "start" => ts(self.first),
            "end" => ts(self.last),
            "interval" => ts(self.last.saturating_sub(self.first)),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        if !matches!(name, "start" | "end" | "interval" | "extend_interval") {
            return None;
        }
        let t = match args::parse_time_ns(&handlers::clean(value)) {
            Ok(t) => t,
            Err(_) => return Some(Err("expected time".into())),
        };
        match name {
            "start" => {
                if !self.ready {
                    self.first_packet(t);
                }
                self.first = t;
            }
            "end" => {
                self.last = t;
                self.last_relative = false;
                self.last_init_relative = false;
                self.last_interval = false;
                self.last_h_ready = true;
            }
            "interval" => {
                self.last = self.first.saturating_add(t);
                self.last_h_ready = true;
            }
            _ => {
                self.last = self.last.saturating_add(t);
                self.last_h_ready = true;
            }
        }
        Some(Ok(()))
    }

    crate::element_any!();
}

#[cfg(test)]
mod tests {
    use super::substitute_t;

    #[test]
    fn variable_substitution() {
        assert_eq!(substitute_t("s.run $t", "1.5"), "s.run 1.5");
        assert_eq!(substitute_t("s.run ${t}x", "2"), "s.run 2x");
        assert_eq!(substitute_t("s.run $tt $", "2"), "s.run $tt $");
    }
}
