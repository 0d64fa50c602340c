//! Script and DriverManager: Click's scripting element.

use super::util;
use crate::prelude::*;
use alloc::format;
use click_lang::args::{self, RawString};

const MAX_JUMPS: u32 = 1000;

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

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    Initial,
    WaitStep,
    WaitTime,
    Print,
    PrintQ,
    PrintN,
    PrintNQ,
    Read,
    ReadQ,
    Write,
    WriteQ,
    Save,
    Append,
    Set,
    SetQ,
    Init,
    InitQ,
    Export,
    ExportQ,
    Return,
    ReturnQ,
    Goto,
    Label,
    End,
    Exit,
    Stop,
    Error,
    ErrorQ,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    Timer,
    Router,
    Normal,
    Jump,
}

#[derive(Clone, Debug)]
struct Insn {
    op: Op,
    /// Goto target (negative: a finishing instruction), variable index,
    /// or wait count.
    arg: i64,
    arg2: i64,
    text: String,
}

/// Goto targets that name finishing instructions.
const T_END: i64 = -1;
const T_EXIT: i64 = -2;
const T_STOP: i64 = -3;
const T_ERROR: i64 = -4;

/// Errors reported while the script runs, under Click's context line.
struct Errh {
    context: String,
    shown: bool,
    count: usize,
}

impl Errh {
    fn new(cx: &Ctx) -> Errh {
        Errh {
            context: format!("While executing '{}':", cx.declaration()),
            shown: false,
            count: 0,
        }
    }
    fn error(&mut self, cx: &Ctx, msg: &str) {
        if !self.shown {
            cx.error_line(&self.context);
            self.shown = true;
        }
        for l in msg.lines() {
            cx.error_line(&format!("  {}", l));
        }
        self.count += 1;
    }
    fn nested(&mut self, cx: &Ctx, ctx: &str, msg: &str) {
        if !self.shown {
            cx.error_line(&self.context);
            self.shown = true;
        }
        cx.error_line(&format!("  {}", ctx));
        for l in msg.lines() {
            cx.error_line(&format!("    {}", l));
        }
        self.count += 1;
    }
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
        }
    }
}

/// Linux's signal numbers, by Click's names (with or without `SIG`).
const SIGNALS: &[(&str, i32)] = &[
    ("HUP", 1),
    ("INT", 2),
    ("QUIT", 3),
    ("ILL", 4),
    ("TRAP", 5),
    ("ABRT", 6),
    ("BUS", 7),
    ("FPE", 8),
    ("KILL", 9),
    ("USR1", 10),
    ("SEGV", 11),
    ("USR2", 12),
    ("PIPE", 13),
    ("ALRM", 14),
    ("TERM", 15),
    ("CHLD", 17),
    ("CONT", 18),
    ("STOP", 19),
    ("TSTP", 20),
    ("TTIN", 21),
    ("TTOU", 22),
    ("URG", 23),
    ("XCPU", 24),
    ("XFSZ", 25),
    ("VTALRM", 26),
    ("PROF", 27),
    ("WINCH", 28),
    ("IO", 29),
    ("POLL", 29),
    ("PWR", 30),
    ("SYS", 31),
];

/// A signal number from `INT`, `SIGINT` or `2`.
fn parse_signal(w: &str) -> Option<i32> {
    if let Ok(n) = args::parse_i64(w) {
        return (1..=64).contains(&n).then_some(n as i32);
    }
    let name = w.strip_prefix("SIG").unwrap_or(w);
    SIGNALS.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
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
`$(kill SIGNO PID...)` (sends a signal)), `$?` (last write status), `$args`, `$0`..`$9`, `$$` \
(the process id).\n\n\
Keyword `TYPE`: `ACTIVE` (default: runs at initialization), `PASSIVE` (runs only through \
handlers), `PROXY` (any unknown write handler runs the script, with `$0` the handler name and \
`$args` the value), `DRIVER` (manages stop requests, like DriverManager), `PACKET` (runs once \
for every packet, with `$input` the input port; `return N` sends the packet to output N, `end` \
to output 0, `exit` or any other outcome drops it), `SIGNAL SIGNO...` (runs when one of the \
signals arrives, named as `INT`, `SIGUSR1` or by number; while a SIGNAL script waits for a \
signal, the driver does not apply the signal's default action, such as stopping on INT. A script \
that ends with `end` waits for the next signal; one that ends otherwise, with `exit` say, does \
not, and the next such signal has its default effect). Only PACKET scripts may have ports; a \
Script with ports and no TYPE is a PACKET script.";

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

fn op_named(name: &str) -> Option<Op> {
    Some(match name {
        "end" => Op::End,
        "error" => Op::Error,
        "errorq" => Op::ErrorQ,
        "exit" => Op::Exit,
        "export" => Op::Export,
        "exportq" => Op::ExportQ,
        "goto" => Op::Goto,
        "init" => Op::Init,
        "initq" => Op::InitQ,
        "label" => Op::Label,
        "print" => Op::Print,
        "printn" => Op::PrintN,
        "printnq" => Op::PrintNQ,
        "printq" => Op::PrintQ,
        "read" => Op::Read,
        "readq" => Op::ReadQ,
        "return" => Op::Return,
        "returnq" => Op::ReturnQ,
        "set" => Op::Set,
        "setq" => Op::SetQ,
        "stop" => Op::Stop,
        "write" => Op::Write,
        "save" => Op::Save,
        "append" => Op::Append,
        "writeq" => Op::WriteQ,
        "wait_for" | "wait_time" => Op::WaitTime,
        "pause" | "wait_step" | "wait_stop" | "wait_pause" => Op::WaitStep,
        _ => return None,
    })
}

fn is_num_start(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn unparse_bool(b: bool) -> String {
    String::from(if b { "true" } else { "false" })
}

enum Num {
    I(i64),
    D(f64),
}

fn parse_num(w: &str) -> Option<Num> {
    if let Ok(i) = args::parse_i64(w) {
        return Some(Num::I(i));
    }
    args::parse_f64(w).ok().map(Num::D)
}

impl Script {
    fn add_insn(&mut self, op: Op, arg: i64, text: String) {
        if self.insns.is_empty() && !matches!(op, Op::Initial | Op::WaitStep | Op::WaitTime) {
            self.insns.push(Insn {
                op: Op::Initial,
                arg: 0,
                arg2: 0,
                text: String::new(),
            });
        }
        self.insns.push(Insn {
            op,
            arg,
            arg2: 0,
            text,
        });
    }

    fn find_label(&self, label: &str) -> i64 {
        if let Some(i) = self
            .insns
            .iter()
            .position(|x| x.op == Op::Label && x.text == label)
        {
            return i as i64;
        }
        match label {
            "end" => T_END,
            "exit" => T_EXIT,
            "stop" => T_STOP,
            "error" | "errorq" => T_ERROR,
            "begin" | "loop" => 0,
            _ => self.insns.len() as i64,
        }
    }

    fn find_var(&mut self, name: &str, add: bool) -> Option<usize> {
        if let Some(i) = self.vars.iter().position(|(n, _)| n == name) {
            return Some(i);
        }
        if add {
            self.vars.push((name.to_string(), String::new()));
            return Some(self.vars.len() - 1);
        }
        None
    }

    // ---- expansion ----------------------------------------------------

    /// Click's `cp_expand` with the Script's variable expander.
    fn expand(
        &mut self,
        s: &str,
        expand_quote: bool,
        cx: &Ctx,
        e: &mut Errh,
        depth: u32,
    ) -> String {
        if !s.contains('$') {
            return s.to_string();
        }
        let b = s.as_bytes();
        let end = b.len();
        let mut out = String::new();
        let mut unint = 0usize;
        let mut quote = 0u8;
        let mut i = 0usize;
        'scan: while i < end {
            match b[i] {
                b'\\' if i + 1 < end && quote == b'"' => i += 1,
                b'\'' | b'"' => {
                    if quote == 0 {
                        quote = b[i];
                    } else if quote == b[i] {
                        quote = 0;
                    }
                }
                b'/' if i + 1 < end && (b[i + 1] == b'/' || b[i + 1] == b'*') && quote == 0 => {
                    i = args::skip_comment_space(s, i);
                    continue;
                }
                b'$' if i + 1 < end && quote != b'\'' && depth <= 10 => {
                    let before = i;
                    let vtype;
                    let mut expand_vname = false;
                    let vname: String;
                    if b[i + 1] == b'{' {
                        vtype = b'{';
                        i += 2;
                        let cstart = i;
                        while i < end && b[i] != b'}' {
                            if b[i] == b'$' {
                                expand_vname = true;
                            }
                            i += 1;
                        }
                        if i == end {
                            break 'scan;
                        }
                        vname = s[cstart..i].to_string();
                        i += 1;
                    } else if b[i + 1] == b'(' {
                        vtype = b'(';
                        i += 2;
                        let cstart = i;
                        let mut level = 1;
                        let mut nq = 0u8;
                        while i < end && level > 0 {
                            match b[i] {
                                b'(' if nq == 0 => level += 1,
                                b')' if nq == 0 => level -= 1,
                                b'"' | b'\'' => {
                                    if nq == 0 {
                                        nq = b[i];
                                    } else if nq == b[i] {
                                        nq = 0;
                                    }
                                }
                                b'\\' if i + 1 < end && nq != b'\'' => i += 1,
                                b'$' if nq != b'\'' => expand_vname = true,
                                _ => {}
                            }
                            i += 1;
                        }
                        if level > 0 || i == cstart {
                            break 'scan;
                        }
                        vname = s[cstart..i - 1].to_string();
                    } else if is_num_start(b[i + 1]) {
                        vtype = b'a';
                        i += 1;
                        let cstart = i;
                        while i < end && is_num_start(b[i]) {
                            i += 1;
                        }
                        vname = s[cstart..i].to_string();
                    } else if matches!(b[i + 1], b'?' | b'#' | b'$') {
                        vtype = b'a';
                        vname = s[i + 1..i + 2].to_string();
                        i += 2;
                    } else {
                        i += 1;
                        continue;
                    }
                    out.push_str(&s[unint..before]);
                    let vname = if expand_vname {
                        self.expand(&vname, false, cx, e, depth + 1)
                    } else {
                        vname
                    };
                    unint = i;
                    match self.expand_var(&vname, vtype, cx, e) {
                        None => {
                            if expand_vname {
                                out.push(b[before] as char);
                                out.push(b[before + 1] as char);
                                out.push_str(&vname);
                                out.push(b[i - 1] as char);
                            } else {
                                unint = before;
                            }
                        }
                        Some(text) => {
                            if quote == b'"' || (expand_quote && quote == 0) {
                                let q = args::quote(&text);
                                let inner = if q.starts_with('"') && q.len() >= 2 {
                                    &q[1..q.len() - 1]
                                } else {
                                    &q[..]
                                };
                                if quote == b'"' {
                                    out.push_str(inner);
                                } else {
                                    out.push('"');
                                    out.push_str(inner);
                                    out.push('"');
                                }
                            } else {
                                out.push_str(&text);
                            }
                        }
                    }
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        if out.is_empty() {
            return s.to_string();
        }
        out.push_str(&s[unint.min(end)..]);
        out
    }

    fn expand_var(&mut self, vname: &str, vtype: u8, cx: &Ctx, e: &mut Errh) -> Option<String> {
        if let Some(i) = self.find_var(vname, false) {
            return Some(self.vars[i].1.clone());
        }
        match vname {
            "?" => return Some(self.write_status.to_string()),
            "args" => return Some(self.run_args.clone()),
            "$" => return Some(cx.pid().unwrap_or(0).to_string()),
            "0" => return Some(self.run_name.clone()),
            "#" => return Some(args::split_words(&self.run_args).len().to_string()),
            "write" => return Some(unparse_bool(self.run_write)),
            _ => {}
        }
        if vname
            .as_bytes()
            .first()
            .is_some_and(|c| (b'1'..=b'9').contains(c))
        {
            if let Ok(n) = vname.parse::<usize>() {
                let words = args::split_words(&self.run_args);
                return Some(words.get(n - 1).cloned().unwrap_or_default());
            }
        }
        if vtype == b'(' {
            return self.call_read_desc(vname, false, cx, e);
        }
        None
    }

    // ---- handler calls ------------------------------------------------

    /// Splits `[elem.]handler rest` and tells whether it names this script.
    fn own_handler<'b>(&self, hname: &'b str, cx: &Ctx) -> Option<&'b str> {
        match hname.rfind('.') {
            None => Some(hname),
            Some(0) => None,
            Some(d) => {
                let ename = &hname[..d];
                if ename == cx.name() {
                    Some(&hname[d + 1..])
                } else {
                    None
                }
            }
        }
    }

    fn call_read_desc(
        &mut self,
        desc: &str,
        unquote: bool,
        cx: &Ctx,
        e: &mut Errh,
    ) -> Option<String> {
        let mut rest = String::from(desc);
        let hname = args::shift_word(&mut rest);
        let param = if unquote { args::unquote(&rest) } else { rest };
        if hname.is_empty() {
            e.error(cx, "empty handler name");
            return None;
        }
        if let Some(h) = self.own_handler(&hname, cx) {
            if let Some(r) = self.own_read(h, &param, cx) {
                return match r {
                    Ok(v) => Some(v),
                    Err(m) => {
                        e.nested(cx, &format!("While calling '{}':", hname), &m);
                        Some(String::new())
                    }
                };
            }
        }
        let r = if param.is_empty() {
            cx.call_read(&hname)
        } else {
            match cx.call_read_param(&hname, &param) {
                Err(HandlerError::NoSuchHandler(_)) if cx.call_read(&hname).is_ok() => {
                    e.error(
                        cx,
                        &format!("read handler '{}' does not take parameters", hname),
                    );
                    return None;
                }
                r => r,
            }
        };
        match r {
            Ok(v) => Some(v),
            Err(HandlerError::NoSuchElement(el)) => {
                e.error(cx, &format!("no element named '{}'", el));
                None
            }
            Err(HandlerError::NoSuchHandler(_)) | Err(HandlerError::PermissionDenied(_)) => {
                e.error(cx, &format!("no '{}' read handler", hname));
                None
            }
            Err(HandlerError::Failed(m)) => {
                e.nested(cx, &format!("While calling '{}':", hname), &m);
                Some(String::new())
            }
            Err(err) => {
                e.error(cx, &err.to_string());
                None
            }
        }
    }

    fn call_write_desc(&mut self, desc: &str, unquote: bool, cx: &Ctx, e: &mut Errh) {
        let mut rest = String::from(desc);
        let hname = args::shift_word(&mut rest);
        let value = if unquote { args::unquote(&rest) } else { rest };
        if hname.is_empty() {
            e.error(cx, "empty handler name");
            return;
        }
        if hname == "stop" {
            let n = args::parse_i64(value.trim()).unwrap_or(1).max(1);
            for _ in 0..n {
                cx.please_stop_driver();
            }
            self.write_status = 0;
            return;
        }
        if let Some(h) = self.own_handler(&hname, cx) {
            if h == "set" {
                let mut v = value.clone();
                let var = args::shift_word(&mut v);
                if var.is_empty() {
                    e.nested(cx, &format!("While calling '{}':", hname), "no variable");
                    self.write_status = -22;
                } else {
                    let i = self.find_var(&var, true).unwrap_or(0);
                    self.vars[i].1 = v;
                    self.write_status = 0;
                }
                return;
            }
        }
        match cx.call_write(&hname, &value) {
            Ok(()) => self.write_status = 0,
            Err(HandlerError::NoSuchElement(el)) => {
                e.error(cx, &format!("no element named '{}'", el))
            }
            Err(HandlerError::NoSuchHandler(_)) | Err(HandlerError::PermissionDenied(_)) => {
                e.error(cx, &format!("no '{}' write handler", hname))
            }
            Err(HandlerError::Failed(m)) => {
                e.nested(cx, &format!("While calling '{}':", hname), &m);
                self.write_status = -22;
            }
            Err(err) => {
                e.error(cx, &err.to_string());
                self.write_status = -16;
            }
        }
    }

    /// The Script's own read handlers that take parameters.
    fn own_read(&mut self, h: &str, param: &str, cx: &Ctx) -> Option<Result<String, String>> {
        let words = || args::split_words(param);
        Some(match h {
            "add" | "sub" | "min" | "max" | "mul" | "div" | "idiv" => arith(h, &words()),
            "mod" | "rem" => {
                let w = words();
                if w.len() != 2 {
                    Err("expected two numbers".into())
                } else {
                    match (args::parse_i64(&w[0]), args::parse_i64(&w[1])) {
                        (Ok(a), Ok(b)) => {
                            if b == 0 {
                                Err("division by zero".into())
                            } else {
                                Ok(a.wrapping_rem(b).to_string())
                            }
                        }
                        _ if h == "rem" => match (args::parse_f64(&w[0]), args::parse_f64(&w[1])) {
                            (Ok(a), Ok(b)) => Ok(util::fmt_double(a % b)),
                            _ => Err("expected two numbers".into()),
                        },
                        _ => Err("expected two numbers".into()),
                    }
                }
            }
            "neg" | "abs" => match parse_num(param.trim()) {
                Some(Num::I(x)) => Ok((if h == "neg" || x < 0 {
                    x.wrapping_neg()
                } else {
                    x
                })
                .to_string()),
                Some(Num::D(x)) => Ok(util::fmt_double(if h == "neg" { -x } else { x.abs() })),
                None => Err("expected one number".into()),
            },
            "eq" | "ne" | "lt" | "gt" | "le" | "ge" => {
                let w = words();
                if w.len() != 2 {
                    Err("expected two numbers".into())
                } else {
                    let ord = match (args::parse_i64(&w[0]), args::parse_i64(&w[1])) {
                        (Ok(a), Ok(b)) => a.partial_cmp(&b),
                        _ => match (args::parse_f64(&w[0]), args::parse_f64(&w[1])) {
                            (Ok(a), Ok(b)) => a.partial_cmp(&b),
                            _ => Some(args::unquote(&w[0]).cmp(&args::unquote(&w[1]))),
                        },
                    };
                    use core::cmp::Ordering::*;
                    let r = match (h, ord) {
                        ("eq", Some(Equal)) => true,
                        ("ne", o) => o != Some(Equal),
                        ("lt", Some(Less)) => true,
                        ("gt", Some(Greater)) => true,
                        ("le", Some(Less | Equal)) => true,
                        ("ge", Some(Greater | Equal)) => true,
                        _ => false,
                    };
                    Ok(unparse_bool(r))
                }
            }
            "not" => match args::parse_bool(param.trim()) {
                Ok(b) => Ok(unparse_bool(!b)),
                Err(_) => Err("syntax error".into()),
            },
            "and" | "or" | "nand" | "nor" => {
                let zero = h == "and" || h == "nand";
                let mut cur = zero;
                let mut ok = true;
                for w in words() {
                    if cur != zero {
                        break;
                    }
                    match args::parse_bool(&w) {
                        Ok(x) => cur = if zero { cur && x } else { cur || x },
                        Err(_) => {
                            ok = false;
                            break;
                        }
                    }
                }
                if !ok {
                    Err("syntax error".into())
                } else {
                    Ok(unparse_bool(if h == "nand" || h == "nor" {
                        !cur
                    } else {
                        cur
                    }))
                }
            }
            "if" => {
                let mut rest = String::from(param);
                let c = args::shift_word(&mut rest);
                match args::parse_bool(&c) {
                    Ok(true) => Ok(args::shift_word(&mut rest)),
                    Ok(false) => {
                        args::shift_word(&mut rest);
                        Ok(args::shift_word(&mut rest))
                    }
                    Err(_) => Err("syntax error".into()),
                }
            }
            "in" => {
                let w = words();
                let r = match w.split_first() {
                    Some((x, rest)) => {
                        let x = args::unquote(x);
                        rest.iter().any(|y| args::unquote(y) == x)
                    }
                    None => false,
                };
                Ok(unparse_bool(r))
            }
            "first" => Ok(words().into_iter().next().unwrap_or_default()),
            "length" => Ok(param.len().to_string()),
            "unquote" => Ok(args::unquote(param)),
            "now" => Ok(cx.now().to_string()),
            "random" => {
                self.seed ^= self.seed << 13;
                self.seed ^= self.seed >> 7;
                self.seed ^= self.seed << 17;
                let r = (self.seed >> 33) as u32;
                let w = words();
                let p = |s: &str| {
                    args::parse_u64(s)
                        .ok()
                        .filter(|v| *v <= u64::from(u32::MAX))
                };
                match w.len() {
                    0 => Ok((r & 0x7FFF_FFFF).to_string()),
                    1 => match p(&w[0]) {
                        Some(n) if n > 0 => Ok((u64::from(r) % n).to_string()),
                        _ => Err("bad N".into()),
                    },
                    2 => match (p(&w[0]), p(&w[1])) {
                        (Some(a), Some(b)) if b >= a => {
                            Ok((a + u64::from(r) % (b - a + 1)).to_string())
                        }
                        _ => Err("bad N".into()),
                    },
                    _ => Err("too many arguments".into()),
                }
            }
            "htons" | "ntohs" => match args::parse_i64(param.trim()) {
                Ok(x) => Ok((x as u16).swap_bytes().to_string()),
                Err(_) => Err("syntax error".into()),
            },
            "htonl" | "ntohl" => match args::parse_i64(param.trim()) {
                Ok(x) => Ok((x as u32).swap_bytes().to_string()),
                Err(_) => Err("syntax error".into()),
            },
            "sprintf" => sprintf(param),
            "get" => {
                let w = words();
                match w.len() {
                    0 => Err("no variable".into()),
                    1 => {
                        if w[0] == "args" {
                            Ok(self.run_args.clone())
                        } else {
                            match self.find_var(&w[0], false) {
                                Some(i) => Ok(self.vars[i].1.clone()),
                                None => Err(format!("undefined variable '{}'", w[0])),
                            }
                        }
                    }
                    _ => Err("too many arguments".into()),
                }
            }
            "shift" => {
                let w = words();
                if w.len() != 1 {
                    Err("syntax error".into())
                } else {
                    match self.find_var(&w[0], false) {
                        Some(i) => Ok(args::shift_word(&mut self.vars[i].1)),
                        None => Err(format!("undefined variable '{}'", w[0])),
                    }
                }
            }
            "run" => Ok(self.run_from_start("run", param, false, cx)),
            "kill" => {
                let w = words();
                let Some(signo) = w.first().and_then(|s| parse_signal(s)) else {
                    return Some(Err("bad SIGNO".into()));
                };
                for pid in &w[1..] {
                    let Ok(pid) = args::parse_i64(pid) else {
                        return Some(Err("bad PID".into()));
                    };
                    if let Err(e) = cx.kill(signo, pid) {
                        return Some(Err(e));
                    }
                }
                Ok(String::new())
            }
            // private: only the script itself can read files
            "cat" => {
                let file = args::uncomment(param);
                if file.is_empty() {
                    Err("expected filename".into())
                } else {
                    cx.read_file(&file)
                }
            }
            _ => return None,
        })
    }

    /// Whether `h` is one of the Script's own read handlers (for the name
    /// `read` prints: `script.h`, as Click's `unparse_name` does).
    fn is_own_read(h: &str) -> bool {
        matches!(
            h,
            "add"
                | "sub"
                | "min"
                | "max"
                | "mul"
                | "div"
                | "idiv"
                | "mod"
                | "rem"
                | "neg"
                | "abs"
                | "eq"
                | "ne"
                | "lt"
                | "gt"
                | "le"
                | "ge"
                | "not"
                | "and"
                | "or"
                | "nand"
                | "nor"
                | "if"
                | "in"
                | "first"
                | "length"
                | "unquote"
                | "now"
                | "random"
                | "htons"
                | "ntohs"
                | "htonl"
                | "ntohl"
                | "sprintf"
                | "get"
                | "shift"
                | "run"
                | "kill"
                | "cat"
        )
    }

    // ---- running ------------------------------------------------------

    fn set_var(&mut self, idx: i64, v: String) {
        if let Some(slot) = self.vars.get_mut(idx as usize) {
            slot.1 = v;
        }
    }

    fn step(&mut self, nsteps: i64, st: Step, mut njumps: u32, cx: &Ctx, e: &mut Errh) -> u32 {
        let nsteps = nsteps + self.step_count;
        while nsteps - self.step_count >= 0 && self.pos < self.insns.len() && njumps < MAX_JUMPS {
            let ipos = self.pos;
            self.pos += 1;
            let op = self.insns[ipos].op;
            match op {
                Op::Stop => {
                    self.step_count += 1;
                    self.pos -= 1;
                    if st != Step::Router {
                        cx.please_stop_driver();
                    }
                    return njumps + 1;
                }
                Op::WaitStep => {
                    let insn = &mut self.insns[ipos];
                    while self.step_count < nsteps && insn.arg2 < insn.arg {
                        insn.arg2 += 1;
                        self.step_count += 1;
                    }
                    if self.step_count == nsteps && insn.arg2 < insn.arg {
                        self.pos -= 1;
                        break;
                    }
                }
                Op::WaitTime => {
                    if self.step_count == nsteps {
                        let t = self.insns[ipos].text.clone();
                        let t = self.expand(&t, false, cx, e, 0);
                        match args::parse_time_ns(&args::uncomment(&t)) {
                            Ok(ns) => {
                                cx.schedule_timer_after(0, ns.max(0));
                                self.pos -= 1;
                            }
                            Err(_) => e.error(cx, "syntax error at 'wait'"),
                        }
                        break;
                    }
                    self.step_count += 1;
                    cx.unschedule_timer(0);
                }
                Op::Initial => {
                    if self.insns[ipos].arg != 0 {
                        self.step_count += 1;
                        self.insns[ipos].arg = 0;
                    }
                }
                Op::Print | Op::PrintQ | Op::PrintN | Op::PrintNQ => {
                    let mut text = self.insns[ipos].text.clone();
                    // `print >FILE TEXT` truncates FILE first, `>>FILE` appends
                    let mut target: Option<(String, bool)> = None;
                    if let Some(rest) = text.strip_prefix('>') {
                        let append = rest.starts_with('>');
                        let mut rest = String::from(if append { &rest[1..] } else { rest });
                        let file = args::shift_word(&mut rest);
                        text = rest;
                        if !file.is_empty() && file != "-" {
                            target = Some((file, append));
                        }
                    }
                    let before = e.count;
                    let first = text.as_bytes().first().copied();
                    let mut result = if first
                        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'@' || c == b'_')
                    {
                        let desc = self.expand(&text, false, cx, e, 0);
                        self.call_read_desc(&desc, matches!(op, Op::PrintQ | Op::PrintNQ), cx, e)
                            .unwrap_or_default()
                    } else {
                        let x = self.expand(&text, true, cx, e, 0);
                        args::unquote(&x)
                    };
                    if e.count == before
                        && !result.ends_with('\n')
                        && matches!(op, Op::Print | Op::PrintQ)
                    {
                        result.push('\n');
                    }
                    match target {
                        Some((file, append)) => {
                            if let Err(msg) = cx.write_file(&file, append, &result) {
                                e.error(cx, &msg);
                            }
                        }
                        None => cx.stdout(&result),
                    }
                }
                Op::Read | Op::ReadQ => {
                    let t = self.insns[ipos].text.clone();
                    let desc = self.expand(&t, false, cx, e, 0);
                    if let Some(v) = self.call_read_desc(&desc, op == Op::ReadQ, cx, e) {
                        let mut name = desc.clone();
                        let mut name = args::shift_word(&mut name);
                        if !name.contains('.') && Self::is_own_read(&name) {
                            name = format!("{}.{}", cx.name(), name);
                        }
                        cx.error_line(&format!("{}:\n{}", name, v));
                    }
                }
                Op::Save | Op::Append => {
                    // `save HANDLER [ARGS] FILE`: the read handler's value
                    // into FILE (truncated, or appended to); `-` is
                    // standard output
                    let t = self.insns[ipos].text.clone();
                    let desc = self.expand(&t, false, cx, e, 0);
                    let desc = args::uncomment(&desc);
                    let (desc, file) = match desc.trim_end().rsplit_once(char::is_whitespace) {
                        Some((d, f)) => (d.trim_end().to_string(), f.to_string()),
                        None => (String::new(), String::new()),
                    };
                    if desc.is_empty() {
                        e.error(
                            cx,
                            &format!(
                                "syntax error at '{}'",
                                if op == Op::Save { "save" } else { "append" }
                            ),
                        );
                    } else if let Some(mut v) = self.call_read_desc(&desc, false, cx, e) {
                        if !v.is_empty() && !v.ends_with('\n') {
                            v.push('\n');
                        }
                        if file == "-" {
                            cx.stdout(&v);
                        } else if let Err(msg) = cx.write_file(&file, op == Op::Append, &v) {
                            e.error(cx, &msg);
                        }
                    }
                }
                Op::Write | Op::WriteQ => {
                    let t = self.insns[ipos].text.clone();
                    let desc = self.expand(&t, false, cx, e, 0);
                    self.call_write_desc(&desc, op == Op::WriteQ, cx, e);
                }
                Op::Return | Op::ReturnQ | Op::Set | Op::SetQ => {
                    let t = self.insns[ipos].text.clone();
                    let mut v = self.expand(&t, false, cx, e, 0);
                    if matches!(op, Op::SetQ | Op::ReturnQ) {
                        v = args::unquote(&v);
                    }
                    let idx = self.insns[ipos].arg;
                    self.set_var(idx, v);
                    if matches!(op, Op::Return | Op::ReturnQ) && self.pos == ipos + 1 {
                        self.pos -= 1;
                        break;
                    }
                }
                Op::Goto => {
                    let t = self.insns[ipos].text.clone();
                    let cond_text = self.expand(&t, false, cx, e, 0);
                    let cond_text = args::uncomment(&cond_text);
                    let cond = if cond_text.is_empty() {
                        Ok(true)
                    } else {
                        args::parse_bool(&cond_text)
                    };
                    match cond {
                        Err(_) => e.error(cx, &format!("bad condition '{}'", cond_text)),
                        Ok(true) => {
                            let target = self.insns[ipos].arg;
                            if target < 0 {
                                self.pos -= 1;
                                return njumps + 1;
                            }
                            for i in target as usize..ipos {
                                if self.insns[i].op == Op::WaitStep {
                                    self.insns[i].arg2 = 0;
                                }
                            }
                            self.pos = target as usize;
                        }
                        Ok(false) => {}
                    }
                }
                Op::Error | Op::ErrorQ => {
                    let t = self.insns[ipos].text.clone();
                    let mut msg = self.expand(&t, false, cx, e, 0);
                    if op == Op::ErrorQ {
                        msg = args::unquote(&msg);
                    }
                    if !msg.is_empty() {
                        e.error(cx, &msg);
                    }
                    self.pos -= 1;
                    return njumps + 1;
                }
                Op::End | Op::Exit => {
                    self.pos -= 1;
                    return njumps + 1;
                }
                Op::Label | Op::Init | Op::InitQ | Op::Export | Op::ExportQ => {}
            }
            if self.pos != ipos + 1 {
                njumps += 1;
            }
        }
        if njumps >= MAX_JUMPS {
            cx.error_line(&format!("{}: too many jumps, giving up", cx.declaration()));
            self.pos = self.insns.len();
            cx.unschedule_timer(0);
        }
        if st == Step::Router {
            cx.adjust_runcount(1);
        }
        njumps + 1
    }

    /// The `return` value of the last run, if it ended at a return.
    fn complete_step(&self) -> String {
        match self.insns.get(self.pos) {
            Some(i) if matches!(i.op, Op::Return | Op::ReturnQ) => self
                .vars
                .iter()
                .find(|(n, _)| n == "_")
                .map(|(_, v)| v.clone())
                .unwrap_or_default(),
            _ => String::new(),
        }
    }

    /// TYPE PACKET: runs the script for a packet that arrived on `port`
    /// (`$input`); the output is the `return` value, 0 at `end` (or the
    /// end of the script), none after `exit` or anything else.
    fn run_packet(&mut self, port: usize, cx: &Ctx) -> Option<usize> {
        let i = self.find_var("input", true).unwrap_or(0);
        self.vars[i].1 = port.to_string();
        self.pos = 0;
        let mut e = Errh::new(cx);
        self.step(0, Step::Jump, 0, cx, &mut e);
        let out = match self.insns.get(self.pos).map(|i| i.op) {
            Some(Op::End) => String::from("0"),
            _ => self.complete_step(),
        };
        args::parse_i64(&args::uncomment(&out))
            .ok()
            .and_then(|n| usize::try_from(n).ok())
    }

    fn run_from_start(&mut self, name: &str, value: &str, write: bool, cx: &Ctx) -> String {
        self.run_name = name.to_string();
        self.run_args = value.to_string();
        self.run_write = write;
        self.pos = 0;
        let mut e = Errh::new(cx);
        self.step(0, Step::Jump, 0, cx, &mut e);
        self.complete_step()
    }
}

fn arith(what: &str, words: &[String]) -> Result<String, String> {
    let unit = matches!(what, "add" | "sub");
    let mut acc: i64 = if unit { 0 } else { 1 };
    let mut dacc: f64 = acc as f64;
    let mut use_d = matches!(what, "div" | "idiv");
    for (k, w) in words.iter().enumerate() {
        let first = k == 0;
        if !use_d {
            if let Ok(a) = args::parse_i64(w) {
                acc = if first {
                    a
                } else {
                    match what {
                        "add" => acc.wrapping_add(a),
                        "sub" => acc.wrapping_sub(a),
                        "min" => acc.min(a),
                        "max" => acc.max(a),
                        _ => acc.wrapping_mul(a),
                    }
                };
                continue;
            }
            use_d = true;
            dacc = acc as f64;
        }
        let d = args::parse_f64(w).map_err(|_| String::from("expected list of numbers"))?;
        dacc = if first {
            d
        } else {
            match what {
                "add" => dacc + d,
                "sub" => dacc - d,
                "min" => dacc.min(d),
                "max" => dacc.max(d),
                "mul" => dacc * d,
                _ => dacc / d,
            }
        };
    }
    if what == "idiv" {
        return Ok((dacc as i64).to_string());
    }
    Ok(if use_d {
        util::fmt_double(dacc)
    } else {
        acc.to_string()
    })
}

fn sprintf(param: &str) -> Result<String, String> {
    let mut rest = String::from(param);
    let fmt = args::unquote(&args::shift_word(&mut rest));
    let mut out = String::new();
    let b = fmt.as_bytes();
    let mut i = 0;
    let err = || Err::<String, String>("syntax error".into());
    while i < b.len() {
        if b[i] != b'%' {
            let start = i;
            while i < b.len() && b[i] != b'%' {
                i += 1;
            }
            out.push_str(&fmt[start..i]);
            continue;
        }
        i += 1;
        let mut left = false;
        let mut zero = false;
        let mut plus = false;
        while i < b.len() && matches!(b[i], b'0' | b'#' | b'-' | b' ' | b'+') {
            match b[i] {
                b'-' => left = true,
                b'0' => zero = true,
                b'+' => plus = true,
                _ => {}
            }
            i += 1;
        }
        let mut width = 0usize;
        while i < b.len() && b[i].is_ascii_digit() {
            width = width * 10 + (b[i] - b'0') as usize;
            i += 1;
        }
        let mut prec: Option<usize> = None;
        if i < b.len() && b[i] == b'.' {
            i += 1;
            let mut p = 0;
            while i < b.len() && b[i].is_ascii_digit() {
                p = p * 10 + (b[i] - b'0') as usize;
                i += 1;
            }
            prec = Some(p);
        }
        while i < b.len() && matches!(b[i], b'h' | b'l' | b'L' | b'q') {
            i += 1;
        }
        if i >= b.len() {
            return err();
        }
        let conv = b[i];
        i += 1;
        let body = match conv {
            b'%' => "%".to_string(),
            b'd' | b'i' => {
                let v = args::parse_i64(&args::shift_word(&mut rest))
                    .map_err(|_| String::from("syntax error"))?;
                if plus && v >= 0 {
                    format!("+{}", v)
                } else {
                    v.to_string()
                }
            }
            b'u' | b'x' | b'X' | b'o' => {
                let v = args::parse_i64(&args::shift_word(&mut rest))
                    .map_err(|_| String::from("syntax error"))? as u64;
                match conv {
                    b'u' => v.to_string(),
                    b'x' => format!("{:x}", v),
                    b'X' => format!("{:X}", v),
                    _ => format!("{:o}", v),
                }
            }
            b's' => {
                let s = args::parse_string(&args::shift_word(&mut rest))
                    .map_err(|_| String::from("syntax error"))?;
                match prec {
                    Some(p) => s.chars().take(p).collect(),
                    None => s,
                }
            }
            _ => return err(),
        };
        let len = body.chars().count();
        if len >= width {
            out.push_str(&body);
        } else if left {
            out.push_str(&body);
            out.extend(core::iter::repeat_n(' ', width - len));
        } else if zero && conv != b's' {
            let (sign, digits) = if body.starts_with('-') || body.starts_with('+') {
                body.split_at(1)
            } else {
                ("", &body[..])
            };
            out.push_str(sign);
            out.extend(core::iter::repeat_n('0', width - len));
            out.push_str(digits);
        } else {
            out.extend(core::iter::repeat_n(' ', width - len));
            out.push_str(&body);
        }
    }
    if !rest.trim().is_empty() {
        return err();
    }
    Ok(out)
}

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
        let mut errors: Vec<String> = Vec::new();
        for arg in conf {
            let mut rest = arg.clone();
            let name = args::shift_word(&mut rest);
            if name.is_empty() {
                continue;
            }
            let syntax = || format!("syntax error at '{}'", name);
            let op = match (name.as_str(), op_named(&name)) {
                ("wait", _) => {
                    if rest.is_empty() {
                        Op::WaitStep
                    } else {
                        Op::WaitTime
                    }
                }
                ("loop", _) => {
                    if !rest.is_empty() {
                        errors.push(syntax());
                        continue;
                    }
                    s.add_insn(Op::Goto, 0, String::new());
                    continue;
                }
                (_, Some(op)) => op,
                (_, None) => {
                    errors.push(syntax());
                    continue;
                }
            };
            match op {
                Op::WaitStep => {
                    let n = if rest.is_empty() {
                        Ok(1)
                    } else {
                        args::parse_u64(&rest)
                    };
                    match n {
                        Ok(n) => {
                            s.add_insn(Op::WaitStep, n.min(i64::MAX as u64) as i64, String::new())
                        }
                        Err(_) => errors.push(syntax()),
                    }
                }
                Op::WaitTime
                | Op::Print
                | Op::PrintQ
                | Op::PrintN
                | Op::PrintNQ
                | Op::Read
                | Op::ReadQ
                | Op::Write
                | Op::WriteQ
                | Op::Save
                | Op::Append
                | Op::Goto => s.add_insn(op, 0, rest),
                Op::Return
                | Op::ReturnQ
                | Op::Init
                | Op::InitQ
                | Op::Export
                | Op::ExportQ
                | Op::Set
                | Op::SetQ => {
                    let mut text = if matches!(op, Op::Return | Op::ReturnQ) {
                        format!("_ {}", rest)
                    } else {
                        rest
                    };
                    let word = args::shift_word(&mut text);
                    if word.is_empty() || (matches!(op, Op::Set | Op::SetQ) && text.is_empty()) {
                        errors.push(syntax());
                        continue;
                    }
                    let v = s.find_var(&word, true).unwrap_or(0) as i64;
                    s.add_insn(op, v, text);
                }
                Op::Label => {
                    let mut t = rest;
                    let w = args::shift_word(&mut t);
                    if w.is_empty() || !t.is_empty() {
                        errors.push(syntax());
                        continue;
                    }
                    s.add_insn(op, 0, w);
                }
                Op::End | Op::Exit | Op::Stop | Op::Error | Op::ErrorQ => {
                    if !rest.is_empty() && !matches!(op, Op::Error | Op::ErrorQ) {
                        errors.push(syntax());
                        continue;
                    }
                    s.add_insn(op, 0, rest);
                }
                Op::Initial => {}
            }
        }
        for i in 0..s.insns.len() {
            if s.insns[i].op == Op::Goto && !s.insns[i].text.is_empty() {
                let mut t = core::mem::take(&mut s.insns[i].text);
                let w = args::shift_word(&mut t);
                let target = s.find_label(&w);
                if target >= s.insns.len() as i64 {
                    errors.push(format!("no such label '{}'", w));
                }
                s.insns[i].arg = target;
                s.insns[i].text = t;
            }
        }
        if s.insns.is_empty() && ty == Ty::Driver {
            s.add_insn(Op::WaitStep, 1, String::new());
        }
        s.add_insn(
            if ty == Ty::Driver { Op::Stop } else { Op::End },
            0,
            String::new(),
        );
        if !errors.is_empty() {
            return Err(errors.join("\n"));
        }
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
            let mut e = Errh::new(cx);
            self.step(1, Step::Router, 0, cx, &mut e);
            if cx.runcount() <= 0 {
                cx.stop_router();
            }
        }
        false
    }

    fn read_handler(&mut self, name: &str, cx: &Ctx) -> Option<HandlerResult<String>> {
        if name == "run" {
            return Some(Ok(self.run_from_start(name, "", false, cx)));
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
        if name == "cat" {
            return None; // private
        }
        self.own_read(name, "", cx)
    }

    fn read_handler_param(
        &mut self,
        name: &str,
        param: &str,
        cx: &Ctx,
    ) -> Option<HandlerResult<String>> {
        if name == "cat" {
            // Click's private handler: not reachable from outside
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
                self.run_from_start(name, value, true, cx);
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
                let i = self.find_var(&var, true).unwrap_or(0);
                self.vars[i].1 = v;
                Some(Ok(()))
            }
            _ if self.ty == Ty::Proxy => {
                self.run_from_start(name, value, true, cx);
                Some(Ok(()))
            }
            _ => None,
        }
    }

    crate::element_any!();
}
