//! StripEtherVLANHeader: strips 802.1Q (or plain) Ethernet headers,
//! keeping the TCI in the VLAN annotation.

use crate::prelude::*;
use click_wire::{ethertype, EthernetFrame, VlanHeader};

/// `StripEtherVLANHeader([NATIVE_VLAN_ID])`.
#[derive(Default)]
pub struct StripEtherVLANHeader {
    /// VLAN ID given to untagged packets, or `None` to reject them.
    native_vlan: Option<u16>,
    drops: u64,
}

const HANDLERS: &[HandlerDoc] = &[HandlerDoc {
    name: "drops",
    mode: HandlerMode::Read,
    text: "Packets rejected as too short.",
}];

pub static SPEC: ClassSpec = ClassSpec {
    name: "StripEtherVLANHeader",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "ethernet",
    signature: "StripEtherVLANHeader([NATIVE_VLAN_ID])",
    summary: "Strips 802.1Q VLAN Ethernet header.",
    description: "Checks each packet's outermost Ethernet type. If it is 0x8100 (802.1Q), sets \
the packet's VLAN TCI annotation to the tag's TCI and removes the 18-byte 802.1Q header. \
Otherwise the packet is untagged: its VLAN annotation is set to NATIVE_VLAN_ID and the 14-byte \
Ethernet header is removed. With a negative NATIVE_VLAN_ID, untagged packets are dropped, or \
pushed out output 1 when it exists. Packets too short for their header (under 14 bytes, or \
tagged and under 18) are dropped or pushed out output 1 as well, and counted.\n\n\
Keyword arguments:\n\n\
- `NATIVE_VLAN_ID` (integer below 0xFFF): the VLAN of untagged packets. Default 0.",
    ports: "one input; output 0 for stripped packets, optional push output 1 for the others",
    handlers: HANDLERS,
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(StripEtherVLANHeader::default()),
};

/// Click's old name for the class.
pub static STRIPETHERVLANHEADER_OLD_SPEC: ClassSpec = ClassSpec {
    name: "StripEtherVlanHeader",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "ethernet",
    signature: "StripEtherVlanHeader([NATIVE_VLAN_ID])",
    summary: "The old name of StripEtherVLANHeader.",
    description: "The old name of StripEtherVLANHeader, which behaves identically; see there.",
    ports: "one input; output 0 for stripped packets, optional push output 1 for the others",
    handlers: HANDLERS,
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(StripEtherVLANHeader::default()),
};

impl Element for StripEtherVLANHeader {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let native = a.read_p::<i32>("NATIVE_VLAN_ID")?.unwrap_or(0);
        a.complete()?;
        if native >= 0xfff {
            return Err("bad NATIVE_VLAN_ID".into());
        }
        self.native_vlan = u16::try_from(native).ok();
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    fn simple_action(&mut self, mut p: Packet, cx: &Ctx) -> Option<Packet> {
        match EthernetFrame::new_checked(p.data()) {
            // 802.1Q: the tag must be there too.
            Ok(f) if f.ethertype() == ethertype::VLAN => {
                if let Ok(v) = VlanHeader::new_checked(f.payload()) {
                    let tci = v.tci();
                    p.anno_mut().set_vlan_tci(tci);
                    p.pull(18);
                    return Some(p);
                }
                self.drops += 1;
            }
            Ok(_) => {
                if let Some(v) = self.native_vlan {
                    p.anno_mut().set_vlan_tci(v);
                    p.pull(14);
                    return Some(p);
                }
            }
            Err(_) => self.drops += 1,
        }
        cx.push(1, p);
        None
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        (name == "drops").then(|| Ok(self.drops.to_string()))
    }

    crate::element_any!();
}
