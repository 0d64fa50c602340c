//! EnsureEther: ensures that IP packets are Ethernet-encapsulated.

use crate::prelude::*;
use click_wire::{ethertype, EtherAddress, EthernetFrame};

/// `EnsureEther([ETHERTYPE, SRC, DST])`.
pub struct EnsureEther {
    /// The 14-byte header to prepend: DST, SRC, ETHERTYPE.
    hdr: [u8; 14],
    drops: u64,
}

impl Default for EnsureEther {
    fn default() -> Self {
        EnsureEther {
            hdr: header(ethertype::IPV4, [1; 6], [2; 6]),
            drops: 0,
        }
    }
}

/// The 14-byte header to prepend.
fn header(ty: u16, src: [u8; 6], dst: [u8; 6]) -> [u8; 14] {
    let mut h = [0u8; 14];
    let mut f = EthernetFrame::new_unchecked(&mut h[..]);
    f.set_dst_addr(EtherAddress(dst));
    f.set_src_addr(EtherAddress(src));
    f.set_ethertype(ty);
    h
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "EnsureEther",
    port_count: "1/1",
    processing: "a/a",
    group: "ethernet",
    signature: "EnsureEther([ETHERTYPE, SRC, DST])",
    summary: "Ensures that IP packets are Ethernet encapsulated.",
    description: "Makes sure IP packets (packets with the IP header annotation set) carry an \
Ethernet header. Packets without the IP header annotation pass unchanged, as do IP packets whose \
IP header starts 14 bytes in behind an Ethernet header of type IPv4 (0x0800) or IPv6 (0x86DD). \
If the IP header starts the packet and the 14 bytes before it (in the headroom) look like an \
Ethernet header of one of those types -- a header that was stripped, as by Strip(14) -- that \
header is put back. Otherwise anything before the IP header is removed and the header given by \
the arguments is prepended.\n\n\
Arguments (positional or by keyword):\n\n\
- `ETHERTYPE` (16-bit integer): default 0x0800.\n\
- `SRC` (Ethernet address): default 01-01-01-01-01-01.\n\
- `DST` (Ethernet address): default 02-02-02-02-02-02.",
    ports: "one input, one output",
    handlers: &[HandlerDoc {
        name: "drops",
        mode: HandlerMode::Read,
        text: "Packets dropped because their IP header annotation lay past their end.",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(EnsureEther::default()),
};

/// Whether `b` starts with an Ethernet header of an IP type.
fn ip_ethertype(b: &[u8]) -> bool {
    EthernetFrame::new_checked(b)
        .is_ok_and(|f| matches!(f.ethertype(), ethertype::IPV4 | ethertype::IPV6))
}

impl EnsureEther {
    fn ensure(&mut self, mut p: Packet) -> Option<Packet> {
        let Some(off) = p.network_header_offset() else {
            return Some(p);
        };
        if off < 0 {
            return Some(p);
        }
        if off == 14 && ip_ethertype(p.data()) {
            return Some(p);
        }
        if off == 0 && p.headroom() >= 14 && p.shift_head(-14) {
            if ip_ethertype(p.data()) {
                p.set_mac_header(0);
                return Some(p);
            }
            p.shift_head(14);
        }
        if !p.pull(off as usize) {
            // The IP header annotation points past the packet's end.
            self.drops += 1;
            return None;
        }
        p.push(14);
        p.data_mut()[..14].copy_from_slice(&self.hdr);
        p.set_mac_header(0);
        Some(p)
    }
}

impl Element for EnsureEther {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let et = a.read_p::<u32>("ETHERTYPE")?.unwrap_or(0x0800);
        let src = a.read_p::<[u8; 6]>("SRC")?.unwrap_or([1; 6]);
        let dst = a.read_p::<[u8; 6]>("DST")?.unwrap_or([2; 6]);
        a.complete()?;
        if et > 0xffff {
            return Err("argument 1 (Ethernet encapsulation type) must be <= 0xFFFF".into());
        }
        self.hdr = header(et as u16, src, dst);
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    fn simple_action(&mut self, p: Packet, _cx: &Ctx) -> Option<Packet> {
        self.ensure(p)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "drops" => Some(Ok(self.drops.to_string())),
            _ => None,
        }
    }

    crate::element_any!();
}
