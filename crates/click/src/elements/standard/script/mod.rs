//! Script and DriverManager: Click's scripting element.
//!
//! The element is here; its parts are in `insn.rs` (the instruction set
//! and its parser), `run.rs` (the interpreter), `expand.rs` (`$VAR` and
//! `$(HANDLER)` expansion, handler calls) and `expr.rs` (the Script's own
//! read handlers: arithmetic, comparisons, `sprintf`, ...).

mod expand;
mod expr;
mod insn;
mod run;

use crate::prelude::*;
use alloc::format;
use click_lang::args::{self, RawString};
use insn::{parse_signal, Insn, Op};
use run::{Errh, Step};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ty {
    Active,
    Passive,
    Proxy,
    Driver,
    /// `TYPE PACKET`: runs once per packet; the return value picks the output.
    Packet,
    /// `TYPE SIGNAL SIGNO...`: runs when one of the signals arrives.
    Signal,
}

/// `Script(INSTRUCTIONS...)`, also `DriverManager(INSTRUCTIONS...)`.
pub struct Script {
    ty: Ty,
    insns: Vec<Insn>,
    vars: Vec<(String, String)>,
    pos: usize,
    step_count: i64,
    write_status: i64,
    run_args: String,
    run_name: String,
    run_write: bool,
    seed: u64,
    /// TYPE SIGNAL: the signals it runs on.
    signals: Vec<i32>,
    /// Runs in progress, one inside the other (`$(run)` in the script).
    run_depth: u32,
}

impl Script {
    fn new(ty: Ty) -> Script {
        Script {
            ty,
            insns: Vec::new(),
            vars: Vec::new(),
            pos: 0,
            step_count: 0,
            write_status: 0,
            run_args: String::new(),
            run_name: String::new(),
            run_write: false,
            seed: 0x2545_F491_4F6C_DD1D,
            signals: Vec::new(),
            run_depth: 0,
        }
    }
}

/// Click's private read handlers (`Handler::h_read_private`): `cat`
/// reads any file and `kill` signals any process, so only the script
/// itself reaches them (`$(cat F)`, `$(kill 15 $pid)`, `read kill ...`).
/// From outside the configuration (a ControlSocket, `clickos run -h`,
/// the instance mailbox) they do not exist, as Click's ControlSocket
/// answers for a handler that is not visible. (Click also lets another
/// element of the configuration call them; here calls from elements and
/// from outside take the same path through the router, so they stay the
/// script's own.)
fn is_private(h: &str) -> bool {
    matches!(h, "cat" | "kill")
}

const DESCRIPTION: &str = "Runs a script of instructions, one per argument.\n\n\
Instructions: `set VAR EXPR`, `setq VAR EXPR` (unquoted), `init VAR EXPR`, `export VAR EXPR` \
(also a read handler), `print [>FILE|>>FILE] TEXT|HANDLER`, `printq`, `printn`, `printnq`, \
`save HANDLER FILE` and `append HANDLER FILE` (a read handler's value into FILE, `-` for \
standard output), \
`read HANDLER [ARGS]`, `readq`, `write HANDLER [ARGS]`, `writeq`, `wait TIME`, `wait` / `pause` \
(wait for a step), `wait_step [N]`, `wait_stop [N]`, `wait_time TIME`, `label L`, \
`goto L [COND]`, `loop`, `return [VALUE]`, `end`, `exit`, `stop`, `error [MSG]`.\n\n\
Expressions: `$VAR`, `${VAR}`, `$(HANDLER [ARGS])` (for example `$(c.count)`, `$(add $x 1)`, \
`$(sub ...)`, `$(mul ...)`, `$(div ...)`, `$(idiv ...)`, `$(mod ...)`, `$(min/max ...)`, \
`$(neg/abs X)`, `$(eq/ne/lt/gt/le/ge A B)`, `$(not X)`, `$(and/or ...)`, `$(if C A B)`, \
`$(in X ...)`, `$(first ...)`, `$(length ...)`, `$(unquote ...)`, `$(sprintf FMT ...)`, \
`$(now)`, `$(random [N1 [N2]])`, `$(get VAR)`, `$(shift VAR)` (removes and returns VAR's first \
word), `$(cat FILE)` (the contents of FILE; only the script itself can call it), \
`$(S.run ARGS)` (runs Script S with `$1`... set to ARGS and returns its `return` value), \
`$(kill SIGNO PID...)` (sends a signal; only the script itself can call it)), `$?` (last \
write status), `$args`, `$0`..`$9`, `$$` (the process id).\n\n\
Keyword `TYPE`: `ACTIVE` (default: runs at initialization), `PASSIVE` (runs only through \
handlers), `PROXY` (any unknown write handler runs the script, with `$0` the handler name and \
`$args` the value), `DRIVER` (manages stop requests, like DriverManager), `PACKET` (runs once \
for every packet, with `$input` the input port; `return N` sends the packet to output N, `end` \
to output 0, `exit` or any other outcome drops it), `SIGNAL SIGNO...` (runs when one of the \
signals arrives, named as `INT`, `SIGUSR1` or by number; while a SIGNAL script waits for a \
signal, the driver does not apply the signal's default action, such as stopping on INT. A script \
that ends with `end` waits for the next signal; one that ends otherwise, with `exit` say, does \
not, and the next such signal has its default effect). Only PACKET scripts may have ports; a \
Script with ports and no TYPE is a PACKET script.\n\n\
Limits: a value (a variable, an expansion, a handler's result) holds at most the router's \
handler value limit (16 MiB), and one that would grow past it is an error and empty; \
`sprintf` field widths and precisions are at most 4096; `run` nests at most 8 deep. Integer \
arithmetic that overflows goes on in floating point, as numbers too large for an integer do; \
`idiv` and `mod` by zero are errors.";

const HANDLERS: &[HandlerDoc] = &[
    HandlerDoc {
        name: "step",
        mode: HandlerMode::Write,
        text: "Advances past N waits (default 1); `router` acts as a stop request.",
    },
    HandlerDoc {
        name: "goto",
        mode: HandlerMode::Write,
        text: "Jumps to a label and runs.",
    },
    HandlerDoc {
        name: "run",
        mode: HandlerMode::ReadWrite,
        text: "Runs the script from the start; a read returns the `return` value.",
    },
    HandlerDoc {
        name: "now",
        mode: HandlerMode::Read,
        text: "The current time.",
    },
    HandlerDoc {
        name: "set",
        mode: HandlerMode::Write,
        text: "`VAR VALUE`: sets a variable.",
    },
];

pub static SPEC: ClassSpec = ClassSpec {
    name: "Script",
    port_count: "-/-",
    processing: "a/a",
    group: "standard",
    signature: "Script(INSTRUCTIONS...)",
    summary: "Script a Click router configuration.",
    description: DESCRIPTION,
    ports: "none, except for TYPE PACKET: any number of inputs and outputs",
    handlers: HANDLERS,
    live_reconfigure: false,
    order_sensitive: true,
    make: || Box::new(Script::new(Ty::Active)),
};

pub static DRIVERMANAGER_SPEC: ClassSpec = ClassSpec {
    name: "DriverManager",
    port_count: "0/0",
    processing: "a/a",
    group: "standard",
    signature: "DriverManager(INSTRUCTIONS...)",
    summary: "A Script that manages driver stop events.",
    description: "A Script of type DRIVER. Each stop request (`please_stop_driver`, from sources \
with STOP true or a write to the global `stop` handler) advances it past one `wait_stop` (or \
`pause`); when it reaches `stop` or the end, the router stops. The default script is \
`wait_stop; stop`, so the first stop request stops the router. Instructions are Script's, \
plus `wait_pause` as a synonym of `wait_stop`.",
    ports: "none",
    handlers: HANDLERS,
    live_reconfigure: false,
    order_sensitive: true,
    make: || Box::new(Script::new(Ty::Driver)),
};

impl Element for Script {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let type_arg = a.read::<RawString>("TYPE")?;
        let conf = a.rest();
        let mut ty = self.ty;
        let mut signals: Vec<i32> = Vec::new();
        let type_arg_missing = type_arg.is_none();
        if let Some(RawString(t)) = type_arg {
            let mut t = t;
            let w = args::shift_word(&mut t);
            ty = match (w.as_str(), t.is_empty()) {
                ("ACTIVE", true) => Ty::Active,
                ("PASSIVE", true) => Ty::Passive,
                ("PROXY", true) => Ty::Proxy,
                ("DRIVER", true) => Ty::Driver,
                ("PACKET", true) => Ty::Packet,
                ("SIGNAL", false) => {
                    for w in args::split_words(&t) {
                        match parse_signal(&w) {
                            Some(n) => signals.push(n),
                            None => return Err(format!("bad signal number '{w}'")),
                        }
                    }
                    Ty::Signal
                }
                ("", _) => ty,
                _ => return Err("bad TYPE".into()),
            };
        }
        if type_arg_missing && ty == Ty::Active && (cx.ninputs > 0 || cx.noutputs > 0) {
            // as in Click: a Script with ports is a PACKET script
            ty = Ty::Packet;
        }
        if ty != Ty::Packet && (cx.ninputs > 0 || cx.noutputs > 0) {
            return Err("ports allowed only on PACKET scripts".into());
        }
        let mut s = Script::new(ty);
        s.signals = signals;
        s.parse_instructions(conf)?;
        *self = s;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        self.pos = 0;
        self.step_count = 0;
        let mut e = Errh::new(cx);
        for i in 0..self.insns.len() {
            let op = self.insns[i].op;
            if matches!(op, Op::Init | Op::Export | Op::InitQ | Op::ExportQ) {
                let t = self.insns[i].text.clone();
                let mut v = self.expand(&t, false, cx, &mut e, 0);
                if matches!(op, Op::InitQ | Op::ExportQ) {
                    v = args::unquote(&v);
                }
                let idx = self.insns[i].arg;
                self.set_var(idx, v);
            }
        }
        if self.ty == Ty::Driver {
            cx.become_driver_manager();
        }
        let first = self.insns[0].op;
        if self.ty == Ty::Signal {
            for &n in &self.signals {
                if !cx.catch_signal(n) {
                    return Err("TYPE SIGNAL needs a driver with signals ('clickos run')".into());
                }
            }
        }
        match self.ty {
            Ty::Passive | Ty::Proxy | Ty::Packet | Ty::Signal => {}
            _ if first == Op::WaitTime => {
                let t = self.insns[0].text.clone();
                let t = self.expand(&t, false, cx, &mut e, 0);
                match args::parse_time_ns(&args::uncomment(&t)) {
                    Ok(ns) => cx.schedule_timer_after(0, ns.max(0)),
                    Err(_) => return Err("syntax error at 'wait'".into()),
                }
            }
            Ty::Driver if first == Op::Initial => {
                cx.adjust_runcount(-1);
                cx.schedule_task();
                self.insns[0].arg = 1;
            }
            _ if first == Op::Initial => {
                cx.schedule_timer_after(0, 0);
                self.insns[0].arg = 1;
            }
            _ => {}
        }
        Ok(())
    }

    fn push(&mut self, port: usize, p: Packet, cx: &Ctx) {
        if let Some(out) = self.run_packet(port, cx) {
            if out < cx.noutputs() {
                cx.push(out, p);
            }
        }
    }

    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        let p = cx.pull(0)?;
        match self.run_packet(0, cx) {
            Some(0) => Some(p),
            Some(out) if out < cx.noutputs() => {
                cx.push(out, p);
                None
            }
            _ => None,
        }
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        let mut e = Errh::new(cx);
        self.step(1, Step::Timer, 0, cx, &mut e);
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        if self.ty == Ty::Driver && cx.runcount() <= 0 {
            let mut e = Errh::bare();
            self.step(1, Step::Router, 0, cx, &mut e);
            if cx.runcount() <= 0 {
                cx.stop_router();
            }
        }
        false
    }

    fn read_handler(&mut self, name: &str, cx: &Ctx) -> Option<HandlerResult<String>> {
        if name == "run" {
            return Some(self.run_from_start(name, "", false, cx));
        }
        for (k, insn) in self.insns.iter().enumerate() {
            let _ = k;
            if matches!(insn.op, Op::Export | Op::ExportQ) {
                if let Some((n, v)) = self.vars.get(insn.arg as usize) {
                    if n == name {
                        return Some(Ok(v.clone()));
                    }
                }
            }
        }
        if is_private(name) {
            return None;
        }
        self.own_read(name, "", cx)
    }

    fn read_handler_param(
        &mut self,
        name: &str,
        param: &str,
        cx: &Ctx,
    ) -> Option<HandlerResult<String>> {
        if is_private(name) {
            return None;
        }
        self.own_read(name, param, cx)
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "step" => {
                let data = args::uncomment(value);
                let (n, st) = if data == "router" {
                    (1, Step::Router)
                } else if data.is_empty() {
                    (1, Step::Normal)
                } else {
                    match args::parse_i64(&data) {
                        Ok(n) => (n, Step::Normal),
                        Err(_) => return Some(Err("syntax error".into())),
                    }
                };
                self.run_name = name.into();
                self.run_args = String::new();
                self.run_write = true;
                let mut e = Errh::new(cx);
                self.step(n, st, 0, cx, &mut e);
                Some(Ok(()))
            }
            "goto" => {
                let label = args::uncomment(value);
                let t = self.find_label(&label);
                if t < 0 || t >= self.insns.len() as i64 {
                    return Some(Err("jump to nonexistent label".into()));
                }
                for i in t as usize..self.insns.len() {
                    if self.insns[i].op == Op::WaitStep {
                        self.insns[i].arg2 = 0;
                    }
                }
                self.pos = t as usize;
                let mut e = Errh::new(cx);
                self.step(0, Step::Jump, 0, cx, &mut e);
                Some(Ok(()))
            }
            "run" => {
                if let Err(m) = self.run_from_start(name, value, true, cx) {
                    return Some(Err(m));
                }
                // a SIGNAL script that reached `end` waits for the next one
                if self.ty == Ty::Signal
                    && matches!(self.insns.get(self.pos).map(|i| i.op), Some(Op::End))
                {
                    for &n in &self.signals {
                        cx.catch_signal(n);
                    }
                }
                Some(Ok(()))
            }
            "set" => {
                let mut v = value.to_string();
                let var = args::shift_word(&mut v);
                if var.is_empty() {
                    return Some(Err("no variable".into()));
                }
                if v.len() > cx.max_handler_value() {
                    return Some(Err("value too large".into()));
                }
                let i = self.find_var(&var, true).unwrap_or(0);
                self.vars[i].1 = v;
                Some(Ok(()))
            }
            _ if self.ty == Ty::Proxy => {
                Some(self.run_from_start(name, value, true, cx).map(|_| ()))
            }
            _ => None,
        }
    }

    crate::element_any!();
}
