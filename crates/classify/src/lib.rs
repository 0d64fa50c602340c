//! Pattern languages and compiled matchers behind Click's `Classifier`,
//! `IPClassifier` and `IPFilter` elements.
//!
//! Patterns are parsed into boolean formulas over masked 32-bit word tests
//! and compiled into a [`Program`]: a flat vector of instructions
//! `{offset, mask, value, yes, no}` forming a decision DAG (like Click's
//! `Classification::Wordwise::Program`). Matching a packet walks the DAG,
//! one load + AND + compare per step, with no string or AST work.
//!
//! # Languages
//!
//! * **Classifier**: space-separated `[!]OFFSET/HEXVALUE[%HEXMASK]` clauses
//!   (`?` = don't-care nibble, even number of digits, mask as long as the
//!   value), `-` (or an empty pattern) matches everything.
//! * **IPClassifier / IPFilter** (Click's tcpdump-like language):
//!   `[src|dst|src or dst|src and dst] host ADDR`, `... net ADDR/LEN`,
//!   `... net ADDR mask MASK`, `[SD] [tcp|udp] port PORT` (names such as
//!   `www`/`http`, `ssh`, `domain`/`dns`, ...), `ip proto PROTO` and the
//!   shorthands `tcp`, `udp`, `icmp`, `igmp`, `ipip`, `tcpudp`, `ip vers`,
//!   `ip hl`, `ip tos`, `ip dscp`, `ip ecn` (extension), `ip ect [N]`,
//!   `ip ce`, `ip ttl`, `ip len`, `ip id`, `ip frag`, `ip unfrag`,
//!   `tcp opt syn|fin|ack|rst|psh|urg` (or just `syn`, `tcp syn`, ...),
//!   `tcp win`, `icmp type TYPE` (names such as `echo`, `echo-reply`,
//!   `unreachable`, ...), `ip[POS]`, `ip[POS:LEN]`, `tcp[..]`, `udp[..]`,
//!   `icmp[..]`, `transp[..]`; optional `& MASK` and relations `==`, `=`,
//!   `!=`, `<`, `>`, `<=`, `>=`; `true`, `false`; connectives `and`/`&&`
//!   (or juxtaposition), `or`/`||`, `not`/`!`, parentheses and
//!   `COND ? A : B`. A whole pattern of `-`, `any` or `all` matches
//!   everything (`none`, an extension, matches nothing). Bare values take
//!   their type from the previous primitive (`src port 80 or 443`).
//!   Transport-layer primitives only match first fragments.
//!   Ethernet primitives (IPFilter/IPClassifier only read them through
//!   [`Program::matches_mac`]): `[src|dst|...] ETHERADDR` (a value that
//!   parses as an Ethernet address, `0:1:2:3:4:5`, and not as an IP
//!   address), `ether [src|dst|...] [host] ADDR` (the `ether` header
//!   keyword makes the value an Ethernet address), with an optional
//!   `& ETHERMASK`; `==`/`=` and `!=` only.
//!
//! # Offsets and short packets
//!
//! * `Classifier`: offsets are relative to the start of `data`.
//! * `IPClassifier`/`IPFilter`: `data` starts at the IP header; IP tests are
//!   relative to it, transport tests (ports, `tcp opt`, `icmp type`,
//!   `transp[..]`, ...) to the transport header at `IHL*4` (the IHL nibble of
//!   the first byte; an empty packet has no transport header bytes).
//!   Ethernet tests read the MAC header passed separately to
//!   [`Program::matches_mac`] (Click: the words at `mac_header() - 2 +
//!   OFF`); a packet without one, or with one too short for a word, is
//!   short for that word. Only programs with Ethernet tests
//!   ([`Program::needs_mac`]) take that checked walk.
//! * Like Click, an instruction whose masked bytes run past the end of the
//!   packet is "short": it takes a precomputed branch instead of comparing.
//!   The result is Click's semantics: every IPFilter *primitive* is false on
//!   a packet too short to hold the bytes it tests (so `src tcp port != 80`
//!   does not match a truncated TCP header), while an explicit `not`/`!`
//!   negates logically (so `not src tcp port 80` does match it). A negated
//!   Classifier clause (`!12/0800`) likewise matches a packet too short for
//!   the positive clause. Unlike Click, which checks IP-header offsets
//!   against a length measured from the transport header, every read is
//!   bounds-checked against its own base.
#![no_std]
extern crate alloc;

mod classifier;
mod compile;
mod expr;
mod ipfilter;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use click_lang::ArgContext;
use compile::{decode, Node, Target, DROP};
use expr::{transport_base, Expr};

/// The hot-path form of an instruction: 24 bytes, no branches to pick
/// the base, successors indexed by the test's outcome.
#[derive(Clone, Copy, Debug)]
struct Fast {
    off: u32,
    /// All ones for transport-relative words, zero for the others.
    tsel: u32,
    /// The mask and value in the packet's byte order (`to_be`), so the
    /// word read needs no swap.
    mask: u32,
    value: u32,
    /// [no, yes], instructions as byte offsets into the `fast` table
    /// (saving a multiplication per step), results as they are; pointer
    /// wide, so a step's offset needs no widening.
    next: [isize; 2],
}

/// Which element's conventions a program follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Classifier,
    Ip,
}

/// The [`Program::code`] of a packet that is dropped.
pub const DROP_CODE: u32 = !DROP as u32;

/// A result target as a [`Program::code`].
#[inline(always)]
fn result_code(t: Target) -> u32 {
    !t as u32
}

/// A compiled classification program.
#[derive(Clone, Debug)]
pub struct Program {
    /// The instructions, entry first (see [`compile::compile_rules`]).
    insns: Vec<Node>,
    fast: Vec<Fast>,
    /// The fast table specialised for a packet whose transport header is
    /// at 20 (an IP header without options; Classifier programs have no
    /// transport words): every offset is from the data start, `tsel` is
    /// zero, so a step skips the base selection.
    flat: Vec<Fast>,
    /// Packets at least this long hold every word `flat` reads.
    safe_flat: usize,
    /// The flat table applies when `data[0] & hl_mask == hl_want`
    /// (IP: the IHL nibble is 5; Classifier: always).
    hl_mask: u8,
    hl_want: u8,
    /// Packets at least this long hold every network-relative word...
    safe_net: usize,
    /// ... and, past the transport base, every transport-relative one.
    safe_transp: usize,
    /// Some instruction reads the MAC header (then `safe_flat` and
    /// `safe_net` are `usize::MAX`: no packet takes the unchecked walks,
    /// which know only the network and transport bases).
    mac: bool,
    entry: Target,
    noutputs: usize,
    kind: Kind,
    /// The source formulas, kept for [`Program::reference_matches`].
    rules: Vec<(Expr, Target)>,
    warnings: Vec<String>,
}

impl Program {
    /// Classifier patterns (one per output).
    pub fn compile_classifier(patterns: &[&str]) -> Result<Program, String> {
        let mut rules = Vec::with_capacity(patterns.len());
        for (i, p) in patterns.iter().enumerate() {
            rules.push((classifier::parse_pattern(i, p)?, compile::output(i)));
        }
        Ok(Program::build(
            rules,
            patterns.len(),
            Kind::Classifier,
            Vec::new(),
        ))
    }

    /// IPClassifier patterns (one per output).
    pub fn compile_ip_classifier(patterns: &[&str]) -> Result<Program, String> {
        Program::compile_ip_classifier_in(patterns, &ArgContext::none())
    }

    /// IPClassifier patterns, where addresses, prefixes and ports may be
    /// AddressInfo and PortInfo names as seen in `cx`.
    pub fn compile_ip_classifier_in(patterns: &[&str], cx: &ArgContext) -> Result<Program, String> {
        let mut rules = Vec::with_capacity(patterns.len());
        let mut warnings = Vec::new();
        for (i, p) in patterns.iter().enumerate() {
            let e = ipfilter::parse_pattern(i, p, &mut warnings, cx)?;
            rules.push((e, compile::output(i)));
        }
        Ok(Program::build(rules, patterns.len(), Kind::Ip, warnings))
    }

    /// IPFilter rules "ACTION PATTERN"; `noutputs` bounds numeric actions
    /// (error if out of range).
    pub fn compile_ip_filter(rules: &[&str], noutputs: usize) -> Result<Program, String> {
        Program::compile_ip_filter_in(rules, noutputs, &ArgContext::none())
    }

    /// IPFilter rules, where addresses, prefixes and ports may be
    /// AddressInfo and PortInfo names as seen in `cx`.
    pub fn compile_ip_filter_in(
        rules: &[&str],
        noutputs: usize,
        cx: &ArgContext,
    ) -> Result<Program, String> {
        let mut out = Vec::with_capacity(rules.len());
        let mut warnings = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            let (slot, e) = ipfilter::parse_rule(i, r, noutputs, &mut warnings, cx)?;
            let t = match slot {
                Some(s) => compile::output(s),
                None => DROP,
            };
            out.push((e, t));
        }
        Ok(Program::build(out, noutputs, Kind::Ip, warnings))
    }

    fn build(
        rules: Vec<(Expr, Target)>,
        noutputs: usize,
        kind: Kind,
        warnings: Vec<String>,
    ) -> Program {
        let sort = match kind {
            Kind::Classifier => compile::SortKey::Classifier,
            Kind::Ip => compile::SortKey::Ip,
        };
        let (insns, entry) = compile::compile_rules(&rules, true, Some(sort));
        let fast: Vec<Fast> = insns
            .iter()
            .map(|i: &Node| Fast {
                off: i.atom.off,
                tsel: if i.atom.transp { u32::MAX } else { 0 },
                mask: i.atom.mask.to_be(),
                value: i.atom.value.to_be(),
                next: [i.no as isize, i.yes as isize],
            })
            .collect();
        // Every successor is a valid index or a result: `matches` relies
        // on it to index without checks.
        assert!(
            fast.iter()
                .flat_map(|f| f.next)
                .chain([entry as isize])
                .all(|t| t < 0 || (t as usize) < fast.len()),
            "classifier program with a dangling jump"
        );
        assert!(fast.len() <= i32::MAX as usize / core::mem::size_of::<Fast>());
        let byte_off = |t: isize| {
            if t < 0 {
                t
            } else {
                t * core::mem::size_of::<Fast>() as isize
            }
        };
        let fast: Vec<Fast> = fast
            .into_iter()
            .map(|f| Fast {
                next: f.next.map(byte_off),
                ..f
            })
            .collect();
        // The flat table: transport words moved to their offset in a packet
        // whose IP header has no options.
        let flat: Vec<Fast> = fast
            .iter()
            .map(|f| Fast {
                off: if f.tsel != 0 {
                    f.off.saturating_add(20)
                } else {
                    f.off
                },
                tsel: 0,
                ..*f
            })
            .collect();
        let mac = insns.iter().any(|i| i.atom.mac);
        let safe_flat = if mac {
            usize::MAX
        } else {
            flat.iter().map(|f| f.off as usize + 4).max().unwrap_or(0)
        };
        let (hl_mask, hl_want) = match kind {
            Kind::Ip => (0x0f, 5),
            Kind::Classifier => (0, 0),
        };
        let reach = |transp: bool| {
            insns
                .iter()
                .filter(|i| i.atom.transp == transp)
                .map(|i| i.atom.off as usize + 4)
                .max()
                .unwrap_or(0)
        };
        Program {
            safe_net: if mac { usize::MAX } else { reach(false) },
            safe_transp: reach(true),
            mac,
            insns,
            fast,
            flat,
            safe_flat,
            hl_mask,
            hl_want,
            entry,
            noutputs,
            kind,
            rules,
            warnings,
        }
    }

    /// Classifier: `data` is the whole packet (from its data start).
    /// IP variants: `data` is the packet starting at its network (IP) header.
    /// Returns the output port, or None to drop.
    ///
    /// A program that [needs the MAC header](Self::needs_mac) sees none
    /// here (its MAC words are short); use
    /// [`matches_mac`](Self::matches_mac) to give it one.
    #[inline(always)]
    pub fn matches(&self, data: &[u8]) -> Option<usize> {
        if self.entry >= 0 && self.flat_ok(data) {
            // SAFETY: `flat_ok` checked the length against `safe_flat`.
            return decode(unsafe { self.walk_flat(data.as_ptr()) } as Target);
        }
        if self.entry >= 0 {
            let tbase = if self.kind == Kind::Ip {
                transport_base(data)
            } else {
                0
            };
            if data.len() >= self.safe_net && data.len() >= tbase + self.safe_transp {
                // Click's "safe length": every word any instruction reads
                // is inside the packet, so the walk needs no bounds checks.
                // SAFETY: as just checked.
                return decode(unsafe { self.walk(data.as_ptr(), tbase) });
            }
        }
        self.matches_short(&[], data)
    }

    /// True if the program tests words of the MAC header (IPFilter's
    /// Ethernet primitives: `ether host ADDR`, `src ADDR`, ...). Such a
    /// program runs only the checked walk, and sees the MAC header only
    /// through [`matches_mac`](Self::matches_mac) and
    /// [`code_mac`](Self::code_mac).
    #[inline]
    pub fn needs_mac(&self) -> bool {
        self.mac
    }

    /// [`matches`](Self::matches) for an IP packet whose MAC header is
    /// `mac` (the bytes from the MAC header to the network header; empty if
    /// the packet has none) and whose network header starts `data`. A MAC
    /// word the header is too short for takes the instruction's short
    /// branch, as other words do on truncated packets.
    pub fn matches_mac(&self, mac: &[u8], data: &[u8]) -> Option<usize> {
        if self.mac {
            self.matches_short(mac, data)
        } else {
            self.matches(data)
        }
    }

    /// [`matches_mac`](Self::matches_mac) as a [`code`](Self::code).
    pub fn code_mac(&self, mac: &[u8], data: &[u8]) -> u32 {
        match self.matches_mac(mac, data) {
            Some(p) => p as u32,
            None => DROP_CODE,
        }
    }

    /// [`matches`](Self::matches) for a program that decides without a
    /// test, reads the MAC header `mac`, or a packet shorter than the safe
    /// length (every read checked).
    #[inline(never)]
    fn matches_short(&self, mac: &[u8], data: &[u8]) -> Option<usize> {
        let mut t = self.entry;
        if t < 0 {
            return decode(t);
        }
        let v = self.view(mac, data);
        loop {
            t = self.insns[t as usize].step(&v);
            if t < 0 {
                return decode(t);
            }
        }
    }

    /// [`matches`](Self::matches) for four packets at once. The walks are
    /// independent, so running them in lockstep lets the processor overlap
    /// their chains of dependent loads (one walk alone waits on every
    /// step's word before it knows the next step).
    #[inline]
    pub fn matches4(&self, d: [&[u8]; 4]) -> [Option<usize>; 4] {
        self.matches_n(d)
    }

    /// The walk over the fast table from the entry to a result, for a
    /// packet that holds every word the program reads: one load, mask and
    /// compare per step, the next step picked by the outcome.
    ///
    /// # Safety
    /// `self.entry >= 0`, and the packet at `ptr` is at least
    /// `safe_net` bytes long and at least `tbase + safe_transp`.
    #[inline(always)]
    unsafe fn walk(&self, ptr: *const u8, tbase: usize) -> Target {
        let mut t = self.fast_entry();
        loop {
            // SAFETY: `t` is an instruction's byte offset (`t >= 0`
            // here, and `build` checked every successor and the entry
            // point).
            let f = unsafe { self.node(t) };
            let start = f.off as usize + (tbase & f.tsel as usize);
            // SAFETY: start + 4 <= safe_net or tbase + safe_transp, both
            // at most the packet's length (the caller's promise);
            // read_unaligned has no alignment requirement.
            let w = unsafe { ptr.add(start).cast::<u32>().read_unaligned() };
            t = f.next[usize::from(w & f.mask == f.value)];
            if t < 0 {
                return t as Target;
            }
        }
    }

    /// The fast-table instruction at byte offset `t`.
    ///
    /// # Safety
    /// `t` must be a byte offset taken from a `Fast::next` or made by
    /// [`Program::fast_entry`] (checked in `build`), not a result.
    #[inline(always)]
    unsafe fn node(&self, t: isize) -> &Fast {
        &*self
            .fast
            .as_ptr()
            .cast::<u8>()
            .add(t as usize)
            .cast::<Fast>()
    }

    /// The entry instruction as a fast-table byte offset (`entry >= 0`).
    #[inline(always)]
    fn fast_entry(&self) -> isize {
        self.entry as isize * core::mem::size_of::<Fast>() as isize
    }

    /// [`matches4`](Self::matches4) for `N` packets.
    #[inline]
    pub fn matches_n<const N: usize>(&self, d: [&[u8]; N]) -> [Option<usize>; N] {
        self.codes_n(d).map(|c| {
            if c == DROP_CODE {
                None
            } else {
                Some(c as usize)
            }
        })
    }

    /// [`matches`](Self::matches) as a code: the output port, or
    /// [`DROP_CODE`] to drop.
    #[inline]
    pub fn code(&self, data: &[u8]) -> u32 {
        if self.entry >= 0 && self.flat_ok(data) {
            // SAFETY: `flat_ok` checked the length against `safe_flat`.
            return result_code(unsafe { self.walk_flat(data.as_ptr()) } as Target);
        }
        match self.matches(data) {
            Some(p) => p as u32,
            None => DROP_CODE,
        }
    }

    /// [`code`](Self::code) for `N` packets at once. The walks are
    /// independent, so running them in lockstep lets the processor overlap
    /// their chains of dependent loads (one walk alone waits on every
    /// step's word before it knows the next step).
    #[inline]
    pub fn codes_n<const N: usize>(&self, d: [&[u8]; N]) -> [u32; N] {
        let entry = self.entry;
        if entry < 0 {
            return [result_code(entry); N];
        }
        if d.iter().fold(true, |a, x| a & self.flat_ok(x)) {
            // SAFETY: `flat_ok` checked every packet's length against
            // `safe_flat`, and `entry >= 0`.
            let t = unsafe { self.walk_flat_n(d.map(|x| x.as_ptr())) };
            return t.map(|t| result_code(t as Target));
        }
        d.map(|x| self.code(x))
    }

    /// True if the flat table applies to `data` (an IP packet without
    /// options, or any Classifier packet) and `data` holds every word it
    /// reads.
    #[inline(always)]
    fn flat_ok(&self, data: &[u8]) -> bool {
        data.len() >= self.safe_flat
            && data
                .first()
                .is_some_and(|b| b & self.hl_mask == self.hl_want)
    }

    /// The flat-table instruction at byte offset `t`.
    ///
    /// # Safety
    /// As for [`node`](Self::node) (`flat` has the layout of `fast`).
    #[inline(always)]
    unsafe fn flat_node(&self, t: isize) -> &Fast {
        // SAFETY: the caller's promise; `flat` and `fast` have the same
        // length and successors.
        unsafe {
            &*self
                .flat
                .as_ptr()
                .cast::<u8>()
                .add(t as usize)
                .cast::<Fast>()
        }
    }

    /// The walk over the flat table: one load, mask and compare per step.
    ///
    /// # Safety
    /// `self.entry >= 0`, and the packet at `ptr` is at least `safe_flat`
    /// bytes long (and, for IP programs, its IHL is 5).
    #[inline(always)]
    unsafe fn walk_flat(&self, ptr: *const u8) -> isize {
        let mut t = self.fast_entry();
        loop {
            // SAFETY: `t` is an instruction's byte offset (see `walk`).
            let f = unsafe { self.flat_node(t) };
            // SAFETY: `f.off + 4 <= safe_flat <=` the packet's length.
            let w = unsafe { ptr.add(f.off as usize).cast::<u32>().read_unaligned() };
            t = f.next[usize::from(w & f.mask == f.value)];
            if t < 0 {
                return t;
            }
        }
    }

    /// [`walk_flat`](Self::walk_flat) for `N` packets in lockstep.
    ///
    /// # Safety
    /// As for [`walk_flat`](Self::walk_flat), for every packet.
    #[inline(always)]
    unsafe fn walk_flat_n<const N: usize>(&self, ptr: [*const u8; N]) -> [isize; N] {
        let mut t = [self.fast_entry(); N];
        // Step all while all are walking (the usual case: packets of a
        // batch tend to take the same path, and end together) ...
        while t.iter().fold(0, |a, &x| a | x) >= 0 {
            for i in 0..N {
                // SAFETY: as in `walk_flat`.
                let f = unsafe { self.flat_node(t[i]) };
                // SAFETY: as in `walk_flat`.
                let w = unsafe { ptr[i].add(f.off as usize).cast::<u32>().read_unaligned() };
                t[i] = f.next[usize::from(w & f.mask == f.value)];
            }
        }
        // ... then finish the others one at a time.
        for i in 0..N {
            while t[i] >= 0 {
                // SAFETY: as above.
                let f = unsafe { self.flat_node(t[i]) };
                // SAFETY: as above.
                let w = unsafe { ptr[i].add(f.off as usize).cast::<u32>().read_unaligned() };
                t[i] = f.next[usize::from(w & f.mask == f.value)];
            }
        }
        t
    }

    /// The packet as the instructions see it (Classifier programs have no
    /// transport base).
    fn view<'a>(&self, mac: &'a [u8], data: &'a [u8]) -> expr::View<'a> {
        let tbase = if self.kind == Kind::Ip {
            transport_base(data)
        } else {
            0
        };
        expr::View { mac, data, tbase }
    }

    /// Number of instructions executed to classify `data` (for tuning and
    /// tests).
    pub fn steps(&self, data: &[u8]) -> usize {
        let mut t = self.entry;
        let mut n = 0;
        // no MAC header here: MAC words are short
        let v = self.view(&[], data);
        while t >= 0 {
            n += 1;
            t = self.insns[t as usize].step(&v);
        }
        n
    }

    /// Slow reference evaluation of the source patterns (first matching
    /// rule wins), independent of the compiled program. For testing.
    #[doc(hidden)]
    pub fn reference_matches(&self, data: &[u8]) -> Option<usize> {
        self.reference_matches_mac(&[], data)
    }

    /// [`reference_matches`](Self::reference_matches) with the MAC header
    /// `mac`, as for [`matches_mac`](Self::matches_mac). For testing.
    #[doc(hidden)]
    pub fn reference_matches_mac(&self, mac: &[u8], data: &[u8]) -> Option<usize> {
        let v = self.view(mac, data);
        for (e, t) in &self.rules {
            if e.eval(&v) {
                return decode(*t);
            }
        }
        None
    }

    /// Number of output ports.
    pub fn noutputs(&self) -> usize {
        self.noutputs
    }

    /// Number of instructions in the compiled program.
    pub fn len(&self) -> usize {
        self.insns.len()
    }

    /// True if the program has no instructions (it sends every packet to
    /// the same place).
    pub fn is_empty(&self) -> bool {
        self.insns.is_empty()
    }

    /// Non-fatal diagnostics produced while compiling (Click prints these
    /// as warnings), e.g. "pattern 0: relation '> 65535' is always false
    /// (range 0-65535)".
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Human-readable program, like Click's `program` handler. IP programs
    /// show offsets as Click HEAD's IPClassifier does: MAC-header words
    /// below 256 (from 2 bytes before the MAC header), the IP header at
    /// 256, the transport header at 512; the safe length counts those too.
    pub fn dump(&self) -> String {
        let ip = self.kind == Kind::Ip;
        let base = |i: &Node| -> u32 {
            match (ip, i.atom.mac, i.atom.transp) {
                (false, _, _) | (true, true, _) => 0,
                (true, false, false) => 256,
                (true, false, true) => 512,
            }
        };
        let mut s = String::new();
        let tgt = |t: Target| -> String {
            if t >= 0 {
                format!("step {t}")
            } else {
                match decode(t) {
                    Some(p) => format!("[{p}]"),
                    None => String::from("[X]"),
                }
            }
        };
        if self.entry < 0 {
            let _ = writeln!(s, "all->{}", tgt(self.entry));
        }
        for (i, ins) in self.insns.iter().enumerate() {
            let off = format!("{}", base(ins) + ins.atom.off);
            // Click: `(i < 10 ? " " : "") << i << ' '`, then "%3d/"
            let _ = write!(
                s,
                "{}{} {:>3}/{:08x}%{:08x}  yes->{}  no->{}",
                if i < 10 { " " } else { "" },
                i,
                off,
                ins.atom.value,
                ins.atom.mask,
                tgt(ins.yes),
                tgt(ins.no)
            );
            if ins.short_yes {
                s.push_str("  short->yes");
            }
            s.push('\n');
        }
        let safe = self
            .insns
            .iter()
            .map(|i| base(i) + i.atom.off + u32::from(i.atom.nbytes()))
            .max()
            .unwrap_or(0);
        let _ = writeln!(s, "safe length {safe}");
        let _ = writeln!(s, "alignment offset 0");
        s
    }
}

#[cfg(test)]
mod tests;
