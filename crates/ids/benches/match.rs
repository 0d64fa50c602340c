//! SnortIDS throughput in memory: 1, 100 and 1,000 synthetic content
//! rules on 64-byte and 1500-byte IPv4/TCP packets (decode + inspect, as
//! the element does per packet). `cargo bench -p click-ids --bench match`
//! prints Mp/s per rule count; one packet in 64 contains a rule's pattern.

use click_ids::matcher::{decode, RuleSet, Verdict};
use std::time::{Duration, Instant};

fn rules(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        // Distinct 8-byte patterns; every 4th rule is nocase, every 8th
        // has a second, relative content.
        let extra = if i % 8 == 0 {
            "; content:\"zz\", distance 0, within 40"
        } else {
            ""
        };
        let nocase = if i % 4 == 0 { ", nocase" } else { "" };
        s.push_str(&format!(
            "alert tcp any any -> any 80 (msg:\"rule {i}\"; content:\"Q{i:05}#X\"{nocase}{extra}; sid:{};)\n",
            i + 1
        ));
    }
    s
}

fn packet(len: usize, seed: u64, hit: Option<usize>) -> Vec<u8> {
    let mut p = vec![0u8; len];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(len as u16).to_be_bytes());
    p[8] = 64;
    p[9] = 6;
    p[12..16].copy_from_slice(&[10, 0, 0, 1]);
    p[16..20].copy_from_slice(&[10, 0, 0, 2]);
    p[20..22].copy_from_slice(&40000u16.to_be_bytes());
    p[22..24].copy_from_slice(&80u16.to_be_bytes());
    p[32] = 5 << 4;
    p[33] = 0x18;
    let mut x = seed | 1;
    for b in &mut p[40..] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Printable text, like HTTP: the prefilter sees many near-misses
        // ('Q' and digits occur).
        *b = b"abcdefghijklmnopqrstuvwxyz0123456789Q #/."[(x % 41) as usize];
    }
    if let Some(i) = hit {
        let pat = format!("Q{i:05}#Xzz");
        let at = 40 + (p.len() - 40 - pat.len()) / 2;
        p[at..at + pat.len()].copy_from_slice(pat.as_bytes());
    }
    p
}

fn main() {
    let budget = Duration::from_millis(
        std::env::var("IDS_BENCH_MS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(700),
    );
    println!("rules  size  Mp/s    ns/pkt  alerts/pkt");
    for &n in &[1usize, 100, 1000] {
        let mut set = RuleSet::parse(&[("RULES", &rules(n))]).expect("rules parse");
        for &len in &[64usize, 1500] {
            let pkts: Vec<Vec<u8>> = (0..1024)
                .map(|k| {
                    packet(
                        len.max(40 + 12),
                        k as u64 * 7919 + 1,
                        (k % 64 == 0).then_some((k * 31) % n),
                    )
                })
                .collect();
            let mut v = Verdict::default();
            let mut events = 0u64;
            let mut done = 0u64;
            let start = Instant::now();
            while start.elapsed() < budget {
                for p in &pkts {
                    let (d, _) = decode(p).unwrap();
                    set.inspect(&d, 0, &mut v);
                    events += v.events.len() as u64;
                }
                done += pkts.len() as u64;
            }
            let secs = start.elapsed().as_secs_f64();
            println!(
                "{n:>5}  {len:>4}  {:>6.2}  {:>7.1}  {:.4}",
                done as f64 / secs / 1e6,
                secs * 1e9 / done as f64,
                events as f64 / done as f64
            );
        }
    }
}
