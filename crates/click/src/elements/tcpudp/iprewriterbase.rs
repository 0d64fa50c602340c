//! The rewriter element behind IPRewriter, TCPRewriter, UDPRewriter,
//! IPAddrRewriter, IPAddrPairRewriter and ICMPPingRewriter (Click's
//! IPRewriterBase and its subclasses): configuration, the per-packet
//! lookup / map / rewrite, and the handlers. The tables, patterns and
//! heaps are `crate::common::iprw`.
//!
//! Transport fields are read and written through bounds-checked byte
//! access rather than the `TcpPacket`/`UdpPacket` views: Click rewrites
//! ports once 8 bytes of transport header are there and a TCP checksum once
//! 18 are (a header cut anywhere else), which the views' whole-header
//! checks do not express.

use crate::common::args::parse_anno;
use crate::common::iprw::*;
use crate::common::rng::Rng;
use crate::elements::classify::{dispatch, DROP_PORT};
use crate::prelude::*;
use alloc::format;
use alloc::rc::Rc;
use click_lang::Seconds;
use click_wire::{checksum_apply_delta, checksum_update_u16};
use core::cell::RefCell;
use core::net::Ipv4Addr;

const GC_TIMER: u32 = 0;
const DEFAULT_REAP_SEC: i64 = 15 * 60;

/// Handler documentation every rewriter shares.
pub const H_TABLE_SIZE: HandlerDoc = HandlerDoc {
    name: "table_size",
    mode: HandlerMode::Read,
    text: "The number of mappings this rewriter created that are still live (`nmappings` is the deprecated name).",
};
pub const H_NMAPPINGS: HandlerDoc = HandlerDoc {
    name: "nmappings",
    mode: HandlerMode::Read,
    text: "Deprecated name of `table_size`.",
};
pub const H_FAILURES: HandlerDoc = HandlerDoc {
    name: "mapping_failures",
    mode: HandlerMode::Read,
    text: "Packets that could not be mapped: no free port or address in a pattern's range, or a new flow refused because the flow set was full of guaranteed flows.",
};
pub const H_PATTERNS: HandlerDoc = HandlerDoc {
    name: "patterns",
    mode: HandlerMode::Read,
    text: "One line per input: its pattern as Click unparses it (`1.0.0.1 1024-65535 - -`), or `<drop>`, `<nochange>`, `<keep>`, `<mapper>`; followed by ` [N]` when N live flows came from it.",
};
pub const H_SIZE: HandlerDoc = HandlerDoc {
    name: "size",
    mode: HandlerMode::Read,
    text: "Flows in the flow set: more than `table_size` when rewriters share a MAPPING_CAPACITY.",
};
pub const H_CAPACITY: HandlerDoc = HandlerDoc {
    name: "capacity",
    mode: HandlerMode::ReadWrite,
    text: "The flow set's capacity. Writing a smaller one evicts flows at once (expired first, then best-effort, then guaranteed, earliest expiry first).",
};
pub const H_CLEAR: HandlerDoc = HandlerDoc {
    name: "clear",
    mode: HandlerMode::Write,
    text: "Removes every flow of the flow set.",
};
pub const H_DROPS: HandlerDoc = HandlerDoc {
    name: "drops",
    mode: HandlerMode::Read,
    text: "Packets dropped before any mapping was tried: not of a protocol this rewriter handles, a later fragment, a transport header shorter than Click needs, or no IP header at all, on an input that is not `pass` (not a Click handler).",
};
pub const H_TABLE: HandlerDoc = HandlerDoc {
    name: "table",
    mode: HandlerMode::Read,
    text: "The mapping table, one line per direction of each flow, as Click prints it: `(SA, SP, DA, DP) => (SA', SP', DA', DP') [*FOUT ROUT] iINPUT expSECONDS` (the star marks this direction's output; `mappings` is the deprecated name).",
};
pub const H_MAPPINGS: HandlerDoc = HandlerDoc {
    name: "mappings",
    mode: HandlerMode::Read,
    text: "Deprecated name of `table`.",
};
pub const H_PATTERN_N: HandlerDoc = HandlerDoc {
    name: "patternN",
    mode: HandlerMode::ReadWrite,
    text: "`pattern0`, `pattern1`, ...: input N's line of `patterns`. Writing an INPUTSPEC replaces input N's (its flows are removed).",
};

/// The shared part of the rewriters' keyword documentation.
#[macro_export]
macro_rules! iprw_common_keywords {
    () => {
        "- `MAPPING_CAPACITY` (or `CAPACITY`): the most flows the rewriter holds \
(default 2147483647), or the name of another rewriter whose flow set (and capacity) this one \
shares. A new flow that finds the set full evicts the best-effort flow that expires first; when \
every flow is guaranteed, the new flow is refused (admission control, counted in \
`mapping_failures`).\n\
- `REAP_INTERVAL`: how often expired flows are removed (default 15 minutes; expired flows are \
also removed when their room is needed)."
    };
}

/// The INPUTSPEC forms, for the class descriptions.
#[macro_export]
macro_rules! iprw_inputspec_doc {
    () => {
        "Each input has an INPUTSPEC saying what to do with a packet \
no mapping matches:\n\n\
- `drop` (or `discard`): drop it.\n\
- `pass OUTPUT` (or `nochange`): send it to OUTPUT unchanged; no mapping is made.\n\
- `keep FOUTPUT ROUTPUT`: install a mapping that keeps the flow ID: this flow leaves on \
FOUTPUT, its replies on ROUTPUT.\n\
- `pattern SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT`: rewrite by the pattern. A `-` keeps the \
packet's field. SPORT may be a range `L-H`: the packet's own source port is kept when free, \
else a free one is chosen at random; `L-H#` allocates sequentially, `L-H?` always at random. \
At random, the first port from a random one on that no flow uses at all is taken while there \
is one (a public port stays with one flow, endpoint-independent); then a port free for this \
destination, as in Click. When no port is free the packet is dropped and counted in `mapping_failures`. The reply flow \
is mapped back and leaves on ROUTPUT.\n\
- `pattern NAME FOUTPUT ROUTPUT`: a pattern defined by IPRewriterPatterns.\n\
- `ELEMENTNAME`: a mapper element (RoundRobinIPMapper, SourceIPHashMapper) chooses.\n\n\
Checksums (IP, and TCP/UDP through the pseudo-header and ports) are updated incrementally. \
A mapping's guarantee keeps it for GUARANTEE seconds after each packet; then it is \
best-effort and expires after its timeout."
    };
}

/// How MAPPING_CAPACITY was given.
#[derive(Clone, Debug)]
enum CapacityArg {
    Int(i32),
    Name(String),
}

/// A rewriter of one of the six kinds.
pub struct Rewriter {
    kind: Kind,
    /// This element's own flow set (the shared one when another rewriter
    /// names this one in MAPPING_CAPACITY).
    own: SharedFlowSet,
    /// The flow set it works in (a root's, with MAPPING_CAPACITY NAME).
    set: SharedFlowSet,
    /// This rewriter's member index in `set`.
    m: usize,
    /// Configured, not yet in a flow set.
    pending: Option<Member>,
    capacity_ref: Option<String>,
    /// Each INPUTSPEC as written (hot swap keeps flows when they match).
    spec_texts: Vec<String>,
    rng: Rng,
    reap_ms: i64,
    drops: u64,
    /// Each packet's output in the batch under way (kept: no allocation
    /// per batch).
    ports: Vec<u32>,
}

impl Rewriter {
    pub fn new(kind: Kind) -> Rewriter {
        let own: SharedFlowSet = Rc::new(RefCell::new(FlowSet::new()));
        Rewriter {
            kind,
            set: own.clone(),
            own,
            m: usize::MAX,
            pending: None,
            capacity_ref: None,
            spec_texts: Vec::new(),
            rng: Rng::new(1),
            reap_ms: DEFAULT_REAP_SEC * 1000,
            drops: 0,
            ports: Vec::new(),
        }
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The flow set this element roots, and the name it shares instead,
    /// if any (for resolving MAPPING_CAPACITY chains).
    pub fn capacity_link(&self) -> (SharedFlowSet, Option<String>) {
        (self.own.clone(), self.capacity_ref.clone())
    }

    /// The flow set this rewriter works in, and its member index there
    /// (after initialization).
    pub fn flow_set(&self) -> (SharedFlowSet, usize) {
        (self.set.clone(), self.m)
    }

    fn parse_config(
        &self,
        config: &str,
        cx: &ConfigureCtx,
    ) -> Result<(Member, Option<CapacityArg>, i64, Vec<String>), String> {
        let mut a = cx.args(config);
        let ms = |s: Option<Seconds>| s.map(|s| s.0 / 1_000_000);
        let mut t = Timeouts {
            timeout: 300_000,
            guarantee: 5_000,
            tcp_data: 86_400_000,
            tcp_done: 240_000,
            udp_timeout: 300_000,
            udp_guarantee: 5_000,
            udp_streaming: 300_000,
        };
        let mut dst_anno = true;
        let reply_anno: Option<usize>;
        let anno = |s: Option<String>| -> Result<Option<usize>, String> {
            s.map(|s| parse_anno(&s, 1).map_err(|e| format!("REPLY_ANNO: {e}")))
                .transpose()
        };
        let mut base_timeout = true;
        match self.kind {
            Kind::Ip | Kind::Tcp => {
                if self.kind == Kind::Ip {
                    if let Some(v) = ms(a.read("UDP_TIMEOUT")?) {
                        t.udp_timeout = v;
                    }
                    let st = ms(a.read("UDP_STREAMING_TIMEOUT")?);
                    if let Some(v) = ms(a.read("UDP_GUARANTEE")?) {
                        t.udp_guarantee = v;
                    }
                    t.udp_streaming = st.unwrap_or(t.udp_timeout);
                }
                if let Some(v) = ms(a.read("TCP_NODATA_TIMEOUT")?) {
                    t.timeout = v;
                }
                if let Some(v) = ms(a.read("TCP_GUARANTEE")?) {
                    t.guarantee = v;
                }
                if let Some(v) = ms(a.read("TIMEOUT")?) {
                    t.tcp_data = v;
                }
                if let Some(v) = ms(a.read("TCP_TIMEOUT")?) {
                    t.tcp_data = v;
                }
                if let Some(v) = ms(a.read("TCP_DONE_TIMEOUT")?) {
                    t.tcp_done = v;
                }
                dst_anno = a.read("DST_ANNO")?.unwrap_or(true);
                reply_anno = anno(a.read("REPLY_ANNO")?)?;
                base_timeout = false;
            }
            Kind::Udp => {
                dst_anno = a.read("DST_ANNO")?.unwrap_or(true);
                reply_anno = anno(a.read("REPLY_ANNO")?)?;
                if let Some(v) = ms(a.read("UDP_TIMEOUT")?) {
                    t.timeout = v;
                }
                if let Some(v) = ms(a.read("TIMEOUT")?) {
                    t.timeout = v;
                }
                let s1 = ms(a.read("UDP_STREAMING_TIMEOUT")?);
                let s2 = ms(a.read("STREAMING_TIMEOUT")?);
                t.udp_streaming = s2.or(s1).unwrap_or(t.timeout);
                if let Some(v) = ms(a.read("UDP_GUARANTEE")?) {
                    t.guarantee = v;
                }
                base_timeout = false;
            }
            Kind::IpAddr | Kind::IpAddrPair => {
                t.timeout = 7_200_000;
                reply_anno = anno(a.read("REPLY_ANNO")?)?;
            }
            Kind::IcmpPing => {
                dst_anno = a.read("DST_ANNO")?.unwrap_or(true);
                reply_anno = anno(a.read("REPLY_ANNO")?)?;
            }
        }
        // IPRewriterBase's keywords
        let cap1: Option<click_lang::RawString> = a.read("CAPACITY")?;
        let cap2: Option<click_lang::RawString> = a.read("MAPPING_CAPACITY")?;
        if base_timeout {
            if let Some(v) = ms(a.read("TIMEOUT")?) {
                t.timeout = v;
            }
        }
        if let Some(v) = ms(a.read("GUARANTEE")?) {
            t.guarantee = v;
        }
        let mut reap = DEFAULT_REAP_SEC * 1000;
        if let Some(v) = ms(a.read("REAP_TIME")?) {
            reap = v;
        }
        if let Some(v) = ms(a.read("REAP_INTERVAL")?) {
            reap = v;
        }
        let capacity = match cap2.or(cap1) {
            None => None,
            Some(w) => {
                let w = w.0.trim().to_string();
                match click_lang::parse_i64(&w) {
                    Ok(v) => Some(CapacityArg::Int(
                        i32::try_from(v).map_err(|_| "bad MAPPING_CAPACITY".to_string())?,
                    )),
                    Err(_) if !w.is_empty() && !w.contains(char::is_whitespace) => {
                        Some(CapacityArg::Name(w))
                    }
                    Err(_) => return Err("bad MAPPING_CAPACITY".into()),
                }
            }
        };
        let specs = a.rest();
        if specs.len() != cx.ninputs {
            return Err(format!("need {} arguments, one per input port", cx.ninputs));
        }
        let ac = cx.arg_context();
        let mut member = Member::new(self.kind);
        member.t = t;
        member.annos = (dst_anno as u32) | reply_anno.map_or(0, |off| 2 | ((off as u32) << 2));
        if matches!(self.kind, Kind::IpAddr | Kind::IpAddrPair) {
            member.annos |= 1;
        }
        member.noutputs = cx.noutputs;
        let mut errs = Vec::new();
        for (i, s) in specs.iter().enumerate() {
            match parse_input_spec(s, i, cx.noutputs, &ac) {
                Ok(is) => member.inputs.push(is),
                Err(e) => errs.push(e),
            }
        }
        if !errs.is_empty() {
            return Err(errs.join("\n"));
        }
        Ok((member, capacity, reap, specs))
    }

    /// Resolves named patterns and mapper elements in `is` (input `i`).
    fn resolve_input(is: &mut Input, i: usize, cx: &Ctx) -> Result<(), String> {
        match &is.kind {
            InputKind::Pattern(PatRef::Named(n)) => {
                match super::iprwpatterns::find_pattern(cx, n) {
                    Some(p) => is.kind = InputKind::Pattern(PatRef::Literal(p)),
                    None => return Err(format!("input spec {i}: no such pattern '{n}'")),
                }
            }
            InputKind::Mapper(n, None) => {
                let Some(e) = cx.find_element(n) else {
                    return Err(format!("input spec {i}: unknown specification"));
                };
                let m = cx
                    .with_element(e, |el| {
                        let any = el.as_any();
                        any.downcast_ref::<super::rripmapper::IPMapperElement>()
                            .map(|m| m.shared())
                            .or_else(|| {
                                any.downcast_ref::<super::cgnatmapper::CGNATMapper>()
                                    .map(|m| m.shared())
                            })
                    })
                    .flatten();
                match m {
                    Some(m) => is.kind = InputKind::Mapper(n.clone(), Some(m)),
                    None => return Err(format!("input spec {i}: element is not an IPMapper")),
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn member_ok(&self) -> bool {
        self.m != usize::MAX
    }

    /// The packet's fate: an output, or negative to drop it.
    fn process(&mut self, port: usize, p: &mut Packet, now: i64) -> i32 {
        let mut guard = self.set.borrow_mut();
        let set = &mut *guard;
        let m = self.m;
        let kind = self.kind;
        let Some(member) = set.members.get(m) else {
            return RW_DROP;
        };
        let pass_out = match member.inputs.get(port) {
            Some(is) if matches!(is.kind, InputKind::NoChange) => is.foutput,
            _ => RW_DROP,
        };
        let pass = |_: &Member| pass_out;
        // the fixed IP header, read in place (as `ip_header` would check)
        let nh = match p.network_header() {
            Some(nh) if nh.len() >= 20 => nh,
            _ => {
                self.drops += 1;
                return pass(member);
            }
        };
        let proto = nh[9];
        let first = u16::from_be_bytes([nh[6], nh[7]]) & 0x1fff == 0;
        let src = u32::from_be_bytes([nh[12], nh[13], nh[14], nh[15]]);
        let dst = u32::from_be_bytes([nh[16], nh[17], nh[18], nh[19]]);
        let hl = (nh[0] & 0x0f) as usize * 4;
        let ihl = p.network_header_length().unwrap_or(hl);
        let t = nh.get(ihl..).unwrap_or(&[]);
        let be16 = |o: usize| u16::from_be_bytes([t[o], t[o + 1]]);
        let mut echo = true;
        let (flowid, alt, mapid, ip_p) = match kind {
            Kind::Ip | Kind::Tcp | Kind::Udp => {
                let ok = match kind {
                    Kind::Ip => proto == IP_PROTO_TCP || proto == IP_PROTO_UDP,
                    Kind::Tcp => proto == IP_PROTO_TCP,
                    _ => matches!(proto, IP_PROTO_TCP | IP_PROTO_UDP | IP_PROTO_DCCP),
                };
                if !ok || !first || t.len() < 8 {
                    let r = pass(member);
                    if r < 0 {
                        self.drops += 1;
                    }
                    return r;
                }
                let f = FlowId::new(src, be16(0), dst, be16(2));
                let mapid = (kind == Kind::Ip && proto == IP_PROTO_UDP) as usize;
                (f, None, mapid, proto)
            }
            Kind::IcmpPing => {
                if proto != IP_PROTO_ICMP || !first || t.len() < 6 || (t[0] != 8 && t[0] != 0) {
                    let r = pass(member);
                    if r < 0 {
                        self.drops += 1;
                    }
                    return r;
                }
                echo = t[0] == 8;
                let id = be16(4);
                let f = FlowId::new(
                    src,
                    id.wrapping_add(!echo as u16),
                    dst,
                    id.wrapping_add(echo as u16),
                );
                (f, None, 0, IP_PROTO_ICMP)
            }
            Kind::IpAddr => (
                FlowId::new(src, 0, 0, 0),
                Some(FlowId::new(0, 0, dst, 0)),
                0,
                0,
            ),
            Kind::IpAddrPair => (FlowId::new(src, 0, dst, 0), None, 0, 0),
        };
        let mut r = member.maps[mapid].get(&flowid, &set.flows);
        if r == NIL {
            if let Some(alt) = alt {
                r = member.maps[mapid].get(&alt, &set.flows);
            }
        }
        if r == NIL {
            if !echo {
                let r = pass_out;
                if r < 0 {
                    self.drops += 1;
                }
                return r;
            }
            let Some(slot) = set.members[m].inputs.get_mut(port) else {
                return RW_DROP;
            };
            let mut is = core::mem::replace(slot, Input::new(InputKind::Drop));
            let mut rw = FlowId::default();
            let result = {
                let map = &set.members[m].maps[mapid];
                let flows = &set.flows;
                is.rewrite_flowid(
                    &flowid,
                    &mut rw,
                    &MapView { map, flows },
                    &mut self.rng,
                    MapArgs { ip_p, now },
                )
            };
            set.members[m].inputs[port] = is;
            watch_wish(set, m, mapid);
            if result == RW_ADDMAP {
                r = store_new_flow(set, m, kind, port, mapid, ip_p, &flowid, &mut rw, now);
            }
            if r == NIL {
                return result;
            }
            let annos = set.members[m].annos;
            if annos & 2 != 0 {
                let v = p.anno().u8_at((annos >> 2) as usize);
                set.flows[eref_flow(r)].reply_anno = v;
            }
        }
        let f = eref_flow(r);
        let dir = eref_dir(r);
        let annos = set.members[m].annos;
        apply(kind, &mut set.flows[f], dir, p, annos, ihl);
        set.refresh(f, now);
        set.flows[f].out[dir] as i32
    }

    /// Click's `get_entry` (as FTPPortMapper calls it): the mapping of
    /// `flowid` (protocol `ip_p`) in either direction; when there is none
    /// and `input` is one of this rewriter's inputs, a new mapping made as
    /// if a packet of that flow had arrived on it (no packet: a pass or
    /// drop INPUTSPEC makes none). Returns the flow ID the flow is
    /// rewritten to.
    pub fn get_entry(
        &mut self,
        ip_p: u8,
        flowid: &FlowId,
        input: Option<usize>,
        now: i64,
    ) -> Option<FlowId> {
        let mut guard = self.set.borrow_mut();
        let set = &mut *guard;
        let m = self.m;
        let member = set.members.get(m)?;
        let kind = member.kind;
        let mut r = member.get_entry(ip_p, flowid, &set.flows);
        if r == NIL {
            let port = input.filter(|&i| i < member.inputs.len())?;
            let mapid = (kind == Kind::Ip && ip_p == IP_PROTO_UDP) as usize;
            if kind == Kind::Ip && ip_p != IP_PROTO_TCP && ip_p != IP_PROTO_UDP {
                return None;
            }
            let mut is = core::mem::replace(
                &mut set.members[m].inputs[port],
                Input::new(InputKind::Drop),
            );
            let mut rw = FlowId::default();
            let result = {
                let map = &set.members[m].maps[mapid];
                let flows = &set.flows;
                is.rewrite_flowid(
                    flowid,
                    &mut rw,
                    &MapView { map, flows },
                    &mut self.rng,
                    MapArgs { ip_p, now },
                )
            };
            set.members[m].inputs[port] = is;
            watch_wish(set, m, mapid);
            if result != RW_ADDMAP {
                return None;
            }
            r = store_new_flow(set, m, kind, port, mapid, ip_p, flowid, &mut rw, now);
            if r == NIL {
                return None;
            }
        }
        Some(set.flows[eref_flow(r)].rewritten(eref_dir(r)))
    }

    /// Click's `TCPFlow::update_seqno_delta` on the TCP mapping of
    /// `flowid` (either direction): that direction's sequence numbers from
    /// `trigger` on are shifted by `delta` more (a trigger older than the
    /// direction's last one is ignored, as Click refuses it). Returns the
    /// mapping's REPLY_ANNO value, or `None` when there is no such TCP
    /// mapping.
    pub fn update_seqno_delta(&self, flowid: &FlowId, trigger: u32, delta: i32) -> Option<u8> {
        let mut guard = self.set.borrow_mut();
        let set = &mut *guard;
        let member = set.members.get(self.m)?;
        if !matches!(member.kind, Kind::Ip | Kind::Tcp) {
            return None;
        }
        let r = member.get_entry(IP_PROTO_TCP, flowid, &set.flows);
        if r == NIL {
            return None;
        }
        let fl = &mut set.flows[eref_flow(r)];
        if fl.ip_p != IP_PROTO_TCP {
            return None;
        }
        let _ = fl
            .seq
            .get_or_insert_with(Default::default)
            .update(eref_dir(r), trigger, delta);
        Some(fl.reply_anno)
    }

    /// Whether this rewriter has a TCP mapping for `flowid`.
    pub fn has_tcp_entry(&self, flowid: &FlowId) -> bool {
        self.with_member(|set, m| m.get_entry(IP_PROTO_TCP, flowid, &set.flows) != NIL)
            .unwrap_or(false)
    }

    /// Sets the REPLY_ANNO value recorded for the mapping of `flowid`
    /// (protocol `ip_p`).
    pub fn set_reply_anno(&self, ip_p: u8, flowid: &FlowId, v: u8) {
        let mut guard = self.set.borrow_mut();
        let set = &mut *guard;
        let Some(member) = set.members.get(self.m) else {
            return;
        };
        let r = member.get_entry(ip_p, flowid, &set.flows);
        if r != NIL {
            set.flows[eref_flow(r)].reply_anno = v;
        }
    }

    /// The number of INPUTSPECs (inputs) this rewriter was configured with.
    pub fn ninput_specs(&self) -> usize {
        self.spec_texts.len()
    }

    fn with_member<R>(&self, f: impl FnOnce(&FlowSet, &Member) -> R) -> Option<R> {
        let set = self.set.borrow();
        let m = set.members.get(self.m)?;
        Some(f(&set, m))
    }

    fn table_text(&self, mapid: usize, now: i64) -> String {
        let set = self.set.borrow();
        let Some(m) = set.members.get(self.m) else {
            return String::new();
        };
        let mut s = String::new();
        for r in m.maps[mapid].entries() {
            s.push_str(&set.unparse_entry(r, now, &|_| String::new()));
            s.push('\n');
        }
        s
    }

    fn lookup(&self, param: &str, cx: &Ctx) -> Result<String, String> {
        let mut a = Args::with_context(param, cx.arg_context());
        let words: Vec<String> = click_lang::split_words(param);
        let _ = &mut a;
        if words.len() != 4 {
            return Err("expected 'SADDR SPORT DADDR DPORT'".into());
        }
        let ac = cx.arg_context();
        let ip = |w: &str| ac.ip(w).map(u32::from);
        let port = |w: &str| ac.port(w, IP_PROTO_TCP);
        let f = FlowId::new(
            ip(&words[0]).map_err(|e| format!("SADDR: {e}"))?,
            port(&words[1]).map_err(|e| format!("SPORT: {e}"))?,
            ip(&words[2]).map_err(|e| format!("DADDR: {e}"))?,
            port(&words[3]).map_err(|e| format!("DPORT: {e}"))?,
        );
        Ok(self
            .with_member(|set, m| {
                let r = m.maps[0].get(&f, &set.flows);
                if r == NIL {
                    return String::new();
                }
                let rw = set.flows[eref_flow(r)].rewritten(eref_dir(r));
                format!("{} {} {} {}", rw.src(), rw.sport, rw.dst(), rw.dport)
            })
            .unwrap_or_default())
    }

    fn write_pattern(&mut self, i: usize, value: &str, cx: &Ctx) -> Result<(), String> {
        let mut is = parse_input_spec(value, i, cx.noutputs(), &cx.arg_context())?;
        Self::resolve_input(&mut is, i, cx)?;
        let mut set = self.set.borrow_mut();
        if set.members.get(self.m).is_none_or(|m| i >= m.inputs.len()) {
            return Err("no such input".into());
        }
        set.destroy_input_flows(self.m, i);
        set.members[self.m].inputs[i] = is;
        if let Some(t) = self.spec_texts.get_mut(i) {
            *t = value.trim().to_string();
        }
        Ok(())
    }
}

/// Stores a new flow `flowid` => `rw` that input `port` of member `m` chose
/// (after the class's own checks of the rewritten ID), attaching a CGNAT
/// mapper's bindings to it. Returns its forward entry or [`NIL`].
/// Gives map `mapid` of member `m` the port use a port search wished for.
fn watch_wish(set: &mut FlowSet, m: usize, mapid: usize) {
    let map = &mut set.members[m].maps[mapid];
    let addr = map.take_wish();
    if addr != 0 {
        map.watch(addr, &set.flows);
    }
}

#[allow(clippy::too_many_arguments)]
fn store_new_flow(
    set: &mut FlowSet,
    m: usize,
    kind: Kind,
    port: usize,
    mapid: usize,
    ip_p: u8,
    flowid: &FlowId,
    rw: &mut FlowId,
    now: i64,
) -> u32 {
    let ok = match kind {
        Kind::IcmpPing => {
            rw.dport = rw.sport.wrapping_add(1);
            flowid.sport.wrapping_add(1) == flowid.dport
        }
        Kind::IpAddr => rw.sport == 0 && rw.dport == 0 && rw.daddr == 0,
        Kind::IpAddrPair => rw.sport == 0 && rw.dport == 0,
        _ => true,
    };
    if !ok {
        return NIL;
    }
    let r = set.add_flow(m, port, mapid, ip_p, flowid, rw, now);
    // a CGNAT mapper's bindings are held by the flow stored
    if r != NIL {
        if let InputKind::Mapper(_, Some(mapper)) = &set.members[m].inputs[port].kind {
            let ids = mapper.borrow_mut().attach();
            set.flows[eref_flow(r)].cgn = ids;
        }
    }
    r
}

/// Rewrites packet `p` by direction `dir` of flow `fl` (Click's
/// `apply` of each flow class).
fn apply(kind: Kind, fl: &mut Flow, dir: usize, p: &mut Packet, annos: u32, ihl: usize) {
    let rev = fl.e[1 - dir].key;
    let fwd = dir == 0;
    let set_dst = annos & 1 != 0 && (kind != Kind::IpAddr || !fwd);
    if set_dst {
        p.anno_mut().set_dst_ip(Ipv4Addr::from(rev.saddr));
    }
    if !fwd && annos & 2 != 0 {
        p.anno_mut().set_u8_at((annos >> 2) as usize, fl.reply_anno);
    }
    // the IP header and the transport header, in one slice
    let nh = match p.network_header_mut() {
        Some(nh) if nh.len() >= 20 => nh,
        _ => return,
    };
    match kind {
        Kind::IpAddr if fwd => nh[12..16].copy_from_slice(&rev.daddr.to_be_bytes()),
        Kind::IpAddr => nh[16..20].copy_from_slice(&rev.saddr.to_be_bytes()),
        _ => {
            nh[12..16].copy_from_slice(&rev.daddr.to_be_bytes());
            nh[16..20].copy_from_slice(&rev.saddr.to_be_bytes());
        }
    }
    let c = checksum_apply_delta(u16::from_be_bytes([nh[10], nh[11]]), fl.ip_delta, fwd);
    nh[10..12].copy_from_slice(&c.to_be_bytes());
    let first = u16::from_be_bytes([nh[6], nh[7]]) & 0x1fff == 0;
    let proto = nh[9];
    let ip_len = u16::from_be_bytes([nh[2], nh[3]]) as usize;
    let ip_hl = (nh[0] & 0x0f) as usize * 4;
    if !first {
        return;
    }
    let Some(t) = nh.get_mut(ihl..) else {
        return;
    };
    let tlen = t.len();
    let get16 = |t: &[u8], o: usize| u16::from_be_bytes([t[o], t[o + 1]]);
    let put16 = |t: &mut [u8], o: usize, v: u16| t[o..o + 2].copy_from_slice(&v.to_be_bytes());
    let fix = |t: &mut [u8], o: usize, delta: u16| {
        let c = checksum_apply_delta(get16(t, o), delta, fwd);
        put16(t, o, c);
    };
    let tcp_flow = matches!(kind, Kind::Ip | Kind::Tcp) && fl.ip_p == IP_PROTO_TCP;
    match kind {
        _ if tcp_flow => {
            if tlen < 18 {
                return;
            }
            put16(t, 0, rev.dport);
            put16(t, 2, rev.sport);
            fix(t, 16, fl.udp_delta);
            let th_off = (t[12] >> 4) as usize * 4;
            let have_payload = ip_hl + th_off < ip_len;
            let flags = t[13];
            let bit = 1u8 << dir;
            if flags & 0x04 != 0 {
                fl.tflags |= S_BOTH_DONE;
            } else if flags & 0x01 != 0 {
                fl.tflags |= S_FORWARD_DONE << dir;
            } else if flags & 0x02 != 0 || have_payload {
                fl.tflags &= !bit;
            }
            if have_payload {
                fl.tflags |= S_FORWARD_DATA << dir;
            }
            // sequence-number deltas (FTPPortMapper's), when the whole
            // header is there
            if let Some(seq) = fl.seq.as_deref_mut() {
                if tlen >= th_off.max(20) && seq.any() {
                    apply_seq_deltas(seq, dir, &mut t[..th_off]);
                }
            }
        }
        Kind::Ip | Kind::Udp => {
            if tlen < 4 {
                return;
            }
            put16(t, 0, rev.dport);
            put16(t, 2, rev.sport);
            if proto == IP_PROTO_TCP {
                if tlen >= 18 {
                    fix(t, 16, fl.udp_delta);
                }
            } else if proto == IP_PROTO_UDP && tlen >= 8 && get16(t, 6) != 0 {
                fix(t, 6, fl.udp_delta);
            }
            if !fwd {
                fl.tflags |= 1;
            }
            if fl.tflags < 6 {
                fl.tflags += 2;
            }
        }
        Kind::IpAddr | Kind::IpAddrPair => {
            if proto == IP_PROTO_TCP && tlen >= 18 {
                fix(t, 16, fl.udp_delta);
            } else if proto == IP_PROTO_UDP && tlen >= 8 && get16(t, 6) != 0 {
                fix(t, 6, fl.udp_delta);
            }
        }
        Kind::IcmpPing => {
            if tlen < 6 {
                return;
            }
            put16(t, 4, if fwd { rev.dport } else { rev.sport });
            fix(t, 2, fl.udp_delta);
            fix_zero_checksum(t, 2);
        }
        Kind::Tcp => {}
    }
}

/// Shifts the sequence number, acknowledgement number and SACK blocks of
/// TCP header `t` (options included) of a packet of direction `dir` by
/// `seq`'s deltas, updating the checksum incrementally (Click's
/// `TCPFlow::apply` from "update sequence numbers" on).
fn apply_seq_deltas(seq: &mut SeqDeltas, dir: usize, t: &mut [u8]) {
    let get32 = |t: &[u8], o: usize| u32::from_be_bytes([t[o], t[o + 1], t[o + 2], t[o + 3]]);
    let halves = |v: u32| [(v >> 16) as u16, v as u16];
    let mut c = u16::from_be_bytes([t[16], t[17]]);
    let th_seq = get32(t, 4);
    seq.advance(dir, th_seq);
    if seq.active(dir) {
        let n = seq.new_seq(dir, th_seq);
        c = update_words(c, &halves(th_seq), &halves(n));
        t[4..8].copy_from_slice(&n.to_be_bytes());
    }
    if seq.active(1 - dir) {
        let ack = get32(t, 8);
        let n = seq.new_ack(dir, ack);
        c = update_words(c, &halves(ack), &halves(n));
        t[8..12].copy_from_slice(&n.to_be_bytes());
        // SACK blocks, unless the options are just NOP NOP timestamp
        let hl = t.len();
        if hl > 32 || (hl == 32 && t[20..24] != [1, 1, 8, 10]) {
            c = apply_sack(seq, dir, t, c);
        }
    }
    t[16..18].copy_from_slice(&c.to_be_bytes());
}

/// Rewrites the SACK blocks among TCP header `t`'s options as
/// acknowledgement numbers of direction `dir`; returns checksum `c`
/// updated for them. A malformed option list ends the walk.
fn apply_sack(seq: &SeqDeltas, dir: usize, t: &mut [u8], mut c: u16) -> u16 {
    let end = t.len();
    let mut o = 20;
    while o < end {
        match t[o] {
            0 => break,
            1 => o += 1,
            kind => {
                let Some(&len) = t.get(o + 1) else {
                    break;
                };
                let len = len as usize;
                if kind == 5 {
                    if o + len > end || len % 8 != 2 {
                        break;
                    }
                    // the 16-bit checksum words covering the blocks
                    let (a, b) = ((o + 2) & !1, (o + len + 1) & !1);
                    let words = |t: &[u8]| -> Vec<u16> {
                        t[a..b]
                            .chunks(2)
                            .map(|w| u16::from_be_bytes([w[0], w[1]]))
                            .collect()
                    };
                    let old = words(t);
                    let mut q = o + 2;
                    while q < o + len {
                        for k in [q, q + 4] {
                            let v = u32::from_be_bytes([t[k], t[k + 1], t[k + 2], t[k + 3]]);
                            t[k..k + 4].copy_from_slice(&seq.new_ack(dir, v).to_be_bytes());
                        }
                        q += 8;
                    }
                    c = update_words(c, &old, &words(t));
                    o += len;
                } else {
                    if len < 2 {
                        break;
                    }
                    o += len;
                }
            }
        }
    }
    c
}

/// Click's `click_update_zero_in_cksum`: an incrementally updated checksum
/// of zero over all-zero data is `0xFFFF`.
pub fn fix_zero_checksum(t: &mut [u8], off: usize) {
    if t.get(off..off + 2) == Some(&[0, 0]) && t.iter().all(|&b| b == 0) {
        t[off] = 0xff;
        t[off + 1] = 0xff;
    }
}

/// Updates checksum `c` for 16-bit words `old` becoming `new`.
pub fn update_words(mut c: u16, old: &[u16], new: &[u16]) -> u16 {
    for (o, n) in old.iter().zip(new) {
        c = checksum_update_u16(c, *o, *n);
    }
    c
}

/// Follows MAPPING_CAPACITY names from element `name` to the rewriter
/// whose flow set they share.
pub fn root_flow_set(cx: &Ctx, name: &str) -> Result<SharedFlowSet, String> {
    let mut name = name.to_string();
    for _ in 0..64 {
        let e = cx.find_element(&name).ok_or("bad MAPPING_CAPACITY")?;
        let link = cx
            .with_element(e, |el| {
                el.as_any()
                    .downcast_ref::<Rewriter>()
                    .map(Rewriter::capacity_link)
            })
            .flatten()
            .ok_or("bad MAPPING_CAPACITY")?;
        match link.1 {
            Some(n) => name = n,
            None => return Ok(link.0),
        }
    }
    Err("bad MAPPING_CAPACITY".into())
}

impl Element for Rewriter {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let (member, cap, reap, specs) = self.parse_config(config, cx)?;
        match cap {
            Some(CapacityArg::Int(c)) => {
                self.own.borrow_mut().capacity = c;
                self.capacity_ref = None;
            }
            Some(CapacityArg::Name(n)) => self.capacity_ref = Some(n),
            None => self.capacity_ref = None,
        }
        self.pending = Some(member);
        self.reap_ms = reap;
        self.spec_texts = specs.iter().map(|s| s.trim().to_string()).collect();
        self.rng = Rng::from_name(cx.name);
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let Some(mut member) = self.pending.take() else {
            return Ok(());
        };
        let mut errs = Vec::new();
        for (i, is) in member.inputs.iter_mut().enumerate() {
            if let Err(e) = Self::resolve_input(is, i, cx) {
                errs.push(e);
            }
        }
        if !errs.is_empty() {
            return Err(errs.join("\n"));
        }
        if let Some(n) = &self.capacity_ref {
            self.set = root_flow_set(cx, n)?;
        }
        member.elem = cx.index();
        member.noutputs = cx.noutputs();
        let mut set = self.set.borrow_mut();
        set.members.push(member);
        self.m = set.members.len() - 1;
        drop(set);
        if self.reap_ms > 0 {
            cx.schedule_timer_after(GC_TIMER, self.reap_ms * 1_000_000);
        }
        Ok(())
    }

    #[inline]
    fn push(&mut self, port: usize, mut p: Packet, cx: &Ctx) {
        let now = jiffies(cx.now_coarse());
        let out = self.process(port, &mut p, now);
        if out >= 0 && (out as usize) < cx.noutputs() {
            cx.push(out as usize, p);
        }
    }

    /// The batch is split by output (in order within each output), as a
    /// Classifier splits it; the clock is read once.
    #[inline]
    fn push_batch(&mut self, port: usize, mut batch: Batch, cx: &Ctx) {
        let now = jiffies(cx.now_coarse());
        let n = cx.noutputs();
        let mut ports = core::mem::take(&mut self.ports);
        ports.clear();
        for p in batch.iter_mut() {
            let out = self.process(port, p, now);
            ports.push(if out >= 0 && (out as usize) < n {
                out as u32
            } else {
                DROP_PORT
            });
        }
        dispatch(batch, &ports, cx);
        self.ports = ports;
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        let now = jiffies(cx.now());
        self.set.borrow_mut().shrink(false, now);
        if self.reap_ms > 0 {
            cx.schedule_timer_after(GC_TIMER, self.reap_ms * 1_000_000);
        }
    }

    fn instance_handlers(&self) -> Vec<(String, HandlerMode)> {
        (0..self.spec_texts.len())
            .map(|i| (format!("pattern{i}"), HandlerMode::ReadWrite))
            .collect()
    }

    fn read_handler(&mut self, name: &str, cx: &Ctx) -> Option<HandlerResult<String>> {
        let now = jiffies(cx.now());
        let is_ip = self.kind == Kind::Ip;
        let text = match name {
            "table_size" | "nmappings" => self
                .with_member(|_, m| {
                    m.inputs
                        .iter()
                        .map(|i| i.count as u64)
                        .sum::<u64>()
                        .to_string()
                })
                .unwrap_or_default(),
            "mapping_failures" => self
                .with_member(|_, m| {
                    m.inputs
                        .iter()
                        .map(|i| i.failures as u64)
                        .sum::<u64>()
                        .to_string()
                })
                .unwrap_or_default(),
            "patterns" => self
                .with_member(|_, m| {
                    let mut s = String::new();
                    for is in &m.inputs {
                        s.push_str(&is.unparse());
                        s.push('\n');
                    }
                    s
                })
                .unwrap_or_default(),
            "size" => self.set.borrow().size().to_string(),
            "capacity" => self.set.borrow().capacity.to_string(),
            "drops" => self.drops.to_string(),
            "table" | "mappings" if !is_ip => self.table_text(0, now),
            "tcp_table" | "tcp_mappings" if is_ip => self.table_text(0, now),
            "udp_table" | "udp_mappings" if is_ip => self.table_text(1, now),
            _ => {
                let i: usize = name.strip_prefix("pattern")?.parse().ok()?;
                let mut s = self.with_member(|_, m| m.inputs.get(i).map(Input::unparse))??;
                s.push('\n');
                s
            }
        };
        if !self.member_ok() {
            return Some(Err("not initialized".into()));
        }
        Some(Ok(text))
    }

    fn read_handler_param(
        &mut self,
        name: &str,
        param: &str,
        cx: &Ctx,
    ) -> Option<HandlerResult<String>> {
        match (name, self.kind) {
            ("tcp_lookup", Kind::Ip) | ("lookup", Kind::Tcp) => Some(self.lookup(param, cx)),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        let now = jiffies(cx.now());
        Some(match name {
            "capacity" => {
                let v = value.trim();
                match click_lang::parse_i64(v)
                    .ok()
                    .and_then(|v| i32::try_from(v).ok())
                {
                    Some(c) => {
                        let mut set = self.set.borrow_mut();
                        set.capacity = c;
                        set.shrink(false, now);
                        Ok(())
                    }
                    None if v.is_empty() => Err("missing mandatory CAPACITY argument".into()),
                    None => Err("CAPACITY: expected integer".into()),
                }
            }
            "clear" => {
                self.set.borrow_mut().shrink(true, now);
                Ok(())
            }
            _ => {
                let i: usize = name.strip_prefix("pattern")?.parse().ok()?;
                if i >= self.spec_texts.len() {
                    return None;
                }
                self.write_pattern(i, value, cx)
            }
        })
    }

    /// Hot swap: a rewriter of the same class whose INPUTSPECs are the
    /// same keeps its namesake's flows (when neither shares its flow set
    /// with another rewriter).
    fn take_state(&mut self, old: &mut dyn Element, cx: &Ctx) {
        let Some(o) = old.as_any_mut().and_then(|a| a.downcast_mut::<Rewriter>()) else {
            return;
        };
        if o.kind != self.kind || o.spec_texts != self.spec_texts || Rc::ptr_eq(&o.set, &self.set) {
            return;
        }
        let (mut mine, mut theirs) = (self.set.borrow_mut(), o.set.borrow_mut());
        if mine.members.len() != 1
            || theirs.members.len() != 1
            || !self.member_ok()
            || !o.member_ok()
        {
            return;
        }
        mine.take_flows(self.m, &mut theirs, o.m);
        self.drops = o.drops;
        mine.shrink(false, jiffies(cx.now()));
    }

    crate::element_any!();
}
