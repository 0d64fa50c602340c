//! Malformed, truncated and random packets through every element of the
//! ip group added with IPFragmenter/IPReassembler/IPGWOptions/IPPrint and
//! the checksum and encapsulation elements: never a panic, and the counts
//! add up.

#[path = "ip_harness.rs"]
mod ip_harness;
use ip_harness::*;

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

fn inputs() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut rng = Lcg(0xfeed);
    for pkt in capture("mixed.pcap") {
        for n in (0..=pkt.len().min(90)).step_by(3) {
            out.push(pkt[..n].to_vec());
        }
        for _ in 0..12 {
            let mut m = pkt.clone();
            for _ in 0..5 {
                if m.is_empty() {
                    break;
                }
                // Mostly in the headers.
                let i = rng.next() as usize % m.len().min(70);
                m[i] = rng.next() as u8;
            }
            out.push(m);
        }
    }
    for _ in 0..300 {
        let n = rng.next() as usize % 120;
        out.push((0..n).map(|_| rng.next() as u8).collect());
    }
    out
}

/// Pipelines of ip elements with a Counter before each element under test
/// and on each of its outputs (every output connected).
const PIPELINES: &[&str] = &[
    "src :: BatchSrc -> i0 :: Counter -> MarkIPHeader(14) -> SetIPChecksum -> o0 :: Counter -> su :: SetUDPChecksum -> o1_0 :: Counter -> SetTCPChecksum(true) -> o2 :: Counter -> d0 :: Discard;
     su[1] -> o1_1 :: Counter -> d1 :: Discard;",
    "src :: BatchSrc -> i0 :: Counter -> MarkIPHeader(14) -> u :: CheckUDPHeader(DETAILS true) -> o0_0 :: Counter -> d0 :: Discard;
     u[1] -> o0_1 :: Counter -> t :: CheckTCPHeader -> o1_0 :: Counter -> d1 :: Discard; t[1] -> o1_1 :: Counter -> d2 :: Discard;",
    "src :: BatchSrc -> i0 :: Counter -> MarkIPHeader(14) -> IPPrint(TIMESTAMP false, CONTENTS hex, MAXLENGTH 40) -> IPPrint(PAYLOAD ascii, ID 1, TTL 1, TOS 1, LENGTH 1) -> o0 :: Counter -> d0 :: Discard;",
    "src :: BatchSrc -> i0 :: Counter -> MarkIPHeader(14) -> g :: IPGWOptions(1.2.3.4, 5.6.7.8) -> o0_0 :: Counter -> d0 :: Discard;
     g[1] -> o0_1 :: Counter -> e :: ICMPError(9.9.9.9, parameterproblem) -> o1_0 :: Counter -> d1 :: Discard;",
    // fragments and reassemblies do not conserve packets: no panic, and
    // reassembler_accounts_for_every_fragment checks this path's counts
    "src :: BatchSrc -> i0 :: Counter -> Strip(14) -> MarkIPHeader -> f :: IPFragmenter(60) -> r :: IPReassembler(HIMEM 3000) -> IPFragmenter(68, HONOR_DF false) -> d0 :: Discard; f[1] -> d1 :: Discard; r[1] -> d2 :: Discard;",
    "src :: BatchSrc -> i0 :: Counter -> MarkIPHeader(14) -> Paint(1, 19) -> FixIPSrc(1.1.1.1) -> o0 :: Counter -> cl :: CheckLength(60) -> o1_0 :: Counter
        -> db :: DropBroadcasts -> o2 :: Counter -> IPEncap(4, 1.2.3.4, DST_ANNO) -> UDPIPEncap(1.1.1.1, 1, 2.2.2.2, 2) -> o3 :: Counter
        -> ch :: CheckIPHeader -> o4_0 :: Counter -> d0 :: Discard; cl[1] -> o1_1 :: Counter -> d1 :: Discard; ch[1] -> o4_1 :: Counter -> d2 :: Discard;",
];

/// Per pipeline: (elements, the counter before them, the counters after,
/// what counts the packets they drop themselves: a handler, or
/// `stderr:LINE` for an element that prints LINE for each, or `A - B`).
type Ledger = &'static [(
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
)];
const LEDGER: &[Ledger] = &[
    &[
        // each packet it drops prints `SetIPChecksum: bad lengths`
        (
            "MarkIPHeader, SetIPChecksum",
            "i0",
            &["o0"],
            &["stderr:SetIPChecksum: bad lengths"],
        ),
        ("su", "o0", &["o1_0", "o1_1"], &[]),
        (
            "SetTCPChecksum",
            "o1_0",
            &["o2"],
            &["stderr:SetTCPChecksum: bad lengths"],
        ),
    ],
    &[
        ("u", "i0", &["o0_0", "o0_1"], &[]),
        ("t", "o0_1", &["o1_0", "o1_1"], &[]),
    ],
    &[("IPPrint, IPPrint", "i0", &["o0"], &[])],
    &[
        // `drops` counts the packets sent to output 1 too
        ("g", "i0", &["o0_0", "o0_1"], &["g.drops - o0_1.count"]),
        ("e", "o0_1", &["o1_0"], &["e.drops"]),
    ],
    &[],
    &[
        ("MarkIPHeader, Paint, FixIPSrc", "i0", &["o0"], &[]),
        ("cl", "o0", &["o1_0", "o1_1"], &[]),
        ("db", "o1_0", &["o2"], &["db.drops"]),
        ("IPEncap, UDPIPEncap", "o2", &["o3"], &[]),
        ("ch", "o3", &["o4_0", "o4_1"], &[]),
    ],
];

fn count(r: &TestRouter, h: &str) -> u64 {
    match h.strip_prefix("stderr:") {
        Some(line) => r.stderr().lines().filter(|l| *l == line).count() as u64,
        None if h.contains(" - ") => {
            let (a, b) = h.split_once(" - ").unwrap();
            count(r, a) - count(r, b)
        }
        None => r
            .read(h)
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{h} is not a count")),
    }
}

#[test]
fn no_ip_element_panics_and_every_packet_is_accounted_for() {
    let pkts = inputs();
    for (i, cfg) in PIPELINES.iter().enumerate() {
        let mut counts_by_batch = Vec::new();
        for batch in [1, 32] {
            let r = run_with(cfg, &pkts, batch);
            assert_eq!(count(&r, "i0.count"), pkts.len() as u64, "pipeline {i}");
            // Per element: packets in = packets out + its own drops.
            for (elem, input, outs, own) in LEDGER[i] {
                let n_in = count(&r, &format!("{input}.count"));
                let n_out: u64 = outs.iter().map(|o| count(&r, &format!("{o}.count"))).sum();
                let n_drop: u64 = own.iter().map(|d| count(&r, d)).sum();
                assert_eq!(
                    n_in,
                    n_out + n_drop,
                    "pipeline {i}, batch {batch}: {elem}: {n_in} in, {n_out} out, {n_drop} dropped"
                );
                assert!(n_in > 0, "pipeline {i}: nothing reached {elem}");
            }
            if !LEDGER[i].is_empty() {
                // Overall: everything injected reached a Discard or was
                // counted as dropped.
                let discarded: u64 = (0..4)
                    .filter_map(|k| r.router.read_handler(&format!("d{k}.count")).ok())
                    .map(|v| v.trim().parse::<u64>().unwrap())
                    .sum();
                let dropped: u64 = LEDGER[i]
                    .iter()
                    .flat_map(|l| l.3.iter())
                    .map(|d| count(&r, d))
                    .sum();
                assert_eq!(
                    discarded + dropped,
                    pkts.len() as u64,
                    "pipeline {i}, batch {batch}"
                );
            }
            // Every counter, to compare batch sizes.
            let all: Vec<(String, u64)> = LEDGER[i]
                .iter()
                .flat_map(|l| std::iter::once(l.1).chain(l.2.iter().copied()))
                .map(|c| (c.to_string(), count(&r, &format!("{c}.count"))))
                .collect();
            counts_by_batch.push(all);
        }
        // One packet at a time and in batches of 32: the same counts.
        assert_eq!(counts_by_batch[0], counts_by_batch[1], "pipeline {i}");
    }
}

#[test]
fn reassembler_accounts_for_every_fragment() {
    // Every fragment is either reassembled, pending, expired or bad; the
    // dump's counters must agree with what came out.
    let pkts = inputs();
    let r = run_with(
        "src :: BatchSrc -> Strip(14) -> MarkIPHeader -> IPFragmenter(100, HONOR_DF false) -> r :: IPReassembler; r[0] -> ok :: Collect; r[1] -> exp :: Collect;",
        &pkts,
        32,
    );
    let dump = r.read("r.dump");
    let field = |name: &str| -> usize {
        dump.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().last())
            .unwrap()
            .parse()
            .unwrap()
    };
    // Everything expired by the end (the run advanced the clock).
    assert!(dump.ends_with("cached chunk data:\n"), "{}", dump);
    assert!(field("good reassemblies:") > 0);
    assert_eq!(collected("exp").len(), field("failed reassemblies:"));
}
