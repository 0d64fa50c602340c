//! IPMirror: swaps IP source and destination (and TCP/UDP ports).

use super::iputil::is_first_fragment;
use crate::prelude::*;

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
        let Some(ip) = p.network_header_mut() else {
            return false;
        };
        if ip.len() < 20 {
            return false;
        }
        for i in 12..16 {
            ip.swap(i, i + 4);
        }
        let new_dst = [ip[16], ip[17], ip[18], ip[19]];
        let proto = ip[9];
        if (proto == 6 || proto == 17) && is_first_fragment(ip) {
            if let Some(t) = th.and_then(|th| usize::try_from(th - nh).ok()) {
                if t.checked_add(8).is_some_and(|e| e <= ip.len()) {
                    ip.swap(t, t + 2);
                    ip.swap(t + 1, t + 3);
                    if proto == 6 && t + 12 <= ip.len() {
                        for i in 0..4 {
                            ip.swap(t + 4 + i, t + 8 + i);
                        }
                    }
                }
            }
        }
        if self.dst_anno {
            p.anno_mut().set(0, &new_dst);
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

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        self.mirror(&mut p).then_some(p)
    }

    crate::element_any!();
}
