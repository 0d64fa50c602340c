#![allow(dead_code)]

#[path = "../../../../tests/support/skip.rs"]
pub mod skip;

use std::collections::BTreeMap;
use std::path::PathBuf;

use click_pcap::{Error, PcapReader, Record};

pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data")
}

pub fn data(name: &str) -> Vec<u8> {
    let p = data_dir().join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

/// Every capture file of the corpus.
pub const FILES: &[&str] = &[
    "udp-64.pcap",
    "mixed.pcap",
    "mixed.pcapng",
    "nanosec.pcap",
    "bigendian.pcap",
    "router-in.pcap",
    "raw.pcap",
    "sll.pcap",
    "null.pcap",
    "multi.pcapng",
];

#[derive(Debug, Clone)]
pub struct Expected {
    pub ts_sec: i64,
    pub ts_nsec: u32,
    pub caplen: u32,
    pub orig_len: u32,
    pub linktype: u32,
    pub crc: u32,
    pub desc: String,
}

/// manifest.tsv, grouped by file, in record order.
pub fn manifest() -> BTreeMap<String, Vec<Expected>> {
    let text = String::from_utf8(data("manifest.tsv")).unwrap();
    let mut m: BTreeMap<String, Vec<Expected>> = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 9, "bad manifest line {line:?}");
        let v = m.entry(f[0].to_string()).or_default();
        assert_eq!(f[1].parse::<usize>().unwrap(), v.len());
        v.push(Expected {
            ts_sec: f[2].parse().unwrap(),
            ts_nsec: f[3].parse().unwrap(),
            caplen: f[4].parse().unwrap(),
            orig_len: f[5].parse().unwrap(),
            linktype: f[6].parse().unwrap(),
            crc: u32::from_str_radix(f[7], 16).unwrap(),
            desc: f[8].to_string(),
        });
    }
    m
}

pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Reads everything from `bytes`: the records before the first error and
/// the error, if any.
pub fn read_all(bytes: &[u8]) -> (Vec<Record>, Option<Error>) {
    let mut r = match PcapReader::new(bytes) {
        Ok(r) => r,
        Err(e) => return (Vec::new(), Some(e)),
    };
    let mut out = Vec::new();
    loop {
        match r.next_record() {
            Ok(Some(rec)) => out.push(rec),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

/// Small deterministic PRNG (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}
