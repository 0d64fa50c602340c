//! Click's text forms of IP and TCP options (as the IP summary dump
//! elements read and write them), Click's `cp_integer`, and MD5 (for the
//! `payload_md5` fields).
//!
//! IP options print as `;`-separated items: `rr{A,B^C}` (the `^` marks the
//! pointer; `+N` after the brace counts free slots), `ssrr{...}`,
//! `lsrr{...}`, `ts{...}` / `ts.ip{A=T,...}` / `ts.preip{...}` / `ts.N{...}`
//! (timestamps, `!` for a set top bit, `++N` the overflow count), and
//! `TYPE=B:B:...` for anything else; `nop` and `eol` are read (and printed
//! when padding is asked for). TCP options: `mss1460`, `wscale7`, `sackok`,
//! `sackA-B`, `tsA:B`, `nop`, `eol`, `TYPE=B:B:...`. On input, items may be
//! separated by `,` or `;`. A malformed option area prints as `?`.

use std::fmt::Write as _;

/// Option classes (Click's `DO_IPOPT_*` / `DO_TCPOPT_*` masks).
pub const DO_PADDING: u32 = 1;
pub const DO_IPOPT_ROUTE: u32 = 2;
pub const DO_TCPOPT_MSS: u32 = 2;
pub const DO_TCPOPT_WSCALE: u32 = 4;
pub const DO_TCPOPT_SACK: u32 = 8;
pub const DO_TCPOPT_TIMESTAMP: u32 = 16;
pub const DO_UNKNOWN: u32 = 32;
pub const DO_ALL: u32 = 0xFFFF_FFFF;
/// Everything but padding (what `ip_opt` and `tcp_opt` print).
pub const DO_ALL_NOPAD: u32 = 0xFFFF_FFFE;
/// Everything but padding and timestamps (`tcp_ntopt`).
pub const DO_TCPOPT_NTALL: u32 = 0xFFFF_FFEE;

const IPOPT_EOL: u8 = 0;
const IPOPT_NOP: u8 = 1;
const IPOPT_RR: u8 = 7;
const IPOPT_TS: u8 = 68;
const IPOPT_LSRR: u8 = 131;
const IPOPT_SSRR: u8 = 137;

const TCPOPT_EOL: u8 = 0;
const TCPOPT_NOP: u8 = 1;
const TCPOPT_MAXSEG: u8 = 2;
const TCPOPT_WSCALE: u8 = 3;
const TCPOPT_SACK_PERMITTED: u8 = 4;
const TCPOPT_SACK: u8 = 5;
const TCPOPT_TIMESTAMP: u8 = 8;

/// Click's `cp_integer(begin, end, base, &result)` for unsigned values:
/// the value of the digits at `s[i..]` (saturating; `None` if there are
/// none) and the index after them. Base 0 takes `0x` for hexadecimal and a
/// leading `0` for octal.
pub fn cp_uint(s: &[u8], i: usize, base: u32) -> (Option<u64>, usize) {
    let mut j = i;
    let mut base = base;
    if base == 0 {
        if j + 2 < s.len()
            && s[j] == b'0'
            && (s[j + 1] | 0x20) == b'x'
            && s[j + 2].is_ascii_hexdigit()
        {
            j += 2;
            base = 16;
        } else if j < s.len() && s[j] == b'0' {
            base = 8;
        } else {
            base = 10;
        }
    } else if base == 16
        && j + 2 < s.len()
        && s[j] == b'0'
        && (s[j + 1] | 0x20) == b'x'
        && s[j + 2].is_ascii_hexdigit()
    {
        j += 2;
    }
    let start = j;
    let mut v: u64 = 0;
    while j < s.len() {
        let d = match (s[j] as char).to_digit(base) {
            Some(d) => d as u64,
            None => break,
        };
        v = v.saturating_mul(base as u64).saturating_add(d);
        j += 1;
    }
    if j == start {
        // "0x" without digits, or nothing at all
        return (None, i);
    }
    (Some(v), j)
}

/// A whole word as an unsigned integer (Click's `IntArg` for unsigned
/// types: decimal, `0x` hex, leading-0 octal).
pub fn parse_uint(s: &str, max: u64) -> Option<u64> {
    let b = s.as_bytes();
    let b = b.strip_prefix(b"+").unwrap_or(b);
    match cp_uint(b, 0, 0) {
        (Some(v), j) if j == b.len() && v <= max => Some(v),
        _ => None,
    }
}

fn starts(s: &[u8], i: usize, pat: &[u8]) -> bool {
    s.len() >= i + pat.len() && &s[i..i + pat.len()] == pat
}

fn digit_at(s: &[u8], i: usize) -> bool {
    i < s.len() && s[i].is_ascii_digit()
}

fn push_be32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Four dotted decimal octets at `s[*i..]`, appended to `out`.
fn parse_quad(s: &[u8], i: &mut usize, out: &mut Vec<u8>) -> Option<()> {
    for k in 0..4 {
        let (v, j) = cp_uint(s, *i, 10);
        let v = v.unwrap_or(256);
        *i = j + usize::from(k < 3);
        if v > 255 || (k < 3 && (*i > s.len() || s[*i - 1] != b'.')) {
            return None;
        }
        out.push(v as u8);
    }
    Some(())
}

/// A route option's entries (`A,B,^C}` and an optional `+N`), after its
/// type byte at `out[pos]`.
fn parse_route(s: &[u8], i: &mut usize, out: &mut Vec<u8>, pos: usize) -> Option<()> {
    let mut pointer: Option<usize> = None;
    out.extend_from_slice(&[0, 0]);
    loop {
        if *i < s.len() && s[*i] == b'^' && pointer.is_none() {
            pointer = Some(out.len() - pos + 1);
            *i += 1;
        }
        if !digit_at(s, *i) {
            break;
        }
        parse_quad(s, i, out)?;
        if *i < s.len() && s[*i] == b',' {
            *i += 1;
        }
    }
    if *i >= s.len() || s[*i] != b'}' {
        return None;
    }
    let pointer = pointer.unwrap_or(out.len() - pos + 1);
    if *i + 2 < s.len() && s[*i + 1] == b'+' && s[*i + 2].is_ascii_digit() {
        let (v, j) = cp_uint(s, *i + 2, 10);
        *i = j;
        if let Some(n @ 0..=63) = v {
            out.resize(out.len() + n as usize * 4, 0);
        }
    } else {
        *i += 1;
    }
    let len = out.len() - pos;
    if len > 255 || pointer > 255 {
        return None;
    }
    out[pos + 1] = len as u8;
    out[pos + 2] = pointer as u8;
    Some(())
}

/// A timestamp option (`ts{...}`, `ts.ip{...}`, `ts.preip{...}`,
/// `ts.N{...}`) starting at `s[*i]`.
fn parse_ts(s: &[u8], i: &mut usize, out: &mut Vec<u8>) -> Option<()> {
    let pos = out.len();
    out.extend_from_slice(&[IPOPT_TS, 0, 0, 0]);
    let mut flag: i32 = -1;
    if s[*i + 2] == b'.' {
        if *i + 6 < s.len() && starts(s, *i + 3, b"ip{") {
            flag = 1;
            *i += 6;
        } else if *i + 9 < s.len() && starts(s, *i + 3, b"preip{") {
            flag = 3;
            *i += 9;
        } else if digit_at(s, *i + 3) {
            let (v, t) = cp_uint(s, *i + 3, 0);
            match v {
                Some(f @ 0..=15) if t < s.len() && s[t] == b'{' => {
                    flag = f as i32;
                    *i = t + 1;
                }
                _ => return None,
            }
        } else {
            return None;
        }
    } else {
        *i += 3;
    }
    let mut pointer: Option<usize> = None;
    loop {
        if *i < s.len() && s[*i] == b'^' && pointer.is_none() {
            pointer = Some(out.len() - pos + 1);
            *i += 1;
        }
        if *i >= s.len() || (!s[*i].is_ascii_digit() && s[*i] != b'!') {
            break;
        }
        let entry = *i;
        let entry_out = out.len();
        'retry: loop {
            if flag == 1 || flag == 3 || flag == -2 {
                parse_quad(s, i, out)?;
                if pointer.is_some() && flag == -2 {
                    flag = 3;
                }
                if *i + 1 < s.len() && s[*i] == b'=' {
                    if s[*i + 1].is_ascii_digit() || s[*i + 1] == b'!' {
                        *i += 1;
                    } else if s[*i + 1] == b'?' && pointer.is_some() {
                        out.extend_from_slice(&[0; 4]);
                        *i += 2;
                        break 'retry;
                    } else {
                        return None;
                    }
                } else if pointer.is_some() {
                    out.extend_from_slice(&[0; 4]);
                    break 'retry;
                } else {
                    return None;
                }
            }
            let mut top = 0u32;
            if *i < s.len() && s[*i] == b'!' {
                top = 0x8000_0000;
                *i += 1;
            }
            if !digit_at(s, *i) {
                return None;
            }
            let (v, t) = cp_uint(s, *i, 0);
            *i = t;
            if *i < s.len() && s[*i] == b'.' && flag == -1 {
                // an address: the entries are address=timestamp pairs
                flag = -2;
                *i = entry;
                out.truncate(entry_out);
                continue 'retry;
            } else if flag == -1 {
                flag = 0;
            }
            let v = u32::try_from(v?).ok()?;
            push_be32(out, v | top);
            break 'retry;
        }
        if *i < s.len() && s[*i] == b',' {
            *i += 1;
        }
    }
    if *i < s.len() {
        if s[*i] != b'}' {
            return None;
        }
        *i += 1;
    }
    if flag == -2 {
        flag = 1;
    }
    if flag < 0 {
        flag = 0;
    }
    let pointer = pointer.unwrap_or(out.len() - pos + 1);
    if *i + 1 < s.len() && s[*i] == b'+' && s[*i + 1].is_ascii_digit() {
        let (v, t) = cp_uint(s, *i + 1, 0);
        *i = t;
        if let Some(n @ 0..=63) = v {
            let size = if flag == 1 || flag == 3 { 8 } else { 4 };
            out.resize(out.len() + n as usize * size, 0);
        }
    }
    let mut overflow = 0u8;
    if *i + 2 < s.len() && s[*i] == b'+' && s[*i + 1] == b'+' && s[*i + 2].is_ascii_digit() {
        let (v, t) = cp_uint(s, *i + 2, 0);
        *i = t;
        if let Some(n @ 0..=15) = v {
            overflow = n as u8;
        }
    }
    let len = out.len() - pos;
    if len > 255 || pointer > 255 {
        return None;
    }
    out[pos + 1] = len as u8;
    out[pos + 2] = pointer as u8;
    out[pos + 3] = (overflow << 4) | flag as u8;
    Some(())
}

/// `TYPE` or `TYPE=B:B:...` at `s[*i]` (a digit).
fn parse_numeric_opt(s: &[u8], i: &mut usize, out: &mut Vec<u8>) -> Option<()> {
    let (v, j) = cp_uint(s, *i, 0);
    *i = j;
    out.push(u8::try_from(v?).ok()?);
    if *i + 1 < s.len() && s[*i] == b'=' && s[*i + 1].is_ascii_digit() {
        let pos = out.len();
        out.push(0);
        loop {
            let (v, j) = cp_uint(s, *i + 1, 0);
            *i = j;
            out.push(u8::try_from(v?).ok()?);
            if !(*i + 1 < s.len() && s[*i] == b':' && s[*i + 1].is_ascii_digit()) {
                break;
            }
        }
        if out.len() > pos + 254 {
            return None;
        }
        out[pos] = (out.len() - pos + 1) as u8;
    }
    Some(())
}

/// Strips leading NOPs from options longer than 40 bytes; `None` if they
/// still do not fit in a header.
fn finish_opts(mut out: Vec<u8>) -> Option<Vec<u8>> {
    let lead = out
        .iter()
        .take_while(|&&b| b == IPOPT_NOP)
        .count()
        .min(out.len().saturating_sub(40));
    out.drain(..lead);
    (out.len() <= 40).then_some(out)
}

/// Reads Click's text form of IP options. `Ok(None)`: no options (`.` or
/// empty); `Err(())`: malformed.
pub fn parse_ip_opt(text: &str) -> Result<Option<Vec<u8>>, ()> {
    if text.is_empty() || text == "." {
        return Ok(None);
    }
    let s = text.as_bytes();
    let end = s.len();
    let mut i = 0;
    let mut out = Vec::new();
    loop {
        let ok = if i + 3 < end && starts(s, i, b"rr{") {
            out.push(IPOPT_RR);
            i += 3;
            let pos = out.len() - 1;
            parse_route(s, &mut i, &mut out, pos)
        } else if i + 5 < end && (starts(s, i, b"ssrr{") || starts(s, i, b"lsrr{")) {
            out.push(if s[i] == b's' { IPOPT_SSRR } else { IPOPT_LSRR });
            i += 5;
            let pos = out.len() - 1;
            parse_route(s, &mut i, &mut out, pos)
        } else if i + 3 < end && (starts(s, i, b"ts{") || starts(s, i, b"ts.")) {
            parse_ts(s, &mut i, &mut out)
        } else if digit_at(s, i) {
            parse_numeric_opt(s, &mut i, &mut out)
        } else if starts(s, i, b"nop") {
            out.push(IPOPT_NOP);
            i += 3;
            Some(())
        } else if starts(s, i, b"eol") && (i + 3 == end || s[i + 3] != b',') {
            out.push(IPOPT_EOL);
            i += 3;
            Some(())
        } else {
            None
        };
        ok.ok_or(())?;
        if i >= end {
            return finish_opts(out).map(Some).ok_or(());
        } else if s[i] != b',' && s[i] != b';' {
            return Err(());
        }
        i += 1;
    }
}

fn write_quad(out: &mut String, o: &[u8]) {
    let _ = write!(out, "{}.{}.{}.{}", o[0], o[1], o[2], o[3]);
}

/// Click's `unparse_ip_opt`: the text form of the option bytes `opt` (an IP
/// header's option area), restricted to the classes in `mask`; `.` if
/// nothing was printed, `?` if the options are malformed.
pub fn unparse_ip_opt(out: &mut String, opt: &[u8], mask: u32) {
    let start_len = out.len();
    if unparse_ip_opt_inner(out, opt, mask).is_none() {
        out.truncate(start_len);
        out.push('?');
    } else if out.len() == start_len {
        out.push('.');
    }
}

const _: () = assert!(IPOPT_EOL == TCPOPT_EOL && IPOPT_NOP == TCPOPT_NOP);

/// An end-of-options or no-operation byte (0 and 1 in IP and TCP options
/// alike).
enum Padding {
    End,
    Nop,
}

/// The padding option `ty`, printed (`eol`, `nop`) when `mask` asks for
/// padding; `None` for any other option.
fn unparse_padding(out: &mut String, sep: &mut &str, ty: u8, mask: u32) -> Option<Padding> {
    let (padding, word) = match ty {
        IPOPT_EOL => (Padding::End, "eol"),
        IPOPT_NOP => (Padding::Nop, "nop"),
        _ => return None,
    };
    if mask & DO_PADDING != 0 {
        out.push_str(sep);
        out.push_str(word);
        if matches!(padding, Padding::Nop) {
            *sep = ";";
        }
    }
    Some(padding)
}

fn unparse_ip_opt_inner(out: &mut String, opt: &[u8], mask: u32) -> Option<()> {
    let end = opt.len();
    let mut i = 0;
    let mut sep = "";
    while i < end {
        let ty = opt[i];
        match unparse_padding(out, &mut sep, ty, mask) {
            Some(Padding::End) => return Some(()),
            Some(Padding::Nop) => {
                i += 1;
                continue;
            }
            None => {}
        }
        let len = *opt.get(i + 1)? as usize;
        match ty {
            IPOPT_RR | IPOPT_LSRR | IPOPT_SSRR => {
                let ptr = *opt.get(i + 2)? as usize;
                if i + len > end || len < 3 || ptr < 4 {
                    return None;
                }
                if mask & DO_IPOPT_ROUTE == 0 {
                    i += len;
                    continue;
                }
                out.push_str(sep);
                out.push_str(match ty {
                    IPOPT_RR => "rr",
                    IPOPT_LSRR => "lsrr",
                    _ => "ssrr",
                });
                let (ol, op) = (i + len, i + ptr - 1);
                let mut o = i + 3;
                let mut esep = "";
                out.push('{');
                while o + 4 <= ol {
                    if o == op {
                        if ty == IPOPT_RR {
                            break;
                        }
                        esep = "^";
                    }
                    out.push_str(esep);
                    write_quad(out, &opt[o..o + 4]);
                    esep = ",";
                    o += 4;
                }
                if o == ol && o == op && ty != IPOPT_RR {
                    out.push('^');
                }
                out.push('}');
                if o + 4 <= ol && o == op && ty == IPOPT_RR {
                    let _ = write!(out, "+{}", (ol - o) / 4);
                }
                i = ol;
                sep = ";";
            }
            IPOPT_TS => {
                let ptr = *opt.get(i + 2)? as usize;
                let fl = *opt.get(i + 3)?;
                if i + len > end || len < 4 || ptr < 5 {
                    return None;
                }
                let (ol, op) = (i + len, i + ptr - 1);
                let flag = fl & 0xF;
                let size = if (1..=3).contains(&flag) { 8 } else { 4 };
                out.push_str(sep);
                out.push_str("ts");
                match flag {
                    0 => {}
                    1 => out.push_str(".ip"),
                    3 => out.push_str(".preip"),
                    f => {
                        let _ = write!(out, ".{f}");
                    }
                }
                out.push('{');
                let mut esep = "";
                let mut o = i + 4;
                while o + size <= ol {
                    if o == op {
                        if flag != 3 {
                            break;
                        }
                        esep = "^";
                    }
                    out.push_str(esep);
                    if flag != 0 {
                        write_quad(out, &opt[o..o + 4]);
                        out.push('=');
                        o += 4;
                    }
                    if flag == 3 && o > op {
                        out.pop();
                    } else {
                        let v = u32::from_be_bytes([opt[o], opt[o + 1], opt[o + 2], opt[o + 3]]);
                        if v & 0x8000_0000 != 0 {
                            out.push('!');
                        }
                        let _ = write!(out, "{}", v & 0x7FFF_FFFF);
                    }
                    esep = ",";
                    o += 4;
                }
                if o == ol && o == op {
                    out.push('^');
                }
                out.push('}');
                if o + size <= ol && o == op {
                    let _ = write!(out, "+{}", (ol - o) / size);
                }
                if fl & 0xF0 != 0 {
                    let _ = write!(out, "++{}", fl >> 4);
                }
                i = ol;
                sep = ";";
            }
            _ => {
                if i + len > end || len < 2 {
                    return None;
                }
                if mask & DO_UNKNOWN == 0 {
                    i += len;
                    continue;
                }
                out.push_str(sep);
                let _ = write!(out, "{ty}");
                let mut osep = '=';
                for b in &opt[i + 2..i + len] {
                    let _ = write!(out, "{osep}{b}");
                    osep = ':';
                }
                i += len;
                sep = ";";
            }
        }
    }
    Some(())
}

/// Reads Click's text form of TCP options, accepting the classes in
/// `contents` (`DO_ALL` for `tcp_opt`, `DO_TCPOPT_NTALL` for `tcp_ntopt`,
/// `DO_TCPOPT_SACK` for `tcp_sack`).
pub fn parse_tcp_opt(text: &str, contents: u32) -> Result<Option<Vec<u8>>, ()> {
    if text.is_empty() || text == "." {
        return Ok(None);
    }
    let s = text.as_bytes();
    let end = s.len();
    let mut i = 0;
    let mut out: Vec<u8> = Vec::new();
    loop {
        if i + 3 < end && starts(s, i, b"mss") && contents & DO_TCPOPT_MSS != 0 {
            let (v, j) = cp_uint(s, i + 3, 0);
            i = j;
            let v = u16::try_from(v.ok_or(())?).map_err(|_| ())?;
            out.extend_from_slice(&[TCPOPT_MAXSEG, 4]);
            out.extend_from_slice(&v.to_be_bytes());
        } else if i + 6 < end && starts(s, i, b"wscale") && contents & DO_TCPOPT_WSCALE != 0 {
            let (v, j) = cp_uint(s, i + 6, 0);
            i = j;
            let v = u8::try_from(v.ok_or(())?).map_err(|_| ())?;
            out.extend_from_slice(&[TCPOPT_WSCALE, 3, v]);
        } else if starts(s, i, b"sackok") && contents & DO_TCPOPT_SACK != 0 {
            out.extend_from_slice(&[TCPOPT_SACK_PERMITTED, 2]);
            i += 6;
        } else if i + 4 < end && starts(s, i, b"sack") && contents & DO_TCPOPT_SACK != 0 {
            // adjacent sack blocks combine into one option
            let pos = out.len();
            out.extend_from_slice(&[TCPOPT_SACK, 0]);
            i += 4;
            loop {
                let (a, t) = cp_uint(s, i, 0);
                if t >= end || (s[t] != b':' && s[t] != b'-') {
                    return Err(());
                }
                let (b, t2) = cp_uint(s, t + 1, 0);
                if t2 < i + 3 {
                    return Err(());
                }
                let a = u32::try_from(a.ok_or(())?).map_err(|_| ())?;
                let b = u32::try_from(b.ok_or(())?).map_err(|_| ())?;
                push_be32(&mut out, a);
                push_be32(&mut out, b);
                i = t2;
                if i + 5 >= end || !starts(s, i, b",sack") {
                    break;
                }
                i += 5;
            }
            let len = out.len() - pos;
            out[pos + 1] = u8::try_from(len).map_err(|_| ())?;
        } else if i + 2 < end && starts(s, i, b"ts") && contents & DO_TCPOPT_TIMESTAMP != 0 {
            let (a, t) = cp_uint(s, i + 2, 0);
            if t >= end || s[t] != b':' {
                return Err(());
            }
            let (b, t2) = cp_uint(s, t + 1, 0);
            if t2 < i + 5 {
                return Err(());
            }
            let a = u32::try_from(a.ok_or(())?).map_err(|_| ())?;
            let b = u32::try_from(b.ok_or(())?).map_err(|_| ())?;
            if out.is_empty() {
                out.extend_from_slice(&[TCPOPT_NOP, TCPOPT_NOP]);
            }
            out.extend_from_slice(&[TCPOPT_TIMESTAMP, 10]);
            push_be32(&mut out, a);
            push_be32(&mut out, b);
            i = t2;
        } else if digit_at(s, i) && contents & DO_UNKNOWN != 0 {
            parse_numeric_opt(s, &mut i, &mut out).ok_or(())?;
        } else if starts(s, i, b"nop") && contents & DO_PADDING != 0 {
            out.push(TCPOPT_NOP);
            i += 3;
        } else if starts(s, i, b"eol")
            && contents & DO_PADDING != 0
            && (i + 3 == end || s[i + 3] != b',')
        {
            out.push(TCPOPT_EOL);
            i += 3;
        } else {
            return Err(());
        }
        if i >= end || s[i].is_ascii_whitespace() {
            return finish_opts(out).map(Some).ok_or(());
        } else if s[i] != b',' && s[i] != b';' {
            return Err(());
        }
        i += 1;
    }
}

/// Click's `unparse_tcp_opt`: the text form of the TCP option bytes,
/// restricted to `mask`; `.` if nothing was printed, `?` if malformed.
pub fn unparse_tcp_opt(out: &mut String, opt: &[u8], mask: u32) {
    let start_len = out.len();
    if unparse_tcp_opt_inner(out, opt, mask).is_none() {
        out.truncate(start_len);
        out.push('?');
    } else if out.len() == start_len {
        out.push('.');
    }
}

fn unparse_tcp_opt_inner(out: &mut String, opt: &[u8], mask: u32) -> Option<()> {
    let end = opt.len();
    let mut i = 0;
    let mut sep = "";
    let be32 = |o: &[u8]| u32::from_be_bytes([o[0], o[1], o[2], o[3]]);
    while i < end {
        let ty = opt[i];
        match unparse_padding(out, &mut sep, ty, mask) {
            Some(Padding::End) => return Some(()),
            Some(Padding::Nop) => {
                i += 1;
                continue;
            }
            None => {}
        }
        let len = *opt.get(i + 1)? as usize;
        if i + len > end {
            return None;
        }
        let (need, class) = match ty {
            TCPOPT_MAXSEG => (len == 4, DO_TCPOPT_MSS),
            TCPOPT_WSCALE => (len == 3, DO_TCPOPT_WSCALE),
            TCPOPT_SACK_PERMITTED => (len == 2, DO_TCPOPT_SACK),
            TCPOPT_SACK => (len % 8 == 2, DO_TCPOPT_SACK),
            TCPOPT_TIMESTAMP => (len == 10, DO_TCPOPT_TIMESTAMP),
            _ => (len >= 2, DO_UNKNOWN),
        };
        if !need {
            return None;
        }
        if mask & class == 0 {
            i += len;
            continue;
        }
        let o = &opt[i..i + len];
        match ty {
            TCPOPT_MAXSEG => {
                let _ = write!(out, "{sep}mss{}", u16::from_be_bytes([o[2], o[3]]));
            }
            TCPOPT_WSCALE => {
                let _ = write!(out, "{sep}wscale{}", o[2]);
            }
            TCPOPT_SACK_PERMITTED => {
                let _ = write!(out, "{sep}sackok");
            }
            TCPOPT_SACK => {
                for b in o[2..].chunks_exact(8) {
                    let _ = write!(out, "{sep}sack{}-{}", be32(&b[..4]), be32(&b[4..]));
                    sep = ";";
                }
            }
            TCPOPT_TIMESTAMP => {
                let _ = write!(out, "{sep}ts{}:{}", be32(&o[2..6]), be32(&o[6..10]));
            }
            _ => {
                let _ = write!(out, "{sep}{ty}");
                let mut osep = '=';
                for b in &o[2..] {
                    let _ = write!(out, "{osep}{b}");
                    osep = ':';
                }
            }
        }
        i += len;
        sep = ";";
    }
    Some(())
}

/// MD5 (RFC 1321) of `data`.
pub fn md5(data: &[u8]) -> [u8; 16] {
    const S: [u32; 64] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5,
        9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10,
        15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ];
    // RFC 1321's table of sines, computed once for the process
    static K: std::sync::OnceLock<[u32; 64]> = std::sync::OnceLock::new();
    let k = K.get_or_init(|| {
        core::array::from_fn(|i| ((i as f64 + 1.0).sin().abs() * 4_294_967_296.0) as u32)
    });
    let mut st: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];
    let mut msg = data.to_vec();
    let bits = (data.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bits.to_le_bytes());
    for block in msg.chunks_exact(64) {
        let m: [u32; 16] = core::array::from_fn(|i| {
            u32::from_le_bytes([
                block[4 * i],
                block[4 * i + 1],
                block[4 * i + 2],
                block[4 * i + 3],
            ])
        });
        let [mut a, mut b, mut c, mut d] = st;
        for i in 0..64 {
            let (f, g) = match i / 16 {
                0 => ((b & c) | (!b & d), i),
                1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                2 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let f = f.wrapping_add(a).wrapping_add(k[i]).wrapping_add(m[g]);
            a = d;
            d = c;
            c = b;
            b = b.wrapping_add(f.rotate_left(S[i]));
        }
        st[0] = st[0].wrapping_add(a);
        st[1] = st[1].wrapping_add(b);
        st[2] = st[2].wrapping_add(c);
        st[3] = st[3].wrapping_add(d);
    }
    let mut out = [0u8; 16];
    for (i, w) in st.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    out
}

/// Click's `md5_finish_text(..., allow_at = 1)`: the digest as 22
/// characters of `[a-zA-Z0-9_@]`, six bits each, least significant first.
pub fn md5_text(digest: &[u8; 16]) -> String {
    const CHARS: &[u8; 64] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@";
    let mut out = String::with_capacity(22);
    let mut bit = 0;
    while bit < 128 {
        let first = bit / 8;
        let mut val = (digest[first] >> (bit % 8)) as u32;
        if bit + 8 > (first + 1) * 8 && first < 15 {
            val += (digest[first + 1] as u32) << (8 - bit % 8);
        }
        out.push(CHARS[(val & 0x3F) as usize] as char);
        bit += 6;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> Vec<u8> {
        parse_ip_opt(s).unwrap().unwrap()
    }
    fn ip_text(b: &[u8]) -> String {
        let mut o = String::new();
        unparse_ip_opt(&mut o, b, DO_ALL_NOPAD);
        o
    }
    fn tcp(s: &str) -> Vec<u8> {
        parse_tcp_opt(s, DO_ALL).unwrap().unwrap()
    }
    fn tcp_text(b: &[u8], mask: u32) -> String {
        let mut o = String::new();
        unparse_tcp_opt(&mut o, b, mask);
        o
    }

    #[test]
    fn ip_routes() {
        let b = ip("ssrr{128.4.45.60,128.4.49.61,^1.2.3.4,5.6.7.8}");
        assert_eq!(b[..3], [137, 19, 12]);
        assert_eq!(b[3..7], [128, 4, 45, 60]);
        // Click puts the pointer mark in place of the comma
        assert_eq!(ip_text(&b), "ssrr{128.4.45.60,128.4.49.61^1.2.3.4,5.6.7.8}");
        assert_eq!(ip("ssrr{128.4.45.60,128.4.49.61^1.2.3.4,5.6.7.8}"), b);
        // pointer past the end prints a trailing ^
        assert_eq!(ip_text(&ip("lsrr{1.2.3.4}")), "lsrr{1.2.3.4^}");
        // record route: free slots are +N
        let b = ip("rr{10.0.0.1}+2");
        assert_eq!(b, [7, 15, 8, 10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(ip_text(&b), "rr{10.0.0.1}+2");
        assert_eq!(ip_text(&ip("rr{}+9")), "rr{}+9");
        assert_eq!(ip_text(&ip("rr{1.2.3.4,5.6.7.8}")), "rr{1.2.3.4,5.6.7.8}");
    }

    #[test]
    fn ip_padding_numeric_and_ts() {
        assert_eq!(ip("nop,nop,eol"), [1, 1, 0]);
        assert_eq!(ip_text(&[1, 1, 0]), ".");
        let mut o = String::new();
        unparse_ip_opt(&mut o, &[1, 1, 0], DO_ALL);
        assert_eq!(o, "nop;nop;eol");
        assert_eq!(ip("148=0:0"), [148, 4, 0, 0]);
        assert_eq!(ip_text(&[148, 4, 0, 0]), "148=0:0");
        assert_eq!(ip("99"), [99]);
        assert_eq!(ip("ts{1,!2}"), [68, 12, 13, 0, 0, 0, 0, 1, 128, 0, 0, 2]);
        assert_eq!(ip_text(&ip("ts{1,!2}")), "ts{1,!2^}");
        assert_eq!(ip("ts{1,!2^}"), ip("ts{1,!2}"));
        assert_eq!(ip_text(&ip("ts{1}+2++3")), "ts{1}+2++3");
        let b = ip("ts{1.2.3.4=5}");
        assert_eq!(b, [68, 12, 13, 1, 1, 2, 3, 4, 0, 0, 0, 5]);
        assert_eq!(ip_text(&b), "ts.ip{1.2.3.4=5^}");
        let b = ip("ts.preip{1.2.3.4=5,^6.7.8.9}");
        assert_eq!(ip_text(&b), "ts.preip{1.2.3.4=5^6.7.8.9}");
        assert_eq!(ip_text(&ip("ts.7{}")), "ts.7{^}");
        assert_eq!(ip_text(&ip("nop;rr{}+1;148=0:0")), "rr{}+1;148=0:0");
    }

    #[test]
    fn ip_malformed() {
        for bad in [
            "rr{1.2.3}",
            "rr{1.2.3.256}",
            "rr{1.2.3.4",
            "ssrr{128.4.45.60:128.4.49.61}+2",
            "ts.16{1}",
            "ts{1.2.3.4}",
            "bogus",
            "256",
            "99=1:300",
            "nop,,nop",
            "eol,nop",
            "rr{}+10", // 43 bytes
            "ts{99999999999}",
        ] {
            assert_eq!(parse_ip_opt(bad), Err(()), "{bad}");
        }
        // leading NOPs give way to a full option
        assert_eq!(ip("nop,nop,rr{}+9").len(), 40);
        // malformed bytes print as ?
        assert_eq!(ip_text(&[7, 40, 4]), "?");
        assert_eq!(ip_text(&[7]), "?");
        assert_eq!(ip_text(&[68, 3, 5]), "?");
        assert_eq!(ip_text(&[99, 1]), "?");
        assert_eq!(ip_text(&[]), ".");
    }

    #[test]
    fn tcp_options() {
        let b = tcp("mss1460,sackok,ts1:2,nop,wscale7");
        assert_eq!(
            b,
            [2, 4, 5, 180, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2, 1, 3, 3, 7]
        );
        assert_eq!(tcp_text(&b, DO_ALL_NOPAD), "mss1460;sackok;ts1:2;wscale7");
        assert_eq!(tcp_text(&b, DO_TCPOPT_NTALL), "mss1460;sackok;wscale7");
        assert_eq!(tcp_text(&b, DO_TCPOPT_SACK), "sackok");
        assert_eq!(tcp("ts5:6")[..4], [1, 1, 8, 10]);
        let b = tcp("sack1-2,sack3:4");
        assert_eq!(b[..2], [5, 18]);
        assert_eq!(tcp_text(&b, DO_ALL_NOPAD), "sack1-2;sack3-4");
        assert_eq!(tcp_text(&tcp("30=1:2"), DO_ALL_NOPAD), "30=1:2");
        assert_eq!(tcp_text(&tcp("wscale10"), DO_ALL_NOPAD), "wscale10");
        assert_eq!(tcp("mss0x10"), [2, 4, 0, 16]);
        for bad in [
            "mss65536",
            "mss",
            "wscale256",
            "sack1",
            "sack-2",
            "ts1",
            "x",
            "mss1;",
        ] {
            assert_eq!(parse_tcp_opt(bad, DO_ALL), Err(()), "{bad}");
        }
        assert_eq!(parse_tcp_opt("mss1460", DO_TCPOPT_SACK), Err(()));
        assert_eq!(parse_tcp_opt("nop", DO_TCPOPT_NTALL), Err(()));
        assert_eq!(tcp_text(&[2, 3, 0], DO_ALL_NOPAD), "?");
        assert_eq!(tcp_text(&[5, 9], DO_ALL_NOPAD), "?");
    }

    #[test]
    fn md5_digests() {
        let hex = |d: [u8; 16]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
        assert_eq!(hex(md5(b"")), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(
            hex(md5(b"The quick brown fox jumps over the lazy dog")),
            "9e107d9d372bb6826bd81d3542a419d6"
        );
        assert_eq!(md5_text(&md5(b"")).len(), 22);
    }

    #[test]
    fn integers() {
        assert_eq!(parse_uint("010", 255), Some(8));
        assert_eq!(parse_uint("0x1F", 255), Some(31));
        assert_eq!(parse_uint("256", 255), None);
        assert_eq!(parse_uint("", 255), None);
        assert_eq!(parse_uint("1a", 255), None);
    }
}
