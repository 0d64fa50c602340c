//! Compound element classes: `elementclass NAME { ... }` and anonymous
//! `{ ... }` classes, their formal parameters, `||` overloads and `...`
//! extensions, and the checks on their `input` and `output`
//! pseudoelements.

use super::parser::Parser;
use super::{lm_of, ClassRef, Compound, Landmark, MAX_NESTING};
use crate::lexer::Kind;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

impl Parser<'_, '_> {
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
    pub(super) fn ycompound(&mut self, name: String, lm: Landmark) -> ClassRef {
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

    pub(super) fn yelementclass(&mut self) {
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
}
