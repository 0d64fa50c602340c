//! StoreIPAddress: stores an IP address (the destination IP annotation or a
//! given address) into the packet.

use crate::prelude::*;
use click_lang::args::{parse_u64, split_args, RawString};
use click_wire::{checksum, checksum_update_u16, ip_proto, TcpPacket, UdpPacket};
use core::net::Ipv4Addr;

/// Where the address goes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Target {
    /// A byte offset from the packet data.
    Offset(usize),
    /// The IP header's source address (`src`).
    Src,
    /// The IP header's destination address (`dst`).
    Dst,
}

/// `StoreIPAddress([ADDR,] OFFSET)`.
pub struct StoreIPAddress {
    /// The address to store; `None` stores the destination IP annotation.
    addr: Option<Ipv4Addr>,
    target: Target,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "StoreIPAddress",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "ip",
    signature: "StoreIPAddress([ADDR,] OFFSET)",
    summary: "Stores IP address in packet.",
    description: "The one-argument form writes the destination IP address annotation into the \
packet at offset OFFSET (bytes from the packet data). If the annotation is zero, the packet is \
not changed. The two-argument form writes ADDR into the packet at offset OFFSET; ADDR may be \
zero.\n\n\
OFFSET may also be `src` or `dst` (case-insensitive): the address is then stored into the \
source or destination field of the IP header the IP header annotation points to, and the IP \
header checksum is updated incrementally, as are the TCP checksum (TCP first fragments) and a \
nonzero UDP checksum (UDP first fragments) when the transport header is present. With `src` or \
`dst`, a zero destination annotation is stored too (as in Click).\n\n\
Packets the address cannot be stored into (too short for OFFSET, a zero annotation with a \
numeric OFFSET, or no IP header for `src`/`dst`) leave unchanged on output 1 if it exists, and \
are dropped otherwise.\n\n\
Except with `src` and `dst`, no checksum is recomputed: follow StoreIPAddress with \
SetIPChecksum (and SetTCPChecksum or SetUDPChecksum) when storing into an IP header by offset.",
    ports: "one input; one or two outputs (1: packets that cannot hold the address)",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || {
        Box::new(StoreIPAddress {
            addr: None,
            target: Target::Offset(0),
        })
    },
};

/// Click's `old_hw`/`new_hw`: the ones-complement sum of the two 16-bit
/// halves of an address.
#[inline]
fn half_sum(a: [u8; 4]) -> u16 {
    checksum::add(
        u16::from_be_bytes([a[0], a[1]]),
        u16::from_be_bytes([a[2], a[3]]),
    )
}

impl StoreIPAddress {
    /// Stores the address; false (packet unchanged) when it cannot.
    #[inline]
    fn store(&self, p: &mut Packet) -> bool {
        let ipa = self
            .addr
            .map(|a| a.octets())
            .unwrap_or_else(|| p.anno().get::<4>(0));
        let src = match self.target {
            Target::Offset(o) => {
                if (self.addr.is_some() || ipa != [0; 4])
                    && o.checked_add(4).is_some_and(|e| e <= p.len())
                {
                    p.data_mut()[o..o + 4].copy_from_slice(&ipa);
                    return true;
                }
                return false;
            }
            Target::Src => true,
            Target::Dst => false,
        };
        if p.network_header_length().is_none_or(|l| l < 20) {
            return false;
        }
        let (Some(nh), th) = (p.network_header_offset(), p.transport_header_offset()) else {
            return false;
        };
        let Some(mut ip) = p.ip_header_mut() else {
            return false;
        };
        let new_addr = Ipv4Addr::from(ipa);
        let old_addr = if src {
            let a = ip.src_addr();
            ip.set_src_addr(new_addr);
            a
        } else {
            let a = ip.dst_addr();
            ip.set_dst_addr(new_addr);
            a
        };
        let (old, new) = (half_sum(old_addr.octets()), half_sum(ipa));
        ip.update_checksum(old, new);
        let proto = ip.protocol();
        if !ip.is_first_fragment() || (proto != ip_proto::TCP && proto != ip_proto::UDP) {
            return true;
        }
        // The transport header, relative to the network header.
        let Some(t) = th.and_then(|th| usize::try_from(th - nh).ok()) else {
            return true;
        };
        let Some(seg) = ip.into_inner().get_mut(t..) else {
            return true;
        };
        if proto == ip_proto::TCP {
            if let Ok(mut tcp) = TcpPacket::new_fixed_checked(seg) {
                tcp.set_checksum(checksum_update_u16(tcp.checksum(), old, new));
            }
        } else if let Ok(mut udp) = UdpPacket::new_fixed_checked(seg) {
            if udp.checksum() != 0 {
                udp.set_checksum(checksum_update_u16(udp.checksum(), old, new));
            }
        }
        true
    }
}

impl Element for StoreIPAddress {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let use_address = split_args(config).len() > 1;
        let mut a = cx.args(config);
        let addr = if use_address {
            Some(a.read_mp::<Ipv4Addr>("ADDR")?)
        } else {
            None
        };
        let offset = a.read_mp::<RawString>("OFFSET")?.0;
        a.complete()?;
        let target = match offset.to_ascii_lowercase().as_str() {
            "src" => Target::Src,
            "dst" => Target::Dst,
            _ => Target::Offset(
                parse_u64(&offset)
                    .ok()
                    .and_then(|v| usize::try_from(v).ok())
                    .filter(|&v| v <= i32::MAX as usize)
                    .ok_or_else(|| String::from("type mismatch: OFFSET requires integer"))?,
            ),
        };
        self.addr = addr;
        self.target = target;
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, cx: &Ctx) -> Option<Packet> {
        if self.store(&mut p) {
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
