//! `Router::unparse`: the flattened configuration as `click -o` writes it.

use alloc::format;
use alloc::string::String;
use alloc::vec;

use crate::args::join_args;
use crate::parse::FlatConfig;

/// Write `cfg` like Click's `Router::unparse`: `require(...)` (if any),
/// one `name :: Class(config);` line per element, a blank line, then the
/// connections printed as chains (`a -> [1] b\n    -> c;`).
pub fn unparse(cfg: &FlatConfig) -> String {
    let mut sa = String::new();
    if !cfg.requirements.is_empty() {
        sa.push_str(&format!("require({});\n\n", join_args(&cfg.requirements)));
    }
    for e in &cfg.elements {
        sa.push_str(&e.name);
        sa.push_str(" :: ");
        sa.push_str(&e.class);
        if !e.config.is_empty() {
            sa.push('(');
            sa.push_str(&e.config);
            sa.push(')');
        }
        sa.push_str(";\n");
    }
    if !cfg.elements.is_empty() {
        sa.push('\n');
    }
    let conns = &cfg.connections;
    let nc = conns.len();
    let mut next: vec::Vec<Option<usize>> = vec![None; nc];
    let mut startchain = vec![true; nc];
    for ci in 0..nc {
        if conns[ci].to_port != 0 {
            continue;
        }
        let (te, tp) = (conns[ci].to, conns[ci].to_port);
        let mut result = None;
        for (d, cd) in conns.iter().enumerate() {
            if d != ci && cd.from == te && cd.from_port == tp {
                result = Some(d);
                if cd.to_port == 0 {
                    break;
                }
            }
        }
        if let Some(r) = result {
            next[ci] = Some(r);
            startchain[r] = false;
        }
    }
    let name = |i: usize| cfg.elements.get(i).map(|e| e.name.as_str()).unwrap_or("?");
    let mut used = vec![false; nc];
    loop {
        for ci in 0..nc {
            if used[ci] || !startchain[ci] {
                continue;
            }
            sa.push_str(name(conns[ci].from));
            if conns[ci].from_port != 0 {
                sa.push_str(&format!(" [{}]", conns[ci].from_port));
            }
            let mut d = Some(ci);
            while let Some(di) = d {
                if used[di] {
                    break;
                }
                if di == ci {
                    sa.push_str(" -> ");
                } else {
                    sa.push_str("\n    -> ");
                }
                if conns[di].to_port != 0 {
                    sa.push_str(&format!("[{}] ", conns[di].to_port));
                }
                sa.push_str(name(conns[di].to));
                used[di] = true;
                d = next[di];
            }
            sa.push_str(";\n");
        }
        let mut done = true;
        for ci in 0..nc {
            if !used[ci] {
                startchain[ci] = true;
                done = false;
                break;
            }
        }
        if done {
            break;
        }
    }
    sa
}
