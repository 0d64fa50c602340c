//! SetUDPChecksum: sets UDP packets' checksums.

use crate::prelude::*;
use alloc::format;
use click_wire::UdpPacket;

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
    let Some(ip) = p.ip_header_mut() else {
        return false;
    };
    let tho = (th - nh) as usize;
    if tho > ip.as_ref().len() || ip.is_fragment() {
        return false;
    }
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    let Ok(mut udp) = UdpPacket::new_fixed_checked(&mut ip.into_inner()[tho..]) else {
        return false;
    };
    if usize::from(udp.len()) > udp.as_ref().len() {
        return false;
    }
    // Over `len()` bytes (even a length below 8, as Click does); a
    // computed zero is sent as 0xFFFF.
    udp.fill_checksum(src, dst);
    true
}

impl Element for SetUDPChecksum {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
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
