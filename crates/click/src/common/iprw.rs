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
use crate::common::rng::Rng;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use click_lang::ArgContext;
use click_wire::checksum_delta;
use core::cell::{Cell, RefCell};
use core::fmt;
use core::net::Ipv4Addr;

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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowId {
    pub saddr: u32,
    pub sport: u16,
    pub daddr: u32,
    pub dport: u16,
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
    fn hash(&self) -> u32 {
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

/// One rewriting pattern (Click's IPRewriterPattern). Shared (through an
/// `Rc`) by every input that names it, so sequential allocation continues
/// where the last user stopped, as in Click.
#[derive(Debug)]
pub struct Pattern {
    pub saddr: u32,
    pub sport: u16,
    pub daddr: u32,
    pub dport: u16,
    pub variation_top: u32,
    next_variation: Cell<u32>,
    pub is_napt: bool,
    pub sequential: bool,
    pub same_first: bool,
}

/// A pattern as written in an INPUTSPEC: literal, or the name of one an
/// IPRewriterPatterns element defines (resolved at initialization).
#[derive(Clone, Debug)]
pub enum PatRef {
    Literal(Rc<Pattern>),
    Named(String),
}

impl PatRef {
    pub fn get(&self) -> Option<&Rc<Pattern>> {
        match self {
            PatRef::Literal(p) => Some(p),
            PatRef::Named(_) => None,
        }
    }
}

fn parse_int(s: &str) -> Option<i64> {
    click_lang::args::parse_i64(s).ok()
}

/// Strips Click's `#` (sequential) and `?` (random) suffixes, setting the
/// flags as Click does (both clear "same first").
fn strip_suffix<'s>(s: &'s str, sequential: &mut bool, same_first: &mut bool) -> &'s str {
    if let Some(r) = s.strip_suffix('#') {
        *sequential = true;
        *same_first = false;
        r
    } else if let Some(r) = s.strip_suffix('?') {
        *same_first = false;
        r
    } else {
        s
    }
}

fn ip_address_variation(
    s: &str,
    ac: &ArgContext,
    sequential: &mut bool,
    same_first: &mut bool,
) -> Option<(u32, u32)> {
    let body = strip_suffix(s, sequential, same_first);
    if let Some((a, b)) = body.split_once('-') {
        let a = u32::from(ac.ip(a).ok()?);
        let b = u32::from(ac.ip(b).ok()?);
        return (b >= a).then(|| (a, b - a));
    }
    let (addr, mask) = ac.prefix(body, true).ok()?;
    let (addr, mask) = (u32::from(addr), u32::from(mask));
    if addr == 0 || mask == 0 || mask.leading_ones() + mask.trailing_zeros() != 32 {
        return None;
    }
    Some(if mask == 0xFFFF_FFFF {
        (addr, 0)
    } else if mask == 0xFFFF_FFFE {
        (addr & mask, 1)
    } else {
        // don't count PREFIX.0 and PREFIX.255
        ((addr & mask) | 1, (!mask).wrapping_sub(2))
    })
}

fn port_variation(s: &str, sequential: &mut bool, same_first: &mut bool) -> Option<(u16, u32)> {
    let body = strip_suffix(s, sequential, same_first);
    let (a, b) = body.split_once('-')?;
    let (a, b) = (parse_int(a)?, parse_int(b)?);
    (a >= 0 && b >= a && b < 65536).then_some((a as u16, (b - a) as u32))
}

impl Pattern {
    /// Parses `SADDR [SPORT] DADDR [DPORT]` (1 to 4 words; one word names a
    /// pattern of IPRewriterPatterns). Errors are Click's messages.
    pub fn parse(words: &[&str], ac: &ArgContext) -> Result<PatRef, String> {
        if words.is_empty() || words.len() > 4 {
            return Err("syntax error".into());
        }
        if words.len() == 1 {
            return Ok(PatRef::Named(words[0].to_string()));
        }
        let (mut saddr, mut sport, mut daddr, mut dport, mut variation) =
            (0u32, 0u16, 0u32, 0u16, 0u32);
        let (mut sequential, mut same_first) = (false, true);
        let w0 = words[0];
        if w0 != "-" {
            if let Ok(a) = ac.ip(w0) {
                saddr = u32::from(a);
            } else if let Some((a, v)) =
                ip_address_variation(w0, ac, &mut sequential, &mut same_first)
            {
                saddr = a;
                variation = v;
            } else {
                return Err("bad source address".into());
            }
        }
        let mut i = 0;
        if words.len() >= 3 {
            i = if words.len() == 3 { 2 } else { 1 };
            let w = words[i];
            if w != "-" {
                match parse_int(w) {
                    Some(p) if p > 0 && p < 65536 => sport = p as u16,
                    _ => match port_variation(w, &mut sequential, &mut same_first) {
                        Some((p, v)) => {
                            sport = p;
                            variation = v;
                        }
                        None => return Err("bad source port".into()),
                    },
                }
            }
            i = if words.len() == 3 { 0 } else { 1 };
        }
        i += 1;
        if words[i] != "-" {
            match ac.ip(words[i]) {
                Ok(a) => daddr = u32::from(a),
                Err(_) => return Err("bad destination address".into()),
            }
        }
        if words.len() == 4 {
            i += 1;
            if words[i] != "-" {
                match parse_int(words[i]) {
                    Some(p) if p > 0 && p < 65536 => dport = p as u16,
                    _ => return Err("bad destination port".into()),
                }
            }
        }
        Ok(PatRef::Literal(Rc::new(Pattern {
            saddr,
            sport,
            daddr,
            dport,
            variation_top: variation,
            next_variation: Cell::new(0),
            is_napt: words.len() >= 3,
            sequential,
            same_first,
        })))
    }

    /// Click's `IPRewriterPattern::rewrite_flowid`: the new flow ID for
    /// `flowid`, choosing a variation (source port, or source address for
    /// Basic NAT) whose reply flow `taken` says is free. `None` when every
    /// variation is taken.
    pub fn rewrite(
        &self,
        flowid: &FlowId,
        taken: &dyn Fn(&FlowId) -> bool,
        rng: &mut Rng,
    ) -> Option<FlowId> {
        let mut r = *flowid;
        if self.saddr != 0 {
            r.saddr = self.saddr;
        }
        if self.sport != 0 {
            r.sport = self.sport;
        }
        if self.daddr != 0 {
            r.daddr = self.daddr;
        }
        if self.dport != 0 {
            r.dport = self.dport;
        }
        let top = self.variation_top;
        if top == 0 {
            return Some(r);
        }
        let mut lookup = r.reverse();
        let base = if self.is_napt {
            self.sport as u32
        } else {
            self.saddr
        };
        // Click prefers the packet's own source port (it computes this
        // offset from the port for Basic NAT too)
        if self.same_first {
            let val = (flowid.sport as u32).wrapping_sub(base);
            if val <= top {
                lookup.dport = flowid.sport;
                if !taken(&lookup) {
                    return Some(self.found(r, lookup, val));
                }
            }
        }
        let mut val = if self.sequential {
            let n = self.next_variation.get();
            if n > top {
                0
            } else {
                n
            }
        } else {
            rng.below(top as u64 + 1) as u32
        };
        let mut count = 0u32;
        loop {
            if self.is_napt {
                lookup.dport = base.wrapping_add(val) as u16;
            } else {
                lookup.daddr = base.wrapping_add(val);
            }
            if !taken(&lookup) {
                return Some(self.found(r, lookup, val));
            }
            if count == top {
                return None;
            }
            count += 1;
            val = if val == top { 0 } else { val + 1 };
        }
    }

    fn found(&self, mut r: FlowId, lookup: FlowId, val: u32) -> FlowId {
        if self.is_napt {
            r.sport = lookup.dport;
        } else {
            r.saddr = lookup.daddr;
        }
        self.next_variation.set(val.wrapping_add(1));
        r
    }

    /// Click's unparsing, as the `patterns` handler shows it.
    pub fn unparse(&self) -> String {
        let mut s = if !self.is_napt && self.variation_top != 0 {
            format!(
                "{}-{}",
                Ipv4Addr::from(self.saddr),
                Ipv4Addr::from(self.saddr.wrapping_add(self.variation_top))
            )
        } else if self.saddr != 0 {
            Ipv4Addr::from(self.saddr).to_string()
        } else {
            "-".to_string()
        };
        if self.is_napt {
            if self.sport == 0 {
                s.push_str(" -");
            } else if self.variation_top != 0 {
                s.push_str(&format!(
                    " {}-{}",
                    self.sport,
                    self.sport as u32 + self.variation_top
                ));
            } else {
                s.push_str(&format!(" {}", self.sport));
            }
        }
        if self.daddr != 0 {
            s.push_str(&format!(" {}", Ipv4Addr::from(self.daddr)));
        } else {
            s.push_str(" -");
        }
        if self.is_napt {
            if self.dport == 0 {
                s.push_str(" -");
            } else {
                s.push_str(&format!(" {}", self.dport));
            }
        }
        s
    }
}

// ---------------------------------------------------------------------
// Input specifications and mappers

/// What an input does with a packet that has no mapping.
#[derive(Clone, Debug)]
pub enum InputKind {
    Drop,
    NoChange,
    Keep,
    Pattern(PatRef),
    /// A mapper element, by name until initialization resolves it.
    Mapper(String, Option<Rc<RefCell<Mapper>>>),
}

/// One INPUTSPEC (Click's IPRewriterInput).
#[derive(Clone, Debug)]
pub struct Input {
    pub kind: InputKind,
    pub foutput: i32,
    pub routput: i32,
    /// Live flows this input created.
    pub count: u32,
    /// Packets this input could not map.
    pub failures: u32,
}

impl Input {
    pub fn new(kind: InputKind) -> Input {
        Input {
            kind,
            foutput: -1,
            routput: -1,
            count: 0,
            failures: 0,
        }
    }

    /// The `patterns` handler's text for this input.
    pub fn unparse(&self) -> String {
        let mut s = match &self.kind {
            InputKind::Drop => "<drop>".to_string(),
            InputKind::NoChange => "<nochange>".to_string(),
            InputKind::Keep => "<keep>".to_string(),
            InputKind::Pattern(PatRef::Literal(p)) => p.unparse(),
            InputKind::Pattern(PatRef::Named(n)) => n.clone(),
            InputKind::Mapper(..) => "<mapper>".to_string(),
        };
        if self.count != 0 {
            s.push_str(&format!(" [{}]", self.count));
        }
        s
    }

    /// Click's `IPRewriterInput::rewrite_flowid`: an output (`pass`),
    /// [`RW_ADDMAP`] with `out` set, or [`RW_DROP`] (counted as a failure
    /// for patterns and mappers). Mappers may change `foutput`/`routput`.
    pub fn rewrite_flowid(
        &mut self,
        flowid: &FlowId,
        out: &mut FlowId,
        taken: &dyn Fn(&FlowId) -> bool,
        rng: &mut Rng,
        ma: MapArgs,
    ) -> i32 {
        let r = match &self.kind {
            InputKind::NoChange => return self.foutput,
            InputKind::Keep => {
                *out = *flowid;
                return RW_ADDMAP;
            }
            InputKind::Drop => return RW_DROP,
            InputKind::Pattern(p) => match p.get().and_then(|p| p.rewrite(flowid, taken, rng)) {
                Some(f) => {
                    *out = f;
                    RW_ADDMAP
                }
                None => RW_DROP,
            },
            InputKind::Mapper(_, m) => match m {
                Some(m) => {
                    let mut m = m.borrow_mut();
                    let (r, ports) = m.rewrite_flowid(flowid, out, taken, rng, ma);
                    if let Some((f, rr)) = ports {
                        self.foutput = f;
                        self.routput = rr;
                    }
                    r
                }
                None => RW_DROP,
            },
        };
        if r == RW_DROP {
            self.failures += 1;
        }
        r
    }
}

/// Splits off the first space-separated word (Click's `cp_word`).
fn first_word(s: &str) -> (&str, &str) {
    let s = s.trim();
    match s.find(|c: char| c.is_ascii_whitespace()) {
        Some(i) => (&s[..i], s[i..].trim()),
        None => (s, ""),
    }
}

/// Parses `FOUTPUT ROUTPUT` (Click's `parse_ports`).
fn parse_ports(words: &[&str]) -> Result<(i32, i32), String> {
    let f = match words {
        [f, _] => parse_int(f),
        _ => None,
    };
    let Some(f) = f.and_then(|f| i32::try_from(f).ok()) else {
        return Err("bad forward port".into());
    };
    match parse_int(words[1]).and_then(|r| i32::try_from(r).ok()) {
        Some(r) => Ok((f, r)),
        None => Err("bad reply port".into()),
    }
}

/// Parses `PATTERN... FOUTPUT ROUTPUT` (Click's `parse_with_ports`).
pub fn parse_pattern_with_ports(s: &str, ac: &ArgContext) -> Result<Input, String> {
    let words: Vec<&str> = s.split_ascii_whitespace().collect();
    if words.len() <= 2 {
        return Err("syntax error".into());
    }
    let n = words.len();
    let pat = Pattern::parse(&words[..n - 2], ac)?;
    let (f, r) = parse_ports(&words[n - 2..])?;
    let mut is = Input::new(InputKind::Pattern(pat));
    is.foutput = f;
    is.routput = r;
    Ok(is)
}

/// Parses one INPUTSPEC (Click's `parse_input_spec`), for an element with
/// `noutputs` outputs. The error is Click's, with its `input spec N: `.
pub fn parse_input_spec(
    line: &str,
    n: usize,
    noutputs: usize,
    ac: &ArgContext,
) -> Result<Input, String> {
    let pre = |m: &str| format!("input spec {n}: {m}");
    let (word, rest) = first_word(line);
    if word.is_empty() {
        return Err(pre("empty argument"));
    }
    let out_ok =
        |f: i32, r: i32| f >= 0 && (f as usize) < noutputs && r >= 0 && (r as usize) < noutputs;
    match word {
        "pass" | "passthrough" | "nochange" => {
            let out = if rest.is_empty() {
                Some(0)
            } else {
                parse_int(rest).and_then(|v| i32::try_from(v).ok())
            };
            let Some(out) = out else {
                return Err(pre("syntax error, expected 'nochange [OUTPUT]'"));
            };
            if out < 0 || out as usize >= noutputs {
                return Err(pre("output port out of range"));
            }
            let mut is = Input::new(InputKind::NoChange);
            is.foutput = out;
            Ok(is)
        }
        "keep" => {
            let words: Vec<&str> = rest.split_ascii_whitespace().collect();
            let (f, r) = parse_ports(&words).map_err(|e| pre(&e))?;
            if !out_ok(f, r) {
                return Err(pre("output port out of range"));
            }
            let mut is = Input::new(InputKind::Keep);
            is.foutput = f;
            is.routput = r;
            Ok(is)
        }
        "drop" | "discard" => {
            if !rest.is_empty() {
                return Err(pre(&format!("syntax error, expected '{word}'")));
            }
            Ok(Input::new(InputKind::Drop))
        }
        "pattern" | "xpattern" => {
            let is = parse_pattern_with_ports(rest, ac).map_err(|e| pre(&e))?;
            if !out_ok(is.foutput, is.routput) {
                return Err(pre("output port out of range"));
            }
            Ok(is)
        }
        _ => {
            let looks_like_name = word
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'/' | b'@'));
            if !rest.is_empty() || !looks_like_name {
                return Err(pre("unknown specification"));
            }
            Ok(Input::new(InputKind::Mapper(word.to_string(), None)))
        }
    }
}

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
    fn rewrite_flowid(
        &mut self,
        flowid: &FlowId,
        out: &mut FlowId,
        taken: &dyn Fn(&FlowId) -> bool,
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

// ---------------------------------------------------------------------
// Flows, tables, heaps

/// One direction of a flow, as a hash-table entry.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub key: FlowId,
    next: u32,
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

/// TCP sequence-number delta transitions (TCPRewriter's, which
/// FTPPortMapper requests): from `trigger` on, add `delta`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SeqDelta {
    pub trigger: u32,
    pub delta: i32,
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
    place: u32,
    pub ip_p: u8,
    pub tflags: u8,
    pub guaranteed: bool,
    pub reply_anno: u8,
    pub member: u16,
    pub input: u16,
    pub mapid: u8,
    live: bool,
    /// Per direction: sequence-number delta transitions, oldest first.
    pub seq: [Vec<SeqDelta>; 2],
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

/// A hash table of entries chained through the flows (Click's
/// HashContainer<IPRewriterEntry>).
#[derive(Clone, Debug, Default)]
pub struct Map {
    buckets: Vec<u32>,
    len: usize,
}

impl Map {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    fn bucket(&self, key: &FlowId) -> usize {
        key.hash() as usize & (self.buckets.len() - 1)
    }
    /// The entry for `key`, or [`NIL`].
    #[inline]
    pub fn get(&self, key: &FlowId, flows: &[Flow]) -> u32 {
        if self.buckets.is_empty() {
            return NIL;
        }
        let mut r = self.buckets[self.bucket(key)];
        while r != NIL {
            let e = &flows[eref_flow(r)].e[eref_dir(r)];
            if e.key == *key {
                return r;
            }
            r = e.next;
        }
        NIL
    }
    fn grow(&mut self, flows: &mut [Flow]) {
        let n = (self.buckets.len() * 2).max(16);
        let old = core::mem::replace(&mut self.buckets, alloc::vec![NIL; n]);
        for mut r in old {
            while r != NIL {
                let next = flows[eref_flow(r)].e[eref_dir(r)].next;
                let b = self.bucket(&flows[eref_flow(r)].e[eref_dir(r)].key);
                flows[eref_flow(r)].e[eref_dir(r)].next = self.buckets[b];
                self.buckets[b] = r;
                r = next;
            }
        }
    }
    /// Inserts entry `r`, replacing (and returning) an entry with the same
    /// key, as Click's `HashContainer::set`.
    fn set(&mut self, r: u32, flows: &mut [Flow]) -> u32 {
        if self.len + 1 > self.buckets.len() * 2 {
            self.grow(flows);
        }
        let key = flows[eref_flow(r)].e[eref_dir(r)].key;
        let b = self.bucket(&key);
        let mut prev = NIL;
        let mut cur = self.buckets[b];
        while cur != NIL {
            let e = flows[eref_flow(cur)].e[eref_dir(cur)];
            if e.key == key {
                flows[eref_flow(r)].e[eref_dir(r)].next = e.next;
                if prev == NIL {
                    self.buckets[b] = r;
                } else {
                    flows[eref_flow(prev)].e[eref_dir(prev)].next = r;
                }
                return cur;
            }
            prev = cur;
            cur = e.next;
        }
        flows[eref_flow(r)].e[eref_dir(r)].next = self.buckets[b];
        self.buckets[b] = r;
        self.len += 1;
        NIL
    }
    /// Removes entry `r` if it is in the table (an entry another flow
    /// replaced is not).
    fn remove(&mut self, r: u32, flows: &mut [Flow]) -> bool {
        if self.buckets.is_empty() {
            return false;
        }
        let b = self.bucket(&flows[eref_flow(r)].e[eref_dir(r)].key);
        let mut prev = NIL;
        let mut cur = self.buckets[b];
        while cur != NIL {
            let next = flows[eref_flow(cur)].e[eref_dir(cur)].next;
            if cur == r {
                if prev == NIL {
                    self.buckets[b] = next;
                } else {
                    flows[eref_flow(prev)].e[eref_dir(prev)].next = next;
                }
                self.len -= 1;
                return true;
            }
            prev = cur;
            cur = next;
        }
        false
    }
    /// Every entry, in table order.
    pub fn entries(&self, flows: &[Flow]) -> Vec<u32> {
        let mut v = Vec::with_capacity(self.len);
        for &b in &self.buckets {
            let mut r = b;
            while r != NIL {
                v.push(r);
                r = flows[eref_flow(r)].e[eref_dir(r)].next;
            }
        }
        v
    }
    fn clear(&mut self) {
        self.buckets.iter_mut().for_each(|b| *b = NIL);
        self.len = 0;
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
        self.flows[a as usize].expiry < self.flows[b as usize].expiry
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

    /// Click's `change_expiry`.
    pub fn change_expiry(&mut self, f: usize, guaranteed: bool, expiry: i64) {
        let cur = self.flows[f].guaranteed as usize;
        let place = self.flows[f].place as usize;
        self.flows[f].expiry = expiry;
        if self.flows[f].guaranteed != guaranteed {
            self.heap_remove(cur, place);
            self.flows[f].guaranteed = guaranteed;
            self.heap_push(guaranteed as usize, f as u32);
        } else {
            self.heap_change(cur, place);
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
        self.flows[f].seq[0].clear();
        self.flows[f].seq[1].clear();
        self.free.push(f as u32);
    }

    /// Moves flows whose guarantee ran out to the best-effort heap.
    fn shift_best_effort(&mut self, now: i64) {
        while let Some(&top) = self.heaps[1].first() {
            let f = top as usize;
            if !self.flows[f].expired(now) {
                break;
            }
            let e = self.best_effort_expiry(f);
            self.change_expiry(f, false, e);
        }
    }

    /// Makes room for new flow `f`: evicts the best-effort flow that
    /// expires first, or `f` itself when every flow is guaranteed
    /// (admission control). Returns whether `f` was the one.
    fn shrink_for_new_flow(&mut self, f: usize, now: i64) -> bool {
        self.shift_best_effort(now);
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
        while let Some(&top) = self.heaps[0].first() {
            if !self.flows[top as usize].expired(now) {
                break;
            }
            self.destroy(top as usize);
        }
        let cap = if clear_all {
            0
        } else {
            self.capacity.max(0) as usize
        };
        while self.size() > cap {
            let h = self.heaps[0].is_empty() as usize;
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
            next: NIL,
        };
        self.flows.push(Flow {
            e: [e, e],
            out: [0, 0],
            ip_delta: 0,
            udp_delta: 0,
            expiry: 0,
            place: 0,
            ip_p: 0,
            tflags: 0,
            guaranteed: false,
            reply_anno: 0,
            member: 0,
            input: 0,
            mapid: 0,
            live: false,
            seq: [Vec::new(), Vec::new()],
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
            fl.e[0] = Entry {
                key: *flowid,
                next: NIL,
            };
            fl.e[1] = Entry {
                key: rewritten.reverse(),
                next: NIL,
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
                if let Some(d) = f.seq[dir].last().filter(|d| d.delta != 0) {
                    let sign = if d.delta > 0 { "+" } else { "" };
                    s.push_str(&format!(" seq {sign}{}", d.delta));
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
