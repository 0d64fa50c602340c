//! A small hash map keyed by integers (`u64`, below `u64::MAX`): open
//! addressing with linear probing and backward-shift deletion, keys and
//! values in separate arrays. No per-insert allocation once grown; no
//! iteration order (callers that show their contents sort them).

use alloc::vec::Vec;

/// The key marking an empty slot (never a key).
const EMPTY: u64 = u64::MAX;

#[derive(Clone, Debug)]
pub struct IntMap<V> {
    keys: Vec<u64>,
    /// A member's value, or `V::default()` in a free slot (the keys tell
    /// which: no `Option`, which would double a `u32` value).
    vals: Vec<V>,
    len: usize,
    /// `keys.len() - 1` (capacity is a power of two), 0 when empty.
    mask: usize,
    /// 64 - log2(keys.len()).
    shift: u32,
}

impl<V: Default> Default for IntMap<V> {
    fn default() -> Self {
        IntMap::new()
    }
}

/// Fibonacci hashing: the product's top bits (`shift` is 64 minus the
/// table's log2 size).
#[inline]
fn slot_of(key: u64, shift: u32) -> usize {
    let h = (key ^ (key >> 31)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> shift) as usize
}

impl<V: Default> IntMap<V> {
    pub const fn new() -> IntMap<V> {
        IntMap {
            keys: Vec::new(),
            vals: Vec::new(),
            len: 0,
            mask: 0,
            shift: 63,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn find(&self, key: u64) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let mut i = slot_of(key, self.shift);
        loop {
            let k = self.keys[i];
            if k == key {
                return Some(i);
            }
            if k == EMPTY {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    #[inline]
    pub fn get(&self, key: u64) -> Option<&V> {
        let i = self.find(key)?;
        Some(&self.vals[i])
    }

    #[inline]
    pub fn get_mut(&mut self, key: u64) -> Option<&mut V> {
        let i = self.find(key)?;
        Some(&mut self.vals[i])
    }

    #[inline]
    pub fn contains_key(&self, key: u64) -> bool {
        self.find(key).is_some()
    }

    fn grow(&mut self) {
        let n = (self.keys.len() * 2).max(16);
        let keys = core::mem::replace(&mut self.keys, alloc::vec![EMPTY; n]);
        let mut vals = core::mem::take(&mut self.vals);
        self.vals = (0..n).map(|_| V::default()).collect();
        self.mask = n - 1;
        self.shift = 64 - n.trailing_zeros();
        for (k, v) in keys.into_iter().zip(vals.drain(..)) {
            if k != EMPTY {
                let mut i = slot_of(k, self.shift);
                while self.keys[i] != EMPTY {
                    i = (i + 1) & self.mask;
                }
                self.keys[i] = k;
                self.vals[i] = v;
            }
        }
    }

    /// Inserts or replaces; returns the value replaced.
    pub fn insert(&mut self, key: u64, val: V) -> Option<V> {
        debug_assert!(key != EMPTY);
        if (self.len + 1) * 4 > self.keys.len() * 3 {
            self.grow();
        }
        let mut i = slot_of(key, self.shift);
        loop {
            let k = self.keys[i];
            if k == key {
                return Some(core::mem::replace(&mut self.vals[i], val));
            }
            if k == EMPTY {
                self.keys[i] = key;
                self.vals[i] = val;
                self.len += 1;
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: u64) -> Option<V> {
        let mut i = self.find(key)?;
        let v = core::mem::take(&mut self.vals[i]);
        self.len -= 1;
        // backward shift: move later members of the probe run into the hole
        let mut j = i;
        loop {
            j = (j + 1) & self.mask;
            let k = self.keys[j];
            if k == EMPTY {
                break;
            }
            let home = slot_of(k, self.shift);
            // k may move to i if its home is not cyclically in (i, j]
            let movable = if i <= j {
                home <= i || home > j
            } else {
                home <= i && home > j
            };
            if movable {
                self.keys[i] = k;
                self.vals[i] = core::mem::take(&mut self.vals[j]);
                i = j;
            }
        }
        self.keys[i] = EMPTY;
        Some(v)
    }

    /// Every (key, value), in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &V)> {
        self.keys
            .iter()
            .zip(self.vals.iter())
            .filter_map(|(&k, v)| (k != EMPTY).then_some((k, v)))
    }

    /// Every (key, value), sorted by key.
    pub fn sorted(&self) -> Vec<(u64, &V)> {
        let mut v: Vec<(u64, &V)> = self.iter().collect();
        v.sort_unstable_by_key(|e| e.0);
        v
    }

    pub fn clear(&mut self) {
        self.keys.iter_mut().for_each(|k| *k = EMPTY);
        self.vals.iter_mut().for_each(|v| *v = V::default());
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeMap;

    #[test]
    fn behaves_as_a_btreemap() {
        let mut m = IntMap::new();
        let mut b = BTreeMap::new();
        let mut x: u64 = 12345;
        for step in 0..200_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let k = x % 3000; // many collisions and removals
            match x % 3 {
                0 | 1 => assert_eq!(m.insert(k, step), b.insert(k, step)),
                _ => assert_eq!(m.remove(k), b.remove(&k)),
            }
            assert_eq!(m.len(), b.len());
            if step % 10_000 == 0 {
                let s: Vec<(u64, u32)> = m.sorted().into_iter().map(|(k, v)| (k, *v)).collect();
                let t: Vec<(u64, u32)> = b.iter().map(|(k, v)| (*k, *v)).collect();
                assert_eq!(s, t);
            }
        }
        for (k, v) in &b {
            assert_eq!(m.get(*k), Some(v));
        }
        assert_eq!(m.get(5000), None);
    }
}
