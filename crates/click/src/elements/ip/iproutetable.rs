//! Click's IPRouteTable family: RadixIPLookup, DirectIPLookup,
//! RangeIPLookup, LinearIPLookup and StaticIPLookup. One route store (Click's slot order
//! for the `table` handler) and one multi-bit trie (8-bit strides, prefix
//! expansion) for longest-prefix lookups.

use crate::common::unparse::unparse_with_mask;
use crate::elements::classify::{dispatch, DROP_PORT};
use crate::prelude::*;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::vec;
use click_lang::args::{parse_i64, shift_word, split_args, uncomment};
use click_lang::ArgContext;
use core::fmt::Write as _;
use core::net::Ipv4Addr;

/// One route: `addr/mask [gw] port`. Addresses are host-order `u32`s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub addr: u32,
    pub mask: u32,
    pub gw: u32,
    pub port: i32,
}

fn prefix_mask(len: u32) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - len)
    }
}

impl Route {
    /// Click's `IPRoute::unparse`: `ADDR/MASK GW PORT` (`-` for no
    /// gateway), optionally tab-aligned as in the `table` handler.
    pub fn unparse(&self, tabs: bool) -> String {
        let mut s = unparse_with_mask(self.addr, self.mask);
        let tab = if tabs { '\t' } else { ' ' };
        s.push(tab);
        if tabs && s.len() < 17 {
            s.push('\t');
        }
        let l = s.len();
        if self.gw != 0 {
            let _ = write!(s, "{}", Ipv4Addr::from(self.gw));
        } else {
            s.push('-');
        }
        s.push(tab);
        if tabs && s.len() < l + 9 {
            s.push('\t');
        }
        let _ = write!(s, "{}", self.port);
        s
    }

    /// Click's `IPRoute::match`: same prefix, and same gateway and port
    /// unless this route's port is negative.
    fn matches(&self, r: &Route) -> bool {
        self.addr == r.addr
            && self.mask == r.mask
            && (self.port < 0 || (self.gw == r.gw && self.port == r.port))
    }
}

/// Click's `cp_ip_route`: `ADDR/MASK [GW|-] PORT`; with `remove`, the port
/// may be omitted (it is then -1). Addresses may be AddressInfo names; a
/// name for both an address and a prefix means the address (a host
/// route), as in Click.
pub fn parse_route(s: &str, remove: bool, cx: &ArgContext) -> Option<Route> {
    let mut s = String::from(s);
    let w = shift_word(&mut s);
    let (a, m) = cx.prefix(&w, true).ok()?;
    let mask = u32::from(m);
    let mut r = Route {
        addr: u32::from(a) & mask,
        mask,
        gw: 0,
        port: -1,
    };
    let mut word = shift_word(&mut s);
    if word == "-" {
        word = shift_word(&mut s);
    } else if let Ok(gw) = cx.ip(&word) {
        r.gw = u32::from(gw);
        word = shift_word(&mut s);
    }
    if word.is_empty() && remove {
        // no port
    } else {
        let p = parse_i64(&word).ok()?;
        r.port = i32::try_from(p).ok()?;
    }
    if !shift_word(&mut s).is_empty() {
        return None;
    }
    Some(r)
}

// ---- the lookup trie -------------------------------------------------------

/// A 4-level, 8-bit-stride trie with controlled prefix expansion. Each
/// entry holds the key (route slot + 1, 0 = none) of the longest prefix
/// ending at its level that covers it, and the index of its child node.
#[derive(Clone)]
struct Trie {
    /// (key, child node) per entry; node `n` occupies `n*256 .. n*256+256`.
    ent: Vec<(u32, u32)>,
    /// Prefix length of each entry's key (for updates only).
    plen: Vec<u8>,
    default_key: u32,
}

impl Trie {
    fn new() -> Trie {
        Trie {
            ent: vec![(0, 0); 256],
            plen: vec![0; 256],
            default_key: 0,
        }
    }

    #[inline(always)]
    fn lookup(&self, a: u32) -> u32 {
        let mut best = self.default_key;
        let mut base = 0usize;
        let mut shift = 24u32;
        loop {
            let i = base + ((a >> shift) & 0xff) as usize;
            // SAFETY-free: index always within a node allocated in `ent`.
            let (k, c) = self.ent[i];
            if k != 0 {
                best = k;
            }
            if c == 0 || shift == 0 {
                return best;
            }
            base = c as usize * 256;
            shift -= 8;
        }
    }

    /// The node at `level` on the path of `addr`, creating nodes as needed.
    fn node_for(&mut self, addr: u32, level: u32) -> usize {
        let mut node = 0usize;
        for l in 0..level {
            let i = node * 256 + ((addr >> (24 - 8 * l)) & 0xff) as usize;
            let c = self.ent[i].1;
            node = if c != 0 {
                c as usize
            } else {
                let n = self.ent.len() / 256;
                self.ent.resize(self.ent.len() + 256, (0, 0));
                self.plen.resize(self.plen.len() + 256, 0);
                self.ent[i].1 = n as u32;
                n
            };
        }
        node
    }

    fn range(addr: u32, plen: u32) -> (u32, core::ops::Range<usize>) {
        let level = (plen - 1) / 8;
        let b = (addr >> (24 - 8 * level)) & 0xff;
        let span = 8 * (level + 1) - plen;
        let lo = (b & !((1u32 << span) - 1)) as usize;
        (level, lo..lo + (1usize << span))
    }

    fn insert(&mut self, addr: u32, plen: u32, key: u32) {
        if plen == 0 {
            self.default_key = key;
            return;
        }
        let (level, r) = Self::range(addr, plen);
        let base = self.node_for(addr, level) * 256;
        for e in r {
            if u32::from(self.plen[base + e]) <= plen {
                self.ent[base + e].0 = key;
                self.plen[base + e] = plen as u8;
            }
        }
    }

    /// Removes prefix `addr/plen`; `repl` is the longest shorter prefix in
    /// the same trie level that covers it (key, length), or (0, 0).
    fn remove(&mut self, addr: u32, plen: u32, repl: (u32, u32)) {
        if plen == 0 {
            self.default_key = 0;
            return;
        }
        let (level, r) = Self::range(addr, plen);
        let base = self.node_for(addr, level) * 256;
        for e in r {
            if u32::from(self.plen[base + e]) == plen {
                self.ent[base + e].0 = repl.0;
                self.plen[base + e] = repl.1 as u8;
            }
        }
    }
}

// ---- the route table -------------------------------------------------------

/// Outcome of a table update, as Click's `add_route`/`remove_route`.
#[derive(Debug, PartialEq, Eq)]
pub enum TableError {
    /// A route for the prefix exists (carries it).
    Exists(Route),
    /// No such route.
    NotFound,
}

/// Routes in Click's slot order plus the lookup trie.
#[derive(Clone)]
pub struct Table {
    /// LinearIPLookup semantics (replace in place, reuse the lowest free
    /// slot) rather than RadixIPLookup's (new slot, LIFO free list).
    linear: bool,
    slots: Vec<Option<Route>>,
    free: Vec<usize>,
    exact: BTreeMap<(u32, u32), usize>,
    trie: Trie,
}

impl Table {
    pub fn new(linear: bool) -> Table {
        Table {
            linear,
            slots: Vec::new(),
            free: Vec::new(),
            exact: BTreeMap::new(),
            trie: Trie::new(),
        }
    }

    fn trie_plen(r: &Route) -> u32 {
        r.mask.leading_ones()
    }

    fn trie_insert(&mut self, r: &Route, slot: usize) {
        let pl = Self::trie_plen(r);
        self.trie
            .insert(r.addr & prefix_mask(pl), pl, slot as u32 + 1);
    }

    fn trie_remove(&mut self, r: &Route) {
        let pl = Self::trie_plen(r);
        let addr = r.addr & prefix_mask(pl);
        let mut repl = (0, 0);
        if pl > 0 {
            let floor = ((pl - 1) / 8) * 8;
            let mut l = pl - 1;
            while l > floor {
                let m = prefix_mask(l);
                if let Some(&s) = self.exact.get(&(addr & m, m)) {
                    repl = (s as u32 + 1, l);
                    break;
                }
                l -= 1;
            }
        }
        self.trie.remove(addr, pl, repl);
    }

    /// Adds a route; with `set`, replaces an existing route for the same
    /// prefix (returning it), otherwise fails with `Exists`.
    pub fn add(&mut self, r: Route, set: bool) -> Result<Option<Route>, TableError> {
        let k = (r.addr, r.mask);
        if let Some(&s) = self.exact.get(&k) {
            let old = self.slots[s].expect("live slot");
            if !set {
                return Err(TableError::Exists(old));
            }
            if self.linear {
                self.slots[s] = Some(r);
            } else {
                let ns = self.alloc_slot(r);
                self.slots[s] = None;
                self.free.push(s);
                self.exact.insert(k, ns);
                self.trie_insert(&r, ns);
            }
            return Ok(Some(old));
        }
        let s = self.alloc_slot(r);
        self.exact.insert(k, s);
        self.trie_insert(&r, s);
        Ok(None)
    }

    fn alloc_slot(&mut self, r: Route) -> usize {
        let s = if self.linear {
            self.slots.iter().position(|x| x.is_none())
        } else {
            self.free.pop()
        };
        match s {
            Some(s) => {
                self.slots[s] = Some(r);
                s
            }
            None => {
                self.slots.push(Some(r));
                self.slots.len() - 1
            }
        }
    }

    /// Removes the route matching `r` (Click's `IPRoute::match`).
    pub fn remove(&mut self, r: &Route) -> Result<Route, TableError> {
        let k = (r.addr, r.mask);
        let &s = self.exact.get(&k).ok_or(TableError::NotFound)?;
        let old = self.slots[s].expect("live slot");
        if !r.matches(&old) {
            return Err(TableError::NotFound);
        }
        self.exact.remove(&k);
        self.trie_remove(&old);
        self.slots[s] = None;
        if !self.linear {
            self.free.push(s);
        }
        Ok(old)
    }

    /// Longest-prefix match: the route for `a`.
    #[inline(always)]
    pub fn lookup(&self, a: u32) -> Option<&Route> {
        let k = self.trie.lookup(a);
        if k == 0 {
            return None;
        }
        self.slots.get(k as usize - 1).and_then(|r| r.as_ref())
    }

    /// The `table` handler's text.
    pub fn dump(&self) -> String {
        let mut s = String::new();
        for r in self.slots.iter().flatten() {
            s.push_str(&r.unparse(true));
            s.push('\n');
        }
        s
    }

    pub fn len(&self) -> usize {
        self.exact.len()
    }

    pub fn is_empty(&self) -> bool {
        self.exact.is_empty()
    }
}

// ---- the elements ------------------------------------------------------------

#[derive(Copy, Clone, PartialEq, Eq)]
enum Kind {
    Radix,
    Direct,
    /// Click's RangeIPLookup: a DirectIPLookup table (its route order and
    /// update rules) distilled into sorted address ranges. The trie gives
    /// the same longest-prefix answers, so it serves lookups here too.
    Range,
    Linear,
    Static,
}

/// A routing-table element (RadixIPLookup, DirectIPLookup, RangeIPLookup,
/// LinearIPLookup, StaticIPLookup).
pub struct IpRouteLookup {
    kind: Kind,
    table: Table,
    noutputs: usize,
    complained: u32,
    ports: Vec<u32>,
}

impl IpRouteLookup {
    fn new(kind: Kind) -> IpRouteLookup {
        IpRouteLookup {
            kind,
            table: Table::new(matches!(kind, Kind::Linear | Kind::Static)),
            noutputs: 0,
            complained: 0,
            ports: Vec::new(),
        }
    }

    /// The table (for tests and hosts).
    pub fn table(&self) -> &Table {
        &self.table
    }

    #[inline(always)]
    fn route(&self, p: &mut Packet) -> u32 {
        let a = u32::from_be_bytes(p.anno().get::<4>(0));
        match self.table.lookup(a) {
            Some(r) => {
                if r.gw != 0 {
                    p.anno_mut().set_dst_ip(Ipv4Addr::from(r.gw));
                }
                r.port as u32
            }
            None => DROP_PORT,
        }
    }

    #[cold]
    fn no_route(&mut self, p: &Packet, cx: &Ctx) {
        if self.kind == Kind::Range {
            // RangeIPLookup drops unroutable packets silently.
            return;
        }
        self.complained += 1;
        if self.complained <= 5 {
            let who = if matches!(self.kind, Kind::Linear | Kind::Static) {
                "LinearIPLookup"
            } else {
                "IPRouteTable"
            };
            cx.error_line(&format!("{}: no route for {}", who, p.anno().dst_ip()));
        }
    }

    fn run_command(
        &mut self,
        cmd: Cmd,
        s: &str,
        undo: Option<&mut Vec<(Cmd, Route)>>,
        cx: &ArgContext,
    ) -> Result<(), String> {
        let remove = cmd == Cmd::Remove;
        let r = match parse_route(s, remove, cx) {
            Some(r) => r,
            None => {
                return Err(if remove {
                    "expected 'ADDR/MASK [GATEWAY OUTPUT]'".into()
                } else {
                    "expected 'ADDR/MASK [GATEWAY] OUTPUT'".into()
                })
            }
        };
        if r.port < if remove { -1 } else { 0 } || r.port as i64 >= self.noutputs as i64 {
            return Err("bad OUTPUT".into());
        }
        let res = match cmd {
            Cmd::Add | Cmd::Set => self.table.add(r, cmd == Cmd::Set).map(|old| match old {
                Some(o) => (Cmd::Set, o),
                None => (Cmd::Add, r),
            }),
            Cmd::Remove => self.table.remove(&r).map(|o| (Cmd::Remove, o)),
        };
        match res {
            Ok(u) => {
                if let Some(v) = undo {
                    v.push(u);
                }
                Ok(())
            }
            Err(TableError::Exists(old)) => Err(format!(
                "conflict with existing route '{}'",
                old.unparse(false)
            )),
            Err(TableError::NotFound) => Err(format!("route '{}' not found", r.unparse(false))),
        }
    }

    fn ctrl(&mut self, text: &str, cx: &ArgContext) -> Result<(), String> {
        let text = uncomment(text);
        let mut undo: Vec<(Cmd, Route)> = Vec::new();
        let mut result = Ok(());
        for line in text.split('\n') {
            let mut line = String::from(line);
            let first = shift_word(&mut line);
            let cmd = match first.as_str() {
                "add" => Cmd::Add,
                "remove" => Cmd::Remove,
                "set" => Cmd::Set,
                "" => continue,
                w => {
                    result = Err(format!("bad command '{}'", w));
                    break;
                }
            };
            if let Err(e) = self.run_command(cmd, &line, Some(&mut undo), cx) {
                result = Err(e);
                break;
            }
        }
        if result.is_err() {
            while let Some((c, r)) = undo.pop() {
                match c {
                    Cmd::Remove => {
                        let _ = self.table.add(r, false);
                    }
                    Cmd::Add => {
                        let _ = self.table.remove(&r);
                    }
                    Cmd::Set => {
                        let _ = self.table.add(r, true);
                    }
                }
            }
        }
        result
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Cmd {
    Add,
    Set,
    Remove,
}

impl Element for IpRouteLookup {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut table = Table::new(self.table.linear);
        let mut errs: Vec<String> = Vec::new();
        let ac = cx.arg_context();
        for (i, a) in split_args(config).iter().enumerate() {
            match parse_route(a, false, &ac) {
                None => errs.push(format!(
                    "argument {} should be 'ADDR/MASK [GATEWAY] OUTPUT'",
                    i + 1
                )),
                Some(r) if r.port < 0 || r.port as i64 >= cx.noutputs as i64 => {
                    errs.push(format!("argument {} bad OUTPUT", i + 1))
                }
                Some(r) => {
                    // Click keeps the first route for a duplicated prefix
                    // (and warns that it was "replaced by later versions").
                    let _ = table.add(r, false);
                }
            }
        }
        if !errs.is_empty() {
            return Err(errs.join("\n"));
        }
        self.table = table;
        self.noutputs = cx.noutputs;
        Ok(())
    }

    #[inline]
    fn push(&mut self, _port: usize, mut p: Packet, cx: &Ctx) {
        let o = self.route(&mut p);
        if o == DROP_PORT {
            self.no_route(&p, cx);
        } else {
            cx.push(o as usize, p);
        }
    }

    #[inline]
    fn push_batch(&mut self, _port: usize, mut batch: Batch, cx: &Ctx) {
        let mut ports = core::mem::take(&mut self.ports);
        ports.clear();
        let mut missing = false;
        for p in batch.iter_mut() {
            let o = self.route(p);
            missing |= o == DROP_PORT;
            ports.push(o);
        }
        if missing {
            for (p, &o) in batch.iter().zip(ports.iter()) {
                if o == DROP_PORT {
                    self.no_route(p, cx);
                }
            }
        }
        dispatch(batch, &ports, cx);
        self.ports = ports;
    }

    fn read_handler(&mut self, name: &str, cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "table" => Some(Ok(self.table.dump())),
            "lookup" => Some(self.lookup_handler("", &cx.arg_context())),
            _ => None,
        }
    }

    fn read_handler_param(
        &mut self,
        name: &str,
        param: &str,
        cx: &Ctx,
    ) -> Option<HandlerResult<String>> {
        match name {
            "lookup" => Some(self.lookup_handler(param, &cx.arg_context())),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        if self.kind == Kind::Static {
            return None;
        }
        let v = value.trim();
        let ac = cx.arg_context();
        Some(match name {
            "add" => self.run_command(Cmd::Add, v, None, &ac),
            "set" => self.run_command(Cmd::Set, v, None, &ac),
            "remove" => self.run_command(Cmd::Remove, v, None, &ac),
            "ctrl" => self.ctrl(value, &ac),
            "flush" if self.kind == Kind::Range => {
                self.table = Table::new(self.table.linear);
                Ok(())
            }
            _ => return None,
        })
    }

    crate::element_any!();
}

impl IpRouteLookup {
    /// The `lookup` handler: `PORT [GW]` for an address (`-1` if none).
    pub fn lookup_handler(&self, arg: &str, cx: &ArgContext) -> HandlerResult<String> {
        let a = cx
            .ip(arg.trim())
            .map_err(|_| String::from("expected IP address"))?;
        Ok(match self.table.lookup(u32::from(a)) {
            Some(r) if r.gw != 0 => format!("{} {}", r.port, Ipv4Addr::from(r.gw)),
            Some(r) => format!("{}", r.port),
            None => String::from("-1"),
        })
    }
}

const ROUTE_DESC: &str = "Each argument is a route `ADDR/MASK [GW] OUT`: a destination prefix \
(`10.0.0.0/8`, `10/8`, `10.0.0.0/255.0.0.0`, or a bare address for a host route), an optional \
gateway (`-` for none) and an output port. Packets are looked up by their destination IP \
address annotation with longest-prefix match; when the matching route has a gateway, the \
annotation is set to it; the packet leaves on the route's output. Packets with no route are \
dropped (the first five are reported on standard error).";

/// The handlers of the lookups whose table changes at run time, with any
/// extra ones after them.
macro_rules! dynamic_handlers {
    ($($extra:expr),*) => {
        &[
            HandlerDoc { name: "table", mode: HandlerMode::Read, text: "The routing table, one route per line." },
            HandlerDoc {
                name: "lookup",
                mode: HandlerMode::Read,
                text: "Read with an address parameter: reports `OUT [GW]` for that address (`-1` if no route).",
            },
            HandlerDoc {
                name: "add",
                mode: HandlerMode::Write,
                text: "Adds a route `ADDR/MASK [GW] OUT`; fails if a route for the prefix exists.",
            },
            HandlerDoc { name: "set", mode: HandlerMode::Write, text: "Adds or replaces the route for a prefix." },
            HandlerDoc { name: "remove", mode: HandlerMode::Write, text: "Removes the route `ADDR/MASK [GW OUT]`." },
            HandlerDoc {
                name: "ctrl",
                mode: HandlerMode::Write,
                text: "Lines of `add ROUTE`, `set ROUTE`, `remove ROUTE`, applied atomically (all or nothing).",
            },
            $($extra,)*
        ]
    };
}

const DYNAMIC_HANDLERS: &[HandlerDoc] = dynamic_handlers!();

pub static RADIX_SPEC: ClassSpec = ClassSpec {
    name: "RadixIPLookup",
    port_count: "1/-",
    processing: "h/h",
    group: "ip",
    signature: "RadixIPLookup(ADDR1/MASK1 [GW1] OUT1, ADDR2/MASK2 [GW2] OUT2, ...)",
    summary: "IP lookup using a radix trie.",
    description: ROUTE_DESC,
    ports: "one input; any number of outputs",
    handlers: DYNAMIC_HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(IpRouteLookup::new(Kind::Radix)),
};

pub static DIRECT_SPEC: ClassSpec = ClassSpec {
    name: "DirectIPLookup",
    port_count: "1/-",
    processing: "h/h",
    group: "ip",
    signature: "DirectIPLookup(ADDR1/MASK1 [GW1] OUT1, ADDR2/MASK2 [GW2] OUT2, ...)",
    summary: "IP routing lookup through direct indexing.",
    description: ROUTE_DESC,
    ports: "one input; any number of outputs",
    handlers: DYNAMIC_HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(IpRouteLookup::new(Kind::Direct)),
};

const RANGE_HANDLERS: &[HandlerDoc] = dynamic_handlers!(HandlerDoc {
    name: "flush",
    mode: HandlerMode::Write,
    text: "Removes every route."
});

pub static RANGE_SPEC: ClassSpec = ClassSpec {
    name: "RangeIPLookup",
    port_count: "1/-",
    processing: "h/h",
    group: "ip",
    signature: "RangeIPLookup(ADDR1/MASK1 [GW1] OUT1, ADDR2/MASK2 [GW2] OUT2, ...)",
    summary: "IP routing lookup through binary search in a very compact table.",
    description: "Each argument is a route `ADDR/MASK [GW] OUT`: a destination prefix \
(`10.0.0.0/8`, `10/8`, `10.0.0.0/255.0.0.0`, or a bare address for a host route), an optional \
gateway (`-` for none) and an output port. No prefix should occur more than once. Packets are \
looked up by their destination IP address annotation with longest-prefix match; when the \
matching route has a gateway, the annotation is set to it; the packet leaves on the route's \
output. Packets with no route are dropped silently.\n\n\
Click's RangeIPLookup keeps a DirectIPLookup table for updates and distils it into a compact \
array of address ranges searched by binary search. Here the routes are kept as DirectIPLookup \
keeps them (the `table` handler lists them in the same order) and looked up in the multi-bit \
trie the other lookup elements share, which gives the same answers.",
    ports: "one input; any number of outputs",
    handlers: RANGE_HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(IpRouteLookup::new(Kind::Range)),
};

pub static LINEAR_SPEC: ClassSpec = ClassSpec {
    name: "LinearIPLookup",
    port_count: "1/-",
    processing: "h/h",
    group: "ip",
    signature: "LinearIPLookup(ADDR1/MASK1 [GW1] OUT1, ADDR2/MASK2 [GW2] OUT2, ...)",
    summary: "Simple IP routing table.",
    description: ROUTE_DESC,
    ports: "one input; any number of outputs",
    handlers: DYNAMIC_HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(IpRouteLookup::new(Kind::Linear)),
};

pub static STATIC_SPEC: ClassSpec = ClassSpec {
    name: "StaticIPLookup",
    port_count: "1/-",
    processing: "h/h",
    group: "ip",
    signature: "StaticIPLookup(ADDR1/MASK1 [GW1] OUT1, ADDR2/MASK2 [GW2] OUT2, ...)",
    summary: "Simple static IP routing table.",
    description: "Acts like LinearIPLookup, but does not allow adding or removing routes at run time.\n\n",
    ports: "one input; any number of outputs",
    handlers: &[
        HandlerDoc { name: "table", mode: HandlerMode::Read, text: "The routing table, one route per line." },
        HandlerDoc {
            name: "lookup",
            mode: HandlerMode::Read,
            text: "Read with an address parameter: reports `OUT [GW]` for that address (`-1` if no route).",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(IpRouteLookup::new(Kind::Static)),
};

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> Route {
        parse_route(s, false, &ArgContext::none()).unwrap()
    }

    /// Reference: linear longest-prefix match.
    fn reference(routes: &[Route], a: u32) -> Option<Route> {
        routes
            .iter()
            .filter(|r| a & r.mask == r.addr)
            .max_by_key(|r| r.mask.leading_ones())
            .copied()
    }

    #[test]
    fn trie_matches_linear_reference_under_updates() {
        let mut t = Table::new(false);
        let mut live: Vec<Route> = Vec::new();
        let mut x: u32 = 12345;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for step in 0..3000i32 {
            let len = [0, 1, 7, 8, 9, 12, 16, 17, 20, 24, 25, 30, 32][(rnd() % 13) as usize];
            let addr = (rnd() & 0xC0A8_FFFF | 0x0A00_0000) & prefix_mask(len);
            let route = Route {
                addr,
                mask: prefix_mask(len),
                gw: 0,
                port: step % 5,
            };
            if rnd() % 3 == 0 {
                let rm = Route { port: -1, ..route };
                let ok = t.remove(&rm).is_ok();
                let pos = live
                    .iter()
                    .position(|q| q.addr == addr && q.mask == route.mask);
                assert_eq!(ok, pos.is_some());
                if let Some(p) = pos {
                    live.remove(p);
                }
            } else {
                let res = t.add(route, true).unwrap();
                if res.is_some() {
                    live.retain(|q| !(q.addr == addr && q.mask == route.mask));
                }
                live.push(route);
            }
            for _ in 0..20 {
                let a = rnd() & 0xC0A8_FFFF | 0x0A00_0000;
                assert_eq!(
                    t.lookup(a).copied(),
                    reference(&live, a),
                    "step {step} addr {a:08x}"
                );
            }
        }
    }

    #[test]
    fn unparse_and_parse() {
        assert_eq!(r("10.0.0.0/8 1").unparse(true), "10.0.0.0/8\t\t-\t\t1");
        assert_eq!(
            r("10.0.0.1/8 10.0.0.254 1").unparse(false),
            "10.0.0.0/8 10.0.0.254 1"
        );
        assert_eq!(r("1.2.3.4 - 0").mask, u32::MAX);
        assert!(parse_route("10/8", false, &ArgContext::none()).is_none());
        assert_eq!(
            parse_route("10/8", true, &ArgContext::none()).unwrap().port,
            -1
        );
        assert!(parse_route("10/8 1 2", false, &ArgContext::none()).is_none());
    }
}
