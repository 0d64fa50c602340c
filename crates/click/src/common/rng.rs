//! A seeded random generator for elements that choose at random.

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

#[cfg(test)]
mod tests {
    use super::*;

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
