//! TimeSortedSched: merges timestamp-sorted packet streams.

use crate::prelude::*;
use crate::router::UpstreamSignal;

/// `TimeSortedSched([STOP])`.
#[derive(Default)]
pub struct TimeSortedSched {
    stop: bool,
    /// One packet held per input (the next that input offers).
    held: Vec<Option<Packet>>,
    signals: Vec<UpstreamSignal>,
    notifier: Option<SignalId>,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "TimeSortedSched",
    port_count: "-/1",
    processing: "l/l",
    group: "standard",
    signature: "TimeSortedSched(KEYWORDS)",
    summary: "Merges sorted packet streams by timestamp.",
    description: "Pulls packets from its inputs and returns them in increasing order of their \
timestamp annotations. Each input should itself be in timestamp order (FromDump, \
FromIPSummaryDump); TimeSortedSched holds one packet from every input whose upstream may have \
packets and returns the earliest. An input whose notifier says it is empty is skipped until it \
wakes.\n\n\
Keyword arguments:\n\n\
- `STOP` (boolean): ask the driver to stop when no input has a packet and no upstream \
notifier says one may come. Default false.",
    ports: "any number of pull inputs, one pull output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(TimeSortedSched::default()),
};

impl Element for TimeSortedSched {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        self.stop = a.read::<bool>("STOP")?.unwrap_or(false);
        a.complete()
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let n = cx.new_signal(true);
        self.notifier = Some(n);
        self.held = (0..cx.ninputs()).map(|_| None).collect();
        Ok(())
    }

    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        if self.signals.len() != self.held.len() {
            // found at the first pull, once every element upstream (a
            // Queue declared after this element, say) has its notifier
            let n = self.notifier?;
            self.signals = (0..self.held.len())
                .map(|i| cx.upstream_signal_dependent(i, n))
                .collect();
        }
        let mut signals_on = false;
        let mut which: Option<usize> = None;
        let mut best = Timestamp::ZERO;
        for i in 0..self.held.len() {
            if self.held[i].is_none() && cx.signal_active(&self.signals[i]) {
                self.held[i] = cx.pull(i);
                signals_on = true;
            }
            if let Some(p) = &self.held[i] {
                let t = p.timestamp();
                if which.is_none() || t < best {
                    which = Some(i);
                    best = t;
                }
            }
        }
        if let Some(n) = self.notifier {
            cx.set_signal(n, which.is_some() || signals_on);
        }
        match which {
            Some(i) => {
                let p = self.held[i].take();
                if cx.signal_active(&self.signals[i]) {
                    self.held[i] = cx.pull(i);
                }
                p
            }
            None => {
                if self.stop && !signals_on {
                    cx.please_stop_driver();
                }
                None
            }
        }
    }

    fn empty_signal(&self) -> Option<SignalId> {
        self.notifier
    }

    fn cleanup(&mut self, _cx: &Ctx) {
        self.held.clear();
    }

    crate::element_any!();
}
