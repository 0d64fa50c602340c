//! Click's NAT machinery (`elements/ip/iprewriterbase`, `iprwmapping`,
//! `iprwpattern`), shared by IPRewriter, TCPRewriter, UDPRewriter,
//! IPAddrRewriter, IPAddrPairRewriter, ICMPPingRewriter, ICMPRewriter,
//! IPRewriterPatterns and the mappers (RoundRobinIPMapper,
//! SourceIPHashMapper).
//!
//! - [`FlowId`], the (source, source port, destination, destination port)
//!   quadruple a mapping table is keyed by.
//! - [`Pattern`]: `SADDR SPORT DADDR DPORT` with address or port ranges,
//!   and Click's allocation order (the source port first, then sequential
//!   `#` or random).
//! - [`Input`]: one INPUTSPEC (`drop`, `pass`, `keep`, `pattern`, a
//!   mapper element).
//! - [`FlowSet`]: the flows of one or more rewriters that share a
//!   MAPPING_CAPACITY: a slab of [`Flow`]s (each with its forward and reply
//!   [`Entry`]), every member rewriter's hash tables, and Click's two
//!   expiry heaps (guaranteed and best-effort) that decide what to evict.
//!
//! Nothing here allocates per packet once a flow exists: flows live in a
//! slab whose slots are reused, the tables chain through the flows
//! themselves, and the heaps hold slab indices.

pub use crate::common::cgnat::Cgnat;
use core::fmt;
use core::net::Ipv4Addr;

mod flows;
mod mapper;
mod pattern;
pub use flows::*;
pub use mapper::*;
pub use pattern::*;

pub const IP_PROTO_ICMP: u8 = 1;
pub const IP_PROTO_TCP: u8 = 6;
pub const IP_PROTO_UDP: u8 = 17;
pub const IP_PROTO_DCCP: u8 = 33;

/// Click's `rw_drop`: no mapping, drop the packet.
pub const RW_DROP: i32 = -1;
/// Click's `rw_addmap`: install the mapping just computed.
pub const RW_ADDMAP: i32 = -2;

/// No entry (end of a hash chain, a lookup that failed).
pub const NIL: u32 = u32::MAX;

/// Default capacity: Click's `0x7FFFFFFF`.
pub const DEFAULT_CAPACITY: i32 = 0x7FFF_FFFF;

/// Click's IPFlowID: addresses and ports in host order.
#[derive(Clone, Copy, Debug, Default, Eq)]
pub struct FlowId {
    pub saddr: u32,
    pub sport: u16,
    pub daddr: u32,
    pub dport: u16,
}

impl PartialEq for FlowId {
    /// All four fields, without a branch per field.
    #[inline]
    fn eq(&self, o: &FlowId) -> bool {
        let a = ((self.saddr as u64) << 32 | self.daddr as u64)
            ^ ((o.saddr as u64) << 32 | o.daddr as u64);
        let b = ((self.sport as u32) << 16 | self.dport as u32)
            ^ ((o.sport as u32) << 16 | o.dport as u32);
        a | b as u64 == 0
    }
}

impl FlowId {
    pub const fn new(saddr: u32, sport: u16, daddr: u32, dport: u16) -> FlowId {
        FlowId {
            saddr,
            sport,
            daddr,
            dport,
        }
    }
    /// The reply direction's flow ID.
    pub const fn reverse(&self) -> FlowId {
        FlowId::new(self.daddr, self.dport, self.saddr, self.sport)
    }
    /// The six 16-bit words in IPFlowID's memory order: source address,
    /// destination address, source port, destination port (the order the
    /// checksum deltas run over).
    pub const fn words(&self) -> [u16; 6] {
        [
            (self.saddr >> 16) as u16,
            self.saddr as u16,
            (self.daddr >> 16) as u16,
            self.daddr as u16,
            self.sport,
            self.dport,
        ]
    }
    #[inline]
    pub(crate) fn hash(&self) -> u32 {
        let a = ((self.saddr as u64) << 32) | self.daddr as u64;
        let b = ((self.sport as u64) << 16) | self.dport as u64;
        let mut h = a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 29;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 32;
        h as u32
    }
    pub fn src(&self) -> Ipv4Addr {
        Ipv4Addr::from(self.saddr)
    }
    pub fn dst(&self) -> Ipv4Addr {
        Ipv4Addr::from(self.daddr)
    }
}

/// Click's IPFlowID unparsing: `(SA, SP, DA, DP)`.
impl fmt::Display for FlowId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "({}, {}, {}, {})",
            self.src(),
            self.sport,
            self.dst(),
            self.dport
        )
    }
}

// ---------------------------------------------------------------------
// Patterns
#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::rng::Rng;
    use alloc::rc::Rc;
    use alloc::vec::Vec;
    use click_lang::ArgContext;

    fn pat(s: &str) -> Rc<Pattern> {
        let names = click_lang::NameTable::new();
        let ac = ArgContext::new(&names, "x");
        let w: Vec<&str> = s.split_whitespace().collect();
        match Pattern::parse(&w, &ac).unwrap() {
            PatRef::Literal(p) => p,
            PatRef::Named(_) => panic!(),
        }
    }

    #[test]
    fn patterns_unparse_as_click() {
        assert_eq!(
            pat("1.0.0.1 1024-65535# - -").unparse(),
            "1.0.0.1 1024-65535 - -"
        );
        assert_eq!(pat("1.0.0.1/24 -").unparse(), "1.0.0.1-1.0.0.254 -");
        assert_eq!(pat("1.0.0.1/8 -").unparse(), "1.0.0.1-1.255.255.254 -");
        assert_eq!(pat("1.0.0.1 - - -").unparse(), "1.0.0.1 - - -");
    }

    #[test]
    fn seq_deltas_replace_refuse_forget_and_wrap() {
        let mut d = SeqDeltas::default();
        assert!(!d.any());
        assert!(d.update(0, 100, 5));
        assert!(!d.update(0, 50, 1), "an older trigger is refused");
        assert!(d.update(0, 100, -3), "the same trigger replaces");
        assert_eq!(d.current(0), -3);
        assert!(d.active(0) && !d.active(1));
        assert_eq!(d.new_seq(0, 99), 99);
        assert_eq!(d.new_seq(0, 100), 97);
        assert!(d.update(0, 200, 10));
        assert_eq!(d.new_seq(0, 150), 147);
        assert_eq!(d.new_seq(0, 200), 207);
        // the other direction acknowledges the rewritten numbers
        assert_eq!(d.new_ack(1, 207), 200);
        assert_eq!(d.new_ack(1, 97), 100);
        assert_eq!(d.new_ack(1, 50), 50);
        // a change 2^30 later forgets the ones that far behind
        assert!(d.update(0, 200 + SEQ_FORGET, 1));
        assert_eq!(d.trans[0].len(), 1);
        assert_eq!(d.base[0], 7);
        assert_eq!(d.new_seq(0, 150), 157);
        // and a packet 2^30 past the newest forgets it too
        d.advance(0, 200 + 2 * SEQ_FORGET);
        assert!(d.trans[0].is_empty());
        assert_eq!(d.new_seq(0, 0), 8);
        // sequence numbers wrap
        let mut w = SeqDeltas::default();
        assert!(w.update(1, u32::MAX - 1, 4));
        assert_eq!(w.new_seq(1, 2), 6);
        assert_eq!(w.new_seq(1, u32::MAX - 5), u32::MAX - 5);
        assert_eq!(w.new_ack(0, 6), 2);
    }

    #[test]
    fn sequential_allocation_wraps_and_fails_when_full() {
        let p = pat("1.0.0.1 1024-1025# - -");
        let mut rng = Rng::new(1);
        let f = FlowId::new(1, 5, 2, 6);
        let taken = |_: &FlowId| false;
        assert_eq!(p.rewrite(&f, &taken, &mut rng).unwrap().sport, 1024);
        assert_eq!(p.rewrite(&f, &taken, &mut rng).unwrap().sport, 1025);
        assert_eq!(p.rewrite(&f, &taken, &mut rng).unwrap().sport, 1024);
        assert!(p.rewrite(&f, &|_: &FlowId| true, &mut rng).is_none());
    }
}
