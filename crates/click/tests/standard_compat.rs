//! InputSwitch, MarkMACHeader, Align and Message, as Click has them.

mod common;
use click::prelude::*;
use common::*;

#[test]
fn inputswitch_passes_one_input() {
    clear_collected();
    let r =
        router("Idle -> [0] s :: InputSwitch(1) -> c :: Collect; Idle -> [1] s; Idle -> [2] s;");
    assert_eq!(r.read("s.switch"), "1");
    r.inject("s", 0, &[pkt(1, 20)]);
    r.inject("s", 1, &[pkt(2, 20)]);
    r.inject("s", 2, &[pkt(3, 20)]);
    r.write("s.switch", "2").unwrap();
    r.inject("s", 1, &[pkt(4, 20)]);
    r.inject("s", 2, &[pkt(5, 20)]);
    // a number naming no input passes nothing
    r.write("s.switch", "7").unwrap();
    assert_eq!(r.read("s.switch"), "-1");
    r.inject("s", 0, &[pkt(6, 20)]);
    assert_eq!(ids(&collected_data("c")), [2, 5]);
    assert!(r.write("s.switch", "x").is_err());
    assert!(
        config_error("Idle -> s :: InputSwitch(2) -> Discard; Idle -> [1] s;")
            .contains("input must be < 2")
    );
}

#[test]
fn markmacheader_sets_mac_and_network_headers() {
    clear_collected();
    let r = router(
        "Idle -> m :: MarkMACHeader(2, 14) -> c :: Collect;
         Idle -> m0 :: MarkMACHeader -> c0 :: Collect;",
    );
    r.inject("m", 0, &[pkt(1, 40), pkt(2, 10)]);
    r.inject("m0", 0, &[pkt(3, 40)]);
    let c = collected("c");
    assert_eq!(c[0].network_header_offset, Some(16));
    // too short for the header: passes unmarked
    assert_eq!(c[1].network_header_offset, None);
    assert_eq!(collected("c0")[0].network_header_offset, None);
}

#[test]
fn align_moves_data_to_the_alignment() {
    for (m, o) in [(4usize, 0usize), (4, 2), (8, 6), (2, 1)] {
        for off in 0..8 {
            let mut p = Packet::from_slice(&[9u8; 30]);
            p.pull(off);
            p.set_network_header(4, 20);
            let before = p.data().to_vec();
            let at = p.data().as_ptr() as usize & (m - 1);
            if at != o {
                p.shift_data((o + m - at) & (m - 1));
            }
            assert_eq!(p.data().as_ptr() as usize & (m - 1), o, "{m} {o} {off}");
            assert_eq!(p.data(), &before[..]);
            assert_eq!(p.network_header_offset(), Some(4));
        }
    }
    clear_collected();
    let r = router("Idle -> a :: Align(4, 2) -> c :: Collect;");
    r.inject("a", 0, &[pkt(7, 33)]);
    assert_eq!(collected_data("c"), [pkt(7, 33)]);
    assert!(config_error("Idle -> Align(3, 0) -> Idle;").contains("MODULUS must be 2, 4, or 8"));
    assert!(config_error("Idle -> Align(4, 4) -> Idle;")
        .contains("OFFSET must be smaller than MODULUS"));
}

#[test]
fn message_prints_under_the_context_line() {
    let r = router("m :: Message(\"test\"); w :: Message(careful, WARNING);");
    assert_eq!(
        r.stderr(),
        "test.click:1: While configuring 'm :: Message':\n  test\n\
         test.click:1: While configuring 'w :: Message':\n  warning: careful\n"
    );
    assert_eq!(
        config_error("m :: Message(\"no good\", ERROR);"),
        "test.click:1: While configuring 'm :: Message':\n  no good"
    );
}

fn run_until(r: &TestRouter, t: Timestamp) {
    for _ in 0..1_000_000 {
        match r.router.run_pass() {
            RunState::Busy => {}
            RunState::Idle(Some(n)) if n <= t => r.clock.set(n),
            _ => {
                r.clock.set(t);
                return;
            }
        }
    }
    panic!("router never went idle");
}

#[test]
fn linkunqueue_delays_by_latency_and_bandwidth() {
    // Click's LinkUnqueue-01 test: 5 ms and 100 kbit/s (12500 bytes/s):
    // a 20-byte packet takes 1600 us, a 1600-byte one 128 ms
    clear_collected();
    let r = router("Idle -> q :: Queue -> l :: LinkUnqueue(0.005s, 100kb/s) -> c :: Collect;");
    assert_eq!(r.read("l.latency"), "5ms");
    assert_eq!(r.read("l.bandwidth"), "12500");
    let t0 = r.clock.now();
    for len in [20, 20, 1600, 20, 1600, 20] {
        r.inject("q", 0, &[vec![0u8; len]]);
    }
    run_until(&r, t0.add_nsec(1_000_000_000));
    let ts: Vec<i64> = collected("c")
        .iter()
        .map(|s| (s.anno.timestamp - t0).nsec() / 1000)
        .collect();
    let first = 5_000 + 1_600;
    assert_eq!(
        ts,
        [0, 1_600, 129_600, 131_200, 259_200, 260_800].map(|d| first + d)
    );
    assert_eq!(r.read("l.size"), "0");
    assert!(config_error("Idle -> LinkUnqueue(1s, 99Bps) -> Idle;")
        .contains("bandwidth too small, minimum 100Bps"));
}

#[test]
fn timertest_reports_expiries() {
    // Click's timer-02 test: t1 rescheduled to now fires first
    let r = router(
        "t1 :: TimerTest(DELAY .03s); t2 :: TimerTest(DELAY .02s); t3 :: TimerTest(DELAY .01s);",
    );
    let t0 = r.clock.now();
    r.write("t1.schedule_after", "0").unwrap();
    assert_eq!(r.read("t1.scheduled"), "true");
    run_until(&r, t0.add_nsec(50_000_000));
    assert_eq!(
        r.stderr(),
        format!(
            "{}: t1 :: TimerTest fired\n{}: t3 :: TimerTest fired\n{}: t2 :: TimerTest fired\n",
            t0,
            t0.add_nsec(10_000_000),
            t0.add_nsec(20_000_000)
        )
    );
    assert_eq!(r.read("t1.scheduled"), "false");
    assert_eq!(r.read("t2.expiry"), t0.add_nsec(20_000_000).to_string());
}

#[test]
fn confparsetest_passes_clicks_checks() {
    // Click's confparse-01 test: Click's argument parsing checks, run
    // against click_lang::args
    let r = router("AddressInfo(ip4_addr 1.2.3.4); ConfParseTest;");
    assert_eq!(
        r.stderr(),
        "test.click:1: While initializing 'ConfParseTest@2 :: ConfParseTest':\n  \
         All tests pass!\n"
    );
}

#[test]
fn tokenbuckettest_passes_clicks_checks() {
    // Click's tokenbucket-01 test: Click's TokenBucket checks, run against
    // common::rate::TokenBucket
    let r = router("TokenBucketTest;");
    assert_eq!(
        r.stderr(),
        "test.click:1: While initializing 'TokenBucketTest@1 :: TokenBucketTest':\n  \
         All tests pass!\n"
    );
}
