//! The element class registry, and the element reference generated from
//! the classes' own documentation.
//!
//! The registry knows classes only as [`ClassSpec`]s handed to it. The
//! engine's own classes are added by `Registry::with_builtin`, which the
//! element library defines (in `src/elements/mod.rs`), so the registry and
//! the router that uses it never depend on the element files.

use crate::element::ClassSpec;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use core::fmt::Write as _;

/// Maps class names to their specifications.
#[derive(Clone, Default)]
pub struct Registry {
    map: BTreeMap<&'static str, &'static ClassSpec>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Adds (or replaces) a class: hosts add their I/O elements this way.
    pub fn add(&mut self, spec: &'static ClassSpec) {
        self.map.insert(spec.name, spec);
    }

    pub fn get(&self, name: &str) -> Option<&'static ClassSpec> {
        self.map.get(name).copied()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Classes in name order.
    pub fn iter(&self) -> impl Iterator<Item = &'static ClassSpec> + '_ {
        self.map.values().copied()
    }

    /// The element reference as Markdown, generated from the specs.
    pub fn reference_markdown(&self) -> String {
        let mut out = String::from("# Element reference\n\nGenerated from the elements' own documentation (`clickos elements --markdown`).\n\n");
        let mut groups: BTreeMap<&str, alloc::vec::Vec<&ClassSpec>> = BTreeMap::new();
        for s in self.iter() {
            groups.entry(s.group).or_default().push(s);
        }
        for (g, specs) in &groups {
            let _ = write!(out, "- **{}**:", g);
            for s in specs {
                let _ = write!(out, " [{}](#{})", s.name, s.name.to_ascii_lowercase());
            }
            out.push('\n');
        }
        out.push('\n');
        for s in self.iter() {
            out.push_str(&element_markdown(s));
        }
        out
    }
}

/// One element's reference entry in Markdown.
pub fn element_markdown(s: &ClassSpec) -> String {
    let mut out = format!("## {}\n\n`{}`\n\n{}\n\n", s.name, s.signature, s.summary);
    let _ = writeln!(
        out,
        "- **Ports:** {} (`{}`)\n- **Processing:** `{}`\n- **Group:** {}\n",
        s.ports, s.port_count, s.processing, s.group
    );
    if !s.description.is_empty() {
        out.push_str(s.description.trim());
        out.push_str("\n\n");
    }
    if !s.handlers.is_empty() {
        out.push_str("**Handlers**\n\n");
        for h in s.handlers {
            let _ = writeln!(out, "- `{}` ({}): {}", h.name, h.mode.doc_name(), h.text);
        }
        out.push('\n');
    }
    out
}

/// One element's reference entry as plain text (for `clickos elements NAME`).
pub fn element_text(s: &ClassSpec) -> String {
    let mut out = format!(
        "{}\n    {}\n\n{}\n\nPorts: {} ({})\nProcessing: {}\n",
        s.signature,
        s.summary,
        s.description.trim(),
        s.ports,
        s.port_count,
        s.processing
    );
    if !s.handlers.is_empty() {
        out.push_str("\nHandlers:\n");
        for h in s.handlers {
            let _ = writeln!(
                out,
                "  {} ({})\n      {}",
                h.name,
                h.mode.doc_name(),
                h.text
            );
        }
    }
    out
}
