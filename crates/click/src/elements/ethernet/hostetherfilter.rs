//! HostEtherFilter: drops Ethernet packets sent to other machines.

use crate::prelude::*;
use click_wire::{EtherAddress, EthernetFrame};

/// `HostEtherFilter(ETHER [, DROP_OWN, DROP_OTHER, KEYWORDS])`.
#[derive(Default)]
pub struct HostEtherFilter {
    addr: [u8; 6],
    drop_own: bool,
    drop_other: bool,
    offset: usize,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "HostEtherFilter",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "ethernet",
    signature: "HostEtherFilter(ETHER [, DROP_OWN, DROP_OTHER, KEYWORDS])",
    summary: "Drops Ethernet packets sent to other machines.",
    description: "Expects Ethernet packets. Sets the packet type annotation from the destination \
address: HOST (ETHER), BROADCAST, MULTICAST or OTHERHOST. Packets for other hosts go to output 1 \
(dropped if it is not connected) unless DROP_OTHER is false; with DROP_OWN true, packets whose \
source is ETHER go to output 1 too.\n\n\
- `DROP_OWN` (boolean): default false.\n- `DROP_OTHER` (boolean): default true.\n\
- `OFFSET` (unsigned): position of the Ethernet header. Default 0.\n\n\
Packets too short for an Ethernet header at OFFSET go to output 1.",
    ports: "one input; one or two outputs (1: filtered packets)",
    handlers: &[HandlerDoc {
        name: "ether",
        mode: HandlerMode::ReadWrite,
        text: "The address ETHER.",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(HostEtherFilter::default()),
};

impl HostEtherFilter {
    /// True if the packet stays on output 0.
    #[inline]
    fn classify(&self, p: &mut Packet) -> bool {
        let Some(e) = p
            .data()
            .get(self.offset..)
            .and_then(|d| EthernetFrame::new_addrs_checked(d).ok())
        else {
            return false;
        };
        let (dst, src) = (e.dst_addr(), e.src_addr());
        if self.drop_own && src.0 == self.addr {
            return false;
        }
        let t = if dst.0 == self.addr {
            PacketType::Host
        } else if dst.is_broadcast() {
            PacketType::Broadcast
        } else if dst.is_group() {
            PacketType::Multicast
        } else {
            PacketType::OtherHost
        };
        p.anno_mut().packet_type = t;
        !(t == PacketType::OtherHost && self.drop_other)
    }
}

impl Element for HostEtherFilter {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let addr = a.read_mp::<[u8; 6]>("ETHER")?;
        let drop_own = a.read_p::<bool>("DROP_OWN")?.unwrap_or(false);
        let drop_other = a.read_p::<bool>("DROP_OTHER")?.unwrap_or(true);
        let offset = a.read::<usize>("OFFSET")?.unwrap_or(0);
        a.complete()?;
        *self = HostEtherFilter {
            addr,
            drop_own,
            drop_other,
            offset,
        };
        Ok(())
    }

    #[inline]
    fn push(&mut self, _port: usize, mut p: Packet, cx: &Ctx) {
        if self.classify(&mut p) {
            cx.push(0, p);
        } else if cx.noutputs() > 1 {
            cx.push(1, p);
        }
    }

    /// The run of packets that stay goes out as one batch; from the first
    /// that does not, packets go one at a time.
    #[inline]
    fn push_batch(&mut self, _port: usize, mut batch: Batch, cx: &Ctx) {
        let mut i = 0;
        while i < batch.len() && self.classify(&mut batch[i]) {
            i += 1;
        }
        if i == batch.len() {
            cx.push_batch(0, batch);
            return;
        }
        let rest = batch.split_off(i);
        cx.push_batch(0, batch);
        for (k, mut p) in rest.into_iter().enumerate() {
            // the first of the rest was classified (and refused) above
            if k > 0 && self.classify(&mut p) {
                cx.push(0, p);
            } else if cx.noutputs() > 1 {
                cx.push(1, p);
            }
        }
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        self.classify(&mut p).then_some(p)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "ether" => Some(Ok(EtherAddress(self.addr).to_string())),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "ether" => Some(cx.arg_context().ether(value.trim()).map(|a| self.addr = a)),
            _ => None,
        }
    }

    crate::element_any!();
}
