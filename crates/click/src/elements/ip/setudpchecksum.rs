//! SetUDPChecksum: sets UDP packets' checksums.

use super::iputil::{is_fragment, transport_checksum};
use crate::prelude::*;
use alloc::format;

/// `SetUDPChecksum()`.
#[derive(Default)]
pub struct SetUDPChecksum {
    warned: bool,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "SetUDPChecksum",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "tcpudp",
    signature: "SetUDPChecksum()",
    summary: "Sets UDP packets' checksums.",
    description: "Input packets must be UDP in IP, with the IP header annotation set (the \
protocol field is not checked). Calculates the UDP checksum over the UDP length given in the UDP \
header, with the pseudo-header built from the IP header, and stores it in the UDP checksum \
field. A computed checksum of zero is sent as `0xFFFF` (RFC 768), since zero means \"no \
checksum\".\n\n\
IP fragments, and packets whose UDP length is longer than the packet (or that are too short to \
hold a UDP header), are pushed to output 1, or dropped if there is no output 1; in that case \
the first one is reported as `NAME: fragment or short packet` on standard error.",
    ports: "one input; one or two outputs (1: fragments and short packets)",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(SetUDPChecksum::default()),
};

#[inline]
fn fix(p: &mut Packet) -> bool {
    let Some(nh) = p.network_header_offset() else {
        return false;
    };
    let Some(th) = p.transport_header_offset() else {
        return false;
    };
    if th < nh {
        return false;
    }
    let Some(ip) = p.network_header_mut() else {
        return false;
    };
    let tho = (th - nh) as usize;
    if ip.len() < 20 || tho > ip.len() || is_fragment(ip) {
        return false;
    }
    let (iph, seg) = ip.split_at_mut(tho);
    if seg.len() < 8 {
        return false;
    }
    let len = usize::from(u16::from_be_bytes([seg[4], seg[5]]));
    if len > seg.len() {
        return false;
    }
    seg[6] = 0;
    seg[7] = 0;
    let mut c = transport_checksum(iph, 17, &seg[..len]);
    if c == 0 {
        c = 0xffff;
    }
    seg[6..8].copy_from_slice(&c.to_be_bytes());
    true
}

impl Element for SetUDPChecksum {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, cx: &Ctx) -> Option<Packet> {
        if fix(&mut p) {
            return Some(p);
        }
        if cx.noutputs() > 1 {
            cx.push(1, p);
        } else if !self.warned {
            self.warned = true;
            cx.error_line(&format!("{}: fragment or short packet", cx.name()));
        }
        None
    }

    crate::element_any!();
}
