//! Rates: Click's token bucket (`tokenbucket.hh`), its gap rate
//! (`gaprate.hh`), and the rate configuration the RatedUnqueue and
//! RatedSplitter families share.

use super::handlers::clean;
use super::unparse::unparse_bandwidth;
use crate::prelude::*;
use alloc::format;
use click_lang::args::{Bandwidth, Seconds};

/// A token bucket, Click's `TokenBucket` (`tokenbucket.hh`) to the bit:
/// `rate` tokens per second, at most `capacity` tokens, refilled once per
/// jiffy (1 ms, Click's userlevel `CLICK_HZ`). As in Click the count is a
/// 32-bit fraction of the capacity (`token_scale` units a token), a jiffy
/// adds `tokens_per_tick` such units (rounded down, at least 1), and the
/// bucket is full after `time_until_full` jiffies, rounded up; those
/// roundings decide rates exactly as Click's do (RATE 100 with a burst of
/// 1 refills a token every 11 jiffies, 909 packets in 10 seconds). A
/// bucket that was never refilled fills completely on its first refill
/// (Click's time point starts at 0).
#[derive(Clone)]
pub struct TokenBucket {
    /// The configured rate and capacity (for handlers).
    pub rate: u64,
    pub capacity: u64,
    tokens_per_tick: u32,
    token_scale: u32,
    time_until_full: u32,
    tokens: u32,
    time_point: Option<i64>,
}

const MAX_TOKENS: u32 = u32::MAX;

/// An idle, empty bucket (Click's `TokenBucket()`).
impl Default for TokenBucket {
    fn default() -> TokenBucket {
        TokenBucket {
            rate: 0,
            capacity: u64::from(MAX_TOKENS),
            tokens_per_tick: 0,
            token_scale: 1,
            time_until_full: u32::MAX,
            tokens: 0,
            time_point: None,
        }
    }
}
/// Jiffies a second (Click's userlevel `CLICK_HZ`).
const HZ: u64 = 1000;
const NSEC_PER_JIFFY: i64 = 1_000_000;

impl TokenBucket {
    /// A bucket of `rate` and `capacity`, full (Click's
    /// `TokenBucket(rate, capacity)`).
    pub fn new(rate: u64, capacity: u64) -> TokenBucket {
        let mut tb = TokenBucket::default();
        tb.assign(rate, capacity);
        if rate != 0 && capacity != 0 {
            tb.tokens = MAX_TOKENS;
        }
        tb
    }
    /// An unlimited bucket (any refill fills it) or, with false, an idle one
    /// (refills add nothing): Click's `assign(bool)`.
    pub fn assign_unlimited(&mut self, unlimited: bool) {
        self.token_scale = 1;
        if unlimited {
            self.tokens_per_tick = MAX_TOKENS;
            self.time_until_full = 0;
            self.rate = u64::from(MAX_TOKENS);
            self.capacity = u64::from(MAX_TOKENS);
        } else {
            self.tokens_per_tick = 0;
            self.time_until_full = u32::MAX;
            self.rate = 0;
            self.capacity = u64::from(MAX_TOKENS);
        }
    }
    /// The rate as the bucket's arithmetic has it (Click's `rate()`; may
    /// differ slightly from the configured one).
    pub fn effective_rate(&self) -> u64 {
        if self.token_scale == 0 {
            return 0;
        }
        let l = (u64::from(self.tokens_per_tick) / 2 + u64::from(self.tokens_per_tick) * HZ)
            / u64::from(self.token_scale);
        l.min(u64::from(MAX_TOKENS))
    }
    /// The capacity as the bucket's arithmetic has it (Click's
    /// `capacity()`).
    pub fn effective_capacity(&self) -> u64 {
        if self.token_scale == 0 {
            return u64::from(MAX_TOKENS);
        }
        u64::from(MAX_TOKENS / self.token_scale)
    }
    /// Whether the bucket is full.
    pub fn full(&self) -> bool {
        self.tokens == MAX_TOKENS
    }
    /// Whether the bucket is empty.
    pub fn empty(&self) -> bool {
        self.tokens == 0
    }
    /// Empties the bucket.
    pub fn clear(&mut self) {
        self.tokens = 0;
    }
    /// Refills to an absolute jiffy count (Click's `refill(time)`).
    pub fn refill_jiffies(&mut self, t: i64) {
        let diff = match self.time_point {
            Some(last) => (t - last).max(0) as u64,
            None => u64::MAX,
        };
        if diff >= u64::from(self.time_until_full) {
            self.tokens = MAX_TOKENS;
        } else if diff > 0 {
            let n = u64::from(self.tokens) + diff * u64::from(self.tokens_per_tick);
            self.tokens = n.min(u64::from(MAX_TOKENS)) as u32;
        }
        self.time_point = Some(t);
    }
    /// Jiffies until the bucket holds `n` tokens (Click's
    /// `time_until_contains`; u32::MAX for never).
    pub fn jiffies_until_contains(&self, n: u64) -> u32 {
        let Some(f) = self.cvt(n) else {
            return u32::MAX;
        };
        if f <= self.tokens || self.time_until_full == 0 {
            return 0;
        }
        // an idle bucket (no tokens a tick) never fills
        (f - self.tokens - 1)
            .checked_div(self.tokens_per_tick)
            .map_or(u32::MAX, |t| t + 1)
    }

    /// Sets the rate and capacity (Click's `assign`): the count stays the
    /// same fraction of the capacity. A rate or capacity of 0 is idle.
    pub fn assign(&mut self, rate: u64, capacity: u64) {
        self.rate = rate;
        self.capacity = capacity;
        let mut rate = rate.min(u64::from(MAX_TOKENS)) as u32;
        let mut capacity = capacity.min(u64::from(MAX_TOKENS)) as u32;
        if capacity == 0 {
            rate = 0;
            capacity = MAX_TOKENS;
        }
        if rate != 0 {
            // so tokens_per_tick fits in 32 bits
            let min_capacity = (rate - 1) / HZ as u32 + 1;
            capacity = capacity.max(min_capacity);
        }
        self.token_scale = MAX_TOKENS / capacity;
        let l = u64::from(rate) * u64::from(self.token_scale) / HZ;
        if rate != 0 {
            self.tokens_per_tick = (l as u32).max(1);
            self.time_until_full = (MAX_TOKENS - 1) / self.tokens_per_tick + 1;
        } else {
            self.tokens_per_tick = 0;
            self.time_until_full = u32::MAX;
        }
    }
    /// `assign`, keeping the number of tokens roughly the same (Click's
    /// `assign_adjust`).
    pub fn assign_adjust(&mut self, rate: u64, capacity: u64) {
        let old_scale = self.token_scale;
        self.assign(rate, capacity);
        if old_scale != self.token_scale && old_scale != 0 {
            let t = u64::from(self.tokens) * u64::from(self.token_scale) / u64::from(old_scale);
            self.tokens = t.min(u64::from(MAX_TOKENS)) as u32;
        }
    }
    /// `n` tokens in fractions; None when that is more than the capacity
    /// (Click's `TokenRateConverter`).
    fn cvt(&self, n: u64) -> Option<u32> {
        let f = n.checked_mul(u64::from(self.token_scale))?;
        (f <= u64::from(MAX_TOKENS)).then_some(f as u32)
    }
    /// Sets the bucket to hold `n` tokens (at most its capacity); the time
    /// point stays, as in Click.
    pub fn set(&mut self, n: u64) {
        self.tokens = self.cvt(n).unwrap_or(MAX_TOKENS);
    }
    /// Fills the bucket.
    pub fn set_full(&mut self) {
        self.tokens = MAX_TOKENS;
    }
    /// Adds the tokens of the jiffies since the last refill.
    pub fn refill(&mut self, now: Timestamp) {
        self.refill_jiffies(now.nsec().div_euclid(NSEC_PER_JIFFY));
    }
    /// Removes `n` tokens if the bucket holds them.
    pub fn remove_if(&mut self, n: u64) -> bool {
        match self.cvt(n) {
            Some(f) if f <= self.tokens => {
                self.tokens -= f;
                true
            }
            _ => false,
        }
    }
    /// Whether the bucket holds at least `n` tokens.
    pub fn contains(&self, n: u64) -> bool {
        matches!(self.cvt(n), Some(f) if f <= self.tokens)
    }
    /// Removes `n` tokens, emptying the bucket if it holds fewer.
    pub fn remove(&mut self, n: u64) {
        let f = self.cvt(n).unwrap_or(MAX_TOKENS);
        self.tokens = self.tokens.saturating_sub(f);
    }
    /// Whole tokens in the bucket.
    pub fn size(&self) -> u64 {
        if self.token_scale == 0 {
            return 0;
        }
        u64::from(self.tokens / self.token_scale)
    }
    /// Nanoseconds until the bucket holds `n` tokens: whole jiffies, as
    /// Click's `time_until_contains` counts them (at least 1 when it does
    /// not hold them now).
    pub fn time_until_contains(&self, n: u64) -> i64 {
        match self.jiffies_until_contains(n) {
            u32::MAX => i64::MAX / 4,
            t => i64::from(t) * NSEC_PER_JIFFY,
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

/// Bandwidth elements wait until the bucket holds this many bytes before
/// sending a packet (Click's `tb_bandwidth_thresh`), and the bucket holds
/// this much more than the burst.
pub const BANDWIDTH_THRESH: u64 = 131_072;

/// A token-bucket rate as Click's RatedUnqueue family configures it: RATE
/// (packets or bytes per second) and a burst given as BURST_DURATION
/// (default 20 ms worth of tokens) or BURST_SIZE / BURST_BYTES.
#[derive(Clone, Debug, Default)]
pub struct RateConfig {
    pub rate: u64,
    pub burst_duration: Option<i64>,
    pub burst_size: Option<u64>,
    pub bandwidth: bool,
}

impl RateConfig {
    /// Reads RATE and the burst keywords from `a` (the caller completes).
    pub fn read(a: &mut Args, bandwidth: bool) -> Result<RateConfig, String> {
        let rate = if bandwidth {
            let b = a.read_mp::<Bandwidth>("RATE")?.0;
            if b > u64::from(u32::MAX) {
                return Err("RATE: out of range".into());
            }
            b
        } else {
            u64::from(a.read_mp::<u32>("RATE")?)
        };
        let burst_duration = a.read::<Seconds>("BURST_DURATION")?.map(|s| s.0);
        let size_kw = if bandwidth {
            "BURST_BYTES"
        } else {
            "BURST_SIZE"
        };
        let mut burst_size = a.read::<u32>(size_kw)?.map(u64::from);
        if let Some(b) = a.read::<u32>("BURST")? {
            burst_size = Some(u64::from(b));
        }
        if burst_duration.is_some() && burst_size.is_some() {
            return Err(format!(
                "cannot specify both BURST_DURATION and {}",
                size_kw
            ));
        }
        if matches!(burst_duration, Some(d) if d < 0) {
            return Err("BURST_DURATION: must be >= 0".into());
        }
        Ok(RateConfig {
            rate,
            burst_duration,
            burst_size,
            bandwidth,
        })
    }

    /// The bucket's capacity in tokens.
    pub fn capacity(&self) -> u64 {
        let mut tokens = match self.burst_size {
            Some(b) => b,
            None => {
                let d = self.burst_duration.unwrap_or(20_000_000) as u128;
                let t = u128::from(self.rate) * d / 1_000_000_000;
                t.min(u128::from(u32::MAX)) as u64
            }
        };
        if self.bandwidth {
            tokens = (tokens + BANDWIDTH_THRESH).min(u64::from(u32::MAX));
        }
        tokens.max(1)
    }

    /// Configures `tb` with this rate (its tokens stay the same fraction of
    /// the capacity, as Click's `assign`).
    pub fn apply(&self, tb: &mut TokenBucket) {
        tb.assign(self.rate, self.capacity());
    }

    /// The rate as the `rate` handler reports it.
    pub fn unparse_rate(&self) -> String {
        if self.bandwidth {
            unparse_bandwidth(self.rate)
        } else {
            self.rate.to_string()
        }
    }

    /// Tokens the bucket must hold before a packet may go.
    pub fn threshold(&self) -> u64 {
        if self.bandwidth {
            BANDWIDTH_THRESH
        } else {
            1
        }
    }

    /// Tokens a packet of `len` bytes costs.
    pub fn cost(&self, len: usize) -> u64 {
        if self.bandwidth {
            len as u64
        } else {
            1
        }
    }

    /// A new RateConfig with RATE replaced by the text `v` (the `rate`
    /// write handler, Click's `reconfigure_keyword_handler`).
    pub fn with_rate_text(&self, v: &str) -> Result<RateConfig, String> {
        let v = clean(v);
        let mut a = Args::new(&v);
        let mut n = RateConfig::read_rate_only(&mut a, self.bandwidth)?;
        a.complete()?;
        n.burst_duration = self.burst_duration;
        n.burst_size = self.burst_size;
        Ok(n)
    }

    fn read_rate_only(a: &mut Args, bandwidth: bool) -> Result<RateConfig, String> {
        let rate = if bandwidth {
            let b = a.read_mp::<Bandwidth>("RATE")?.0;
            if b > u64::from(u32::MAX) {
                return Err("RATE: out of range".into());
            }
            b
        } else {
            u64::from(a.read_mp::<u32>("RATE")?)
        };
        Ok(RateConfig {
            rate,
            bandwidth,
            ..RateConfig::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    #[test]
    fn token_bucket_rounds_as_clicks() {
        // RATE 100, a burst of 1: a jiffy adds 429496729 of 4294967295
        // units, so the bucket is full after 11 jiffies, not 10 (Click's
        // RatedUnqueue-01 test: 909 or 910 packets in 10 s)
        let mut tb = TokenBucket::default();
        tb.assign(100, 1);
        let t0 = Timestamp::from_sec_nsec(1_000_000_000, 0);
        tb.refill(t0); // never refilled: fills
        assert!(tb.remove_if(1));
        assert!(!tb.contains(1));
        assert_eq!(tb.time_until_contains(1), 11 * MS);
        tb.refill(t0.add_nsec(10 * MS));
        assert!(!tb.contains(1));
        tb.refill(t0.add_nsec(11 * MS));
        assert!(tb.remove_if(1));
        // more than the capacity is never held
        assert!(!tb.contains(2));
        assert_eq!(tb.time_until_contains(2), i64::MAX / 4);
    }

    #[test]
    fn token_bucket_jiffies_and_fractions() {
        // RATE 2, capacity 1 (RatedUnqueue(RATE 2): 20 ms of burst rounds
        // to 0 tokens, then 1): a jiffy adds 8589934 units, so a token
        // takes 501 jiffies (Click's RatedUnqueue-01: 20 packets in 10 s)
        let mut tb = TokenBucket::default();
        tb.assign(2, 1);
        let t0 = Timestamp::from_sec_nsec(5, 0);
        tb.refill(t0);
        assert!(tb.remove_if(1));
        assert_eq!(tb.time_until_contains(1), 501 * MS);
        // time within the same jiffy adds nothing
        tb.refill(t0.add_nsec(MS - 1));
        assert_eq!(tb.size(), 0);
        tb.refill(t0.add_nsec(500 * MS));
        assert!(!tb.contains(1));
        tb.refill(t0.add_nsec(501 * MS));
        assert!(tb.contains(1));
        // set keeps the time point; assign keeps the fraction (0 here)
        tb.set(0);
        tb.assign(4, 2);
        tb.refill(t0.add_nsec(751 * MS));
        assert_eq!(tb.size(), 0);
        tb.refill(t0.add_nsec(752 * MS));
        assert_eq!(tb.size(), 1);
        assert_eq!(tb.time_until_contains(2), 250 * MS);
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
}
