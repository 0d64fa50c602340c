//! ICMPPingResponder: responds to ICMP echo requests.

use crate::prelude::*;
use click_wire::checksum_update_u16;

/// `ICMPPingResponder()`.
#[derive(Default)]
pub struct ICMPPingResponder;

pub static SPEC: ClassSpec = ClassSpec {
    name: "ICMPPingResponder",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "icmp",
    signature: "ICMPPingResponder()",
    summary: "Responds to ICMP echo requests.",
    description: "Turns ICMP echo requests into echo replies, in place: swaps the IP source and \
destination addresses, clears the fragment field, sets the TTL to 255, sets the ICMP type and \
code to 0 (echo reply) and updates both checksums incrementally (so a bad checksum stays bad). \
Incoming packets must have their IP header annotation set. The reply's destination IP \
annotation is set to its new destination, its paint annotation is cleared and its timestamp is \
set to the current time; other annotations are kept. Replies leave on output 0.\n\n\
IP packets other than ICMP echo requests (and echo requests shorter than the 8-byte ICMP \
header) leave on output 1 if it exists, and are dropped otherwise. Source route options are \
not reversed (as in Click).",
    ports: "one input; one or two outputs (1: other packets)",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(ICMPPingResponder),
};

/// Rewrites an echo request into a reply. False (packet untouched) when it
/// is not an echo request.
fn respond(p: &mut Packet, cx: &Ctx) -> bool {
    let (Some(nh), Some(th)) = (p.network_header_offset(), p.transport_header_offset()) else {
        return false;
    };
    if nh < 0 || th < nh + 20 || th as usize + 8 > p.len() {
        return false;
    }
    let (nh, th) = (nh as usize, th as usize);
    let d = p.data_mut();
    if d[nh + 9] != 1 || d[th] != 8 {
        return false;
    }
    // IP: swap addresses (the checksum does not change), clear the
    // fragment field, TTL 255.
    for i in 0..4 {
        d.swap(nh + 12 + i, nh + 16 + i);
    }
    let mut sum = u16::from_be_bytes([d[nh + 10], d[nh + 11]]);
    let off = u16::from_be_bytes([d[nh + 6], d[nh + 7]]);
    sum = checksum_update_u16(sum, off, 0);
    d[nh + 6] = 0;
    d[nh + 7] = 0;
    let old = u16::from_be_bytes([d[nh + 8], d[nh + 9]]);
    d[nh + 8] = 255;
    let new = u16::from_be_bytes([d[nh + 8], d[nh + 9]]);
    sum = checksum_update_u16(sum, old, new);
    d[nh + 10..nh + 12].copy_from_slice(&sum.to_be_bytes());
    let dst = [d[nh + 16], d[nh + 17], d[nh + 18], d[nh + 19]];
    // ICMP: type 0, code 0.
    let old = u16::from_be_bytes([d[th], d[th + 1]]);
    d[th] = 0;
    d[th + 1] = 0;
    let mut c = checksum_update_u16(u16::from_be_bytes([d[th + 2], d[th + 3]]), old, 0);
    if c == 0 && d[th..].iter().all(|&b| b == 0) {
        c = 0xffff;
    }
    d[th + 2..th + 4].copy_from_slice(&c.to_be_bytes());
    let now = cx.now();
    let a = p.anno_mut();
    a.set(0, &dst);
    a.set_paint(0);
    p.set_timestamp(now);
    true
}

impl Element for ICMPPingResponder {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()
    }

    fn simple_action(&mut self, mut p: Packet, cx: &Ctx) -> Option<Packet> {
        if respond(&mut p, cx) {
            Some(p)
        } else {
            if cx.noutputs() > 1 {
                cx.push(1, p);
            }
            None
        }
    }

    crate::element_any!();
}
