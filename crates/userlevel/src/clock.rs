//! The system clock the driver gives its routers: real time, warpable as
//! Click's is (the `timewarp` handler), one clock for the whole process.

use click::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The system clock, warpable as Click's is (the `timewarp` handler).
pub struct SystemClock;

/// Click's time warp, process-wide as in Click (every thread's router
/// reads one clock): from real time `base_real` on, the clock reads
/// `base_warped + (real - base_real) * speed`.
#[derive(Copy, Clone)]
struct Warp {
    speed: f64,
    base_real: i64,
    base_warped: i64,
}

impl Warp {
    fn at(&self, real: i64) -> i64 {
        self.base_warped + ((real - self.base_real) as f64 * self.speed) as i64
    }
}

/// Set once the clock has been warped (the common case reads no lock).
static WARPED: AtomicBool = AtomicBool::new(false);
static WARP: std::sync::Mutex<Option<Warp>> = std::sync::Mutex::new(None);

fn warp_state() -> Option<Warp> {
    if !WARPED.load(Ordering::Acquire) {
        return None;
    }
    *WARP.lock().unwrap_or_else(|p| p.into_inner())
}

fn real_now() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos().min(i64::MAX as u128) as i64,
        Err(_) => 0,
    }
}

/// The real time until the system clock reads `d` nanoseconds later than
/// now (shorter or longer under a time warp).
pub fn real_wait(d: i64) -> Duration {
    let d = d.max(0);
    match warp_state() {
        Some(w) => Duration::from_nanos((d as f64 / w.speed).ceil() as u64),
        None => Duration::from_nanos(d as u64),
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let real = real_now();
        match warp_state() {
            Some(w) => Timestamp::from_nsec(w.at(real)),
            None => Timestamp::from_nsec(real),
        }
    }
    fn warp(&self) -> Option<f64> {
        Some(warp_state().map_or(1.0, |w| w.speed))
    }
    fn set_warp(&self, speed: f64) -> Result<(), String> {
        let mut g = WARP.lock().unwrap_or_else(|p| p.into_inner());
        let real = real_now();
        let warped = g.map_or(real, |w| w.at(real));
        *g = Some(Warp {
            speed,
            base_real: real,
            base_warped: warped,
        });
        WARPED.store(true, Ordering::Release);
        Ok(())
    }
}
