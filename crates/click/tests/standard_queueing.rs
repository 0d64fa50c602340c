//! Queueing, scheduling and shaping elements on a virtual clock: measured
//! rates over simulated seconds, drop order, priority order, delays, RED's
//! drop probability, reproducible random choices.

mod common;
use click::prelude::*;
use common::*;

const SEC: i64 = 1_000_000_000;
const MS: i64 = 1_000_000;

/// Runs the router, moving the virtual clock from timer to timer, until
/// nothing is due before `t`; leaves the clock at `t`.
fn run_until(r: &TestRouter, t: Timestamp) {
    for _ in 0..50_000_000 {
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

/// For graphs that poll (a puller behind a Shaper): one scheduler pass
/// every `step` nanoseconds of simulated time, until `t`.
fn step_until(r: &TestRouter, t: Timestamp, step: i64) {
    while r.clock.now() < t {
        r.clock.set(r.clock.now().add_nsec(step));
        r.router.run_pass();
    }
}

fn count(r: &TestRouter, h: &str) -> i64 {
    r.read(h).trim().parse().unwrap()
}

fn inject_n(r: &TestRouter, elem: &str, port: usize, n: usize, len: usize) {
    for i in 0..n {
        let p = r
            .router
            .pool()
            .make(DEFAULT_HEADROOM, &pkt(i as u16, len), 0);
        r.router.inject(elem, port, p).unwrap();
    }
}

fn within(x: i64, want: i64, pct: f64) -> bool {
    ((x - want).abs() as f64) <= want as f64 * pct / 100.0
}

// ---- FrontDropQueue ------------------------------------------------------

#[test]
fn frontdropqueue_drops_from_the_head() {
    clear_collected();
    let r = router(
        "Idle -> q :: FrontDropQueue(3); q[1] -> drops :: Collect; \
         q -> u :: Unqueue(BURST 0, ACTIVE false) -> out :: Collect;",
    );
    let pk: Vec<Vec<u8>> = (0..5).map(|i| pkt(i, 60)).collect();
    r.inject("q", 0, &pk);
    assert_eq!(ids(&collected_data("drops")), vec![0, 1]);
    assert_eq!(r.read("q.length"), "3");
    assert_eq!(r.read("q.drops"), "2");
    assert_eq!(r.read("q.highwater_length"), "3");
    assert_eq!(r.read("q.capacity"), "3");
    assert_eq!(r.stderr(), "q :: FrontDropQueue: overflow\n");
    r.write("u.active", "true").unwrap();
    r.run();
    assert_eq!(ids(&collected_data("out")), vec![2, 3, 4]);
    assert_eq!(r.read("q.length"), "0");
    // Empty again: the Unqueue sleeps on the queue's notifier.
    assert_eq!(r.router.run_pass(), RunState::Idle(None));

    // Lowering the capacity keeps the newest packets.
    clear_collected();
    r.write("u.active", "false").unwrap();
    r.run();
    let pk: Vec<Vec<u8>> = (10..13).map(|i| pkt(i, 60)).collect();
    r.inject("q", 0, &pk);
    r.write("q.capacity", "1").unwrap();
    assert_eq!(r.read("q.length"), "1");
    assert_eq!(r.read("q.drops"), "4");
    assert_eq!(r.read("q.config"), "1");
    r.write("q.reset_counts", "").unwrap();
    assert_eq!(r.read("q.drops"), "0");
    assert_eq!(r.read("q.highwater_length"), "1");
    r.write("u.active", "true").unwrap();
    r.run();
    assert_eq!(ids(&collected_data("out")), vec![12]);
}

#[test]
fn frontdropqueue_without_drop_output_and_reset() {
    let r = router("Idle -> q :: FrontDropQueue(2) -> Discard(ACTIVE false);");
    r.inject("q", 0, &[pkt(1, 60), pkt(2, 60), pkt(3, 60)]);
    assert_eq!(r.read("q.length"), "2");
    assert_eq!(r.read("q.drops"), "1");
    r.write("q.reset", "").unwrap();
    assert_eq!(r.read("q.length"), "0");
    let e = try_router("Idle -> FrontDropQueue(-1) -> Discard;")
        .err()
        .unwrap();
    assert!(e.iter().any(|l| l.contains("CAPACITY")), "{:?}", e);
}

// ---- RatedUnqueue / BandwidthRatedUnqueue --------------------------------

#[test]
fn ratedunqueue_moves_rate_packets_per_second() {
    let r =
        router("Idle -> q :: Queue(10000) -> ru :: RatedUnqueue(1000) -> c :: Counter -> Discard;");
    inject_n(&r, "q", 0, 10_000, 64);
    let t0 = r.clock.now();
    run_until(&r, t0.add_nsec(SEC));
    // the first second also empties the full bucket (20 ms worth)
    let n1 = count(&r, "c.count");
    assert!(within(n1, 1020, 1.0), "first second: {}", n1);
    run_until(&r, t0.add_nsec(3 * SEC));
    let n3 = count(&r, "c.count");
    assert!(within(n3, 3020, 1.0), "three seconds: {}", n3);
    assert_eq!(r.read("ru.rate"), "1000");
    assert_eq!(r.read("ru.config"), "1000");
    // a rate write takes effect at once
    r.write("ru.rate", "2000").unwrap();
    assert_eq!(r.read("ru.rate"), "2000");
    run_until(&r, t0.add_nsec(4 * SEC));
    let n4 = count(&r, "c.count") - n3;
    assert!(within(n4, 2000, 1.0), "after rate 2000: {}", n4);
    assert!(r.write("ru.rate", "fast").is_err());
    // deactivated: nothing moves
    r.write("ru.active", "false").unwrap();
    assert_eq!(r.read("ru.active"), "false");
    let before = count(&r, "c.count");
    run_until(&r, t0.add_nsec(5 * SEC));
    assert_eq!(count(&r, "c.count"), before);
    r.write("ru.active", "true").unwrap();
    run_until(&r, t0.add_nsec(6 * SEC));
    assert!(count(&r, "c.count") > before + 1000);
    let calls = r.read("ru.calls");
    let lines: Vec<&str> = calls.lines().collect();
    assert_eq!(lines.len(), 4, "{}", calls);
    assert!(lines[0].ends_with(" calls to run_task()"));
    assert!(lines[2].ends_with(" pushes"));
    let pushes: i64 = lines[2].split(' ').next().unwrap().parse().unwrap();
    assert_eq!(pushes, count(&r, "c.count"));
}

#[test]
fn ratedunqueue_sleeps_when_empty_and_on_timer() {
    let r = router("Idle -> q :: Queue -> ru :: RatedUnqueue(100) -> c :: Counter -> Discard;");
    // The bucket (2 tokens: 20 ms at 100/s) starts full, as in Click: the
    // first run finds nothing queued and sleeps on the queue's notifier.
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
    let t1 = r.clock.now();
    inject_n(&r, "q", 0, 20, 64);
    // Two tokens are there: two packets go at once.
    r.router.run_pass();
    r.router.run_pass();
    assert_eq!(r.read("c.count"), "2");
    // Out of tokens between packets: idle with a timer, not busy. As in
    // Click's TokenBucket a jiffy adds 214748364 of the 2147483647 units a
    // token is, so the first token takes 11 jiffies, the next ones 10
    assert_eq!(
        r.router.run_pass(),
        RunState::Idle(Some(t1.add_nsec(11 * MS)))
    );
    // 18 more packets at 100/s: the last 181ms after the first two.
    run_until(&r, t1.add_nsec(181 * MS - 1));
    assert_eq!(r.read("c.count"), "19");
    run_until(&r, t1.add_nsec(181 * MS));
    assert_eq!(r.read("c.count"), "20");
    assert_eq!(r.run(), RunState::Idle(None));
    assert_eq!(r.read("c.count"), "20");
}

#[test]
fn ratedunqueue_keywords() {
    // BURST_SIZE 5: after an idle second, five go at once.
    let r = router(
        "Idle -> q :: Queue -> ru :: RatedUnqueue(10, BURST_SIZE 5) -> c :: Counter -> Discard;",
    );
    let t0 = r.clock.now();
    run_until(&r, t0.add_nsec(SEC));
    inject_n(&r, "q", 0, 8, 64);
    r.router.run_pass();
    assert_eq!(r.read("c.count"), "5");
    let e =
        try_router("Idle -> Queue -> RatedUnqueue(10, BURST_SIZE 5, BURST_DURATION 1) -> Discard;")
            .err()
            .unwrap();
    assert!(
        e.iter()
            .any(|l| l.ends_with("cannot specify both BURST_DURATION and BURST_SIZE")),
        "{:?}",
        e
    );
    let e = try_router("Idle -> Queue -> RatedUnqueue -> Discard;")
        .err()
        .unwrap();
    assert!(
        e.iter()
            .any(|l| l.ends_with("missing mandatory RATE argument")),
        "{:?}",
        e
    );
    let r = router("Idle -> Queue -> ru :: RatedUnqueue(10, ACTIVE false) -> Discard;");
    assert_eq!(r.read("ru.active"), "false");
}

#[test]
fn bandwidthratedunqueue_moves_bandwidth() {
    let r = router(
        "Idle -> q :: Queue(100000) -> ru :: BandwidthRatedUnqueue(8Mbps) -> c :: Counter -> Discard;",
    );
    assert_eq!(r.read("ru.rate"), "8Mbps");
    inject_n(&r, "q", 0, 10_000, 1000);
    let t0 = r.clock.now();
    run_until(&r, t0.add_nsec(SEC));
    let b1 = count(&r, "c.byte_count");
    run_until(&r, t0.add_nsec(3 * SEC));
    let b3 = count(&r, "c.byte_count");
    // 8 Mbit/s = 1,000,000 bytes/s in the steady state
    assert!(within(b3 - b1, 2_000_000, 1.0), "{}", b3 - b1);
    r.write("ru.rate", "2MBps").unwrap();
    assert_eq!(r.read("ru.rate"), "16Mbps");
    run_until(&r, t0.add_nsec(5 * SEC));
    let b5 = count(&r, "c.byte_count");
    assert!(within(b5 - b3, 4_000_000, 1.0), "{}", b5 - b3);
    let e = try_router("Idle -> Queue -> BandwidthRatedUnqueue(fast) -> Discard;")
        .err()
        .unwrap();
    assert!(
        e.iter().any(|l| l.contains("RATE: expected bandwidth")),
        "{:?}",
        e
    );
}

// ---- RatedSplitter / BandwidthRatedSplitter ------------------------------

#[test]
fn ratedsplitter_splits_at_rate() {
    let r = router(
        "Idle -> rs :: RatedSplitter(1000); rs[0] -> c0 :: Counter -> Discard; \
         rs[1] -> c1 :: Counter -> Discard;",
    );
    let t0 = r.clock.now();
    // 5000 packets per second for three seconds
    for i in 0..15_000i64 {
        r.clock.set(t0.add_nsec(i * 200_000));
        let p = r
            .router
            .pool()
            .make(DEFAULT_HEADROOM, &pkt(i as u16, 64), 0);
        r.router.inject("rs", 0, p).unwrap();
    }
    let c0 = count(&r, "c0.count");
    let c1 = count(&r, "c1.count");
    assert_eq!(c0 + c1, 15_000);
    assert!(within(c0, 3000, 1.0), "{}", c0);
    assert_eq!(r.read("rs.rate"), "1000");
    // below the rate everything goes out output 0
    r.write("rs.rate", "100000").unwrap();
    let t1 = r.clock.now();
    for i in 1..=1000i64 {
        r.clock.set(t1.add_nsec(i * 200_000));
        let p = r.router.pool().make(DEFAULT_HEADROOM, &pkt(0, 64), 0);
        r.router.inject("rs", 0, p).unwrap();
    }
    assert_eq!(count(&r, "c1.count"), c1);
}

#[test]
fn bandwidthratedsplitter_splits_at_bandwidth() {
    let r = router(
        "Idle -> rs :: BandwidthRatedSplitter(1MBps); rs[0] -> c0 :: Counter -> Discard; \
         rs[1] -> c1 :: Counter -> Discard;",
    );
    assert_eq!(r.read("rs.rate"), "8Mbps");
    let t0 = r.clock.now();
    let mut mark = 0;
    // 1000-byte packets at 5000 per second: 5 MB/s offered
    for i in 0..15_000i64 {
        r.clock.set(t0.add_nsec(i * 200_000));
        if i == 5000 {
            mark = count(&r, "c0.byte_count");
        }
        let p = r
            .router
            .pool()
            .make(DEFAULT_HEADROOM, &pkt(i as u16, 1000), 0);
        r.router.inject("rs", 0, p).unwrap();
    }
    let b = count(&r, "c0.byte_count") - mark;
    assert!(within(b, 2_000_000, 1.0), "{}", b);
    assert_eq!(count(&r, "c0.count") + count(&r, "c1.count"), 15_000);
}

// ---- RandomSwitch --------------------------------------------------------

fn random_switch_run(name: &str) -> (Vec<i64>, Vec<u16>) {
    clear_collected();
    let r = router(&format!(
        "Idle -> {name} :: RandomSwitch; {name}[0] -> c0 :: Counter -> o0 :: Collect; \
         {name}[1] -> c1 :: Counter -> Discard; {name}[2] -> c2 :: Counter -> Discard;"
    ));
    for i in 0..30_000u32 {
        let p = r
            .router
            .pool()
            .make(DEFAULT_HEADROOM, &pkt(i as u16, 60), 0);
        r.router.inject(name, 0, p).unwrap();
    }
    let counts = (0..3).map(|i| count(&r, &format!("c{i}.count"))).collect();
    (counts, ids(&collected_data("o0")))
}

#[test]
fn randomswitch_is_uniform_and_reproducible() {
    let (a, seq_a) = random_switch_run("rs");
    assert_eq!(a.iter().sum::<i64>(), 30_000);
    for &c in &a {
        assert!(within(c, 10_000, 3.0), "{:?}", a);
    }
    let (b, seq_b) = random_switch_run("rs");
    assert_eq!(a, b);
    assert_eq!(seq_a, seq_b);
    // another element makes other choices
    let (_, seq_c) = random_switch_run("other");
    assert_ne!(seq_a, seq_c);
}

// ---- PrioSched -----------------------------------------------------------

#[test]
fn priosched_pulls_in_priority_order() {
    clear_collected();
    let r = router(
        "Idle -> q0 :: Queue; Idle -> q1 :: Queue; Idle -> q2 :: Queue; \
         q0 -> [0] ps :: PrioSched; q1 -> [1] ps; q2 -> [2] ps; \
         ps -> u :: Unqueue(BURST 0, ACTIVE false) -> out :: Collect;",
    );
    r.inject("q2", 0, &[pkt(21, 60), pkt(22, 60)]);
    r.inject("q1", 0, &[pkt(11, 60), pkt(12, 60), pkt(13, 60)]);
    r.inject("q0", 0, &[pkt(1, 60), pkt(2, 60)]);
    r.write("u.active", "true").unwrap();
    r.run();
    assert_eq!(ids(&collected_data("out")), vec![1, 2, 11, 12, 13, 21, 22]);
    // every queue empty: the Unqueue sleeps
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
    // one packet in the lowest-priority queue wakes it
    r.inject("q2", 0, &[pkt(23, 60)]);
    r.router.run_pass();
    assert_eq!(ids(&collected_data("out")).last(), Some(&23));
    r.run();
    assert_eq!(ids(&collected_data("out")).last(), Some(&23));

    // a higher-priority packet arriving later overtakes the waiting ones
    clear_collected();
    r.write("u.active", "false").unwrap();
    r.run();
    r.inject("q1", 0, &[pkt(14, 60)]);
    r.inject("q2", 0, &[pkt(24, 60)]);
    r.inject("q0", 0, &[pkt(3, 60)]);
    r.write("u.burst", "1").unwrap();
    r.write("u.active", "true").unwrap();
    r.run();
    assert_eq!(ids(&collected_data("out")), vec![3, 14, 24]);
    // ... and one arriving while lower ones wait goes first
    r.write("u.active", "false").unwrap();
    r.inject("q2", 0, &[pkt(25, 60)]);
    r.inject("q0", 0, &[pkt(4, 60)]);
    r.write("u.active", "true").unwrap();
    r.run();
    assert_eq!(ids(&collected_data("out")), vec![3, 14, 24, 4, 25]);
}

// ---- Shaper / BandwidthShaper --------------------------------------------

#[test]
fn shaper_limits_pull_rate() {
    let r = router(
        "Idle -> q :: Queue(10000) -> s :: Shaper(500) -> u :: Unqueue -> c :: Counter -> Discard;",
    );
    inject_n(&r, "q", 0, 5000, 64);
    let t0 = r.clock.now();
    step_until(&r, t0.add_nsec(2 * SEC), 100_000);
    let n = count(&r, "c.count");
    assert!(within(n, 1000, 1.0), "{}", n);
    assert_eq!(r.read("s.rate"), "500");
    r.write("s.rate", "2000").unwrap();
    step_until(&r, t0.add_nsec(3 * SEC), 100_000);
    let n2 = count(&r, "c.count") - n;
    assert!(within(n2, 2000, 1.0), "{}", n2);
    r.write("s.rate", "0").unwrap();
    step_until(&r, t0.add_nsec(4 * SEC), 100_000);
    assert_eq!(count(&r, "c.count"), n + n2);
    r.write("s.reset", "").unwrap();
    assert!(r.write("s.rate", "x").is_err());
    let e = try_router("Idle -> Queue -> Shaper -> Unqueue -> Discard;")
        .err()
        .unwrap();
    assert!(
        e.iter()
            .any(|l| l.ends_with("missing mandatory RATE argument")),
        "{:?}",
        e
    );
}

#[test]
fn bandwidthshaper_limits_bytes() {
    let r = router(
        "Idle -> q :: Queue(10000) -> s :: BandwidthShaper(4Mbps) -> u :: Unqueue -> c :: Counter -> Discard;",
    );
    assert_eq!(r.read("s.rate"), "4Mbps");
    inject_n(&r, "q", 0, 5000, 500);
    let t0 = r.clock.now();
    step_until(&r, t0.add_nsec(2 * SEC), 100_000);
    // 4 Mbit/s = 500,000 bytes/s
    let b = count(&r, "c.byte_count");
    assert!(within(b, 1_000_000, 1.0), "{}", b);
}

// ---- DelayShaper ---------------------------------------------------------

fn inject_stamped(r: &TestRouter, elem: &str, id: u16) {
    let mut p = r.router.pool().make(DEFAULT_HEADROOM, &pkt(id, 60), 0);
    p.set_timestamp(r.clock.now());
    r.router.inject(elem, 0, p).unwrap();
}

#[test]
fn delayshaper_releases_after_delay() {
    clear_collected();
    let r =
        router("Idle -> q :: Queue -> d :: DelayShaper(250ms) -> u :: Unqueue -> out :: Collect;");
    assert_eq!(r.read("d.delay"), "250ms");
    let t0 = r.clock.now();
    // Nothing to do: everything sleeps.
    for _ in 0..3 {
        r.router.run_pass();
    }
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
    inject_stamped(&r, "q", 1);
    inject_stamped(&r, "q", 2);
    run_until(&r, t0.add_nsec(100 * MS));
    assert!(collected("out").is_empty());
    inject_stamped(&r, "q", 3);
    // waiting for the timer, not polling
    assert!(matches!(r.router.run_pass(), RunState::Idle(Some(_))));
    assert_eq!(r.run(), RunState::Idle(None));
    let got = collected("out");
    assert_eq!(ids(&collected_data("out")), vec![1, 2, 3]);
    let lat: Vec<i64> = got
        .iter()
        .map(|s| (s.anno.timestamp - t0).nsec() / MS)
        .collect();
    assert_eq!(lat, vec![250, 250, 350]);

    // packets without a timestamp are delayed from when they are pulled
    clear_collected();
    r.write("d.delay", "1.5").unwrap();
    assert_eq!(r.read("d.delay"), "1.500000s");
    let t1 = r.clock.now();
    inject_n(&r, "q", 0, 2, 60);
    r.run();
    let lat: Vec<i64> = collected("out")
        .iter()
        .map(|s| (s.anno.timestamp - t1).nsec() / MS)
        .collect();
    assert_eq!(lat, vec![1500, 3000]);
    assert!(r.write("d.delay", "soon").is_err());
}

// ---- RED -----------------------------------------------------------------

/// Drops RED makes with the queue held at `len` packets, out of `n`.
fn red_drops(cfg: &str, len: usize, n: usize) -> i64 {
    let r = router(&format!(
        "Idle -> red :: RED({cfg}) -> q :: Queue({len}) -> Discard(ACTIVE false); \
         red[1] -> d :: Counter -> Discard;"
    ));
    inject_n(&r, "q", 0, len, 60);
    assert_eq!(r.read("q.length"), len.to_string());
    inject_n(&r, "red", 0, n, 60);
    assert_eq!(r.read("q.length"), len.to_string());
    assert_eq!(r.read("red.drops"), r.read("d.count"));
    count(&r, "d.count")
}

#[test]
fn red_drop_probability_rises_between_thresholds() {
    let cfg = "10, 30, 0.1, STABILITY 0";
    let n = 20_000;
    let mut last = -1;
    for len in [0, 5, 10, 12, 15, 20, 25, 30, 40, 50, 60, 61, 80] {
        let drops = red_drops(cfg, len, n);
        let frac = drops as f64 / n as f64;
        // p_b as RED computes it (16-bit fixed point)
        let max_p: f64 = 6554.0; // 0.1 * 65536, rounded
        let pb: f64 = if len <= 10 {
            0.0
        } else if len <= 30 {
            ((max_p / 20.0).floor() * len as f64 - (max_p * 10.0 / 20.0).floor()) / 65536.0
        } else {
            (((65536.0 - max_p) / 30.0).floor() * len as f64 - (65536.0 - 2.0 * max_p)) / 65536.0
        };
        if len <= 10 {
            assert_eq!(drops, 0, "len {}", len);
        } else if len > 60 {
            assert_eq!(drops, n as i64, "len {}", len);
        } else {
            // With Floyd and Jacobson's count, the gap between drops is
            // uniform on 1..1/p_b: the drop rate is about 2p_b/(1+p_b).
            let want = (2.0 * pb / (1.0 + pb)).min(1.0);
            assert!(
                (frac - want).abs() <= want * 0.1 + 0.002,
                "len {}: dropped {:.4}, expected about {:.4}",
                len,
                frac,
                want
            );
        }
        assert!(drops >= last, "len {}: {} < {}", len, drops, last);
        last = drops;
    }
    // the same configuration drops the same packets every time
    assert_eq!(red_drops(cfg, 20, 5000), red_drops(cfg, 20, 5000));
}

#[test]
fn red_average_and_handlers() {
    let r = router(
        "Idle -> red :: RED(5, 50, 0.02) -> q :: Queue(20) -> Discard(ACTIVE false); \
         red[1] -> Discard;",
    );
    assert_eq!(r.read("red.queues"), "q\n");
    assert_eq!(r.read("red.min_thresh"), "5");
    assert_eq!(r.read("red.max_thresh"), "50");
    assert_eq!(r.read("red.max_p"), "0.02");
    assert_eq!(r.read("red.config"), "5, 50, 0.02, QUEUES q, STABILITY 4");
    assert_eq!(r.read("red.avg_queue_size"), "0");
    inject_n(&r, "q", 0, 20, 60);
    inject_n(&r, "red", 0, 200, 60);
    // the average has converged on the queue's length
    let avg: f64 = r.read("red.avg_queue_size").parse().unwrap();
    assert!((avg - 20.0).abs() < 0.6, "{}", avg);
    let stats = r.read("red.stats");
    assert!(stats.starts_with("20 current queue\n"), "{}", stats);
    assert!(stats.ends_with(&format!("{} drops\n", r.read("red.drops"))));
    r.write("red.max_p", "0.5").unwrap();
    assert_eq!(r.read("red.max_p"), "0.5");
    r.write("red.min_thresh", "8").unwrap();
    assert_eq!(r.read("red.config"), "8, 50, 0.5, QUEUES q, STABILITY 4");
    assert!(r.write("red.min_thresh", "60").is_err());
    assert!(r.write("red.max_p", "1.5").is_err());
    assert_eq!(r.read("red.min_thresh"), "8");
    r.write("red.config", "1, 2, 1, GENTLE false").unwrap();
    assert_eq!(
        r.read("red.config"),
        "1, 2, 1, QUEUES q, STABILITY 4, GENTLE false"
    );
}

#[test]
fn red_finds_queues_and_reports_errors() {
    // Through a Tee to two queues: both are watched, their lengths summed.
    let r = router(
        "Idle -> red :: RED(1, 3, 1, STABILITY 0) -> t :: Tee -> q1 :: Queue -> Discard(ACTIVE false); \
         t[1] -> Null -> q2 :: Queue -> Discard(ACTIVE false);",
    );
    assert_eq!(r.read("red.queues"), "q1\nq2\n");
    inject_n(&r, "red", 0, 10, 60);
    // sum of both lengths passes MAX_THRESH (3) after two packets
    assert_eq!(r.read("q1.length"), "2");
    assert_eq!(r.read("red.drops"), "8");
    // QUEUES names them explicitly
    let r = router(
        "Idle -> red :: RED(1, 3, 0.5, QUEUES b) -> a :: Queue -> Discard(ACTIVE false); \
         Idle -> b :: Queue -> Discard(ACTIVE false);",
    );
    assert_eq!(r.read("red.queues"), "b\n");
    let e = try_router("Idle -> RED(1, 3, 0.5) -> Discard;")
        .err()
        .unwrap();
    assert!(e.iter().any(|l| l.ends_with("no nearby Queues")), "{:?}", e);
    let e = try_router(
        "Idle -> RED(1, 3, 0.5, QUEUES n) -> Queue -> Discard; Idle -> n :: Null -> Discard;",
    )
    .err()
    .unwrap();
    assert!(
        e.iter()
            .any(|l| l.ends_with("'n' is not a Storage element")),
        "{:?}",
        e
    );
    let e = try_router("Idle -> RED(5, 3, 0.5) -> Queue -> Discard;")
        .err()
        .unwrap();
    assert!(
        e.iter()
            .any(|l| l.ends_with("MIN_THRESH must be <= MAX_THRESH")),
        "{:?}",
        e
    );
    let e = try_router("Idle -> RED(1, 3, 2) -> Queue -> Discard;")
        .err()
        .unwrap();
    assert!(
        e.iter()
            .any(|l| l.ends_with("MAX_P must be between 0 and 1")),
        "{:?}",
        e
    );
    let e = try_router("Idle -> RED(1, 3, 0.1, STABILITY 17) -> Queue -> Discard;")
        .err()
        .unwrap();
    assert!(
        e.iter()
            .any(|l| l.ends_with("STABILITY must be between 0 and 16")),
        "{:?}",
        e
    );
}

#[test]
fn red_in_pull_context_watches_upstream_queue() {
    clear_collected();
    let r = router(
        "Idle -> q :: Queue(100) -> red :: RED(2, 4, 1, STABILITY 0, GENTLE false) \
         -> u :: Unqueue(ACTIVE false) -> out :: Collect; red[1] -> dr :: Collect;",
    );
    assert_eq!(r.read("red.queues"), "q\n");
    let pk: Vec<Vec<u8>> = (0..10).map(|i| pkt(i, 60)).collect();
    r.inject("q", 0, &pk);
    r.write("u.active", "true").unwrap();
    r.run();
    let out = ids(&collected_data("out"));
    let dropped = ids(&collected_data("dr"));
    assert_eq!(out.len() + dropped.len(), 10);
    // pulled while more than MAX_THRESH (4) remained: always dropped
    assert_eq!(&dropped[..5], &[0, 1, 2, 3, 4]);
    assert!(out.contains(&9));
    assert_eq!(r.read("red.drops"), dropped.len().to_string());
}

// ---- Suppressor ----------------------------------------------------------

#[test]
fn suppressor_per_port() {
    clear_collected();
    let r = router(
        "Idle -> s :: Suppressor; Idle -> [1] s; s[0] -> o0 :: Collect; s[1] -> o1 :: Collect;",
    );
    let h = r.read("s.handlers");
    assert!(
        h.contains("active0\trw\n") && h.contains("active1\trw\n"),
        "{}",
        h
    );
    assert!(!h.contains("active2"), "{}", h);
    assert!(h.contains("reset\tw\n"), "{}", h);
    assert_eq!(r.read("s.active1"), "true");
    r.inject("s", 0, &[pkt(1, 60)]);
    r.inject("s", 1, &[pkt(2, 60)]);
    r.write("s.active1", "false").unwrap();
    assert_eq!(r.read("s.active1"), "false");
    r.inject("s", 0, &[pkt(3, 60)]);
    r.inject("s", 1, &[pkt(4, 60)]);
    assert_eq!(ids(&collected_data("o0")), vec![1, 3]);
    assert_eq!(ids(&collected_data("o1")), vec![2]);
    r.write("s.suppress", "0").unwrap();
    assert_eq!(r.read("s.active0"), "false");
    r.inject("s", 0, &[pkt(5, 60)]);
    r.write("s.allow", "1").unwrap();
    r.inject("s", 1, &[pkt(6, 60)]);
    r.write("s.reset", "").unwrap();
    assert_eq!(r.read("s.active0"), "true");
    r.inject("s", 0, &[pkt(7, 60)]);
    assert_eq!(ids(&collected_data("o0")), vec![1, 3, 7]);
    assert_eq!(ids(&collected_data("o1")), vec![2, 6]);
    assert!(r.write("s.active0", "maybe").is_err());
    assert!(r.write("s.suppress", "2").is_err());
    assert!(matches!(
        r.router.read_handler("s.active2"),
        Err(HandlerError::NoSuchHandler(_))
    ));
}

#[test]
fn suppressor_in_pull_context() {
    clear_collected();
    let r = router("Idle -> q :: Queue -> s :: Suppressor -> u :: Unqueue -> out :: Collect;");
    r.write("s.active0", "false").unwrap();
    r.inject("q", 0, &[pkt(1, 60), pkt(2, 60)]);
    r.run_passes(20);
    assert!(collected("out").is_empty());
    assert_eq!(r.read("q.length"), "2");
    r.write("s.active0", "true").unwrap();
    r.run();
    assert_eq!(ids(&collected_data("out")), vec![1, 2]);
}

// ---- odd packet sizes ----------------------------------------------------

#[test]
fn odd_packet_sizes_pass_without_panic() {
    let r = router(
        "Idle -> rs :: RandomSwitch; \
         rs[0] -> bs :: BandwidthRatedSplitter(100Mbps) -> red :: RED(1, 2, 0.5) -> q :: FrontDropQueue(4) \
           -> BandwidthShaper(1Mbps) -> ds :: DelayShaper(1ms) -> bu :: BandwidthRatedUnqueue(1Mbps) -> c :: Counter -> Discard; \
         bs[1] -> Discard; red[1] -> Discard; \
         rs[1] -> s :: Suppressor -> Discard;",
    );
    let t0 = r.clock.now();
    for (i, len) in [0usize, 1, 2, 60, 1514, 9000, 65_000]
        .iter()
        .cycle()
        .take(70)
        .enumerate()
    {
        r.clock.set(t0.add_nsec(i as i64 * 10 * MS));
        let p = r.router.pool().make(DEFAULT_HEADROOM, &vec![0xa5; *len], 0);
        r.router.inject("rs", 0, p).unwrap();
        r.router.run_pass();
    }
    run_until(&r, t0.add_nsec(60 * SEC));
    assert!(count(&r, "c.count") > 0);
}

/// Click's full notifier: a push source feeding a Queue nobody drains
/// sleeps once the Queue is full (nothing overflows, the router goes
/// idle), and wakes when the Queue gains room through a bigger capacity or
/// a pull.
#[test]
fn infinitesource_sleeps_while_queue_is_full() {
    let r =
        router("i :: InfiniteSource -> q :: Queue(5) -> u :: Unqueue(ACTIVE false) -> Discard;");
    run_until(&r, Timestamp::from_nsec(SEC));
    assert_eq!(count(&r, "i.count"), 5);
    assert_eq!(count(&r, "q.drops"), 0);
    assert!(!r.stderr().contains("overflow"), "{}", r.stderr());
    assert!(matches!(r.router.run_pass(), RunState::Idle(_)));
    r.write("q.capacity", "8").unwrap();
    run_until(&r, Timestamp::from_nsec(2 * SEC));
    assert_eq!(count(&r, "i.count"), 8);
    assert_eq!(count(&r, "q.drops"), 0);
}

/// A source whose output also reaches a sink that always takes packets
/// (Tee to Discard) does not sleep on the full Queue.
#[test]
fn full_notifier_ignores_paths_that_never_fill() {
    let r = router("i :: InfiniteSource(LIMIT 20, STOP true) -> t :: Tee; t[0] -> q :: Queue(5) -> Idle; t[1] -> Discard;");
    run_until(&r, Timestamp::from_nsec(SEC));
    assert_eq!(count(&r, "i.count"), 20);
    assert_eq!(count(&r, "q.drops"), 15);
}

/// Writing `capacity` rewrites the configuration the way Click's keyword
/// handlers do: a positional capacity is replaced in place, otherwise a
/// `CAPACITY` keyword replaces earlier ones at the end.
#[test]
fn queue_capacity_write_updates_config() {
    let r = router("a :: Queue -> Idle; Idle -> b :: Queue(6) -> Idle; Idle -> c :: Queue(CAPACITY 3) -> Idle; Idle -> a;");
    r.write("a.capacity", "10").unwrap();
    assert_eq!(r.read("a.config"), "CAPACITY 10");
    r.write("a.capacity", "1000").unwrap();
    assert_eq!(r.read("a.config"), "CAPACITY 1000");
    r.write("b.capacity", "7").unwrap();
    assert_eq!(r.read("b.config"), "7");
    r.write("c.capacity", "4").unwrap();
    assert_eq!(r.read("c.config"), "CAPACITY 4");
    assert_eq!(r.read("c.capacity"), "4");
}

/// Click's token buckets start full: a RatedSplitter lets its whole burst
/// through at once before settling to its rate, and a RatedUnqueue's
/// first pulls are not delayed.
#[test]
fn token_buckets_start_full() {
    let r = router(
        "Idle -> rs :: RatedSplitter(RATE 2, BURST_SIZE 50); rs[0] -> c0 :: Counter -> Discard; \
         rs[1] -> c1 :: Counter -> Discard;",
    );
    for i in 0..60 {
        inject_n(&r, "rs", 0, 1, 64 + i);
    }
    assert_eq!(count(&r, "c0.count"), 50);
    assert_eq!(count(&r, "c1.count"), 10);

    let r = router("i :: InfiniteSource -> Queue(10) -> RatedUnqueue(RATE 1, BURST_SIZE 3) -> c :: Counter -> Discard;");
    run_until(&r, r.clock.now().add_nsec(SEC / 2));
    assert_eq!(count(&r, "c.count"), 3);
}

// ---- Queue / SimpleQueue: which packet is dropped ------------------------

/// Fills `class`(3) with five packets, one at a time or as one batch,
/// and checks that the two arriving last were dropped (out output 1) and
/// the first three are pulled, in order.
fn tail_drop(class: &str, batched: bool) {
    clear_collected();
    let cfg = if batched {
        // Unqueue pushes the five packets on as one batch.
        format!(
            "Idle -> src :: Queue(10) -> Unqueue(BURST 32) -> q :: {}(3); q[1] -> drops :: Collect; \
             q -> u :: Unqueue(BURST 0, ACTIVE false) -> out :: Collect;",
            class
        )
    } else {
        format!(
            "Idle -> src :: {}(3); src[1] -> drops :: Collect; \
             src -> u :: Unqueue(BURST 0, ACTIVE false) -> out :: Collect;",
            class
        )
    };
    let r = router(&cfg);
    let pk: Vec<Vec<u8>> = (0..5).map(|i| pkt(i, 60)).collect();
    r.inject("src", 0, &pk);
    r.run();
    let q = if batched { "q" } else { "src" };
    assert_eq!(
        ids(&collected_data("drops")),
        vec![3, 4],
        "{} dropped",
        class
    );
    assert_eq!(r.read(&format!("{}.length", q)), "3");
    assert_eq!(r.read(&format!("{}.drops", q)), "2");
    assert_eq!(r.read(&format!("{}.highwater_length", q)), "3");
    r.write("u.active", "true").unwrap();
    r.run();
    assert_eq!(ids(&collected_data("out")), vec![0, 1, 2], "{} kept", class);
    assert_eq!(r.read(&format!("{}.length", q)), "0");
    assert_eq!(r.read(&format!("{}.drops", q)), "2");
}

#[test]
fn queue_drops_the_arriving_packet_when_full() {
    tail_drop("Queue", false);
    tail_drop("Queue", true);
}

#[test]
fn simplequeue_drops_the_arriving_packet_when_full() {
    tail_drop("SimpleQueue", false);
    tail_drop("SimpleQueue", true);
}

#[test]
fn notifierqueue_drops_the_arriving_packet_when_full() {
    tail_drop("NotifierQueue", false);
}

#[test]
fn queue_without_drop_output_still_drops_the_arriving_packet() {
    clear_collected();
    let r = router(
        "Idle -> q :: SimpleQueue(2) -> u :: Unqueue(BURST 0, ACTIVE false) -> out :: Collect;",
    );
    r.inject("q", 0, &[pkt(1, 60), pkt(2, 60), pkt(3, 60)]);
    assert_eq!(r.read("q.drops"), "1");
    r.write("u.active", "true").unwrap();
    r.run();
    assert_eq!(ids(&collected_data("out")), vec![1, 2]);
}

#[test]
fn queue_lowering_capacity_keeps_the_oldest() {
    clear_collected();
    let r =
        router("Idle -> q :: Queue(5) -> u :: Unqueue(BURST 0, ACTIVE false) -> out :: Collect;");
    let pk: Vec<Vec<u8>> = (0..4).map(|i| pkt(i, 60)).collect();
    r.inject("q", 0, &pk);
    r.write("q.capacity", "2").unwrap();
    assert_eq!(r.read("q.length"), "2");
    r.write("u.active", "true").unwrap();
    r.run();
    assert_eq!(ids(&collected_data("out")), vec![0, 1]);
}

#[test]
fn zero_capacity_queue_drops_quietly_and_wakes_nobody() {
    clear_collected();
    let r = router(
        "Idle -> q :: Queue(0) -> u :: Unqueue -> out :: Collect; q[1] -> drops :: Collect;",
    );
    r.run();
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
    r.inject("q", 0, &[pkt(1, 60), pkt(2, 60)]);
    assert_eq!(ids(&collected_data("drops")), vec![1, 2]);
    assert_eq!(r.read("q.drops"), "2");
    // Click prints `overflow` only for a queue that can hold something.
    assert_eq!(r.stderr(), "");
    // The queue stayed empty: the Unqueue was not woken.
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
    assert!(collected("out").is_empty());
}

/// Queue, SimpleQueue and FullNoteQueue are full notifiers: InfiniteSource
/// sleeps while they are full and nothing is dropped. NotifierQueue,
/// FrontDropQueue and MixedQueue are not: the source keeps pushing and
/// the queue drops.
#[test]
fn which_queues_are_full_notifiers() {
    for (class, full_notifier) in [
        ("Queue", true),
        ("SimpleQueue", true),
        ("FullNoteQueue", true),
        ("NotifierQueue", false),
        ("FrontDropQueue", false),
        ("MixedQueue", false),
    ] {
        let r = router(&format!(
            "s :: InfiniteSource(LIMIT 50, LENGTH 60) -> q :: {class}(5) -> u :: Unqueue(ACTIVE false) -> Discard; {}",
            if class == "MixedQueue" { "Idle -> [1]q;" } else { "" }
        ));
        r.run_passes(200);
        assert_eq!(r.read("q.length"), "5", "{class}");
        if full_notifier {
            assert_eq!(r.read("q.drops"), "0", "{class}");
            assert_eq!(r.read("s.count"), "5", "{class}: the source slept");
        } else {
            assert_eq!(r.read("q.drops"), "45", "{class}");
            assert_eq!(r.read("s.count"), "50", "{class}");
        }
    }
}

// ---- NotifierDebug, QuickNoteQueue, the empty notifier's sleepiness -----

/// Runs the router from timer to timer until nothing is due; each time it
/// goes idle, the queue's length and what NotifierDebug `dbg` shows.
fn passes(r: &TestRouter, q: &str, dbg: &str) -> Vec<(usize, String)> {
    let mut v = Vec::new();
    for _ in 0..1000 {
        let st = r.router.run_pass();
        if st == RunState::Busy {
            continue;
        }
        v.push((
            count(r, &format!("{q}.length")) as usize,
            r.read(&format!("{dbg}.signal")),
        ));
        match st {
            RunState::Idle(Some(t)) => r.clock.set(t),
            _ => return v,
        }
    }
    panic!("never idle");
}

#[test]
fn notifierdebug_shows_full_and_empty_signals_as_click_prints_them() {
    clear_collected();
    let r = router(
        "i1 :: Idle; d1 :: NotifierDebug; q :: Queue(2); d2 :: NotifierDebug; u :: Unqueue;
         i2 :: Idle; d3 :: NotifierDebug; i3 :: Idle; a :: NotifierQueue; i4 :: Idle;
         b :: NotifierQueue; rr :: RoundRobinSched; d4 :: NotifierDebug;
         i1 -> d1 -> q -> d2 -> u -> out :: Collect;
         i2 -> d3 -> Discard;
         i3 -> a -> rr -> d4 -> Discard;
         i4 -> b -> [1]rr;",
    );
    // empty signals in creation order: i1 0, q 1, i2 2, i3 3, a 4, i4 5,
    // b 6; full signals: q 0
    assert_eq!(r.read("d1.signal"), "full.0/1:1*");
    assert_eq!(r.read("d2.signal"), "empty.0/2:0");
    assert_eq!(
        r.read("d3.signal"),
        "busy*",
        "Discard can always take packets"
    );
    assert_eq!(r.read("d4.signal"), "empty.0/50:0");
    inject_n(&r, "d1", 0, 3, 60);
    assert_eq!(count(&r, "q.drops"), 1);
    assert_eq!(r.read("d1.signal"), "full.0/1:0", "full: no room");
    assert_eq!(r.read("d2.signal"), "empty.0/2:2*", "packets to pull");
    inject_n(&r, "b", 0, 1, 60);
    assert_eq!(r.read("d4.signal"), "empty.0/50:40*");
}

#[test]
fn queues_sleep_after_ten_empty_pulls_quicknotequeue_at_once() {
    for (class, lazy) in [
        ("Queue", true),
        ("NotifierQueue", true),
        ("QuickNoteQueue", false),
    ] {
        clear_collected();
        let r = router(&format!(
            "Idle -> q :: {class}(10) -> d :: NotifierDebug -> u :: TimedUnqueue(0.1, 1) -> out :: Collect;"
        ));
        inject_n(&r, "q", 0, 3, 60);
        let seen = passes(&r, "q", "d");
        assert_eq!(collected("out").len(), 3);
        let active_empty = seen
            .iter()
            .filter(|(len, s)| *len == 0 && s.ends_with('*'))
            .count();
        // one pull every 100 ms: the one that took the last packet, then
        // nine failed pulls (Click's SLEEPINESS_TRIGGER); the tenth puts the
        // signal to sleep
        assert_eq!(active_empty, if lazy { 10 } else { 0 }, "{class}: {seen:?}");
        assert_eq!(seen.last().unwrap().1, "empty.0/2:0", "{class}");
        // asleep: TimedUnqueue's timer stops
        let n = seen.len();
        assert_eq!(passes(&r, "q", "d").len(), 1, "{class} after {n} passes");
    }
}
