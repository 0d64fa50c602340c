//! Boolean expressions over masked 32-bit word tests ("atoms").
//!
//! Every pattern language in this crate lowers to an [`Expr`]. The leaves
//! are [`Atom`]s: "the big-endian 32-bit word at OFFSET (relative to the
//! network header, to the transport header or to the MAC header), ANDed
//! with MASK, equals VALUE". Each atom occurrence also carries the boolean it evaluates to when
//! the packet is too short to hold every masked byte of the word (Click's
//! `short_output`), which is how Click's out-of-bounds semantics are
//! modelled exactly: a negation that "flips short" (used inside primitives
//! such as `src port != 80`) also flips the short value of every atom below
//! it, so such primitives are *false* on truncated packets, while an
//! explicit `not`/`!` in the pattern is a plain logical negation.

use alloc::boxed::Box;
use alloc::vec::Vec;

/// One masked word comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Atom {
    /// Offset relative to the transport header (`IHL*4` bytes past the
    /// network header) instead of the network header / data start.
    pub transp: bool,
    /// Offset relative to the MAC header as Click's IPFilter counts it: the
    /// word at `off` starts [`MAC_SKEW`] bytes before `mac_header + off`
    /// (so an Ethernet header's destination is the words at 0 and 4, its
    /// source those at 8 and 12). Never together with `transp`.
    pub mac: bool,
    /// Byte offset of the word.
    pub off: u32,
    pub mask: u32,
    /// Always pre-masked (`value & mask == value`).
    pub value: u32,
}

impl Atom {
    pub(crate) fn new(transp: bool, off: u32, mask: u32, value: u32) -> Atom {
        Atom {
            transp,
            mac: false,
            off,
            mask,
            value: value & mask,
        }
    }

    /// Number of leading bytes of the word that must be present in the
    /// packet (Click's `required_length() - offset`).
    pub(crate) fn nbytes(&self) -> u8 {
        nbytes(self.mask)
    }

    /// A MAC-header-relative word test (see [`Atom::mac`]).
    pub(crate) fn new_mac(off: u32, mask: u32, value: u32) -> Atom {
        Atom {
            mac: true,
            ..Atom::new(false, off, mask, value)
        }
    }

    /// The same word with another mask and value.
    pub(crate) fn new_like(a: &Atom, mask: u32, value: u32) -> Atom {
        Atom {
            mask,
            value: value & mask,
            ..*a
        }
    }

    /// Both test the same word: same base, same offset.
    pub(crate) fn same_word(&self, o: &Atom) -> bool {
        self.transp == o.transp && self.mac == o.mac && self.off == o.off
    }

    /// Both tests as one (`W & M1 == V1 && W & M2 == V2` is
    /// `W & (M1|M2) == V1|V2`); `None` if they read different words or
    /// want different values where their masks meet (never both true).
    pub(crate) fn conjoin(&self, o: &Atom) -> Option<Atom> {
        (self.same_word(o) && (self.value ^ o.value) & self.mask & o.mask == 0)
            .then(|| Atom::new_like(self, self.mask | o.mask, self.value | o.value))
    }

    /// Reads the word; `None` if the packet is too short.
    #[inline]
    pub(crate) fn read(&self, v: &View) -> Option<u32> {
        if self.mac {
            read_mac_word(v.mac, self.off, self.mask)
        } else {
            read_word(v.data, self.transp, self.off, self.mask, v.tbase)
        }
    }

    /// Evaluates the atom: `Some(result)`, or `None` when short.
    pub(crate) fn test(&self, v: &View) -> Option<bool> {
        self.read(v).map(|w| w & self.mask == self.value)
    }
}

/// A packet as the atoms see it.
pub(crate) struct View<'a> {
    /// The MAC header (empty if the packet has none).
    pub mac: &'a [u8],
    /// The packet from its network header (Classifier: from its start).
    pub data: &'a [u8],
    /// The transport header's offset in `data`.
    pub tbase: usize,
}

/// MAC-relative offsets count from this many bytes before the MAC header
/// (Click's IPFilter reads `mac_header() - 2 + off`, which aligns the
/// words after the 14-byte Ethernet header).
pub(crate) const MAC_SKEW: usize = 2;

/// Reads the big-endian word at MAC offset `off` (see [`Atom::mac`]) from
/// the MAC header `mac`. As for [`read_word`], the word is short (`None`)
/// when the MAC header ends before its last masked byte; the [`MAC_SKEW`]
/// bytes before the header (which Click reads from the headroom, and which
/// the words of Ethernet primitives mask off) read as zero.
#[inline]
pub(crate) fn read_mac_word(mac: &[u8], off: u32, mask: u32) -> Option<u32> {
    let off = off as usize;
    if off + nbytes(mask) as usize > mac.len() + MAC_SKEW {
        return None;
    }
    let mut bytes = [0u8; 4];
    for (i, b) in bytes.iter_mut().enumerate() {
        if let Some(&x) = (off + i).checked_sub(MAC_SKEW).and_then(|p| mac.get(p)) {
            *b = x;
        }
    }
    Some(u32::from_be_bytes(bytes))
}

pub(crate) fn nbytes(mask: u32) -> u8 {
    if mask == 0 {
        0
    } else if mask & 0xFF != 0 {
        4
    } else if mask & 0xFF00 != 0 {
        3
    } else if mask & 0xFF_0000 != 0 {
        2
    } else {
        1
    }
}

/// Transport header base for a packet starting at its IP header.
#[inline]
pub(crate) fn transport_base(data: &[u8]) -> usize {
    match data.first() {
        Some(b) => ((b & 0xF) as usize) * 4,
        None => 0,
    }
}

/// Reads the big-endian word at `base + off`; bytes past the packet end
/// read as zero as long as the mask ignores them, otherwise `None` (short).
#[inline]
pub(crate) fn read_word(
    data: &[u8],
    transp: bool,
    off: u32,
    mask: u32,
    tbase: usize,
) -> Option<u32> {
    let start = off as usize + if transp { tbase } else { 0 };
    if let Some(b) = data.get(start..start + 4) {
        return Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    }
    let need = nbytes(mask) as usize;
    if start + need > data.len() {
        return None;
    }
    let mut bytes = [0u8; 4];
    for (i, b) in bytes.iter_mut().enumerate() {
        if let Some(&x) = data.get(start + i) {
            *b = x;
        }
    }
    Some(u32::from_be_bytes(bytes))
}

/// A boolean formula over atoms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Expr {
    Const(bool),
    /// An atom and the value it takes on short packets.
    Atom(Atom, bool),
    Not(Box<Expr>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    /// `cond ? then : else`.
    Ite(Box<Expr>, Box<Expr>, Box<Expr>),
}

impl Expr {
    /// A fresh atom test (false on short packets). A zero mask is `true`.
    pub(crate) fn atom(transp: bool, off: u32, mask: u32, value: u32) -> Expr {
        if mask == 0 {
            Expr::Const(true)
        } else {
            Expr::Atom(Atom::new(transp, off, mask, value), false)
        }
    }

    /// A fresh MAC-header atom test (see [`Atom::mac`]), false on packets
    /// whose MAC header is too short (or absent). A zero mask is `true`.
    pub(crate) fn mac_atom(off: u32, mask: u32, value: u32) -> Expr {
        if mask == 0 {
            Expr::Const(true)
        } else {
            Expr::Atom(Atom::new_mac(off, mask, value), false)
        }
    }

    /// Plain logical negation (Click's `negate_subtree(tree)`).
    pub(crate) fn not(self) -> Expr {
        match self {
            Expr::Const(b) => Expr::Const(!b),
            Expr::Not(e) => *e,
            e => Expr::Not(Box::new(e)),
        }
    }

    /// Negation that also flips short-packet behaviour
    /// (Click's `negate_subtree(tree, true)`).
    pub(crate) fn not_flip(mut self) -> Expr {
        self.flip_short();
        self.not()
    }

    fn flip_short(&mut self) {
        match self {
            Expr::Const(_) => {}
            Expr::Atom(_, s) => *s = !*s,
            Expr::Not(e) => e.flip_short(),
            Expr::And(v) | Expr::Or(v) => v.iter_mut().for_each(Expr::flip_short),
            Expr::Ite(a, b, c) => {
                a.flip_short();
                b.flip_short();
                c.flip_short();
            }
        }
    }

    pub(crate) fn and(v: Vec<Expr>) -> Expr {
        let mut out = Vec::with_capacity(v.len());
        for e in v {
            match e {
                Expr::Const(true) => {}
                Expr::Const(false) => return Expr::Const(false),
                Expr::And(inner) => out.extend(inner),
                e => out.push(e),
            }
        }
        match out.len() {
            0 => Expr::Const(true),
            1 => out.pop().unwrap_or(Expr::Const(true)),
            _ => Expr::And(out),
        }
    }

    pub(crate) fn or(v: Vec<Expr>) -> Expr {
        let mut out = Vec::with_capacity(v.len());
        for e in v {
            match e {
                Expr::Const(false) => {}
                Expr::Const(true) => return Expr::Const(true),
                Expr::Or(inner) => out.extend(inner),
                e => out.push(e),
            }
        }
        match out.len() {
            0 => Expr::Const(false),
            1 => out.pop().unwrap_or(Expr::Const(false)),
            _ => Expr::Or(out),
        }
    }

    pub(crate) fn ite(c: Expr, a: Expr, b: Expr) -> Expr {
        match c {
            Expr::Const(true) => a,
            Expr::Const(false) => b,
            c => Expr::Ite(Box::new(c), Box::new(a), Box::new(b)),
        }
    }

    /// Reference (tree-walking) evaluation; used by tests to check the
    /// compiled program.
    pub(crate) fn eval(&self, v: &View) -> bool {
        match self {
            Expr::Const(b) => *b,
            Expr::Atom(a, s) => a.test(v).unwrap_or(*s),
            Expr::Not(e) => !e.eval(v),
            Expr::And(w) => w.iter().all(|e| e.eval(v)),
            Expr::Or(w) => w.iter().any(|e| e.eval(v)),
            Expr::Ite(c, a, b) => {
                if c.eval(v) {
                    a.eval(v)
                } else {
                    b.eval(v)
                }
            }
        }
    }
}
