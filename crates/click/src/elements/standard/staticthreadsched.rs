//! StaticThreadSched: binds elements' tasks to threads (`clickos run -j N`).

use crate::prelude::*;
use alloc::format;
use click_lang::args;

/// `StaticThreadSched(ELEMENT THREAD, ...)`. The placement itself is the
/// driver's business: it reads the pairs with [`parse`] before it builds
/// its per-thread routers. The element checks the names it was given.
#[derive(Default)]
pub struct StaticThreadSched {
    pairs: Vec<(String, i64)>,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "StaticThreadSched",
    port_count: "0/0",
    processing: "a/a",
    group: "threads",
    signature: "StaticThreadSched(ELEMENT THREAD, ...)",
    summary: "Specifies element and thread scheduling parameters.",
    description: "Statically binds elements to threads when the driver runs several \
(`clickos run -j N`). Each argument is an element name and a thread number, separated by \
space. The element runs on that thread, together with every element it reaches without \
crossing a Queue (or another element with push inputs and pull outputs): a push path from \
a source up to the Queues it fills, a pull path from a sink back to the Queues it drains. \
Queues whose two sides run on different threads become safe across threads. If two \
elements given different threads reach each other without a Queue in between, they run on \
one thread (the driver says so). Thread -1 means the element's task is never scheduled. \
As in Click, a thread number out of range draws a warning and means thread 0 (or -1 for \
negative numbers). If more than one StaticThreadSched is present, the later ones override \
earlier ones for the elements they both name.\n\nNames are looked up as Click does, from the \
StaticThreadSched's own compound element outwards. A name may be a compound element: every \
element inside it goes to that thread, except elements named themselves (`StaticThreadSched(sub 1)` \
with `StaticThreadSched(d 0)` inside `sub` puts `sub/d` on thread 0 and the rest of `sub` on 1).\n\n\
Elements without a placement run on thread 0, as in Click. A configuration without any \
StaticThreadSched is spread automatically instead: each group of elements that must run \
together goes to the thread with the least work so far (counting the tasks already placed \
there).",
    ports: "none",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(StaticThreadSched::default()),
};

/// Parses `ELEMENT THREAD, ...` into (element name, thread) pairs.
pub fn parse(config: &str) -> Result<Vec<(String, i64)>, String> {
    let mut pairs = Vec::new();
    for arg in args::split_args(config) {
        if arg.is_empty() {
            continue;
        }
        let words = args::split_words(&arg);
        let [name, thread] = words.as_slice() else {
            return Err(format!("expected 'ELEMENT THREAD', not '{}'", arg.trim()));
        };
        let thread = args::parse_i64(thread)
            .map_err(|_| format!("THREAD type mismatch: expected integer, not '{thread}'"))?;
        pairs.push((
            args::parse_word(name).unwrap_or_else(|_| name.clone()),
            thread,
        ));
    }
    Ok(pairs)
}

impl Element for StaticThreadSched {
    fn configure(&mut self, config: &str, _cx: &ConfigureCtx) -> Result<(), String> {
        self.pairs = parse(config)?;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        for (name, _) in &self.pairs {
            if cx.resolve_element_or_compound(name).is_none() {
                return Err(format!("no element named '{name}'"));
            }
        }
        Ok(())
    }

    crate::element_any!();
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn pairs() {
        assert_eq!(
            parse("a 0, b/c 1, d -1").unwrap(),
            [("a".into(), 0), ("b/c".into(), 1), ("d".into(), -1)]
        );
        assert!(parse("a").is_err());
        assert!(parse("a b").is_err());
        assert!(parse("a 1 2").is_err());
        assert_eq!(parse("").unwrap(), []);
    }
}
