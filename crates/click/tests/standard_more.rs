//! More standard elements (and TimeFilter from `analysis`) with real
//! packets on a virtual clock: TimedSink, DelayUnqueue, TimedUnqueue and
//! Burster, Pad, Resize, StoreData, SetPacketType, Meter and
//! BandwidthMeter, RandomSample, TimeFilter, MixedQueue, StrideSched and
//! StrideSwitch, SimpleRoundRobinSched, Hub, AlignmentInfo, Clipboard.

mod common;
use click::packet::{PacketType, EXTRA_LENGTH_ANNO_OFFSET};
use click::prelude::*;
use common::*;

const SEC: i64 = 1_000_000_000;
const MS: i64 = 1_000_000;

fn t0() -> Timestamp {
    Timestamp::from_sec_nsec(1_000_000_000, 0)
}

fn at(ns: i64) -> Timestamp {
    t0().add_nsec(ns)
}

/// Runs the router, moving the virtual clock from timer to timer, until
/// nothing is due before `t`; leaves the clock at `t`.
fn run_until(r: &TestRouter, t: Timestamp) {
    for _ in 0..10_000_000 {
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

fn inject_n(r: &TestRouter, elem: &str, port: usize, ids: std::ops::Range<u16>) {
    for i in ids {
        let p = r.router.pool().make(DEFAULT_HEADROOM, &pkt(i, 60), 0);
        r.router.inject(elem, port, p).unwrap();
    }
}

fn inject_at(r: &TestRouter, elem: &str, port: usize, data: &[u8], ts: Timestamp) {
    let mut p = r.router.pool().make(DEFAULT_HEADROOM, data, 0);
    p.set_timestamp(ts);
    r.router.inject(elem, port, p).unwrap();
}

fn count(r: &TestRouter, h: &str) -> usize {
    r.read(h).trim().parse().unwrap()
}

// ---- TimedSink -----------------------------------------------------------

#[test]
fn timedsink_pulls_one_packet_per_interval() {
    let r = router("Idle -> q :: Queue -> s :: TimedSink(100ms);");
    inject_n(&r, "q", 0, 0..5);
    run_until(&r, at(99 * MS));
    assert_eq!(r.read("q.length"), "5");
    run_until(&r, at(250 * MS));
    assert_eq!(r.read("q.length"), "3");
    run_until(&r, at(SEC));
    assert_eq!(r.read("q.length"), "0");
    assert_eq!(r.read("s.interval"), "100ms");
    r.write("s.interval", "0.5").unwrap();
    assert_eq!(r.read("s.interval"), "500ms");
    assert!(r.write("s.interval", "soon").is_err());
    // the new interval counts from the next pull (due at 1.1s)
    inject_n(&r, "q", 0, 0..3);
    run_until(&r, at(1100 * MS));
    assert_eq!(r.read("q.length"), "2");
    run_until(&r, at(1599 * MS));
    assert_eq!(r.read("q.length"), "2");
    run_until(&r, at(1600 * MS));
    assert_eq!(r.read("q.length"), "1");
    // default interval: half a second
    let r = router("Idle -> q :: Queue -> s :: TimedSink;");
    assert_eq!(r.read("s.interval"), "500ms");
    assert!(config_error("Idle -> Queue -> TimedSink(-1);").contains("INTERVAL"));
}

// ---- DelayUnqueue --------------------------------------------------------

#[test]
fn delayunqueue_holds_packets_until_due_and_sleeps() {
    clear_collected();
    let r = router(
        "Idle -> st :: SetTimestamp -> q :: Queue -> d :: DelayUnqueue(100ms) -> out :: Collect;",
    );
    assert_eq!(r.read("d.delay"), "100ms");
    r.run();
    // nothing queued: the element sleeps on the queue's notifier
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
    r.inject("st", 0, &[pkt(1, 60), pkt(2, 60)]);
    r.clock.set(at(30 * MS));
    r.inject("st", 0, &[pkt(3, 60)]);
    run_until(&r, at(99 * MS));
    assert!(collected("out").is_empty());
    run_until(&r, at(100 * MS));
    let seen = collected("out");
    assert_eq!(ids(&collected_data("out")), vec![1, 2]);
    // timestamps are set to the (simulated) time they left
    assert!(seen.iter().all(|s| s.anno.timestamp == at(100 * MS)));
    run_until(&r, at(500 * MS));
    let seen = collected("out");
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[2].anno.timestamp, at(130 * MS));
    assert_eq!(r.router.run_pass(), RunState::Idle(None));

    // an old timestamp is already due; an unset one counts from the pull
    clear_collected();
    inject_at(&r, "q", 0, &pkt(4, 60), at(-5 * SEC));
    r.inject("q", 0, &[pkt(5, 60)]);
    run_until(&r, at(500 * MS));
    assert_eq!(ids(&collected_data("out")), vec![4]);
    assert_eq!(collected("out")[0].anno.timestamp, at(500 * MS));
    run_until(&r, at(599 * MS));
    assert_eq!(collected("out").len(), 1);
    run_until(&r, at(600 * MS));
    assert_eq!(ids(&collected_data("out")), vec![4, 5]);
    assert!(r.write("d.delay", "1").is_err());
    assert!(config_error("Idle -> Queue -> DelayUnqueue -> Discard;").contains("DELAY"));
}

// ---- TimedUnqueue, Burster -----------------------------------------------

#[test]
fn burster_pulls_bursts_every_interval() {
    clear_collected();
    let r = router(
        "Idle -> q :: Queue -> b :: Burster(100ms) -> st :: SetTimestamp -> out :: Collect;",
    );
    r.run();
    inject_n(&r, "q", 0, 0..20);
    run_until(&r, at(50 * MS));
    assert_eq!(collected("out").len(), 8);
    run_until(&r, at(100 * MS));
    assert_eq!(collected("out").len(), 16);
    run_until(&r, at(250 * MS));
    let seen = collected("out");
    assert_eq!(seen.len(), 20);
    assert_eq!(ids(&collected_data("out")), (0..20).collect::<Vec<_>>());
    let times: Vec<i64> = seen
        .iter()
        .map(|s| (s.anno.timestamp.nsec() - t0().nsec()) / MS)
        .collect();
    assert_eq!(&times[..8], &[0; 8]);
    assert_eq!(&times[8..16], &[100; 8]);
    assert_eq!(&times[16..], &[200; 4]);
    // empty: the queue's empty notifier sleeps once ten pulls in a row
    // found it empty (200 ms, then 300 ms ... 1.1 s), as Click's does;
    // then the burster sleeps, and a new packet goes out at once
    run_until(&r, at(SEC));
    assert_eq!(
        r.router.run_pass(),
        RunState::Idle(Some(at(SEC + 100 * MS)))
    );
    run_until(&r, at(SEC + 100 * MS));
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
    inject_n(&r, "q", 0, 100..101);
    run_until(&r, at(SEC + 200 * MS));
    let seen = collected("out");
    assert_eq!(seen.len(), 21);
    assert_eq!(seen[20].anno.timestamp, at(SEC + 100 * MS));
}

#[test]
fn timedunqueue_defaults_to_one_packet() {
    clear_collected();
    let r =
        router("Idle -> q :: Queue -> TimedUnqueue(50ms) -> st :: SetTimestamp -> out :: Collect;");
    r.run();
    inject_n(&r, "q", 0, 0..3);
    run_until(&r, at(SEC));
    let times: Vec<i64> = collected("out")
        .iter()
        .map(|s| (s.anno.timestamp.nsec() - t0().nsec()) / MS)
        .collect();
    assert_eq!(times, vec![0, 50, 100]);
    // BURST as the second argument
    clear_collected();
    let r = router("Idle -> q :: Queue -> TimedUnqueue(50ms, 2) -> out :: Collect;");
    r.run();
    inject_n(&r, "q", 0, 0..5);
    run_until(&r, at(60 * MS));
    assert_eq!(collected("out").len(), 4);
    assert!(config_error("Idle -> Queue -> Burster(1, 0) -> Discard;").contains("bad BURST"));
    assert!(config_error("Idle -> Queue -> TimedUnqueue -> Discard;").contains("INTERVAL"));
}

// ---- Pad, Resize ---------------------------------------------------------

#[test]
fn pad_extends_to_length_or_extra_length() {
    clear_collected();
    let r = router(
        "Idle -> p :: Pad(60) -> out :: Collect;
         Idle -> t :: Truncate(20) -> p2 :: Pad(ZERO false) -> out2 :: Collect;",
    );
    r.inject("p", 0, &[vec![1; 10], vec![2; 70], vec![]]);
    let mut want = vec![1u8; 10];
    want.resize(60, 0);
    assert_eq!(collected_data("out"), vec![want, vec![2; 70], vec![0; 60]]);
    // Truncate records what it cut in the extra-length annotation; Pad
    // puts that many (zero) bytes back and clears the annotation.
    let frames = pcap_packets("mixed.pcap");
    r.inject("t", 0, &frames[..5]);
    let seen = collected("out2");
    assert_eq!(seen.len(), 5);
    for (s, f) in seen.iter().zip(&frames) {
        assert_eq!(s.data.len(), f.len());
        assert_eq!(&s.data[..20], &f[..20]);
        assert!(s.data[20..].iter().all(|&b| b == 0));
        assert_eq!(s.anno.u32_at(EXTRA_LENGTH_ANNO_OFFSET), 0);
    }
}

#[test]
fn resize_uncovers_headroom_and_trims() {
    clear_collected();
    let r = router(
        "Idle -> s :: Strip(4) -> z :: Resize(4, -2) -> out :: Collect;
         Idle -> z2 :: Resize(HEAD -100, TAIL 5) -> out2 :: Collect;
         Idle -> z3 :: Resize(70000) -> out3 :: Collect;",
    );
    let data: Vec<u8> = (0..10).collect();
    r.inject("s", 0, std::slice::from_ref(&data));
    assert_eq!(collected_data("out"), vec![data[..8].to_vec()]);
    r.inject("z2", 0, &[vec![9; 10], vec![]]);
    assert_eq!(collected_data("out2"), vec![vec![0; 5], vec![0; 5]]);
    r.inject("z3", 0, &[vec![9; 10]]);
    assert!(collected("out3").is_empty());
    assert_eq!(r.read("z3.drops"), "1");
    // beyond the headroom the packet grows with zeros
    clear_collected();
    assert_eq!(r.read("z.head"), "4");
    r.write("z.head", "200").unwrap();
    r.write("z.tail", "0").unwrap();
    assert_eq!(r.read("z.tail"), "0");
    r.inject("z", 0, &[vec![7; 3]]);
    let got = collected_data("out");
    assert_eq!(got[0].len(), 203);
    assert_eq!(&got[0][200..], &[7, 7, 7]);
    assert!(r.write("z.head", "x").is_err());
}

// ---- StoreData -----------------------------------------------------------

#[test]
fn storedata_overwrites_masks_and_grows() {
    clear_collected();
    let r = router(
        "Idle -> a :: StoreData(2, \\<AABB>) -> out :: Collect;
         Idle -> b :: StoreData(4, \\<FFFF>, \\<0F F0>) -> out2 :: Collect;
         Idle -> c :: StoreData(3, \\<0102>, GROW true) -> out3 :: Collect;",
    );
    r.inject("a", 0, &[vec![0; 4], vec![0; 3], vec![0; 2], vec![]]);
    assert_eq!(
        collected_data("out"),
        vec![vec![0, 0, 0xaa, 0xbb], vec![0, 0, 0xaa], vec![0, 0], vec![]]
    );
    r.inject("b", 0, &[vec![0x11; 6], vec![0x11; 5]]);
    assert_eq!(
        collected_data("out2"),
        vec![
            vec![0x11, 0x11, 0x11, 0x11, 0x1f, 0xf1],
            vec![0x11, 0x11, 0x11, 0x11, 0x1f]
        ]
    );
    r.inject("c", 0, &[vec![9; 2], vec![9; 8]]);
    assert_eq!(
        collected_data("out3"),
        vec![vec![9, 9, 0, 1, 2], vec![9, 9, 9, 1, 2, 9, 9, 9]]
    );
    let e = config_error("Idle -> StoreData(0, \\<AABB>, \\<FF>) -> Discard;");
    assert!(e.contains("MASK must be at least as long as DATA"), "{}", e);
    assert!(config_error("Idle -> StoreData(0) -> Discard;").contains("DATA"));
}

// ---- SetPacketType -------------------------------------------------------

#[test]
fn setpackettype_sets_the_annotation() {
    clear_collected();
    let r = router(
        "Idle -> s :: SetPacketType(otherhost) -> out :: Collect;
         Idle -> s2 :: SetPacketType(TYPE FASTROUTE) -> out2 :: Collect;",
    );
    r.inject("s", 0, &pcap_packets("mixed.pcap")[..3]);
    r.inject("s2", 0, &[vec![1; 20]]);
    assert!(collected("out")
        .iter()
        .all(|s| s.anno.packet_type == PacketType::OtherHost));
    assert_eq!(collected("out").len(), 3);
    assert_eq!(collected("out2")[0].anno.packet_type, PacketType::FastRoute);
    assert_eq!(r.read("s.type"), "OTHERHOST");
    let e = config_error("Idle -> SetPacketType(NOBODY) -> Discard;");
    assert!(e.contains("unrecognized packet type 'NOBODY'"), "{}", e);
}

// ---- Meter, BandwidthMeter -----------------------------------------------

#[test]
fn meter_switches_outputs_with_the_rate() {
    clear_collected();
    let r = router("Idle -> m :: Meter(1000) -> slow :: Collect; m[1] -> fast :: Collect;");
    assert_eq!(r.read("m.meters"), "1000\n");
    // 100 packets per second
    for i in 0..50 {
        r.clock.set(at(i * 10 * MS));
        inject_n(&r, "m", 0, 0..1);
    }
    assert_eq!(collected("slow").len(), 50);
    assert!(collected("fast").is_empty());
    // then 10000 packets per second: after a few milliseconds the rate
    // crosses 1000 and stays above
    let base = 500 * MS;
    for i in 0..1000 {
        r.clock.set(at(base + i * 100_000));
        inject_n(&r, "m", 0, i as u16..i as u16 + 1);
    }
    let fast = collected_data("fast");
    assert!(fast.len() > 800, "{}", fast.len());
    assert_eq!(ids(&fast).last(), Some(&999));
    let rate: f64 = r.read("m.rate").parse().unwrap();
    assert!((9000.0..=10100.0).contains(&rate), "{}", rate);

    // three outputs; BandwidthMeter counts bytes
    let r = router(
        "Idle -> m :: BandwidthMeter(1Mbps, 2Mbps) -> Discard; m[1] -> Discard; m[2] -> Discard;",
    );
    assert_eq!(r.read("m.meters"), "125000\n250000\n");
    let e =
        config_error("Idle -> m :: Meter(200, 100) -> Discard; m[1] -> Discard; m[2] -> Discard;");
    assert!(e.contains("rate 2 must be > rate 1"), "{}", e);
    let e = config_error("Idle -> m :: Meter(100, 200) -> Discard; m[1] -> Discard;");
    assert!(e.contains("need 3 output ports"), "{}", e);
}

// ---- RandomSample --------------------------------------------------------

fn sample_run(config: &str, n: u16) -> (usize, usize, TestRouter) {
    clear_collected();
    let r = router(config);
    inject_n(&r, "s", 0, 0..n);
    r.run();
    (collected("yes").len(), collected("no").len(), r)
}

#[test]
fn randomsample_samples_with_probability() {
    let cfg = "Idle -> s :: RandomSample(0.25) -> yes :: Collect; s[1] -> no :: Collect;";
    let (yes, no, r) = sample_run(cfg, 8000);
    assert_eq!(yes + no, 8000);
    assert!((1800..=2200).contains(&yes), "{}", yes);
    assert_eq!(count(&r, "s.drops"), no);
    assert_eq!(r.read("s.sampling_prob"), "0.25");
    assert_eq!(r.read("s.drop_prob"), "0.75");
    assert_eq!(r.read("s.config"), "SAMPLE 0.25, ACTIVE true");
    // the same name draws the same choices
    let (yes2, _, _) = sample_run(cfg, 8000);
    assert_eq!(yes, yes2);
    // DROP
    let (yes, no, _) = sample_run(
        "Idle -> s :: RandomSample(DROP 0.9) -> yes :: Collect; s[1] -> no :: Collect;",
        5000,
    );
    assert_eq!(yes + no, 5000);
    assert!((400..=600).contains(&yes), "{}", yes);
    // handlers: ACTIVE false passes everything; drop_prob 1 drops all
    clear_collected();
    let r = router(cfg);
    r.write("s.active", "false").unwrap();
    inject_n(&r, "s", 0, 0..100);
    assert_eq!(collected("yes").len(), 100);
    r.write("s.active", "true").unwrap();
    r.write("s.drop_prob", "1").unwrap();
    assert_eq!(r.read("s.sampling_prob"), "0");
    inject_n(&r, "s", 0, 0..100);
    assert_eq!(collected("yes").len(), 100);
    assert_eq!(collected("no").len(), 100);
    assert!(r.write("s.sampling_prob", "2").is_err());
    assert_eq!(r.read("s.sampling_prob"), "0");
    let e = config_error("Idle -> RandomSample -> Discard;");
    assert!(
        e.contains("you must specify a sampling probability"),
        "{}",
        e
    );
    let e = config_error("Idle -> RandomSample(1.5) -> Discard;");
    assert!(e.contains("between 0 and 1"), "{}", e);
}

#[test]
fn randomsample_in_pull_mode() {
    clear_collected();
    let r = router(
        "Idle -> q :: Queue(2000) -> s :: RandomSample(P 0.5) -> Unqueue(BURST 0) -> yes :: Collect;
         s[1] -> no :: Collect;",
    );
    inject_n(&r, "q", 0, 0..1000);
    r.run();
    let (yes, no) = (collected("yes").len(), collected("no").len());
    assert_eq!(yes + no, 1000);
    assert!((430..=570).contains(&yes), "{}", yes);
    assert_eq!(r.read("q.length"), "0");
}

// ---- TimeFilter ----------------------------------------------------------

fn filter_run(config: &str, offsets_ms: &[i64]) -> (Vec<i64>, Vec<i64>, TestRouter) {
    clear_collected();
    let r = router(config);
    for (i, o) in offsets_ms.iter().enumerate() {
        inject_at(&r, "f", 0, &pkt(i as u16, 40), at(o * MS));
    }
    r.run();
    let rel = |name: &str| {
        collected(name)
            .iter()
            .map(|s| (s.anno.timestamp.nsec() - t0().nsec()) / MS)
            .collect::<Vec<_>>()
    };
    (rel("in"), rel("rest"), r)
}

#[test]
fn timefilter_absolute_and_relative_ranges() {
    let (inr, rest, r) = filter_run(
        "Idle -> f :: TimeFilter(START 1000000000.5, END 1000000001.5) -> in :: Collect;
         f[1] -> rest :: Collect;",
        &[200, 500, 1000, 1500, 2000],
    );
    assert_eq!(inr, vec![500, 1000]);
    assert_eq!(rest, vec![200, 1500, 2000]);
    assert_eq!(r.read("f.start"), "1000000000.500000");
    assert_eq!(r.read("f.end"), "1000000001.500000");
    assert_eq!(r.read("f.interval"), "1.000000");
    // relative to the first packet
    let (inr, rest, r) = filter_run(
        "Idle -> f :: TimeFilter(START_AFTER 1, INTERVAL 2) -> in :: Collect;
         f[1] -> rest :: Collect;",
        &[10_000, 10_500, 11_000, 12_900, 13_000, 14_000],
    );
    assert_eq!(inr, vec![11_000, 12_900]);
    assert_eq!(rest, vec![10_000, 10_500, 13_000, 14_000]);
    assert_eq!(r.read("f.interval"), "2.000000");
    // handler writes move the range
    r.write("f.end", "1000000020").unwrap();
    r.write("f.extend_interval", "1").unwrap();
    assert_eq!(r.read("f.end"), "1000000021.000000");
    r.write("f.interval", "0.5").unwrap();
    assert_eq!(r.read("f.end"), "1000000011.500000");
    assert!(r.write("f.end", "later").is_err());
    // without an output 1, filtered packets are dropped
    let (inr, _, _) = filter_run(
        "Idle -> f :: TimeFilter(END_AFTER 0.25) -> in :: Collect;",
        &[0, 100, 250, 300],
    );
    assert_eq!(inr, vec![0, 100]);
}

#[test]
fn timefilter_end_call_can_extend_and_stop() {
    // END_CALL runs a script with $t; the script extends the range by a
    // second each time, so a packet far beyond the end causes several calls
    let (inr, rest, r) = filter_run(
        "Idle -> f :: TimeFilter(END_AFTER 1, END_CALL s.run $t) -> in :: Collect;
         f[1] -> rest :: Collect;
         s :: Script(TYPE PASSIVE, print $1, write f.extend_interval 1);",
        &[0, 500, 1000, 2500, 5000],
    );
    assert_eq!(inr, vec![0, 500, 1000, 2500, 5000]);
    assert!(rest.is_empty());
    assert_eq!(
        r.stdout(),
        "1000000001.000000\n1000000002.500000\n1000000005.000000\n\
         1000000005.000000\n1000000005.000000\n"
    );
    assert_eq!(r.read("f.end"), "1000000006.000000");
    // STOP true stops the driver at the first packet past the end
    let (inr, rest, r) = filter_run(
        "Idle -> f :: TimeFilter(END_AFTER 1, STOP true) -> in :: Collect; f[1] -> rest :: Collect;",
        &[0, 999],
    );
    assert_eq!((inr.len(), rest.len()), (2, 0));
    assert!(!r.router.is_stopped());
    inject_at(&r, "f", 0, &pkt(9, 40), at(1000 * MS));
    assert_eq!(r.run(), RunState::Stopped);
    assert_eq!(collected("rest").len(), 1);
    let e = config_error("Idle -> TimeFilter(START 5, START_AFTER 1) -> Discard;");
    assert!(e.contains("mutually exclusive"), "{}", e);
    let e = config_error("Idle -> TimeFilter(STOP true, END_CALL x.y) -> Discard;");
    assert!(
        e.contains("END_CALL and STOP are mutually exclusive"),
        "{}",
        e
    );
}

// ---- MixedQueue ----------------------------------------------------------

#[test]
fn mixedqueue_fifo_and_lifo_inputs() {
    clear_collected();
    let r = router(
        "Idle -> q :: MixedQueue(3) -> u :: Unqueue(ACTIVE false) -> out :: Collect;
         Idle -> [1]q; q[1] -> drops :: Collect;",
    );
    inject_n(&r, "q", 0, 1..3);
    inject_n(&r, "q", 1, 3..4);
    assert_eq!(r.read("q.length"), "3");
    // full: input 0 drops the new packet, input 1 the one at the tail
    inject_n(&r, "q", 0, 4..5);
    inject_n(&r, "q", 1, 5..6);
    assert_eq!(ids(&collected_data("drops")), vec![4, 2]);
    assert_eq!(r.read("q.drops"), "2");
    assert_eq!(r.read("q.highwater_length"), "3");
    assert_eq!(r.stderr(), "q :: MixedQueue: overflow\n");
    r.write("u.active", "true").unwrap();
    r.run();
    assert_eq!(ids(&collected_data("out")), vec![5, 3, 1]);
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
    // default capacity
    let r = router("Idle -> q :: MixedQueue -> Discard; Idle -> [1]q;");
    assert_eq!(r.read("q.capacity"), "1000");
}

// ---- StrideSched, StrideSwitch, SimpleRoundRobinSched --------------------

fn stride_router(tickets: &str) -> TestRouter {
    clear_collected();
    router(&format!(
        "Idle -> q0 :: Queue; Idle -> q1 :: Queue; Idle -> q2 :: Queue;
         s :: StrideSched({tickets});
         q0 -> [0]s; q1 -> [1]s; q2 -> [2]s;
         s -> u :: Unqueue(ACTIVE false) -> out :: Collect;"
    ))
}

fn source_of(seen: &[Vec<u8>]) -> Vec<u16> {
    ids(seen).iter().map(|i| i / 1000).collect()
}

#[test]
fn stridesched_shares_pulls_by_tickets() {
    let r = stride_router("4, 2, 1");
    for q in 0..3u16 {
        inject_n(&r, &format!("q{q}"), 0, q * 1000..q * 1000 + 200);
    }
    r.write("u.limit", "70").unwrap();
    r.write("u.active", "true").unwrap();
    r.run();
    let src = source_of(&collected_data("out"));
    assert_eq!(src.len(), 70);
    // Click's StrideSched-01 order
    assert_eq!(&src[..7], &[0, 0, 1, 0, 0, 1, 2]);
    let n = |k| src.iter().filter(|&&s| s == k).count();
    assert_eq!((n(0), n(1), n(2)), (40, 20, 10));
    assert_eq!(r.read("s.config"), "4, 2, 1");
    assert_eq!(r.read("s.tickets1"), "2");

    // an empty input is skipped; 0 tickets take an input out
    let r = stride_router("1, 1, 1");
    inject_n(&r, "q0", 0, 0..50);
    inject_n(&r, "q2", 0, 2000..2050);
    r.write("s.tickets0", "0").unwrap();
    assert_eq!(r.read("s.config"), "0, 1, 1");
    r.write("u.limit", "20").unwrap();
    r.write("u.active", "true").unwrap();
    r.run();
    assert_eq!(source_of(&collected_data("out")), vec![2; 20]);
    r.write("s.tickets0", "1").unwrap();
    r.write("u.reset", "").unwrap();
    r.run();
    let src = source_of(&collected_data("out")[20..]);
    assert_eq!(src.len(), 20);
    assert_eq!(src.iter().filter(|&&s| s == 0).count(), 10);
    assert!(r.write("s.tickets0", "-1").is_err());
    assert!(r.write("s.tickets0", "many").is_err());
    assert!(r.write("s.tickets3", "1").is_err());

    let e = config_error("Idle -> q :: Queue -> [0]s :: StrideSched(1, 2) -> Discard; Idle -> Queue -> [1]s; Idle -> Queue -> [2]s;");
    assert!(e.contains("need 3 arguments, one per input port"), "{}", e);
    let e = config_error(
        "Idle -> q :: Queue -> [0]s :: StrideSched(1, x) -> Discard; Idle -> Queue -> [1]s;",
    );
    assert!(
        e.contains("argument 1 should be number of tickets (integer)"),
        "{}",
        e
    );
}

#[test]
fn strideswitch_shares_packets_by_tickets() {
    clear_collected();
    let r = router(
        "Idle -> s :: StrideSwitch(1, 2, 3);
         s[0] -> o0 :: Collect; s[1] -> o1 :: Collect; s[2] -> o2 :: Collect;",
    );
    inject_n(&r, "s", 0, 0..60);
    let n = |o: &str| collected(o).len();
    assert_eq!(n("o0") + n("o1") + n("o2"), 60);
    assert!((9..=11).contains(&n("o0")), "{}", n("o0"));
    assert!((19..=21).contains(&n("o1")), "{}", n("o1"));
    assert!((29..=31).contains(&n("o2")), "{}", n("o2"));
    r.write("s.tickets2", "0").unwrap();
    inject_n(&r, "s", 0, 0..30);
    assert_eq!(n("o2"), 30);
    let e = config_error("Idle -> s :: StrideSwitch(1) -> Discard; s[1] -> Discard;");
    assert!(e.contains("one per output port"), "{}", e);
}

#[test]
fn simpleroundrobinsched_takes_turns() {
    clear_collected();
    let r = router(
        "Idle -> q0 :: Queue; Idle -> q1 :: Queue;
         q0 -> [0]s :: SimpleRoundRobinSched; q1 -> [1]s;
         s -> u :: Unqueue(ACTIVE false) -> out :: Collect;",
    );
    inject_n(&r, "q0", 0, 0..3);
    inject_n(&r, "q1", 0, 1000..1005);
    r.write("u.active", "true").unwrap();
    r.run();
    assert_eq!(
        source_of(&collected_data("out")),
        vec![0, 1, 0, 1, 0, 1, 1, 1]
    );
    assert!(
        config_error("Idle -> q :: Queue -> SimpleRoundRobinSched(3) -> Discard;")
            .contains("SimpleRoundRobinSched")
    );
}

// ---- Hub, AlignmentInfo, Clipboard ----------------------------------------

#[test]
fn hub_repeats_to_every_other_port() {
    clear_collected();
    let r = router(
        "Idle -> [0]h :: Hub; Idle -> [1]h; Idle -> [2]h;
         h[0] -> o0 :: Collect; h[1] -> o1 :: Collect; h[2] -> o2 :: Collect;",
    );
    let frames = pcap_packets("mixed.pcap");
    r.inject("h", 1, &frames[..2]);
    r.inject("h", 2, &frames[2..3]);
    assert_eq!(collected_data("o0"), frames[..3].to_vec());
    assert_eq!(collected_data("o1"), frames[2..3].to_vec());
    assert_eq!(collected_data("o2"), frames[..2].to_vec());
    // one port: nowhere to go
    let r = router("Idle -> h :: Hub -> o :: Collect;");
    r.inject("h", 0, &frames[..1]);
}

#[test]
fn alignmentinfo_is_accepted() {
    let r = router(
        "AlignmentInfo(src 8 2, dst 4 0 4 2) src :: Idle -> dst :: Discard;
         AlignmentInfo(dst 8 2);",
    );
    assert_eq!(r.read("src.class"), "Idle");
    let e = config_error("AlignmentInfo(src 8) src :: Idle -> Discard;");
    assert!(
        e.contains("expected 'ELEMENT [MODULUS OFFSET]...'"),
        "{}",
        e
    );
}

#[test]
fn clipboard_copies_and_pastes_ranges() {
    clear_collected();
    let r = router(
        "Idle -> [0]c :: Clipboard(0/2, 6/1); c[0] -> o0 :: Collect;
         Idle -> [1]c; c[1] -> o1 :: Collect;",
    );
    // nothing copied yet: zeros
    r.inject("c", 1, &[vec![9; 8]]);
    r.inject("c", 0, &[(1..=8).collect()]);
    r.inject("c", 1, &[vec![9; 8], vec![9; 5]]);
    // a short packet copies what it has
    r.inject("c", 0, &[vec![5, 6]]);
    r.inject("c", 1, &[vec![0; 7]]);
    assert_eq!(
        collected_data("o0"),
        vec![(1..=8).collect::<Vec<u8>>(), vec![5, 6]]
    );
    assert_eq!(
        collected_data("o1"),
        vec![
            vec![0, 0, 9, 9, 9, 9, 0, 9],
            vec![1, 2, 9, 9, 9, 9, 7, 9],
            vec![9; 5],
            vec![5, 6, 0, 0, 0, 0, 7],
        ]
    );
    let e = config_error("Idle -> [0]c :: Clipboard(0-2) -> Discard; Idle -> [1]c[1] -> Discard;");
    assert!(
        e.contains("range 0: expected '/' between offset and length"),
        "{}",
        e
    );
    let e =
        config_error("Idle -> [0]c :: Clipboard(1/1, a/2) -> Discard; Idle -> [1]c[1] -> Discard;");
    assert!(e.contains("range 1: invalid offset or length"), "{}", e);
}

// ---- robustness ------------------------------------------------------------

#[test]
fn truncated_and_empty_packets_never_panic() {
    clear_collected();
    let r = router(
        "Idle -> src :: Null -> s :: StripEtherVLANHeader
           -> EtherVLANEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2, ANNO)
           -> Resize(-20, 3) -> Pad -> StoreData(30, \\<FF>, GROW true)
           -> SetPacketType(BROADCAST) -> TimeFilter(START_AFTER 0)
           -> rs :: RandomSample(0.9) -> m :: Meter(100) -> out :: Collect;
         m[1] -> out; s[1] -> rej :: Collect;",
    );
    let mut n = 0;
    for f in pcap_packets("mixed.pcap") {
        for len in 0..=f.len().min(40) {
            r.inject("src", 0, &[f[..len].to_vec()]);
            n += 1;
        }
    }
    let out = collected("out");
    assert_eq!(
        out.len() + count(&r, "rs.drops"),
        n - collected("rej").len()
    );
    assert_eq!(count(&r, "s.drops"), collected("rej").len());
    assert!(out.len() > n / 2);
    for s in &out {
        assert!(s.data.len() >= 31);
        assert_eq!(s.data[30], 0xff);
        assert_eq!(s.anno.packet_type, PacketType::Broadcast);
    }
}
