//! The carrier-grade NAT behind CGNATMapper: what RFC 4787 and RFC 6888
//! ask of a NAT444 and Click's IPRewriter patterns do not give.
//!
//! - **Endpoint-independent mapping** (RFC 4787 REQ-1): a *binding*
//!   `(protocol, internal address, internal port) -> (external address,
//!   external port)` is made by a subscriber's first flow from that
//!   internal endpoint and reused by every later flow from it, whatever
//!   the destination.
//! - **Endpoint-independent filtering** (REQ-8): a packet from any remote
//!   host to a bound external address and port makes a flow back to the
//!   internal endpoint.
//! - **Paired address pooling** (REQ-2): a subscriber (an inside source
//!   address) gets every external port from one pool address: the one its
//!   address hashes to, or the next with a free block when it has none.
//! - **Port blocks** (RFC 6888 REQ-4, RFC 7422): external ports are handed
//!   to subscribers `BLOCK` at a time, at most `PER_SUBSCRIBER_BLOCKS`
//!   blocks each; a binding that finds no free port in its subscriber's
//!   blocks and no block left to take fails and is counted.
//! - **Hairpinning** (REQ-9): an inside host sending to another
//!   subscriber's external address and port reaches it, seen as coming
//!   from its own external address and port.
//! - **Logging** (RFC 6888 REQ-12): one line when a binding is made and
//!   one when its last flow goes, with the time, protocol, subscriber,
//!   internal and external endpoints.
//!
//! A binding lives while flows of the rewriter hold it (each flow holds
//! the bindings its mapping used, and releases them when it expires or is
//! evicted), so the rewriter's timeouts and capacity govern the CGNAT too.

use crate::common::intmap::IntMap;
use crate::common::iprw::{FlowId, MapArgs, IP_PROTO_ICMP, IP_PROTO_TCP, NIL, RW_ADDMAP, RW_DROP};
use alloc::collections::VecDeque;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::net::Ipv4Addr;

/// Lines the `log` handler keeps.
pub const LOG_KEEP: usize = 256;

/// The configuration of a CGNAT.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgnatConfig {
    /// The pool's public addresses.
    pub pool: Vec<u32>,
    /// First external port of the range.
    pub port_lo: u16,
    /// Last external port of the range.
    pub port_hi: u16,
    /// Ports per block.
    pub block: u16,
    /// Blocks a subscriber may hold.
    pub per_subscriber: u32,
    /// The subscribers' prefixes, (address, mask).
    pub inside: Vec<(u32, u32)>,
    /// Output for packets leaving to the outside.
    pub foutput: i32,
    /// Output for packets to the subscribers.
    pub routput: i32,
    pub hairpin: bool,
    /// Endpoint-independent filtering (false: only replies come in).
    pub eif: bool,
}

impl CgnatConfig {
    /// Blocks per pool address.
    pub fn blocks_per_addr(&self) -> u32 {
        (self.port_hi as u32 - self.port_lo as u32 + 1) / self.block as u32
    }
}

/// A binding: one internal endpoint's external endpoint.
#[derive(Clone, Copy, Debug)]
struct Binding {
    proto: u8,
    int_addr: u32,
    int_port: u16,
    ext_addr: u32,
    ext_port: u16,
    /// Flows holding it.
    refs: u32,
    live: bool,
    /// Whether its creation was logged (it was attached to a flow).
    logged: bool,
}

/// A port block a subscriber holds, and its use per protocol (TCP, UDP,
/// ICMP): `words` bits each, one after the other.
#[derive(Clone, Debug)]
struct Block {
    /// Global block number (`addr_idx * blocks_per_addr + block`).
    g: u32,
    used: Vec<u64>,
    n: u32,
}

/// A subscriber's paired address and blocks, in the order taken.
#[derive(Clone, Debug, Default)]
struct Subscriber {
    addr_idx: u32,
    blocks: Vec<Block>,
}

/// The blocks of one pool address held by subscribers.
#[derive(Clone, Debug, Default)]
struct AddrBlocks {
    held: u32,
    /// One bit per block (allocated with the first).
    bits: Vec<u64>,
}

/// A binding table's key: protocol, address, port.
#[inline]
fn key(proto: u8, a: u32, p: u16) -> u64 {
    ((proto as u64) << 48) | ((a as u64) << 16) | p as u64
}

/// The CGNAT's state (shared by every rewriter input naming the mapper).
#[derive(Clone, Debug)]
pub struct Cgnat {
    pub cfg: CgnatConfig,
    bindings: Vec<Binding>,
    free: Vec<u32>,
    by_int: IntMap<u32>,
    by_ext: IntMap<u32>,
    subs: IntMap<Subscriber>,
    /// Per pool address: the blocks held.
    addrs: Vec<AddrBlocks>,
    /// Pool address -> its first index in the pool.
    pool_index: IntMap<u32>,
    /// The bindings the last successful `map` used, until `attach`.
    pending: [u32; 2],
    /// The time of the last `map` (ms), for the creation log.
    now_hint: i64,
    /// Bindings that could not be made: the subscriber's blocks are full
    /// and it holds PER_SUBSCRIBER_BLOCKS, or its pool address has no
    /// free block.
    pub port_failures: u64,
    /// Subscribers refused a first block: the pool is out of blocks.
    pub pool_failures: u64,
    /// Packets to the pool that no binding takes (or with filtering
    /// off, any unsolicited packet from the outside).
    pub filtered: u64,
    /// New flows from neither a subscriber nor to the pool.
    pub strangers: u64,
    /// Hairpinned flows made.
    pub hairpins: u64,
    /// Bindings made and deleted.
    pub created: u64,
    pub deleted: u64,
    /// Log lines not yet written out, each ended by a newline (one buffer,
    /// not a `String` a line: a line is logged per binding made).
    pub unwritten: String,
    /// How many lines `unwritten` holds.
    pub unwritten_lines: usize,
    /// The latest lines, for the `log` handler.
    pub recent: VecDeque<String>,
    /// The seconds of the latest line's time and their decimal digits
    /// (a line's ten digits of seconds cost more than the rest of it).
    stamp: Option<(u64, LineBuf)>,
}

fn proto_index(p: u8) -> usize {
    match p {
        IP_PROTO_TCP => 0,
        IP_PROTO_ICMP => 2,
        _ => 1,
    }
}

fn proto_name(p: u8) -> String {
    match p {
        IP_PROTO_TCP => "tcp".into(),
        17 => "udp".into(),
        IP_PROTO_ICMP => "icmp".into(),
        33 => "dccp".into(),
        p => format!("{p}"),
    }
}

/// Each octet's decimal digits, left-aligned, after their count.
const OCTETS: [[u8; 4]; 256] = {
    let mut t = [[0u8; 4]; 256];
    let mut i = 0;
    while i < 256 {
        let o = i as u8;
        t[i] = if o >= 100 {
            [3, b'0' + o / 100, b'0' + o / 10 % 10, b'0' + o % 10]
        } else if o >= 10 {
            [2, b'0' + o / 10, b'0' + o % 10, 0]
        } else {
            [1, b'0' + o, 0, 0]
        };
        i += 1;
    }
    t
};

/// A log line being built (ASCII; at most 160 bytes: longer is cut).
#[derive(Clone, Debug)]
struct LineBuf {
    b: [u8; 160],
    n: usize,
}

impl Default for LineBuf {
    fn default() -> Self {
        LineBuf { b: [0; 160], n: 0 }
    }
}

impl LineBuf {
    #[inline(always)]
    fn bytes(&mut self, x: &[u8]) {
        if self.n + x.len() <= self.b.len() {
            self.b[self.n..self.n + x.len()].copy_from_slice(x);
            self.n += x.len();
        }
    }
    /// `n` in decimal.
    #[inline]
    fn dec(&mut self, mut n: u64) {
        let mut d = 1;
        let mut t = n;
        while t >= 10 {
            t /= 10;
            d += 1;
        }
        if self.n + d > self.b.len() {
            return;
        }
        let mut i = self.n + d;
        loop {
            i -= 1;
            self.b[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.n += d;
    }
    /// Dotted-quad address `a`, whole or not at all (the octets' digits
    /// from a table: no division a digit).
    #[inline]
    fn ipv4(&mut self, a: u32) {
        let mut t = [0u8; 16];
        let mut k = 0;
        for (j, o) in a.to_be_bytes().into_iter().enumerate() {
            if j > 0 {
                t[k] = b'.';
                k += 1;
            }
            let [len, d0, d1, d2] = OCTETS[o as usize];
            t[k..k + 3].copy_from_slice(&[d0, d1, d2]);
            k += len as usize;
        }
        self.bytes(&t[..k]);
    }
    fn get(&self) -> &[u8] {
        &self.b[..self.n]
    }
}

/// `SECONDS.MILLISECONDS` of a time in milliseconds.
pub fn fmt_ms(ms: i64) -> String {
    format!("{}.{:03}", ms.div_euclid(1000), ms.rem_euclid(1000))
}

impl Cgnat {
    pub fn new(cfg: CgnatConfig) -> Cgnat {
        let mut pool_index = IntMap::new();
        for (i, &a) in cfg.pool.iter().enumerate() {
            if !pool_index.contains_key(a as u64) {
                pool_index.insert(a as u64, i as u32);
            }
        }
        Cgnat {
            addrs: alloc::vec![AddrBlocks::default(); cfg.pool.len()],
            pool_index,
            cfg,
            bindings: Vec::new(),
            free: Vec::new(),
            by_int: IntMap::new(),
            by_ext: IntMap::new(),
            subs: IntMap::new(),
            pending: [NIL, NIL],
            now_hint: 0,
            port_failures: 0,
            pool_failures: 0,
            filtered: 0,
            strangers: 0,
            hairpins: 0,
            created: 0,
            deleted: 0,
            unwritten: String::new(),
            unwritten_lines: 0,
            recent: VecDeque::new(),
            stamp: None,
        }
    }

    /// Whether `a` is a subscriber address.
    pub fn is_inside(&self, a: u32) -> bool {
        self.cfg.inside.iter().any(|&(p, m)| a & m == p & m)
    }

    fn in_pool(&self, a: u32) -> bool {
        self.pool_index.contains_key(a as u64)
    }

    /// Live bindings.
    pub fn len(&self) -> usize {
        self.by_int.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_int.is_empty()
    }

    /// Subscribers holding blocks.
    pub fn subscribers(&self) -> usize {
        self.subs.len()
    }

    fn log(&mut self, line: &str) {
        // the oldest kept line's buffer takes the copy (no allocation once
        // LOG_KEEP lines are kept)
        let mut copy = if self.recent.len() == LOG_KEEP {
            self.recent.pop_front().unwrap_or_default()
        } else {
            String::with_capacity(line.len())
        };
        copy.clear();
        copy.push_str(line);
        self.recent.push_back(copy);
        // bounded, should nobody write the lines out
        if self.unwritten_lines < 65536 {
            self.unwritten.push_str(line);
            self.unwritten.push('\n');
            self.unwritten_lines += 1;
        }
    }

    /// `NOW WHAT PROTO subscriber A internal A:P external A:P`, built
    /// without `core::fmt` (a line per binding made and deleted).
    fn event(&mut self, what: &str, b: u32, now: i64) {
        let bd = self.bindings[b as usize];
        let mut l = LineBuf::default();
        if now >= 0 {
            let sec = (now / 1000) as u64;
            let stamp = match &mut self.stamp {
                Some((s, d)) if *s == sec => d,
                slot => {
                    let mut d = LineBuf::default();
                    d.dec(sec);
                    &mut slot.insert((sec, d)).1
                }
            };
            l.bytes(stamp.get());
            let r = (now % 1000) as u32;
            l.bytes(&[
                b'.',
                b'0' + (r / 100) as u8,
                b'0' + (r / 10 % 10) as u8,
                b'0' + (r % 10) as u8,
            ]);
        } else {
            l.bytes(fmt_ms(now).as_bytes());
        }
        l.bytes(b" ");
        l.bytes(what.as_bytes());
        l.bytes(b" ");
        match bd.proto {
            IP_PROTO_TCP => l.bytes(b"tcp"),
            17 => l.bytes(b"udp"),
            IP_PROTO_ICMP => l.bytes(b"icmp"),
            33 => l.bytes(b"dccp"),
            p => l.dec(p as u64),
        }
        l.bytes(b" subscriber ");
        l.ipv4(bd.int_addr);
        l.bytes(b" internal ");
        l.ipv4(bd.int_addr);
        l.bytes(b":");
        l.dec(bd.int_port as u64);
        l.bytes(b" external ");
        l.ipv4(bd.ext_addr);
        l.bytes(b":");
        l.dec(bd.ext_port as u64);
        let line = core::str::from_utf8(l.get()).unwrap_or_default();
        self.log(line);
    }

    /// The pool address a subscriber hashes to.
    fn home(&self, sub: u32) -> u32 {
        let mut h = sub.wrapping_mul(0x9E37_79B1);
        h ^= h >> 16;
        h % self.cfg.pool.len().max(1) as u32
    }

    /// Whether pool address `ai` has a free block.
    fn has_free_block(&self, ai: u32) -> bool {
        self.addrs[ai as usize].held < self.cfg.blocks_per_addr()
    }

    /// The lowest free block of pool address `ai`, taken: its global
    /// number and use.
    fn take_block(&mut self, ai: u32) -> Option<Block> {
        let per = self.cfg.blocks_per_addr();
        let ab = &mut self.addrs[ai as usize];
        if ab.held >= per {
            return None;
        }
        if ab.bits.is_empty() {
            ab.bits = alloc::vec![0; (per as usize).div_ceil(64)];
        }
        let (w, bits) = ab.bits.iter().enumerate().find(|(_, &b)| b != u64::MAX)?;
        let b = w as u32 * 64 + (!bits).trailing_zeros();
        if b >= per {
            return None;
        }
        ab.bits[w] |= 1 << (b % 64);
        ab.held += 1;
        let words = (self.cfg.block as usize).div_ceil(64);
        Some(Block {
            g: ai * per + b,
            used: alloc::vec![0; 3 * words],
            n: 0,
        })
    }

    /// Returns global block `g` to its pool address.
    fn return_block(&mut self, g: u32) {
        let per = self.cfg.blocks_per_addr();
        let (ai, b) = ((g / per) as usize, g % per);
        if let Some(ab) = self.addrs.get_mut(ai) {
            if let Some(w) = ab.bits.get_mut((b / 64) as usize) {
                *w &= !(1 << (b % 64));
                ab.held -= 1;
            }
        }
    }

    /// (address, port) of port `i` of global block `g`.
    fn endpoint(&self, g: u32, i: u32) -> (u32, u16) {
        let per = self.cfg.blocks_per_addr();
        let addr = self.cfg.pool[(g / per) as usize];
        let port = self.cfg.port_lo as u32 + (g % per) * self.cfg.block as u32 + i;
        (addr, port as u16)
    }

    /// The first free port of block `bl` for protocol index `pi`, marked
    /// used.
    fn take_port(bl: &mut Block, pi: usize, block: u32) -> Option<u32> {
        let words = block.div_ceil(64) as usize;
        let used = &mut bl.used[pi * words..(pi + 1) * words];
        for (w, bits) in used.iter_mut().enumerate() {
            if *bits != u64::MAX {
                let i = w as u32 * 64 + (!*bits).trailing_zeros();
                if i < block {
                    *bits |= 1 << (i % 64);
                    bl.n += 1;
                    return Some(i);
                }
            }
        }
        None
    }

    /// The binding of internal endpoint (`proto`, `a`, `p`), made if
    /// needed; `None` (counted) when the subscriber has no port left.
    fn bind(&mut self, proto: u8, a: u32, p: u16) -> Option<u32> {
        let k = key(proto, a, p);
        if let Some(&b) = self.by_int.get(k) {
            return Some(b);
        }
        if self.cfg.pool.is_empty() || self.cfg.blocks_per_addr() == 0 {
            self.pool_failures += 1;
            return None;
        }
        let pi = proto_index(proto);
        let block = self.cfg.block as u32;
        if !self.subs.contains_key(a as u64) {
            // paired pooling: the hashed address, else the next with room
            let n = self.cfg.pool.len() as u32;
            let home = self.home(a);
            let Some(ai) = (0..n)
                .map(|k| (home + k) % n)
                .find(|&ai| self.has_free_block(ai))
            else {
                self.pool_failures += 1;
                return None;
            };
            // a subscriber is kept only while it holds a block
            if self.cfg.per_subscriber == 0 {
                self.port_failures += 1;
                return None;
            }
            let Some(mut bl) = self.take_block(ai) else {
                self.port_failures += 1;
                return None;
            };
            let Some(i) = Self::take_port(&mut bl, pi, block) else {
                self.return_block(bl.g);
                self.port_failures += 1;
                return None;
            };
            let g = bl.g;
            self.subs.insert(
                a as u64,
                Subscriber {
                    addr_idx: ai,
                    blocks: alloc::vec![bl],
                },
            );
            return Some(self.new_binding(proto, a, p, g, i));
        }
        let sub = self.subs.get_mut(a as u64)?;
        let mut found = sub
            .blocks
            .iter_mut()
            .find_map(|bl| Self::take_port(bl, pi, block).map(|i| (bl.g, i)));
        if found.is_none() {
            if sub.blocks.len() as u32 >= self.cfg.per_subscriber {
                self.port_failures += 1;
                return None;
            }
            let ai = sub.addr_idx;
            let Some(mut bl) = self.take_block(ai) else {
                self.port_failures += 1;
                return None;
            };
            found = Self::take_port(&mut bl, pi, block).map(|i| (bl.g, i));
            if let Some(sub) = self.subs.get_mut(a as u64) {
                sub.blocks.push(bl);
            }
        }
        let (g, i) = found?;
        Some(self.new_binding(proto, a, p, g, i))
    }

    /// Stores a new binding of (`proto`, `a`, `p`) to port `i` of block
    /// `g` (already marked used).
    fn new_binding(&mut self, proto: u8, a: u32, p: u16, g: u32, i: u32) -> u32 {
        let (ea, ep) = self.endpoint(g, i);
        let bd = Binding {
            proto,
            int_addr: a,
            int_port: p,
            ext_addr: ea,
            ext_port: ep,
            refs: 0,
            live: true,
            logged: false,
        };
        let b = match self.free.pop() {
            Some(b) => {
                self.bindings[b as usize] = bd;
                b
            }
            None => {
                self.bindings.push(bd);
                (self.bindings.len() - 1) as u32
            }
        };
        self.by_int.insert(key(proto, a, p), b);
        self.by_ext.insert(key(proto, ea, ep), b);
        b
    }

    /// Deletes binding `b` (no flow holds it), freeing its port, and its
    /// block and subscriber when they hold nothing more.
    fn unbind(&mut self, b: u32, now: i64) {
        let bd = self.bindings[b as usize];
        if bd.logged {
            self.event("delete", b, now);
            self.deleted += 1;
        }
        self.bindings[b as usize].live = false;
        self.free.push(b);
        self.by_int.remove(key(bd.proto, bd.int_addr, bd.int_port));
        self.by_ext.remove(key(bd.proto, bd.ext_addr, bd.ext_port));
        let per = self.cfg.blocks_per_addr();
        let Some(&ai) = self.pool_index.get(bd.ext_addr as u64) else {
            return;
        };
        let off = bd.ext_port as u32 - self.cfg.port_lo as u32;
        let g = ai * per + off / self.cfg.block as u32;
        let i = off % self.cfg.block as u32;
        let pi = proto_index(bd.proto);
        let words = (self.cfg.block as usize).div_ceil(64);
        let Some(sub) = self.subs.get_mut(bd.int_addr as u64) else {
            return;
        };
        let Some(k) = sub.blocks.iter().position(|bl| bl.g == g) else {
            return;
        };
        let bl = &mut sub.blocks[k];
        bl.used[pi * words + (i / 64) as usize] &= !(1 << (i % 64));
        bl.n = bl.n.saturating_sub(1);
        if bl.n == 0 {
            sub.blocks.remove(k);
            let gone = sub.blocks.is_empty();
            if gone {
                self.subs.remove(bd.int_addr as u64);
            }
            self.return_block(g);
        }
    }

    /// Bindings made by a `map` whose flow was never stored.
    fn drop_pending(&mut self, now: i64) {
        for b in core::mem::replace(&mut self.pending, [NIL, NIL]) {
            if b != NIL && self.bindings[b as usize].live && self.bindings[b as usize].refs == 0 {
                self.unbind(b, now);
            }
        }
    }

    /// Chooses the mapping of new flow `flowid` (the mapper's
    /// `rewrite_flowid`): the result and the flow's outputs.
    pub fn map(
        &mut self,
        flowid: &FlowId,
        out: &mut FlowId,
        ma: MapArgs,
    ) -> (i32, Option<(i32, i32)>) {
        self.drop_pending(ma.now);
        self.now_hint = ma.now;
        let (fo, ro) = (self.cfg.foutput, self.cfg.routput);
        let inside = self.is_inside(flowid.saddr);
        if self.in_pool(flowid.daddr) {
            let Some(&tb) = self.by_ext.get(key(ma.ip_p, flowid.daddr, flowid.dport)) else {
                self.filtered += 1;
                return (RW_DROP, None);
            };
            let t = self.bindings[tb as usize];
            if inside {
                if !self.cfg.hairpin || ma.ip_p == IP_PROTO_ICMP {
                    self.filtered += 1;
                    return (RW_DROP, None);
                }
                let Some(sb) = self.bind(ma.ip_p, flowid.saddr, flowid.sport) else {
                    return (RW_DROP, None);
                };
                let s = &self.bindings[sb as usize];
                *out = FlowId::new(s.ext_addr, s.ext_port, t.int_addr, t.int_port);
                self.pending = [sb, tb];
                self.hairpins += 1;
                return (RW_ADDMAP, Some((ro, ro)));
            }
            if !self.cfg.eif || ma.ip_p == IP_PROTO_ICMP {
                self.filtered += 1;
                return (RW_DROP, None);
            }
            *out = FlowId::new(flowid.saddr, flowid.sport, t.int_addr, t.int_port);
            self.pending = [tb, NIL];
            return (RW_ADDMAP, Some((ro, fo)));
        }
        if !inside {
            self.strangers += 1;
            return (RW_DROP, None);
        }
        let Some(b) = self.bind(ma.ip_p, flowid.saddr, flowid.sport) else {
            return (RW_DROP, None);
        };
        let s = &self.bindings[b as usize];
        *out = FlowId::new(s.ext_addr, s.ext_port, flowid.daddr, flowid.dport);
        self.pending = [b, NIL];
        (RW_ADDMAP, Some((fo, ro)))
    }

    /// The flow of the last `map` was stored: it holds these bindings.
    pub fn attach(&mut self) -> [u32; 2] {
        let ids = core::mem::replace(&mut self.pending, [NIL, NIL]);
        for b in ids {
            if b == NIL {
                continue;
            }
            let bd = &mut self.bindings[b as usize];
            bd.refs += 1;
            if !bd.logged {
                bd.logged = true;
                self.created += 1;
                self.event("create", b, self.now_hint);
            }
        }
        ids
    }

    /// A flow holding `ids` is gone.
    pub fn release(&mut self, ids: [u32; 2], now: i64) {
        for b in ids {
            let Some(bd) = self.bindings.get_mut(b as usize) else {
                continue;
            };
            if !bd.live || bd.refs == 0 {
                continue;
            }
            bd.refs -= 1;
            if bd.refs == 0 {
                self.unbind(b, now);
            }
        }
    }

    /// The `mappings` handler: one line per binding, by protocol and
    /// internal endpoint: `PROTO INTERNAL => EXTERNAL flows N`.
    pub fn table(&self) -> String {
        let mut s = String::new();
        for (_, &b) in self.by_int.sorted() {
            let bd = &self.bindings[b as usize];
            s.push_str(&format!(
                "{} {}:{} => {}:{} flows {}\n",
                proto_name(bd.proto),
                Ipv4Addr::from(bd.int_addr),
                bd.int_port,
                Ipv4Addr::from(bd.ext_addr),
                bd.ext_port,
                bd.refs
            ));
        }
        s
    }

    /// The `subscribers` handler: `SUBSCRIBER ADDRESS PORTS-RANGES...`.
    pub fn subscriber_table(&self) -> String {
        let mut s = String::new();
        for (a, sub) in self.subs.sorted() {
            s.push_str(&format!(
                "{} {}",
                Ipv4Addr::from(a as u32),
                Ipv4Addr::from(self.cfg.pool[sub.addr_idx as usize])
            ));
            for bl in &sub.blocks {
                let (_, lo) = self.endpoint(bl.g, 0);
                s.push_str(&format!(
                    " {}-{}",
                    lo,
                    lo as u32 + self.cfg.block as u32 - 1
                ));
            }
            s.push('\n');
        }
        s
    }

    /// Takes `old`'s bindings, blocks and counters (a hot swap), when the
    /// pool geometry is the same.
    pub fn take(&mut self, old: &mut Cgnat) -> bool {
        if old.cfg.pool != self.cfg.pool
            || old.cfg.port_lo != self.cfg.port_lo
            || old.cfg.port_hi != self.cfg.port_hi
            || old.cfg.block != self.cfg.block
        {
            return false;
        }
        let cfg = self.cfg.clone();
        let unwritten = core::mem::take(&mut self.unwritten);
        let lines = self.unwritten_lines;
        *self = core::mem::replace(old, Cgnat::new(old.cfg.clone()));
        self.cfg = cfg;
        self.unwritten.push_str(&unwritten);
        self.unwritten_lines += lines;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cgnat() -> Cgnat {
        Cgnat::new(CgnatConfig {
            pool: alloc::vec![0xC633_6401, 0xC633_6402],
            port_lo: 1024,
            port_hi: 65535,
            block: 4,
            per_subscriber: 2,
            inside: alloc::vec![(0x0A00_0000, 0xFF00_0000)],
            foutput: 0,
            routput: 1,
            hairpin: true,
            eif: true,
        })
    }

    #[test]
    fn log_lines_as_format_makes_them() {
        let mut c = cgnat();
        for (i, now) in [0i64, 7, 999, 1000, 1_234_567, 1_700_000_000_123, -1, -1500]
            .into_iter()
            .enumerate()
        {
            let proto = [6u8, 17, 1, 33, 47][i % 5];
            let b = c
                .bind(proto, 0x0A00_0002 + i as u32, 40000 + i as u16)
                .unwrap();
            c.event("create", b, now);
            let bd = c.bindings[b as usize];
            let want = format!(
                "{} create {} subscriber {} internal {}:{} external {}:{}",
                fmt_ms(now),
                proto_name(proto),
                Ipv4Addr::from(bd.int_addr),
                Ipv4Addr::from(bd.int_addr),
                bd.int_port,
                Ipv4Addr::from(bd.ext_addr),
                bd.ext_port
            );
            assert_eq!(c.recent.back(), Some(&want));
            assert_eq!(c.unwritten.lines().last(), Some(want.as_str()));
            assert_eq!(c.unwritten.lines().count(), c.unwritten_lines);
        }
    }

    #[test]
    fn blocks_lowest_first_and_returned() {
        let mut c = cgnat();
        // one subscriber: two blocks of 4 ports, per protocol
        let a = 0x0A00_0009;
        let ai = c.home(a);
        let b: Vec<u32> = (0..8).map(|p| c.bind(17, a, 100 + p).unwrap()).collect();
        let ports: Vec<u16> = b.iter().map(|&x| c.bindings[x as usize].ext_port).collect();
        assert_eq!(ports, [1024, 1025, 1026, 1027, 1028, 1029, 1030, 1031]);
        assert!(b
            .iter()
            .all(|&x| c.bindings[x as usize].ext_addr == c.cfg.pool[ai as usize]));
        assert_eq!(c.bind(17, a, 200), None);
        assert_eq!(c.port_failures, 1);
        // TCP has its own ports in the same blocks
        let t = c.bind(6, a, 100).unwrap();
        assert_eq!(c.bindings[t as usize].ext_port, 1024);
        assert_eq!(c.subscriber_table().lines().count(), 1);
        // another subscriber on the same address gets the next block
        let a2 = (0..1000)
            .map(|k| 0x0A00_0100 + k)
            .find(|&x| c.home(x) == ai)
            .unwrap();
        let o = c.bind(17, a2, 5).unwrap();
        assert_eq!(c.bindings[o as usize].ext_port, 1032);
        // emptying the first block returns it; the next take reuses it
        for &x in &b[..4] {
            c.unbind(x, 0);
        }
        c.unbind(t, 0);
        let a3 = (a2 + 1..a2 + 1000).find(|&x| c.home(x) == ai).unwrap();
        let n = c.bind(17, a3, 5).unwrap();
        assert_eq!(c.bindings[n as usize].ext_port, 1024);
        assert_eq!(c.len(), 6);
        assert_eq!(c.subscribers(), 3);
        let table = c.table();
        let mut sorted: Vec<&str> = table.lines().collect();
        sorted.sort_by_key(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let (ad, p) = w[1].split_once(':').unwrap();
            (
                w[0] == "udp",
                ad.parse::<Ipv4Addr>().unwrap(),
                p.parse::<u16>().unwrap(),
            )
        });
        assert_eq!(table.lines().collect::<Vec<_>>(), sorted);
    }
}
