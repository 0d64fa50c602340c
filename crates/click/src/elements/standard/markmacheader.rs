//! MarkMACHeader: sets the MAC header annotation.

use crate::prelude::*;

/// `MarkMACHeader([OFFSET, LENGTH])`.
#[derive(Default)]
pub struct MarkMACHeader {
    offset: u32,
    length: u32,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "MarkMACHeader",
    port_count: "1/1",
    processing: "a/a",
    group: "standard",
    signature: "MarkMACHeader([OFFSET, LENGTH])",
    summary: "Sets the MAC header annotation.",
    description: "Marks the MAC header OFFSET bytes into each packet (default 0). With a \
nonzero LENGTH, the network header annotation is set LENGTH bytes after it, as Click's \
`set_mac_header(p, len)` does. A packet shorter than OFFSET + LENGTH passes unmarked.",
    ports: "one input, one output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(MarkMACHeader::default()),
};

impl Element for MarkMACHeader {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let offset = a.read_p::<u32>("OFFSET")?.unwrap_or(0);
        let length = a.read_p::<u32>("LENGTH")?.unwrap_or(0);
        a.complete()?;
        self.offset = offset;
        self.length = length;
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        let (off, len) = (self.offset as usize, self.length as usize);
        if off + len <= p.len() {
            p.set_mac_header(off);
            if len > 0 {
                p.set_mac_network_header(off + len);
            }
        }
        Some(p)
    }

    crate::element_any!();
}
