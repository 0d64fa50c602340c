//! AdjustTimestamp and SetTimestampDelta: exact timestamps out.

mod common;
use click::prelude::{Clock, Timestamp};
use common::*;

fn ts(c: &str) -> Vec<Timestamp> {
    collected(c).iter().map(|s| s.anno.timestamp).collect()
}

#[test]
fn adjusttimestamp_adds_signed_times() {
    clear_collected();
    let r = router(
        "Idle -> s1 :: SetTimestamp(0.1) -> a :: AdjustTimestamp(-1) -> c1 :: Collect;
         Idle -> b :: AdjustTimestamp(+1.5) -> c2 :: Collect;
         Idle -> all :: AdjustTimestamp(+0.1, ALL true) -> c3 :: Collect;
         Idle -> s4 :: SetTimestamp(2, FIRST true) -> SetTimestamp(7)
              -> AdjustTimestamp(20ms, FIRST true) -> c4 :: Collect;",
    );
    r.inject("a", 0, &[pkt(1, 20)]);
    r.inject("s1", 0, &[pkt(1, 20)]);
    r.inject("b", 0, &[pkt(2, 20)]);
    r.inject("all", 0, &[pkt(3, 20)]);
    r.inject("s4", 0, &[pkt(4, 20)]);
    // a zero timestamp stays zero unless ALL
    assert_eq!(
        ts("c1"),
        [Timestamp::ZERO, Timestamp::from_nsec(-900_000_000)]
    );
    assert_eq!(ts("c2"), [Timestamp::ZERO]);
    assert_eq!(ts("c3"), [Timestamp::from_nsec(100_000_000)]);
    let c4 = collected("c4");
    assert_eq!(c4[0].anno.timestamp, Timestamp::from_sec_nsec(7, 0));
    assert_eq!(
        c4[0].anno.first_timestamp(),
        Timestamp::from_sec_nsec(2, 20_000_000)
    );
    assert_eq!(r.read("a.time"), "-1.000000");
    r.write("a.time", "0.25").unwrap();
    assert_eq!(r.read("a.time"), "0.250000");
    assert!(r.write("a.time", "soon").is_err());
}

#[test]
fn settimestampdelta_range_first_and_reset() {
    clear_collected();
    let r = router(
        "Idle -> s :: SetTimestamp -> d :: SetTimestampDelta -> c :: Collect;
         Idle -> s2 :: SetTimestamp(1.5, FIRST true) -> SetTimestamp(4)
              -> SetTimestampDelta(TYPE FIRST) -> f :: Collect;",
    );
    let t0 = r.clock.now();
    r.inject("s", 0, &[pkt(1, 20)]);
    r.clock.set(t0.add_nsec(1_600_000));
    r.inject("s", 0, &[pkt(2, 20)]);
    r.clock.set(t0.add_nsec(129_600_000));
    r.inject("s", 0, &[pkt(3, 20)]);
    assert_eq!(
        ts("c"),
        [
            Timestamp::ZERO,
            Timestamp::from_nsec(1_600_000),
            Timestamp::from_nsec(129_600_000)
        ]
    );
    assert_eq!(r.read("d.first"), format!("{}\n", t0));
    r.write("d.reset", "").unwrap();
    assert_eq!(r.read("d.first"), "0.000000\n");
    r.inject("s2", 0, &[pkt(4, 20)]);
    assert_eq!(ts("f"), [Timestamp::from_nsec(2_500_000_000)]);
    assert!(config_error("Idle -> SetTimestampDelta(TYPE LATER) -> Idle;").contains("bad TYPE"));
}
