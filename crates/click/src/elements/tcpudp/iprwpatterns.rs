//! IPRewriterPatterns: named patterns the rewriters share.

use crate::common::iprw::{PatRef, Pattern};
use crate::prelude::*;
use alloc::format;
use alloc::rc::Rc;

/// `IPRewriterPatterns`.
#[derive(Default)]
pub struct IPRewriterPatterns {
    patterns: Vec<(String, Rc<Pattern>)>,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "IPRewriterPatterns",
    port_count: "0/0",
    processing: "a/a",
    group: "tcpudp",
    signature: "IPRewriterPatterns(NAME PATTERN, ...)",
    summary: "Specifies shared IPRewriter patterns.",
    description: "Defines named patterns for IPRewriter and related elements. Each argument is \
`NAME SADDR SPORT DADDR DPORT` (or the two-word `NAME SADDR DADDR` of IPAddrRewriter-like \
patterns); a rewriter's INPUTSPEC `pattern NAME FOUTPUT ROUTPUT` uses it. Every input that \
names a pattern shares it, so sequential (`#`) allocation continues from one user to the next. \
Names must be distinct across all IPRewriterPatterns elements.",
    ports: "none",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(IPRewriterPatterns::default()),
};

impl IPRewriterPatterns {
    /// The pattern called `name`, if this element defines it.
    pub fn get(&self, name: &str) -> Option<Rc<Pattern>> {
        self.patterns
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| p.clone())
    }
}

/// The pattern `name` of the configuration's IPRewriterPatterns elements.
pub fn find_pattern(cx: &Ctx, name: &str) -> Option<Rc<Pattern>> {
    cx.elements_of_class("IPRewriterPatterns")
        .into_iter()
        .find_map(|i| {
            cx.with_element(i, |e| {
                e.as_any()
                    .downcast_ref::<IPRewriterPatterns>()
                    .and_then(|p| p.get(name))
            })
            .flatten()
        })
}

impl Element for IPRewriterPatterns {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let ac = cx.arg_context();
        let mut out: Vec<(String, Rc<Pattern>)> = Vec::new();
        let mut errs = Vec::new();
        for arg in click_lang::split_args(config) {
            let words: Vec<&str> = arg.split_ascii_whitespace().collect();
            let Some((name, rest)) = words.split_first() else {
                continue;
            };
            if out.iter().any(|(n, _)| n == name) {
                errs.push(format!("pattern '{name}' already defined"));
                continue;
            }
            match Pattern::parse(rest, &ac) {
                Ok(PatRef::Literal(p)) => out.push((name.to_string(), p)),
                Ok(PatRef::Named(_)) => errs.push("syntax error".into()),
                Err(e) => errs.push(e),
            }
        }
        if !errs.is_empty() {
            return Err(errs.join("\n"));
        }
        self.patterns = out;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        for (name, _) in &self.patterns {
            if find_pattern(cx, name).is_some() {
                return Err(format!("pattern '{name}' already defined"));
            }
        }
        Ok(())
    }

    crate::element_any!();
}
