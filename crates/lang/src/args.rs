//! Click's argument conventions: splitting configuration strings
//! (`cp_argvec`, `cp_spacevec`), unquoting (`cp_unquote`), typed value
//! parsers, and keyword-argument handling in the style of Click's `Args`.
//!
//! Every parser takes the (already split) argument text and returns
//! `Result<T, String>`, where the error is Click's phrase, e.g.
//! `"expected integer"`.  [`Args`] prefixes errors with the keyword, like
//! Click's `ArgContext` does: `"LIMIT: expected unsigned integer"`.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::net::Ipv4Addr;

pub use crate::names::ArgContext;

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Skip a comment starting at `i` (which must be `//` or `/*`); returns the
/// index just past it (Click's `skip_comment`).
fn skip_comment(s: &[u8], mut i: usize) -> usize {
    let end = s.len();
    if s[i + 1] == b'/' {
        i += 2;
        while i < end && s[i] != b'\n' && s[i] != b'\r' {
            i += 1;
        }
        if i + 1 < end && s[i] == b'\r' && s[i + 1] == b'\n' {
            i += 1;
        }
        (i + 1).min(end)
    } else {
        i += 2;
        while i + 1 < end && !(s[i] == b'*' && s[i + 1] == b'/') {
            i += 1;
        }
        (i + 2).min(end)
    }
}

fn is_comment_start(s: &[u8], i: usize) -> bool {
    s[i] == b'/' && i + 1 < s.len() && (s[i + 1] == b'/' || s[i + 1] == b'*')
}

fn skip_backslash(s: &[u8], mut i: usize) -> usize {
    let end = s.len();
    if i + 1 >= end {
        return i + 1;
    }
    if s[i + 1] == b'<' {
        i += 2;
        while i < end {
            if s[i] == b'>' {
                return i + 1;
            } else if is_comment_start(s, i) {
                i = skip_comment(s, i);
            } else {
                i += 1;
            }
        }
        i
    } else if s[i + 1] == b'\r' && i + 2 < end && s[i + 2] == b'\n' {
        i + 3
    } else {
        (i + 2).min(end)
    }
}

fn skip_double_quote(s: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < s.len() {
        if s[i] == b'\\' {
            i = skip_backslash(s, i);
        } else if s[i] == b'"' {
            return i + 1;
        } else {
            i += 1;
        }
    }
    s.len()
}

fn skip_single_quote(s: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < s.len() {
        if s[i] == b'\'' {
            return i + 1;
        }
        i += 1;
    }
    s.len()
}

/// Skip spaces and comments (Click's `cp_skip_comment_space`).
pub fn skip_comment_space(s: &str, mut i: usize) -> usize {
    let b = s.as_bytes();
    while i < b.len() {
        if is_space(b[i]) {
            i += 1;
        } else if is_comment_start(b, i) {
            i = skip_comment(b, i);
        } else {
            break;
        }
    }
    i
}

/// Byte-slice helper that never panics on non-char boundaries: all the
/// positions we compute are at ASCII delimiters or string ends, but we fall
/// back to a lossy conversion to be safe.
fn sub(s: &str, a: usize, b: usize) -> String {
    let b = b.min(s.len());
    let a = a.min(b);
    match s.get(a..b) {
        Some(x) => x.to_string(),
        None => String::from_utf8_lossy(&s.as_bytes()[a..b]).into_owned(),
    }
}

/// Click's `partial_uncomment`: returns the uncommented text and the
/// position where it stopped (a comma if `stop_at_comma`).
fn partial_uncomment(s: &str, start: usize, stop_at_comma: bool) -> (String, usize) {
    let b = s.as_bytes();
    let end = b.len();
    let mut i = skip_comment_space(s, start);
    let mut out = String::new();
    let mut left = i;
    let mut right = i;
    let mut closed = false;
    while i < end {
        if is_space(b[i]) {
            i += 1;
        } else if is_comment_start(b, i) {
            i = skip_comment(b, i);
            closed = true;
        } else if b[i] == b',' && stop_at_comma {
            break;
        } else {
            if closed {
                out.push_str(&sub(s, left, right));
                out.push(' ');
                left = i;
                closed = false;
            }
            i = if b[i] == b'\'' {
                skip_single_quote(b, i)
            } else if b[i] == b'"' {
                skip_double_quote(b, i)
            } else if b[i] == b'\\' && i + 1 < end && b[i + 1] == b'<' {
                skip_backslash(b, i)
            } else {
                i + 1
            };
            right = i;
        }
    }
    out.push_str(&sub(s, left, right));
    (out, i)
}

/// Click's `cp_uncomment`: remove comments, strip surrounding space, replace
/// comment+space sequences by a single space.
pub fn uncomment(s: &str) -> String {
    partial_uncomment(s, 0, false).0
}

/// Click's `cp_argvec`: split a configuration string at unquoted commas.
/// Each argument is uncommented.  An empty final argument is dropped, but
/// empty middle arguments are kept (`"a, , b"` gives `["a", "", "b"]`).
/// Like Click, parentheses do not protect commas; only quotes do.
pub fn split_args(config: &str) -> Vec<String> {
    let mut v = Vec::new();
    let len = config.len();
    let mut pos = 0;
    while pos < len {
        let (arg, p) = partial_uncomment(config, pos, true);
        pos = p;
        if !arg.is_empty() || pos < len {
            v.push(arg);
        }
        pos += 1;
    }
    v
}

/// Click's `cp_unargvec`: join arguments with `", "`.
pub fn join_args(args: &[String]) -> String {
    args.join(", ")
}

/// Click's `reconfigure_keyword_handler` applied to a configuration
/// string: the configuration after writing `value` to a handler that
/// reconfigures `keyword` (with `argno`, the mandatory position the value
/// may have been given at instead, as in Click's `"0 CAPACITY"`). Earlier
/// occurrences of the keyword are removed; a positional argument at `argno`
/// is replaced in place; otherwise `KEYWORD value` is appended.
pub fn reconfigure_keyword(
    config: &str,
    argno: Option<usize>,
    keyword: &str,
    value: &str,
) -> String {
    let mut conf = split_args(config);
    let before = conf.len();
    conf.retain(|a| match keyword_len(a) {
        Kw::Keyword(n) => &a[..n] != keyword,
        _ => true,
    });
    let found = conf.len() != before;
    if !found {
        if let Some(n) = argno {
            if n < conf.len() && keyword_len(&conf[n]) == Kw::Positional {
                conf[n] = value.to_string();
                return join_args(&conf);
            }
        }
    }
    conf.push(format!("{keyword} {value}"));
    join_args(&conf)
}

fn skip_spacevec_item(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'/' => {
                if is_comment_start(b, i) {
                    return i;
                }
                i += 1;
            }
            b'"' => i = skip_double_quote(b, i),
            b'\'' => i = skip_single_quote(b, i),
            b'\\' => {
                if i + 1 < b.len() && b[i + 1] == b'<' {
                    i = skip_backslash(b, i);
                } else {
                    i += 1;
                }
            }
            c if is_space(c) => return i,
            _ => i += 1,
        }
    }
    i
}

/// Click's `cp_spacevec`: split at unquoted whitespace (comments separate
/// words and are removed).
pub fn split_words(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut v = Vec::new();
    let mut i = 0;
    loop {
        i = skip_comment_space(s, i);
        if i >= b.len() {
            break;
        }
        let t = skip_spacevec_item(b, i);
        v.push(sub(s, i, t));
        i = t;
    }
    v
}

/// Click's `cp_shift_spacevec`: remove and return the first word of `s`.
pub fn shift_word(s: &mut String) -> String {
    let i = skip_comment_space(s, 0);
    let t = skip_spacevec_item(s.as_bytes(), i);
    let word = sub(s, i, t);
    let rest_start = skip_comment_space(s, t);
    *s = sub(s, rest_start, s.len());
    word
}

fn hexval(c: u8) -> Option<u32> {
    (c as char).to_digit(16)
}

/// Click's `cp_process_backslash`: process one escape at `i` (a backslash),
/// appending bytes to `out`; returns the index after the escape.
fn process_backslash(b: &[u8], mut i: usize, out: &mut Vec<u8>) -> usize {
    let end = b.len();
    if i + 1 >= end {
        out.push(b'\\');
        return end;
    }
    match b[i + 1] {
        b'\r' => {
            if i + 2 < end && b[i + 2] == b'\n' {
                i + 3
            } else {
                i + 2
            }
        }
        b'\n' => i + 2,
        b'a' => {
            out.push(7);
            i + 2
        }
        b'b' => {
            out.push(8);
            i + 2
        }
        b'f' => {
            out.push(12);
            i + 2
        }
        b'n' => {
            out.push(b'\n');
            i + 2
        }
        b'r' => {
            out.push(b'\r');
            i + 2
        }
        b't' => {
            out.push(b'\t');
            i + 2
        }
        b'v' => {
            out.push(11);
            i + 2
        }
        b'0'..=b'7' => {
            let mut c: u32 = 0;
            let mut d = 0;
            i += 1;
            while i < end && (b'0'..=b'7').contains(&b[i]) && d < 3 {
                c = c * 8 + u32::from(b[i] - b'0');
                i += 1;
                d += 1;
            }
            out.push(c as u8);
            i
        }
        b'x' => {
            let mut c: u32 = 0;
            i += 2;
            while i < end {
                match hexval(b[i]) {
                    Some(h) => c = c.wrapping_mul(16).wrapping_add(h),
                    None => break,
                }
                i += 1;
            }
            out.push(c as u8);
            i
        }
        b'<' => {
            let mut c: u32 = 0;
            let mut d = 0;
            i += 2;
            while i < end {
                if b[i] == b'>' {
                    return i + 1;
                } else if let Some(h) = hexval(b[i]) {
                    c = c * 16 + h;
                    d += 1;
                    if d == 2 {
                        out.push(c as u8);
                        c = 0;
                        d = 0;
                    }
                    i += 1;
                } else if is_comment_start(b, i) {
                    i = skip_comment(b, i);
                } else {
                    i += 1;
                }
            }
            end
        }
        _ => {
            // Copy the escaped character (a whole UTF-8 sequence).
            let start = i + 1;
            let mut j = start + 1;
            while j < end && (b[j] & 0xC0) == 0x80 {
                j += 1;
            }
            out.extend_from_slice(&b[start..j]);
            j
        }
    }
}

/// Click's `cp_unquote`, returning raw bytes (escapes such as `\<ff>` may
/// produce non-UTF-8 data).
pub fn unquote_bytes(s: &str) -> Vec<u8> {
    let x = uncomment(s);
    let b = x.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut start = 0;
    let mut quote = 0u8;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'"' | b'\'') => {
                if quote == 0 {
                    out.extend_from_slice(&b[start..i]);
                    start = i + 1;
                    quote = q;
                } else if quote == q {
                    out.extend_from_slice(&b[start..i]);
                    start = i + 1;
                    quote = 0;
                }
                i += 1;
            }
            b'\\' if i + 1 < b.len() && (quote == b'"' || (quote == 0 && b[i + 1] == b'<')) => {
                out.extend_from_slice(&b[start..i]);
                start = process_backslash(b, i, &mut out);
                i = start;
            }
            _ => i += 1,
        }
    }
    if start < b.len() {
        out.extend_from_slice(&b[start..]);
    }
    out
}

/// Click's `cp_unquote`: remove one level of quoting (double quotes with C
/// escapes and `\<hex>` byte strings, single quotes verbatim, adjacent
/// pieces concatenated).  Invalid UTF-8 produced by escapes is replaced
/// lossily; use [`unquote_bytes`] for binary data.
pub fn unquote(s: &str) -> String {
    String::from_utf8_lossy(&unquote_bytes(s)).into_owned()
}

/// Click's `cp_quote`: a double-quoted string that [`unquote`]s back to `s`.
pub fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\\' | '"' | '$' => {
                out.push('\\');
                out.push(c);
            }
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 32 || c as u32 == 127 => {
                let u = c as u32;
                out.push('\\');
                out.push(char::from(b'0' + (u >> 6) as u8));
                out.push(char::from(b'0' + ((u >> 3) & 7) as u8));
                out.push(char::from(b'0' + (u & 7) as u8));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Click's `cp_string` (StringArg): one (possibly quoted) word, unquoted.
pub fn parse_string(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            c if is_space(c) => break,
            b'"' => i = skip_double_quote(b, i),
            b'\'' => i = skip_single_quote(b, i),
            b'\\' if i + 1 < b.len() && b[i + 1] == b'<' => i = skip_backslash(b, i),
            _ => i += 1,
        }
    }
    if i == 0 || i != b.len() {
        return Err("expected string".into());
    }
    Ok(unquote(s))
}

/// Click's `cp_word`: a string whose unquoted form has only printable,
/// non-quote, non-comma ASCII characters.
pub fn parse_word(s: &str) -> Result<String, String> {
    let w = parse_string(s).map_err(|_| String::from("expected word"))?;
    if w.is_empty()
        || w.bytes()
            .any(|c| c == b'"' || c == b'\'' || c == b'\\' || c == b',' || c <= 32 || c >= 127)
    {
        return Err("expected word".into());
    }
    Ok(w)
}

/// Click's BoolArg: `0 false no f n off` / `1 true yes t y on`.
pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s {
        "0" | "n" | "f" | "false" | "no" | "off" => Ok(false),
        "1" | "y" | "t" | "true" | "yes" | "on" => Ok(true),
        _ => Err("expected bool".into()),
    }
}

/// Parse an unsigned magnitude with Click's `cp_basic_integer` rules
/// (base 0: `0x` hex, leading `0` octal, else decimal; `_` allowed between
/// digits).  Returns (value, overflowed).
fn parse_magnitude(s: &[u8]) -> Option<(u128, bool)> {
    let mut i = 0;
    let mut base = 10u32;
    if s.len() >= 2 && s[0] == b'0' && (s[1] == b'x' || s[1] == b'X') {
        i = 2;
        base = 16;
    } else if !s.is_empty() && s[0] == b'0' {
        base = 8;
    }
    if i >= s.len() || s[i] == b'_' {
        return None;
    }
    let mut val: u128 = 0;
    let mut overflow = false;
    let mut any = false;
    while i < s.len() {
        let c = s[i];
        if c == b'_' && i + 1 < s.len() && s[i + 1] != b'_' {
            i += 1;
            continue;
        }
        let d = (c as char).to_digit(base)?;
        any = true;
        match val
            .checked_mul(u128::from(base))
            .and_then(|v| v.checked_add(u128::from(d)))
        {
            Some(v) if v <= u128::from(u64::MAX) + 1 => val = v,
            _ => overflow = true,
        }
        i += 1;
    }
    if !any {
        return None;
    }
    Some((val, overflow))
}

/// Click's IntArg for signed 64-bit integers.
pub fn parse_i64(s: &str) -> Result<i64, String> {
    let b = s.as_bytes();
    let (neg, rest) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        Some(b'+') => (false, &b[1..]),
        _ => (false, b),
    };
    let (v, of) = parse_magnitude(rest).ok_or_else(|| String::from("expected integer"))?;
    let limit: u128 = if neg { 1u128 << 63 } else { (1u128 << 63) - 1 };
    if of || v > limit {
        return Err("out of range".into());
    }
    Ok(if neg {
        (v as i128).wrapping_neg() as i64
    } else {
        v as i64
    })
}

/// Click's IntArg for unsigned 64-bit integers.
pub fn parse_u64(s: &str) -> Result<u64, String> {
    let b = s.as_bytes();
    let rest = match b.first() {
        Some(b'+') => &b[1..],
        _ => b,
    };
    let (v, of) = parse_magnitude(rest).ok_or_else(|| String::from("expected unsigned integer"))?;
    if of || v > u128::from(u64::MAX) {
        return Err("out of range".into());
    }
    Ok(v as u64)
}

/// Parse a decimal real number (`[+-]digits[.digits][e[+-]digits]`).
/// Returns the mantissa digits as an integer and a decimal exponent so that
/// callers can do exact fixed-point conversion.
fn parse_decimal(s: &str) -> Option<(bool, u128, i32)> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut neg = false;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        neg = b[i] == b'-';
        i += 1;
    }
    let mut mant: u128 = 0;
    let mut exp: i32 = 0;
    let mut digits = 0;
    let mut sig = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        if sig < 36 {
            mant = mant * 10 + u128::from(b[i] - b'0');
            if mant != 0 {
                sig += 1;
            }
        } else {
            exp += 1;
        }
        digits += 1;
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            if sig < 36 {
                mant = mant * 10 + u128::from(b[i] - b'0');
                if mant != 0 {
                    sig += 1;
                }
                exp -= 1;
            }
            digits += 1;
            i += 1;
        }
    }
    if digits == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        let mut eneg = false;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            eneg = b[i] == b'-';
            i += 1;
        }
        let start = i;
        let mut e: i32 = 0;
        while i < b.len() && b[i].is_ascii_digit() {
            e = e.saturating_mul(10).saturating_add(i32::from(b[i] - b'0'));
            i += 1;
        }
        if i == start {
            return None;
        }
        exp = exp.saturating_add(if eneg { -e } else { e });
    }
    if i != b.len() {
        return None;
    }
    Some((neg, mant, exp))
}

/// Scale a decimal `(mant, exp)` by `10^scale_exp`, rounding to nearest;
/// returns None on overflow past `limit`.
fn scale_decimal(mant: u128, exp: i32, scale_exp: i32, limit: u128) -> Option<u128> {
    if mant == 0 {
        return Some(0);
    }
    let e = exp.saturating_add(scale_exp);
    if e >= 0 {
        let mut v = mant;
        for _ in 0..e.min(60) {
            v = v.checked_mul(10)?;
            if v > limit {
                return None;
            }
        }
        if e > 60 {
            return None;
        }
        (v <= limit).then_some(v)
    } else {
        let mut v = mant;
        let mut round = false;
        for _ in 0..(-e).min(60) {
            round = v % 10 >= 5;
            v /= 10;
        }
        if -e > 60 {
            return Some(0);
        }
        let v = v + u128::from(round);
        (v <= limit).then_some(v)
    }
}

/// Click's DoubleArg: a real number.
pub fn parse_f64(s: &str) -> Result<f64, String> {
    let (neg, mant, exp) = parse_decimal(s).ok_or_else(|| String::from("expected real number"))?;
    // Simple conversion: good to ~1 ulp for ordinary inputs.
    let mut v = mant as f64;
    let p = 10f64;
    if exp >= 0 {
        v *= powi(p, exp);
    } else {
        v /= powi(p, -exp);
    }
    if !v.is_finite() {
        return Err("out of range".into());
    }
    Ok(if neg { -v } else { v })
}

fn powi(b: f64, e: i32) -> f64 {
    let mut r = 1.0;
    let mut x = b;
    let mut n = e.unsigned_abs();
    while n > 0 {
        if n & 1 == 1 {
            r *= x;
        }
        x *= x;
        n >>= 1;
    }
    r
}

pub(crate) fn parse_ip_parts(s: &str, allow_partial: bool) -> Option<([u8; 4], usize)> {
    let mut out = [0u8; 4];
    let mut n = 0;
    if s.is_empty() {
        return None;
    }
    for part in s.split('.') {
        if n >= 4 || part.is_empty() || part.len() > 3 || !part.bytes().all(|c| c.is_ascii_digit())
        {
            return None;
        }
        let v: u32 = part.parse().ok()?;
        if v > 255 {
            return None;
        }
        out[n] = v as u8;
        n += 1;
    }
    if n == 4 || (allow_partial && n >= 1) {
        Some((out, n))
    } else {
        None
    }
}

/// Click's IPAddressArg: a dotted-quad IPv4 address.
pub fn parse_ipv4(s: &str) -> Result<Ipv4Addr, String> {
    parse_ip_parts(s, false)
        .map(|(o, _)| Ipv4Addr::from(o))
        .ok_or_else(|| String::from("expected IP address"))
}

/// Click's IPPrefixArg: `a.b.c.d/len`, `a.b.c.d/m.m.m.m`, or a bare address
/// (mask 255.255.255.255).  Like Click, the address part may be abbreviated
/// before a slash (`10/8`), but not to fewer bytes than the mask covers
/// (`18.26.4/28` is an error).  Returns (address, mask).  This is
/// [`ArgContext::prefix`] without names.
pub fn parse_ipv4_prefix(s: &str) -> Result<(Ipv4Addr, Ipv4Addr), String> {
    ArgContext::none().prefix(s, true)
}

/// Click's EtherAddressArg: six groups of one or two hex digits separated by
/// `:` (or all by `-`).
pub fn parse_ether(s: &str) -> Result<[u8; 6], String> {
    let err = || String::from("expected Ethernet address");
    let sep = if s.contains(':') { ':' } else { '-' };
    let mut out = [0u8; 6];
    let mut n = 0;
    for part in s.split(sep) {
        if n >= 6 || part.is_empty() || part.len() > 2 {
            return Err(err());
        }
        out[n] = u8::from_str_radix(part, 16).map_err(|_| err())?;
        if !part.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Err(err());
        }
        n += 1;
    }
    if n != 6 {
        return Err(err());
    }
    Ok(out)
}

fn split_unit(s: &str) -> (&str, &str) {
    let b = s.as_bytes();
    let mut i = b.len();
    while i > 0 && b[i - 1].is_ascii_alphabetic() {
        i -= 1;
    }
    // "1e3" style exponent: don't treat a trailing 'e' followed by digits
    // as a unit (it has no trailing letters anyway).
    (&s[..i], &s[i..])
}

/// Click's SecondsArg/TimestampArg, returning nanoseconds.  A bare number
/// means seconds; units `s sec ms msec us usec ns nsec m min h hr d day`.
/// Negative values are accepted (TimestampArg).
pub fn parse_time_ns(s: &str) -> Result<i64, String> {
    let err = || String::from("expected time in seconds");
    let (num, unit) = split_unit(s.trim());
    // Click allows space between the number and its unit (`1 hr`)
    let num = num.trim_end();
    // scale: power of ten for ns, and an integer multiplier
    let (p10, mult): (i32, u128) = match unit {
        "" | "s" | "sec" | "secs" => (9, 1),
        "ms" | "msec" | "msecs" => (6, 1),
        "us" | "usec" | "usecs" => (3, 1),
        "ns" | "nsec" | "nsecs" => (0, 1),
        "m" | "min" | "mins" => (9, 60),
        "h" | "hr" | "hrs" | "hour" | "hours" => (9, 3600),
        "d" | "day" | "days" => (9, 86400),
        _ => return Err(err()),
    };
    let (neg, mant, exp) = parse_decimal(num).ok_or_else(err)?;
    let limit = i64::MAX as u128;
    let v = scale_decimal(mant, exp, p10, limit)
        .and_then(|v| v.checked_mul(mult))
        .filter(|v| *v <= limit)
        .ok_or_else(|| String::from("out of range"))?;
    Ok(if neg { -(v as i64) } else { v as i64 })
}

/// Click's BandwidthArg, returning bytes per second.  Units: `bps` `kbps`
/// `Kbps` `Mbps` `Gbps` (bits/s), `Bps` `kBps` `KBps` `MBps` `GBps`
/// (bytes/s); a bare number means bytes per second.
pub fn parse_bandwidth(s: &str) -> Result<u64, String> {
    let err = || String::from("expected bandwidth");
    let t = s.trim();
    // the unit: trailing letters and slashes (`kb/s`)
    let cut = t
        .bytes()
        .rposition(|c| !(c.is_ascii_alphabetic() || c == b'/'))
        .map_or(0, |i| i + 1);
    let (num, unit) = t.split_at(cut);
    // Click allows space between the number and its unit (`8 baud`)
    let num = num.trim_end();
    // Click's byte_bandwidth_units and prefixes (lib/args.cc)
    let (p10, base) = match unit.as_bytes().first() {
        Some(b'k' | b'K') => (3, &unit[1..]),
        Some(b'M') => (6, &unit[1..]),
        Some(b'G') => (9, &unit[1..]),
        _ => (0, unit),
    };
    let bits = match base {
        "" if p10 == 0 => false,
        "Bps" | "B/s" => false,
        "bps" | "b/s" | "baud" => true,
        _ => return Err(err()),
    };
    let (neg, mant, exp) = parse_decimal(num).ok_or_else(err)?;
    if neg && mant != 0 {
        return Err(err());
    }
    let limit = u128::from(u64::MAX) * 8;
    let v = scale_decimal(mant, exp, p10, limit).ok_or_else(|| String::from("out of range"))?;
    let v = if bits { (v + 4) / 8 } else { v };
    u64::try_from(v).map_err(|_| String::from("out of range"))
}

// ---------------------------------------------------------------------------
// FromArg and Args

/// An IPv4 prefix (address and mask), as parsed by [`parse_ipv4_prefix`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpPrefix {
    pub addr: Ipv4Addr,
    pub mask: Ipv4Addr,
}

/// A time interval in nanoseconds, as parsed by [`parse_time_ns`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Seconds(pub i64);

/// A bandwidth in bytes per second, as parsed by [`parse_bandwidth`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bandwidth(pub u64);

/// An argument's raw text (not unquoted), like Click's AnyArg.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RawString(pub String);

/// A value that can be parsed from one configuration argument.
pub trait FromArg: Sized {
    /// Parses a literal value.
    fn from_arg(s: &str) -> Result<Self, String>;

    /// Parses with the element's context, where names (AddressInfo,
    /// PortInfo) may stand for values; [`Args`] reads use this. Types
    /// that have names override it; the others parse literals only.
    fn from_arg_in(s: &str, _cx: &ArgContext) -> Result<Self, String> {
        Self::from_arg(s)
    }
}

/// A TCP, UDP, ... port (Click's IPPortArg for IP protocol `P`): a number,
/// a PortInfo name, or a well-known name (`www`, `domain`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct IpPort<const P: u8>(pub u16);
/// A UDP port, see [`IpPort`].
pub type UdpPort = IpPort<17>;
/// A TCP port, see [`IpPort`].
pub type TcpPort = IpPort<6>;

impl<const P: u8> FromArg for IpPort<P> {
    fn from_arg(s: &str) -> Result<Self, String> {
        Self::from_arg_in(s, &ArgContext::none())
    }
    fn from_arg_in(s: &str, cx: &ArgContext) -> Result<Self, String> {
        cx.port(s, P).map(IpPort)
    }
}

macro_rules! unsigned_from_arg {
    ($($t:ty),*) => {$(
        impl FromArg for $t {
            fn from_arg(s: &str) -> Result<Self, String> {
                let v = parse_u64(s)?;
                <$t>::try_from(v).map_err(|_| String::from("out of range"))
            }
        }
    )*};
}
unsigned_from_arg!(u8, u16, u32, usize);

impl FromArg for u64 {
    fn from_arg(s: &str) -> Result<Self, String> {
        parse_u64(s)
    }
}
impl FromArg for i64 {
    fn from_arg(s: &str) -> Result<Self, String> {
        parse_i64(s)
    }
}
macro_rules! signed_from_arg {
    ($($t:ty),*) => {$(
        impl FromArg for $t {
            fn from_arg(s: &str) -> Result<Self, String> {
                let v = parse_i64(s)?;
                <$t>::try_from(v).map_err(|_| String::from("out of range"))
            }
        }
    )*};
}
signed_from_arg!(i8, i16, i32);
impl FromArg for bool {
    fn from_arg(s: &str) -> Result<Self, String> {
        parse_bool(s)
    }
}
impl FromArg for f64 {
    fn from_arg(s: &str) -> Result<Self, String> {
        parse_f64(s)
    }
}
impl FromArg for String {
    fn from_arg(s: &str) -> Result<Self, String> {
        parse_string(s)
    }
}
impl FromArg for RawString {
    fn from_arg(s: &str) -> Result<Self, String> {
        Ok(RawString(s.to_string()))
    }
}
impl FromArg for Ipv4Addr {
    fn from_arg(s: &str) -> Result<Self, String> {
        parse_ipv4(s)
    }
    fn from_arg_in(s: &str, cx: &ArgContext) -> Result<Self, String> {
        cx.ip(s)
    }
}
impl FromArg for [u8; 6] {
    fn from_arg(s: &str) -> Result<Self, String> {
        parse_ether(s)
    }
    fn from_arg_in(s: &str, cx: &ArgContext) -> Result<Self, String> {
        cx.ether(s)
    }
}
/// Click's `IPPrefixArg(true)`: a prefix, or an address alone (/32); a
/// name that is both an address and a prefix means the address.
impl FromArg for IpPrefix {
    fn from_arg(s: &str) -> Result<Self, String> {
        parse_ipv4_prefix(s).map(|(addr, mask)| IpPrefix { addr, mask })
    }
    fn from_arg_in(s: &str, cx: &ArgContext) -> Result<Self, String> {
        cx.prefix(s, true)
            .map(|(addr, mask)| IpPrefix { addr, mask })
    }
}
impl FromArg for Seconds {
    fn from_arg(s: &str) -> Result<Self, String> {
        parse_time_ns(s).map(Seconds)
    }
}
impl FromArg for Bandwidth {
    fn from_arg(s: &str) -> Result<Self, String> {
        parse_bandwidth(s).map(Bandwidth)
    }
}

/// State of one argument in [`Args`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kw {
    /// Consumed as a positional argument.
    Taken,
    /// Consumed as a keyword argument.
    TakenKeyword,
    /// Positional (no keyword).
    Positional,
    /// Keyword of this byte length.
    Keyword(usize),
}

/// Click's keyword-argument parser (`Args`).  An argument whose first word
/// consists of `[A-Za-z0-9_:.?!]` characters, followed by whitespace and a
/// nonempty value, *may* be a keyword argument; it is treated as a keyword
/// when a read asks for that keyword, and as positional otherwise (a
/// mandatory positional read takes it if its keyword was not found).
///
/// Reads take effect immediately; call [`Args::complete`] at the end to
/// report unknown keywords and surplus positional arguments.
#[derive(Clone, Debug)]
pub struct Args<'a> {
    conf: Vec<String>,
    kw: Vec<Kw>,
    cx: ArgContext<'a>,
}

fn keyword_len(arg: &str) -> Kw {
    let b = arg.as_bytes();
    let mut s = 0;
    while s < b.len()
        && (b[s].is_ascii_alphanumeric() || matches!(b[s], b'_' | b':' | b'.' | b'?' | b'!'))
    {
        s += 1;
    }
    let mut t = s;
    while t < b.len() && is_space(b[t]) {
        t += 1;
    }
    // A keyword never starts with a digit: `18.26.4.255 1.255.255.255` is a
    // positional list of addresses, not keyword `18.26.4.255`.
    if s == 0 || s == t || t == b.len() || b[0].is_ascii_digit() {
        Kw::Positional
    } else {
        Kw::Keyword(s)
    }
}

impl Args<'static> {
    /// Split `config` with [`split_args`] and prepare for reading, without
    /// names: only literal addresses and ports parse. Elements use
    /// [`Args::with_context`] (through their configure context's `args`).
    pub fn new(config: &str) -> Args<'static> {
        Args::from_vec(split_args(config))
    }

    /// Prepare already split arguments (no names).
    pub fn from_vec(conf: Vec<String>) -> Args<'static> {
        Args::from_vec_in(conf, ArgContext::none())
    }
}

impl<'a> Args<'a> {
    /// Split `config` and prepare for reading in context `cx`, where
    /// AddressInfo and PortInfo names stand for addresses and ports.
    pub fn with_context(config: &str, cx: ArgContext<'a>) -> Args<'a> {
        Args::from_vec_in(split_args(config), cx)
    }

    /// Prepare already split arguments, in context `cx`.
    pub fn from_vec_in(conf: Vec<String>, cx: ArgContext<'a>) -> Args<'a> {
        let kw = conf.iter().map(|a| keyword_len(a)).collect();
        Args { conf, kw, cx }
    }

    /// The context reads parse in.
    pub fn context(&self) -> ArgContext<'a> {
        self.cx
    }

    /// Click's `Args::find`: locate the value for `keyword`.  The last
    /// matching keyword argument wins.  A positional read takes the first
    /// unread argument, unless a keyword argument that was already read
    /// precedes it (positional arguments must come first).
    fn find(&mut self, keyword: &str, positional: bool, mandatory: bool) -> Option<String> {
        let klen = keyword.len();
        let mut got: Option<(usize, usize)> = None;
        // None = not yet determined; Some(None) = blocked; Some(Some(i)) = index
        let mut position: Option<Option<usize>> = None;
        for i in 0..self.kw.len() {
            if position.is_none() && self.kw[i] != Kw::Taken {
                position = Some(match self.kw[i] {
                    Kw::Positional | Kw::Keyword(_) => Some(i),
                    _ => None,
                });
            }
            if let Kw::Keyword(n) = self.kw[i] {
                if n == klen && self.conf[i].as_bytes()[..n] == *keyword.as_bytes() {
                    got = Some((i, n));
                    self.kw[i] = Kw::TakenKeyword;
                }
            }
        }
        if positional {
            if let Some(Some(p)) = position {
                let take = match self.kw[p] {
                    Kw::Positional => true,
                    Kw::Keyword(_) => got.is_none() && mandatory,
                    _ => false,
                };
                if take {
                    if got.is_none_or(|(g, _)| g < p) {
                        got = Some((p, 0));
                    }
                    self.kw[p] = Kw::Taken;
                }
            }
        }
        let (i, n) = got?;
        let arg = &self.conf[i];
        if n == 0 {
            Some(arg.clone())
        } else {
            let start = skip_ws(arg, n);
            Some(arg[start..].to_string())
        }
    }

    fn read_impl<T: FromArg>(
        &mut self,
        kw: &str,
        positional: bool,
        mandatory: bool,
    ) -> Result<Option<T>, String> {
        match self.find(kw, positional, mandatory) {
            None if mandatory => Err(format!("missing mandatory {kw} argument")),
            None => Ok(None),
            Some(v) => T::from_arg_in(&v, &self.cx)
                .map(Some)
                .map_err(|e| format!("{kw}: {e}")),
        }
    }

    /// Read an optional argument given by keyword or position.
    pub fn read_p<T: FromArg>(&mut self, kw: &str) -> Result<Option<T>, String> {
        self.read_impl(kw, true, false)
    }

    /// Read an optional keyword-only argument.
    pub fn read<T: FromArg>(&mut self, kw: &str) -> Result<Option<T>, String> {
        self.read_impl(kw, false, false)
    }

    /// Read a mandatory argument given by keyword or position.
    pub fn read_mp<T: FromArg>(&mut self, kw: &str) -> Result<T, String> {
        self.read_impl(kw, true, true)
            .map(|v| v.expect("mandatory"))
    }

    /// Read a mandatory keyword-only argument.
    pub fn read_m<T: FromArg>(&mut self, kw: &str) -> Result<T, String> {
        self.read_impl(kw, false, true)
            .map(|v| v.expect("mandatory"))
    }

    /// Read every occurrence of a repeated keyword argument, in order.
    pub fn read_all<T: FromArg>(&mut self, kw: &str) -> Result<Vec<T>, String> {
        let mut out = Vec::new();
        for i in 0..self.kw.len() {
            if let Kw::Keyword(n) = self.kw[i] {
                if n == kw.len() && self.conf[i].as_bytes()[..n] == *kw.as_bytes() {
                    self.kw[i] = Kw::TakenKeyword;
                    let start = skip_ws(&self.conf[i], n);
                    out.push(
                        T::from_arg_in(&self.conf[i][start..], &self.cx)
                            .map_err(|e| format!("{kw}: {e}"))?,
                    );
                }
            }
        }
        Ok(out)
    }

    /// Remove and return all unread arguments, keyword-looking or not.
    pub fn rest(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        for i in 0..self.kw.len() {
            if matches!(self.kw[i], Kw::Positional | Kw::Keyword(_)) {
                self.kw[i] = Kw::Taken;
                out.push(self.conf[i].clone());
            }
        }
        out
    }

    /// Number of arguments not yet read.
    pub fn remaining(&self) -> usize {
        self.kw
            .iter()
            .filter(|k| matches!(k, Kw::Positional | Kw::Keyword(_)))
            .count()
    }

    /// Click's `check_complete`: report unknown keyword arguments
    /// (`"KW: unknown argument"`) and surplus positional arguments
    /// (`"too many arguments"`).  Multiple errors are joined by newlines.
    pub fn complete(&self) -> Result<(), String> {
        let mut errs: Vec<String> = Vec::new();
        let mut too_many = false;
        for (i, k) in self.kw.iter().enumerate() {
            match k {
                Kw::Positional => too_many = true,
                Kw::Keyword(n) => errs.push(format!("{}: unknown argument", &self.conf[i][..*n])),
                Kw::Taken | Kw::TakenKeyword => {}
            }
        }
        if too_many {
            errs.push("too many arguments".into());
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(errs.join("\n"))
        }
    }
}

fn skip_ws(s: &str, mut i: usize) -> usize {
    let b = s.as_bytes();
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    i
}
