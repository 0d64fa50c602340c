//! StoreIPAddress: stores an IP address (the destination IP annotation or a
//! given address) into the packet.

use super::iputil::is_first_fragment;
use crate::prelude::*;
use click_lang::args::{parse_u64, split_args, RawString};
use click_wire::checksum_update_u16;
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
/// halves of an address, folded once.
#[inline]
fn fold(a: [u8; 4]) -> u16 {
    let s =
        u32::from(u16::from_be_bytes([a[0], a[1]])) + u32::from(u16::from_be_bytes([a[2], a[3]]));
    (s + (s >> 16)) as u16
}

/// Updates the 16-bit checksum at `at` in `d` for a changed address.
#[inline]
fn update(d: &mut [u8], at: usize, old: u16, new: u16) {
    let c = u16::from_be_bytes([d[at], d[at + 1]]);
    d[at..at + 2].copy_from_slice(&checksum_update_u16(c, old, new).to_be_bytes());
}

impl StoreIPAddress {
    /// Stores the address; false (packet unchanged) when it cannot.
    #[inline]
    fn store(&self, p: &mut Packet) -> bool {
        let ipa = self
            .addr
            .map(|a| a.octets())
            .unwrap_or_else(|| p.anno().get::<4>(0));
        let field = match self.target {
            Target::Offset(o) => {
                if (self.addr.is_some() || ipa != [0; 4])
                    && o.checked_add(4).is_some_and(|e| e <= p.len())
                {
                    p.data_mut()[o..o + 4].copy_from_slice(&ipa);
                    return true;
                }
                return false;
            }
            Target::Src => 12,
            Target::Dst => 16,
        };
        if p.network_header_length().is_none_or(|l| l < 20) {
            return false;
        }
        let (Some(nh), th) = (p.network_header_offset(), p.transport_header_offset()) else {
            return false;
        };
        let Some(ip) = p.network_header_mut() else {
            return false;
        };
        if ip.len() < 20 {
            return false;
        }
        let old = fold([ip[field], ip[field + 1], ip[field + 2], ip[field + 3]]);
        ip[field..field + 4].copy_from_slice(&ipa);
        let new = fold(ipa);
        update(ip, 10, old, new);
        let proto = ip[9];
        let first_frag = is_first_fragment(ip);
        if !first_frag || (proto != 6 && proto != 17) {
            return true;
        }
        // The transport header, relative to the network header.
        let Some(t) = th.and_then(|th| usize::try_from(th - nh).ok()) else {
            return true;
        };
        let tlen = ip.len().saturating_sub(t);
        if proto == 6 && t <= ip.len() && tlen >= 20 {
            update(ip, t + 16, old, new);
        } else if proto == 17 && t <= ip.len() && tlen >= 8 && (ip[t + 6], ip[t + 7]) != (0, 0) {
            update(ip, t + 6, old, new);
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
