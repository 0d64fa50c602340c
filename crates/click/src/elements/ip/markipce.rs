//! MarkIPCE: sets the ECN field of IP packets to Congestion Experienced.

use crate::prelude::*;

/// `MarkIPCE([FORCE])`.
#[derive(Default)]
pub struct MarkIPCE {
    force: bool,
    drops: u64,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "MarkIPCE",
    port_count: "1/1",
    processing: "a/a",
    group: "ip",
    signature: "MarkIPCE([FORCE])",
    summary: "Sets IP packets' ECN field to Congestion Experienced.",
    description: "Expects IP packets with the IP header annotation set. Sets each packet's ECN \
field (the low 2 bits of the TOS byte) to Congestion Experienced (3), incrementally updates the \
IP header checksum (RFC 1624), and passes the packet to output 0. Packets already marked CE pass \
unchanged.\n\n\
IP packets whose ECN field is zero (not ECN-capable) are dropped, unless FORCE is true, in which \
case they are marked too. Packets without a readable 20-byte IP header are dropped.\n\n\
Keyword arguments:\n\n\
- `FORCE` (boolean): mark non-ECN-capable packets instead of dropping them. Default false.",
    ports: "one input, one output",
    handlers: &[HandlerDoc {
        name: "drops",
        mode: HandlerMode::Read,
        text: "Number of packets dropped (not ECN-capable, or without an IP header).",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(MarkIPCE::default()),
};

impl MarkIPCE {
    /// Marks one packet; false when it is to be dropped.
    #[inline]
    fn mark(&self, p: &mut Packet) -> bool {
        let Some(mut ip) = p.ip_header_mut() else {
            return false;
        };
        match ip.ecn() {
            0 if !self.force => return false,
            3 => return true,
            _ => {}
        }
        ip.set_ecn_incremental(3);
        true
    }
}

impl Element for MarkIPCE {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let force = a.read_p::<bool>("FORCE")?.unwrap_or(false);
        a.complete()?;
        self.force = force;
        Ok(())
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        if self.mark(&mut p) {
            Some(p)
        } else {
            self.drops += 1;
            None
        }
    }

    #[inline]
    fn push_batch(&mut self, _port: usize, mut batch: Batch, cx: &Ctx) {
        let before = batch.len();
        batch.retain_mut(|p| self.mark(p));
        self.drops += (before - batch.len()) as u64;
        cx.push_batch(0, batch);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "drops" => Some(Ok(self.drops.to_string())),
            _ => None,
        }
    }

    crate::element_any!();
}
