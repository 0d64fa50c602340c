//! StripIPHeader and UnstripIPHeader.

use crate::prelude::*;

/// `StripIPHeader()`.
pub struct StripIPHeader;

pub static SPEC: ClassSpec = ClassSpec {
    name: "StripIPHeader",
    port_count: "1/1",
    processing: "a/a",
    group: "ip",
    signature: "StripIPHeader()",
    summary: "Strips outermost IP header.",
    description: "Strips the outermost IP header, as given by the IP header annotation: removes \
everything up to the transport header. Annotations are unchanged, so the IP header annotation \
still points at the (now stripped) IP header; UnstripIPHeader puts it back.",
    ports: "one input, one output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(StripIPHeader),
};

impl Element for StripIPHeader {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        if let Some(off) = p.transport_header_offset() {
            if off > 0 {
                let n = (off as usize).min(p.len());
                p.pull(n);
            }
        }
        Some(p)
    }

    crate::element_any!();
}

/// `UnstripIPHeader()`.
pub struct UnstripIPHeader;

pub static UNSTRIP_SPEC: ClassSpec = ClassSpec {
    name: "UnstripIPHeader",
    port_count: "1/1",
    processing: "a/a",
    group: "ip",
    signature: "UnstripIPHeader()",
    summary: "Restores outermost IP header.",
    description: "Puts the outermost IP header back onto a packet stripped by StripIPHeader, \
based on the IP header annotation set by MarkIPHeader or CheckIPHeader. If the IP header is \
already in the packet, forwards it unchanged.",
    ports: "one input, one output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(UnstripIPHeader),
};

impl Element for UnstripIPHeader {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        if let Some(off) = p.network_header_offset() {
            if off < 0 {
                p.shift_head(off);
            }
        }
        Some(p)
    }

    crate::element_any!();
}
