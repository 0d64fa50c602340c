//! A seeded random generator for elements that choose at random, and
//! Click's shared `random()` stream that RandomSeed seeds.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, Ordering};

/// The C library's `random()` as glibc implements it (TYPE_3): an additive
/// feedback generator over 31 words, r[i] = r[i-3] + r[i-31] (mod 2^32),
/// whose outputs are r[i] >> 1. `srandom(seed)` fills r[0..31] from the
/// seed with the Park-Miller step (16807 * r mod 2^31-1), copies
/// r[0..3] on, and throws the first 310 outputs away. Click's userlevel
/// `click_random()` is this `random()`, so its sequences (RandomSeed) are
/// reproduced exactly.
#[derive(Clone, Debug)]
pub struct GlibcRandom {
    /// The last 34 words of r, a ring: r[i] lives at `i % 34`.
    r: [u32; 34],
    i: usize,
}

/// Click's `CLICK_RAND_MAX` at user level (glibc's `RAND_MAX`).
pub const CLICK_RAND_MAX: u32 = 0x7FFF_FFFF;

impl GlibcRandom {
    /// `srandom(seed)` (a zero seed is taken as 1, as glibc does).
    pub fn new(seed: u32) -> GlibcRandom {
        let mut g = GlibcRandom { r: [0; 34], i: 0 };
        g.seed(seed);
        g
    }

    /// `srandom(seed)`.
    pub fn seed(&mut self, seed: u32) {
        let seed = if seed == 0 { 1 } else { seed };
        let mut r = [0u32; 34];
        // glibc keeps the words as signed 32-bit integers
        let mut word = seed as i32 as i64;
        r[0] = word as u32;
        for slot in r.iter_mut().take(31).skip(1) {
            let hi = word / 127_773;
            let lo = word % 127_773;
            word = 16_807 * lo - 2_836 * hi;
            if word < 0 {
                word += 2_147_483_647;
            }
            *slot = word as u32;
        }
        for k in 31..34 {
            r[k] = r[k - 31];
        }
        self.r = r;
        self.i = 34;
        for _ in 0..310 {
            self.step();
        }
    }

    fn step(&mut self) -> u32 {
        let i = self.i;
        let v = self.r[(i - 31) % 34].wrapping_add(self.r[(i - 3) % 34]);
        self.r[i % 34] = v;
        self.i = if i >= 34 * 1024 { i - 34 * 1000 } else { i + 1 };
        v
    }

    /// `random()`: 31 bits.
    pub fn random(&mut self) -> u32 {
        self.step() >> 1
    }

    /// Click's `click_random(low, high)`: uniform in `low..=high`, with
    /// Click's arithmetic (rejection, then division by the bucket size),
    /// so a seeded Click and this draw the same values.
    pub fn random_range(&mut self, low: u32, high: u32) -> u32 {
        if low > high {
            return low;
        }
        if high - low > CLICK_RAND_MAX {
            loop {
                let r = (self.random() << 17) ^ (self.random() >> 14);
                if r <= high - low {
                    return r + low;
                }
            }
        } else if high == low + 1 {
            low + ((self.random() >> 14) & 1)
        } else {
            let count = (CLICK_RAND_MAX + 1) / (high - low + 1);
            let max = count * (high - low + 1);
            loop {
                let r = self.random();
                if r < max {
                    return r / count + low;
                }
            }
        }
    }
}

/// Click's process-wide `random()` stream, which `RandomSeed` seeds. Until
/// it is seeded, every [`Rng`] draws from its own stream.
struct Shared {
    lock: AtomicBool,
    seeded: AtomicBool,
    gen: UnsafeCell<Option<GlibcRandom>>,
}

// SAFETY: `gen` is only touched while `lock` is held (see `with_shared`).
unsafe impl Sync for Shared {}

static SHARED: Shared = Shared {
    lock: AtomicBool::new(false),
    seeded: AtomicBool::new(false),
    gen: UnsafeCell::new(None),
};

fn with_shared<R>(f: impl FnOnce(&mut Option<GlibcRandom>) -> R) -> R {
    while SHARED
        .lock
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        core::hint::spin_loop();
    }
    // SAFETY: the lock is held, so this is the only reference.
    let r = f(unsafe { &mut *SHARED.gen.get() });
    SHARED.lock.store(false, Ordering::Release);
    r
}

/// Click's `click_srandom(seed)`: seeds the shared `random()` stream, and
/// from then on every [`Rng`] draws from it, as every Click element draws
/// from the one `random()`.
pub fn click_srandom(seed: u32) {
    with_shared(|g| match g {
        Some(g) => g.seed(seed),
        None => *g = Some(GlibcRandom::new(seed)),
    });
    SHARED.seeded.store(true, Ordering::Release);
}

/// Forgets the shared stream: each [`Rng`] draws from its own again
/// (RandomSeed's cleanup, so a later router in the process starts afresh).
pub fn click_random_unseed() {
    SHARED.seeded.store(false, Ordering::Release);
    with_shared(|g| *g = None);
}

/// Whether [`click_srandom`] seeded the shared stream.
pub fn click_random_seeded() -> bool {
    SHARED.seeded.load(Ordering::Acquire)
}

/// `click_random(low, high)` from the shared stream, when seeded.
fn shared_range(low: u32, high: u32) -> Option<u32> {
    if !click_random_seeded() {
        return None;
    }
    with_shared(|g| g.as_mut().map(|g| g.random_range(low, high)))
}

/// A small deterministic pseudo-random generator (SplitMix64) for elements
/// that choose at random (RandomSwitch, RED). Each element seeds its own
/// from its name, so a configuration behaves the same on every run. Once
/// `RandomSeed` has seeded Click's shared stream ([`click_srandom`]), every
/// draw comes from that stream instead, with Click's `click_random`
/// arithmetic, so a configuration with RandomSeed draws what Click draws.
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
        if let Some(hi) = shared_range(0, u32::MAX) {
            let lo = shared_range(0, u32::MAX).unwrap_or(0);
            return (u64::from(hi) << 32) | u64::from(lo);
        }
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
        if n <= 1 << 32 {
            if let Some(v) = shared_range(0, (n - 1) as u32) {
                return u64::from(v);
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_random_sequence() {
        // glibc: srandom(1); random() x 5
        let mut g = GlibcRandom::new(1);
        let v: alloc::vec::Vec<u32> = (0..5).map(|_| g.random()).collect();
        assert_eq!(
            v,
            [1804289383, 846930886, 1681692777, 1714636915, 1957747793]
        );
        // srandom(0) is srandom(1)
        assert_eq!(GlibcRandom::new(0).random(), 1804289383);
        // srandom(42): glibc's first two
        let mut g = GlibcRandom::new(42);
        assert_eq!((g.random(), g.random()), (71876166, 708592740));
        // many draws keep going (the ring index wraps)
        let mut g = GlibcRandom::new(1);
        for _ in 0..100_000 {
            assert!(g.random() <= CLICK_RAND_MAX);
        }
    }

    #[test]
    fn click_random_range_arithmetic() {
        // Click picks port 1024 + click_random(0, 64510) after srandom(1):
        // 1804289383 / (2^31 / 64511) = 54202
        let mut g = GlibcRandom::new(1);
        assert_eq!(g.random_range(0, 64510), 54202);
        let mut g = GlibcRandom::new(1);
        // high == low + 1 takes bit 14
        assert_eq!(g.random_range(5, 6), 5 + ((1804289383 >> 14) & 1));
        assert_eq!(g.random_range(7, 3), 7);
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
}
