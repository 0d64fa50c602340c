//! Helpers shared by the standard elements: Click's number formatting,
//! its rate estimator, a token bucket, source data and handler calls.

use crate::prelude::*;
use alloc::format;
use click_lang::args;

/// The data Click's sources put in packets by default (69 bytes).
pub const DEFAULT_DATA: &[u8] =
    b"Random bullshit in a packet, at least 64 bytes long. Well, now it is.";

/// Click's `CLICK_HZ` at user level: jiffies are milliseconds.
pub const CLICK_HZ: u64 = 1000;

/// Current time in jiffies.
#[inline]
pub fn jiffies(t: Timestamp) -> u64 {
    (t.nsec().max(0) as u64) / 1_000_000
}

/// Packet contents for DATA and LENGTH, as Click's sources build them:
/// LENGTH < 0 means DATA as is; otherwise DATA is cut or repeated to LENGTH.
pub fn source_data(data: &[u8], length: i64) -> Vec<u8> {
    if length < 0 {
        data.to_vec()
    } else if data.is_empty() {
        alloc::vec![0; length as usize]
    } else {
        data.iter().copied().cycle().take(length as usize).collect()
    }
}

/// Click's `String(double)`: `%.12g`.
pub fn fmt_double(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    const P: i32 = 12;
    // exponent after rounding to P significant digits
    let e = format!("{:.*e}", (P - 1) as usize, x);
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..P).contains(&exp) {
        let mant = strip_zeros(mant);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{}{:02}", mant, sign, exp.abs())
    } else {
        let decimals = (P - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{:.*}", decimals, x)).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// Click's `cp_unparse_real2`: a fixed-point value with `frac_bits`
/// fractional bits, printed with the fewest decimals that read back exactly.
pub fn unparse_real2(real: u64, frac_bits: u32) -> String {
    let one: u64 = 1 << frac_bits;
    let mut s = (real >> frac_bits).to_string();
    let mut r = real & (one - 1);
    if r == 0 {
        return s;
    }
    s.push('.');
    r = 10 * r + 5;
    let mut allowable: u64 = 10;
    let mut rounder: u64 = 5;
    while rounder < (one >> 1) {
        rounder *= 10;
    }
    loop {
        if allowable > one {
            r = (r + (one >> 1)).wrapping_sub(rounder);
        }
        s.push(char::from(b'0' + ((r >> frac_bits) % 10) as u8));
        r = 10 * (r & (one - 1));
        allowable = allowable.saturating_mul(10);
        if r <= allowable {
            break;
        }
    }
    s
}

/// Click's `RateEWMA` (stability shift 4, scale 10, jiffy epochs).
#[derive(Default, Clone)]
pub struct RateEwma {
    avg: u64,
    current: u64,
    now: u64,
}

impl RateEwma {
    pub const SCALE: u32 = 10;
    const SHIFT: u32 = 4;

    fn update_with(&mut self, x: u64) {
        let xs = x << Self::SCALE;
        if xs >= self.avg {
            self.avg += (xs - self.avg) >> Self::SHIFT;
        } else {
            self.avg -= (self.avg - xs) >> Self::SHIFT;
        }
    }

    /// Moves the estimator to epoch `j`.
    pub fn update_time(&mut self, j: u64) {
        if j != self.now {
            let cur = self.current;
            self.update_with(cur);
            let mut idle = j.wrapping_sub(self.now).saturating_sub(1);
            if idle >= 100 {
                self.avg = 0;
                idle = 0;
            }
            let comp = 1u64 << (Self::SHIFT - 1);
            for _ in 0..idle {
                self.avg -= (self.avg + comp) >> Self::SHIFT;
                if self.avg == 0 {
                    break;
                }
            }
            self.now = j;
            self.current = 0;
        }
    }

    /// Adds `delta` events at epoch `j`.
    #[inline]
    pub fn update(&mut self, j: u64, delta: u64) {
        if j != self.now {
            self.update_time(j);
        }
        self.current += delta;
    }

    /// Scaled average events per epoch.
    pub fn scaled_average(&self) -> u64 {
        self.avg
    }

    /// The rate per second as Click prints it.
    pub fn unparse_rate(&self) -> String {
        unparse_real2(self.avg * CLICK_HZ, Self::SCALE)
    }
}

/// A token bucket (Click's `TokenBucket`): `rate` tokens per second, at most
/// `capacity` tokens. Tokens are kept in units of 1/1e9 token.
#[derive(Clone, Default)]
pub struct TokenBucket {
    pub rate: u64,
    pub capacity: u64,
    units: u128,
    last: i64,
}

const UNIT: u128 = 1_000_000_000;

impl TokenBucket {
    pub fn assign(&mut self, rate: u64, capacity: u64) {
        self.rate = rate;
        self.capacity = capacity.max(1);
    }
    /// Sets the bucket to hold `n` tokens as of `now`.
    pub fn set(&mut self, n: u64, now: Timestamp) {
        self.units = (n as u128 * UNIT).min(self.capacity as u128 * UNIT);
        self.last = now.nsec();
    }
    pub fn refill(&mut self, now: Timestamp) {
        let dt = now.nsec() - self.last;
        if dt > 0 {
            self.units =
                (self.units + dt as u128 * self.rate as u128).min(self.capacity as u128 * UNIT);
            self.last = now.nsec();
        }
    }
    pub fn remove_if(&mut self, n: u64) -> bool {
        let need = n as u128 * UNIT;
        if self.units >= need {
            self.units -= need;
            true
        } else {
            false
        }
    }
    /// Nanoseconds until the bucket holds `n` tokens (at least 1).
    pub fn time_until_contains(&self, n: u64) -> i64 {
        let need = n as u128 * UNIT;
        if self.units >= need {
            return 0;
        }
        if self.rate == 0 {
            return i64::MAX / 4;
        }
        let ns = (need - self.units).div_ceil(self.rate as u128);
        ns.min(i64::MAX as u128 / 4) as i64
    }
}

/// Calls a write handler described as `[element.]handler [value]` (Click's
/// HandlerCall), as sources' END_CALL and counters' *_CALL keywords do.
/// The global `stop` handler counts as one stop request.
pub fn call_write_desc(cx: &Ctx, desc: &str) {
    let mut rest = String::from(desc);
    let h = args::shift_word(&mut rest);
    if h == "stop" {
        cx.please_stop_driver();
    } else {
        let _ = cx.call_write(&h, &rest);
    }
}

/// Reads a DATA-style string argument as raw bytes (`\\<hex>` escapes may
/// produce non-UTF-8 bytes).
pub fn read_data(a: &mut Args, kw: &str, positional: bool) -> Result<Option<Vec<u8>>, String> {
    let v = if positional {
        a.read_p::<args::RawString>(kw)?
    } else {
        a.read::<args::RawString>(kw)?
    };
    match v {
        None => Ok(None),
        Some(args::RawString(s)) => {
            args::parse_string(&s).map_err(|e| format!("{}: {}", kw, e))?;
            Ok(Some(args::unquote_bytes(&s)))
        }
    }
}

/// Strips a value for a non-raw write handler (Click's `cp_uncomment`).
pub fn clean(v: &str) -> String {
    args::uncomment(v)
}

/// Parses a handler value with Click's IntArg.
pub fn parse_int(v: &str) -> Option<i64> {
    args::parse_i64(&clean(v)).ok()
}

/// Parses a handler value with Click's BoolArg.
pub fn parse_bool(v: &str) -> Option<bool> {
    args::parse_bool(&clean(v)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles() {
        assert_eq!(fmt_double(2.5), "2.5");
        assert_eq!(fmt_double(10.0), "10");
        assert_eq!(fmt_double(1.0 / 3.0), "0.333333333333");
        assert_eq!(fmt_double(1e20), "1e+20");
        assert_eq!(fmt_double(0.0001), "0.0001");
        assert_eq!(fmt_double(0.00001), "1e-05");
    }

    #[test]
    fn real2() {
        assert_eq!(unparse_real2(1024, 10), "1");
        assert_eq!(unparse_real2(512, 10), "0.5");
        assert_eq!(unparse_real2(1024 * 1000 + 256, 10), "1000.25");
        assert_eq!(unparse_real2(1, 10), "0.001");
    }
}
