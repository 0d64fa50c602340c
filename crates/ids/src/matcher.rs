//! The compiled rule set: one Aho-Corasick pass over the payload for every
//! rule's fast pattern, then the per-rule checks (header, flow, every
//! content with its modifiers, pcre, detection_filter) on the candidates.

use crate::rules::{
    Action, Content, DetectionFilter, FlowDir, Pcre, Proto, Rule, RuleError, Track,
};
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use click_wire::{Ipv4Packet, TcpPacket, UdpPacket};
use regex_automata::meta::{self, Regex};
use regex_automata::{util::syntax, Input};

/// IP protocol numbers.
pub const PROTO_ICMP: u8 = 1;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

/// What the decoder found in one packet.
#[derive(Copy, Clone, Debug)]
pub struct Decoded<'a> {
    pub proto: u8,
    pub src: u32,
    pub dst: u32,
    /// Ports, for TCP and UDP packets whose header was complete.
    pub ports: Option<(u16, u16)>,
    /// TCP flags, for complete TCP headers.
    pub tcp_flags: Option<u8>,
    /// Whether tcp/udp/icmp rules may look at this packet (a complete
    /// transport header, not a later fragment).
    pub l4_ok: bool,
    /// What content and pcre search: the transport payload, or the IP
    /// payload when there is no complete transport header.
    pub payload: &'a [u8],
}

/// Why a packet could not be decoded at all.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// Not IPv4, or an IP header that is cut or inconsistent.
    Ip,
}

/// Decodes an IPv4 packet (`ip` starts at the IP header). A packet whose
/// IP header is bad is `Err`; a packet with a good IP header but a cut or
/// bad transport header decodes with `l4_ok == false` and the second
/// value true (counted as malformed, still examined by `ip` rules).
pub fn decode(ip: &[u8]) -> Result<(Decoded<'_>, bool), Malformed> {
    let p = Ipv4Packet::new_checked(ip).map_err(|_| Malformed::Ip)?;
    if p.version() != 4 {
        return Err(Malformed::Ip);
    }
    let proto = p.protocol();
    let src = u32::from(p.src_addr());
    let dst = u32::from(p.dst_addr());
    let hl = p.header_len() as usize;
    let tl = p.total_len() as usize;
    // check_len: hl <= tl <= ip.len()
    let l4 = &ip[hl..tl];
    let mut d = Decoded {
        proto,
        src,
        dst,
        ports: None,
        tcp_flags: None,
        l4_ok: false,
        payload: l4,
    };
    if p.frag_offset() != 0 {
        // A later fragment: no transport header here.
        return Ok((d, false));
    }
    let mut bad = false;
    match proto {
        PROTO_TCP => match TcpPacket::new_checked(l4) {
            Ok(t) => {
                d.ports = Some((t.src_port(), t.dst_port()));
                d.tcp_flags = Some(t.flags());
                d.l4_ok = true;
                d.payload = &l4[t.header_len() as usize..];
            }
            Err(_) => bad = true,
        },
        PROTO_UDP => match UdpPacket::new_fixed_checked(l4) {
            Ok(u) => {
                d.ports = Some((u.src_port(), u.dst_port()));
                d.l4_ok = true;
                // A first fragment or a bad length field: search what is there.
                let ulen = (u.len() as usize).clamp(8, l4.len());
                d.payload = &l4[8..ulen];
            }
            Err(_) => bad = true,
        },
        PROTO_ICMP => {
            if l4.len() >= 8 {
                d.l4_ok = true;
                d.payload = &l4[8..];
            } else if l4.len() >= 4 {
                d.l4_ok = true;
                d.payload = &[];
            } else {
                bad = true;
            }
        }
        _ => {}
    }
    Ok((d, bad))
}

/// Compiles a pcre option with `regex-automata` (bytes, not UTF-8).
pub fn compile_pcre(p: &Pcre) -> Result<Regex, String> {
    let sc = syntax::Config::new()
        .unicode(false)
        .utf8(false)
        .case_insensitive(p.caseless)
        .dot_matches_new_line(p.dotall)
        .multi_line(p.multiline)
        .ignore_whitespace(p.extended)
        .nest_limit(64);
    let mc = meta::Config::new()
        .utf8_empty(false)
        .nfa_size_limit(Some(1 << 20))
        .hybrid_cache_capacity(1 << 20);
    meta::Builder::new()
        .syntax(sc)
        .configure(mc)
        .build(&p.pattern)
        .map_err(|e| {
            let full = format!("{e}");
            let first = full.lines().next().unwrap_or("").trim();
            format!(
                "pcre: cannot compile '{}' ({first}; lookaround and backreferences are not supported)",
                p.pattern
            )
        })
}

struct CompiledPcre {
    re: Regex,
    cache: meta::Cache,
}

/// Per-rule counters, kept across packets (reset by a reload).
#[derive(Copy, Clone, Debug, Default)]
pub struct RuleStats {
    /// Packets the rule matched (before detection_filter).
    pub matches: u64,
    /// Events: matches that passed detection_filter (alerts written for
    /// alert and drop rules, packets let through for pass rules).
    pub events: u64,
}

/// detection_filter state for one rule: per tracked address, the start of
/// the window and the matches in it.
#[derive(Default)]
struct FilterState {
    hosts: BTreeMap<u32, (i64, u32)>,
}

/// At most this many tracked addresses per rule; when full, expired
/// windows are forgotten first, then the oldest.
pub const MAX_TRACKED: usize = 4096;

impl FilterState {
    /// Counts one match at `now_ns` from/to `host`; true if the rule's
    /// rate is exceeded (Snort: an event only after more than `count`
    /// matches within `seconds`).
    fn hit(&mut self, f: &DetectionFilter, host: u32, now_ns: i64) -> bool {
        let win = f.seconds as i64 * 1_000_000_000;
        if !self.hosts.contains_key(&host) && self.hosts.len() >= MAX_TRACKED {
            self.hosts
                .retain(|_, (start, _)| now_ns.saturating_sub(*start) <= win);
            if self.hosts.len() >= MAX_TRACKED {
                if let Some(oldest) = self
                    .hosts
                    .iter()
                    .min_by_key(|(_, (s, _))| *s)
                    .map(|(k, _)| *k)
                {
                    self.hosts.remove(&oldest);
                }
            }
        }
        let e = self.hosts.entry(host).or_insert((now_ns, 0));
        if now_ns.saturating_sub(e.0) > win || now_ns < e.0 {
            *e = (now_ns, 0);
        }
        e.1 = e.1.saturating_add(1);
        e.1 > f.count
    }
}

struct CompiledRule {
    rule: Rule,
    pcres: Vec<CompiledPcre>,
    finders: Vec<Option<memchr::memmem::Finder<'static>>>,
    filter: FilterState,
    stats: RuleStats,
}

/// Most tries of a content at successive positions (backtracking when a
/// later relative content fails) per rule and packet; past it the rule
/// does not match that packet (Snort bounds its retries too).
pub const MAX_TRIES: u32 = 4096;

/// The result of inspecting one packet.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Rules (indexes into [`RuleSet::rules`]) whose events are reported,
    /// in rule order. Empty if a pass rule matched.
    pub events: Vec<u32>,
    /// The action applied: `Some(Drop)` if a drop rule fired, `Some(Pass)`
    /// if a pass rule fired, `Some(Alert)` if only alert rules fired.
    pub action: Option<Action>,
}

/// A compiled rule set.
pub struct RuleSet {
    rules: Vec<CompiledRule>,
    ac: Option<AhoCorasick>,
    /// Fast pattern id → the rules that use it.
    pat_rules: Vec<Vec<u32>>,
    /// Rules without a content: checked on every packet.
    always: Vec<u32>,
    // Scratch, reused across packets.
    epoch: u32,
    rule_mark: Vec<u32>,
    pat_mark: Vec<u32>,
    cands: Vec<u32>,
    hits: Vec<u32>,
}

impl RuleSet {
    /// Compiles parsed rules.
    pub fn new(rules: Vec<Rule>) -> Result<RuleSet, RuleError> {
        let mut compiled = Vec::with_capacity(rules.len());
        let mut pats: BTreeMap<Vec<u8>, u32> = BTreeMap::new();
        let mut pat_rules: Vec<Vec<u32>> = Vec::new();
        let mut always = Vec::new();
        for (i, r) in rules.into_iter().enumerate() {
            let mut pcres = Vec::new();
            for p in &r.pcres {
                let re = compile_pcre(p).map_err(|reason| RuleError {
                    source: r.source,
                    line: r.line,
                    reason,
                })?;
                let cache = re.create_cache();
                pcres.push(CompiledPcre { re, cache });
            }
            match r.fast_pattern() {
                Some(fp) => {
                    let key = r.contents[fp].bytes.to_ascii_lowercase();
                    let n = pats.len() as u32;
                    let id = *pats.entry(key).or_insert(n);
                    if id as usize == pat_rules.len() {
                        pat_rules.push(Vec::new());
                    }
                    pat_rules[id as usize].push(i as u32);
                }
                None => always.push(i as u32),
            }
            let finders = r
                .contents
                .iter()
                .map(|c| (!c.nocase).then(|| memchr::memmem::Finder::new(&c.bytes).into_owned()))
                .collect();
            compiled.push(CompiledRule {
                rule: r,
                pcres,
                finders,
                filter: FilterState::default(),
                stats: RuleStats::default(),
            });
        }
        let ac = if pats.is_empty() {
            None
        } else {
            let mut list: Vec<(&Vec<u8>, u32)> = pats.iter().map(|(k, v)| (k, *v)).collect();
            list.sort_by_key(|x| x.1);
            let b = AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                .kind(if list.len() <= 5000 {
                    Some(AhoCorasickKind::DFA)
                } else {
                    None
                })
                .build(list.iter().map(|x| x.0.as_slice()));
            Some(b.map_err(|e| RuleError {
                source: "RULES",
                line: 0,
                reason: format!("building the pattern matcher: {e}"),
            })?)
        };
        let n = compiled.len();
        let np = pat_rules.len();
        Ok(RuleSet {
            rules: compiled,
            ac,
            pat_rules,
            always,
            epoch: 0,
            rule_mark: alloc::vec![0; n],
            pat_mark: alloc::vec![0; np],
            cands: Vec::new(),
            hits: Vec::new(),
        })
    }

    /// Parses and compiles.
    pub fn parse(sources: &[(&'static str, &str)]) -> Result<RuleSet, RuleError> {
        RuleSet::new(crate::rules::parse_rules(sources)?)
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    pub fn rule(&self, i: usize) -> &Rule {
        &self.rules[i].rule
    }

    pub fn stats(&self, i: usize) -> RuleStats {
        self.rules[i].stats
    }

    /// Zeroes the per-rule counters and the detection_filter state.
    pub fn reset_stats(&mut self) {
        for r in &mut self.rules {
            r.stats = RuleStats::default();
            r.filter = FilterState::default();
        }
    }

    /// Number of distinct fast patterns in the Aho-Corasick automaton.
    pub fn patterns(&self) -> usize {
        self.pat_rules.len()
    }

    fn next_epoch(&mut self) -> u32 {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.rule_mark.iter_mut().for_each(|m| *m = 0);
            self.pat_mark.iter_mut().for_each(|m| *m = 0);
            self.epoch = 1;
        }
        self.epoch
    }

    /// Inspects one decoded packet at time `now_ns` (for detection_filter).
    pub fn inspect(&mut self, d: &Decoded<'_>, now_ns: i64, out: &mut Verdict) {
        out.events.clear();
        out.action = None;
        let epoch = self.next_epoch();
        self.cands.clear();
        if let Some(ac) = &self.ac {
            for m in ac.find_overlapping_iter(d.payload) {
                let pid = m.pattern().as_usize();
                if self.pat_mark[pid] == epoch {
                    continue;
                }
                self.pat_mark[pid] = epoch;
                for &r in &self.pat_rules[pid] {
                    if self.rule_mark[r as usize] != epoch {
                        self.rule_mark[r as usize] = epoch;
                        self.cands.push(r);
                    }
                }
            }
        }
        self.cands.extend_from_slice(&self.always);
        if self.cands.is_empty() {
            return;
        }
        self.cands.sort_unstable();
        self.hits.clear();
        let mut pass = false;
        let mut drop = false;
        for k in 0..self.cands.len() {
            let ri = self.cands[k] as usize;
            let cr = &mut self.rules[ri];
            if !rule_matches(cr, d) {
                continue;
            }
            cr.stats.matches += 1;
            if let Some(f) = cr.rule.filter {
                let host = match f.track {
                    Track::BySrc => d.src,
                    Track::ByDst => d.dst,
                };
                if !cr.filter.hit(&f, host, now_ns) {
                    continue;
                }
            }
            match cr.rule.action {
                Action::Pass => pass = true,
                Action::Drop => drop = true,
                Action::Alert => {}
            }
            self.hits.push(ri as u32);
        }
        if self.hits.is_empty() {
            return;
        }
        if pass {
            // Snort's default order: pass rules first; a passed packet
            // raises no alert and is not dropped.
            for &h in &self.hits {
                if self.rules[h as usize].rule.action == Action::Pass {
                    self.rules[h as usize].stats.events += 1;
                }
            }
            out.action = Some(Action::Pass);
            return;
        }
        for &h in &self.hits {
            self.rules[h as usize].stats.events += 1;
            out.events.push(h);
        }
        out.action = Some(if drop { Action::Drop } else { Action::Alert });
    }
}

fn proto_ok(p: Proto, d: &Decoded<'_>) -> bool {
    match p {
        Proto::Ip => true,
        Proto::Tcp => d.l4_ok && d.proto == PROTO_TCP,
        Proto::Udp => d.l4_ok && d.proto == PROTO_UDP,
        Proto::Icmp => d.l4_ok && d.proto == PROTO_ICMP,
    }
}

fn header_ok(r: &Rule, d: &Decoded<'_>) -> bool {
    let (sp, dp) = d.ports.unwrap_or((0, 0));
    let ports = matches!(r.proto, Proto::Tcp | Proto::Udp);
    let one = |sa: u32, sp: u16, da: u32, dp: u16| {
        r.src.matches(sa)
            && r.dst.matches(da)
            && (!ports || (r.sport.matches(sp) && r.dport.matches(dp)))
    };
    one(d.src, sp, d.dst, dp) || (r.bidir && one(d.dst, dp, d.src, sp))
}

/// The stateless flow approximation (documented in the element).
pub fn flow_dir(d: &Decoded<'_>) -> Option<FlowDir> {
    if let Some(f) = d.tcp_flags {
        let syn = f & 0x02 != 0;
        let ack = f & 0x10 != 0;
        if syn && !ack {
            return Some(FlowDir::ToServer);
        }
        if syn && ack {
            return Some(FlowDir::ToClient);
        }
    }
    let (sp, dp) = d.ports?;
    match sp.cmp(&dp) {
        core::cmp::Ordering::Greater => Some(FlowDir::ToServer),
        core::cmp::Ordering::Less => Some(FlowDir::ToClient),
        core::cmp::Ordering::Equal => None,
    }
}

/// `established`, statelessly: a TCP segment with ACK and without SYN;
/// every UDP packet. Other packets are neither established nor not.
pub fn established(d: &Decoded<'_>) -> Option<bool> {
    if let Some(f) = d.tcp_flags {
        return Some(f & 0x10 != 0 && f & 0x02 == 0);
    }
    if d.proto == PROTO_UDP && d.l4_ok {
        return Some(true);
    }
    None
}

fn flow_ok(r: &Rule, d: &Decoded<'_>) -> bool {
    if let Some(want) = r.flow.dir {
        if d.ports.is_none() {
            return false;
        }
        if let Some(got) = flow_dir(d) {
            if got != want {
                return false;
            }
        }
    }
    if let Some(want) = r.flow.established {
        match established(d) {
            Some(e) if e == want => {}
            _ => return false,
        }
    }
    true
}

fn rule_matches(cr: &mut CompiledRule, d: &Decoded<'_>) -> bool {
    let r = &cr.rule;
    if !proto_ok(r.proto, d) || !header_ok(r, d) || !flow_ok(r, d) {
        return false;
    }
    let mut tries = MAX_TRIES;
    if !contents_match(&r.contents, &cr.finders, d.payload, 0, &mut tries) {
        return false;
    }
    for p in &mut cr.pcres {
        let input = Input::new(d.payload).earliest(true);
        match p.re.search_half_with(&mut p.cache, &input) {
            Some(_) => {}
            None => return false,
        }
    }
    true
}

/// Finds `c` in `buf[start..end]` at or after `from`; returns the match
/// start.
fn find_in(
    c: &Content,
    f: Option<&memchr::memmem::Finder<'_>>,
    buf: &[u8],
    from: usize,
    end: usize,
) -> Option<usize> {
    let n = c.bytes.len();
    if from > end || end - from < n {
        return None;
    }
    let hay = &buf[from..end];
    match f {
        Some(f) => f.find(hay).map(|i| from + i),
        None => {
            let first = c.bytes[0];
            let (lo, up) = (first.to_ascii_lowercase(), first.to_ascii_uppercase());
            (0..=hay.len() - n)
                .find(|&i| {
                    let b = hay[i];
                    (b == lo || b == up) && hay[i..i + n].eq_ignore_ascii_case(&c.bytes)
                })
                .map(|i| from + i)
        }
    }
}

/// Snort's content semantics. An absolute content (`offset`/`depth`, or
/// neither) must lie in `[offset, offset+depth)`; a relative one in
/// `[cursor+distance, cursor+distance+within)`, where the cursor is the
/// end of the previous content's match. When a relative content fails,
/// the previous content is tried at its next occurrence.
fn contents_match(
    cs: &[Content],
    fs: &[Option<memchr::memmem::Finder<'static>>],
    buf: &[u8],
    cursor: usize,
    tries: &mut u32,
) -> bool {
    let Some(c) = cs.first() else {
        return true;
    };
    let len = buf.len() as i64;
    let (start, end) = if c.relative() {
        let s = cursor as i64 + c.distance.unwrap_or(0);
        let e = match c.within {
            Some(w) => s + w,
            None => len,
        };
        (s.max(0), e.min(len))
    } else {
        let s = c.offset.unwrap_or(0);
        let e = match c.depth {
            Some(dp) => s + dp,
            None => len,
        };
        (s.min(len), e.min(len))
    };
    if end < start {
        return false;
    }
    let (start, end) = (start as usize, end as usize);
    let next_relative = cs.get(1).is_some_and(|n| n.relative());
    let mut from = start;
    loop {
        if *tries == 0 {
            return false;
        }
        *tries -= 1;
        let Some(at) = find_in(c, fs[0].as_ref(), buf, from, end) else {
            return false;
        };
        if contents_match(&cs[1..], &fs[1..], buf, at + c.bytes.len(), tries) {
            return true;
        }
        if !next_relative {
            // The rest does not depend on where this one matched.
            return false;
        }
        from = at + 1;
    }
}
