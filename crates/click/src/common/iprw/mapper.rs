//! The mapper elements' machinery: consistent hashing and Mapper.

use super::*;
use crate::common::rng::Rng;
use alloc::vec::Vec;

/// A consistent-hash ring for SourceIPHashMapper: `nodes` keys per
/// server, drawn from a generator seeded with the configured seed.
#[derive(Clone, Debug)]
pub struct ConsistentHash {
    /// (key, index of the server among the configured ones, by id)
    ring: Vec<(u32, u16)>,
}

impl ConsistentHash {
    pub fn new(ids: &[u16], nodes: usize, seed: i64) -> ConsistentHash {
        let mut rng = Rng::new(seed as u64);
        let max = ids.iter().copied().max().map_or(0, |m| m as usize + 1);
        let mut ring = Vec::new();
        let mut index: u16 = u16::MAX;
        for id in 0..max {
            let present = ids.contains(&(id as u16));
            if present {
                index = index.wrapping_add(1);
            }
            for _ in 0..nodes {
                let key = rng.below(0x7FFF_FFFF) as u32;
                if present {
                    ring.push((key, index));
                }
            }
        }
        ring.sort_unstable();
        ConsistentHash { ring }
    }
    /// The server index for key `k`: the first ring key at or after `k`,
    /// wrapping around.
    pub fn index(&self, k: u32) -> usize {
        if self.ring.is_empty() {
            return 0;
        }
        let i = self.ring.partition_point(|&(key, _)| key < k);
        self.ring[if i == self.ring.len() { 0 } else { i }].1 as usize
    }
}

/// How a mapper chooses among its patterns.
#[derive(Clone, Debug)]
pub enum MapperKind {
    /// RoundRobinIPMapper: the next pattern that maps the flow.
    RoundRobin { last: usize },
    /// SourceIPHashMapper: the pattern the source address hashes to.
    SourceHash(ConsistentHash),
    /// CGNATMapper: endpoint-independent mappings from per-subscriber
    /// port blocks (`crate::common::cgnat`).
    Cgnat(alloc::boxed::Box<Cgnat>),
}

/// What a mapper learns of the packet besides its flow ID.
#[derive(Clone, Copy, Debug, Default)]
pub struct MapArgs {
    /// The IP protocol (`IP_PROTO_ICMP` for ICMPPingRewriter).
    pub ip_p: u8,
    /// Now, in milliseconds.
    pub now: i64,
}

/// A mapper element's state (Click's IPMapper), shared with the rewriters
/// that name it.
#[derive(Clone, Debug)]
pub struct Mapper {
    pub kind: MapperKind,
    pub specs: Vec<Input>,
}

impl Mapper {
    /// After a flow this mapper chose was stored: the bindings it holds
    /// (a CGNAT's; `[NIL, NIL]` for the other mappers).
    pub fn attach(&mut self) -> [u32; 2] {
        match &mut self.kind {
            MapperKind::Cgnat(c) => c.attach(),
            _ => [NIL, NIL],
        }
    }

    /// A flow that held bindings `ids` is gone, at `now` (ms).
    pub fn release(&mut self, ids: [u32; 2], now: i64) {
        if let MapperKind::Cgnat(c) = &mut self.kind {
            c.release(ids, now);
        }
    }

    /// Returns the result and, when a pattern was chosen, the outputs the
    /// new flow takes.
    pub(super) fn rewrite_flowid<T: Taken + ?Sized>(
        &mut self,
        flowid: &FlowId,
        out: &mut FlowId,
        taken: &T,
        rng: &mut Rng,
        ma: MapArgs,
    ) -> (i32, Option<(i32, i32)>) {
        let n = self.specs.len();
        match &mut self.kind {
            MapperKind::RoundRobin { last } => {
                for _ in 0..n {
                    let i = *last % n;
                    *last = if i + 1 == n { 0 } else { i + 1 };
                    let is = &mut self.specs[i];
                    let r = is.rewrite_flowid(flowid, out, taken, rng, ma);
                    if r != RW_DROP || matches!(is.kind, InputKind::Drop) {
                        return (r, Some((is.foutput, is.routput)));
                    }
                }
                (RW_DROP, None)
            }
            MapperKind::SourceHash(h) => {
                // Click's mixing of the address as it lies in memory
                let mut tmp = u32::from_ne_bytes(flowid.saddr.to_be_bytes());
                let t2 = tmp & 0xff;
                tmp = tmp.wrapping_mul((t2 << 24) | 1);
                tmp %= 0x7FFF_FFFF;
                let v = h.index(tmp);
                let Some(is) = self.specs.get_mut(v) else {
                    return (RW_DROP, None);
                };
                let ports = Some((is.foutput, is.routput));
                (is.rewrite_flowid(flowid, out, taken, rng, ma), ports)
            }
            MapperKind::Cgnat(c) => c.map(flowid, out, ma),
        }
    }
}
