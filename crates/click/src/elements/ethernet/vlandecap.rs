//! VLANDecap: strips 802.1Q tags from Ethernet packets.

use crate::prelude::*;
use click_wire::{EthernetFrame, VlanHeader};

/// `VLANDecap([ANNO, KEYWORDS])`.
pub struct VLANDecap {
    anno: bool,
    ethertype: u16,
    drops: u64,
}

impl Default for VLANDecap {
    fn default() -> Self {
        VLANDecap {
            anno: true,
            ethertype: 0x8100,
            drops: 0,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "VLANDecap",
    port_count: "1/1",
    processing: "a/a",
    group: "ethernet",
    signature: "VLANDecap([ANNO, KEYWORDS])",
    summary: "Strips VLAN information from Ethernet packets.",
    description: "Expects Ethernet packets, possibly 802.1Q-tagged. If the ethertype is \
ETHERTYPE, removes the 4-byte tag, leaving a conventional Ethernet packet; untagged packets pass \
unchanged. Sets the MAC header annotation. Packets shorter than an Ethernet header, and tagged \
packets too short for the tag, are dropped (and counted).\n\n\
Keyword arguments:\n\n\
- `ANNO` (boolean): set the VLAN TCI annotation to the tag's TCI, or 0 for untagged packets. \
Default true.\n\
- `ETHERTYPE` (16-bit integer): the tag protocol identifier: 0x8100 (default, 802.1Q), 0x88A8 \
(802.1ad), 0x9100.",
    ports: "one input, one output",
    handlers: &[HandlerDoc {
        name: "drops",
        mode: HandlerMode::Read,
        text: "Packets dropped as too short.",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(VLANDecap::default()),
};

impl VLANDecap {
    fn decap(&mut self, mut p: Packet) -> Option<Packet> {
        let Ok(f) = EthernetFrame::new_checked(p.data()) else {
            self.drops += 1;
            return None;
        };
        let mut tci = 0;
        if f.ethertype() == self.ethertype {
            let Ok(v) = VlanHeader::new_checked(f.payload()) else {
                self.drops += 1;
                return None;
            };
            tci = v.tci();
            // The addresses move up over the tag; the tag's type field
            // becomes the frame's.
            let (dst, src) = (f.dst_addr(), f.src_addr());
            p.pull(4);
            let mut f = EthernetFrame::new_unchecked(p.data_mut());
            f.set_dst_addr(dst);
            f.set_src_addr(src);
        }
        p.set_mac_header(0);
        if self.anno {
            p.anno_mut().set_vlan_tci(tci);
        }
        Some(p)
    }
}

impl Element for VLANDecap {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let anno = a.read_p::<bool>("ANNO")?.unwrap_or(true);
        let ethertype = a.read::<u16>("ETHERTYPE")?.unwrap_or(0x8100);
        a.complete()?;
        self.anno = anno;
        self.ethertype = ethertype;
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    fn simple_action(&mut self, p: Packet, _cx: &Ctx) -> Option<Packet> {
        self.decap(p)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "drops" => Some(Ok(self.drops.to_string())),
            _ => None,
        }
    }

    crate::element_any!();
}
