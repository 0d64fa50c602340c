//! TimeSortedSched: merges timestamp-sorted packet streams.

use crate::prelude::*;
use crate::router::UpstreamSignal;

/// `TimeSortedSched([STOP, BUFFER])`.
pub struct TimeSortedSched {
    stop: bool,
    /// Packets held per input, at most this many.
    buffer: usize,
    /// Up to `buffer` packets held per input (the next that input
    /// offers); the earliest of them is that input's candidate.
    held: Vec<Vec<Packet>>,
    signals: Vec<UpstreamSignal>,
    notifier: Option<SignalId>,
    /// The timestamp of the last packet returned.
    last: Option<Timestamp>,
    /// False once a packet left earlier than the one before it.
    well_ordered: bool,
}

impl Default for TimeSortedSched {
    fn default() -> Self {
        TimeSortedSched {
            stop: false,
            buffer: 1,
            held: Vec::new(),
            signals: Vec::new(),
            notifier: None,
            last: None,
            well_ordered: true,
        }
    }
}

/// The index of the earliest packet in `v`.
fn earliest(v: &[Packet]) -> Option<usize> {
    let mut best: Option<(usize, Timestamp)> = None;
    for (i, p) in v.iter().enumerate() {
        let t = p.timestamp();
        if best.is_none_or(|(_, b)| t < b) {
            best = Some((i, t));
        }
    }
    best.map(|(i, _)| i)
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
wakes. With BUFFER greater than 1 it holds up to BUFFER packets from each input and offers the \
earliest of them, which puts slightly disordered inputs back in order.\n\n\
Keyword arguments:\n\n\
- `STOP` (boolean): ask the driver to stop when no input has a packet and no upstream \
notifier says one may come. Default false.\n\
- `BUFFER` (unsigned): packets held per input. Default 1.",
    ports: "any number of pull inputs, one pull output",
    handlers: &[HandlerDoc {
        name: "well_ordered",
        mode: HandlerMode::Read,
        text: "`true` while every packet returned was no earlier than the one before it.",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(TimeSortedSched::default()),
};

impl Element for TimeSortedSched {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let stop = a.read::<bool>("STOP")?.unwrap_or(false);
        let buffer = a.read::<u32>("BUFFER")?.unwrap_or(1);
        a.complete()?;
        if buffer == 0 {
            return Err("BUFFER must be at least 1".into());
        }
        self.stop = stop;
        self.buffer = buffer as usize;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let n = cx.new_signal(true);
        self.notifier = Some(n);
        self.held = (0..cx.ninputs()).map(|_| Vec::new()).collect();
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
        let mut which: Option<(usize, usize)> = None;
        let mut best = Timestamp::ZERO;
        for i in 0..self.held.len() {
            while self.held[i].len() < self.buffer && cx.signal_active(&self.signals[i]) {
                signals_on = true;
                match cx.pull(i) {
                    Some(p) => self.held[i].push(p),
                    None => break,
                }
            }
            if let Some(k) = earliest(&self.held[i]) {
                let t = self.held[i][k].timestamp();
                if which.is_none() || t < best {
                    which = Some((i, k));
                    best = t;
                }
            }
        }
        if let Some(n) = self.notifier {
            cx.set_signal(n, which.is_some() || signals_on);
        }
        match which {
            Some((i, k)) => {
                let p = self.held[i].swap_remove(k);
                if self.last.is_some_and(|l| best < l) {
                    self.well_ordered = false;
                }
                self.last = Some(best);
                while self.held[i].len() < self.buffer && cx.signal_active(&self.signals[i]) {
                    match cx.pull(i) {
                        Some(q) => self.held[i].push(q),
                        None => break,
                    }
                }
                Some(p)
            }
            None => {
                if self.stop && !signals_on {
                    cx.please_stop_driver();
                }
                None
            }
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "well_ordered" => Some(Ok(String::from(if self.well_ordered {
                "true"
            } else {
                "false"
            }))),
            _ => None,
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
