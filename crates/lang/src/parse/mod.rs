//! Parser for the Click configuration language and compound-element
//! flattener (after Click's `lib/lexer.cc`).
//!
//! [`parse_config`] runs two halves over one intermediate form, the
//! parsed bodies (`Body`: elements, connections, compound classes):
//!
//! * the parser: `parser.rs` (its state, statements, `require` and
//!   `define`), `connection.rs` (declarations and connections) and
//!   `compound.rs` (`elementclass` and compound bodies);
//! * the flattener, `flatten.rs`, which expands compounds and traces
//!   connections to primitive elements.
//!
//! This file holds the public types, the parsed form, and the entry
//! points.

mod compound;
mod connection;
mod flatten;
mod parser;

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use crate::lexer::Token;
use parser::Parser;

/// Where something was written: file, line and column (1-based).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Landmark {
    pub file: String,
    pub line: u32,
    pub col: u32,
}

impl fmt::Display for Landmark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// One element of the flattened router.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlatElement {
    pub name: String,
    pub class: String,
    pub config: String,
    pub landmark: Landmark,
}

/// One connection of the flattened router (indexes into `elements`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlatConnection {
    pub from: usize,
    pub from_port: usize,
    pub to: usize,
    pub to_port: usize,
    pub landmark: Landmark,
}

/// A flattened router configuration: no compounds, no variables.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct FlatConfig {
    pub elements: Vec<FlatElement>,
    pub connections: Vec<FlatConnection>,
    pub requirements: Vec<String>,
}

impl FlatConfig {
    /// Index of the element called `name`.
    pub fn element_index(&self, name: &str) -> Option<usize> {
        self.elements.iter().position(|e| e.name == name)
    }
}

/// A configuration error; displays as `file:line: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub landmark: Landmark,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.landmark, self.message)
    }
}

/// Extra knobs for [`parse_config_with`].
#[derive(Default)]
pub struct ParseOptions<'a> {
    /// Tells whether a name is a known (primitive) element class.  Click's
    /// lexer knows every class, so a bare word that is neither a declared
    /// element nor a class is the error "undeclared element".  Without this
    /// predicate, a bare undeclared word is taken to be a class when it
    /// starts with an uppercase ASCII letter (Click's naming convention) and
    /// is reported as an undeclared element otherwise.
    pub is_class: Option<&'a dyn Fn(&str) -> bool>,
}

const MAX_NESTING: usize = 64;
const MAX_EXPANSION_DEPTH: usize = 64;
const MAX_ELEMENTS: usize = 100_000;
const MAX_CONNECTIONS: usize = 1_000_000;

// ---- the parsed form, between the parser and the flattener

#[derive(Clone, Debug)]
enum ClassRef {
    Prim(String),
    Comp(Rc<Compound>),
    Tunnel,
    /// An element group `( ... )`: its input and output tunnels (indices
    /// in the same body; the group's elements live in that body too).
    Group(usize, usize),
    /// A group's `input` and `output` pseudoelements (the latter knows
    /// its group).
    GroupIn,
    GroupOut(usize),
}

#[derive(Debug)]
struct Compound {
    name: String,
    landmark: Landmark,
    depth: usize,
    /// Formals (name, keyword-or-empty) followed by local defines (name, value).
    scope: Vec<(String, String)>,
    nformals: usize,
    body: Body,
    ninputs: usize,
    noutputs: usize,
    /// Next overload (`||`) or extended class (`...`).
    overload: Option<ClassRef>,
}

impl Compound {
    fn printable_name(&self) -> &str {
        if self.name.is_empty() {
            "<anonymous>"
        } else {
            &self.name
        }
    }

    fn signature(&self) -> String {
        let mut s = String::from(self.printable_name());
        if self.nformals > 0 {
            s.push('(');
            for (i, (_, ty)) in self.scope[..self.nformals].iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                s.push_str(match ty.as_str() {
                    "" => "<arg>",
                    "__REST__" => "...",
                    t => t,
                });
            }
            s.push(')');
        }
        s.push_str(&ports_sig(None, self.ninputs, self.noutputs));
        s
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", n, if n == 1 { one } else { many })
}

fn ports_sig(nargs: Option<usize>, ni: usize, no: usize) -> String {
    let mut s = String::from("[");
    if let Some(n) = nargs {
        if n > 0 {
            s.push_str(&plural(n, "argument", "arguments"));
            s.push_str(", ");
        }
    }
    s.push_str(&plural(ni, "input", "inputs"));
    s.push_str(", ");
    s.push_str(&plural(no, "output", "outputs"));
    s.push(']');
    s
}

#[derive(Clone, Debug)]
struct BElem {
    name: String,
    class: ClassRef,
    config: String,
    landmark: Landmark,
}

#[derive(Clone, Debug)]
struct BConn {
    from: usize,
    from_port: usize,
    to: usize,
    to_port: usize,
    landmark: Landmark,
}

#[derive(Debug, Default)]
struct Body {
    elements: Vec<BElem>,
    map: BTreeMap<String, usize>,
    conns: Vec<BConn>,
    anon_offset: usize,
}

impl Body {
    fn deanonymize(&mut self) {
        for i in 0..self.elements.len() {
            let n = &self.elements[i].name;
            if !n.starts_with(';') {
                continue;
            }
            let mut name = n[1..].to_string();
            if self.map.contains_key(&name) {
                let at = name.rfind('@').unwrap_or(0);
                let prefix = name[..at + 1].to_string();
                let digits: String = name[at + 1..]
                    .chars()
                    .take_while(|c| c.is_ascii_digit())
                    .collect();
                let mut k: u64 = digits.parse().unwrap_or(0);
                loop {
                    k += 1;
                    name = format!("{prefix}{k}");
                    if !self.map.contains_key(&name) {
                        break;
                    }
                }
            }
            self.map.insert(name.clone(), i);
            self.elements[i].name = name;
        }
    }
}

fn lm_of(t: &Token) -> Landmark {
    Landmark {
        file: t.file.clone(),
        line: t.line,
        col: t.col,
    }
}

/// Parse and flatten a Click configuration.  `file` names the source in
/// landmarks; `defines` are command-line `NAME=value` definitions (they
/// override the file's `define`s).  Errors are collected; if there are
/// any, they are all returned.
pub fn parse_config(
    text: &str,
    file: &str,
    defines: &[(String, String)],
) -> Result<FlatConfig, Vec<ParseError>> {
    parse_config_with(text, file, defines, &ParseOptions::default())
}

/// [`parse_config`] with extra options.
pub fn parse_config_with(
    text: &str,
    file: &str,
    defines: &[(String, String)],
    opts: &ParseOptions<'_>,
) -> Result<FlatConfig, Vec<ParseError>> {
    let mut p = Parser::new(text, file, opts);
    while p.ystatement(false) {}
    p.body.deanonymize();

    // global scope: file defines, overridden/extended by the caller's
    let mut vars = core::mem::take(&mut p.scope);
    for (n, v) in defines {
        let n = n.strip_prefix('$').unwrap_or(n);
        match vars.iter_mut().find(|(vn, _)| vn == n) {
            Some(slot) => slot.1 = v.clone(),
            None => vars.push((n.to_string(), v.clone())),
        }
    }

    let body = core::mem::take(&mut p.body);
    let (cfg, errs) = flatten::flatten(body, vars, core::mem::take(&mut p.requirements));
    let mut errors = p.errors;
    errors.extend(errs);
    if errors.is_empty() {
        Ok(cfg)
    } else {
        Err(errors)
    }
}
