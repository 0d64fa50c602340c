//! SetIPChecksum: sets IP packets' checksums.

use crate::prelude::*;

/// `SetIPChecksum()`.
pub struct SetIPChecksum;

pub static SPEC: ClassSpec = ClassSpec {
    name: "SetIPChecksum",
    port_count: "1/1",
    processing: "a/a",
    group: "ip",
    signature: "SetIPChecksum()",
    summary: "Sets IP packets' checksums.",
    description: "Expects an IP packet as input, with the IP header annotation set (by \
CheckIPHeader or MarkIPHeader). Calculates the IP header's checksum and sets the checksum \
header field.\n\n\
Packets without an IP header annotation, or whose header length field is below 20 bytes or \
longer than the packet, are dropped with the message `SetIPChecksum: bad lengths` on standard \
error.",
    ports: "one input, one output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(SetIPChecksum),
};

#[inline]
fn fix(p: &mut Packet) -> bool {
    let Some(mut ip) = p.ip_header_mut() else {
        return false;
    };
    if ip.check_header_len().is_err() {
        return false;
    }
    ip.fill_checksum();
    true
}

impl Element for SetIPChecksum {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, cx: &Ctx) -> Option<Packet> {
        if fix(&mut p) {
            Some(p)
        } else {
            cx.error_line("SetIPChecksum: bad lengths");
            None
        }
    }

    crate::element_any!();
}
