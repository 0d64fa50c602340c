//! IPMirror: swaps IP source and destination (and TCP/UDP ports).

use crate::prelude::*;
use click_wire::{ip_proto, TcpPacket, UdpPacket};

/// `IPMirror([DST_ANNO])`.
pub struct IPMirror {
    dst_anno: bool,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "IPMirror",
    port_count: "1/1",
    processing: "a/a",
    group: "ip",
    signature: "IPMirror([DST_ANNO])",
    summary: "Swaps IP source and destination.",
    description: "Incoming packets must have their IP header annotations set. Swaps packets' \
source and destination IP addresses. Packets containing TCP or UDP headers (first fragments of \
packets with protocol 6 or 17, with at least 8 bytes of transport header) also have their source \
and destination ports swapped; TCP packets (with at least 12 bytes of TCP header) also have \
their sequence and acknowledgement numbers swapped.\n\n\
The IP and TCP or UDP checksums are not changed: these swaps do not affect them.\n\n\
By default the output packet's destination address annotation is set to the new destination \
address. Keyword arguments:\n\n\
- `DST_ANNO` (boolean): set the destination address annotation. Default true.\n\n\
Packets without a readable 20-byte IP header are dropped.",
    ports: "one input, one output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(IPMirror { dst_anno: true }),
};

impl IPMirror {
    /// Mirrors one packet; false when it has no IP header.
    #[inline]
    fn mirror(&self, p: &mut Packet) -> bool {
        let (Some(nh), th) = (p.network_header_offset(), p.transport_header_offset()) else {
            return false;
        };
        let Some(mut ip) = p.ip_header_mut() else {
            return false;
        };
        // Swapping the addresses leaves the checksum as it was.
        let (src, dst) = (ip.src_addr(), ip.dst_addr());
        ip.set_src_addr(dst);
        ip.set_dst_addr(src);
        let proto = ip.protocol();
        if (proto == ip_proto::TCP || proto == ip_proto::UDP) && ip.is_first_fragment() {
            let seg = th
                .and_then(|th| usize::try_from(th - nh).ok())
                .and_then(|t| ip.into_inner().get_mut(t..));
            // Click swaps the ports once 8 bytes of the transport header
            // are there, and TCP's sequence and acknowledgement numbers once
            // 12 are: unchecked views over a header that may be cut after
            // them (the ports end at byte 4, the numbers at byte 12).
            match seg.filter(|s| s.len() >= 8) {
                Some(seg) if proto == ip_proto::TCP => {
                    let seqs = seg.len() >= 12;
                    let mut tcp = TcpPacket::new_unchecked(seg);
                    let (sport, dport) = (tcp.src_port(), tcp.dst_port());
                    tcp.set_src_port(dport);
                    tcp.set_dst_port(sport);
                    if seqs {
                        let (seq, ack) = (tcp.seq_number(), tcp.ack_number());
                        tcp.set_seq_number(ack);
                        tcp.set_ack_number(seq);
                    }
                }
                Some(seg) => {
                    let mut udp = UdpPacket::new_unchecked(seg);
                    let (sport, dport) = (udp.src_port(), udp.dst_port());
                    udp.set_src_port(dport);
                    udp.set_dst_port(sport);
                }
                None => {}
            }
        }
        if self.dst_anno {
            p.anno_mut().set_dst_ip(src);
        }
        true
    }
}

impl Element for IPMirror {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let dst_anno = a.read_p::<bool>("DST_ANNO")?.unwrap_or(true);
        a.complete()?;
        self.dst_anno = dst_anno;
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        self.mirror(&mut p).then_some(p)
    }

    crate::element_any!();
}
