//! IPRateMonitor's handlers and annotations, on the test harness's
//! virtual clock: zooming, `anno_level` holding a prefix back, `reset`,
//! the memory bound, the rate annotations, and bad handler values.

mod common;
use click::prelude::*;
use common::*;

/// An IPv4 packet from `src` to `dst` (no Ethernet header).
fn ip(src: [u8; 4], dst: [u8; 4]) -> Vec<u8> {
    let mut d = vec![0u8; 28];
    d[0] = 0x45;
    d[2..4].copy_from_slice(&28u16.to_be_bytes());
    d[8] = 64;
    d[9] = 17;
    d[12..16].copy_from_slice(&src);
    d[16..20].copy_from_slice(&dst);
    d
}

/// Sends `per_epoch` packets from `src` in each 8 ms epoch for `ms`
/// milliseconds of virtual time.
fn feed(r: &TestRouter, src: [u8; 4], per_epoch: usize, ms: i64) {
    let pkts: Vec<Vec<u8>> = (0..per_epoch).map(|_| ip(src, [1, 2, 3, 4])).collect();
    for _ in 0..ms / 8 {
        r.inject("mark", 0, &pkts);
        r.run_passes(4);
        let t = r.clock.now();
        r.clock.set(t + Timestamp::from_nsec(8_000_000));
    }
}

fn levels(look: &str) -> Vec<String> {
    look.lines()
        .skip(1)
        .map(|l| l.split('\t').find(|w| !w.is_empty()).unwrap().to_string())
        .collect()
}

#[test]
fn zooms_holds_back_resets_and_annotates() {
    clear_collected();
    let r = router(
        "Idle -> mark :: MarkIPHeader -> m :: IPRateMonitor(PACKETS, 1, 500) -> out :: Collect;",
    );
    // 2 packets an epoch = 250 a second: under THRESH, only the /8
    feed(&r, [10, 1, 2, 3], 2, 2000);
    assert_eq!(levels(&r.read("m.look")), ["10"]);
    // 8 an epoch = 1,000 a second: down to the host
    feed(&r, [10, 1, 2, 3], 8, 2000);
    assert_eq!(
        levels(&r.read("m.look")),
        ["10", "10.1", "10.1.2", "10.1.2.3"]
    );
    // the last packet carries its host's forward rate (≈1,000/s) and no
    // reverse rate
    let last = collected("out").pop().unwrap();
    let fwd = i32::from_ne_bytes(last.anno.bytes[24..28].try_into().unwrap());
    let rev = i32::from_ne_bytes(last.anno.bytes[28..32].try_into().unwrap());
    assert!((900..=1000).contains(&fwd), "forward rate annotation {fwd}");
    assert_eq!(rev, 0);
    // hold 10.1 back for 100 s: its levels go, and stay gone under load
    r.write("m.anno_level", "10.1.0.0, 1, 100").unwrap();
    assert_eq!(levels(&r.read("m.look")), ["10", "10.1"]);
    feed(&r, [10, 1, 2, 3], 8, 1000);
    assert_eq!(levels(&r.read("m.look")), ["10", "10.1"]);
    // another /8 is not held back
    feed(&r, [20, 0, 0, 1], 8, 1000);
    assert!(levels(&r.read("m.look")).contains(&"20.0.0.1".to_string()));
    r.write("m.reset", "").unwrap();
    assert_eq!(r.read("m.look"), "0\n");
}

#[test]
fn memory_bound_limits_the_tree() {
    let r = router(
        "Idle -> mark :: MarkIPHeader -> m :: IPRateMonitor(PACKETS, 1, 10, 100) -> Discard;",
    );
    // 600 busy hosts in 300 /24s: without a bound every one would get its
    // levels; 100 kB holds only a few dozen levels of 256 counters
    let mut pkts = Vec::new();
    for i in 0..600u32 {
        pkts.push(ip(
            [10, (i / 256) as u8, (i % 300) as u8, (i % 256) as u8],
            [1, 2, 3, 4],
        ));
    }
    for _ in 0..200 {
        r.inject("mark", 0, &pkts);
        r.run_passes(40);
        let t = r.clock.now();
        r.clock.set(t + Timestamp::from_nsec(8_000_000));
    }
    assert_eq!(r.read("m.memmax"), "102400");
    let lines = r.read("m.look").lines().count();
    assert!(lines > 3, "nothing zoomed: {lines} lines");
    assert!(lines < 600, "the bound did not hold: {lines} lines");
    // a lower bound folds at once; a bad value changes nothing
    assert!(r.write("m.memmax", "abc").is_err());
    assert!(r.write("m.memmax", "1 2").is_err());
    assert!(r.write("m.anno_level", "10.0.0.0, 4, 10").is_err());
    assert!(r.write("m.anno_level", "nonsense, 1, 10").is_err());
    assert!(r.write("m.anno_level", "10.0.0.0, 1, 0").is_err());
    assert_eq!(r.read("m.memmax"), "102400");
}
