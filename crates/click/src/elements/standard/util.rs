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
    /// Whether the bucket holds at least `n` tokens.
    pub fn contains(&self, n: u64) -> bool {
        self.units >= n as u128 * UNIT
    }
    /// Removes `n` tokens, emptying the bucket if it holds fewer.
    pub fn remove(&mut self, n: u64) {
        self.units = self.units.saturating_sub(n as u128 * UNIT);
    }
    /// Whole tokens in the bucket.
    pub fn size(&self) -> u64 {
        (self.units / UNIT) as u64
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

/// A small deterministic pseudo-random generator (SplitMix64) for elements
/// that choose at random (RandomSwitch, RED). Each element seeds its own
/// from its name, so a configuration behaves the same on every run.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    /// A generator seeded from a string (an element's name): FNV-1a.
    pub fn from_name(name: &str) -> Rng {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        Rng(h)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n` > 0), without modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let x = self.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }
}

/// Click's `GapRate`: a uniform rate of `rate` events per second, counted
/// per wall-clock second. `need_update(now)` says whether the user is
/// behind the ideal process (and should cause an event, then `update`).
/// A user that falls behind catches up in a burst, by at most one second's
/// worth of events. Rate 0 allows nothing.
#[derive(Clone, Debug, Default)]
pub struct GapRate {
    rate: u64,
    sec: Option<i64>,
    count: i64,
}

impl GapRate {
    pub fn new(rate: u64) -> GapRate {
        GapRate {
            rate,
            sec: None,
            count: 0,
        }
    }
    pub fn rate(&self) -> u64 {
        self.rate
    }
    /// Events the ideal process has caused so far in `now`'s second, and
    /// whether the next one is at least half-way due.
    fn need(&self, now: Timestamp) -> (i64, bool) {
        let x = u128::from(now.subsec_nsec()) * u128::from(self.rate);
        let need = (x / 1_000_000_000) as i64;
        (need, x % 1_000_000_000 >= 500_000_000)
    }
    /// Changes the rate, keeping this second's progress in step with it.
    pub fn set_rate(&mut self, rate: u64, now: Timestamp) {
        if rate != self.rate {
            self.rate = rate;
            if self.sec.is_some() {
                self.count = self.need(now).0;
            }
        }
    }
    pub fn reset(&mut self) {
        self.sec = None;
    }
    pub fn need_update(&mut self, now: Timestamp) -> bool {
        if self.rate == 0 {
            return false;
        }
        let (need, half) = self.need(now);
        match self.sec {
            None => {
                self.sec = Some(now.sec());
                self.count = need + i64::from(half);
            }
            Some(s) if now.sec() > s => {
                self.sec = Some(now.sec());
                if self.count > 0 {
                    self.count -= self.rate as i64;
                }
            }
            _ => {}
        }
        need >= self.count
    }
    /// Counts `n` events (bytes, for bandwidth shapers).
    pub fn update_with(&mut self, n: i64) {
        self.count += n;
    }
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

/// The configuration of DelayShaper and DelayUnqueue: `DELAY` (a time, at
/// least 0), in nanoseconds.
pub fn delay_arg(config: &str, cx: &ConfigureCtx) -> Result<i64, String> {
    let mut a = cx.args(config);
    let d = a.read_mp::<args::Seconds>("DELAY")?.0;
    a.complete()?;
    if d < 0 {
        return Err("DELAY: must be >= 0".into());
    }
    Ok(d)
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
    fn gaprate_uniform() {
        let mut g = GapRate::new(1000);
        let t0 = Timestamp::from_sec_nsec(100, 0);
        let mut n = 0;
        // poll every 10us for 3 seconds
        for i in 0..300_000 {
            if g.need_update(t0.add_nsec(i * 10_000)) {
                g.update_with(1);
                n += 1;
            }
        }
        assert_eq!(n, 3000);
        let mut z = GapRate::new(0);
        assert!(!z.need_update(t0));
    }

    #[test]
    fn rng_is_deterministic_and_uniform() {
        let mut a = Rng::from_name("rs");
        let mut b = Rng::from_name("rs");
        let mut hist = [0u32; 3];
        for _ in 0..30_000 {
            let x = a.below(3);
            assert_eq!(x, b.below(3));
            hist[x as usize] += 1;
        }
        for h in hist {
            assert!((9_500..10_500).contains(&h), "{:?}", hist);
        }
    }

    #[test]
    fn real2() {
        assert_eq!(unparse_real2(1024, 10), "1");
        assert_eq!(unparse_real2(512, 10), "0.5");
        assert_eq!(unparse_real2(1024 * 1000 + 256, 10), "1000.25");
        assert_eq!(unparse_real2(1, 10), "0.001");
    }
}

/// The handlers every [`DropStats`] user documents (the Check*Header
/// elements).
pub const DROP_HANDLERS: &[HandlerDoc] = &[
    HandlerDoc {
        name: "drops",
        mode: HandlerMode::Read,
        text: "Number of invalid packets seen.",
    },
    HandlerDoc {
        name: "drop_details",
        mode: HandlerMode::Read,
        text:
            "Invalid packets by reason, one `COUNT<tab>REASON` line each (only with DETAILS true).",
    },
];

/// Drop accounting shared by the `Check…Header` elements: the drop count,
/// per-reason counts under `DETAILS`, the "first drop, or every drop under
/// `VERBOSE`" message rule, and the `drops` / `drop_details` handlers.
#[derive(Default)]
pub struct DropStats<const N: usize> {
    drops: u64,
    verbose: bool,
    details: Option<[u64; N]>,
}

impl<const N: usize> DropStats<N> {
    /// Reads the `VERBOSE` and `DETAILS` keywords.
    pub fn configure(&mut self, a: &mut Args) -> Result<(), String> {
        self.verbose = a.read::<bool>("VERBOSE")?.unwrap_or(false);
        self.details = a
            .read::<bool>("DETAILS")?
            .unwrap_or(false)
            .then_some([0; N]);
        Ok(())
    }

    /// Counts a drop for `reason`; true when its message should be printed.
    #[inline]
    pub fn record(&mut self, reason: usize) -> bool {
        let say = self.drops == 0 || self.verbose;
        self.drops += 1;
        if let Some(d) = &mut self.details {
            d[reason] += 1;
        }
        say
    }

    /// The `drops` and `drop_details` read handlers (`None` for others, and
    /// for `drop_details` without `DETAILS`).
    pub fn read_handler(&self, name: &str, reasons: &[&str; N]) -> Option<HandlerResult<String>> {
        match name {
            "drops" => Some(Ok(self.drops.to_string())),
            "drop_details" => {
                let d = self.details.as_ref()?;
                let mut s = String::new();
                for (n, r) in d.iter().zip(reasons) {
                    s.push_str(&format!("{n}\t{r}\n"));
                }
                Some(Ok(s))
            }
            _ => None,
        }
    }
}
