//! The Script interpreter: runs instructions from the current position
//! until a wait, a return or the end, counting steps (`wait_step`, the
//! `step` handler) and jumps, and reports errors under Click's
//! `While executing` line.

use super::insn::Op;
use super::Script;
use crate::prelude::*;
use alloc::format;
use click_lang::args;

/// Jumps one run may take before the script is given up as looping.
const MAX_JUMPS: u32 = 1000;

/// Runs of one script inside each other (`return $(run ...)` in the script
/// itself) before the innermost is refused: recursion ends with an error,
/// not a stack overflow (the micro-VM guest has a 64 KiB stack).
const MAX_RUN_DEPTH: u32 = 8;

/// What makes the script step: its timer, a stop request reaching a
/// DRIVER script (`step router`), a `step` write, or a run from the top
/// or a label (`run`, `goto`, a packet).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    Timer,
    Router,
    Normal,
    Jump,
}

/// Errors reported while the script runs, under Click's context line
/// (none when the driver steps it: Click's `step router` write reports to
/// the plain error handler).
pub(super) struct Errh {
    context: Option<String>,
    shown: bool,
    count: usize,
}

impl Errh {
    pub(super) fn new(cx: &Ctx) -> Errh {
        Errh {
            context: Some(format!("While executing '{}':", cx.declaration())),
            shown: false,
            count: 0,
        }
    }
    /// Errors without the `While executing` context.
    pub(super) fn bare() -> Errh {
        Errh {
            context: None,
            shown: false,
            count: 0,
        }
    }
    fn indent(&mut self, cx: &Ctx) -> &'static str {
        match &self.context {
            Some(c) => {
                if !self.shown {
                    cx.error_line(c);
                    self.shown = true;
                }
                "  "
            }
            None => "",
        }
    }
    pub(super) fn error(&mut self, cx: &Ctx, msg: &str) {
        let ind = self.indent(cx);
        for l in msg.lines() {
            cx.error_line(&format!("{}{}", ind, l));
        }
        self.count += 1;
    }
    pub(super) fn nested(&mut self, cx: &Ctx, ctx: &str, msg: &str) {
        let ind = self.indent(cx);
        cx.error_line(&format!("{}{}", ind, ctx));
        for l in msg.lines() {
            cx.error_line(&format!("{}  {}", ind, l));
        }
        self.count += 1;
    }
}

impl Script {
    pub(super) fn set_var(&mut self, idx: i64, v: String) {
        if let Some(slot) = self.vars.get_mut(idx as usize) {
            slot.1 = v;
        }
    }

    pub(super) fn step(
        &mut self,
        nsteps: i64,
        st: Step,
        mut njumps: u32,
        cx: &Ctx,
        e: &mut Errh,
    ) -> u32 {
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
    pub(super) fn complete_step(&self) -> String {
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
    pub(super) fn run_packet(&mut self, port: usize, cx: &Ctx) -> Option<usize> {
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

    /// Runs the script from the top (the `run` handler), with `$args`
    /// `value`; its `return` value.
    pub(super) fn run_from_start(
        &mut self,
        name: &str,
        value: &str,
        write: bool,
        cx: &Ctx,
    ) -> Result<String, String> {
        if self.run_depth >= MAX_RUN_DEPTH {
            return Err(format!(
                "runs nested too deeply (more than {MAX_RUN_DEPTH})"
            ));
        }
        self.run_name = name.to_string();
        self.run_args = value.to_string();
        self.run_write = write;
        self.pos = 0;
        let mut e = Errh::new(cx);
        self.run_depth += 1;
        self.step(0, Step::Jump, 0, cx, &mut e);
        self.run_depth -= 1;
        Ok(self.complete_step())
    }
}
