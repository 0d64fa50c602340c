//! Script's instruction set, and the parser that turns a Script's
//! arguments (`set x 1`, `wait 1s`, `goto l $(eq $x 3)`, ...) into
//! instructions: labels and variables are resolved here, once, at
//! configuration time. [`super::run`] executes the result.

use super::{Script, Ty};
use crate::prelude::*;
use alloc::format;
use click_lang::args;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Op {
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

#[derive(Clone, Debug)]
pub(super) struct Insn {
    pub(super) op: Op,
    /// Goto target (negative: a finishing instruction), variable index,
    /// or wait count.
    pub(super) arg: i64,
    pub(super) arg2: i64,
    pub(super) text: String,
}

/// Goto targets that name finishing instructions.
const T_END: i64 = -1;
const T_EXIT: i64 = -2;
const T_STOP: i64 = -3;
const T_ERROR: i64 = -4;

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
pub(super) fn parse_signal(w: &str) -> Option<i32> {
    if let Ok(n) = args::parse_i64(w) {
        return (1..=64).contains(&n).then_some(n as i32);
    }
    let name = w.strip_prefix("SIG").unwrap_or(w);
    SIGNALS.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
}

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

impl Script {
    pub(super) fn add_insn(&mut self, op: Op, arg: i64, text: String) {
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

    pub(super) fn find_label(&self, label: &str) -> i64 {
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

    pub(super) fn find_var(&mut self, name: &str, add: bool) -> Option<usize> {
        if let Some(i) = self.vars.iter().position(|(n, _)| n == name) {
            return Some(i);
        }
        if add {
            self.vars.push((name.to_string(), String::new()));
            return Some(self.vars.len() - 1);
        }
        None
    }

    /// Parses the instructions (the arguments after `TYPE`) into this
    /// script, which is new, of its final type. Every error at once.
    pub(super) fn parse_instructions(&mut self, conf: Vec<String>) -> Result<(), String> {
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
                    self.add_insn(Op::Goto, 0, String::new());
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
                        Ok(n) => self.add_insn(
                            Op::WaitStep,
                            n.min(i64::MAX as u64) as i64,
                            String::new(),
                        ),
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
                | Op::Goto => self.add_insn(op, 0, rest),
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
                    let v = self.find_var(&word, true).unwrap_or(0) as i64;
                    self.add_insn(op, v, text);
                }
                Op::Label => {
                    let mut t = rest;
                    let w = args::shift_word(&mut t);
                    if w.is_empty() || !t.is_empty() {
                        errors.push(syntax());
                        continue;
                    }
                    self.add_insn(op, 0, w);
                }
                Op::End | Op::Exit | Op::Stop | Op::Error | Op::ErrorQ => {
                    if !rest.is_empty() && !matches!(op, Op::Error | Op::ErrorQ) {
                        errors.push(syntax());
                        continue;
                    }
                    self.add_insn(op, 0, rest);
                }
                Op::Initial => {}
            }
        }
        for i in 0..self.insns.len() {
            if self.insns[i].op == Op::Goto && !self.insns[i].text.is_empty() {
                let mut t = core::mem::take(&mut self.insns[i].text);
                let w = args::shift_word(&mut t);
                let target = self.find_label(&w);
                if target >= self.insns.len() as i64 {
                    errors.push(format!("no such label '{}'", w));
                }
                self.insns[i].arg = target;
                self.insns[i].text = t;
            }
        }
        if self.insns.is_empty() && self.ty == Ty::Driver {
            self.add_insn(Op::WaitStep, 1, String::new());
        }
        self.add_insn(
            if self.ty == Ty::Driver {
                Op::Stop
            } else {
                Op::End
            },
            0,
            String::new(),
        );
        if !errors.is_empty() {
            return Err(errors.join("\n"));
        }
        Ok(())
    }
}
