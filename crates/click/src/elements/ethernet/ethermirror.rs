//! EtherMirror: swaps Ethernet source and destination addresses.

use crate::prelude::*;

/// `EtherMirror()`.
pub struct EtherMirror;

pub static SPEC: ClassSpec = ClassSpec {
    name: "EtherMirror",
    port_count: "1/1",
    processing: "a/a",
    group: "ethernet",
    signature: "EtherMirror()",
    summary: "Swaps Ethernet source and destination.",
    description: "Incoming packets are Ethernet. Their source and destination Ethernet addresses \
are swapped before they are output. Packets shorter than 12 bytes pass unchanged.",
    ports: "one input, one output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(EtherMirror),
};

impl Element for EtherMirror {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        if let Some(h) = p.data_mut().get_mut(..12) {
            let (d, s) = h.split_at_mut(6);
            d.swap_with_slice(s);
        }
        Some(p)
    }

    crate::element_any!();
}
