//! Rewriting patterns (Click's IPRewriterPattern) and INPUTSPECs.

use super::*;
use crate::common::rng::Rng;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use click_lang::ArgContext;
use core::cell::{Cell, RefCell};
use core::net::Ipv4Addr;

/// What a port search asks of the table it allocates in: is this reply
/// flow taken, and (for a NAPT pattern's address) which ports no entry
/// uses at all.
pub trait Taken {
    fn taken(&self, key: &FlowId) -> bool;
    /// The port use of `addr`, when the table keeps one.
    fn port_use(&self, _addr: u32) -> Option<&PortUse> {
        None
    }
}

impl<F: Fn(&FlowId) -> bool> Taken for F {
    fn taken(&self, key: &FlowId) -> bool {
        self(key)
    }
}

/// The smallest NAPT port range worth a [`PortUse`] (128 KiB).
const PORT_USE_MIN_RANGE: u32 = 256;

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
    #[inline]
    pub fn rewrite<T: Taken + ?Sized>(
        &self,
        flowid: &FlowId,
        taken: &T,
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
        // which ports of the address no flow uses (no lookup needed for
        // those: no entry can have their reply flow ID)
        let ports = if self.is_napt && self.saddr != 0 && top >= PORT_USE_MIN_RANGE - 1 {
            taken.port_use(r.saddr)
        } else {
            None
        };
        let free = |lookup: &FlowId| match ports {
            Some(u) if !u.in_use(lookup.dport) => true,
            _ => !taken.taken(lookup),
        };
        // Click prefers the packet's own source port (it computes this
        // offset from the port for Basic NAT too)
        if self.same_first {
            let val = (flowid.sport as u32).wrapping_sub(base);
            if val <= top {
                lookup.dport = flowid.sport;
                if free(&lookup) {
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
        // In random mode, the first port from the random one on that no
        // flow uses at all, if there is one: Click takes the first that
        // no flow to this destination uses, a lookup a port tried (about
        // nine in a busy pool); this keeps a public port to one flow
        // (endpoint-independent) while the pool lasts, and only then
        // shares ports between destinations as Click does.
        if let (Some(u), false) = (ports, self.sequential) {
            let (lo, hi) = (base as u16, (base + top) as u16);
            if let Some(p) = u.first_unused((base + val) as u16, lo, hi) {
                lookup.dport = p;
                return Some(self.found(r, lookup, p as u32 - base));
            }
        }
        let mut count = 0u32;
        loop {
            if self.is_napt {
                lookup.dport = base.wrapping_add(val) as u16;
            } else {
                lookup.daddr = base.wrapping_add(val);
            }
            if free(&lookup) {
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
    pub fn rewrite_flowid<T: Taken + ?Sized>(
        &mut self,
        flowid: &FlowId,
        out: &mut FlowId,
        taken: &T,
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
