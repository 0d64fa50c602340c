//! Pad: extends packets to a length.

use crate::packet::EXTRA_LENGTH_ANNO_OFFSET;
use crate::prelude::*;

/// Bytes Pad adds to one packet at most; a packet that would need more is
/// dropped (and counted), as Click drops a packet it cannot grow.
pub const MAX_PAD: usize = 65536;

/// `Pad([LENGTH, KEYWORDS])`.
pub struct Pad {
    nbytes: usize,
    zero: bool,
    drops: u64,
}

impl Default for Pad {
    fn default() -> Self {
        Pad {
            nbytes: 0,
            zero: true,
            drops: 0,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "Pad",
    port_count: "1/1",
    processing: "a/a",
    group: "standard",
    signature: "Pad([LENGTH, KEYWORDS])",
    summary: "Extends packet length.",
    description: "Extends packets to at least LENGTH bytes, adding bytes at the end. Without \
LENGTH (or with LENGTH 0), each packet is extended by its extra-length annotation (the bytes \
Truncate removed, or a trace's uncaptured bytes). Output packets always have extra-length \
annotation zero. A packet that would grow by more than 65536 bytes is dropped.\n\n\
Keyword arguments:\n\n\
- `LENGTH` (unsigned): the minimum length. Default 0 (use the extra-length annotation).\n\
- `ZERO` (boolean): whether the added bytes are zeroed. Default true. (Added bytes are always \
zero here; Click leaves them uninitialized when false.)",
    ports: "one input, one output",
    handlers: &[HandlerDoc {
        name: "drops",
        mode: HandlerMode::Read,
        text: "Packets dropped because they would grow too much.",
    }],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(Pad::default()),
};

impl Element for Pad {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let n = a.read_p::<u32>("LENGTH")?.unwrap_or(0);
        let zero = a.read::<bool>("ZERO")?.unwrap_or(true);
        a.complete()?;
        self.nbytes = n as usize;
        self.zero = zero;
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        let nput = if self.nbytes > 0 {
            self.nbytes.saturating_sub(p.len())
        } else {
            p.anno().u32_at(EXTRA_LENGTH_ANNO_OFFSET) as usize
        };
        if nput > MAX_PAD {
            self.drops += 1;
            return None;
        }
        if nput > 0 {
            p.put(nput);
        }
        p.anno_mut().set_u32_at(EXTRA_LENGTH_ANNO_OFFSET, 0);
        Some(p)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        (name == "drops").then(|| Ok(self.drops.to_string()))
    }

    crate::element_any!();
}
