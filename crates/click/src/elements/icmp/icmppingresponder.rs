//! ICMPPingResponder: responds to ICMP echo requests.

use crate::prelude::*;
use click_wire::{checksum_update_u16, icmp_type, ip_proto, IcmpPacket, Ipv4Packet};

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
    // At least 20 bytes of IP header, and 8 of ICMP header after it.
    let (ip, icmp) = p.data_mut()[nh..].split_at_mut(th - nh);
    let mut ip = Ipv4Packet::new_unchecked(ip);
    let mut icmp = IcmpPacket::new_unchecked(icmp);
    if ip.protocol() != ip_proto::ICMP || icmp.msg_type() != icmp_type::ECHO {
        return false;
    }
    // IP: swap addresses (the checksum does not change), clear the
    // fragment field, TTL 255.
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    ip.set_src_addr(dst);
    ip.set_dst_addr(src);
    ip.set_flags_frag_incremental(0);
    ip.set_ttl_incremental(255);
    // ICMP: type 0, code 0.
    let old = u16::from_be_bytes([icmp.msg_type(), icmp.msg_code()]);
    icmp.set_msg_type(icmp_type::ECHO_REPLY);
    icmp.set_msg_code(0);
    let c = checksum_update_u16(icmp.checksum(), old, 0);
    icmp.set_checksum(c);
    // Click's click_update_zero_in_cksum: all-zero data (the checksum
    // field included, as it now is) has checksum 0xFFFF
    if c == 0 && icmp.as_ref().iter().all(|&b| b == 0) {
        icmp.set_checksum(0xffff);
    }
    let now = cx.now();
    let a = p.anno_mut();
    a.set_dst_ip(src);
    a.set_paint(0);
    p.set_timestamp(now);
    true
}

impl Element for ICMPPingResponder {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
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
