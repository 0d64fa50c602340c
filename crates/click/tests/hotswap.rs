//! Click's hot swap (`Router::take_state_from`): which state each element
//! carries into the new router, and when it refuses.

mod frames;
#[path = "ip_harness.rs"]
mod ip_harness;

use frames::*;
use ip_harness::*;

const ME: Mac = [0x00, 0x00, 0xc0, 0xae, 0x67, 0xef];
const B: Mac = [0x52, 0x54, 0, 0, 0, 2];

fn querier(addr: &str) -> TestRouter {
    router(&format!(
        "Idle -> [0]q :: ARPQuerier({addr}, 00:00:C0:AE:67:EF); Idle -> resp :: Null -> [1]q;
         q[0] -> out :: Collect; q[1] -> qs :: Collect;"
    ))
}

#[test]
fn arpquerier_keeps_its_table_only_with_the_same_addresses() {
    let old = querier("10.0.0.1/24");
    old.inject("resp", 0, &[arp_reply(B, [10, 0, 0, 2], ME, [10, 0, 0, 1])]);
    let entry = old.read("q.table");
    assert!(entry.starts_with("10.0.0.2 1 52-54-00-00-00-02"), "{entry}");

    let same = querier("10.0.0.1/24");
    same.router.take_state_from(&old.router);
    assert_eq!(same.read("q.table"), entry);

    let other = querier("10.0.0.9/24");
    other.router.take_state_from(&old.router);
    assert_eq!(other.read("q.table"), "");
}

#[test]
fn queue_takes_the_old_packets_in_order_up_to_its_capacity() {
    clear_collected();
    let old = router("Idle -> q :: Queue(10) -> Discard(ACTIVE false);");
    old.inject("q", 0, &(0..5).map(|i| pkt(i, 60)).collect::<Vec<_>>());
    let new = router("Idle -> q :: Queue(3) -> u :: Unqueue(ACTIVE false) -> out :: Collect;");
    new.router.take_state_from(&old.router);
    assert_eq!(new.read("q.length"), "3");
    assert_eq!(new.read("q.highwater_length"), "3");
    assert!(
        new.stderr()
            .contains("warning: some packets lost (old length 5, new capacity 3)"),
        "{}",
        new.stderr()
    );
    new.write("u.active", "true").unwrap();
    new.run();
    assert_eq!(ids(&collected_data("out")), vec![0, 1, 2]);

    // A queue that already holds packets keeps its own.
    let old = router("Idle -> q :: Queue(10) -> Discard(ACTIVE false);");
    old.inject("q", 0, &[pkt(7, 60)]);
    let new = router("Idle -> q :: Queue(10) -> Discard(ACTIVE false);");
    new.inject("q", 0, &[pkt(8, 60), pkt(9, 60)]);
    new.router.take_state_from(&old.router);
    assert_eq!(new.read("q.length"), "2");
}
