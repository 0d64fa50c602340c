//! Switch, StaticSwitch, PullSwitch, RoundRobinSwitch, HashSwitch.

use crate::common::handlers;
use crate::prelude::*;

fn read_k(config: &str, kw: &str, n: usize) -> Result<i64, String> {
    let mut a = Args::new(config);
    let k = a.read_p::<i32>(kw)?.unwrap_or(0);
    a.complete()?;
    Ok(if k < 0 || k as usize >= n {
        -1
    } else {
        i64::from(k)
    })
}

fn write_k(value: &str, n: usize, what: &str) -> Result<i64, String> {
    match handlers::parse_int(value) {
        Some(k) if k >= 0 && (k as usize) < n => Ok(k),
        Some(_) => Ok(-1),
        None => Err(alloc::format!("{} must be integer", what)),
    }
}

/// `Switch([OUTPUT])` and `StaticSwitch(OUTPUT)`.
#[derive(Default)]
pub struct Switch {
    output: i64,
    /// StaticSwitch: no `switch` handler (its output is fixed).
    fixed: bool,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "Switch",
    port_count: "1/-",
    processing: "h/h",
    group: "standard",
    signature: "Switch([OUTPUT])",
    summary: "Sends packet stream to settable output.",
    description: "Sends every packet out output OUTPUT (default 0). A negative OUTPUT, or one \
that names no output, drops packets. The `switch` handler changes the output at run time.\n\n\
LLRPCs (ControlSocket's `LLRPC`): `CLICK_LLRPC_GET_SWITCH` (`#4004C005`) returns the output as \
a 4-byte integer in host byte order; `CLICK_LLRPC_SET_SWITCH` (`#80044006`) sets it from one \
(EINVAL when it is not below the number of outputs; negative drops).",
    ports: "one input, one or more outputs",
    handlers: &[HandlerDoc {
        name: "switch",
        mode: HandlerMode::ReadWrite,
        text: "The current output (-1: drop).",
    }],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(Switch::default()),
};

pub static STATICSWITCH_SPEC: ClassSpec = ClassSpec {
    name: "StaticSwitch",
    port_count: "1/-",
    processing: "h/h",
    group: "standard",
    signature: "StaticSwitch(OUTPUT)",
    summary: "Sends packet stream to fixed output.",
    description: "Sends every packet out output OUTPUT. A negative OUTPUT, or one that names no \
output, drops packets.",
    ports: "one input, one or more outputs",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || {
        Box::new(Switch {
            fixed: true,
            ..Switch::default()
        })
    },
};

impl Element for Switch {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        self.output = read_k(config, "OUTPUT", cx.noutputs)?;
        Ok(())
    }

    #[inline]
    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        if self.output >= 0 {
            cx.push(self.output as usize, p);
        }
    }

    #[inline]
    fn push_batch(&mut self, _port: usize, b: Batch, cx: &Ctx) {
        if self.output >= 0 {
            cx.push_batch(self.output as usize, b);
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        (name == "switch" && !self.fixed).then(|| Ok(self.output.to_string()))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        (name == "switch" && !self.fixed)
            .then(|| write_k(value, cx.noutputs(), "Switch output").map(|k| self.output = k))
    }

    fn llrpc(&mut self, command: u32, data: &mut [u8], lx: &LlrpcCtx) -> Result<(), i32> {
        use crate::common::llrpc;
        match command {
            llrpc::SET_SWITCH if !self.fixed => {
                let v = llrpc::get_i32(data).ok_or(llrpc::EINVAL)?;
                if v >= 0 && v as usize >= lx.noutputs {
                    return Err(llrpc::EINVAL);
                }
                self.output = i64::from(v);
                Ok(())
            }
            llrpc::GET_SWITCH if !self.fixed => {
                if llrpc::put_i32(data, self.output as i32) {
                    Ok(())
                } else {
                    Err(llrpc::EINVAL)
                }
            }
            _ => Err(llrpc::EINVAL),
        }
    }

    fn current_config(&self) -> Option<String> {
        Some(self.output.to_string())
    }

    crate::element_any!();
}

/// `PullSwitch([INPUT])`: pulls from one input, with a notifier.
#[derive(Default)]
pub struct PullSwitch {
    input: i64,
    /// The notifier downstream pullers wait on: active while the selected
    /// input may have packets.
    notifier: Option<SignalId>,
    /// Each input's upstream signal.
    signals: Vec<UpstreamSignal>,
}

pub static PULLSWITCH_SPEC: ClassSpec = ClassSpec {
    name: "PullSwitch",
    port_count: "-/1",
    processing: "l/l",
    group: "standard",
    signature: "PullSwitch([INPUT])",
    summary: "Forwards pull requests to settable input.",
    description: "On every pull, pulls a packet from input INPUT (default 0) and returns it. A \
negative INPUT, or one that names no input, returns nothing. PullSwitch has an empty notifier, \
as Click's: pullers downstream sleep while the selected input has nothing (it is inactive with \
no input selected, and follows the selected input's queues), and wake when the switch selects \
an input that may have packets.",
    ports: "zero or more pull inputs, one pull output",
    handlers: &[HandlerDoc {
        name: "switch",
        mode: HandlerMode::ReadWrite,
        text: "The current input (-1: none).",
    }],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(PullSwitch::default()),
};

impl PullSwitch {
    fn set_input(&mut self, k: i64, cx: &Ctx) {
        self.input = k;
        let Some(n) = self.notifier else {
            return;
        };
        if k < 0 {
            cx.set_signal(n, false);
        } else if self
            .signals
            .get(k as usize)
            .is_some_and(|s| cx.signal_active(s))
        {
            cx.set_signal(n, true);
        }
    }
}

impl Element for PullSwitch {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        self.input = read_k(config, "INPUT", cx.ninputs)?;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let n = cx.new_signal(self.input >= 0);
        self.notifier = Some(n);
        self.signals = (0..cx.ninputs())
            .map(|i| cx.upstream_signal_dependent(i, n))
            .collect();
        Ok(())
    }

    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        if self.input < 0 {
            // an input's queue filling woke the notifier: back to sleep, or
            // the puller would spin on a switch that selects nothing
            if let Some(n) = self.notifier {
                cx.set_signal(n, false);
            }
            return None;
        }
        let i = self.input as usize;
        match cx.pull(i) {
            Some(p) => {
                if let Some(n) = self.notifier {
                    cx.set_signal(n, true);
                }
                Some(p)
            }
            None => {
                if let Some(n) = self.notifier {
                    if !self.signals.get(i).is_some_and(|s| cx.signal_active(s)) {
                        cx.set_signal(n, false);
                    }
                }
                None
            }
        }
    }

    fn empty_signal(&self) -> Option<SignalId> {
        self.notifier
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        (name == "switch").then(|| Ok(self.input.to_string()))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        (name == "switch").then(|| {
            write_k(value, cx.ninputs(), "PullSwitch input").map(|k| self.set_input(k, cx))
        })
    }

    fn current_config(&self) -> Option<String> {
        Some(self.input.to_string())
    }

    crate::element_any!();
}

/// `SimplePullSwitch([INPUT])`: pulls from one input, without a notifier.
#[derive(Default)]
pub struct SimplePullSwitch {
    input: i64,
}

pub static SIMPLEPULLSWITCH_SPEC: ClassSpec = ClassSpec {
    name: "SimplePullSwitch",
    port_count: "-/1",
    processing: "l/l",
    group: "standard",
    signature: "SimplePullSwitch([INPUT])",
    summary: "Forwards pull requests to settable input.",
    description: "On every pull, pulls a packet from input INPUT (default 0) and returns it. A \
negative INPUT, or one that names no input, returns nothing. Unlike PullSwitch it has no \
notifier of its own: pullers downstream see the notifiers of all its inputs.",
    ports: "zero or more pull inputs, one pull output",
    handlers: &[HandlerDoc {
        name: "switch",
        mode: HandlerMode::ReadWrite,
        text: "The current input (-1: none).",
    }],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(SimplePullSwitch::default()),
};

impl Element for SimplePullSwitch {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        self.input = read_k(config, "INPUT", cx.ninputs)?;
        Ok(())
    }

    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        if self.input < 0 {
            None
        } else {
            cx.pull(self.input as usize)
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        (name == "switch").then(|| Ok(self.input.to_string()))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        (name == "switch").then(|| {
            match handlers::parse_int(value) {
                Some(k) if k >= 0 && (k as usize) < cx.ninputs() => Ok(k),
                Some(_) => Ok(-1),
                None => Err(alloc::string::String::from("syntax error")),
            }
            .map(|k| self.input = k)
        })
    }

    fn current_config(&self) -> Option<String> {
        Some(self.input.to_string())
    }

    crate::element_any!();
}

/// `RoundRobinSwitch`: sends packets to the outputs in turn.
#[derive(Default)]
pub struct RoundRobinSwitch {
    next: usize,
}

pub static RRSWITCH_SPEC: ClassSpec = ClassSpec {
    name: "RoundRobinSwitch",
    port_count: "1/1-",
    processing: "h/h",
    group: "standard",
    signature: "RoundRobinSwitch",
    summary: "Sends packets to round-robin outputs.",
    description: "Pushes each arriving packet out one of its outputs: the first packet out \
output 0, the next out output 1, and so on, wrapping around.",
    ports: "one input, one or more outputs",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(RoundRobinSwitch::default()),
};

impl Element for RoundRobinSwitch {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()
    }

    #[inline]
    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        let i = self.next;
        self.next += 1;
        if self.next >= cx.noutputs() {
            self.next = 0;
        }
        cx.push(i, p);
    }

    crate::element_any!();
}

/// `HashSwitch(OFFSET, LENGTH)`: chooses the output from a hash of bytes.
#[derive(Default)]
pub struct HashSwitch {
    offset: usize,
    length: usize,
}

pub static HASHSWITCH_SPEC: ClassSpec = ClassSpec {
    name: "HashSwitch",
    port_count: "1/1-",
    processing: "h/h",
    group: "standard",
    signature: "HashSwitch(OFFSET, LENGTH)",
    summary: "Classifies packets by hash of contents.",
    description: "Sums the LENGTH bytes starting at OFFSET and picks the output from the sum, as \
Click does: `(d ^ (d >> 4)) & (N - 1)` for 2, 4 or 8 outputs, `d % N` otherwise. Packets too \
short for the range go to output 0.",
    ports: "one input, one or more outputs",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(HashSwitch::default()),
};

impl Element for HashSwitch {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let offset = a.read_mp::<u32>("OFFSET")?;
        let length = a.read_mp::<u32>("LENGTH")?;
        a.complete()?;
        if length == 0 {
            return Err("length must be > 0".into());
        }
        self.offset = offset as usize;
        self.length = length as usize;
        Ok(())
    }

    #[inline]
    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        let (o, l) = (self.offset, self.length);
        let d = p.data();
        if d.len() < o + l {
            cx.push(0, p);
            return;
        }
        let sum: usize = d[o..o + l].iter().map(|&b| b as usize).sum();
        let n = cx.noutputs();
        let out = if n == 2 || n == 4 || n == 8 {
            (sum ^ (sum >> 4)) & (n - 1)
        } else {
            sum % n
        };
        cx.push(out, p);
    }

    crate::element_any!();
}
