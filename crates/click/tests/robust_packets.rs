//! Malformed, truncated and random packets through every packet-parsing
//! element: dropped and counted, never a panic. Inputs are the real
//! frames of tests/data/mixed.pcap, truncated at every length and mutated
//! at random, plus random byte strings.

mod common;
use common::*;

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// Each pipeline counts every hop: `iN` Counters before an element and
/// `oN_P` Counters on each of its outputs, every output connected, so
/// nothing leaves but through a counted port. [`LEDGER`] says, for each
/// element, which counter feeds it, which counters it feeds and which
/// handlers count what it drops itself.
const PIPELINES: &[&str] = &[
    "src :: Null -> i0 :: Counter -> ch :: CheckIPHeader(OFFSET 14) -> i1 :: Counter
        -> f :: IPFilter(0 tcp port 80, 1 udp, 2 all) -> o1_0 :: Counter -> Print(x, MAXLENGTH 64) -> d0 :: Discard;
     ch[1] -> o0_1 :: Counter -> d1 :: Discard; f[1] -> o1_1 :: Counter -> d2 :: Discard; f[2] -> o1_2 :: Counter -> d3 :: Discard;",
    "src :: Null -> i0 :: Counter -> Strip(14) -> ch :: CheckIPHeader -> i1 :: Counter -> GetIPAddress(16)
        -> rt :: RadixIPLookup(10.0.0.0/8 0, 0.0.0.0/0 1);
     rt[0] -> o1_0 :: Counter -> ttl :: DecIPTTL -> o2_0 :: Counter -> EtherEncap(0x0800, 1:2:3:4:5:6, 6:5:4:3:2:1) -> d0 :: Discard;
     ttl[1] -> o2_1 :: Counter -> d1 :: Discard; rt[1] -> o1_1 :: Counter -> d2 :: Discard; ch[1] -> o0_1 :: Counter -> d3 :: Discard;",
    "src :: Null -> i0 :: Counter -> c :: Classifier(12/0800, 12/0806, -);
     c[0] -> o0_0 :: Counter -> MarkIPHeader(14) -> ipc :: IPClassifier(tcp, udp, icmp, -);
     ipc[0] -> o1_0 :: Counter -> d0 :: Discard; ipc[1] -> o1_1 :: Counter -> d1 :: Discard;
     ipc[2] -> o1_2 :: Counter -> d2 :: Discard; ipc[3] -> o1_3 :: Counter -> d3 :: Discard;
     c[1] -> o0_1 :: Counter -> EtherMirror -> d4 :: Discard; c[2] -> o0_2 :: Counter -> d5 :: Discard;",
    "src :: Null -> i0 :: Counter -> Strip(14) -> MarkIPHeader -> ttl :: DecIPTTL -> o0_0 :: Counter
        -> UnstripIPHeader -> StripIPHeader -> Unstrip(14) -> d0 :: Discard; ttl[1] -> o0_1 :: Counter -> d1 :: Discard;",
];

/// Per pipeline: (element, its input counter, its output counters, its
/// own drops: handlers, or `len<N` for the input packets shorter than N
/// bytes, which it drops without a count).
type Ledger = &'static [(
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
)];
const LEDGER: &[Ledger] = &[
    &[
        ("ch", "i0", &["i1", "o0_1"], &[]),
        ("f", "i1", &["o1_0", "o1_1", "o1_2"], &[]),
    ],
    &[
        ("ch", "i0", &["i1", "o0_1"], &[]),
        ("rt", "i1", &["o1_0", "o1_1"], &[]),
        ("ttl", "o1_0", &["o2_0", "o2_1"], &[]),
    ],
    &[
        ("c", "i0", &["o0_0", "o0_1", "o0_2"], &[]),
        ("ipc", "o0_0", &["o1_0", "o1_1", "o1_2", "o1_3"], &[]),
    ],
    // DecIPTTL drops, uncounted, a packet without 20 bytes of IP header
    // (here: a frame under 34 bytes); its `drops` counts expired packets,
    // which go out output 1.
    &[("ttl", "i0", &["o0_0", "o0_1"], &["len<34"])],
];

fn inputs() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut rng = Lcg(0x5eed);
    for pkt in pcap_packets("mixed.pcap") {
        for n in 0..=pkt.len().min(80) {
            out.push(pkt[..n].to_vec());
        }
        for _ in 0..20 {
            let mut m = pkt.clone();
            for _ in 0..4 {
                if m.is_empty() {
                    break;
                }
                let i = rng.next() as usize % m.len();
                m[i] = rng.next() as u8;
            }
            out.push(m);
        }
    }
    for _ in 0..500 {
        let n = rng.next() as usize % 120;
        out.push((0..n).map(|_| rng.next() as u8).collect());
    }
    out
}

fn count(r: &TestRouter, h: &str) -> u64 {
    r.read(h)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{h} is not a count"))
}

/// A drop count of [`LEDGER`]: a handler's value or `len<N`.
fn drops(r: &TestRouter, what: &str, pkts: &[Vec<u8>]) -> u64 {
    match what.strip_prefix("len<") {
        Some(n) => {
            let n: usize = n.parse().unwrap();
            pkts.iter().filter(|p| p.len() < n).count() as u64
        }
        None => count(r, what),
    }
}

#[test]
fn no_element_panics_and_every_packet_is_accounted_for() {
    let pkts = inputs();
    for (i, cfg) in PIPELINES.iter().enumerate() {
        let cfg = format!("Idle -> {}", cfg);
        let r = match try_router(&cfg) {
            Ok(r) => r,
            Err(e) => panic!("pipeline {} did not build:\n{}", i, e.join("\n")),
        };
        r.inject("src", 0, &pkts);
        r.run_passes(100);
        assert_eq!(count(&r, "i0.count"), pkts.len() as u64, "pipeline {i}");
        // Per element: packets in = packets out + its own drops.
        for (elem, input, outs, own) in LEDGER[i] {
            let n_in = count(&r, &format!("{input}.count"));
            let n_out: u64 = outs.iter().map(|o| count(&r, &format!("{o}.count"))).sum();
            let n_drop: u64 = own.iter().map(|d| drops(&r, d, &pkts)).sum();
            assert_eq!(
                n_in,
                n_out + n_drop,
                "pipeline {i}: {elem}: {n_in} in, {n_out} out, {n_drop} dropped"
            );
            // the element saw traffic, or the check proves little
            assert!(n_in > 0, "pipeline {i}: nothing reached {elem}");
        }
        // Overall: everything injected reached a Discard.
        let discarded: u64 = (0..8)
            .filter_map(|k| r.router.read_handler(&format!("d{k}.count")).ok())
            .map(|v| v.trim().parse::<u64>().unwrap())
            .sum();
        let dropped: u64 = LEDGER[i]
            .iter()
            .flat_map(|l| l.3.iter())
            .map(|d| drops(&r, d, &pkts))
            .sum();
        assert_eq!(discarded + dropped, pkts.len() as u64, "pipeline {i}");
    }
}

#[test]
fn strip_unstrip_round_trip_keeps_every_byte() {
    clear_collected();
    let pkts = inputs();
    let r = router("Idle -> src :: Null -> Strip(14) -> Unstrip(14) -> out :: Collect;");
    r.inject("src", 0, &pkts);
    let got = collected_data("out");
    assert_eq!(got.len(), pkts.len());
    for (a, b) in pkts.iter().zip(&got) {
        if a.len() >= 14 {
            assert_eq!(a, b);
        }
    }
}
