//! Parser for the Click configuration language and compound-element
//! flattener (after Click's `lib/lexer.cc`).

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use crate::args::{shift_word, split_args, split_words};
use crate::lexer::{Kind, Lexer, Token};

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

/// One element of an element set in a connection, with its port lists
/// (empty: no port given; a final -1 marks an expandable list).
#[derive(Clone, Debug)]
struct SetMember {
    elem: usize,
    inports: Vec<i64>,
    outports: Vec<i64>,
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

struct Parser<'a, 'o> {
    lex: Lexer<'a>,
    unlexed: Vec<Token>,
    errors: Vec<ParseError>,
    types: BTreeMap<String, ClassRef>,
    body: Body,
    /// Scope of the current compound (or file): (name, value) and nformals.
    scope: Vec<(String, String)>,
    nformals: usize,
    scope_order_error: bool,
    depth: usize,
    requirements: Vec<String>,
    opts: &'o ParseOptions<'o>,
    /// Element groups `( ... )` being parsed in the current body.
    in_group: usize,
    /// Groups made so far (for their tunnels' names).
    group_seq: usize,
    /// The port counts of the group `yelement` just parsed, which imply
    /// its port lists when none are written.
    group_ports: Option<(usize, usize)>,
}

impl<'a, 'o> Parser<'a, 'o> {
    fn lex(&mut self) -> Token {
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

    fn unlex(&mut self, t: Token) {
        self.unlexed.push(t);
    }

    fn peek(&mut self) -> Token {
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

    fn err(&mut self, landmark: Landmark, msg: impl Into<String>) {
        self.errors.push(ParseError {
            landmark,
            message: msg.into(),
        });
    }

    fn err_here(&mut self, msg: impl Into<String>) {
        let lm = self.here();
        self.err(lm, msg);
    }

    fn expect(&mut self, c: char) -> bool {
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

    fn lex_config(&mut self) -> String {
        // The '(' was the most recently lexed token, so nothing should be
        // pushed back here; be defensive anyway.
        self.unlexed.clear();
        self.lex.lex_config()
    }

    fn is_class_name(&self, name: &str) -> bool {
        match self.opts.is_class {
            Some(f) => f(name),
            None => name
                .as_bytes()
                .first()
                .is_some_and(|c| c.is_ascii_uppercase()),
        }
    }

    // ---- elements

    fn get_element(
        &mut self,
        name: String,
        class: ClassRef,
        config: String,
        lm: Landmark,
    ) -> usize {
        if let Some(&i) = self.body.map.get(&name) {
            return i;
        }
        // all-digit component check
        if !name.starts_with(';')
            && name
                .split('/')
                .any(|c| c.bytes().all(|b| b.is_ascii_digit()))
        {
            self.err(
                lm.clone(),
                format!("element name '{name}' has all-digit component"),
            );
        }
        let i = self.body.elements.len();
        self.body.map.insert(name.clone(), i);
        self.body.elements.push(BElem {
            name,
            class,
            config,
            landmark: lm,
        });
        i
    }

    fn anon_element(
        &mut self,
        class_name: &str,
        class: ClassRef,
        config: String,
        lm: Landmark,
    ) -> usize {
        let n = self.body.elements.len() - self.body.anon_offset + 1;
        let name = format!(";{class_name}@{n}");
        // anonymous names are unique placeholders until deanonymized
        let i = self.body.elements.len();
        self.body.elements.push(BElem {
            name,
            class,
            config,
            landmark: lm,
        });
        i
    }

    /// Click's port list: `[N]`, `[N, M, ...]`, or an expandable list
    /// ending in `,]` (or `[]`), recorded as a final `-1`.
    fn yport(&mut self) -> Option<Vec<i64>> {
        let t = self.lex();
        if !t.is('[') {
            self.unlex(t);
            return None;
        }
        let mut ports: Vec<i64> = Vec::new();
        loop {
            let tw = self.lex();
            if tw.kind == Kind::Ident {
                let port = match crate::args::parse_u64(&tw.text) {
                    Ok(p) if p <= i32::MAX as u64 => p as i64,
                    _ => {
                        self.err(lm_of(&tw), "syntax error: port number should be integer");
                        0
                    }
                };
                ports.push(port);
            } else if tw.is(']') {
                if ports.is_empty() {
                    ports.push(0);
                }
                ports.push(-1);
                break;
            } else {
                self.err(lm_of(&tw), "syntax error: expected port number");
                self.unlex(tw);
                break;
            }
            let t = self.lex();
            if t.is(']') {
                break;
            } else if !t.is(',') {
                self.err(lm_of(&t), "syntax error: expected ','");
                self.unlex(t);
                break;
            }
        }
        if ports.is_empty() {
            ports.push(0);
        }
        Some(ports)
    }

    /// After `NAME ,`: whether this is a declaration list `a, b, c :: Class`
    /// (rather than a set of elements in a connection). Looks ahead and
    /// puts every token back.
    fn is_declaration_list(&mut self) -> bool {
        let mut seen: Vec<Token> = Vec::new();
        let decl = loop {
            let t = self.lex();
            let is_comma = t.is(',');
            seen.push(t);
            if !is_comma {
                break false;
            }
            let n = self.lex();
            let ok = n.kind == Kind::Ident;
            seen.push(n);
            if !ok {
                break false;
            }
            let sep = self.lex();
            let kind = sep.kind.clone();
            seen.push(sep);
            if kind == Kind::TwoColon {
                break true;
            }
            // put back the separator and look at it as the next ','
            let sep = seen.pop().unwrap();
            self.unlex(sep);
        };
        while let Some(t) = seen.pop() {
            self.unlex(t);
        }
        decl
    }

    fn yelement(&mut self, comma_ok: bool) -> Option<usize> {
        let t = self.lex();
        let lm = lm_of(&t);
        let (name, mut etype) = match t.kind {
            Kind::Ident => {
                let ty = self.types.get(&t.text).cloned();
                (t.text.clone(), ty)
            }
            Kind::Char('{') => {
                let c = self.ycompound(String::new(), lm.clone());
                (String::new(), Some(c))
            }
            Kind::Char('(') => return Some(self.ygroup(lm)),
            _ => {
                self.unlex(t);
                return None;
            }
        };
        let mut config = String::new();
        let tp = self.lex();
        if tp.is('(') {
            if etype.is_none() {
                if let Some(&i) = self.body.map.get(&name) {
                    self.err(
                        lm.clone(),
                        "configuration string ignored on element reference",
                    );
                    let _ = self.lex_config();
                    self.expect(')');
                    return Some(i);
                }
                etype = Some(ClassRef::Prim(name.clone()));
            }
            config = self.lex_config();
            self.expect(')');
        } else {
            self.unlex(tp);
        }
        if let Some(et) = etype {
            // Click names anonymous elements after the class name as written
            // (a synonym's own name; "" for an anonymous compound).
            return Some(self.anon_element(&name, et, config, lm));
        }
        let next = self.peek();
        if next.kind == Kind::TwoColon || (next.is(',') && comma_ok && self.is_declaration_list()) {
            self.ydeclaration(Some(t));
        }
        if let Some(&i) = self.body.map.get(&name) {
            return Some(i);
        }
        if !self.is_class_name(&name) {
            self.err(lm.clone(), format!("undeclared element '{name}'"));
        }
        Some(self.anon_element(&name, ClassRef::Prim(name.clone()), config, lm))
    }

    /// An element group `( STATEMENTS )` (Click's `ygroup`): its elements
    /// are declared in the enclosing scope; inside it, `input` and
    /// `output` (or a bare port at the start or end of a chain) are the
    /// group's own ports. Returns the group element.
    fn ygroup(&mut self, lm: Landmark) -> usize {
        let seq = self.group_seq;
        self.group_seq += 1;
        let tin = self.get_element(
            format!("@group{seq}/input"),
            ClassRef::GroupIn,
            String::new(),
            lm.clone(),
        );
        let tout = self.get_element(
            format!("@group{seq}/output"),
            ClassRef::GroupOut(usize::MAX),
            String::new(),
            lm.clone(),
        );
        let g = self.anon_element("", ClassRef::Group(tin, tout), String::new(), lm.clone());
        self.body.elements[tout].class = ClassRef::GroupOut(g);
        let saved_in = self.body.map.insert("input".into(), tin);
        let saved_out = self.body.map.insert("output".into(), tout);
        self.in_group += 1;
        if self.depth + self.in_group >= MAX_NESTING {
            self.err(lm.clone(), "maximum element group nesting depth exceeded");
            self.skip_balanced_parens();
        } else {
            while self.ystatement(true) {}
            self.expect(')');
        }
        self.in_group -= 1;
        for (name, saved) in [("input", saved_in), ("output", saved_out)] {
            match saved {
                Some(i) => {
                    self.body.map.insert(name.into(), i);
                }
                None => {
                    self.body.map.remove(name);
                }
            }
        }
        let mut nin = 0;
        let mut nout = 0;
        for c in &self.body.conns {
            if c.from == tin {
                nin = nin.max(c.from_port + 1);
            }
            if c.to == tout {
                nout = nout.max(c.to_port + 1);
            }
            if c.to == tin {
                self.errors.push(ParseError {
                    landmark: c.landmark.clone(),
                    message: "'<anonymous group>' pseudoelement 'input' may only be used as output"
                        .into(),
                });
            }
            if c.from == tout {
                self.errors.push(ParseError {
                    landmark: c.landmark.clone(),
                    message: "'<anonymous group>' pseudoelement 'output' may only be used as input"
                        .into(),
                });
            }
        }
        self.group_ports = Some((nin, nout));
        g
    }

    /// Skips to the `)` closing a group (after an error).
    fn skip_balanced_parens(&mut self) {
        let mut depth = 1usize;
        loop {
            let t = self.lex();
            match t.kind {
                Kind::Eof => {
                    self.unlex(t);
                    return;
                }
                Kind::Char('(') => depth += 1,
                Kind::Char(')') => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    /// Inside a compound or group, a port with no element at the start of
    /// a chain stands for `input`, at the end for `output` (Click's
    /// implicit ports). `t` is the token after the port; `first` whether
    /// this is the chain's first element set. Returns the set member.
    fn implicit_port(
        &mut self,
        ports: &Option<Vec<i64>>,
        t: &Token,
        first: bool,
        set_empty: bool,
    ) -> Option<SetMember> {
        if self.depth == 0 && self.in_group == 0 {
            return None;
        }
        let arrow = matches!(t.kind, Kind::Arrow | Kind::TwoArrow);
        let implicit = if arrow {
            first && (ports.is_some() || set_empty)
        } else if t.is(',') {
            ports.is_some()
        } else if t.kind != Kind::TwoColon {
            !first && (ports.is_some() || set_empty)
        } else {
            false
        };
        if !implicit {
            return None;
        }
        let name = if first { "input" } else { "output" };
        let elem = *self.body.map.get(name)?;
        let p = ports.clone().unwrap_or_default();
        Some(if first {
            SetMember {
                elem,
                inports: Vec::new(),
                outports: p,
            }
        } else {
            SetMember {
                elem,
                inports: p,
                outports: Vec::new(),
            }
        })
    }

    fn ydeclaration(&mut self, first: Option<Token>) {
        let mut decls: Vec<Token> = Vec::new();
        let mut pending_first = first;
        loop {
            if let Some(f) = pending_first.take() {
                decls.push(f);
            } else {
                let t = self.lex();
                if t.kind == Kind::Ident {
                    decls.push(t);
                } else {
                    self.err(lm_of(&t), "syntax error: expected element name");
                    self.unlex(t);
                }
            }
            let sep = self.lex();
            if sep.is(',') {
                continue;
            } else if sep.kind == Kind::TwoColon {
                break;
            } else {
                self.err(lm_of(&sep), "syntax error: expected '::' or ','");
                self.unlex(sep);
                return;
            }
        }
        let t = self.lex();
        let etype = match t.kind {
            Kind::Ident => self
                .types
                .get(&t.text)
                .cloned()
                .unwrap_or(ClassRef::Prim(t.text.clone())),
            Kind::Char('{') => self.ycompound(String::new(), lm_of(&t)),
            _ => {
                self.err(lm_of(&t), "missing element type in declaration");
                self.unlex(t);
                return;
            }
        };
        let mut config = String::new();
        let tp = self.lex();
        if tp.is('(') {
            config = self.lex_config();
            self.expect(')');
        } else {
            self.unlex(tp);
        }
        for d in decls {
            let name = d.text.clone();
            let lm = lm_of(&d);
            if let Some(&old) = self.body.map.get(&name) {
                self.err(lm, format!("redeclaration of element '{name}'"));
                if !matches!(
                    self.body.elements[old].class,
                    ClassRef::Tunnel | ClassRef::GroupIn | ClassRef::GroupOut(_)
                ) {
                    let olm = self.body.elements[old].landmark.clone();
                    self.err(olm, format!("element '{name}' previously declared here"));
                }
            } else if self.types.contains_key(&name) {
                self.err(lm, format!("class '{name}' used as element name"));
            } else {
                self.get_element(name, etype.clone(), config.clone(), lm);
            }
        }
    }

    /// A connection statement: a chain of element sets joined by `->` or
    /// `=>`. Each set is a comma-separated list of elements, each with
    /// optional input and output port lists (Click's modern syntax); `->`
    /// joins one-to-many or many-to-one, `=>` many-to-many.
    fn yconnection(&mut self) {
        let mut prev: Vec<SetMember> = Vec::new();
        let mut connector = Kind::Arrow;
        loop {
            // one element set
            let mut set: Vec<SetMember> = Vec::new();
            let lm = {
                let t = self.peek();
                lm_of(&t)
            };
            loop {
                let mut inports = self.yport();
                self.group_ports = None;
                let Some(elem) = self.yelement(prev.is_empty() && set.is_empty()) else {
                    let t = self.peek();
                    if let Some(m) =
                        self.implicit_port(&inports, &t, prev.is_empty(), set.is_empty())
                    {
                        set.push(m);
                        let t = self.lex();
                        if t.is(',') {
                            continue;
                        }
                        self.unlex(t);
                        break;
                    }
                    if inports.is_some() && (prev.is_empty() || !set.is_empty()) {
                        self.err_here("stranded port ignored");
                    }
                    break;
                };
                // an anonymous group's ports are implied when not written
                let group = self.group_ports.take();
                if let (None, Some((nin, _))) = (&inports, group) {
                    if nin > 0 {
                        inports = Some((0..nin as i64).collect());
                    }
                }
                let mut outports = None;
                let t = self.peek();
                if t.is('[') {
                    outports = self.yport();
                } else if let Some((_, nout)) = group {
                    if nout > 0 {
                        outports = Some((0..nout as i64).collect());
                    }
                }
                set.push(SetMember {
                    elem,
                    inports: inports.unwrap_or_default(),
                    outports: outports.unwrap_or_default(),
                });
                let t = self.lex();
                if !t.is(',') {
                    self.unlex(t);
                    break;
                }
            }
            if set.is_empty() {
                if prev.iter().any(|m| !m.outports.is_empty()) {
                    self.err_here("output ports ignored at end of chain");
                }
                return;
            }
            if prev.is_empty() {
                if set.iter().any(|m| !m.inports.is_empty()) {
                    self.err(lm.clone(), "input ports ignored at start of chain");
                }
            } else {
                self.connect_all(&prev, &set, &connector, &lm);
                if self.body.conns.len() > MAX_CONNECTIONS {
                    self.err_here("too many connections");
                    return;
                }
            }
            prev = set;
            loop {
                let t = self.lex();
                match t.kind {
                    Kind::Char(',') | Kind::TwoColon => {
                        self.err(lm_of(&t), format!("syntax error near '{}'", t.text));
                        continue;
                    }
                    Kind::Arrow | Kind::TwoArrow => {
                        connector = t.kind.clone();
                        break;
                    }
                    Kind::Ident
                    | Kind::Char('{')
                    | Kind::Char('}')
                    | Kind::Char('[')
                    | Kind::Char('(')
                    | Kind::Char(')')
                    | Kind::TwoBar
                    | Kind::ElementClass
                    | Kind::Require
                    | Kind::Define => {
                        self.unlex(t);
                        if prev.iter().any(|m| !m.outports.is_empty()) {
                            self.err_here("output ports ignored at end of chain");
                        }
                        return;
                    }
                    Kind::Char(';') | Kind::Eof => {
                        if prev.iter().any(|m| !m.outports.is_empty()) {
                            self.err(lm_of(&t), "output ports ignored at end of chain");
                        }
                        return;
                    }
                    _ => {
                        self.err(lm_of(&t), format!("syntax error near '{}'", t.text));
                        if !matches!(t.kind, Kind::Char(_)) {
                            self.unlex(t);
                        }
                        return;
                    }
                }
            }
        }
    }

    /// Click's `yconnection_connect_all`: pairs the output ports of the
    /// set `outs` with the input ports of the set `ins`.
    fn connect_all(
        &mut self,
        outs: &[SetMember],
        ins: &[SetMember],
        connector: &Kind,
        lm: &Landmark,
    ) {
        fn analyze(v: &[SetMember], output: bool) -> (usize, usize) {
            let (mut min, mut exp) = (0, 0);
            for m in v {
                let p = if output { &m.outports } else { &m.inports };
                let n = p.len();
                if n <= 1 {
                    min += 1;
                } else if p[n - 1] == -1 {
                    min += n - 1;
                    exp += 1;
                } else {
                    min += n;
                }
            }
            (min, exp)
        }
        // index 0: inputs, 1: outputs (as in Click)
        let sides: [&[SetMember]; 2] = [ins, outs];
        let ports_of = |k: usize, m: &SetMember| -> Vec<i64> {
            if k == 1 {
                m.outports.clone()
            } else {
                m.inports.clone()
            }
        };
        let (min0, exp0) = analyze(ins, false);
        let (min1, exp1) = analyze(outs, true);
        let mut minp = [min0, min1];
        let mut expandable = [exp0 > 0, exp1 > 0];
        if exp0 + exp1 > 1 {
            self.err(
                lm.clone(),
                "at most one expandable port allowed per connection",
            );
            expandable[usize::from(minp[0] < minp[1])] = false;
        }
        let two = *connector == Kind::TwoArrow;
        if two {
            // '=>' can read missing ports as expandable ports
            for k in 0..2 {
                if minp[k] == 1 && minp[1 - k] > 1 && ports_of(k, &sides[k][0]).is_empty() {
                    expandable[k] = true;
                }
            }
        }
        let mut step = [false; 2];
        let mut nexp = [0usize; 2];
        for k in 0..2 {
            step[k] = minp[k] > 1 || expandable[k];
            nexp[k] = if expandable[k] {
                minp[1 - k].saturating_sub(minp[k])
            } else {
                0
            };
        }
        if step[0] && step[1] {
            if !two {
                self.err(
                    lm.clone(),
                    "syntax error: many-to-many connections require '=>'",
                );
            }
            if !expandable[0] && !expandable[1] && minp[0] != minp[1] {
                self.err(
                    lm.clone(),
                    format!(
                        "connection mismatch: {} outputs connected to {} inputs",
                        minp[1], minp[0]
                    ),
                );
            } else if !expandable[0] && minp[0] < minp[1] {
                self.err(
                    lm.clone(),
                    format!(
                        "connection mismatch: {} or more outputs connected to {} inputs",
                        minp[1], minp[0]
                    ),
                );
            } else if !expandable[1] && minp[1] < minp[0] {
                self.err(
                    lm.clone(),
                    format!(
                        "connection mismatch: {} outputs connected to {} or more inputs",
                        minp[1], minp[0]
                    ),
                );
            }
        } else if !step[0] && !step[1] {
            step[0] = true;
        }
        minp = [minp[0], minp[1]];
        let mut it = [0usize; 2];
        let mut ppos = [0usize; 2];
        let mut port: [i64; 2] = [-1, -1];
        let mut guard = 0usize;
        while it[0] < sides[0].len() && it[1] < sides[1].len() {
            guard += 1;
            if guard > MAX_CONNECTIONS {
                break;
            }
            for k in 0..2 {
                if port[k] < 0 {
                    let pv = ports_of(k, &sides[k][it[k]]);
                    port[k] = pv.first().copied().unwrap_or(0).max(0);
                }
            }
            self.body.conns.push(BConn {
                from: sides[1][it[1]].elem,
                from_port: port[1] as usize,
                to: sides[0][it[0]].elem,
                to_port: port[0] as usize,
                landmark: lm.clone(),
            });
            for k in 0..2 {
                if !step[k] {
                    continue;
                }
                let pv = ports_of(k, &sides[k][it[k]]);
                let np = pv.len();
                ppos[k] += 1;
                if ppos[k] < np && pv[ppos[k]] >= 0 {
                    port[k] = pv[ppos[k]];
                } else if np >= 2 && pv[np - 1] == -1 && nexp[k] > 0 {
                    port[k] = pv[np - 2] + ppos[k] as i64 - (np as i64 - 2);
                    nexp[k] -= 1;
                } else if np == 0 && minp[k] == 1 && nexp[k] > 0 {
                    port[k] = ppos[k] as i64;
                    nexp[k] -= 1;
                } else {
                    port[k] = -1;
                    ppos[k] = 0;
                    it[k] += 1;
                }
            }
        }
    }

    // ---- compounds

    fn define_var(&mut self, name: String, value: String, formal: bool, lm: Landmark) {
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

    fn ycompound_arguments(&mut self) {
        loop {
            let t1 = self.lex();
            let (vartype, var, lm) = match t1.kind {
                Kind::Ident => {
                    let t2 = self.lex();
                    if t2.kind == Kind::Variable {
                        (t1.text.clone(), t2.text.clone(), lm_of(&t2))
                    } else {
                        if !self.scope.is_empty() {
                            self.err(lm_of(&t2), "expected variable");
                        }
                        self.unlex(t2);
                        self.unlex(t1);
                        return;
                    }
                }
                Kind::Variable => (String::new(), t1.text.clone(), lm_of(&t1)),
                Kind::Char('|') => return,
                _ => {
                    if self.nformals > 0 {
                        self.err(lm_of(&t1), "expected variable");
                    }
                    self.unlex(t1);
                    return;
                }
            };
            self.define_var(var, vartype, true, lm);
            let sep = self.lex();
            if sep.is('|') {
                return;
            } else if !sep.is(',') {
                self.err(lm_of(&sep), "expected ',' or '|'");
                self.unlex(sep);
                return;
            }
        }
    }

    /// Parse a compound body after its `{`; handles `||` overloads and `...`.
    fn ycompound(&mut self, name: String, lm: Landmark) -> ClassRef {
        if self.depth >= MAX_NESTING {
            self.err(lm, "maximum compound element nesting depth exceeded");
            self.skip_balanced_braces();
            return ClassRef::Prim("Error".into());
        }
        let mut parts: Vec<Compound> = Vec::new();
        let mut extension: Option<ClassRef> = None;
        loop {
            let t = self.lex();
            if t.kind == Kind::ThreeDot {
                match self.types.get(&name) {
                    Some(c) if !name.is_empty() => extension = Some(c.clone()),
                    _ => {
                        self.err(
                            lm_of(&t),
                            format!("cannot extend unknown element class '{name}'"),
                        );
                        extension = Some(ClassRef::Prim("Error".into()));
                    }
                }
                let t2 = self.lex();
                if parts.is_empty() || !t2.is('}') {
                    self.err(
                        lm_of(&t2),
                        "'...' should occur last, after one or more compounds",
                    );
                }
                if !t2.is('}') {
                    self.unlex(t2);
                }
                break;
            }
            let clm = lm_of(&t);
            self.unlex(t);
            let comp = self.ycompound_one(&name, clm);
            parts.push(comp);
            let t = self.lex();
            if t.kind != Kind::TwoBar {
                if !t.is('}') {
                    self.unlex(t);
                }
                break;
            }
        }
        let mut next = extension;
        let mut result = None;
        while let Some(mut c) = parts.pop() {
            c.overload = next.take();
            let r = ClassRef::Comp(Rc::new(c));
            next = Some(r.clone());
            result = Some(r);
        }
        let r = result.unwrap_or(ClassRef::Prim("Error".into()));
        if !name.is_empty() {
            self.types.insert(name, r.clone());
        }
        r
    }

    fn skip_balanced_braces(&mut self) {
        let mut depth = 1usize;
        loop {
            let t = self.lex();
            match t.kind {
                Kind::Eof => {
                    self.err(lm_of(&t), "expected '}'");
                    return;
                }
                Kind::Char('{') => depth += 1,
                Kind::Char('}') => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                Kind::Char('(') => {
                    let _ = self.lex_config();
                    self.expect(')');
                }
                _ => {}
            }
        }
    }

    fn ycompound_one(&mut self, name: &str, lm: Landmark) -> Compound {
        let saved_types = self.types.clone();
        let saved_body = core::mem::take(&mut self.body);
        let saved_scope = core::mem::take(&mut self.scope);
        let saved_nformals = core::mem::replace(&mut self.nformals, 0);
        let saved_order = core::mem::replace(&mut self.scope_order_error, false);
        let saved_group = core::mem::replace(&mut self.in_group, 0);
        self.depth += 1;
        self.get_element("input".into(), ClassRef::Tunnel, String::new(), lm.clone());
        self.get_element("output".into(), ClassRef::Tunnel, String::new(), lm.clone());
        self.body.anon_offset = 2;

        self.ycompound_arguments();
        while self.ystatement(true) {}

        self.depth -= 1;
        self.in_group = saved_group;
        let mut body = core::mem::replace(&mut self.body, saved_body);
        let scope = core::mem::replace(&mut self.scope, saved_scope);
        let nformals = core::mem::replace(&mut self.nformals, saved_nformals);
        self.scope_order_error = saved_order;
        self.types = saved_types;

        // count inputs/outputs, check pseudoelement use
        let pname = if name.is_empty() {
            "<anonymous>".to_string()
        } else {
            name.to_string()
        };
        let mut in_used: Vec<bool> = Vec::new();
        let mut out_used: Vec<bool> = Vec::new();
        let mut to_input = false;
        let mut from_output = false;
        for c in &body.conns {
            if c.from == 0 {
                if in_used.len() <= c.from_port {
                    in_used.resize(c.from_port + 1, false);
                }
                in_used[c.from_port] = true;
            } else if c.from == 1 {
                from_output = true;
            }
            if c.to == 1 {
                if out_used.len() <= c.to_port {
                    out_used.resize(c.to_port + 1, false);
                }
                out_used[c.to_port] = true;
            } else if c.to == 0 {
                to_input = true;
            }
        }
        if to_input {
            self.err(
                lm.clone(),
                format!("'{pname}' pseudoelement 'input' may only be used as output"),
            );
        }
        for (i, u) in in_used.iter().enumerate() {
            if !u {
                self.err(lm.clone(), format!("'{pname}' input {i} missing"));
            }
        }
        if from_output {
            self.err(
                lm.clone(),
                format!("'{pname}' pseudoelement 'output' may only be used as input"),
            );
        }
        for (i, u) in out_used.iter().enumerate() {
            if !u {
                self.err(lm.clone(), format!("'{pname}' output {i} missing"));
            }
        }
        body.deanonymize();
        Compound {
            name: name.to_string(),
            landmark: lm,
            depth: self.depth + 1,
            scope,
            nformals,
            body,
            ninputs: in_used.len(),
            noutputs: out_used.len(),
            overload: None,
        }
    }

    fn yelementclass(&mut self) {
        let tname = self.lex();
        let name = if tname.kind == Kind::Ident {
            tname.text.clone()
        } else {
            self.err(lm_of(&tname), "expected element type name");
            self.unlex(tname.clone());
            String::new()
        };
        let tnext = self.lex();
        if tnext.is('{') {
            self.ycompound(name, lm_of(&tnext));
        } else if tnext.kind == Kind::Ident {
            let c = self
                .types
                .get(&tnext.text)
                .cloned()
                .unwrap_or(ClassRef::Prim(tnext.text.clone()));
            if !name.is_empty() {
                self.types.insert(name, c);
            }
        } else {
            self.err(lm_of(&tnext), format!("syntax error near '{}'", tnext.text));
            if !name.is_empty() {
                self.types.insert(name, ClassRef::Prim("Error".into()));
            }
        }
    }

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

    fn ystatement(&mut self, nested: bool) -> bool {
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
}

// ---------------------------------------------------------------------------
// Flattening

#[derive(Clone, Debug)]
enum WClass {
    Prim(String),
    Comp(Rc<Compound>),
    /// A compound instance after expansion: (input tunnel, output tunnel).
    Inst(usize, usize),
    /// `X/input` or `X/output` of instance X.
    TunnelIn,
    TunnelOut(usize),
}

#[derive(Clone, Debug)]
struct WElem {
    name: String,
    class: WClass,
    config: String,
    landmark: Landmark,
}

#[derive(Clone, Debug)]
struct Frame {
    depth: usize,
    vars: Vec<(String, String)>,
}

/// The flattener's class for a parsed element; `idx` maps the body's
/// element indices (a group's tunnels) to the flattener's.
fn wclass_of(c: &ClassRef, idx: impl Fn(usize) -> Option<usize>) -> WClass {
    match c {
        ClassRef::Prim(p) => WClass::Prim(p.clone()),
        ClassRef::Comp(c) => WClass::Comp(c.clone()),
        ClassRef::Tunnel => WClass::Prim("Error".into()),
        ClassRef::Group(i, o) => match (idx(*i), idx(*o)) {
            (Some(i), Some(o)) => WClass::Inst(i, o),
            _ => WClass::Prim("Error".into()),
        },
        ClassRef::GroupIn => WClass::TunnelIn,
        ClassRef::GroupOut(g) => match idx(*g) {
            Some(g) => WClass::TunnelOut(g),
            None => WClass::Prim("Error".into()),
        },
    }
}

struct Flattener {
    elems: Vec<WElem>,
    /// Per element: (number of inputs used, number of outputs used).
    nports: Vec<(usize, usize)>,
    map: BTreeMap<String, usize>,
    conns: Vec<BConn>,
    errors: Vec<ParseError>,
    too_big: bool,
}

fn lookup<'v>(env: &'v [Frame], name: &str) -> Option<&'v str> {
    for f in env.iter().rev() {
        for (n, v) in f.vars.iter().rev() {
            if n == name {
                return Some(v);
            }
        }
    }
    None
}

/// Click's `cp_quote` without the outer quotes, used for values expanded
/// inside double quotes.
fn expand_in_quotes(v: &str, quote: u8) -> String {
    if quote == b'"' {
        let q = crate::args::quote(v);
        q[1..q.len() - 1].to_string()
    } else {
        v.to_string()
    }
}

/// Click's `cp_expand`: substitute `$var`, `${var}`, `${var-default}` and
/// `${var[N]}` (the Nth word of the value; N may itself use variables)
/// using `env`.  Unknown variables are left as written; nothing is expanded
/// inside single quotes; inside double quotes values are escaped.
fn expand_vars(config: &str, env: &[Frame]) -> String {
    if !config.contains('$') {
        return config.to_string();
    }
    let b = config.as_bytes();
    let mut out = String::new();
    let mut uninterp = 0;
    let mut quote = 0u8;
    let mut s = 0;
    while s < b.len() {
        match b[s] {
            b'\\' if s + 1 < b.len() && quote == b'"' => {
                s += 1;
            }
            q @ (b'\'' | b'"') => {
                if quote == 0 {
                    quote = q;
                } else if quote == q {
                    quote = 0;
                }
            }
            b'/' if quote == 0 && s + 1 < b.len() && (b[s + 1] == b'/' || b[s + 1] == b'*') => {
                s = crate::args::skip_comment_space(config, s);
                continue;
            }
            b'$' if s + 1 < b.len() && quote != b'\'' => {
                let before = s;
                let (vname, braces, after) = if b[s + 1] == b'{' {
                    match config[s + 2..].find('}') {
                        Some(k) => (&config[s + 2..s + 2 + k], true, s + 3 + k),
                        None => break,
                    }
                } else if b[s + 1].is_ascii_alphanumeric() || b[s + 1] == b'_' {
                    let mut e = s + 1;
                    while e < b.len() && (b[e].is_ascii_alphanumeric() || b[e] == b'_') {
                        e += 1;
                    }
                    (&config[s + 1..e], false, e)
                } else {
                    s += 1;
                    continue;
                };
                // `${name[INDEX]}`: word INDEX (itself expanded) of the value
                if braces && vname.ends_with(']') {
                    if let Some(lb) = vname.find('[') {
                        let name = &vname[..lb];
                        let index = expand_vars(&vname[lb + 1..vname.len() - 1], env);
                        if let Some(v) = lookup(env, name) {
                            let word = crate::args::parse_u64(index.trim())
                                .ok()
                                .and_then(|i| {
                                    crate::args::split_words(v).into_iter().nth(i as usize)
                                })
                                .unwrap_or_default();
                            out.push_str(&config[uninterp..before]);
                            out.push_str(&expand_in_quotes(&word, quote));
                            uninterp = after;
                        }
                        s = after;
                        continue;
                    }
                }
                let (name, default) = match (braces, vname.find('-')) {
                    (true, Some(m)) => (&vname[..m], Some(&vname[m + 1..])),
                    _ => (vname, None),
                };
                let val = lookup(env, name).or(default);
                if let Some(v) = val {
                    out.push_str(&config[uninterp..before]);
                    out.push_str(&expand_in_quotes(v, quote));
                    uninterp = after;
                }
                s = after;
                continue;
            }
            _ => {}
        }
        s += 1;
    }
    out.push_str(&config[uninterp..]);
    out
}

/// Click's `cp_assign_arguments` for compound formals.
fn assign_arguments(args: &[String], formals: &[(String, String)]) -> Option<Vec<String>> {
    if formals.is_empty() || formals.last().is_some_and(|f| f.1.is_empty()) {
        return (args.len() == formals.len()).then(|| args.to_vec());
    }
    let rest = formals.last().is_some_and(|f| f.1 == "__REST__");
    let nvalues = if rest {
        formals.len() - 1
    } else {
        formals.len()
    };
    let npositional = formals.iter().take_while(|f| f.1.is_empty()).count();
    let mut values: Vec<Option<String>> = vec![None; nvalues];
    let mut rest_args: Vec<String> = Vec::new();
    let mut next_pos = 0;
    for a in args {
        // keyword?
        let ab = a.as_bytes();
        let mut k = 0;
        while k < ab.len() && (ab[k].is_ascii_alphanumeric() || ab[k] == b'_') {
            k += 1;
        }
        let mut matched = false;
        if k > 0
            && k < ab.len()
            && (ab[k] == b' ' || ab[k] == b'\t' || ab[k] == b'\n' || ab[k] == b'\r')
        {
            let kw = &a[..k];
            if let Some(j) = (npositional..nvalues).find(|&j| formals[j].1 == kw) {
                values[j] = Some(a[k..].trim_start().to_string());
                matched = true;
            }
        } else if k > 0 && k == ab.len() {
            // "KEYWORD" alone: an empty keyword value
            if let Some(j) = (npositional..nvalues).find(|&j| formals[j].1 == a.as_str()) {
                values[j] = Some(String::new());
                matched = true;
            }
        }
        if matched {
            continue;
        }
        if next_pos < npositional {
            values[next_pos] = Some(a.clone());
            next_pos += 1;
        } else if rest {
            rest_args.push(a.clone());
        } else {
            return None;
        }
    }
    let mut out = Vec::with_capacity(formals.len());
    for v in values {
        out.push(v?);
    }
    if rest {
        out.push(rest_args.join(", "));
    }
    Some(out)
}

impl Flattener {
    fn push_conn(&mut self, c: BConn) {
        let o = &mut self.nports[c.from].1;
        *o = (*o).max(c.from_port + 1);
        let i = &mut self.nports[c.to].0;
        *i = (*i).max(c.to_port + 1);
        self.conns.push(c);
    }

    fn add_elem(&mut self, e: WElem) -> Option<usize> {
        if self.elems.len() >= MAX_ELEMENTS {
            if !self.too_big {
                self.too_big = true;
                self.errors.push(ParseError {
                    landmark: e.landmark.clone(),
                    message: "configuration too large after compound expansion".into(),
                });
            }
            return None;
        }
        let i = self.elems.len();
        self.map.insert(e.name.clone(), i);
        self.elems.push(e);
        self.nports.push((0, 0));
        Some(i)
    }

    fn expand(&mut self, which: usize, env: &[Frame], depth: usize) {
        if self.too_big {
            return;
        }
        let cfg = expand_vars(&self.elems[which].config, env);
        self.elems[which].config = cfg;
        let WClass::Comp(comp) = self.elems[which].class.clone() else {
            return;
        };
        let lm = self.elems[which].landmark.clone();
        if depth >= MAX_EXPANSION_DEPTH {
            self.errors.push(ParseError {
                landmark: lm,
                message: "maximum compound element nesting depth exceeded".into(),
            });
            self.elems[which].class = WClass::Prim("Error".into());
            return;
        }
        // ports used by the enclosing configuration
        let (ni, no) = self.nports[which];
        let args = split_args(&self.elems[which].config);
        // resolve overloads (Click's Compound::resolve)
        let mut ct = ClassRef::Comp(comp.clone());
        let mut closest: Option<(Rc<Compound>, Vec<String>)> = None;
        let mut nct = 0;
        let found: Option<(ClassRef, Vec<String>)> = loop {
            match ct.clone() {
                ClassRef::Comp(c) => {
                    nct += 1;
                    let assigned = assign_arguments(&args, &c.scope[..c.nformals]);
                    if c.ninputs == ni && c.noutputs == no {
                        if let Some(a) = assigned.clone() {
                            break Some((ClassRef::Comp(c), a));
                        }
                    }
                    if let Some(a) = assigned {
                        closest = Some((c.clone(), a));
                    }
                    match &c.overload {
                        Some(next) => ct = next.clone(),
                        None => break None,
                    }
                }
                other => break Some((other, Vec::new())),
            }
        };
        let (class, actuals) = match found {
            Some(f) => f,
            None => {
                if nct != 1 || closest.is_none() {
                    let mut msg = format!(
                        "no match for '{}{}'\ncandidates are:",
                        comp.printable_name(),
                        ports_sig(Some(args.len()), ni, no)
                    );
                    let mut c = Some(comp.clone());
                    while let Some(cc) = c {
                        msg.push_str(&format!("\n  {}: {}", cc.landmark, cc.signature()));
                        c = match &cc.overload {
                            Some(ClassRef::Comp(n)) => Some(n.clone()),
                            _ => None,
                        };
                    }
                    self.errors.push(ParseError {
                        landmark: lm.clone(),
                        message: msg,
                    });
                }
                match closest {
                    Some((c, a)) => (ClassRef::Comp(c), a),
                    None => {
                        self.elems[which].class = WClass::Prim("Error".into());
                        return;
                    }
                }
            }
        };
        let comp = match class {
            ClassRef::Comp(c) => c,
            ClassRef::Prim(p) => {
                self.elems[which].class = WClass::Prim(p);
                return;
            }
            ClassRef::Tunnel | ClassRef::Group(..) | ClassRef::GroupIn | ClassRef::GroupOut(_) => {
                return
            }
        };
        // new variable environment
        let mut new_env: Vec<Frame> = env
            .iter()
            .filter(|f| f.depth < comp.depth)
            .cloned()
            .collect();
        let mut frame = Frame {
            depth: comp.depth,
            vars: Vec::new(),
        };
        for (i, (n, _)) in comp.scope[..comp.nformals].iter().enumerate() {
            frame
                .vars
                .push((n.clone(), actuals.get(i).cloned().unwrap_or_default()));
        }
        new_env.push(frame);
        for (n, v) in &comp.scope[comp.nformals..] {
            let val = expand_vars(v, &new_env);
            if let Some(f) = new_env.last_mut() {
                f.vars.push((n.clone(), val));
            }
        }
        self.expand_into(which, &comp, &new_env, depth);
    }

    fn expand_into(&mut self, which: usize, comp: &Rc<Compound>, env: &[Frame], depth: usize) {
        let ename = self.elems[which].name.clone();
        let lm = self.elems[which].landmark.clone();
        let tunnel = |this: &mut Flattener, suffix: &str, class: WClass| -> Option<usize> {
            let n = format!("{ename}/{suffix}");
            if let Some(&old) = this.map.get(&n) {
                this.errors.push(ParseError {
                    landmark: lm.clone(),
                    message: format!("redeclaration of element '{n}'"),
                });
                let olm = this.elems[old].landmark.clone();
                this.errors.push(ParseError {
                    landmark: olm,
                    message: format!("'{n}' previously declared here"),
                });
                return None;
            }
            this.add_elem(WElem {
                name: n,
                class,
                config: String::new(),
                landmark: lm.clone(),
            })
        };
        let tin = tunnel(self, "input", WClass::TunnelIn);
        let tout = tunnel(self, "output", WClass::TunnelOut(which));
        let (Some(tin), Some(tout)) = (tin, tout) else {
            self.elems[which].class = WClass::Prim("Error".into());
            return;
        };
        self.elems[which].class = WClass::Inst(tin, tout);
        let mut idx_map: Vec<Option<usize>> = vec![Some(tin), Some(tout)];
        for e in comp.body.elements.iter().skip(2) {
            let cname = format!("{ename}/{}", e.name);
            if let Some(&old) = self.map.get(&cname) {
                let olm = self.elems[old].landmark.clone();
                self.errors.push(ParseError {
                    landmark: lm.clone(),
                    message: format!("redeclaration of element '{cname}'"),
                });
                self.errors.push(ParseError {
                    landmark: olm,
                    message: format!("'{cname}' previously declared here"),
                });
                idx_map.push(None);
                continue;
            }
            // groups are patched below, once every index is known
            let class = wclass_of(&e.class, |_| None);
            let config = expand_vars(&e.config, env);
            let i = self.add_elem(WElem {
                name: cname,
                class,
                config,
                landmark: e.landmark.clone(),
            });
            if i.is_none() {
                return;
            }
            idx_map.push(i);
        }
        for (bi, e) in comp.body.elements.iter().enumerate().skip(2) {
            if let (ClassRef::Group(..) | ClassRef::GroupOut(_), Some(Some(fi))) =
                (&e.class, idx_map.get(bi))
            {
                self.elems[*fi].class = wclass_of(&e.class, |j| idx_map.get(j).copied().flatten());
            }
        }
        for c in &comp.body.conns {
            if let (Some(Some(f)), Some(Some(t))) = (idx_map.get(c.from), idx_map.get(c.to)) {
                self.push_conn(BConn {
                    from: *f,
                    from_port: c.from_port,
                    to: *t,
                    to_port: c.to_port,
                    landmark: c.landmark.clone(),
                });
            }
        }
        for i in idx_map.iter().skip(2).flatten() {
            self.expand(*i, env, depth + 1);
            if self.too_big {
                return;
            }
        }
    }

    /// Follow a connection destination through compound tunnels.
    fn expand_dst(
        &self,
        by_src: &BTreeMap<(usize, usize), Vec<usize>>,
        node: usize,
        port: usize,
        visiting: &mut BTreeSet<(usize, usize)>,
        out: &mut Vec<(usize, usize)>,
    ) {
        let via = match self.elems[node].class {
            WClass::Prim(_) => {
                out.push((node, port));
                return;
            }
            WClass::Inst(tin, _) => tin,
            WClass::TunnelOut(inst) => inst,
            _ => return,
        };
        if !visiting.insert((node, port)) || visiting.len() > 4 * MAX_EXPANSION_DEPTH {
            return;
        }
        if let Some(cs) = by_src.get(&(via, port)) {
            for &ci in cs {
                let c = &self.conns[ci];
                self.expand_dst(by_src, c.to, c.to_port, visiting, out);
            }
        }
        visiting.remove(&(node, port));
    }

    fn check_instance_ports(&mut self) {
        // ports used per element, as source and as destination
        let mut as_src: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
        let mut as_dst: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
        for c in &self.conns {
            as_src.entry(c.from).or_default().insert(c.from_port);
            as_dst.entry(c.to).or_default().insert(c.to_port);
        }
        let empty = BTreeSet::new();
        for x in 0..self.elems.len() {
            let WClass::Inst(tin, tout) = self.elems[x].class else {
                continue;
            };
            let name = &self.elems[x].name;
            let lm = &self.elems[x].landmark;
            let outer_in = as_dst.get(&x).unwrap_or(&empty);
            let outer_out = as_src.get(&x).unwrap_or(&empty);
            let inner_in = as_src.get(&tin).unwrap_or(&empty);
            let inner_out = as_dst.get(&tout).unwrap_or(&empty);
            let mut msgs = Vec::new();
            for p in outer_in.difference(inner_in) {
                msgs.push(format!("'{name}' has no input {p}"));
            }
            for p in inner_in.difference(outer_in) {
                msgs.push(format!("'{name}' input {p} unused"));
            }
            for p in outer_out.difference(inner_out) {
                msgs.push(format!("'{name}' has no output {p}"));
            }
            for p in inner_out.difference(outer_out) {
                msgs.push(format!("'{name}' output {p} unused"));
            }
            for m in msgs {
                self.errors.push(ParseError {
                    landmark: lm.clone(),
                    message: m,
                });
            }
        }
    }

    fn finish(mut self, requirements: Vec<String>) -> (FlatConfig, Vec<ParseError>) {
        self.check_instance_ports();
        let mut by_src: BTreeMap<(usize, usize), Vec<usize>> = BTreeMap::new();
        for (i, c) in self.conns.iter().enumerate() {
            by_src.entry((c.from, c.from_port)).or_default().push(i);
        }
        let mut renum = vec![usize::MAX; self.elems.len()];
        let mut elements = Vec::new();
        for (i, e) in self.elems.iter().enumerate() {
            if let WClass::Prim(p) = &e.class {
                renum[i] = elements.len();
                elements.push(FlatElement {
                    name: e.name.clone(),
                    class: p.clone(),
                    config: e.config.clone(),
                    landmark: e.landmark.clone(),
                });
            }
        }
        let mut conns: Vec<FlatConnection> = Vec::new();
        let mut visiting = BTreeSet::new();
        for c in &self.conns {
            if !matches!(self.elems[c.from].class, WClass::Prim(_)) {
                continue;
            }
            let mut dsts = Vec::new();
            self.expand_dst(&by_src, c.to, c.to_port, &mut visiting, &mut dsts);
            for (d, dp) in dsts {
                conns.push(FlatConnection {
                    from: renum[c.from],
                    from_port: c.from_port,
                    to: renum[d],
                    to_port: dp,
                    landmark: c.landmark.clone(),
                });
                if conns.len() > MAX_CONNECTIONS {
                    break;
                }
            }
        }
        conns.sort_by_key(|c| (c.from, c.from_port, c.to, c.to_port));
        conns.dedup_by(|a, b| {
            (a.from, a.from_port, a.to, a.to_port) == (b.from, b.from_port, b.to, b.to_port)
        });
        (
            FlatConfig {
                elements,
                connections: conns,
                requirements,
            },
            self.errors,
        )
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
    let mut p = Parser {
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
    };
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
    let env = [Frame { depth: 0, vars }];

    let body = core::mem::take(&mut p.body);
    let mut fl = Flattener {
        elems: Vec::new(),
        nports: Vec::new(),
        map: BTreeMap::new(),
        conns: Vec::new(),
        errors: Vec::new(),
        too_big: false,
    };
    for e in body.elements {
        // the top level's indices are the flattener's
        let class = wclass_of(&e.class, Some);
        let name = e.name;
        fl.map.insert(name.clone(), fl.elems.len());
        fl.elems.push(WElem {
            name,
            class,
            config: e.config,
            landmark: e.landmark,
        });
        fl.nports.push((0, 0));
    }
    for c in body.conns {
        fl.push_conn(c);
    }
    let n = fl.elems.len();
    for i in 0..n {
        fl.expand(i, &env, 0);
        if fl.too_big {
            break;
        }
    }
    let (cfg, errs) = fl.finish(core::mem::take(&mut p.requirements));
    let mut errors = p.errors;
    errors.extend(errs);
    if errors.is_empty() {
        Ok(cfg)
    } else {
        Err(errors)
    }
}
