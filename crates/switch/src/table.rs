//! The forwarding table: static MAC→port entries (ClickOS's default, like
//! VALE's `mac-static`), optionally learned ones, and port→port patches.
//!
//! A hash map keyed by the 48-bit address with a multiply-shift hash: one
//! probe on average however many entries it holds (100,000 static entries
//! cost one cache miss per lookup, not a scan), no ageing of static
//! entries; learned entries never overwrite static ones.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A MAC address as the low 48 bits of a `u64`.
pub type MacKey = u64;

/// `aa:bb:cc:dd:ee:ff` → key.
pub fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let mut out = [0u8; 6];
    let mut parts = s.split([':', '-']);
    for b in out.iter_mut() {
        let p = parts.next()?;
        if p.is_empty() || p.len() > 2 {
            return None;
        }
        *b = u8::from_str_radix(p, 16).ok()?;
    }
    parts.next().is_none().then_some(out)
}

pub fn mac_text(m: [u8; 6]) -> String {
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )
}

#[inline]
pub fn key(m: &[u8]) -> MacKey {
    let mut b = [0u8; 8];
    b[..6].copy_from_slice(&m[..6]);
    u64::from_le_bytes(b)
}

pub fn unkey(k: MacKey) -> [u8; 6] {
    let b = k.to_le_bytes();
    [b[0], b[1], b[2], b[3], b[4], b[5]]
}

/// Multiply-shift hashing of one `u64` (the only key type here).
#[derive(Default)]
pub struct MacHasher(u64);

impl Hasher for MacHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        let x = v.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = x ^ (x >> 29);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub port: u16,
    /// Set by configuration (never replaced by learning).
    pub fixed: bool,
}

/// One row of a table dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableRow {
    pub mac: [u8; 6],
    pub port: usize,
    pub fixed: bool,
}

pub struct Table {
    map: HashMap<MacKey, Entry, BuildHasherDefault<MacHasher>>,
    /// Largest number of entries (static plus learned).
    pub capacity: usize,
    /// Learned entries refused because the table was full.
    pub learn_refused: u64,
}

impl Table {
    pub fn new(capacity: usize) -> Table {
        Table {
            map: HashMap::default(),
            capacity,
            learn_refused: 0,
        }
    }

    #[inline]
    pub fn lookup(&self, mac: &[u8]) -> Option<usize> {
        self.map.get(&key(mac)).map(|e| e.port as usize)
    }

    /// Adds or replaces a static entry.
    pub fn insert(&mut self, mac: [u8; 6], port: usize) -> Result<(), String> {
        let k = key(&mac);
        if !self.map.contains_key(&k) && self.map.len() >= self.capacity {
            return Err(format!("MAC table full ({} entries)", self.capacity));
        }
        self.map.insert(
            k,
            Entry {
                port: port as u16,
                fixed: true,
            },
        );
        Ok(())
    }

    pub fn remove(&mut self, mac: [u8; 6]) -> bool {
        self.map.remove(&key(&mac)).is_some()
    }

    /// Learns that `mac` is behind `port` (never over a static entry).
    #[inline]
    pub fn learn(&mut self, mac: &[u8], port: usize) {
        let k = key(mac);
        let len = self.map.len();
        match self.map.get_mut(&k) {
            Some(e) if e.fixed || e.port as usize == port => {}
            Some(e) => e.port = port as u16,
            None if len < self.capacity => {
                self.map.insert(
                    k,
                    Entry {
                        port: port as u16,
                        fixed: false,
                    },
                );
            }
            None => self.learn_refused += 1,
        }
    }

    /// Forgets every entry pointing to `port`.
    pub fn forget_port(&mut self, port: usize) {
        self.map.retain(|_, e| e.port as usize != port);
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Every entry, sorted by address.
    pub fn rows(&self) -> Vec<TableRow> {
        let mut v: Vec<TableRow> = self
            .map
            .iter()
            .map(|(k, e)| TableRow {
                mac: unkey(*k),
                port: e.port as usize,
                fixed: e.fixed,
            })
            .collect();
        v.sort_by_key(|r| r.mac);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs_parse_and_print() {
        assert_eq!(parse_mac("02:00:00:00:00:0a"), Some([2, 0, 0, 0, 0, 10]));
        assert_eq!(parse_mac("2-0-0-0-0-A"), Some([2, 0, 0, 0, 0, 10]));
        assert_eq!(parse_mac("02:00:00:00:00"), None);
        assert_eq!(parse_mac("02:00:00:00:00:00:01"), None);
        assert_eq!(parse_mac("02:00:00:00:00:xyz"), None);
        assert_eq!(mac_text([2, 0, 0, 0, 0, 10]), "02:00:00:00:00:0a");
        assert_eq!(unkey(key(&[1, 2, 3, 4, 5, 6])), [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn static_entries_win_over_learning() {
        let mut t = Table::new(4);
        let a = [2, 0, 0, 0, 0, 1];
        t.insert(a, 3).unwrap();
        t.learn(&a, 5);
        assert_eq!(t.lookup(&a), Some(3));
        let b = [2, 0, 0, 0, 0, 2];
        t.learn(&b, 1);
        assert_eq!(t.lookup(&b), Some(1));
        t.learn(&b, 2);
        assert_eq!(t.lookup(&b), Some(2), "a host that moved is relearned");
        assert_eq!(t.rows().len(), 2);
        assert!(!t.rows()[1].fixed);
        t.forget_port(2);
        assert_eq!(t.lookup(&b), None);
    }

    #[test]
    fn a_full_table_refuses_and_counts() {
        let mut t = Table::new(2);
        t.insert([2, 0, 0, 0, 0, 1], 0).unwrap();
        t.insert([2, 0, 0, 0, 0, 2], 0).unwrap();
        assert!(t.insert([2, 0, 0, 0, 0, 3], 0).is_err());
        t.insert([2, 0, 0, 0, 0, 2], 1).unwrap();
        t.learn(&[2, 0, 0, 0, 0, 4], 1);
        assert_eq!(t.learn_refused, 1);
        assert_eq!(t.lookup(&[2, 0, 0, 0, 0, 4]), None);
        assert!(t.remove([2, 0, 0, 0, 0, 2]));
        assert!(!t.remove([2, 0, 0, 0, 0, 2]));
    }

    #[test]
    fn a_hundred_thousand_entries_all_found() {
        let mut t = Table::new(200_000);
        for i in 0..100_000u32 {
            let b = i.to_be_bytes();
            t.insert([2, 0, b[0], b[1], b[2], b[3]], (i % 300) as usize)
                .unwrap();
        }
        for i in 0..100_000u32 {
            let b = i.to_be_bytes();
            assert_eq!(
                t.lookup(&[2, 0, b[0], b[1], b[2], b[3]]),
                Some((i % 300) as usize)
            );
        }
        assert_eq!(t.lookup(&[4, 0, 0, 0, 0, 0]), None);
    }
}
