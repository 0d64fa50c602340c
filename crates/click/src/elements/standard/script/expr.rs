//! The Script's own read handlers, which its expressions call as
//! `$(add $x 1)`, `$(eq A B)`, `$(sprintf FMT ...)` and so on: arithmetic,
//! comparisons and logic, words and strings, `sprintf`, random numbers,
//! variables, `run`, and the private `kill` and `cat`.

use super::insn::parse_signal;
use super::Script;
use crate::common::unparse::fmt_double;
use crate::prelude::*;
use alloc::format;
use click_lang::args;

pub(super) fn unparse_bool(b: bool) -> String {
    String::from(if b { "true" } else { "false" })
}

enum Num {
    I(i64),
    D(f64),
}

fn parse_num(w: &str) -> Option<Num> {
    if let Ok(i) = args::parse_i64(w) {
        return Some(Num::I(i));
    }
    args::parse_f64(w).ok().map(Num::D)
}

/// An integer as Click's IntArg reads it, signed or unsigned 64-bit,
/// widened so that the two compare exactly.
fn parse_int(w: &str) -> Option<i128> {
    match args::parse_i64(w) {
        Ok(i) => Some(i128::from(i)),
        Err(_) => args::parse_u64(w).ok().map(i128::from),
    }
}

/// The widest field and the longest precision `sprintf` takes. Click
/// clamps number fields at 128 characters (its conversion buffer) and
/// takes any `%s` field (a width that overflows its `int`, or a 2 GB
/// allocation); here anything over a page is refused as an error.
const MAX_FIELD: usize = 4096;

impl Script {
    /// The Script's own read handlers that take parameters.
    pub(super) fn own_read(
        &mut self,
        h: &str,
        param: &str,
        cx: &Ctx,
    ) -> Option<Result<String, String>> {
        let words = || args::split_words(param);
        Some(match h {
            "add" | "sub" | "min" | "max" | "mul" | "div" | "idiv" => arith(h, &words()),
            "mod" | "rem" => {
                let w = words();
                if w.len() != 2 {
                    Err("expected two numbers".into())
                } else {
                    match (args::parse_i64(&w[0]), args::parse_i64(&w[1])) {
                        (Ok(a), Ok(b)) => match a.checked_rem(b) {
                            Some(r) => Ok(r.to_string()),
                            None if b == 0 => Err("division by zero".into()),
                            // i64::MIN % -1: the quotient overflows, the
                            // remainder is 0
                            None => Ok(String::from("0")),
                        },
                        _ if h == "rem" => match (args::parse_f64(&w[0]), args::parse_f64(&w[1])) {
                            (Ok(a), Ok(b)) => Ok(fmt_double(a % b)),
                            _ => Err("expected two numbers".into()),
                        },
                        _ => Err("expected two numbers".into()),
                    }
                }
            }
            "neg" | "abs" => match parse_num(param.trim()) {
                Some(Num::I(x)) => Ok(match (h, x.checked_neg()) {
                    ("abs", _) if x >= 0 => x.to_string(),
                    (_, Some(n)) => n.to_string(),
                    // -i64::MIN does not fit: in floating point, as a
                    // number that does not fit is read
                    (_, None) => fmt_double(-(x as f64)),
                }),
                Some(Num::D(x)) => Ok(fmt_double(if h == "neg" { -x } else { x.abs() })),
                None => Err("expected one number".into()),
            },
            "eq" | "ne" | "lt" | "gt" | "le" | "ge" => {
                let w = words();
                if w.len() != 2 {
                    Err("expected two numbers".into())
                } else {
                    let ord = match (parse_int(&w[0]), parse_int(&w[1])) {
                        (Some(a), Some(b)) => a.partial_cmp(&b),
                        _ => match (args::parse_f64(&w[0]), args::parse_f64(&w[1])) {
                            (Ok(a), Ok(b)) => a.partial_cmp(&b),
                            _ => Some(args::unquote(&w[0]).cmp(&args::unquote(&w[1]))),
                        },
                    };
                    use core::cmp::Ordering::*;
                    let r = match (h, ord) {
                        ("eq", Some(Equal)) => true,
                        ("ne", o) => o != Some(Equal),
                        ("lt", Some(Less)) => true,
                        ("gt", Some(Greater)) => true,
                        ("le", Some(Less | Equal)) => true,
                        ("ge", Some(Greater | Equal)) => true,
                        _ => false,
                    };
                    Ok(unparse_bool(r))
                }
            }
            "not" => match args::parse_bool(param.trim()) {
                Ok(b) => Ok(unparse_bool(!b)),
                Err(_) => Err("syntax error".into()),
            },
            "and" | "or" | "nand" | "nor" => {
                let zero = h == "and" || h == "nand";
                let mut cur = zero;
                let mut ok = true;
                for w in words() {
                    if cur != zero {
                        break;
                    }
                    match args::parse_bool(&w) {
                        Ok(x) => cur = if zero { cur && x } else { cur || x },
                        Err(_) => {
                            ok = false;
                            break;
                        }
                    }
                }
                if !ok {
                    Err("syntax error".into())
                } else {
                    Ok(unparse_bool(if h == "nand" || h == "nor" {
                        !cur
                    } else {
                        cur
                    }))
                }
            }
            "if" => {
                let mut rest = String::from(param);
                let c = args::shift_word(&mut rest);
                match args::parse_bool(&c) {
                    Ok(true) => Ok(args::shift_word(&mut rest)),
                    Ok(false) => {
                        args::shift_word(&mut rest);
                        Ok(args::shift_word(&mut rest))
                    }
                    Err(_) => Err("syntax error".into()),
                }
            }
            "in" => {
                let w = words();
                let r = match w.split_first() {
                    Some((x, rest)) => {
                        let x = args::unquote(x);
                        rest.iter().any(|y| args::unquote(y) == x)
                    }
                    None => false,
                };
                Ok(unparse_bool(r))
            }
            "first" => Ok(words().into_iter().next().unwrap_or_default()),
            "length" => Ok(param.len().to_string()),
            "unquote" => Ok(args::unquote(param)),
            "now" => Ok(cx.now().to_string()),
            "random" => {
                self.seed ^= self.seed << 13;
                self.seed ^= self.seed >> 7;
                self.seed ^= self.seed << 17;
                let r = (self.seed >> 33) as u32;
                let w = words();
                let p = |s: &str| {
                    args::parse_u64(s)
                        .ok()
                        .filter(|v| *v <= u64::from(u32::MAX))
                };
                match w.len() {
                    0 => Ok((r & 0x7FFF_FFFF).to_string()),
                    1 => match p(&w[0]) {
                        Some(n) if n > 0 => Ok((u64::from(r) % n).to_string()),
                        _ => Err("bad N".into()),
                    },
                    2 => match (p(&w[0]), p(&w[1])) {
                        (Some(a), Some(b)) if b >= a => {
                            Ok((a + u64::from(r) % (b - a + 1)).to_string())
                        }
                        _ => Err("bad N".into()),
                    },
                    _ => Err("too many arguments".into()),
                }
            }
            "htons" | "ntohs" => match args::parse_i64(param.trim()) {
                Ok(x) => Ok((x as u16).swap_bytes().to_string()),
                Err(_) => Err("syntax error".into()),
            },
            "htonl" | "ntohl" => match args::parse_i64(param.trim()) {
                Ok(x) => Ok((x as u32).swap_bytes().to_string()),
                Err(_) => Err("syntax error".into()),
            },
            "sprintf" => sprintf(param, cx.max_handler_value()),
            "get" => {
                let w = words();
                match w.len() {
                    0 => Err("no variable".into()),
                    1 => {
                        if w[0] == "args" {
                            Ok(self.run_args.clone())
                        } else {
                            match self.find_var(&w[0], false) {
                                Some(i) => Ok(self.vars[i].1.clone()),
                                None => Err(format!("undefined variable '{}'", w[0])),
                            }
                        }
                    }
                    _ => Err("too many arguments".into()),
                }
            }
            "shift" => {
                let w = words();
                if w.len() != 1 {
                    Err("syntax error".into())
                } else {
                    match self.find_var(&w[0], false) {
                        Some(i) => Ok(args::shift_word(&mut self.vars[i].1)),
                        None => Err(format!("undefined variable '{}'", w[0])),
                    }
                }
            }
            "run" => self.run_from_start("run", param, false, cx),
            // private too: only the script itself can send signals
            "kill" => {
                let w = words();
                let Some(signo) = w.first().and_then(|s| parse_signal(s)) else {
                    return Some(Err("bad SIGNO".into()));
                };
                for pid in &w[1..] {
                    let Ok(pid) = args::parse_i64(pid) else {
                        return Some(Err("bad PID".into()));
                    };
                    if let Err(e) = cx.kill(signo, pid) {
                        return Some(Err(e));
                    }
                }
                Ok(String::new())
            }
            // private (see `is_private`): only the script itself can read
            // files
            "cat" => {
                let file = args::uncomment(param);
                if file.is_empty() {
                    Err("expected filename".into())
                } else {
                    cx.read_file(&file)
                }
            }
            _ => return None,
        })
    }

    /// Whether `h` is one of the Script's own read handlers (for the name
    /// `read` prints: `script.h`, as Click's `unparse_name` does).
    pub(super) fn is_own_read(h: &str) -> bool {
        matches!(
            h,
            "add"
                | "sub"
                | "min"
                | "max"
                | "mul"
                | "div"
                | "idiv"
                | "mod"
                | "rem"
                | "neg"
                | "abs"
                | "eq"
                | "ne"
                | "lt"
                | "gt"
                | "le"
                | "ge"
                | "not"
                | "and"
                | "or"
                | "nand"
                | "nor"
                | "if"
                | "in"
                | "first"
                | "length"
                | "unquote"
                | "now"
                | "random"
                | "htons"
                | "ntohs"
                | "htonl"
                | "ntohl"
                | "sprintf"
                | "get"
                | "shift"
                | "run"
                | "kill"
                | "cat"
        )
    }
}

fn arith(what: &str, words: &[String]) -> Result<String, String> {
    let unit = matches!(what, "add" | "sub");
    let mut acc: i64 = if unit { 0 } else { 1 };
    let mut dacc: f64 = acc as f64;
    let mut use_d = matches!(what, "div" | "idiv");
    let mut by_zero = false;
    for (k, w) in words.iter().enumerate() {
        let first = k == 0;
        // the integer whose operation overflowed, if that is why this word
        // goes to floating point
        let mut int = None;
        if !use_d {
            if let Ok(a) = args::parse_i64(w) {
                int = Some(a);
                let next = if first {
                    Some(a)
                } else {
                    match what {
                        "add" => acc.checked_add(a),
                        "sub" => acc.checked_sub(a),
                        "min" => Some(acc.min(a)),
                        "max" => Some(acc.max(a)),
                        _ => acc.checked_mul(a),
                    }
                };
                if let Some(v) = next {
                    acc = v;
                    continue;
                }
            }
            // not an integer, or the integer result overflows: on in
            // floating point, as Click's userlevel Script goes on with a
            // number that is not an integer
            use_d = true;
            dacc = acc as f64;
        }
        let d = match int {
            Some(a) => a as f64,
            None => args::parse_f64(w).map_err(|_| String::from("expected list of numbers"))?,
        };
        dacc = if first {
            d
        } else {
            match what {
                "add" => dacc + d,
                "sub" => dacc - d,
                "min" => dacc.min(d),
                "max" => dacc.max(d),
                "mul" => dacc * d,
                _ => {
                    by_zero |= d == 0.0;
                    dacc / d
                }
            }
        };
    }
    if what == "idiv" {
        // the quotient truncated (`as` rounds toward zero), when it fits
        return if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&dacc) {
            Ok((dacc as i64).to_string())
        } else if by_zero {
            Err("division by zero".into())
        } else {
            Err("result out of range".into())
        };
    }
    Ok(if use_d {
        fmt_double(dacc)
    } else {
        acc.to_string()
    })
}

/// Click's `sprintf` handler: `FMT ARGS...` with `%d %i %u %x %X %o %s %%`,
/// flags `0 - + # space`, a field width and a precision (at most
/// [`MAX_FIELD`] each); the result may not grow over `max` bytes.
fn sprintf(param: &str, max: usize) -> Result<String, String> {
    let mut rest = String::from(param);
    let fmt = args::unquote(&args::shift_word(&mut rest));
    let mut out = String::new();
    let b = fmt.as_bytes();
    let mut i = 0;
    let err = || Err::<String, String>("syntax error".into());
    let room = |out: &String, n: usize| {
        if out.len().saturating_add(n) > max {
            Err(format!("result too large (over {max} bytes)"))
        } else {
            Ok(())
        }
    };
    // a field width or precision: digits, refused past MAX_FIELD (and
    // never overflowing on the way there)
    let number = |i: &mut usize, what: &str| -> Result<usize, String> {
        let mut n = 0usize;
        while *i < b.len() && b[*i].is_ascii_digit() {
            n = n
                .saturating_mul(10)
                .saturating_add(usize::from(b[*i] - b'0'));
            *i += 1;
        }
        if n > MAX_FIELD {
            return Err(format!("{what} too large (at most {MAX_FIELD})"));
        }
        Ok(n)
    };
    while i < b.len() {
        if b[i] != b'%' {
            let start = i;
            while i < b.len() && b[i] != b'%' {
                i += 1;
            }
            room(&out, i - start)?;
            out.push_str(&fmt[start..i]);
            continue;
        }
        i += 1;
        let mut left = false;
        let mut zero = false;
        let mut plus = false;
        while i < b.len() && matches!(b[i], b'0' | b'#' | b'-' | b' ' | b'+') {
            match b[i] {
                b'-' => left = true,
                b'0' => zero = true,
                b'+' => plus = true,
                _ => {}
            }
            i += 1;
        }
        let width = number(&mut i, "field width")?;
        let mut prec: Option<usize> = None;
        if i < b.len() && b[i] == b'.' {
            i += 1;
            prec = Some(number(&mut i, "precision")?);
        }
        while i < b.len() && matches!(b[i], b'h' | b'l' | b'L' | b'q') {
            i += 1;
        }
        if i >= b.len() {
            return err();
        }
        let conv = b[i];
        i += 1;
        let mut body = match conv {
            b'%' => "%".to_string(),
            b'd' | b'i' => {
                let v = args::parse_i64(&args::shift_word(&mut rest))
                    .map_err(|_| String::from("syntax error"))?;
                if plus && v >= 0 {
                    format!("+{}", v)
                } else {
                    v.to_string()
                }
            }
            b'u' | b'x' | b'X' | b'o' => {
                let v = args::parse_i64(&args::shift_word(&mut rest))
                    .map_err(|_| String::from("syntax error"))? as u64;
                match conv {
                    b'u' => v.to_string(),
                    b'x' => format!("{:x}", v),
                    b'X' => format!("{:X}", v),
                    _ => format!("{:o}", v),
                }
            }
            b's' => {
                let s = args::parse_string(&args::shift_word(&mut rest))
                    .map_err(|_| String::from("syntax error"))?;
                match prec {
                    Some(p) => s.chars().take(p).collect(),
                    None => s,
                }
            }
            _ => return err(),
        };
        // a number's precision is its least number of digits, as in C
        if let (Some(p), b'd' | b'i' | b'u' | b'x' | b'X' | b'o') = (prec, conv) {
            let (sign, digits) = body.split_at(usize::from(body.starts_with(['-', '+'])));
            if digits.len() < p {
                body = format!("{sign}{}{digits}", "0".repeat(p - digits.len()));
            }
        }
        let len = body.chars().count();
        room(&out, body.len().max(width))?;
        if len >= width {
            out.push_str(&body);
        } else if left {
            out.push_str(&body);
            out.extend(core::iter::repeat_n(' ', width - len));
        } else if zero && conv != b's' && prec.is_none() {
            let (sign, digits) = if body.starts_with('-') || body.starts_with('+') {
                body.split_at(1)
            } else {
                ("", &body[..])
            };
            out.push_str(sign);
            out.extend(core::iter::repeat_n('0', width - len));
            out.push_str(digits);
        } else {
            out.extend(core::iter::repeat_n(' ', width - len));
            out.push_str(&body);
        }
    }
    if !rest.trim().is_empty() {
        return err();
    }
    Ok(out)
}
