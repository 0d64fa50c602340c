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

const PIPELINES: &[&str] = &[
    "src :: Null -> CheckIPHeader(OFFSET 14) -> IPFilter(allow tcp port 80, allow udp, deny all) -> Print(x, MAXLENGTH 64) -> Discard;",
    "src :: Null -> Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> rt :: RadixIPLookup(10.0.0.0/8 0, 0.0.0.0/0 1);
     rt[0] -> DecIPTTL -> EtherEncap(0x0800, 1:2:3:4:5:6, 6:5:4:3:2:1) -> Discard; rt[1] -> Discard;",
    "src :: Null -> c :: Classifier(12/0800, 12/0806, -);
     c[0] -> MarkIPHeader(14) -> ipc :: IPClassifier(tcp, udp, icmp, -);
     ipc[0] -> Discard; ipc[1] -> Discard; ipc[2] -> Discard; ipc[3] -> Discard;
     c[1] -> EtherMirror -> Discard; c[2] -> Discard;",
    "src :: Null -> Strip(14) -> MarkIPHeader -> DecIPTTL -> UnstripIPHeader -> StripIPHeader -> Unstrip(14) -> Discard;",
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

#[test]
fn no_element_panics_on_bad_packets() {
    let pkts = inputs();
    for (i, cfg) in PIPELINES.iter().enumerate() {
        let cfg = format!("Idle -> {}", cfg);
        let r = match try_router(&cfg) {
            Ok(r) => r,
            Err(e) => panic!("pipeline {} did not build:\n{}", i, e.join("\n")),
        };
        r.inject("src", 0, &pkts);
        r.run_passes(100);
    }
}
