//! Rates: Click's token bucket (`tokenbucket.hh`), its gap rate
//! (`gaprate.hh`), and the rate configuration the RatedUnqueue and
//! RatedSplitter families share.

use super::handlers::clean;
use super::unparse::unparse_bandwidth;
use crate::prelude::*;
use alloc::format;
use click_lang::args::{Bandwidth, Seconds};

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

    /// Configures `tb` with this rate, keeping the tokens it holds.
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
