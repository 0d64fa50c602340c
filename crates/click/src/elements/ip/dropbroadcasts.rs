//! DropBroadcasts: drops link-level broadcast and multicast packets.

use crate::prelude::*;

/// `DropBroadcasts()`.
#[derive(Default)]
pub struct DropBroadcasts {
    drops: u64,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "DropBroadcasts",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "standard",
    signature: "DropBroadcasts()",
    summary: "Drops link-level broadcast and multicast packets.",
    description: "Drops packets that arrived as link-level broadcast or multicast, as told by \
the packet-type annotation (`BROADCAST` or `MULTICAST`; FromDevice and HostEtherFilter set it). \
Used to implement the requirement that IP routers not forward link-level broadcasts.\n\n\
Dropped packets are pushed to output 1 if it exists. The first drop is reported as \
`DropBroadcasts: dropped a packet` on standard error.",
    ports: "one input; one or two outputs (1: broadcast and multicast packets)",
    handlers: &[HandlerDoc {
        name: "drops",
        mode: HandlerMode::Read,
        text: "Number of packets dropped.",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(DropBroadcasts::default()),
};

/// Whether `p` arrived as a link-level broadcast or multicast (shared with
/// IPOutputCombo).
#[inline]
pub(crate) fn is_bcast(p: &Packet) -> bool {
    matches!(
        p.anno().packet_type,
        PacketType::Broadcast | PacketType::Multicast
    )
}

impl DropBroadcasts {
    #[cold]
    fn drop_it(&mut self, p: Packet, cx: &Ctx) {
        if self.drops == 0 {
            cx.error_line("DropBroadcasts: dropped a packet");
        }
        self.drops += 1;
        if cx.noutputs() > 1 {
            cx.push(1, p);
        }
    }
}

impl Element for DropBroadcasts {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()
    }

    #[inline]
    fn simple_action(&mut self, p: Packet, cx: &Ctx) -> Option<Packet> {
        if is_bcast(&p) {
            self.drop_it(p, cx);
            None
        } else {
            Some(p)
        }
    }

    #[inline]
    fn push_batch(&mut self, _port: usize, mut batch: Batch, cx: &Ctx) {
        if !batch.iter().any(is_bcast) {
            cx.push_batch(0, batch);
            return;
        }
        let mut good = Batch::with_capacity(batch.len());
        for p in batch.drain(..) {
            if is_bcast(&p) {
                self.drop_it(p, cx);
            } else {
                good.push(p);
            }
        }
        cx.push_batch(0, good);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "drops" => Some(Ok(self.drops.to_string())),
            _ => None,
        }
    }

    crate::element_any!();
}
