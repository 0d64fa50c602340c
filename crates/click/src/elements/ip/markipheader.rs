//! MarkIPHeader: sets the IP header annotation.

use crate::prelude::*;

/// `MarkIPHeader([OFFSET])`.
#[derive(Default)]
pub struct MarkIPHeader {
    offset: usize,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "MarkIPHeader",
    port_count: "1/1",
    processing: "a/a",
    group: "ip",
    signature: "MarkIPHeader([OFFSET])",
    summary: "Sets IP header annotation.",
    description: "Marks packets as IP packets by setting the IP header annotation: the header \
starts OFFSET bytes into the packet (default 0) and its length comes from its IHL field. Does not \
check length fields, shorten packets, or set the destination IP address annotation; use \
CheckIPHeader for that.",
    ports: "one input, one output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(MarkIPHeader::default()),
};

impl Element for MarkIPHeader {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let offset = a.read_p::<usize>("OFFSET")?.unwrap_or(0);
        a.complete()?;
        self.offset = offset;
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        let hl = p
            .data()
            .get(self.offset)
            .map(|b| ((b & 0xf) as usize) << 2)
            .unwrap_or(0);
        p.set_network_header(self.offset, hl);
        Some(p)
    }

    crate::element_any!();
}
