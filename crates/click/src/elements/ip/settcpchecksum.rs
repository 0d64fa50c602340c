//! SetTCPChecksum: sets TCP packets' checksums.

use crate::prelude::*;
use click_wire::TcpPacket;

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
        let Some(ip) = p.ip_header_mut() else {
            return false;
        };
        let tho = (th - nh) as usize;
        let ip_len = usize::from(ip.total_len());
        let hl = usize::from(ip.header_len());
        let Some(plen) = ip_len.checked_sub(hl) else {
            return false;
        };
        let frag = ip.is_fragment();
        let (src, dst) = (ip.src_addr(), ip.dst_addr());
        let Some(seg) = ip.into_inner().get_mut(tho..) else {
            return false;
        };
        if plen < 20 || plen > seg.len() {
            return false;
        }
        let mut tcp = TcpPacket::new_unchecked(&mut seg[..plen]);
        if self.fixoff {
            let off = usize::from(tcp.header_len());
            if off < 20 {
                tcp.set_data_offset(5);
            } else if off > plen && !frag {
                tcp.set_data_offset(((plen >> 2) & 0xf) as u8);
            }
        }
        tcp.fill_checksum(src, dst);
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

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
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
