//! DelayUnqueue: a pull-to-push converter that holds each packet until
//! DELAY after its timestamp.

use crate::common::args::delay_arg;
use crate::common::unparse;
use crate::prelude::*;

/// Packets emitted per task run at most before yielding to other tasks.
const MAX_PER_RUN: usize = 4096;

/// `DelayUnqueue(DELAY)`.
#[derive(Default)]
pub struct DelayUnqueue {
    delay: i64,
    /// The packet pulled but not yet due; its timestamp is its due time.
    held: Option<Packet>,
    signal: Option<UpstreamSignal>,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "DelayUnqueue",
    port_count: "1/1",
    processing: "l/h",
    group: "standard",
    signature: "DelayUnqueue(DELAY)",
    summary: "Delay-inducing pull-to-push converter.",
    description: "Pulls packets from its input and pushes each out once DELAY has passed since \
its timestamp annotation: a packet with timestamp T leaves no earlier than T + DELAY. A packet \
whose timestamp is unset (zero seconds) is stamped with the time it is pulled. On output the \
packet's timestamp is set to the current time. One packet is held at a time; while it waits the \
element sleeps on a timer until it is due. DelayUnqueue listens to the notifiers upstream (a \
Queue's): while nothing can come it sleeps until a packet arrives.\n\n\
Keyword arguments:\n\n\
- `DELAY` (time): the delay. Mandatory.",
    ports: "one pull input, one push output",
    handlers: &[HandlerDoc {
        name: "delay",
        mode: HandlerMode::Read,
        text: "The DELAY (`100ms`, `1.500000s`).",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(DelayUnqueue::default()),
};

impl Element for DelayUnqueue {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        self.delay = delay_arg(config, cx)?;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        cx.schedule_task();
        Ok(())
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        if self.signal.is_none() {
            self.signal = Some(cx.upstream_signal(0));
        }
        for _ in 0..MAX_PER_RUN {
            if self.held.is_none() {
                if let Some(mut p) = cx.pull(0) {
                    if p.timestamp().sec() == 0 {
                        p.set_timestamp(cx.now());
                    }
                    let due = p.timestamp().add_nsec(self.delay);
                    p.set_timestamp(due);
                    self.held = Some(p);
                }
            }
            let now = cx.now();
            match self.held.take() {
                Some(mut p) if p.timestamp() <= now => {
                    p.set_timestamp(now);
                    cx.push(0, p);
                }
                Some(p) => {
                    cx.schedule_timer_at(0, p.timestamp());
                    self.held = Some(p);
                    return false;
                }
                None => {
                    return self.signal.as_ref().is_none_or(|s| cx.signal_active(s));
                }
            }
        }
        true
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        cx.schedule_task();
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        (name == "delay").then(|| Ok(unparse::unparse_interval(self.delay)))
    }

    fn cleanup(&mut self, _cx: &Ctx) {
        self.held = None;
    }

    crate::element_any!();
}
