//! DelayShaper: holds each pulled packet until its timestamp plus DELAY.

use crate::common::args::delay_arg;
use crate::common::{handlers, unparse};
use crate::prelude::*;
use click_lang::args;

/// `DelayShaper(DELAY)`.
#[derive(Default)]
pub struct DelayShaper {
    delay: i64,
    held: Option<Packet>,
    signal: Option<SignalId>,
    signal_on: bool,
    upstream: Option<UpstreamSignal>,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "DelayShaper",
    port_count: "1/1",
    processing: "l/l",
    group: "standard",
    signature: "DelayShaper(DELAY)",
    summary: "Shapes traffic to meet delay requirements.",
    description: "Pulls packets from its input and delays each for at least DELAY: a packet with \
timestamp T is returned no earlier than T + DELAY (a packet without a timestamp gets the time it \
was pulled). On output, the packet's timestamp is set to the current time. At most one packet is \
held at a time; pulls return nothing until it is due. DelayShaper is an empty notifier: while it \
waits it sets a timer for the due time and tells the puller downstream to sleep until then, and \
while nothing can come from upstream it sleeps too.\n\nKeyword arguments:\n\n\
- `DELAY` (time): the delay. Mandatory.",
    ports: "one pull input, one pull output",
    handlers: &[HandlerDoc {
        name: "delay",
        mode: HandlerMode::ReadWrite,
        text: "The DELAY (`500ms`, `1.500000s`).",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(DelayShaper::default()),
};

impl DelayShaper {
    fn set_active(&mut self, on: bool, cx: &Ctx) {
        if self.signal_on != on {
            if let Some(s) = self.signal {
                self.signal_on = on;
                cx.set_signal(s, on);
            }
        }
    }
}

impl Element for DelayShaper {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        self.delay = delay_arg(config, cx)?;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        self.signal = Some(cx.new_signal(true));
        self.signal_on = true;
        Ok(())
    }

    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        if self.upstream.is_none() {
            // Our task is woken when the input's notifiers activate.
            self.upstream = Some(cx.upstream_signal(0));
        }
        if self.held.is_none() {
            if let Some(mut p) = cx.pull(0) {
                if p.timestamp().is_zero() {
                    p.set_timestamp(cx.now());
                }
                let due = p.timestamp().add_nsec(self.delay);
                p.set_timestamp(due);
                self.held = Some(p);
            }
        }
        let now = cx.now();
        match &self.held {
            Some(p) if p.timestamp() <= now => {
                let mut p = self.held.take()?;
                p.set_timestamp(now);
                Some(p)
            }
            Some(p) => {
                cx.schedule_timer_at(0, p.timestamp());
                self.set_active(false, cx);
                None
            }
            None => {
                let more = self.upstream.as_ref().is_none_or(|u| cx.signal_active(u));
                if !more {
                    self.set_active(false, cx);
                }
                None
            }
        }
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        self.set_active(true, cx);
    }

    /// Woken because a notifier upstream became active.
    fn run_task(&mut self, cx: &Ctx) -> bool {
        if self.held.is_none() {
            self.set_active(true, cx);
        }
        false
    }

    fn empty_signal(&self) -> Option<SignalId> {
        self.signal
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        (name == "delay").then(|| Ok(unparse::unparse_interval(self.delay)))
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        (name == "delay").then(|| match args::parse_time_ns(&handlers::clean(value)) {
            Ok(d) if d >= 0 => {
                self.delay = d;
                Ok(())
            }
            _ => Err("delay must be a timestamp".into()),
        })
    }

    fn cleanup(&mut self, _cx: &Ctx) {
        self.held = None;
    }

    crate::element_any!();
}
