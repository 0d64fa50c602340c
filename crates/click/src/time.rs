//! Time: a nanosecond timestamp and the clock the host supplies.

use core::fmt;

/// A point in time (or a duration), in nanoseconds since the Unix epoch.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub struct Timestamp(pub i64);

impl Timestamp {
    pub const ZERO: Timestamp = Timestamp(0);
    pub const NSEC_PER_SEC: i64 = 1_000_000_000;

    #[inline]
    pub const fn from_nsec(ns: i64) -> Self {
        Timestamp(ns)
    }
    #[inline]
    pub const fn from_sec_nsec(sec: i64, nsec: u32) -> Self {
        Timestamp(sec * Self::NSEC_PER_SEC + nsec as i64)
    }
    #[inline]
    pub const fn from_sec_usec(sec: i64, usec: u32) -> Self {
        Timestamp(sec * Self::NSEC_PER_SEC + usec as i64 * 1000)
    }
    #[inline]
    pub const fn nsec(self) -> i64 {
        self.0
    }
    /// Whole seconds (floor).
    #[inline]
    pub const fn sec(self) -> i64 {
        self.0.div_euclid(Self::NSEC_PER_SEC)
    }
    /// Nanoseconds within the second.
    #[inline]
    pub const fn subsec_nsec(self) -> u32 {
        self.0.rem_euclid(Self::NSEC_PER_SEC) as u32
    }
    #[inline]
    pub const fn subsec_usec(self) -> u32 {
        self.subsec_nsec() / 1000
    }
    #[inline]
    pub fn is_zero(self) -> bool {
        self.0 == 0
    }
    /// Seconds as a float.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    #[inline]
    pub const fn add_nsec(self, ns: i64) -> Self {
        Timestamp(self.0.saturating_add(ns))
    }
}

impl core::ops::Add for Timestamp {
    type Output = Timestamp;
    fn add(self, o: Timestamp) -> Timestamp {
        Timestamp(self.0.saturating_add(o.0))
    }
}
impl core::ops::Sub for Timestamp {
    type Output = Timestamp;
    fn sub(self, o: Timestamp) -> Timestamp {
        Timestamp(self.0.saturating_sub(o.0))
    }
}

/// Click's `Timestamp::unparse`: `SEC.USEC` with six digits when the value
/// has microsecond precision, nine digits otherwise.
impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (neg, abs) = if self.0 < 0 {
            (true, -(self.0 as i128))
        } else {
            (false, self.0 as i128)
        };
        let sec = abs / 1_000_000_000;
        let ns = (abs % 1_000_000_000) as u32;
        if neg {
            f.write_str("-")?;
        }
        if ns.is_multiple_of(1000) {
            write!(f, "{}.{:06}", sec, ns / 1000)
        } else {
            write!(f, "{}.{:09}", sec, ns)
        }
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The source of time for a router. The host supplies it: the system clock
/// in the userlevel driver, the TSC in the guest, a virtual clock in tests
/// and under `--simtime`.
pub trait Clock {
    fn now(&self) -> Timestamp;
    /// Click's time warp: how many seconds of this clock pass per real
    /// second (the `timewarp` global handler), or `None` for a clock that
    /// cannot warp.
    fn warp(&self) -> Option<f64> {
        None
    }
    /// Sets the warp speed (positive and finite; the caller checks). Time
    /// stays continuous: it runs at the new speed from the current time on.
    fn set_warp(&self, _speed: f64) -> Result<(), alloc::string::String> {
        Err("this clock cannot warp".into())
    }
}

/// A clock that only moves when told to (used for simulated time).
pub struct VirtualClock {
    now: core::cell::Cell<i64>,
    /// The `timewarp` value, recorded only: simulated time jumps from
    /// timer to timer whatever the speed.
    speed: core::cell::Cell<f64>,
}

impl Default for VirtualClock {
    fn default() -> Self {
        VirtualClock::new(Timestamp::ZERO)
    }
}

impl VirtualClock {
    pub fn new(start: Timestamp) -> Self {
        VirtualClock {
            now: core::cell::Cell::new(start.0),
            speed: core::cell::Cell::new(1.0),
        }
    }
    pub fn set(&self, t: Timestamp) {
        if t.0 > self.now.get() {
            self.now.set(t.0);
        }
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.now.get())
    }
    fn warp(&self) -> Option<f64> {
        Some(self.speed.get())
    }
    fn set_warp(&self, speed: f64) -> Result<(), alloc::string::String> {
        self.speed.set(speed);
        Ok(())
    }
}

impl<C: Clock + ?Sized> Clock for alloc::rc::Rc<C> {
    fn now(&self) -> Timestamp {
        (**self).now()
    }
    fn warp(&self) -> Option<f64> {
        (**self).warp()
    }
    fn set_warp(&self, speed: f64) -> Result<(), alloc::string::String> {
        (**self).set_warp(speed)
    }
}

/// Formats a warp speed as Click prints doubles (`2`, `0.5`, `1.25`).
pub fn format_speed(speed: f64) -> alloc::string::String {
    let mut s = alloc::format!("{:.9}", speed);
    while s.ends_with('0') {
        s.pop();
    }
    if s.ends_with('.') {
        s.pop();
    }
    s
}
