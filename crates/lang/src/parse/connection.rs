//! Declarations and connections: elements (declared, anonymous, groups
//! `( ... )`), port lists, element sets, and the connections between them,
//! as Click's `lib/lexer.cc` reads them.

use super::parser::Parser;
use super::{lm_of, BConn, BElem, ClassRef, Landmark, ParseError, MAX_CONNECTIONS, MAX_NESTING};
use crate::lexer::{Kind, Token};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// One element of an element set in a connection, with its port lists
/// (empty: no port given; a final -1 marks an expandable list).
#[derive(Clone, Debug)]
struct SetMember {
    elem: usize,
    inports: Vec<i64>,
    outports: Vec<i64>,
}

impl Parser<'_, '_> {
    pub(super) fn get_element(
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
    pub(super) fn yconnection(&mut self) {
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
}
