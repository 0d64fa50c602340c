//! Merging a test into the test on its `yes` branch when both read the same
//! word and fail to the same place (the conjunction `W & M1 == V1 && W & M2
//! == V2` is the one test `W & (M1|M2) == V1|V2`), as Click's
//! `Program::combine_compatible_states` does after its sort, so that
//! `src 10.0.0.0 & 8.0.0.0 = 8.0.0.0` is the one test Click prints. This
//! runs on the finished program (entry first, every jump forward) and
//! leaves it in that form.

use alloc::collections::BTreeMap;
use alloc::vec;
use alloc::vec::Vec;

use crate::compile::{Node, Target, DROP};
use crate::expr::Atom;

/// `x` then (on yes) `y` as one test, if that is exact, also on short
/// packets.
fn combine(x: &Node, y: &Node) -> Option<Node> {
    let (a, b) = (&x.atom, &y.atom);
    if x.no != y.no || a.transp != b.transp || a.mac != b.mac || a.off != b.off {
        return None;
    }
    let both = a.mask & b.mask;
    if a.value & both != b.value & both {
        return None;
    }
    // Shortness grows with the bytes a word needs (same base and offset):
    // the combined test is short when either is. Where only the test
    // needing more bytes is short, the pair fails only if that test's
    // short branch is `no` (whatever the other test said); where both
    // are, it succeeds only if both short branches are `yes`.
    let (na, nb) = (a.nbytes(), b.nbytes());
    let short_yes = if na == nb {
        x.short_yes && y.short_yes
    } else if (na < nb && y.short_yes) || (na > nb && x.short_yes) {
        return None;
    } else {
        false
    };
    Some(Node {
        atom: Atom::new_like(a, a.mask | b.mask, a.value | b.value),
        short_yes,
        yes: y.yes,
        no: y.no,
    })
}

/// Combines what it can and drops the instructions left unreachable (and
/// duplicates). `nodes` and the result have the entry at 0 (when `entry
/// >= 0`) and only forward jumps.
pub(crate) fn combine_words(mut nodes: Vec<Node>, entry: Target) -> (Vec<Node>, Target) {
    if entry < 0 {
        return (Vec::new(), entry);
    }
    let n = nodes.len();
    let mut changed = false;
    // Successors first (jumps go forward), so a chain folds into its head.
    for i in (0..n).rev() {
        while let Some(z) = usize::try_from(nodes[i].yes)
            .ok()
            .and_then(|j| combine(&nodes[i], &nodes[j]))
        {
            nodes[i] = z;
            changed = true;
        }
    }
    if !changed {
        return (nodes, entry);
    }
    // Canonical copies, successors first: a node's targets mapped, then
    // the first identical node seen stands for it.
    let mut canon: Vec<Target> = vec![DROP; n];
    let mut seen: BTreeMap<Node, Target> = BTreeMap::new();
    let map = |t: Target, canon: &[Target]| if t >= 0 { canon[t as usize] } else { t };
    for i in (0..n).rev() {
        let c = Node {
            yes: map(nodes[i].yes, &canon),
            no: map(nodes[i].no, &canon),
            ..nodes[i]
        };
        nodes[i] = c;
        canon[i] = *seen.entry(c).or_insert(i as Target);
    }
    let entry = canon[entry as usize];
    // Keep what the entry reaches, in order (so jumps stay forward).
    let mut reach = vec![false; n];
    reach[entry as usize] = true;
    let mut renum: Vec<Target> = vec![DROP; n];
    let mut out = Vec::new();
    for i in entry as usize..n {
        if reach[i] {
            renum[i] = out.len() as Target;
            out.push(nodes[i]);
            for t in [nodes[i].yes, nodes[i].no] {
                if t >= 0 {
                    reach[t as usize] = true;
                }
            }
        }
    }
    for node in &mut out {
        node.yes = map(node.yes, &renum);
        node.no = map(node.no, &renum);
    }
    (out, 0)
}
