//! Compilation of rule lists into a decision DAG of word tests.
//!
//! Each expression is compiled in continuation-passing style
//! (`compile(e, on_true, on_false)`), so every expression node is emitted
//! exactly once and the result is linear in the size of the rules.
//! Identical instructions (same test, same targets) are hash-consed.
//! A dataflow pass then propagates facts known on every path into a node
//! ("word W & M == V" / "!=") and threads jumps through tests whose outcome
//! is already decided (e.g. the repeated `ip proto == tcp` and
//! first-fragment checks of a firewall rule list), and a final pass
//! removes unreachable and duplicate instructions.

use alloc::collections::BTreeMap;
use alloc::vec;
use alloc::vec::Vec;

use crate::expr::{Atom, Expr, View};

/// Jump target: `>= 0` is an instruction index, `< 0` is a final result.
pub(crate) type Target = i32;

/// Final result "drop the packet".
pub(crate) const DROP: Target = i32::MIN;

pub(crate) fn output(port: usize) -> Target {
    -1 - port as i32
}

pub(crate) fn decode(t: Target) -> Option<usize> {
    if t == DROP {
        None
    } else {
        Some((-1 - t) as usize)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Node {
    pub atom: Atom,
    /// Short packets take the `yes` branch (else the `no` branch).
    pub short_yes: bool,
    pub yes: Target,
    pub no: Target,
}

impl Node {
    /// Where a packet goes from this test; a packet too short for its word
    /// takes the short branch.
    #[inline]
    pub(crate) fn step(&self, v: &View) -> Target {
        if self.atom.test(v).unwrap_or(self.short_yes) {
            self.yes
        } else {
            self.no
        }
    }
}

#[derive(Default)]
struct Builder {
    nodes: Vec<Node>,
    cons: BTreeMap<Node, Target>,
    /// Sort runs of single-test conjuncts as Click's
    /// `bubble_sort_and_exprs` does (`None`: keep the written order).
    sort: Option<SortKey>,
}

/// How conjuncts are ordered: by offset (IP programs with the protocol
/// word first, as Click's IPFilter offset map puts it), then mask, then
/// value.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum SortKey {
    Classifier,
    Ip,
}

impl SortKey {
    fn key(self, e: &Expr) -> Option<(u32, u32, u32)> {
        // Only plain tests move: Click swaps two tests only when both
        // fail to the same place, which a negated test does not.
        let Expr::Atom(a, _) = e else { return None };
        let off = match self {
            SortKey::Classifier => a.off,
            SortKey::Ip if a.mac => a.off,
            SortKey::Ip if a.transp => a.off.saturating_add(512),
            // the protocol word (Click: offset_net + 8 -> offset_net + 3)
            SortKey::Ip if a.off == 8 => 259,
            SortKey::Ip => a.off.saturating_add(256),
        };
        Some((off, a.mask, a.value))
    }

    /// Stable-sorts each maximal run of single-test conjuncts (AND is
    /// commutative: every test is a plain boolean of the packet, short
    /// packets included, so the order changes only the walk).
    fn sort_run(self, v: &[Expr]) -> Vec<&Expr> {
        // A disjunction holding one of the conjunction's own tests is true
        // whenever the conjunction is (`udp && (tcp || udp) && ...`, as a
        // port primitive after `udp` makes): drop it, so it does not
        // split the run of tests to sort.
        let implied = |e: &Expr| match e {
            Expr::Or(w) => w
                .iter()
                .any(|d| matches!(d, Expr::Atom(..)) && v.contains(d)),
            _ => false,
        };
        let mut out: Vec<&Expr> = v.iter().filter(|e| !implied(e)).collect();
        let mut i = 0;
        while i < out.len() {
            if self.key(out[i]).is_none() {
                i += 1;
                continue;
            }
            let mut j = i;
            while j < out.len() && self.key(out[j]).is_some() {
                j += 1;
            }
            out[i..j].sort_by_key(|e| self.key(e));
            i = j;
        }
        out
    }
}

impl Builder {
    fn mk(&mut self, n: Node) -> Target {
        if n.yes == n.no {
            return n.yes;
        }
        if let Some(&t) = self.cons.get(&n) {
            return t;
        }
        let t = self.nodes.len() as Target;
        self.nodes.push(n);
        self.cons.insert(n, t);
        t
    }

    fn compile(&mut self, e: &Expr, t: Target, f: Target) -> Target {
        match e {
            Expr::Const(b) => {
                if *b {
                    t
                } else {
                    f
                }
            }
            Expr::Atom(a, s) => self.mk(Node {
                atom: *a,
                short_yes: *s,
                yes: t,
                no: f,
            }),
            Expr::Not(e) => self.compile(e, f, t),
            Expr::And(v) => match self.sort {
                Some(k) => k
                    .sort_run(v)
                    .into_iter()
                    .rev()
                    .fold(t, |cur, e| self.compile(e, cur, f)),
                None => v.iter().rev().fold(t, |cur, e| self.compile(e, cur, f)),
            },
            Expr::Or(v) => v.iter().rev().fold(f, |cur, e| self.compile(e, t, cur)),
            Expr::Ite(c, a, b) => {
                let ta = self.compile(a, t, f);
                let tb = self.compile(b, t, f);
                self.compile(c, ta, tb)
            }
        }
    }
}

/// A fact known on some edge: the test `atom` came out `eq`, or (when
/// `maybe_short`) the packet may instead have been too short for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fact {
    atom: Atom,
    eq: bool,
    maybe_short: bool,
}

const MAX_FACTS: usize = 48;

/// Decides the outcome of `n` given `facts`: `Some(true)` = yes branch.
fn decide(facts: &[Fact], n: &Node) -> Option<bool> {
    let a = &n.atom;
    for f in facts {
        let fa = &f.atom;
        if !fa.same_word(a) {
            continue;
        }
        // Outcome of `n` if neither test is short.
        let r = if f.eq {
            if (fa.value ^ a.value) & fa.mask & a.mask != 0 {
                false
            } else if a.mask & !fa.mask == 0 {
                true
            } else {
                continue;
            }
        } else if a.mask & fa.mask == fa.mask && a.value & fa.mask == fa.value {
            // n requires f's bits to equal f's value, known false.
            false
        } else {
            continue;
        };
        let (nb, fb) = (a.nbytes(), fa.nbytes());
        let ok = if f.maybe_short {
            // f short => n short (needs as many bytes); n short => r.
            nb >= fb && n.short_yes == r
        } else {
            nb <= fb || n.short_yes == r
        };
        if ok {
            return Some(r);
        }
    }
    None
}

/// At most this many fact sets are kept per node; past it they collapse
/// into the facts common to all of them.
const MAX_SETS: usize = 8;

/// Adds the fact set `set` to the sets known on entry to a node. The
/// node is reached with one set's facts *or* another's, so a set holding
/// all of another's facts adds nothing (absorption).
fn add_set(sets: &mut Vec<Vec<Fact>>, set: Vec<Fact>) {
    let within = |a: &[Fact], b: &[Fact]| a.iter().all(|f| b.contains(f));
    if sets.iter().any(|s| within(s, &set)) {
        return;
    }
    sets.retain(|s| !within(&set, s));
    sets.push(set);
    if sets.len() > MAX_SETS {
        let mut common = sets.swap_remove(0);
        for s in sets.iter() {
            common.retain(|f| s.contains(f));
        }
        sets.clear();
        sets.push(common);
    }
}

/// Compiles `(expr, target)` rules, first match wins, else `DROP`.
/// Returns `(nodes, entry)`, nodes ordered so that every jump is forward
/// and the entry (if an instruction) is node 0.
pub(crate) fn compile_rules(
    rules: &[(Expr, Target)],
    optimize: bool,
    sort: Option<SortKey>,
) -> (Vec<Node>, Target) {
    let mut b = Builder {
        sort,
        ..Builder::default()
    };
    let mut entry = DROP;
    for (e, t) in rules.iter().rev() {
        entry = b.compile(e, *t, entry);
    }
    let mut nodes = b.nodes;
    if optimize && entry >= 0 {
        thread_jumps(&mut nodes, entry);
        combine_words(&mut nodes);
    }
    finalize(&nodes, entry)
}

/// Threads every jump through the tests its outcome already decides.
///
/// Facts are tracked per path, not merged: a node keeps up to
/// [`MAX_SETS`] fact sets, one for each way in (as Click's optimizer
/// does), so after `tcp or udp` a jump can skip a later `tcp` test whose
/// outcome differs between the two ways in but whose successors meet again
/// (`ip proto == tcp ? X : (ip proto == udp ? X : ...)`). A jump goes to
/// the deepest node every way in reaches; a branch that contradicts a way's
/// facts does not count that way. Children always have smaller indices
/// than parents, so descending index order is a topological order.
fn thread_jumps(nodes: &mut [Node], entry: Target) {
    let mut facts_in: Vec<Vec<Vec<Fact>>> = vec![Vec::new(); nodes.len()];
    facts_in[entry as usize].push(Vec::new());
    let mut walks: Vec<(Vec<Fact>, Vec<Target>)> = Vec::new();
    for i in (0..=entry as usize).rev() {
        let sets = core::mem::take(&mut facts_in[i]);
        if sets.is_empty() {
            continue;
        }
        let node = nodes[i];
        for branch in [true, false] {
            walks.clear();
            for s in &sets {
                if decide(s, &node) == Some(!branch) {
                    continue; // this way in never takes the branch
                }
                let mut ef = s.clone();
                push_fact(
                    &mut ef,
                    Fact {
                        atom: node.atom,
                        eq: branch,
                        maybe_short: node.short_yes == branch,
                    },
                );
                let mut tgt = if branch { node.yes } else { node.no };
                let mut chain = vec![tgt];
                while tgt >= 0 {
                    let n = nodes[tgt as usize];
                    match decide(&ef, &n) {
                        Some(r) => tgt = if r { n.yes } else { n.no },
                        None => break,
                    }
                    chain.push(tgt);
                }
                walks.push((ef, chain));
            }
            let Some((_, first)) = walks.first() else {
                continue; // no way in takes the branch: leave it
            };
            let tgt = *first
                .iter()
                .rev()
                .find(|t| walks[1..].iter().all(|(_, c)| c.contains(t)))
                .expect("every walk starts at the branch's target");
            if branch {
                nodes[i].yes = tgt;
            } else {
                nodes[i].no = tgt;
            }
            if tgt >= 0 {
                for (ef, _) in walks.drain(..) {
                    add_set(&mut facts_in[tgt as usize], ef);
                }
            }
        }
    }
}

/// `n` with its test negated: same packets to the same places (a
/// single-bit test only, whose negation is again one masked test).
fn flipped(n: &Node) -> Option<Node> {
    if !n.atom.mask.is_power_of_two() {
        return None;
    }
    Some(Node {
        atom: Atom {
            value: n.atom.value ^ n.atom.mask,
            ..n.atom
        },
        short_yes: !n.short_yes,
        yes: n.no,
        no: n.yes,
    })
}

/// Merges `s` and the test `t` its yes branch leads to into one test when
/// both read the same word and fail to the same place (Click's
/// `combine_compatible_states`): `syn and !ack` becomes one test of the
/// flags byte. Short packets go where they went: a word is short when it
/// needs more bytes than the packet holds, so where both tests need as
/// many bytes the pair is short exactly when each is (and passes only if
/// both short branches are yes); where one needs more, a packet short for
/// it alone must fail the pair whatever the other said, so that test's
/// short branch must be no (and then the pair's is no).
fn combined(s: &Node, t: &Node) -> Option<Node> {
    if t.no != s.no {
        return None;
    }
    // (a contradictory pair never takes the yes branch: left alone)
    let atom = s.atom.conjoin(&t.atom)?;
    let (na, nb) = (s.atom.nbytes(), t.atom.nbytes());
    let short_yes = if na == nb {
        s.short_yes && t.short_yes
    } else if (na < nb && t.short_yes) || (na > nb && s.short_yes) {
        return None;
    } else {
        false
    };
    Some(Node {
        atom,
        short_yes,
        yes: t.yes,
        no: s.no,
    })
}

fn combine_words(nodes: &mut [Node]) {
    for i in 0..nodes.len() {
        while nodes[i].yes >= 0 {
            let s = nodes[i];
            let t = nodes[s.yes as usize];
            match combined(&s, &t).or_else(|| combined(&s, &flipped(&t)?)) {
                Some(c) => nodes[i] = c,
                None => break,
            }
        }
    }
}

fn push_fact(v: &mut Vec<Fact>, f: Fact) {
    if v.contains(&f) {
        return;
    }
    if v.len() >= MAX_FACTS {
        v.remove(0);
    }
    v.push(f);
}

/// Removes unreachable nodes, re-hash-conses, and orders nodes with the
/// entry first and all jumps forward.
fn finalize(nodes: &[Node], entry: Target) -> (Vec<Node>, Target) {
    if entry < 0 {
        return (Vec::new(), entry);
    }
    // Nodes reachable from entry, rebuilt bottom-up (ascending index is
    // children-first).
    let mut reach = vec![false; nodes.len()];
    reach[entry as usize] = true;
    for i in (0..nodes.len()).rev() {
        if reach[i] {
            for t in [nodes[i].yes, nodes[i].no] {
                if t >= 0 {
                    reach[t as usize] = true;
                }
            }
        }
    }
    let mut map: Vec<Target> = vec![DROP; nodes.len()];
    let mut b = Builder::default();
    let m = |t: Target, map: &[Target]| if t >= 0 { map[t as usize] } else { t };
    for i in 0..nodes.len() {
        if reach[i] {
            let n = nodes[i];
            map[i] = b.mk(Node {
                yes: m(n.yes, &map),
                no: m(n.no, &map),
                ..n
            });
        }
    }
    let new_entry = map[entry as usize];
    if new_entry < 0 {
        return (Vec::new(), new_entry);
    }
    // Keep only nodes reachable from the new entry, then reverse so the
    // entry comes first.
    let built = b.nodes;
    let mut reach = vec![false; built.len()];
    reach[new_entry as usize] = true;
    for i in (0..built.len()).rev() {
        if reach[i] {
            for t in [built[i].yes, built[i].no] {
                if t >= 0 {
                    reach[t as usize] = true;
                }
            }
        }
    }
    let mut renum: Vec<Target> = vec![DROP; built.len()];
    let mut count = 0;
    for i in (0..built.len()).rev() {
        if reach[i] {
            renum[i] = count;
            count += 1;
        }
    }
    let mut out = Vec::with_capacity(count as usize);
    for i in (0..built.len()).rev() {
        if reach[i] {
            let n = built[i];
            out.push(Node {
                yes: m(n.yes, &renum),
                no: m(n.no, &renum),
                ..n
            });
        }
    }
    (out, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where a packet of `len` bytes holding `word` goes from node 0.
    fn walk(nodes: &[Node], word: u32, len: usize) -> Target {
        let mut t = 0;
        while t >= 0 {
            let n = &nodes[t as usize];
            let yes = if len < n.atom.nbytes() as usize {
                n.short_yes
            } else {
                word & n.atom.mask == n.atom.value
            };
            t = if yes { n.yes } else { n.no };
        }
        t
    }

    /// `combined` and `flipped` send every packet, short ones included,
    /// where the two tests did: random tests of one word, byte-granular
    /// masks (so their lengths differ), every short flag.
    #[test]
    fn merged_tests_keep_every_outcome() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u32
        };
        let masks = [
            0xff00_0000,
            0x00ff_0000,
            0x0000_ffff,
            0x0002_0000,
            0x0010_0000,
            0xfc00_fc00,
        ];
        let (mut merged, mut merged_short) = (0, 0);
        for _ in 0..4000 {
            let atom = |m: u32, v: u32| Atom::new(false, 0, m, v);
            let (ma, mb) = (masks[rnd() as usize % 6], masks[rnd() as usize % 6]);
            let s = Node {
                atom: atom(ma, rnd()),
                short_yes: rnd() & 1 == 1,
                yes: 1,
                no: output(0),
            };
            let t = Node {
                atom: atom(mb, rnd()),
                short_yes: rnd() & 1 == 1,
                yes: output(rnd() as usize % 3),
                no: output(rnd() as usize % 3),
            };
            let orig = [s, t];
            let Some(c) = combined(&s, &t).or_else(|| combined(&s, &flipped(&t)?)) else {
                continue;
            };
            merged += 1;
            merged_short += usize::from(c.short_yes);
            for _ in 0..64 {
                // words near both tests' values, so both outcomes occur
                let w = match rnd() % 3 {
                    0 => s.atom.value | t.atom.value,
                    1 => s.atom.value | (t.atom.value ^ t.atom.mask),
                    _ => rnd(),
                } ^ (rnd() & rnd() & rnd());
                for len in 0..=4 {
                    assert_eq!(
                        walk(&[c], w, len),
                        walk(&orig, w, len),
                        "{s:?} then {t:?} merged to {c:?}: word {w:08x}, {len} bytes"
                    );
                }
            }
        }
        assert!(
            merged > 200 && merged_short > 20,
            "{merged} merged, {merged_short} short->yes"
        );
        // a test repeated (overlapping masks that agree) merges; one that
        // contradicts the first does not
        let n = |v: u32, yes: Target| Node {
            atom: Atom::new(false, 8, 0x00ff_0000, v),
            short_yes: false,
            yes,
            no: output(0),
        };
        let want = Some(n(0x0006_0000, output(1)));
        assert_eq!(
            combined(&n(0x0006_0000, 1), &n(0x0006_0000, output(1))),
            want
        );
        assert_eq!(
            combined(&n(0x0006_0000, 1), &n(0x0011_0000, output(1))),
            None
        );
    }
}
