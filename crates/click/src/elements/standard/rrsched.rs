//! RoundRobinSched and SimpleRoundRobinSched: pull from their inputs in
//! turn.

use crate::prelude::*;

#[derive(Default)]
pub struct RoundRobinSched {
    next: usize,
    /// SimpleRoundRobinSched: takes no arguments.
    simple: bool,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "RoundRobinSched",
    port_count: "-/1",
    processing: "l/l",
    group: "standard",
    signature: "RoundRobinSched([MAX_BACKOFF])",
    summary: "Pulls from round-robin inputs.",
    description: "Each time a pull comes in, pulls from its inputs in turn, starting after the \
input that last produced a packet, and returns the first packet it gets. Pullers downstream see \
the notifiers of every input, so they sleep only when all inputs are empty.",
    ports: "zero or more pull inputs, one pull output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(RoundRobinSched::default()),
};

pub static SIMPLERRSCHED_SPEC: ClassSpec = ClassSpec {
    name: "SimpleRoundRobinSched",
    port_count: "-/1",
    processing: "l/l",
    group: "standard",
    signature: "SimpleRoundRobinSched",
    summary: "Pulls from round-robin inputs.",
    description: "Each time a pull comes in, pulls from its inputs in turn, starting after the \
input that last produced a packet, until one produces a packet, and returns it: a round-robin \
scheduler. It takes no arguments and does not use notification itself; pullers downstream see \
the notifiers of every input, so they sleep only when all inputs are empty.",
    ports: "zero or more pull inputs, one pull output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || {
        Box::new(RoundRobinSched {
            simple: true,
            ..RoundRobinSched::default()
        })
    },
};

impl Element for RoundRobinSched {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        if !self.simple {
            let _ = a.read_p::<u32>("MAX_BACKOFF")?;
        }
        a.complete()
    }

    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        let n = cx.ninputs();
        let mut i = self.next;
        for _ in 0..n {
            if i >= n {
                i = 0;
            }
            if let Some(p) = cx.pull(i) {
                self.next = i + 1;
                return Some(p);
            }
            i += 1;
        }
        None
    }

    crate::element_any!();
}
