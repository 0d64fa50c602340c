//! Click `Classifier` pattern language: `OFFSET/VALUE[%MASK]` clauses.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::expr::Expr;

fn nibble(c: u8) -> (u32, u32) {
    match c {
        b'?' => (0, 0),
        b'0'..=b'9' => ((c - b'0') as u32, 0xF),
        b'a'..=b'f' => ((c - b'a' + 10) as u32, 0xF),
        b'A'..=b'F' => ((c - b'A' + 10) as u32, 0xF),
        _ => (0, 0),
    }
}

fn is_hex(c: u8) -> bool {
    c.is_ascii_hexdigit() || c == b'?'
}

/// Largest accepted clause offset.
pub(crate) const MAX_OFFSET: u32 = 0xFFFF;

/// Parses one Classifier pattern (pattern number `slot`, for messages).
pub(crate) fn parse_pattern(slot: usize, pat: &str) -> Result<Expr, String> {
    let s = pat.as_bytes();
    let len = s.len();
    let mut i = 0;
    if s == b"-" {
        return Ok(Expr::Const(true));
    }
    let mut clauses = Vec::new();
    let err = |m: &str| Err(format!("pattern {slot}: {m}"));
    while i < len {
        while i < len && s[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= len {
            break;
        }
        let mut negated = false;
        if s[i] == b'!' {
            negated = true;
            i += 1;
            while i < len && s[i].is_ascii_whitespace() {
                i += 1;
            }
        }
        if i >= len || !s[i].is_ascii_digit() {
            return err("expected a digit");
        }
        let mut offset: u32 = 0;
        while i < len && s[i].is_ascii_digit() {
            offset = offset
                .saturating_mul(10)
                .saturating_add((s[i] - b'0') as u32);
            i += 1;
        }
        if offset > MAX_OFFSET {
            return err(&format!("offset {offset} out of range (max {MAX_OFFSET})"));
        }
        if i >= len || s[i] != b'/' {
            return err("expected '/'");
        }
        i += 1;
        let value_pos = i;
        while i < len && is_hex(s[i]) {
            i += 1;
        }
        let value_end = i;
        let mut mask_range = None;
        if i < len && s[i] == b'%' {
            i += 1;
            let mp = i;
            while i < len && is_hex(s[i]) {
                i += 1;
            }
            mask_range = Some((mp, i));
        }
        let vlen = value_end - value_pos;
        if vlen < 2 {
            return err("value has less than 2 hex digits");
        }
        if !vlen.is_multiple_of(2) {
            return err("value has odd number of hex digits");
        }
        if let Some((mp, me)) = mask_range {
            let mlen = me - mp;
            if mlen != vlen {
                let which = if mlen > vlen { "many" } else { "few" };
                return err(&format!("mask has too {which} hex digits"));
            }
        }
        // Split into aligned 32-bit words, as Click does.
        let mut words: Vec<(u32, u32, u32)> = Vec::new(); // (word off, mask, value)
        let mut off = offset;
        let mut k = 0;
        while value_pos + k < value_end {
            let (vh, mh) = nibble(s[value_pos + k]);
            let (vl, ml) = nibble(s[value_pos + k + 1]);
            let mut v = (vh << 4) | vl;
            let mut m = (mh << 4) | ml;
            if let Some((mp, _)) = mask_range {
                let (xh, xmh) = nibble(s[mp + k]);
                let (xl, xml) = nibble(s[mp + k + 1]);
                m &= ((xh << 4) | xl) & ((xmh << 4) | xml);
            }
            v &= m;
            let woff = off & !3;
            let shift = 8 * (3 - (off & 3));
            match words.last_mut() {
                Some(w) if w.0 == woff => {
                    w.1 |= m << shift;
                    w.2 |= v << shift;
                }
                _ => words.push((woff, m << shift, v << shift)),
            }
            off += 1;
            k += 2;
        }
        let clause = Expr::and(
            words
                .into_iter()
                .map(|(o, m, v)| Expr::atom(false, o, m, v))
                .collect(),
        );
        clauses.push(if negated { clause.not() } else { clause });
    }
    Ok(Expr::and(clauses))
}
