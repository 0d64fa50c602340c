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

use crate::common::iprw::{FlowId, MapArgs, IP_PROTO_ICMP, IP_PROTO_TCP, NIL, RW_ADDMAP, RW_DROP};
use alloc::collections::{BTreeMap, VecDeque};
use alloc::format;
use alloc::string::String;
use alloc::vec;
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
#[derive(Clone, Debug)]
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

/// A port block's use, per protocol (TCP, UDP, ICMP).
#[derive(Clone, Debug)]
struct BlockUse {
    used: [Vec<u64>; 3],
    n: u32,
}

/// A subscriber's paired address and blocks.
#[derive(Clone, Debug)]
struct Subscriber {
    addr_idx: u32,
    /// Global block numbers (`addr_idx * blocks_per_addr + block`).
    blocks: Vec<u32>,
}

/// The CGNAT's state (shared by every rewriter input naming the mapper).
#[derive(Clone, Debug)]
pub struct Cgnat {
    pub cfg: CgnatConfig,
    bindings: Vec<Binding>,
    free: Vec<u32>,
    by_int: BTreeMap<(u8, u32, u16), u32>,
    by_ext: BTreeMap<(u8, u32, u16), u32>,
    subs: BTreeMap<u32, Subscriber>,
    /// Global block number -> its use, for blocks held.
    blocks: BTreeMap<u32, BlockUse>,
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
    /// Log lines not yet written out.
    pub unwritten: Vec<String>,
    /// The latest lines, for the `log` handler.
    pub recent: VecDeque<String>,
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

/// `SECONDS.MILLISECONDS` of a time in milliseconds.
pub fn fmt_ms(ms: i64) -> String {
    format!("{}.{:03}", ms.div_euclid(1000), ms.rem_euclid(1000))
}

impl Cgnat {
    pub fn new(cfg: CgnatConfig) -> Cgnat {
        Cgnat {
            cfg,
            bindings: Vec::new(),
            free: Vec::new(),
            by_int: BTreeMap::new(),
            by_ext: BTreeMap::new(),
            subs: BTreeMap::new(),
            blocks: BTreeMap::new(),
            pending: [NIL, NIL],
            now_hint: 0,
            port_failures: 0,
            pool_failures: 0,
            filtered: 0,
            strangers: 0,
            hairpins: 0,
            created: 0,
            deleted: 0,
            unwritten: Vec::new(),
            recent: VecDeque::new(),
        }
    }

    /// Whether `a` is a subscriber address.
    pub fn is_inside(&self, a: u32) -> bool {
        self.cfg.inside.iter().any(|&(p, m)| a & m == p & m)
    }

    fn in_pool(&self, a: u32) -> bool {
        self.cfg.pool.contains(&a)
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

    fn log(&mut self, line: String) {
        if self.recent.len() == LOG_KEEP {
            self.recent.pop_front();
        }
        self.recent.push_back(line.clone());
        // bounded, should nobody write the lines out
        if self.unwritten.len() < 65536 {
            self.unwritten.push(line);
        }
    }

    fn event(&mut self, what: &str, b: u32, now: i64) {
        let bd = &self.bindings[b as usize];
        let line = format!(
            "{} {} {} subscriber {} internal {}:{} external {}:{}",
            fmt_ms(now),
            what,
            proto_name(bd.proto),
            Ipv4Addr::from(bd.int_addr),
            Ipv4Addr::from(bd.int_addr),
            bd.int_port,
            Ipv4Addr::from(bd.ext_addr),
            bd.ext_port
        );
        self.log(line);
    }

    /// The pool address a subscriber hashes to.
    fn home(&self, sub: u32) -> u32 {
        let mut h = sub.wrapping_mul(0x9E37_79B1);
        h ^= h >> 16;
        h % self.cfg.pool.len().max(1) as u32
    }

    /// A free block of pool address `ai`, taken for `sub`.
    fn take_block(&mut self, ai: u32) -> Option<u32> {
        let per = self.cfg.blocks_per_addr();
        let words = (self.cfg.block as usize).div_ceil(64);
        let g = (ai * per..(ai + 1) * per).find(|g| !self.blocks.contains_key(g))?;
        self.blocks.insert(
            g,
            BlockUse {
                used: [vec![0; words], vec![0; words], vec![0; words]],
                n: 0,
            },
        );
        Some(g)
    }

    /// (address, port) of port `i` of global block `g`.
    fn endpoint(&self, g: u32, i: u32) -> (u32, u16) {
        let per = self.cfg.blocks_per_addr();
        let addr = self.cfg.pool[(g / per) as usize];
        let port = self.cfg.port_lo as u32 + (g % per) * self.cfg.block as u32 + i;
        (addr, port as u16)
    }

    /// The first free port of block `g` for protocol index `pi`.
    fn free_port(&self, g: u32, pi: usize) -> Option<u32> {
        let bu = self.blocks.get(&g)?;
        for (w, &bits) in bu.used[pi].iter().enumerate() {
            if bits != u64::MAX {
                let i = w as u32 * 64 + (!bits).trailing_zeros();
                if i < self.cfg.block as u32 {
                    return Some(i);
                }
            }
        }
        None
    }

    /// The binding of internal endpoint (`proto`, `a`, `p`), made if
    /// needed; `None` (counted) when the subscriber has no port left.
    fn bind(&mut self, proto: u8, a: u32, p: u16) -> Option<u32> {
        if let Some(&b) = self.by_int.get(&(proto, a, p)) {
            return Some(b);
        }
        if self.cfg.pool.is_empty() || self.cfg.blocks_per_addr() == 0 {
            self.pool_failures += 1;
            return None;
        }
        let pi = proto_index(proto);
        let mut sub = match self.subs.get(&a) {
            Some(s) => s.clone(),
            None => {
                // paired pooling: the hashed address, else the next with room
                let n = self.cfg.pool.len() as u32;
                let home = self.home(a);
                let per = self.cfg.blocks_per_addr();
                let Some(ai) = (0..n)
                    .map(|k| (home + k) % n)
                    .find(|&ai| (ai * per..(ai + 1) * per).any(|g| !self.blocks.contains_key(&g)))
                else {
                    self.pool_failures += 1;
                    return None;
                };
                Subscriber {
                    addr_idx: ai,
                    blocks: Vec::new(),
                }
            }
        };
        let mut found = sub
            .blocks
            .iter()
            .find_map(|&g| self.free_port(g, pi).map(|i| (g, i)));
        if found.is_none() {
            if sub.blocks.len() as u32 >= self.cfg.per_subscriber {
                self.port_failures += 1;
                return None;
            }
            let Some(g) = self.take_block(sub.addr_idx) else {
                self.port_failures += 1;
                return None;
            };
            sub.blocks.push(g);
            found = self.free_port(g, pi).map(|i| (g, i));
        }
        let Some((g, i)) = found else {
            self.port_failures += 1;
            return None;
        };
        let (ea, ep) = self.endpoint(g, i);
        if let Some(bu) = self.blocks.get_mut(&g) {
            bu.used[pi][(i / 64) as usize] |= 1 << (i % 64);
            bu.n += 1;
        }
        self.subs.insert(a, sub);
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
        self.by_int.insert((proto, a, p), b);
        self.by_ext.insert((proto, ea, ep), b);
        Some(b)
    }

    /// Deletes binding `b` (no flow holds it), freeing its port, and its
    /// block and subscriber when they hold nothing more.
    fn unbind(&mut self, b: u32, now: i64) {
        let bd = self.bindings[b as usize].clone();
        if bd.logged {
            self.event("delete", b, now);
            self.deleted += 1;
        }
        self.bindings[b as usize].live = false;
        self.free.push(b);
        self.by_int.remove(&(bd.proto, bd.int_addr, bd.int_port));
        self.by_ext.remove(&(bd.proto, bd.ext_addr, bd.ext_port));
        let per = self.cfg.blocks_per_addr();
        let Some(ai) = self.cfg.pool.iter().position(|&x| x == bd.ext_addr) else {
            return;
        };
        let off = bd.ext_port as u32 - self.cfg.port_lo as u32;
        let g = ai as u32 * per + off / self.cfg.block as u32;
        let i = off % self.cfg.block as u32;
        let pi = proto_index(bd.proto);
        let empty = match self.blocks.get_mut(&g) {
            Some(bu) => {
                bu.used[pi][(i / 64) as usize] &= !(1 << (i % 64));
                bu.n = bu.n.saturating_sub(1);
                bu.n == 0
            }
            None => false,
        };
        if empty {
            self.blocks.remove(&g);
            if let Some(s) = self.subs.get_mut(&bd.int_addr) {
                s.blocks.retain(|&x| x != g);
                if s.blocks.is_empty() {
                    self.subs.remove(&bd.int_addr);
                }
            }
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
            let Some(&tb) = self.by_ext.get(&(ma.ip_p, flowid.daddr, flowid.dport)) else {
                self.filtered += 1;
                return (RW_DROP, None);
            };
            let t = self.bindings[tb as usize].clone();
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
        for (&(p, a, port), &b) in &self.by_int {
            let bd = &self.bindings[b as usize];
            s.push_str(&format!(
                "{} {}:{} => {}:{} flows {}\n",
                proto_name(p),
                Ipv4Addr::from(a),
                port,
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
        for (&a, sub) in &self.subs {
            s.push_str(&format!(
                "{} {}",
                Ipv4Addr::from(a),
                Ipv4Addr::from(self.cfg.pool[sub.addr_idx as usize])
            ));
            for &g in &sub.blocks {
                let (_, lo) = self.endpoint(g, 0);
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
        *self = core::mem::replace(old, Cgnat::new(old.cfg.clone()));
        self.cfg = cfg;
        self.unwritten.extend(unwritten);
        true
    }
}
