//! Numbers, rates, intervals and prefixes printed as Click prints them.

use crate::prelude::*;
use alloc::format;
use core::net::Ipv4Addr;

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

/// Click's `cp_unparse_real10`: `x / 10^digits` with trailing zeros cut.
fn unparse_real10(x: u64, digits: u32) -> String {
    let p = 10u64.pow(digits);
    let (i, f) = (x / p, x % p);
    if f == 0 {
        return i.to_string();
    }
    let frac = format!("{:0w$}", f, w = digits as usize);
    format!("{}.{}", i, frac.trim_end_matches('0'))
}

/// Click's `BandwidthArg::unparse`: a byte rate as `kbps`, `Mbps`, `Gbps`
/// or (for the largest) `MBps`.
pub fn unparse_bandwidth(bytes_per_sec: u64) -> String {
    let x = bytes_per_sec;
    if x >= 0x2000_0000 {
        format!("{}MBps", unparse_real10(x, 6))
    } else if x >= 125_000_000 {
        format!("{}Gbps", unparse_real10(x * 8, 9))
    } else if x >= 125_000 {
        format!("{}Mbps", unparse_real10(x * 8, 6))
    } else {
        format!("{}kbps", unparse_real10(x * 8, 3))
    }
}

/// Click's `Timestamp::unparse_interval`: `500ms`, `20us`, `7ns` under a
/// second, `1.500000s` from a second up.
pub fn unparse_interval(ns: i64) -> String {
    if (0..1_000_000_000).contains(&ns) {
        if ns % 1_000_000 == 0 {
            format!("{}ms", ns / 1_000_000)
        } else if ns % 1000 == 0 {
            format!("{}us", ns / 1000)
        } else {
            format!("{}ns", ns)
        }
    } else {
        format!("{}s", Timestamp::from_nsec(ns))
    }
}

/// Click's `IPAddress::unparse_with_mask`: `a.b.c.d/len`, or
/// `a.b.c.d/m.m.m.m` for a non-prefix mask.
pub fn unparse_with_mask(addr: u32, mask: u32) -> String {
    match prefix_len(mask) {
        Some(l) => format!("{}/{}", Ipv4Addr::from(addr), l),
        None => format!("{}/{}", Ipv4Addr::from(addr), Ipv4Addr::from(mask)),
    }
}

/// The prefix length of a contiguous mask.
pub fn prefix_len(mask: u32) -> Option<u32> {
    let l = mask.leading_ones();
    if l == 32 || mask << l == 0 {
        Some(l)
    } else {
        None
    }
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
    fn bandwidth_unparse() {
        assert_eq!(unparse_bandwidth(1_250_000), "10Mbps");
        assert_eq!(unparse_bandwidth(1_000_000), "8Mbps");
        assert_eq!(unparse_bandwidth(125), "1kbps");
        assert_eq!(unparse_bandwidth(100), "0.8kbps");
        assert_eq!(unparse_bandwidth(125_000_000), "1Gbps");
        assert_eq!(unparse_bandwidth(0x2000_0000), "536.870912MBps");
    }

    #[test]
    fn intervals() {
        assert_eq!(unparse_interval(500_000_000), "500ms");
        assert_eq!(unparse_interval(20_000), "20us");
        assert_eq!(unparse_interval(7), "7ns");
        assert_eq!(unparse_interval(0), "0ms");
        assert_eq!(unparse_interval(1_500_000_000), "1.500000s");
    }

    #[test]
    fn real2() {
        assert_eq!(unparse_real2(1024, 10), "1");
        assert_eq!(unparse_real2(512, 10), "0.5");
        assert_eq!(unparse_real2(1024 * 1000 + 256, 10), "1000.25");
        assert_eq!(unparse_real2(1, 10), "0.001");
    }

    #[test]
    fn prefixes() {
        assert_eq!(unparse_with_mask(0x0a00_0000, 0xff00_0000), "10.0.0.0/8");
        assert_eq!(unparse_with_mask(0x0a00_0001, u32::MAX), "10.0.0.1/32");
        assert_eq!(unparse_with_mask(0, 0xff00_ff00), "0.0.0.0/255.0.255.0");
        assert_eq!(prefix_len(0), Some(0));
        assert_eq!(prefix_len(0xffff_0001), None);
    }
}
