//! PrioSched: strict-priority pull scheduler.

use crate::prelude::*;

/// `PrioSched`.
#[derive(Default)]
pub struct PrioSched {
    signals: Vec<UpstreamSignal>,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "PrioSched",
    port_count: "-/1",
    processing: "l/l",
    group: "standard",
    signature: "PrioSched",
    summary: "Pulls from priority-scheduled inputs.",
    description: "Each time a pull comes in, pulls from its inputs in order starting at input 0 \
and returns the first packet it gets: a strict priority scheduler, input 0 first. It skips inputs \
whose upstream notifiers say they are empty, so empty queues are not pulled; pullers downstream \
see the notifiers of every input and sleep only when all are empty.",
    ports: "zero or more pull inputs, one pull output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(PrioSched::default()),
};

impl Element for PrioSched {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()
    }

    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        let n = cx.ninputs();
        if self.signals.len() != n {
            // The puller downstream registers itself on these same signals;
            // we only read them.
            self.signals = (0..n).map(|i| cx.upstream_signal_passive(i)).collect();
        }
        for i in 0..n {
            if cx.signal_active(&self.signals[i]) {
                if let Some(p) = cx.pull(i) {
                    return Some(p);
                }
            }
        }
        None
    }

    crate::element_any!();
}
