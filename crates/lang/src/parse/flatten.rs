//! Flattening: compound instances expanded into their elements (with
//! `$variables` substituted, overloads chosen by arguments and ports,
//! names prefixed `instance/inner`), tunnels removed, and connections
//! traced through them to the primitive elements Click creates.

use super::{
    ports_sig, BConn, Body, ClassRef, Compound, FlatConfig, FlatConnection, FlatElement, Landmark,
    ParseError, MAX_CONNECTIONS, MAX_ELEMENTS, MAX_EXPANSION_DEPTH,
};
use crate::args::split_args;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

/// Flattens the parsed top-level `body`, with `vars` the top-level
/// variables (the file's `define`s and the caller's): the configuration
/// and the errors found.
pub(super) fn flatten(
    body: Body,
    vars: Vec<(String, String)>,
    requirements: Vec<String>,
) -> (FlatConfig, Vec<ParseError>) {
    let env = [Frame { depth: 0, vars }];
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
    fl.finish(requirements)
}

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
