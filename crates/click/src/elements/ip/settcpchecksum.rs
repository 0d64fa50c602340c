//! SetTCPChecksum: sets TCP packets' checksums.

use super::iputil::{is_fragment, transport_checksum};
use crate::prelude::*;

/// `SetTCPChecksum([FIXOFF])`.
#[derive(Default)]
pub struct SetTCPChecksum {
    fixoff: bool,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "SetTCPChecksum",
    port_count: "1/1",
    processing: "a/a",
    group: "tcpudp",
    signature: "SetTCPChecksum([FIXOFF])",
    summary: "Sets TCP packets' checksums.",
    description: "Input packets must be TCP in IP, with the IP header annotation set (the \
protocol field is not checked). Calculates the TCP checksum over the IP payload (IP total length \
minus IP header length), with the pseudo-header built from the IP header, and stores it in the \
TCP checksum field.\n\n\
If `FIXOFF` (boolean, default false) is true, a TCP data offset below 5 words is set to 5, and \
one that points past the end of an unfragmented segment is set to the segment length.\n\n\
Packets whose IP payload is shorter than a TCP header or longer than the packet are dropped \
with the message `SetTCPChecksum: bad lengths` on standard error.",
    ports: "one input, one output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(SetTCPChecksum::default()),
};

impl SetTCPChecksum {
    #[inline]
    fn fix(&self, p: &mut Packet) -> bool {
        let (Some(nh), Some(th)) = (p.network_header_offset(), p.transport_header_offset()) else {
            return false;
        };
        if th < nh {
            return false;
        }
        let Some(ip) = p.network_header_mut() else {
            return false;
        };
        let tho = (th - nh) as usize;
        if ip.len() < 20 || tho > ip.len() {
            return false;
        }
        let ip_len = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
        let hl = usize::from(ip[0] & 0xf) << 2;
        let Some(plen) = ip_len.checked_sub(hl) else {
            return false;
        };
        let frag = is_fragment(ip);
        let (iph, seg) = ip.split_at_mut(tho);
        if plen < 20 || plen > seg.len() {
            return false;
        }
        if self.fixoff {
            let off = usize::from(seg[12] >> 4) << 2;
            if off < 20 {
                seg[12] = (seg[12] & 0x0f) | (5 << 4);
            } else if off > plen && !frag {
                seg[12] = (seg[12] & 0x0f) | ((((plen >> 2) & 0xf) as u8) << 4);
            }
        }
        seg[16] = 0;
        seg[17] = 0;
        let c = transport_checksum(iph, 6, &seg[..plen]);
        seg[16..18].copy_from_slice(&c.to_be_bytes());
        true
    }
}

impl Element for SetTCPChecksum {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let fixoff = a.read_p::<bool>("FIXOFF")?.unwrap_or(false);
        a.complete()?;
        self.fixoff = fixoff;
        Ok(())
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, cx: &Ctx) -> Option<Packet> {
        if self.fix(&mut p) {
            Some(p)
        } else {
            cx.error_line("SetTCPChecksum: bad lengths");
            None
        }
    }

    crate::element_any!();
}
