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

const PIPELINES: &[&str] = &[
    "src :: BatchSrc -> MarkIPHeader(14) -> SetIPChecksum -> SetUDPChecksum -> SetTCPChecksum(true) -> Discard;",
    "src :: BatchSrc -> MarkIPHeader(14) -> u :: CheckUDPHeader(DETAILS true) -> Discard; u[1] -> t :: CheckTCPHeader -> Discard; t[1] -> Discard;",
    "src :: BatchSrc -> MarkIPHeader(14) -> IPPrint(TIMESTAMP false, CONTENTS hex, MAXLENGTH 40) -> IPPrint(PAYLOAD ascii, ID 1, TTL 1, TOS 1, LENGTH 1) -> Discard;",
    "src :: BatchSrc -> MarkIPHeader(14) -> g :: IPGWOptions(1.2.3.4, 5.6.7.8) -> Discard; g[1] -> ICMPError(9.9.9.9, parameterproblem) -> Discard;",
    "src :: BatchSrc -> Strip(14) -> MarkIPHeader -> f :: IPFragmenter(60) -> r :: IPReassembler(HIMEM 3000) -> IPFragmenter(68, HONOR_DF false) -> Discard; f[1] -> Discard; r[1] -> Discard;",
    "src :: BatchSrc -> MarkIPHeader(14) -> Paint(1, 19) -> FixIPSrc(1.1.1.1) -> CheckLength(60) -> DropBroadcasts -> IPEncap(4, 1.2.3.4, DST_ANNO) -> UDPIPEncap(1.1.1.1, 1, 2.2.2.2, 2) -> CheckIPHeader -> Discard;",
];

#[test]
fn no_ip_element_panics_on_bad_packets() {
    let pkts = inputs();
    for cfg in PIPELINES {
        for batch in [1, 32] {
            let r = run_with(cfg, &pkts, batch);
            drop(r);
        }
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
