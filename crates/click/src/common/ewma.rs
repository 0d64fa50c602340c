//! Click's jiffy clock and its rate estimator (`ewma.hh`).

use super::unparse::unparse_real2;
use crate::prelude::*;

/// Click's `CLICK_HZ` at user level: jiffies are milliseconds.
pub const CLICK_HZ: u64 = 1000;

/// Current time in jiffies.
#[inline]
pub fn jiffies(t: Timestamp) -> u64 {
    (t.nsec().max(0) as u64) / 1_000_000
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
