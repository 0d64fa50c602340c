//! Agnostic elements behave the same pushed and pulled: the same packets
//! through `Null -> X` (push, one at a time and in batches) and through
//! `Queue -> X -> Unqueue` (pull) leave by the same outputs with the same
//! bytes, and the elements' counters agree.

#[path = "ip_harness.rs"]
mod ip_harness;
use ip_harness::*;

/// (configuration of `x`, whether output 1 is connected, handlers to
/// compare).
const ELEMENTS: &[(&str, bool, &[&str])] = &[
    (
        "CheckIPHeader(OFFSET 14, DETAILS true)",
        true,
        &["drops", "drop_details"],
    ),
    ("CheckIPHeader(OFFSET 14)", false, &["drops"]),
    ("DecIPTTL", true, &["drops"]),
    ("DecIPTTL(MULTICAST false)", false, &["drops"]),
    ("SetIPChecksum", false, &[]),
    ("Counter", false, &["count", "byte_count"]),
    ("AverageCounter", false, &["count", "byte_count"]),
    ("IPEncap(4, 1.2.3.4, 5.6.7.8)", false, &[]),
    ("UDPIPEncap(1.1.1.1, 1, 2.2.2.2, 2)", false, &[]),
    ("Paint(3)", false, &["color"]),
    ("CheckPaint(0)", true, &[]),
    ("Strip(14)", false, &[]),
    ("StripToNetworkHeader", false, &[]),
    ("CheckLength(80)", true, &[]),
    ("EtherEncap(0x0800, 1:2:3:4:5:6, 6:5:4:3:2:1)", false, &[]),
    (
        "CheckARPHeader(OFFSET 14, DETAILS true)",
        true,
        &["drops", "drop_details"],
    ),
    ("DropBroadcasts", false, &["drops"]),
];

fn inputs() -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for p in capture("mixed.pcap") {
        v.push(p.clone());
        // truncated, and with a TTL of 1, and with a bad checksum
        v.push(p[..p.len().min(30)].to_vec());
        if p.len() > 24 {
            let mut q = p.clone();
            q[22] = 1;
            v.push(q);
            let mut q = p.clone();
            q[24] ^= 0xff;
            v.push(q);
        }
    }
    v
}

fn sinks(with_bad: bool) -> &'static [&'static str] {
    if with_bad {
        &["out", "bad"]
    } else {
        &["out"]
    }
}

#[test]
fn agnostic_elements_push_and_pull_alike() {
    let pkts = inputs();
    for (x, bad, handlers) in ELEMENTS {
        let tail = if *bad { "x[1] -> bad :: Collect;" } else { "" };
        // push, one at a time and batched (run_both checks they agree)
        let (rp, pushed) = run_both(
            &format!("src :: BatchSrc -> MarkIPHeader(14) -> x :: {x} -> out :: Collect; {tail}"),
            &pkts,
            sinks(*bad),
        );
        clear_collected();
        let rl = run_with(
            &format!(
                "src :: BatchSrc -> MarkIPHeader(14) -> Queue(10000) -> x :: {x} -> Unqueue(BURST 1) -> out :: Collect; {tail}"
            ),
            &pkts,
            1,
        );
        for (i, s) in sinks(*bad).iter().enumerate() {
            let push: Vec<Vec<u8>> = pushed[i].iter().map(|p| p.data.clone()).collect();
            let pull = collected_data(s);
            assert_eq!(pull.len(), push.len(), "{x}: packets out {s}, pull vs push");
            assert!(
                pull == push,
                "{x}: bytes out {s} differ between pull and push"
            );
        }
        assert!(!pushed[0].is_empty(), "{x}: nothing came out");
        for h in *handlers {
            let h = format!("x.{h}");
            assert_eq!(rl.read(&h), rp.read(&h), "{x}: {h}, pull vs push");
        }
    }
}
