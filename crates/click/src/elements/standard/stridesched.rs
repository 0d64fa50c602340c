//! StrideSched and StrideSwitch: stride scheduling among ports.

use crate::common::handlers;
use crate::prelude::*;
use alloc::format;

/// Click's STRIDE1: a client's stride is STRIDE1 / tickets.
const STRIDE1: u32 = 1 << 16;
/// Click's MAX_TICKETS.
const MAX_TICKETS: i64 = 1 << 15;

#[derive(Clone, Default)]
struct Client {
    tickets: u32,
    stride: u32,
    pass: u32,
}

impl Client {
    fn set_tickets(&mut self, t: u32) {
        self.tickets = t;
        self.stride = STRIDE1.checked_div(t).unwrap_or(0);
    }
}

/// Click's PASS_GT: `a` is later than `b`, modulo wraparound.
fn pass_gt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// `StrideSched(TICKETS0, ..., TICKETSn-1)` and `StrideSwitch(...)`.
pub struct StrideSched {
    /// StrideSwitch: schedule push outputs instead of pull inputs.
    switch: bool,
    clients: Vec<Client>,
    /// Ports with tickets, in stride-queue order (smallest pass first;
    /// on ties, the lower port first).
    list: Vec<usize>,
    signals: Vec<UpstreamSignal>,
}

impl StrideSched {
    fn new(switch: bool) -> StrideSched {
        StrideSched {
            switch,
            clients: Vec::new(),
            list: Vec::new(),
            signals: Vec::new(),
        }
    }

    /// Inserts port `c` before the first listed client whose pass is not
    /// earlier than its own.
    fn insert(&mut self, c: usize) {
        let pass = self.clients[c].pass;
        let at = self
            .list
            .iter()
            .position(|&x| !pass_gt(pass, self.clients[x].pass))
            .unwrap_or(self.list.len());
        self.list.insert(at, c);
    }

    fn port_word(&self) -> &'static str {
        if self.switch {
            "output"
        } else {
            "input"
        }
    }

    /// Click's `set_tickets` (the `ticketsN` write handler).
    fn set_tickets(&mut self, port: usize, tickets: i64, cx: &Ctx) -> Result<(), String> {
        if port >= self.clients.len() {
            return Err(format!("port {} out of range", port));
        }
        if tickets < 0 {
            return Err("number of tickets must be >= 0".into());
        }
        let tickets = if tickets > MAX_TICKETS {
            cx.error_line(&format!(
                "{}: port {}'s tickets reduced to {}",
                cx.declaration(),
                port,
                MAX_TICKETS
            ));
            MAX_TICKETS
        } else {
            tickets
        } as u32;
        let old = self.clients[port].tickets;
        self.clients[port].set_tickets(tickets);
        if tickets == 0 && old != 0 {
            self.list.retain(|&x| x != port);
        } else if tickets != 0 && old == 0 {
            let base = self.list.first().map(|&h| self.clients[h].pass);
            self.clients[port].pass = match base {
                Some(b) => b.wrapping_add(self.clients[port].stride),
                None => 0,
            };
            self.insert(port);
        }
        Ok(())
    }
}

const DESCRIPTION: &str = "Has one output and N inputs, and performs packet-based stride \
scheduling among the inputs, giving TICKETSi tickets to input i (an input's share of the pulls \
it wins is proportional to its tickets). Each pull on the output pulls the inputs in the order \
of the stride queue until one produces a packet; every input tried (whether or not it had a \
packet) advances by its stride, and an input that produced nothing is not tried again for that \
pull. Inputs whose upstream notifiers say they are empty are not pulled (but still advance). An \
input with 0 tickets is never pulled. Tickets above 32768 are reduced to 32768.\n\n\
Handlers `tickets0` ... `ticketsN-1` (read/write) return or set an input's tickets.\n\n\
Arguments:\n\n\
- `TICKETS0` ... `TICKETSn-1` (integer >= 0): one per input.";

const SWITCH_DESCRIPTION: &str = "Has one push input and N outputs, and sends each packet to \
one output chosen by stride scheduling: output i gets a share of the packets proportional to \
TICKETSi. Each packet goes to the output at the head of the stride queue, which then advances \
by its stride. An output with 0 tickets gets nothing. Tickets above 32768 are reduced to \
32768.\n\n\
Handlers `tickets0` ... `ticketsN-1` (read/write) return or set an output's tickets.\n\n\
Arguments:\n\n\
- `TICKETS0` ... `TICKETSn-1` (integer >= 0): one per output.";

pub static SPEC: ClassSpec = ClassSpec {
    name: "StrideSched",
    port_count: "1-/1",
    processing: "l/l",
    group: "standard",
    signature: "StrideSched(TICKETS0, ..., TICKETSn-1)",
    summary: "Pulls from stride-scheduled inputs.",
    description: DESCRIPTION,
    ports: "one or more pull inputs, one pull output",
    handlers: &[],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(StrideSched::new(false)),
};

pub static STRIDESWITCH_SPEC: ClassSpec = ClassSpec {
    name: "StrideSwitch",
    port_count: "1/1-",
    processing: "h/h",
    group: "standard",
    signature: "StrideSwitch(TICKETS0, ..., TICKETSn-1)",
    summary: "Sends packets to stride-scheduled outputs.",
    description: SWITCH_DESCRIPTION,
    ports: "one push input, one or more push outputs",
    handlers: &[],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(StrideSched::new(true)),
};

impl Element for StrideSched {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let conf = click_lang::args::split_args(config);
        let n = if self.switch { cx.noutputs } else { cx.ninputs };
        if conf.len() != n {
            return Err(format!(
                "need {} arguments, one per {} port",
                n,
                self.port_word()
            ));
        }
        let first = self.clients.is_empty();
        let mut clients = if first {
            alloc::vec![Client::default(); n]
        } else {
            self.clients.clone()
        };
        let mut errs = Vec::new();
        for (i, arg) in conf.iter().enumerate() {
            match click_lang::args::parse_i64(arg) {
                Err(_) => errs.push(format!(
                    "argument {} should be number of tickets (integer)",
                    i
                )),
                Ok(v) if v < 0 => {
                    errs.push(format!("argument {} (number of tickets) must be >= 0", i))
                }
                Ok(v) => {
                    let v = if v > MAX_TICKETS {
                        cx.warning(&format!(
                            "{} {}'s tickets reduced to {}",
                            self.port_word(),
                            i,
                            MAX_TICKETS
                        ));
                        MAX_TICKETS
                    } else {
                        v
                    };
                    clients[i].set_tickets(v as u32);
                    if first {
                        clients[i].pass = clients[i].stride;
                    }
                }
            }
        }
        if !errs.is_empty() {
            return Err(errs.join("\n"));
        }
        self.clients = clients;
        self.list.clear();
        for i in (0..n).rev() {
            if self.clients[i].tickets > 0 {
                self.insert(i);
            }
        }
        Ok(())
    }

    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        let n = self.clients.len();
        if self.signals.len() != n {
            self.signals = (0..n).map(|i| cx.upstream_signal_passive(i)).collect();
        }
        let mut p = None;
        let mut tried = 0;
        while tried < self.list.len() && p.is_none() {
            let c = self.list[tried];
            if cx.signal_active(&self.signals[c]) {
                p = cx.pull(c);
            }
            let cl = &mut self.clients[c];
            cl.pass = cl.pass.wrapping_add(cl.stride);
            tried += 1;
        }
        // reinsert the clients tried, in order, behind the rest
        let stridden: Vec<usize> = self.list.drain(..tried).collect();
        for c in stridden {
            self.insert(c);
        }
        p
    }

    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        if self.list.is_empty() {
            return;
        }
        let c = self.list.remove(0);
        let cl = &mut self.clients[c];
        cl.pass = cl.pass.wrapping_add(cl.stride);
        self.insert(c);
        cx.push(c, p);
    }

    fn instance_handlers(&self) -> Vec<(String, HandlerMode)> {
        (0..self.clients.len())
            .map(|i| (format!("tickets{}", i), HandlerMode::ReadWrite))
            .collect()
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        let port: usize = name.strip_prefix("tickets")?.parse().ok()?;
        let c = self.clients.get(port)?;
        Some(Ok(c.tickets.to_string()))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        let port: usize = name.strip_prefix("tickets")?.parse().ok()?;
        if port >= self.clients.len() {
            return None;
        }
        Some(match handlers::parse_int(value) {
            Some(t) => self.set_tickets(port, t, cx),
            None => Err("tickets value must be integer".into()),
        })
    }

    fn current_config(&self) -> Option<String> {
        Some(
            self.clients
                .iter()
                .map(|c| c.tickets.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        )
    }

    crate::element_any!();
}
