//! Flows, their hash tables and Click's two expiry heaps ([`FlowSet`]).

use super::*;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use click_wire::checksum_delta;
use core::cell::RefCell;

// Flows, tables, heaps

/// One direction of a flow, as a hash-table entry.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub key: FlowId,
}

/// Which rewriter class a table member is: decides lookups, the header
/// rewrite and the timeouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Ip,
    Tcp,
    Udp,
    IpAddr,
    IpAddrPair,
    IcmpPing,
}

/// One TCP sequence-number delta transition: sequence numbers at or
/// after `trigger` (in TCP's circular order) are shifted by `delta`, the
/// total of every change up to and including this one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeqDelta {
    pub trigger: u32,
    pub delta: i32,
}

/// Half of the sequence space's distance TCP can tell apart: a trigger
/// this far behind the current one (or behind a packet's sequence number)
/// can no longer be told from a future one, so Click forgets it and its
/// delta applies to every sequence number from then on.
pub const SEQ_FORGET: u32 = 1 << 30;

/// TCP's circular comparison `a >= b` (Click's SEQ_GEQ).
#[inline]
pub fn seq_geq(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

/// TCPRewriter's sequence-number deltas of one flow (Click's TCPFlow
/// `delta_transition` list, which FTPPortMapper feeds when it changes a
/// PORT command's length). Per direction, the transitions whose trigger
/// still counts, oldest first, and the delta that applies before the
/// oldest of them (`base`: zero until a transition is forgotten).
///
/// A packet's sequence number is shifted by the newest transition at or
/// before it, so a retransmission of data sent before a change keeps the
/// old delta; its acknowledgement number (and SACK blocks) speak of the
/// other direction's rewritten sequence space and are shifted back.
#[derive(Clone, Debug, Default)]
pub struct SeqDeltas {
    pub trans: [Vec<SeqDelta>; 2],
    pub base: [i32; 2],
}

impl SeqDeltas {
    /// Whether any delta was ever requested (Click's `_dt != 0`).
    pub fn any(&self) -> bool {
        self.base != [0, 0] || !self.trans[0].is_empty() || !self.trans[1].is_empty()
    }
    /// Whether direction `dir`'s sequence numbers need translating.
    pub fn active(&self, dir: usize) -> bool {
        self.base[dir] != 0 || !self.trans[dir].is_empty()
    }
    /// The delta of the newest transition of direction `dir` (what the
    /// `table` handler prints).
    pub fn current(&self, dir: usize) -> i32 {
        self.trans[dir].last().map_or(self.base[dir], |t| t.delta)
    }
    /// Sequence number `seq` of a packet of direction `dir`, rewritten.
    pub fn new_seq(&self, dir: usize, seq: u32) -> u32 {
        let d = self.trans[dir]
            .iter()
            .rev()
            .find(|t| seq_geq(seq, t.trigger))
            .map_or(self.base[dir], |t| t.delta);
        seq.wrapping_add(d as u32)
    }
    /// Acknowledgement number (or SACK edge) `ack` of a packet of
    /// direction `dir`, rewritten: it acknowledges the other direction's
    /// rewritten sequence numbers, so the delta that produced them is
    /// taken off.
    pub fn new_ack(&self, dir: usize, ack: u32) -> u32 {
        let o = 1 - dir;
        let d = self.trans[o]
            .iter()
            .rev()
            .find(|t| seq_geq(ack.wrapping_sub(t.delta as u32), t.trigger))
            .map_or(self.base[o], |t| t.delta);
        ack.wrapping_sub(d as u32)
    }
    /// Click's `update_seqno_delta`: from sequence number `trigger` on,
    /// direction `dir` is shifted by `delta` more. Transitions must come
    /// in sequence order; an older trigger is refused (`false`). A second
    /// change at the same trigger replaces the first. Transitions 1G
    /// behind the new one are forgotten.
    pub fn update(&mut self, dir: usize, trigger: u32, delta: i32) -> bool {
        let v = &mut self.trans[dir];
        if let Some(last) = v.last() {
            if !seq_geq(trigger, last.trigger) {
                return false;
            }
            if last.trigger == trigger {
                v.pop();
            }
        }
        let prev = v.last().map_or(self.base[dir], |t| t.delta);
        v.push(SeqDelta {
            trigger,
            delta: prev.wrapping_add(delta),
        });
        // the newest older transition at least 1G behind becomes the base
        let n = v.len() - 1;
        if let Some(i) = (0..n)
            .rev()
            .find(|&i| seq_geq(trigger, v[i].trigger.wrapping_add(SEQ_FORGET)))
        {
            self.base[dir] = v[i].delta;
            v.drain(..=i);
        }
        true
    }
    /// A packet of direction `dir` with sequence number `seq` passed: once
    /// it is 1G beyond the newest trigger, every transition of that
    /// direction is forgotten and the newest delta applies to all.
    pub fn advance(&mut self, dir: usize, seq: u32) {
        if let Some(last) = self.trans[dir].last().copied() {
            if seq_geq(seq, last.trigger.wrapping_add(SEQ_FORGET)) {
                self.base[dir] = last.delta;
                self.trans[dir].clear();
            }
        }
    }
    pub fn clear(&mut self) {
        self.trans[0].clear();
        self.trans[1].clear();
        self.base = [0, 0];
    }
}

/// A mapping: both directions, outputs, checksum deltas, expiry.
#[derive(Clone, Debug)]
pub struct Flow {
    pub e: [Entry; 2],
    pub out: [u16; 2],
    pub ip_delta: u16,
    pub udp_delta: u16,
    /// Expiry, in milliseconds (Click's jiffies at CLICK_HZ 1000).
    pub expiry: i64,
    /// What the flow's heap is ordered by: the expiry when the flow last
    /// moved in its heap, never later than `expiry`. A packet that only
    /// puts the expiry off leaves the heap alone; the flow is moved down
    /// when it reaches the top ([`FlowSet::settle`]).
    hexp: i64,
    place: u32,
    pub ip_p: u8,
    pub tflags: u8,
    pub guaranteed: bool,
    pub reply_anno: u8,
    pub member: u16,
    pub input: u16,
    pub mapid: u8,
    live: bool,
    /// TCP sequence-number deltas (TCPRewriter; FTPPortMapper sets them):
    /// boxed, since almost no flow has any, so that a flow stays 80 bytes
    /// instead of 128 (two `Vec`s inline).
    pub seq: Option<alloc::boxed::Box<SeqDeltas>>,
    /// The CGNAT bindings this flow holds (released when it goes), or
    /// [`NIL`].
    pub cgn: [u32; 2],
}

/// TCP state bits in `tflags` (Click's TCPFlow).
pub const S_FORWARD_DONE: u8 = 1;
pub const S_BOTH_DONE: u8 = 3;
pub const S_FORWARD_DATA: u8 = 4;
pub const S_BOTH_DATA: u8 = 12;

impl Flow {
    pub fn both_done(&self) -> bool {
        self.tflags & S_BOTH_DONE == S_BOTH_DONE
    }
    pub fn both_data(&self) -> bool {
        self.tflags & S_BOTH_DATA == S_BOTH_DATA
    }
    /// UDP: at least three packets, at least one a reply.
    pub fn streaming(&self) -> bool {
        self.tflags > 6
    }
    pub fn expired(&self, now: i64) -> bool {
        now >= self.expiry
    }
    /// The flow ID a packet of direction `dir` is rewritten to.
    pub fn rewritten(&self, dir: usize) -> FlowId {
        self.e[1 - dir].key.reverse()
    }
}

#[inline]
pub fn eref_flow(r: u32) -> usize {
    (r >> 1) as usize
}
#[inline]
pub fn eref_dir(r: u32) -> usize {
    (r & 1) as usize
}

/// Which ports of one address the entries of a [`Map`] use as their
/// destination: a count a port (saturating: a port counted 65,535 times
/// stays in use for good, which costs lookups, never a wrong answer) and
/// a bitmap of the ports counted. A NAPT pattern's port search takes a
/// port this says is unused without looking its reply flow up (no entry
/// can have that key), and in random mode prefers such a port.
#[derive(Clone, Debug)]
pub struct PortUse {
    pub addr: u32,
    count: Vec<u16>,
    used: Vec<u64>,
}

impl PortUse {
    fn new(addr: u32) -> PortUse {
        PortUse {
            addr,
            count: alloc::vec![0; 1 << 16],
            used: alloc::vec![0; 1 << 10],
        }
    }
    fn add(&mut self, port: u16) {
        let c = &mut self.count[port as usize];
        if *c == 0 {
            self.used[port as usize >> 6] |= 1 << (port & 63);
        }
        *c = c.saturating_add(1);
    }
    fn sub(&mut self, port: u16) {
        let c = &mut self.count[port as usize];
        if *c == u16::MAX || *c == 0 {
            return;
        }
        *c -= 1;
        if *c == 0 {
            self.used[port as usize >> 6] &= !(1 << (port & 63));
        }
    }
    fn reset(&mut self) {
        self.count.iter_mut().for_each(|c| *c = 0);
        self.used.iter_mut().for_each(|w| *w = 0);
    }
    /// Whether some entry's destination is this address and `port`.
    #[inline]
    pub fn in_use(&self, port: u16) -> bool {
        self.used[port as usize >> 6] & (1 << (port & 63)) != 0
    }
    /// The first port in `from..=hi` that no entry uses, else the first in
    /// `lo..from` (a circular search of `lo..=hi` from `from`).
    pub fn first_unused(&self, from: u16, lo: u16, hi: u16) -> Option<u16> {
        self.first_zero(from, hi)
            .or_else(|| (from > lo).then(|| self.first_zero(lo, from - 1)).flatten())
    }
    fn first_zero(&self, a: u16, b: u16) -> Option<u16> {
        let (mut i, b) = (a as u32, b as u32);
        while i <= b {
            let below = (1u64 << (i & 63)) - 1;
            let free = !(self.used[(i >> 6) as usize] | below);
            if free != 0 {
                let p = (i & !63) + free.trailing_zeros();
                return (p <= b).then_some(p as u16);
            }
            i = (i | 63) + 1;
        }
        None
    }
}

/// How many addresses a [`Map`] keeps a [`PortUse`] for (128 KiB each).
const PORT_USE_ADDRS: usize = 4;

/// A hash table of entries (Click's HashContainer<IPRewriterEntry>):
/// each slot an entry's hash (high half) and reference (low half), or
/// [`EMPTY`].
#[derive(Clone, Debug, Default)]
pub struct Map {
    slots: Vec<u64>,
    len: usize,
    /// Port use of the addresses NAPT patterns allocate ports of.
    ports: Vec<PortUse>,
    /// An address a port search wished had a [`PortUse`] (0: none); the
    /// rewriter calls [`Map::watch`] with it after the search.
    wish: core::cell::Cell<u32>,
}

/// A [`Map`] and its flows, as a port search sees them.
pub struct MapView<'a> {
    pub map: &'a Map,
    pub flows: &'a [Flow],
}

impl Taken for MapView<'_> {
    #[inline]
    fn taken(&self, key: &FlowId) -> bool {
        self.map.get(key, self.flows) != NIL
    }
    #[inline]
    fn port_use(&self, addr: u32) -> Option<&PortUse> {
        let u = self.map.ports.iter().find(|u| u.addr == addr);
        if u.is_none() && self.map.ports.len() < PORT_USE_ADDRS {
            self.map.wish.set(addr);
        }
        u
    }
}

/// An empty slot.
const EMPTY: u64 = NIL as u64;

impl Map {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }
    /// The entry for `key`, or [`NIL`].
    #[inline]
    pub fn get(&self, key: &FlowId, flows: &[Flow]) -> u32 {
        if self.slots.is_empty() {
            return NIL;
        }
        let h = key.hash();
        let mask = self.mask();
        let mut i = h as usize & mask;
        loop {
            let s = self.slots[i];
            let r = s as u32;
            if r == NIL {
                return NIL;
            }
            if (s >> 32) as u32 == h && flows[eref_flow(r)].e[eref_dir(r)].key == *key {
                return r;
            }
            i = (i + 1) & mask;
        }
    }
    /// Doubles the table: slots move by their stored hashes, without a
    /// look at a flow.
    fn grow(&mut self) {
        let n = (self.slots.len() * 2).max(16);
        let old = core::mem::replace(&mut self.slots, alloc::vec![EMPTY; n]);
        let mask = n - 1;
        for s in old {
            if s as u32 != NIL {
                let mut i = (s >> 32) as usize & mask;
                while self.slots[i] as u32 != NIL {
                    i = (i + 1) & mask;
                }
                self.slots[i] = s;
            }
        }
    }
    /// Inserts entry `r`, replacing (and returning) an entry with the same
    /// key, as Click's `HashContainer::set`. Open addressing with linear
    /// probing, at most three quarters full; a slot holds an entry's
    /// 32-bit hash beside its reference, so a probe compares hashes in
    /// the table and reads a flow only when they match: a new flow's
    /// lookups (the first, and the port search's) cost table lines, not
    /// a flow's cache line an entry walked.
    fn set(&mut self, r: u32, flows: &mut [Flow]) -> u32 {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let key = flows[eref_flow(r)].e[eref_dir(r)].key;
        let h = key.hash();
        let mask = self.mask();
        let mut i = h as usize & mask;
        let slot = ((h as u64) << 32) | r as u64;
        loop {
            let s = self.slots[i];
            let cur = s as u32;
            if cur == NIL {
                self.slots[i] = slot;
                self.len += 1;
                self.note(&key, true);
                return NIL;
            }
            if (s >> 32) as u32 == h && flows[eref_flow(cur)].e[eref_dir(cur)].key == key {
                self.slots[i] = slot;
                return cur;
            }
            i = (i + 1) & mask;
        }
    }
    /// Removes entry `r` if it is in the table (an entry another flow
    /// replaced is not), shifting the entries after it back so that no
    /// probe sequence has a hole.
    fn remove(&mut self, r: u32, flows: &mut [Flow]) -> bool {
        if self.slots.is_empty() {
            return false;
        }
        let key = flows[eref_flow(r)].e[eref_dir(r)].key;
        let mask = self.mask();
        let mut i = key.hash() as usize & mask;
        loop {
            let cur = self.slots[i] as u32;
            if cur == NIL {
                return false;
            }
            if cur == r {
                break;
            }
            i = (i + 1) & mask;
        }
        // backward-shift deletion
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let s = self.slots[j];
            if s as u32 == NIL {
                break;
            }
            let home = (s >> 32) as usize & mask;
            // `s` may move into the hole at `i` unless its home lies
            // cyclically in (i, j]
            let stays = if i <= j {
                i < home && home <= j
            } else {
                i < home || home <= j
            };
            if !stays {
                self.slots[i] = s;
                i = j;
            }
        }
        self.slots[i] = EMPTY;
        self.len -= 1;
        self.note(&key, false);
        true
    }
    /// Every entry, in table order.
    pub fn entries(&self) -> Vec<u32> {
        self.slots
            .iter()
            .map(|&s| s as u32)
            .filter(|&r| r != NIL)
            .collect()
    }
    fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = EMPTY);
        self.len = 0;
        self.ports.iter_mut().for_each(PortUse::reset);
    }
    /// Counts `key` in (or out of) the port use of its destination address.
    #[inline]
    fn note(&mut self, key: &FlowId, add: bool) {
        for u in &mut self.ports {
            if u.addr == key.daddr {
                if add {
                    u.add(key.dport);
                } else {
                    u.sub(key.dport);
                }
            }
        }
    }
    /// Keeps the port use of `addr` from now on (counting the entries
    /// already here), if there is room for another address.
    pub fn watch(&mut self, addr: u32, flows: &[Flow]) {
        if self.ports.len() >= PORT_USE_ADDRS || self.ports.iter().any(|u| u.addr == addr) {
            return;
        }
        let mut u = PortUse::new(addr);
        for r in self.entries() {
            let e = &flows[eref_flow(r)].e[eref_dir(r)];
            if e.key.daddr == addr {
                u.add(e.key.dport);
            }
        }
        self.ports.push(u);
    }
    /// The address a port search last wished watched (and forgets it).
    pub fn take_wish(&self) -> u32 {
        self.wish.replace(0)
    }
}

/// Timeouts of one rewriter, in milliseconds.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timeouts {
    /// Best-effort timeout: TCP_NODATA_TIMEOUT for TCP, UDP's TIMEOUT for
    /// UDPRewriter, TIMEOUT for the others.
    pub timeout: i64,
    /// GUARANTEE (TCP_GUARANTEE).
    pub guarantee: i64,
    pub tcp_data: i64,
    pub tcp_done: i64,
    /// IPRewriter's UDP_TIMEOUT and UDP_GUARANTEE.
    pub udp_timeout: i64,
    pub udp_guarantee: i64,
    /// UDP_STREAMING_TIMEOUT (IPRewriter, UDPRewriter).
    pub udp_streaming: i64,
}

/// One rewriter's part of a flow set.
#[derive(Clone, Debug)]
pub struct Member {
    /// The element's index in its router.
    pub elem: usize,
    pub kind: Kind,
    /// Map 0 (IPRewriter's TCP map) and map 1 (IPRewriter's UDP map).
    pub maps: [Map; 2],
    pub inputs: Vec<Input>,
    pub t: Timeouts,
    /// Bit 0: set the destination annotation; bit 1: REPLY_ANNO, whose
    /// offset is `annos >> 2`.
    pub annos: u32,
    pub noutputs: usize,
}

impl Member {
    pub fn new(kind: Kind) -> Member {
        Member {
            elem: usize::MAX,
            kind,
            maps: [Map::default(), Map::default()],
            inputs: Vec::new(),
            t: Timeouts::default(),
            annos: 1,
            noutputs: 0,
        }
    }

    /// The (best-effort timeout, guarantee) that apply to `f` now.
    pub fn timeouts_for(&self, f: &Flow) -> (i64, i64) {
        let t = &self.t;
        match self.kind {
            Kind::Ip | Kind::Tcp if f.ip_p == IP_PROTO_TCP => {
                let to = if f.both_done() {
                    t.tcp_done
                } else if f.both_data() {
                    t.tcp_data
                } else {
                    t.timeout
                };
                (to, t.guarantee)
            }
            Kind::Ip => (
                if f.streaming() {
                    t.udp_streaming
                } else {
                    t.udp_timeout
                },
                t.udp_guarantee,
            ),
            Kind::Udp => (
                if f.streaming() {
                    t.udp_streaming
                } else {
                    t.timeout
                },
                t.guarantee,
            ),
            _ => (t.timeout, t.guarantee),
        }
    }

    /// Click's `get_entry` with `get_entry_reply`: the mapping (either
    /// direction) for `flowid` of protocol `ip_p`, as ICMPRewriter asks.
    pub fn get_entry(&self, ip_p: u8, flowid: &FlowId, flows: &[Flow]) -> u32 {
        match self.kind {
            Kind::Ip | Kind::Tcp | Kind::Udp => {
                let mapid = match (self.kind, ip_p) {
                    (Kind::Ip, IP_PROTO_TCP) => 0,
                    (Kind::Ip, IP_PROTO_UDP) => 1,
                    (Kind::Ip, _) => return NIL,
                    _ => 0,
                };
                let r = self.maps[mapid].get(flowid, flows);
                if r != NIL {
                    let fp = flows[eref_flow(r)].ip_p;
                    if ip_p != 0 && fp != 0 && fp != ip_p {
                        return NIL;
                    }
                }
                r
            }
            Kind::IpAddr => {
                let r = self.maps[0].get(&FlowId::new(flowid.saddr, 0, 0, 0), flows);
                if r != NIL {
                    return r;
                }
                self.maps[0].get(&FlowId::new(0, 0, flowid.daddr, 0), flows)
            }
            Kind::IpAddrPair => {
                self.maps[0].get(&FlowId::new(flowid.saddr, 0, flowid.daddr, 0), flows)
            }
            Kind::IcmpPing => {
                if ip_p != IP_PROTO_ICMP {
                    return NIL;
                }
                let f = FlowId::new(
                    flowid.saddr,
                    flowid.sport.wrapping_add(1),
                    flowid.daddr,
                    flowid.sport,
                );
                self.maps[0].get(&f, flows)
            }
        }
    }
}

/// The flows of the rewriters sharing one MAPPING_CAPACITY (Click's
/// IPRewriterHeap plus the flows it orders).
#[derive(Debug)]
pub struct FlowSet {
    pub flows: Vec<Flow>,
    free: Vec<u32>,
    /// Click's heaps: 0 best-effort, 1 guaranteed; slab indices ordered by
    /// expiry.
    heaps: [Vec<u32>; 2],
    pub capacity: i32,
    pub members: Vec<Member>,
    /// The latest time (ms) the set saw, for the CGNAT's deletion log.
    pub now: i64,
}

impl Default for FlowSet {
    fn default() -> Self {
        FlowSet::new()
    }
}

/// A flow set shared by the rewriters of one MAPPING_CAPACITY.
pub type SharedFlowSet = Rc<RefCell<FlowSet>>;

impl FlowSet {
    pub fn new() -> FlowSet {
        FlowSet {
            flows: Vec::new(),
            free: Vec::new(),
            heaps: [Vec::new(), Vec::new()],
            capacity: DEFAULT_CAPACITY,
            members: Vec::new(),
            now: 0,
        }
    }

    /// Live flows (the `size` handler).
    pub fn size(&self) -> usize {
        self.heaps[0].len() + self.heaps[1].len()
    }

    /// The index of the member for element `elem`.
    pub fn member_of(&self, elem: usize) -> Option<usize> {
        self.members.iter().position(|m| m.elem == elem)
    }

    fn less(&self, a: u32, b: u32) -> bool {
        self.flows[a as usize].hexp < self.flows[b as usize].hexp
    }
    fn set_place(&mut self, h: usize, pos: usize) {
        let f = self.heaps[h][pos] as usize;
        self.flows[f].place = pos as u32;
    }
    fn sift_up(&mut self, h: usize, mut pos: usize) -> usize {
        let elt = self.heaps[h][pos];
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if !self.less(elt, self.heaps[h][parent]) {
                break;
            }
            self.heaps[h][pos] = self.heaps[h][parent];
            self.set_place(h, pos);
            pos = parent;
        }
        self.heaps[h][pos] = elt;
        self.set_place(h, pos);
        pos
    }
    fn sift_down(&mut self, h: usize, mut pos: usize) {
        let elt = self.heaps[h][pos];
        let n = self.heaps[h].len();
        loop {
            let mut c = 2 * pos + 1;
            if c >= n {
                break;
            }
            if c + 1 < n && self.less(self.heaps[h][c + 1], self.heaps[h][c]) {
                c += 1;
            }
            if !self.less(self.heaps[h][c], elt) {
                break;
            }
            self.heaps[h][pos] = self.heaps[h][c];
            self.set_place(h, pos);
            pos = c;
        }
        self.heaps[h][pos] = elt;
        self.set_place(h, pos);
    }
    fn heap_change(&mut self, h: usize, pos: usize) {
        if self.sift_up(h, pos) == pos {
            self.sift_down(h, pos);
        }
    }
    fn heap_push(&mut self, h: usize, f: u32) {
        self.heaps[h].push(f);
        let n = self.heaps[h].len() - 1;
        self.sift_up(h, n);
    }
    fn heap_remove(&mut self, h: usize, pos: usize) {
        let last = self.heaps[h].len() - 1;
        self.heaps[h].swap(pos, last);
        self.heaps[h].pop();
        if pos < last {
            self.set_place(h, pos);
            self.heap_change(h, pos);
        }
    }

    /// Click's `change_expiry`, lazily: a later expiry is only noted (the
    /// flow keeps its place in the heap until [`settle`](Self::settle)
    /// finds it on top), an earlier one moves the flow up at once. A
    /// packet of a flow in a big table thus costs no walk down the heap
    /// (Click's `change_heap` walks it to a leaf, a cache miss a level).
    #[inline]
    pub fn change_expiry(&mut self, f: usize, guaranteed: bool, expiry: i64) {
        let fl = &mut self.flows[f];
        let cur = fl.guaranteed as usize;
        let place = fl.place as usize;
        fl.expiry = expiry;
        if fl.guaranteed != guaranteed {
            self.heap_remove(cur, place);
            let fl = &mut self.flows[f];
            fl.guaranteed = guaranteed;
            fl.hexp = expiry;
            self.heap_push(guaranteed as usize, f as u32);
        } else if expiry < fl.hexp {
            fl.hexp = expiry;
            self.sift_up(cur, place);
        }
    }

    /// Brings heap `h`'s top up to date: while the flow on top expires
    /// later than its place says, it is moved down by its expiry. Then the
    /// top is the flow that expires first (every flow's heap key is at
    /// most its expiry).
    fn settle(&mut self, h: usize) {
        self.settle_upto(h, i64::MAX);
    }

    /// [`settle`](Self::settle), stopping once the top's heap key is after
    /// `limit`: no flow then expires by `limit`, which is all the reaping
    /// needs to know. A flow that keeps getting packets is thus moved down
    /// the heap about once a timeout, not once a packet.
    fn settle_upto(&mut self, h: usize, limit: i64) {
        while let Some(&top) = self.heaps[h].first() {
            let fl = &mut self.flows[top as usize];
            if fl.hexp >= fl.expiry || fl.hexp > limit {
                break;
            }
            fl.hexp = fl.expiry;
            self.sift_down(h, 0);
        }
    }

    /// After a packet of flow `f`: a new guarantee, or the best-effort
    /// timeout when the rewriter gives none.
    pub fn refresh(&mut self, f: usize, now: i64) {
        let m = self.flows[f].member as usize;
        let (to, g) = self.members[m].timeouts_for(&self.flows[f]);
        if g != 0 {
            self.change_expiry(f, true, now + g);
        } else {
            self.change_expiry(f, false, now + to);
        }
    }

    /// When a guaranteed flow's guarantee runs out, it expires this much
    /// later (Click's `best_effort_expiry`).
    pub fn best_effort_expiry(&self, f: usize) -> i64 {
        let fl = &self.flows[f];
        let (to, g) = self.members[fl.member as usize].timeouts_for(fl);
        fl.expiry + to - g
    }

    /// Removes flow `f` from its tables and heap (Click's
    /// `IPRewriterFlow::destroy`).
    pub fn destroy(&mut self, f: usize) {
        if !self.flows[f].live {
            return;
        }
        let h = self.flows[f].guaranteed as usize;
        let place = self.flows[f].place as usize;
        if self.heaps[h].get(place) == Some(&(f as u32)) {
            self.heap_remove(h, place);
        }
        self.unmap(f);
        let fl = &self.flows[f];
        let (m, i) = (fl.member as usize, fl.input as usize);
        let cgn = core::mem::replace(&mut self.flows[f].cgn, [NIL, NIL]);
        if let Some(is) = self.members[m].inputs.get_mut(i) {
            is.count = is.count.saturating_sub(1);
            if cgn[0] != NIL {
                if let InputKind::Mapper(_, Some(mapper)) = &is.kind {
                    mapper.borrow_mut().release(cgn, self.now);
                }
            }
        }
        self.release(f);
    }

    fn unmap(&mut self, f: usize) {
        let m = self.flows[f].member as usize;
        let mapid = self.flows[f].mapid as usize;
        let mut map = core::mem::take(&mut self.members[m].maps[mapid]);
        map.remove((f as u32) << 1, &mut self.flows);
        map.remove(((f as u32) << 1) | 1, &mut self.flows);
        self.members[m].maps[mapid] = map;
    }

    fn release(&mut self, f: usize) {
        self.flows[f].live = false;
        self.flows[f].seq = None;
        self.free.push(f as u32);
    }

    /// The flow of heap `h` that expires first, if it has expired by
    /// `now` (the heap settled as far as that needs).
    fn first_expired(&mut self, h: usize, now: i64) -> Option<usize> {
        self.settle_upto(h, now);
        let f = *self.heaps[h].first()? as usize;
        self.flows[f].expired(now).then_some(f)
    }

    /// Moves flows whose guarantee ran out to the best-effort heap.
    fn shift_best_effort(&mut self, now: i64) {
        while let Some(f) = self.first_expired(1, now) {
            let e = self.best_effort_expiry(f);
            self.change_expiry(f, false, e);
        }
    }

    /// Makes room for new flow `f`: evicts the best-effort flow that
    /// expires first, or `f` itself when every flow is guaranteed
    /// (admission control). Returns whether `f` was the one.
    fn shrink_for_new_flow(&mut self, f: usize, now: i64) -> bool {
        self.shift_best_effort(now);
        self.settle(0);
        let dead = match self.heaps[0].first() {
            Some(&d) => d as usize,
            None => f,
        };
        self.destroy(dead);
        dead == f
    }

    /// Click's `shrink_heap`: drops expired flows, then the flows over
    /// capacity (all of them with `clear_all`).
    pub fn shrink(&mut self, clear_all: bool, now: i64) {
        self.now = self.now.max(now);
        self.shift_best_effort(now);
        while let Some(f) = self.first_expired(0, now) {
            self.destroy(f);
        }
        let cap = if clear_all {
            0
        } else {
            self.capacity.max(0) as usize
        };
        while self.size() > cap {
            let h = self.heaps[0].is_empty() as usize;
            self.settle(h);
            let dead = self.heaps[h][0] as usize;
            self.destroy(dead);
        }
    }

    /// Destroys every flow input `input` of member `m` created (a pattern
    /// handler write).
    pub fn destroy_input_flows(&mut self, m: usize, input: usize) {
        let victims: Vec<usize> = (0..self.flows.len())
            .filter(|&f| {
                let fl = &self.flows[f];
                fl.live && fl.member as usize == m && fl.input as usize == input
            })
            .collect();
        for f in victims {
            self.destroy(f);
        }
    }

    fn alloc(&mut self) -> usize {
        if let Some(f) = self.free.pop() {
            return f as usize;
        }
        let e = Entry {
            key: FlowId::default(),
        };
        self.flows.push(Flow {
            e: [e, e],
            out: [0, 0],
            ip_delta: 0,
            udp_delta: 0,
            expiry: 0,
            hexp: 0,
            place: 0,
            ip_p: 0,
            tflags: 0,
            guaranteed: false,
            reply_anno: 0,
            member: 0,
            input: 0,
            mapid: 0,
            live: false,
            seq: None,
            cgn: [NIL, NIL],
        });
        self.flows.len() - 1
    }

    /// Creates and stores the flow `flowid` => `rewritten` for input
    /// `input` of member `m` (Click's `add_flow` and `store_flow`): the
    /// forward entry, or [`NIL`] when the outputs are out of range or the
    /// set is full of guaranteed flows (a mapping failure).
    #[allow(clippy::too_many_arguments)]
    pub fn add_flow(
        &mut self,
        m: usize,
        input: usize,
        mapid: usize,
        ip_p: u8,
        flowid: &FlowId,
        rewritten: &FlowId,
        now: i64,
    ) -> u32 {
        let Some(is) = self.members[m].inputs.get(input) else {
            return NIL;
        };
        let (fo, ro) = (is.foutput, is.routput);
        let nout = self.members[m].noutputs;
        if fo < 0 || fo as usize >= nout || ro < 0 || ro as usize >= nout {
            return NIL;
        }
        self.now = self.now.max(now);
        let f = self.alloc();
        let (ow, nw) = (flowid.words(), rewritten.words());
        let ip_delta = checksum_delta(&ow[..4], &nw[..4]);
        let udp_delta = if self.members[m].kind == Kind::IcmpPing {
            checksum_delta(&ow[4..5], &nw[4..5])
        } else {
            checksum_delta(&ow, &nw)
        };
        {
            let fl = &mut self.flows[f];
            fl.e[0] = Entry { key: *flowid };
            fl.e[1] = Entry {
                key: rewritten.reverse(),
            };
            fl.out = [fo as u16, ro as u16];
            fl.ip_delta = ip_delta;
            fl.udp_delta = udp_delta;
            fl.ip_p = ip_p;
            fl.tflags = 0;
            fl.reply_anno = 0;
            fl.member = m as u16;
            fl.input = input as u16;
            fl.mapid = mapid as u8;
            fl.live = true;
            fl.cgn = [NIL, NIL];
        }
        let (to, g) = self.members[m].timeouts_for(&self.flows[f]);
        self.flows[f].guaranteed = g != 0;
        self.flows[f].expiry = now + if g != 0 { g } else { to };
        self.flows[f].hexp = self.flows[f].expiry;
        let fwd = (f as u32) << 1;
        let mut map = core::mem::take(&mut self.members[m].maps[mapid]);
        map.set(fwd, &mut self.flows);
        let old = map.set(fwd | 1, &mut self.flows);
        self.members[m].maps[mapid] = map;
        if old != NIL && eref_flow(old) != f {
            // a reply flow ID only one flow can own
            self.destroy(eref_flow(old));
        }
        let h = self.flows[f].guaranteed as usize;
        self.heap_push(h, f as u32);
        self.members[m].inputs[input].count += 1;
        if self.size() > self.capacity.max(0) as usize && self.shrink_for_new_flow(f, now) {
            self.members[m].inputs[input].failures += 1;
            return NIL;
        }
        fwd
    }

    /// One line of a table dump (Click's `unparse` and `unparse_ports`).
    pub fn unparse_entry(&self, r: u32, now: i64, names: &dyn Fn(usize) -> String) -> String {
        let f = &self.flows[eref_flow(r)];
        let dir = eref_dir(r);
        let m = &self.members[f.member as usize];
        let key = f.e[dir].key;
        let rw = f.rewritten(dir);
        let mut s = match m.kind {
            Kind::IpAddr => format!("{} => {}", key.src(), f.e[1 - dir].key.dst()),
            Kind::IpAddrPair => format!(
                "({}, {}) => ({}, {})",
                key.src(),
                key.dst(),
                f.e[1 - dir].key.dst(),
                f.e[1 - dir].key.src()
            ),
            Kind::IcmpPing => format!(
                "({}, {}, {}) => ({}, {}, {})",
                key.src(),
                key.dst(),
                key.sport,
                rw.src(),
                rw.dst(),
                rw.sport
            ),
            _ => {
                let mut s = format!("{key} => {rw}");
                let d = f.seq.as_ref().map_or(0, |q| q.current(dir));
                if d != 0 {
                    let sign = if d > 0 { "+" } else { "" };
                    s.push_str(&format!(" seq {sign}{d}"));
                }
                s
            }
        };
        let _ = names;
        let expiry = if f.guaranteed {
            self.best_effort_expiry(eref_flow(r))
        } else {
            f.expiry
        };
        // Click's unsigned jiffies arithmetic
        let secs = ((expiry + 500 - now) as u32) / 1000;
        s.push_str(&format!(
            " [{}{} {}{}] i{} exp{}",
            if dir == 0 { "*" } else { "" },
            f.out[0],
            if dir == 1 { "*" } else { "" },
            f.out[1],
            f.input,
            secs
        ));
        s
    }

    /// Moves every flow of `from` (member `fm`) into this set as member
    /// `m`'s (hot reconfiguration). Both sets must hold only that member.
    pub fn take_flows(&mut self, m: usize, from: &mut FlowSet, fm: usize) {
        core::mem::swap(&mut self.flows, &mut from.flows);
        core::mem::swap(&mut self.free, &mut from.free);
        core::mem::swap(&mut self.heaps, &mut from.heaps);
        core::mem::swap(&mut self.members[m].maps, &mut from.members[fm].maps);
        for f in self.flows.iter_mut() {
            f.member = m as u16;
        }
        let n = self.members[m]
            .inputs
            .len()
            .min(from.members[fm].inputs.len());
        for i in 0..n {
            self.members[m].inputs[i].count = from.members[fm].inputs[i].count;
            self.members[m].inputs[i].failures = from.members[fm].inputs[i].failures;
        }
        for is in from.members[fm].inputs.iter_mut() {
            is.count = 0;
        }
        for map in from.members[fm].maps.iter_mut() {
            map.clear();
        }
    }
}

/// The jiffies (milliseconds) of a timestamp.
pub fn jiffies(t: crate::time::Timestamp) -> i64 {
    t.nsec().div_euclid(1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::rng::Rng;

    /// The table against a model under random inserts, replacements and
    /// removals, with keys drawn from a small space so that probe runs
    /// are long and wrap around, and removals shift entries back across
    /// the end of the table.
    #[test]
    fn map_matches_a_model_under_churn() {
        // 12 keys keep a 16-slot table up to 3/4 full, wrapping often
        for space in [3, 40] {
            churn(space, 20_000);
        }
    }

    fn churn(space: u64, steps: usize) {
        let mut set = FlowSet::new();
        let mut map = Map::default();
        let mut model: alloc::collections::BTreeMap<(u32, u16), u32> = Default::default();
        let mut rng = Rng::new(7);
        for step in 0..steps {
            let key = FlowId::new(rng.below(space) as u32, rng.below(space + 1) as u16, 9, 9);
            if rng.below(3) == 0 {
                // remove what the model has for the key
                if let Some(r) = model.remove(&(key.saddr, key.sport)) {
                    assert!(map.remove(r, &mut set.flows), "step {step}");
                    set.flows[eref_flow(r)].e[0].key = FlowId::default();
                }
            } else {
                let f = set.alloc();
                set.flows[f].e[0].key = key;
                let r = (f as u32) << 1;
                let old = map.set(r, &mut set.flows);
                let want = model.insert((key.saddr, key.sport), r).unwrap_or(NIL);
                assert_eq!(old, want, "step {step}");
                if old != NIL {
                    // a replaced entry is no longer in the table
                    assert!(!map.remove(old, &mut set.flows));
                }
            }
            assert_eq!(map.len(), model.len());
            if step % 97 == 0 || space < 10 {
                for s in 0..space as u32 {
                    for p in 0..=space as u16 {
                        let want = model.get(&(s, p)).copied().unwrap_or(NIL);
                        assert_eq!(map.get(&FlowId::new(s, p, 9, 9), &set.flows), want);
                    }
                }
                let mut e = map.entries();
                e.sort_unstable();
                let mut m: Vec<u32> = model.values().copied().collect();
                m.sort_unstable();
                assert_eq!(e, m);
            }
        }
    }

    /// Removals whose shifted entries wrap around the end of a 16-slot
    /// table: the entry whose home is the hole moves into it, and one whose
    /// home lies between the hole and the end stays.
    #[test]
    fn removal_shifts_back_across_the_end() {
        // keys by home slot (their hash's low four bits)
        let mut next = 0u32;
        let mut key_at = |home: usize| loop {
            next += 1;
            let k = FlowId::new(next, 1, 2, 3);
            if k.hash() as usize & 15 == home {
                return k;
            }
        };
        for (homes, gone) in [([14, 15, 15], 1), ([14, 15, 15], 0), ([14, 14, 15], 0)] {
            let mut set = FlowSet::new();
            let mut map = Map::default();
            let keys: Vec<FlowId> = homes.iter().map(|&h| key_at(h)).collect();
            let refs: Vec<u32> = keys
                .iter()
                .map(|k| {
                    let f = set.alloc();
                    set.flows[f].e[0].key = *k;
                    let r = (f as u32) << 1;
                    map.set(r, &mut set.flows);
                    r
                })
                .collect();
            assert_eq!(map.slots.len(), 16);
            // the third key wrapped around to slot 0
            assert_eq!(map.slots[0] as u32, refs[2], "{homes:?}");
            assert!(map.remove(refs[gone], &mut set.flows));
            for (i, k) in keys.iter().enumerate() {
                let want = if i == gone { NIL } else { refs[i] };
                assert_eq!(
                    map.get(k, &set.flows),
                    want,
                    "{homes:?} without {gone}: key {i}"
                );
            }
        }
    }

    /// Port use kept from the start and port use begun over a full table
    /// count the same entries, and only those to their own address.
    #[test]
    fn watch_counts_the_entries_already_there() {
        let mut set = FlowSet::new();
        let (a, b) = (0x0100_0001, 0x0100_0002);
        let mut early = Map::default();
        early.watch(a, &set.flows);
        let mut late = Map::default();
        let mut refs = Vec::new();
        for (i, (addr, port)) in [(a, 1000u16), (b, 1001), (a, 1002), (9, 1003), (a, 1000)]
            .into_iter()
            .enumerate()
        {
            let f = set.alloc();
            set.flows[f].e[0].key = FlowId::new(i as u32, 7, addr, port);
            let r = (f as u32) << 1;
            early.set(r, &mut set.flows);
            late.set(r, &mut set.flows);
            refs.push(r);
        }
        late.watch(a, &set.flows);
        late.watch(b, &set.flows);
        late.watch(a, &set.flows); // a second watch of an address changes nothing
        assert_eq!(late.ports.len(), 2);
        for m in [&early, &late] {
            let u = m.ports.iter().find(|u| u.addr == a).unwrap();
            let used: Vec<u16> = (999..1005).filter(|&p| u.in_use(p)).collect();
            assert_eq!(used, [1000, 1002]);
        }
        let ub = late.ports.iter().find(|u| u.addr == b).unwrap();
        assert!(ub.in_use(1001) && !ub.in_use(1000) && !ub.in_use(1002));
        // port 1000 of `a` has two users: in use until both go
        let ua = |m: &Map| m.ports.iter().find(|u| u.addr == a).unwrap().in_use(1000);
        late.remove(refs[0], &mut set.flows);
        assert!(ua(&late));
        late.remove(refs[4], &mut set.flows);
        assert!(!ua(&late));
    }

    #[test]
    fn a_flow_is_80_bytes() {
        assert_eq!(core::mem::size_of::<Flow>(), 80);
    }

    #[test]
    fn first_unused_searches_circularly_across_words() {
        let mut u = PortUse::new(1);
        assert_eq!(u.first_unused(100, 0, 200), Some(100));
        for p in 60..=130 {
            u.add(p);
        }
        // from inside the run to its end, across two word boundaries
        assert_eq!(u.first_unused(61, 0, 200), Some(131));
        // the range ends inside the run: wrap to its start
        assert_eq!(u.first_unused(70, 50, 120), Some(50));
        assert_eq!(u.first_unused(70, 60, 130), None);
        // never past the range's end, though the port after it is free
        assert_eq!(u.first_unused(130, 60, 130), None);
        let mut z = PortUse::new(1);
        (0..=10).for_each(|p| z.add(p));
        assert_eq!(z.first_unused(0, 0, 10), None);
        assert_eq!(z.first_unused(0, 0, 11), Some(11));
        // counts: a port stays in use until its last user goes
        u.add(64);
        u.sub(64);
        assert!(u.in_use(64));
        u.sub(64);
        assert!(!u.in_use(64));
        assert_eq!(u.first_unused(61, 0, 200), Some(64));
        // saturated counts stay in use for good
        for _ in 0..u16::MAX {
            u.add(65535);
        }
        for _ in 0..u16::MAX {
            u.sub(65535);
        }
        assert!(u.in_use(65535));
        assert_eq!(u.first_unused(65535, 65535, 65535), None);
        assert_eq!(u.first_unused(65534, 65534, 65535), Some(65534));
        u.reset();
        assert!(!u.in_use(65535) && !u.in_use(100));
    }
}
