//! Graph checking: a flat configuration's elements and connections
//! checked against the registry (classes found, port counts from the
//! classes' port specs, push and pull resolved through agnostic ports,
//! every port used once as push/pull allows), and the order in which the
//! checked elements initialize.

use super::dispatch::Slot;
use crate::element::ClassSpec;
use crate::registry::Registry;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

/// One end of a connection: an element and one of its ports.
#[derive(Copy, Clone)]
pub(super) struct Target {
    pub(super) elem: u32,
    pub(super) port: u32,
}

/// A configuration's element graph, checked: classes found, port counts
/// and push/pull resolved, connections validated.
/// [`Router::from_flat`](super::Router::from_flat) builds on it; hosts that
/// split one configuration over several routers (threads) plan with it.
pub struct Graph {
    /// Each element's class.
    pub specs: Vec<&'static ClassSpec>,
    /// Input and output counts.
    pub nin: Vec<usize>,
    pub nout: Vec<usize>,
    /// Whether each input (output) port is push, after agnostic ports
    /// were resolved.
    pub in_push: Vec<Vec<bool>>,
    pub out_push: Vec<Vec<bool>>,
    /// The valid connections: (from, from port, to, to port).
    pub connections: Vec<(usize, usize, usize, usize)>,
    pub(super) out_target: Vec<Vec<Option<Target>>>,
    pub(super) in_source: Vec<Vec<Option<Target>>>,
}

/// Checks `flat`'s element graph against `registry`: every error at once,
/// as Click prints them (`FILE:LINE: message`).
pub fn check_graph(
    flat: &click_lang::FlatConfig,
    registry: &Registry,
) -> Result<Graph, Vec<String>> {
    let mut errors: Vec<String> = Vec::new();
    // 1. classes
    let mut specs: Vec<Option<&'static ClassSpec>> = Vec::new();
    for e in &flat.elements {
        match registry.get(&e.class) {
            Some(s) => specs.push(Some(s)),
            None => {
                errors.push(format!(
                    "{}: unknown element class '{}'",
                    e.landmark, e.class
                ));
                specs.push(None);
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let specs: Vec<&'static ClassSpec> = specs.into_iter().map(|s| s.unwrap()).collect();
    let n = specs.len();
    let decl = |i: usize| format!("{} :: {}", flat.elements[i].name, specs[i].name);
    let lm = |i: usize| flat.elements[i].landmark.to_string();

    // 2. port counts
    let mut used_in = vec![0usize; n];
    let mut used_out = vec![0usize; n];
    for c in &flat.connections {
        used_out[c.from] = used_out[c.from].max(c.from_port + 1);
        used_in[c.to] = used_in[c.to].max(c.to_port + 1);
    }
    let mut nin = vec![0usize; n];
    let mut nout = vec![0usize; n];
    for i in 0..n {
        let (ic, oc) = specs[i]
            .port_count
            .split_once('/')
            .unwrap_or((specs[i].port_count, ""));
        let (ilo, ihi) = parse_range(ic).unwrap_or((0, usize::MAX));
        nin[i] = used_in[i].clamp(ilo, ihi);
        if oc == "=" {
            nout[i] = nin[i];
        } else {
            let (olo, ohi) = parse_range(oc).unwrap_or((0, usize::MAX));
            nout[i] = used_out[i].clamp(olo, ohi);
        }
    }
    let mut conns: Vec<(usize, usize, usize, usize, String)> = Vec::new();
    for c in &flat.connections {
        let mut ok = true;
        if c.from_port >= nout[c.from] {
            errors.push(format!(
                "{}: '{}' has no output {}",
                lm(c.from),
                decl(c.from),
                c.from_port
            ));
            ok = false;
        }
        if c.to_port >= nin[c.to] {
            errors.push(format!(
                "{}: '{}' has no input {}",
                lm(c.to),
                decl(c.to),
                c.to_port
            ));
            ok = false;
        }
        if ok
            && !conns
                .iter()
                .any(|x| (x.0, x.1, x.2, x.3) == (c.from, c.from_port, c.to, c.to_port))
        {
            conns.push((c.from, c.from_port, c.to, c.to_port, c.landmark.to_string()));
        }
    }

    // 3. push/pull
    let mut pin: Vec<Vec<Proc>> = (0..n)
        .map(|i| {
            let code = specs[i]
                .processing
                .split_once('/')
                .map(|x| x.0)
                .unwrap_or("a");
            (0..nin[i]).map(|p| proc_at(code, p)).collect()
        })
        .collect();
    let mut pout: Vec<Vec<Proc>> = (0..n)
        .map(|i| {
            let code = specs[i]
                .processing
                .split_once('/')
                .map(|x| x.1)
                .unwrap_or("a");
            (0..nout[i]).map(|p| proc_at(code, p)).collect()
        })
        .collect();
    // Agnostic ports of one element move together.
    let mut elem_mode: Vec<Proc> = vec![Proc::Agnostic; n];
    let mut bad = vec![false; conns.len()];
    loop {
        let mut changed = false;
        for (ci, c) in conns.iter().enumerate() {
            if bad[ci] {
                continue;
            }
            let (f, fp, t, tp) = (c.0, c.1, c.2, c.3);
            let mut pf = pout[f][fp];
            if pf == Proc::Agnostic {
                pf = elem_mode[f];
            }
            let mut pt = pin[t][tp];
            if pt == Proc::Agnostic {
                pt = elem_mode[t];
            }
            match (pf, pt) {
                (Proc::Agnostic, Proc::Agnostic) => {}
                (Proc::Agnostic, m) => {
                    elem_mode[f] = m;
                    changed = true;
                }
                (m, Proc::Agnostic) => {
                    elem_mode[t] = m;
                    changed = true;
                }
                (a, b) if a != b => {
                    let from_agn = pout[f][fp] == Proc::Agnostic;
                    let to_agn = pin[t][tp] == Proc::Agnostic;
                    let kind = |p: Proc| if p == Proc::Push { "push" } else { "pull" };
                    if from_agn || to_agn {
                        // An agnostic element whose inputs resolved to
                        // `a` while its outputs must be `b` (or the
                        // reverse): report it as Click does.
                        let (e, ip, op) = if from_agn { (f, 0, fp) } else { (t, tp, 0) };
                        errors.push(format!(
                            "{}: agnostic '{}' in mixed context: {} input {}, {} output {}",
                            lm(e),
                            decl(e),
                            kind(a),
                            ip,
                            kind(b),
                            op
                        ));
                    } else {
                        errors.push(format!(
                            "{}: '{}' {} output {} connected to '{}' {} input {}",
                            c.4,
                            decl(f),
                            kind(a),
                            fp,
                            decl(t),
                            kind(b),
                            tp
                        ));
                    }
                    bad[ci] = true;
                }
                _ => {}
            }
        }
        if !changed {
            break;
        }
    }
    for i in 0..n {
        let m = if elem_mode[i] == Proc::Agnostic {
            Proc::Push
        } else {
            elem_mode[i]
        };
        for p in pin[i].iter_mut() {
            if *p == Proc::Agnostic {
                *p = m;
            }
        }
        for p in pout[i].iter_mut() {
            if *p == Proc::Agnostic {
                *p = m;
            }
        }
    }

    // 4. completeness
    let mut out_target: Vec<Vec<Option<Target>>> = (0..n).map(|i| vec![None; nout[i]]).collect();
    let mut in_source: Vec<Vec<Option<Target>>> = (0..n).map(|i| vec![None; nin[i]]).collect();
    let mut used_o: Vec<Vec<bool>> = (0..n).map(|i| vec![false; nout[i]]).collect();
    let mut used_i: Vec<Vec<bool>> = (0..n).map(|i| vec![false; nin[i]]).collect();
    let mut final_conns = Vec::new();
    for (ci, c) in conns.iter().enumerate() {
        if bad[ci] {
            continue;
        }
        let (f, fp, t, tp) = (c.0, c.1, c.2, c.3);
        if used_o[f][fp] && pout[f][fp] == Proc::Push {
            errors.push(format!(
                "{}: illegal reuse of '{}' push output {}",
                lm(f),
                decl(f),
                fp
            ));
            // the other end is still connected, as in Click
            used_i[t][tp] = true;
            continue;
        }
        if used_i[t][tp] && pin[t][tp] == Proc::Pull {
            errors.push(format!(
                "{}: illegal reuse of '{}' pull input {}",
                lm(t),
                decl(t),
                tp
            ));
            used_o[f][fp] = true;
            continue;
        }
        used_o[f][fp] = true;
        used_i[t][tp] = true;
        if pout[f][fp] == Proc::Push {
            out_target[f][fp] = Some(Target {
                elem: t as u32,
                port: tp as u32,
            });
        } else {
            in_source[t][tp] = Some(Target {
                elem: f as u32,
                port: fp as u32,
            });
        }
        final_conns.push((f, fp, t, tp));
    }
    for (i, ui) in used_i.iter().enumerate() {
        for (p, u) in ui.iter().enumerate() {
            if !u {
                errors.push(format!("{}: '{}' input {} unused", lm(i), decl(i), p));
            }
        }
    }
    for (i, uo) in used_o.iter().enumerate() {
        for (p, u) in uo.iter().enumerate() {
            if !u {
                errors.push(format!("{}: '{}' output {} unused", lm(i), decl(i), p));
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let in_push = pin
        .iter()
        .map(|v| v.iter().map(|p| *p == Proc::Push).collect())
        .collect();
    let out_push = pout
        .iter()
        .map(|v| v.iter().map(|p| *p == Proc::Push).collect())
        .collect();
    Ok(Graph {
        specs,
        nin,
        nout,
        in_push,
        out_push,
        connections: final_conns,
        out_target,
        in_source,
    })
}

/// A port's processing: push, pull, or not yet resolved.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Proc {
    Agnostic,
    Push,
    Pull,
}

/// A port-count range (`"1"`, `"1-2"`, `"-"`, `""`) as (min, max).
fn parse_range(s: &str) -> Option<(usize, usize)> {
    if s.is_empty() {
        return Some((0, 0));
    }
    if s == "-" {
        return Some((0, usize::MAX));
    }
    if let Some((a, b)) = s.split_once('-') {
        let lo = if a.is_empty() { 0 } else { a.parse().ok()? };
        let hi = if b.is_empty() {
            usize::MAX
        } else {
            b.parse().ok()?
        };
        return Some((lo, hi));
    }
    let n = s.parse().ok()?;
    Some((n, n))
}

/// The processing of `port` in a processing code (`"hl"`, `"a"`): the
/// last letter covers the remaining ports.
fn proc_at(code: &str, port: usize) -> Proc {
    let c = code
        .chars()
        .nth(port)
        .or_else(|| code.chars().last())
        .unwrap_or('a');
    match c {
        'h' => Proc::Push,
        'l' => Proc::Pull,
        _ => Proc::Agnostic,
    }
}

/// Initialization order: declaration order, with every element preceded
/// by the elements its pull inputs pull from (depth first; a pull cycle,
/// which the graph check allows through agnostic elements, falls back to
/// declaration order where it closes).
pub(super) fn init_order(slots: &[Slot]) -> Vec<usize> {
    let n = slots.len();
    let mut state = vec![0u8; n]; // 0 new, 1 on the stack, 2 placed
    let mut order = Vec::with_capacity(n);
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        // (element, next input port to look at)
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        state[root] = 1;
        while let Some(&mut (e, ref mut port)) = stack.last_mut() {
            let s = &slots[e];
            let mut next = None;
            while *port < s.in_source.len() {
                let j = *port;
                *port += 1;
                if s.in_push.get(j).copied().unwrap_or(true) {
                    continue;
                }
                if let Some(t) = s.in_source[j] {
                    let u = t.elem as usize;
                    if u < n && state[u] == 0 {
                        next = Some(u);
                        break;
                    }
                }
            }
            match next {
                Some(u) => {
                    state[u] = 1;
                    stack.push((u, 0));
                }
                None => {
                    state[e] = 2;
                    order.push(e);
                    stack.pop();
                }
            }
        }
    }
    order
}
