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
    /// Documentation only: classes another host registers under a name this
    /// registry already has (an instance's `FromDevice` beside the user
    /// level's), with the host's name.
    variants: BTreeMap<&'static str, alloc::vec::Vec<(&'static str, &'static ClassSpec)>>,
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

    /// Documents `spec` as what its class name means on another host
    /// (`host`, e.g. "inside an instance"), beside this registry's class of
    /// the same name. Only the reference shows it: configurations built
    /// with this registry never get it, and [`get`](Self::get) and
    /// [`iter`](Self::iter) do not see it.
    pub fn add_variant(&mut self, host: &'static str, spec: &'static ClassSpec) {
        let v = self.variants.entry(spec.name).or_default();
        v.retain(|(h, _)| *h != host);
        v.push((host, spec));
    }

    /// The documented variants of class `name` (see
    /// [`add_variant`](Self::add_variant)): (host, spec).
    pub fn variants_of(&self, name: &str) -> &[(&'static str, &'static ClassSpec)] {
        self.variants.get(name).map(|v| v.as_slice()).unwrap_or(&[])
    }

    /// Every class and documented variant in name order, each with its
    /// title in the reference: the class name, or `Name (host)`.
    pub fn documented(&self) -> alloc::vec::Vec<(String, &'static ClassSpec)> {
        let mut names: alloc::vec::Vec<&'static str> = self.map.keys().copied().collect();
        for n in self.variants.keys() {
            if !self.map.contains_key(n) {
                names.push(n);
            }
        }
        names.sort_unstable();
        let mut out = alloc::vec::Vec::new();
        for n in names {
            if let Some(s) = self.map.get(n) {
                out.push((String::from(n), *s));
            }
            for (host, s) in self.variants_of(n) {
                out.push((format!("{n} ({host})"), *s));
            }
        }
        out
    }

    /// The element reference as Markdown, generated from the specs.
    pub fn reference_markdown(&self) -> String {
        let mut out = String::from("# Element reference\n\nGenerated from the elements' own documentation (`clickos elements --markdown`).\n\n");
        let all = self.documented();
        let mut groups: BTreeMap<&str, alloc::vec::Vec<&str>> = BTreeMap::new();
        for (title, s) in &all {
            groups.entry(s.group).or_default().push(title);
        }
        for (g, titles) in &groups {
            let _ = write!(out, "- **{}**:", g);
            for t in titles {
                let _ = write!(out, " [{}](#{})", t, anchor(t));
            }
            out.push('\n');
        }
        out.push('\n');
        for (title, s) in &all {
            out.push_str(&element_markdown_titled(s, title));
        }
        out
    }
}

/// A Markdown heading's anchor, as GitHub makes it: lower case, spaces to
/// hyphens, other punctuation dropped.
fn anchor(title: &str) -> String {
    title
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_ascii_alphanumeric() => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

/// One element's reference entry in Markdown.
pub fn element_markdown(s: &ClassSpec) -> String {
    element_markdown_titled(s, s.name)
}

/// One element's reference entry in Markdown under heading `title`.
pub fn element_markdown_titled(s: &ClassSpec, title: &str) -> String {
    let mut out = format!("## {}\n\n`{}`\n\n{}\n\n", title, s.signature, s.summary);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::{ClassSpec, Element};

    fn never() -> alloc::boxed::Box<dyn Element> {
        unreachable!("documentation only")
    }

    static OTHER: ClassSpec = ClassSpec {
        name: "Discard",
        port_count: "1/0",
        processing: "a/a",
        group: "elsewhere",
        signature: "Discard(ELSEWHERE)",
        summary: "Discards elsewhere.",
        description: "",
        ports: "one input",
        handlers: &[],
        live_reconfigure: false,
        order_sensitive: false,
        make: never,
    };

    #[test]
    fn variants_are_documented_but_never_built() {
        let mut r = Registry::with_builtin();
        let own = r.get("Discard").unwrap();
        r.add_variant("on another host", &OTHER);
        r.add_variant("on another host", &OTHER);
        assert!(core::ptr::eq(r.get("Discard").unwrap(), own));
        assert_eq!(r.iter().filter(|s| s.name == "Discard").count(), 1);
        assert_eq!(r.variants_of("Discard").len(), 1);
        let titles: alloc::vec::Vec<String> = r.documented().into_iter().map(|(t, _)| t).collect();
        let k = titles.iter().position(|t| t == "Discard").unwrap();
        assert_eq!(titles[k + 1], "Discard (on another host)");
        let md = r.reference_markdown();
        assert!(
            md.contains("- **elsewhere**: [Discard (on another host)](#discard-on-another-host)\n")
        );
        assert!(md.contains("## Discard (on another host)\n\n`Discard(ELSEWHERE)`"));
        assert!(md.contains("[Discard](#discard)"));
    }
}
