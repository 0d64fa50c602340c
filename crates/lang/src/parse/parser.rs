//! The parser's state and its statement level: tokens in and out, error
//! reporting, statements (`elementclass`, `require`, `define`, and
//! connections, which `connection.rs` parses), and the variable scope that
//! `define` and compound formals fill.

use super::{lm_of, Body, ClassRef, Landmark, ParseError, ParseOptions};
use crate::args::{shift_word, split_args, split_words};
use crate::lexer::{Kind, Lexer, Token};
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

pub(super) struct Parser<'a, 'o> {
    pub(super) lex: Lexer<'a>,
    pub(super) unlexed: Vec<Token>,
    pub(super) errors: Vec<ParseError>,
    pub(super) types: BTreeMap<String, ClassRef>,
    pub(super) body: Body,
    /// Scope of the current compound (or file): (name, value) and nformals.
    pub(super) scope: Vec<(String, String)>,
    pub(super) nformals: usize,
    pub(super) scope_order_error: bool,
    pub(super) depth: usize,
    pub(super) requirements: Vec<String>,
    pub(super) opts: &'o ParseOptions<'o>,
    /// Element groups `( ... )` being parsed in the current body.
    pub(super) in_group: usize,
    /// Groups made so far (for their tunnels' names).
    pub(super) group_seq: usize,
    /// The port counts of the group `yelement` just parsed, which imply
    /// its port lists when none are written.
    pub(super) group_ports: Option<(usize, usize)>,
}

impl<'a, 'o> Parser<'a, 'o> {
    pub(super) fn new(text: &'a str, file: &str, opts: &'o ParseOptions<'o>) -> Self {
        Parser {
            lex: Lexer::new(text, file),
            unlexed: Vec::new(),
            errors: Vec::new(),
            types: BTreeMap::new(),
            body: Body::default(),
            scope: Vec::new(),
            nformals: 0,
            scope_order_error: false,
            depth: 0,
            requirements: Vec::new(),
            opts,
            in_group: 0,
            group_seq: 0,
            group_ports: None,
        }
    }

    pub(super) fn lex(&mut self) -> Token {
        if let Some(t) = self.unlexed.pop() {
            return t;
        }
        let mut bad = false;
        let t = self.lex.next(&mut bad);
        if bad {
            let lm = lm_of(&t);
            self.err(lm, "unknown preprocessor directive");
        }
        t
    }

    pub(super) fn unlex(&mut self, t: Token) {
        self.unlexed.push(t);
    }

    pub(super) fn peek(&mut self) -> Token {
        let t = self.lex();
        self.unlex(t.clone());
        t
    }

    fn here(&self) -> Landmark {
        Landmark {
            file: self.lex.file.clone(),
            line: self.lex.line,
            col: 0,
        }
    }

    pub(super) fn err(&mut self, landmark: Landmark, msg: impl Into<String>) {
        self.errors.push(ParseError {
            landmark,
            message: msg.into(),
        });
    }

    pub(super) fn err_here(&mut self, msg: impl Into<String>) {
        let lm = self.here();
        self.err(lm, msg);
    }

    pub(super) fn expect(&mut self, c: char) -> bool {
        let t = self.lex();
        if t.is(c) {
            true
        } else {
            let lm = lm_of(&t);
            self.unlex(t);
            self.err(lm, format!("expected '{c}'"));
            false
        }
    }

    pub(super) fn lex_config(&mut self) -> String {
        // The '(' was the most recently lexed token, so nothing should be
        // pushed back here; be defensive anyway.
        self.unlexed.clear();
        self.lex.lex_config()
    }

    pub(super) fn is_class_name(&self, name: &str) -> bool {
        match self.opts.is_class {
            Some(f) => f(name),
            None => name
                .as_bytes()
                .first()
                .is_some_and(|c| c.is_ascii_uppercase()),
        }
    }

    pub(super) fn ystatement(&mut self, nested: bool) -> bool {
        let t = self.lex();
        match t.kind {
            Kind::Ident | Kind::Char('[') | Kind::Char('{') | Kind::Char('(') => {
                self.unlex(t);
                self.yconnection();
                true
            }
            Kind::Char(')') if nested && self.in_group > 0 => {
                self.unlex(t);
                false
            }
            Kind::ElementClass => {
                self.yelementclass();
                true
            }
            Kind::Require => {
                self.yrequire(lm_of(&t));
                true
            }
            Kind::Define => {
                self.yvar(lm_of(&t));
                true
            }
            Kind::Char(';') => true,
            Kind::Char('}') | Kind::TwoBar if nested => {
                self.unlex(t);
                false
            }
            Kind::Eof => {
                if nested {
                    let close = if self.in_group > 0 { "')'" } else { "'}'" };
                    self.err(lm_of(&t), format!("expected {close}"));
                    self.unlex(t);
                }
                false
            }
            _ => {
                self.err(lm_of(&t), format!("syntax error near '{}'", t.text));
                true
            }
        }
    }

    // ---- require and define

    fn yrequire(&mut self, lm: Landmark) {
        if !self.expect('(') {
            return;
        }
        let req = self.lex_config();
        self.expect(')');
        let t = self.lex();
        if !t.is(';') {
            self.unlex(t);
        }
        for arg in split_args(&req) {
            let words = split_words(&arg);
            if words.is_empty() {
                continue;
            }
            let mut out = Vec::new();
            for w in &words {
                match crate::args::parse_word(w) {
                    Ok(x) => out.push(x),
                    Err(_) => {
                        self.err(lm.clone(), "syntax error at requirement");
                        out.clear();
                        break;
                    }
                }
            }
            if !out.is_empty() {
                self.requirements.push(out.join(" "));
            }
        }
    }

    fn yvar(&mut self, lm: Landmark) {
        if !self.expect('(') {
            return;
        }
        let text = self.lex_config();
        self.expect(')');
        for mut arg in split_args(&text) {
            if arg.is_empty() {
                continue;
            }
            let var = shift_word(&mut arg);
            let ok = var.len() >= 2
                && var.starts_with('$')
                && var[1..]
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || c == b'_');
            if !ok {
                self.err(lm.clone(), "bad 'define' declaration: not a variable");
            } else {
                self.define_var(var[1..].to_string(), arg, false, lm.clone());
            }
        }
    }

    pub(super) fn define_var(&mut self, name: String, value: String, formal: bool, lm: Landmark) {
        if self.scope.iter().any(|(n, _)| *n == name) {
            self.err(lm, format!("parameter '${name}' multiply defined"));
            return;
        }
        if formal {
            if !value.is_empty() && self.scope.iter().any(|(_, v)| *v == value) {
                self.err(
                    lm.clone(),
                    format!("repeated keyword parameter '{value}' in compound element"),
                );
            }
            self.scope.push((name, value.clone()));
            self.nformals = self.scope.len();
            let n = self.nformals;
            if !self.scope_order_error
                && n > 1
                && ((value.is_empty() && !self.scope[n - 2].1.is_empty())
                    || self.scope[n - 2].1 == "__REST__")
            {
                self.err(
                    lm,
                    "compound element parameters out of order\n(The correct order is '[positional], [keywords], [__REST__]'.)",
                );
                self.scope_order_error = true;
            }
        } else {
            self.scope.push((name, value));
        }
    }
}
