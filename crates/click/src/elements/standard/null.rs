//! Null, PushNull, PullNull: pass packets through unchanged.

use crate::prelude::*;

/// Passes packets through unchanged, in push or pull.
#[derive(Default)]
pub struct Null;

impl Element for Null {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()
    }

    #[inline]
    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        cx.push(0, p);
    }

    #[inline]
    fn push_batch(&mut self, _port: usize, b: Batch, cx: &Ctx) {
        cx.push_batch(0, b);
    }

    #[inline]
    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        cx.pull(0)
    }

    crate::element_any!();
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "Null",
    port_count: "1/1",
    processing: "a/a",
    group: "standard",
    signature: "Null",
    summary: "Passes packets unchanged.",
    description: "Responds to each packet by pushing it unchanged out its first output (or \
returning it unchanged when pulled).",
    ports: "one input, one output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Null),
};

pub static PUSHNULL_SPEC: ClassSpec = ClassSpec {
    name: "PushNull",
    port_count: "1/1",
    processing: "h/h",
    group: "standard",
    signature: "PushNull",
    summary: "Passes packets unchanged (push only).",
    description: "Pushes each packet it receives unchanged out its output.",
    ports: "one push input, one push output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Null),
};

pub static PULLNULL_SPEC: ClassSpec = ClassSpec {
    name: "PullNull",
    port_count: "1/1",
    processing: "l/l",
    group: "standard",
    signature: "PullNull",
    summary: "Passes packets unchanged (pull only).",
    description: "Returns each packet pulled from its input unchanged.",
    ports: "one pull input, one pull output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Null),
};
