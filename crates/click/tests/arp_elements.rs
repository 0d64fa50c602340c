//! ARPResponder, ARPQuerier, CheckARPHeader and ARPPrint on real frames.

mod frames;
#[path = "ip_harness.rs"]
mod ip_harness;

use click::prelude::{Clock, Timestamp};
use frames::*;
use ip_harness::*;

const ME: Mac = [0x00, 0x00, 0xc0, 0xae, 0x67, 0xef];
const ME2: Mac = [0x00, 0x00, 0xc0, 0xae, 0x67, 0xf0];
const A: Mac = [0x52, 0x54, 0, 0, 0, 1];
const B: Mac = [0x52, 0x54, 0, 0, 0, 2];

fn udp_to(dst: Ip4, n: u8) -> Vec<u8> {
    Ip::new(
        [10, 0, 0, 1],
        dst,
        17,
        &udp(1000 + n as u16, 2000, &[n; 10]),
    )
    .id(n as u16)
    .bytes()
}

// ---- ARPResponder ---------------------------------------------------------

#[test]
fn arpresponder_answers_and_forwards() {
    clear_collected();
    let r = router(
        "Idle -> ar :: ARPResponder(10.0.0.1 00:00:C0:AE:67:EF, 10.0.1.0/24 10.0.2.0/255.255.255.0 00:00:C0:AE:67:F0);
         ar[0] -> rep :: Collect; ar[1] -> other :: Collect;",
    );
    let req = arp_request(A, [10, 0, 0, 9], [10, 0, 0, 1]);
    r.inject("ar", 0, &[req]);
    let got = collected_data("rep");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0], arp_reply(ME, [10, 0, 0, 1], A, [10, 0, 0, 9]));
    assert_eq!(got[0].len(), 42);
    assert_eq!(
        hex(&got[0]),
        "525400000001".to_string()
            + "0000c0ae67ef0806"
            + "0001080006040002"
            + "0000c0ae67ef0a000001"
            + "5254000000010a000009"
    );

    // Proxy ARP for both networks of the second argument.
    clear_collected();
    r.inject(
        "ar",
        0,
        &[
            arp_request(B, [10, 0, 1, 200], [10, 0, 1, 77]),
            arp_request(B, [10, 0, 1, 200], [10, 0, 2, 3]),
        ],
    );
    assert_eq!(
        collected_data("rep"),
        vec![
            arp_reply(ME2, [10, 0, 1, 77], B, [10, 0, 1, 200]),
            arp_reply(ME2, [10, 0, 2, 3], B, [10, 0, 1, 200])
        ]
    );

    // Not ours, a reply, a non-ARP frame, a truncated request, an ARP for
    // another protocol: all to output 1, unchanged.
    clear_collected();
    let mut odd_proto = arp_request(A, [10, 0, 0, 9], [10, 0, 0, 1]);
    odd_proto[16] = 0x86;
    odd_proto[17] = 0xdd;
    let others = vec![
        arp_request(A, [10, 0, 0, 9], [10, 0, 3, 1]),
        arp_reply(B, [10, 0, 0, 2], A, [10, 0, 0, 1]),
        eth(ME, A, 0x0800, &udp_to([10, 0, 0, 1], 1)),
        arp_request(A, [10, 0, 0, 9], [10, 0, 0, 1])[..41].to_vec(),
        vec![1, 2, 3],
        odd_proto,
    ];
    r.inject("ar", 0, &others);
    assert!(collected_data("rep").is_empty());
    assert_eq!(collected_data("other"), others);
}

#[test]
fn arpresponder_real_capture_and_specificity() {
    clear_collected();
    let pkts = capture("mixed.pcap");
    // Record 19 asks for 10.0.0.2 (from 10.0.0.1, 52:54:00:00:00:01); record
    // 50 is a gratuitous request from 10.0.0.2 itself.
    let r = router(
        "Idle -> ar :: ARPResponder(10.0.0.0/8 02:00:00:00:00:08, 10.0.0.2 52:54:00:00:00:02, 10.0.0.0/24 02:00:00:00:00:24);
         ar[0] -> rep :: Collect; ar[1] -> other :: Collect;",
    );
    r.inject("ar", 0, &pkts);
    let got = collected_data("rep");
    assert_eq!(
        got,
        vec![
            arp_reply(B, [10, 0, 0, 2], A, [10, 0, 0, 1]),
            arp_reply(B, [10, 0, 0, 2], B, [10, 0, 0, 2]),
        ]
    );
    assert_eq!(collected_data("other").len(), pkts.len() - 2);
    // Most specific first in the table; lookups follow it.
    assert_eq!(
        r.read("ar.table"),
        "10.0.0.2/32 52-54-00-00-00-02\n10.0.0.0/24 02-00-00-00-00-24\n10.0.0.0/8 02-00-00-00-00-08\n"
    );
    let look = |a: &str| r.router.read_handler_param("ar.lookup", a).unwrap();
    assert_eq!(look("10.0.0.2"), "52-54-00-00-00-02");
    assert_eq!(look("10.0.0.3"), "02-00-00-00-00-24");
    assert_eq!(look("10.9.0.3"), "02-00-00-00-00-08");
    assert_eq!(look("11.0.0.1"), "");
    assert!(r.router.read_handler_param("ar.lookup", "bogus").is_err());
}

#[test]
fn arpresponder_handlers_and_errors() {
    clear_collected();
    let r = router("Idle -> ar :: ARPResponder(10.0.0.1 00:00:C0:AE:67:EF); ar -> rep :: Collect;");
    r.write("ar.add", "192.168.0.0/16 10.5.5.5 2:2:2:2:2:2")
        .unwrap();
    assert_eq!(
        r.read("ar.table"),
        "10.0.0.1/32 00-00-C0-AE-67-EF\n10.5.5.5/32 02-02-02-02-02-02\n192.168.0.0/16 02-02-02-02-02-02\n"
    );
    r.inject(
        "ar",
        0,
        &[arp_request(A, [192, 168, 1, 1], [192, 168, 4, 4])],
    );
    assert_eq!(
        collected_data("rep"),
        vec![arp_reply([2; 6], [192, 168, 4, 4], A, [192, 168, 1, 1])]
    );
    // A later identical prefix replaces the earlier one.
    r.write("ar.add", "10.0.0.1 00:00:00:00:00:01").unwrap();
    assert_eq!(
        r.router
            .read_handler_param("ar.lookup", "10.0.0.1")
            .unwrap(),
        "00-00-00-00-00-01"
    );
    r.write("ar.remove", "192.168.9.9/16").unwrap();
    assert_eq!(
        r.write("ar.remove", "192.168.0.0/16")
            .unwrap_err()
            .to_string(),
        "192.168.0.0/16 not found"
    );
    assert!(r.write("ar.add", "10.1.1.1").is_err());
    assert!(r.write("ar.remove", "xyz").is_err());
    // The replacement takes the later entry's place.
    assert_eq!(
        r.read("ar.table"),
        "10.5.5.5/32 02-02-02-02-02-02\n10.0.0.1/32 00-00-00-00-00-01\n"
    );

    let err = |c: &str| try_router(c).err().expect("config should fail").join("\n");
    let e = err("Idle -> ARPResponder(10.0.0.1) -> Discard;");
    assert!(e.contains("argument 0: missing ETH"), "{}", e);
    let e = err(
        "Idle -> ARPResponder(10.0.0.1 1:1:1:1:1:1, 1:1:1:1:1:1 10.0.0.2 2:2:2:2:2:2) -> Discard;",
    );
    assert!(e.contains("argument 1: more than one ETH"), "{}", e);
    let e = err("Idle -> ARPResponder(00:11:22:33:44:55) -> Discard;");
    assert!(e.contains("argument 0: missing IP/MASK"), "{}", e);
    let e = err("Idle -> ARPResponder(10.0.0.1 foo) -> Discard;");
    assert!(e.contains("argument 0: expected IP/MASK ETH"), "{}", e);
}

#[test]
fn arpresponder_copies_vlan_annotation() {
    clear_collected();
    let r = router(
        "Idle -> vd :: VLANDecap -> ar :: ARPResponder(10.0.0.1 00:00:C0:AE:67:EF) -> VLANEncap(ANNO) -> rep :: Collect;",
    );
    // The request arrives tagged VLAN 7 priority 5; the reply leaves with
    // the same tag.
    let req = arp_request(A, [10, 0, 0, 9], [10, 0, 0, 1]);
    let mut tagged = req[..12].to_vec();
    tagged.extend_from_slice(&[0x81, 0x00, 0xa0, 0x07]);
    tagged.extend_from_slice(&req[12..]);
    r.router
        .inject("vd", 0, r.router.pool().make(64, &tagged, 0))
        .unwrap();
    let got = collected("rep");
    assert_eq!(got.len(), 1);
    let plain = arp_reply(ME, [10, 0, 0, 1], A, [10, 0, 0, 9]);
    let mut want = plain[..12].to_vec();
    want.extend_from_slice(&[0x81, 0x00, 0xa0, 0x07]);
    want.extend_from_slice(&plain[12..]);
    assert_eq!(got[0].data, want);
    assert_eq!(got[0].anno.vlan_tci(), 0xa007);
}

// ---- ARPQuerier -----------------------------------------------------------

/// IP packets enter at `ip` (raw IPv4; CheckIPHeader sets the destination
/// annotation), ARP replies at `resp`.
const QCONF: &str = "Idle -> ip :: CheckIPHeader -> [0]q; Idle -> resp :: Null -> [1]q;
    q[0] -> out :: Collect; q[1] -> qs :: Collect;";

fn query(want: Ip4) -> Vec<u8> {
    eth(BCAST, ME, 0x0806, &arp(1, ME, [10, 0, 0, 1], [0; 6], want))
}

fn framed(dst: Mac, ip: &[u8]) -> Vec<u8> {
    eth(dst, ME, 0x0800, ip)
}

#[test]
fn arpquerier_queries_holds_and_releases() {
    clear_collected();
    let r = router(&format!(
        "q :: ARPQuerier(10.0.0.1/24, 00:00:C0:AE:67:EF); {}",
        QCONF
    ));
    let p1 = udp_to([10, 0, 0, 2], 1);
    let p2 = udp_to([10, 0, 0, 2], 2);
    let p3 = udp_to([10, 0, 0, 2], 3);
    r.inject("ip", 0, &[p1.clone(), p2.clone()]);
    assert!(collected_data("out").is_empty());
    // One query for both packets (at most ten a second).
    assert_eq!(collected_data("qs"), vec![query([10, 0, 0, 2])]);
    assert_eq!(r.read("q.queries"), "1");
    assert_eq!(r.read("q.length"), "2");
    assert_eq!(r.read("q.count"), "1");
    assert_eq!(r.read("q.table"), "10.0.0.2 0 FF-FF-FF-FF-FF-FF 0.000000\n");

    // 99 ms later: still no new query; at 100 ms, one more.
    let t0 = r.clock.now();
    r.clock.set(t0.add_nsec(99_000_000));
    r.inject("ip", 0, std::slice::from_ref(&p3));
    assert_eq!(r.read("q.queries"), "1");
    r.clock.set(t0.add_nsec(100_000_000));
    r.inject("ip", 0, &[udp_to([10, 0, 0, 2], 4)]);
    assert_eq!(r.read("q.queries"), "2");
    assert_eq!(collected_data("qs").len(), 2);
    assert_eq!(r.read("q.length"), "4");

    // The reply releases the packets in order, framed for B.
    r.inject("resp", 0, &[arp_reply(B, [10, 0, 0, 2], ME, [10, 0, 0, 1])]);
    assert_eq!(
        collected_data("out"),
        vec![
            framed(B, &p1),
            framed(B, &p2),
            framed(B, &p3),
            framed(B, &udp_to([10, 0, 0, 2], 4))
        ]
    );
    assert_eq!(r.read("q.responses"), "1");
    assert_eq!(r.read("q.length"), "0");
    assert_eq!(r.read("q.table"), "10.0.0.2 1 52-54-00-00-00-02 0.000000\n");
    r.clock.set(t0.add_nsec(1_600_000_000));
    assert_eq!(r.read("q.table"), "10.0.0.2 1 52-54-00-00-00-02 1.500000\n");

    // Now packets go straight out, with no query.
    clear_collected();
    r.inject("ip", 0, std::slice::from_ref(&p1));
    assert_eq!(collected_data("out"), vec![framed(B, &p1)]);
    assert!(collected_data("qs").is_empty());
    // The queued packets kept their annotations: the destination annotation
    // is still the next hop.
    assert_eq!(collected("out")[0].anno.dst_ip().octets(), [10, 0, 0, 2]);
    assert_eq!(r.read("q.drops"), "0");
    assert_eq!(r.read("q.stats"), "0 packets killed\n2 ARP queries sent\n");
}

#[test]
fn arpquerier_special_addresses() {
    clear_collected();
    let r = router(&format!(
        "q :: ARPQuerier(10.0.0.1/24, 00:00:C0:AE:67:EF); {}",
        QCONF
    ));
    let bc = udp_to([10, 0, 0, 255], 1);
    let lbc = udp_to([255, 255, 255, 255], 2);
    let mc = udp_to([224, 1, 2, 3], 3);
    let mc2 = udp_to([239, 129, 2, 3], 4);
    let zero = udp_to([0, 0, 0, 0], 5);
    r.inject(
        "ip",
        0,
        &[
            bc.clone(),
            lbc.clone(),
            mc.clone(),
            mc2.clone(),
            zero.clone(),
            zero,
        ],
    );
    assert_eq!(
        collected_data("out"),
        vec![
            framed(BCAST, &bc),
            framed(BCAST, &lbc),
            framed([1, 0, 0x5e, 1, 2, 3], &mc),
            framed([1, 0, 0x5e, 1, 2, 3], &mc2),
        ]
    );
    assert!(collected_data("qs").is_empty());
    assert_eq!(r.read("q.drops"), "2");
    assert_eq!(r.read("q.count"), "0");
    // One warning only.
    assert_eq!(
        r.stderr(),
        "q :: ARPQuerier: would query for 0.0.0.0; missing dest IP addr annotation?\n"
    );
    assert_eq!(r.read("q.broadcast"), "10.0.0.255");
    assert_eq!(r.read("q.ipaddr"), "10.0.0.1");

    // A bare address: the local broadcast is 255.255.255.255; BROADCAST
    // overrides.
    let r = router(&format!(
        "q :: ARPQuerier(10.0.0.1, 00:00:C0:AE:67:EF, BROADCAST 10.255.255.255); {}",
        QCONF
    ));
    assert_eq!(r.read("q.broadcast"), "10.255.255.255");
    let r = router(&format!(
        "q :: ARPQuerier(10.0.0.1, 00:00:C0:AE:67:EF); {}",
        QCONF
    ));
    assert_eq!(r.read("q.broadcast"), "255.255.255.255");
    clear_collected();
    r.inject("ip", 0, &[bc]);
    assert!(
        collected_data("out").is_empty(),
        "10.0.0.255 is not special here"
    );
    assert_eq!(collected_data("qs"), vec![query([10, 0, 0, 255])]);
}

#[test]
fn arpquerier_single_output_and_polling() {
    clear_collected();
    // One output: queries and packets share it. POLL_TIMEOUT 10 s.
    let r = router(
        "Idle -> ip :: CheckIPHeader -> [0]q :: ARPQuerier(10.0.0.1/24, 00:00:C0:AE:67:EF, POLL_TIMEOUT 10);
         Idle -> resp :: Null -> [1]q; q -> out :: Collect;",
    );
    let p = udp_to([10, 0, 0, 2], 1);
    r.inject("ip", 0, std::slice::from_ref(&p));
    r.inject("resp", 0, &[arp_reply(B, [10, 0, 0, 2], ME, [10, 0, 0, 1])]);
    assert_eq!(
        collected_data("out"),
        vec![query([10, 0, 0, 2]), framed(B, &p)]
    );
    clear_collected();
    let t0 = r.clock.now();
    r.clock.set(t0.add_nsec(9_999_000_000));
    r.inject("ip", 0, std::slice::from_ref(&p));
    assert_eq!(collected_data("out"), vec![framed(B, &p)]);
    // Past the poll timeout: a unicast renewal query goes out first, then
    // the packet; the next packet (within 100 ms) sends no query.
    clear_collected();
    r.clock.set(t0.add_nsec(10_000_000_000));
    r.inject("ip", 0, &[p.clone(), p.clone()]);
    let unicast_poll = eth(
        B,
        ME,
        0x0806,
        &arp(1, ME, [10, 0, 0, 1], [0; 6], [10, 0, 0, 2]),
    );
    assert_eq!(
        collected_data("out"),
        vec![unicast_poll, framed(B, &p), framed(B, &p)]
    );
    assert_eq!(r.read("q.queries"), "2");

    // BROADCAST_POLL: renewal queries are broadcast.
    clear_collected();
    let r = router(
        "Idle -> ip :: CheckIPHeader -> [0]q :: ARPQuerier(10.0.0.1/24, 00:00:C0:AE:67:EF, POLL_TIMEOUT 1, BROADCAST_POLL true);
         Idle -> resp :: Null -> [1]q; q -> out :: Collect;",
    );
    r.write("q.insert", "10.0.0.2 52:54:00:00:00:02").unwrap();
    r.clock.set(r.clock.now().add_nsec(2_000_000_000));
    r.inject("ip", 0, std::slice::from_ref(&p));
    assert_eq!(
        collected_data("out"),
        vec![query([10, 0, 0, 2]), framed(B, &p)]
    );
}

#[test]
fn arpquerier_expiry_and_capacity() {
    clear_collected();
    let r = router(&format!(
        "q :: ARPQuerier(10.0.0.1/24, 00:00:C0:AE:67:EF, TIMEOUT 30); {}",
        QCONF
    ));
    r.inject(
        "ip",
        0,
        &[udp_to([10, 0, 0, 3], 1), udp_to([10, 0, 0, 3], 2)],
    );
    r.inject("resp", 0, &[arp_reply(B, [10, 0, 0, 2], ME, [10, 0, 0, 1])]);
    // An unsolicited reply is recorded too.
    assert_eq!(r.read("q.count"), "2");
    let t0 = r.clock.now();
    // Running to idle moves the virtual clock to the expiry timer, which
    // runs as Click's: 30 s after the start (the entries, made then, are
    // not yet past TIMEOUT), then every 31 s: at 61 s both entries are
    // removed with the waiting packets, and nothing stays scheduled.
    let st = r.run();
    assert_eq!(st, click::prelude::RunState::Idle(None));
    assert_eq!(r.clock.now(), t0.add_nsec(61_000_000_000));
    assert_eq!(r.read("q.count"), "0");
    assert_eq!(r.read("q.length"), "0");
    // the table's drops are in `stats`; `drops` counts the querier's own
    assert_eq!(r.read("q.drops"), "0");
    assert_eq!(r.read("q.stats"), "2 packets killed\n1 ARP queries sent\n");
    assert!(collected_data("out").is_empty());

    // Known entries stop being used once expired even before the timer.
    let r = router(&format!(
        "q :: ARPQuerier(10.0.0.1/24, 00:00:C0:AE:67:EF, TIMEOUT 30); {}",
        QCONF
    ));
    clear_collected();
    r.write("q.insert", "10.0.0.2 52:54:00:00:00:02").unwrap();
    r.clock.set(r.clock.now().add_nsec(30_500_000_000));
    assert_eq!(
        r.read("q.table"),
        "10.0.0.2 0 52-54-00-00-00-02 30.500000\n"
    );
    r.inject("ip", 0, &[udp_to([10, 0, 0, 2], 1)]);
    assert!(collected_data("out").is_empty());
    assert_eq!(collected_data("qs").len(), 1);

    // CAPACITY 4: the fifth waiting packet makes it slim to 4 - 4/2 = 2
    // packets counting the newcomer (as Click counts): the three oldest are
    // dropped, two are left.
    let r = router(&format!(
        "q :: ARPQuerier(10.0.0.1/24, 00:00:C0:AE:67:EF, CAPACITY 4); {}",
        QCONF
    ));
    clear_collected();
    let pk: Vec<Vec<u8>> = (0..5).map(|i| udp_to([10, 0, 0, 10 + i], i)).collect();
    r.inject("ip", 0, &pk);
    assert_eq!(r.read("q.length"), "2");
    assert!(r.read("q.stats").starts_with("3 packets killed\n"));
    assert_eq!(r.read("q.count"), "5");
    for i in 0..5u8 {
        let mut b = B;
        b[5] = 10 + i;
        r.inject(
            "resp",
            0,
            &[arp_reply(b, [10, 0, 0, 10 + i], ME, [10, 0, 0, 1])],
        );
    }
    let mut b = B;
    let want: Vec<Vec<u8>> = [3u8, 4]
        .iter()
        .map(|&i| {
            b[5] = 10 + i;
            framed(b, &pk[i as usize])
        })
        .collect();
    assert_eq!(collected_data("out"), want);

    // ENTRY_PACKET_CAPACITY 2: a third packet for the same address is
    // dropped. ENTRY_CAPACITY 2: a third address pushes out the oldest
    // entry and its packets.
    let r = router(&format!(
        "q :: ARPQuerier(10.0.0.1/24, 00:00:C0:AE:67:EF, ENTRY_PACKET_CAPACITY 2, ENTRY_CAPACITY 2); {}",
        QCONF
    ));
    r.inject(
        "ip",
        0,
        &[
            udp_to([10, 0, 0, 5], 1),
            udp_to([10, 0, 0, 5], 2),
            udp_to([10, 0, 0, 5], 3),
        ],
    );
    assert_eq!(r.read("q.length"), "2");
    assert!(r.read("q.stats").starts_with("1 packets killed\n"));
    r.inject(
        "ip",
        0,
        &[udp_to([10, 0, 0, 6], 4), udp_to([10, 0, 0, 7], 5)],
    );
    assert_eq!(r.read("q.count"), "2");
    assert_eq!(r.read("q.length"), "2");
    assert!(r.read("q.stats").starts_with("3 packets killed\n"));
    assert!(!r.read("q.table").contains("10.0.0.5 "));

    let e = try_router("Idle -> [0]q :: ARPQuerier(10.0.0.1, 1:2:3:4:5:6, CAPACITY_SLIM_FACTOR 0) -> Discard; Idle -> [1]q;")
        .err()
        .unwrap()
        .join("\n");
    assert!(e.contains("CAPACITY_SLIM_FACTOR cannot be zero"), "{}", e);
    let e = try_router("Idle -> [0]q :: ARPQuerier(10.0.0.1) -> Discard; Idle -> [1]q;")
        .err()
        .unwrap()
        .join("\n");
    // one argument gives both IP and ETH, as in Click
    assert!(e.contains("ETH: expected Ethernet address"), "{}", e);
}

#[test]
fn arpquerier_responses_and_handlers() {
    clear_collected();
    let r = router(&format!(
        "q :: ARPQuerier(10.0.0.1/24, 00:00:C0:AE:67:EF); {}",
        QCONF
    ));
    let p = udp_to([10, 0, 0, 2], 1);
    r.inject("ip", 0, std::slice::from_ref(&p));
    // Not replies: a request, a group sender address, a non-IP protocol, a
    // short frame (not even counted), a non-ARP ethertype.
    let mut mcast_sha = arp_reply(B, [10, 0, 0, 2], ME, [10, 0, 0, 1]);
    mcast_sha[22] = 0x01;
    let mut ipv6 = arp_reply(B, [10, 0, 0, 2], ME, [10, 0, 0, 1]);
    ipv6[16] = 0x86;
    let mut not_arp = arp_reply(B, [10, 0, 0, 2], ME, [10, 0, 0, 1]);
    not_arp[13] = 0x00;
    r.inject(
        "resp",
        0,
        &[
            arp_request(B, [10, 0, 0, 2], [10, 0, 0, 1]),
            mcast_sha,
            ipv6,
            arp_reply(B, [10, 0, 0, 2], ME, [10, 0, 0, 1])[..41].to_vec(),
            not_arp,
        ],
    );
    assert_eq!(r.read("q.responses"), "4");
    assert!(collected_data("out").is_empty());
    assert_eq!(r.read("q.length"), "1");

    // insert records the address, as Click's: the packet already waiting
    // stays queued (an ARP reply releases it); new packets go straight out.
    r.write("q.insert", "10.0.0.2 52:54:00:00:00:02").unwrap();
    assert!(collected_data("out").is_empty());
    assert_eq!(r.read("q.length"), "1");
    let p2 = udp_to([10, 0, 0, 2], 9);
    r.inject("ip", 0, std::slice::from_ref(&p2));
    assert_eq!(collected_data("out"), vec![framed(B, &p2)]);
    r.inject("resp", 0, &[arp_reply(B, [10, 0, 0, 2], ME, [10, 0, 0, 1])]);
    assert_eq!(collected_data("out"), vec![framed(B, &p2), framed(B, &p)]);
    assert!(r.write("q.insert", "10.0.0.2").is_err());
    assert!(r.write("q.insert", "10.0.0.2 zz").is_err());
    // delete marks the entry unresolved, as Click's does.
    r.inject("ip", 0, &[udp_to([10, 0, 0, 9], 2)]);
    assert_eq!(r.read("q.count"), "2");
    r.write("q.delete", "10.0.0.2").unwrap();
    assert_eq!(r.read("q.count"), "2");
    assert!(r.read("q.table").contains("10.0.0.2 0 FF-FF-FF-FF-FF-FF"));
    assert_eq!(r.read("q.drops"), "0");
    // ipaddr and broadcast are writable; 0.0.0.0 turns the querier off.
    r.write("q.broadcast", "10.0.0.127").unwrap();
    assert_eq!(r.read("q.broadcast"), "10.0.0.127");
    assert!(r.write("q.ipaddr", "nonsense").is_err());
    r.write("q.ipaddr", "0.0.0.0").unwrap();
    clear_collected();
    r.inject("ip", 0, std::slice::from_ref(&p));
    assert!(collected_data("out").is_empty());
    assert_eq!(r.read("q.drops"), "1");
    r.write("q.ipaddr", "10.0.0.99").unwrap();
    r.inject("ip", 0, &[udp_to([10, 0, 0, 77], 3)]);
    // The query carries the new sender address.
    assert_eq!(
        collected_data("qs"),
        vec![eth(
            BCAST,
            ME,
            0x0806,
            &arp(1, ME, [10, 0, 0, 99], [0; 6], [10, 0, 0, 77])
        )]
    );
    // clear empties the table and zeroes the querier's counters; the
    // packets it kills count as the table's drops (as in Click).
    r.write("q.clear", "").unwrap();
    assert_eq!(r.read("q.count"), "0");
    assert_eq!(r.read("q.length"), "0");
    assert_eq!(r.read("q.stats"), "2 packets killed\n0 ARP queries sent\n");
    assert_eq!(r.read("q.responses"), "0");

    // Live reconfiguration with a new address clears the table.
    r.write("q.insert", "10.0.0.2 52:54:00:00:00:02").unwrap();
    r.write("q.config", "10.0.0.99/24, 00:00:C0:AE:67:EF")
        .unwrap();
    assert_eq!(r.read("q.count"), "1");
    r.write("q.config", "10.0.0.5/24, 00:00:C0:AE:67:EF")
        .unwrap();
    assert_eq!(r.read("q.count"), "0");
    assert_eq!(r.read("q.ipaddr"), "10.0.0.5");
}

#[test]
fn arpquerier_query_annotations() {
    clear_collected();
    let r = router(
        "Idle -> vd :: VLANDecap -> Strip(14) -> CheckIPHeader -> [0]q :: ARPQuerier(10.0.0.1/24, 00:00:C0:AE:67:EF);
         Idle -> [1]q; q[0] -> out :: Collect; q[1] -> qs :: Collect;",
    );
    let ip = udp_to([10, 0, 0, 2], 1);
    let mut f = eth(ME, A, 0x8100, &[0x20, 0x05, 0x08, 0x00]);
    f.extend_from_slice(&ip);
    let mut p = r.router.pool().make(64, &f, 0);
    p.set_timestamp(Timestamp::from_sec_usec(1234, 5678));
    r.router.inject("vd", 0, p).unwrap();
    let q = &collected("qs")[0];
    assert_eq!(q.data, query([10, 0, 0, 2]));
    assert_eq!(q.anno.vlan_tci(), 0x2005);
    assert_eq!(q.anno.timestamp, Timestamp::from_sec_usec(1234, 5678));
}

/// Packet-at-a-time (Click's order), replies on input 1 release the held
/// packets between later arrivals; queries and data share one output.
#[test]
fn arpquerier_interleaves_like_click() {
    let ip = |d: Ip4, n: u8| eth(ME, A, 0x0800, &udp_to(d, n));
    let pkts = vec![
        ip([10, 0, 0, 2], 1),
        ip([10, 0, 0, 3], 2),
        ip([10, 0, 0, 255], 3),
        arp_reply(B, [10, 0, 0, 2], ME, [10, 0, 0, 1]),
        ip([10, 0, 0, 2], 4),
        ip([10, 0, 0, 3], 5),
        arp_reply([2; 6], [10, 0, 0, 3], ME, [10, 0, 0, 1]),
        ip([10, 0, 0, 3], 6),
        ip([224, 0, 0, 9], 7),
    ];
    let r = run_with(
        "src :: BatchSrc -> c :: Classifier(12/0806 20/0002, 12/0800);
         c[0] -> [1]q :: ARPQuerier(10.0.0.1/24, 00:00:C0:AE:67:EF);
         c[1] -> Strip(14) -> CheckIPHeader -> [0]q;
         q -> out :: Collect;",
        &pkts,
        1,
    );
    let u = |dst: Ip4, n: u8| udp_to(dst, n);
    assert_eq!(
        collected_data("out"),
        vec![
            query([10, 0, 0, 2]),
            query([10, 0, 0, 3]),
            framed(BCAST, &u([10, 0, 0, 255], 3)),
            framed(B, &u([10, 0, 0, 2], 1)),
            framed(B, &u([10, 0, 0, 2], 4)),
            framed([2; 6], &u([10, 0, 0, 3], 2)),
            framed([2; 6], &u([10, 0, 0, 3], 5)),
            framed([2; 6], &u([10, 0, 0, 3], 6)),
            framed([1, 0, 0x5e, 0, 0, 9], &u([224, 0, 0, 9], 7)),
        ]
    );
    assert_eq!(r.read("q.queries"), "2");
    assert_eq!(r.read("q.responses"), "2");
}

/// A batch on input 0 gives exactly what packet-at-a-time gives, with
/// queries interleaved in order on a shared output.
#[test]
fn arpquerier_batches_match_single() {
    let ip = |d: Ip4, n: u8| udp_to(d, n);
    let pkts = vec![
        ip([10, 0, 0, 255], 1),
        ip([10, 0, 0, 2], 2),
        ip([224, 0, 0, 9], 3),
        ip([10, 0, 0, 3], 4),
        ip([10, 0, 0, 2], 5),
        ip([255, 255, 255, 255], 6),
        ip([0, 0, 0, 0], 7),
        ip([10, 0, 0, 4], 8),
    ];
    for outputs in [
        "q -> out :: Collect;",
        "q[0] -> out :: Collect; q[1] -> out;",
    ] {
        let (r, seen) = run_both(
            &format!(
                "src :: BatchSrc -> CheckIPHeader -> [0]q :: ARPQuerier(10.0.0.1/24, 00:00:C0:AE:67:EF);
                 Idle -> [1]q; {}",
                outputs
            ),
            &pkts,
            &["out"],
        );
        let d: Vec<Vec<u8>> = seen[0].iter().map(|s| s.data.clone()).collect();
        assert_eq!(
            d,
            vec![
                framed(BCAST, &ip([10, 0, 0, 255], 1)),
                query([10, 0, 0, 2]),
                framed([1, 0, 0x5e, 0, 0, 9], &ip([224, 0, 0, 9], 3)),
                query([10, 0, 0, 3]),
                framed(BCAST, &ip([255, 255, 255, 255], 6)),
                query([10, 0, 0, 4]),
            ]
        );
        // Running to idle moved the clock past TIMEOUT: the four held
        // packets expired with their entries (plus the one for 0.0.0.0,
        // the querier's own drop).
        assert_eq!(r.read("q.queries"), "3");
        assert_eq!(r.read("q.length"), "0");
        assert_eq!(r.read("q.count"), "0");
        assert_eq!(r.read("q.drops"), "1");
        assert_eq!(r.read("q.stats"), "5 packets killed\n3 ARP queries sent\n");
    }
}

// ---- CheckARPHeader and ARPPrint -------------------------------------------

#[test]
fn checkarpheader_checks() {
    clear_collected();
    let r = router(
        "Idle -> c :: CheckARPHeader(14, DETAILS true); c[0] -> ok :: Collect; c[1] -> bad :: Collect;",
    );
    let good = arp_request(A, [10, 0, 0, 1], [10, 0, 0, 2]);
    let mut bad_hln = good.clone();
    bad_hln[18] = 4; // hln 4 for Ethernet; still long enough
    let mut bad_pln = good.clone();
    bad_pln[19] = 6; // pln 6 for IPv4: needs 8 + 12 + 12 = 32 bytes
    bad_pln.extend_from_slice(&[0; 4]);
    let mut other_hw = good.clone();
    other_hw[15] = 6; // IEEE 802 hardware: any length is fine
    let pkts = vec![
        good.clone(),
        good[..21].to_vec(),
        good[..40].to_vec(),
        bad_hln,
        bad_pln,
        other_hw.clone(),
        vec![0; 5],
    ];
    r.inject("c", 0, &pkts);
    let ok = collected("ok");
    assert_eq!(ok.len(), 2);
    assert_eq!(ok[0].data, good);
    assert_eq!(ok[1].data, other_hw);
    assert_eq!(ok[0].network_header_offset, Some(14));
    assert_eq!(ok[0].transport_header_offset, Some(42));
    assert_eq!(collected("bad").len(), 5);
    assert_eq!(r.read("c.drops"), "5");
    assert_eq!(
        r.read("c.drop_details"),
        "2\ttiny packet\n1\ttoo small for addresses\n1\tbad hardware type/length\n1\tbad protocol type/length\n"
    );
    // Only the first bad packet is reported without VERBOSE.
    assert_eq!(r.stderr(), "ARP header check failed: tiny packet\n");

    let r = router("Idle -> c :: CheckARPHeader(OFFSET 14, VERBOSE true) -> Discard;");
    r.inject("c", 0, &[vec![0; 5], good[..30].to_vec()]);
    assert_eq!(
        r.stderr(),
        "ARP header check failed: tiny packet\nARP header check failed: too small for addresses\n"
    );
    assert!(r.router.read_handler("c.drop_details").is_err());
}

#[test]
fn arpprint_formats() {
    let pkts = capture("mixed.pcap");
    let r = router("Idle -> ch :: CheckARPHeader(14) -> p :: ARPPrint(arp) -> Discard;");
    let mut p = r.router.pool().make(64, &pkts[19], 0);
    p.set_timestamp(Timestamp::from_sec_usec(1700000119, 703247));
    r.router.inject("ch", 0, p).unwrap();
    r.inject("ch", 0, &[pkts[20].clone(), pkts[50].clone()]);
    assert_eq!(
        r.stderr(),
        "arp: 1700000119.703247: arp who-has 10.0.0.2 tell 10.0.0.1\n\
         arp: 0.000000: arp reply 10.0.0.2 is-at 52-54-00-00-00-02\n\
         arp: 0.000000: arp who-has 10.0.0.2 tell 10.0.0.2\n"
    );

    let r = router("Idle -> ch :: CheckARPHeader(14) -> p :: ARPPrint(x, TIMESTAMP false, ETHER true) -> c :: Counter -> Discard;");
    let mut with_tha = arp_request(A, [10, 0, 0, 1], [10, 0, 0, 2]);
    with_tha[32..38].copy_from_slice(&B);
    let mut rarp = arp_request(A, [10, 0, 0, 1], [10, 0, 0, 2]);
    rarp[21] = 3;
    let mut odd = arp_request(A, [10, 0, 0, 1], [10, 0, 0, 2]);
    odd[21] = 42;
    odd[15] = 6;
    let mut v6 = arp_request(A, [10, 0, 0, 1], [10, 0, 0, 2]);
    v6[16] = 0x86;
    v6[17] = 0xdd;
    v6[19] = 16;
    v6.extend_from_slice(&[0; 24]);
    r.inject("ch", 0, &[with_tha, rarp, odd, v6]);
    assert_eq!(
        r.stderr(),
        "x: 52-54-00-00-00-01 > FF-FF-FF-FF-FF-FF: arp who-has 10.0.0.2 (52-54-00-00-00-02) tell 10.0.0.1\n\
         x: 52-54-00-00-00-01 > FF-FF-FF-FF-FF-FF: rarp who-is 00-00-00-00-00-00 tell 52-54-00-00-00-01\n\
         x: 52-54-00-00-00-01 > FF-FF-FF-FF-FF-FF: arp-#42 hardware #6\n\
         x: 52-54-00-00-00-01 > FF-FF-FF-FF-FF-FF: arp-#1 for proto #34525 (16) hardware #1 (6)\n"
    );
    assert_eq!(r.read("c.count"), "4");
    r.write("p.active", "false").unwrap();
    r.inject("ch", 0, &[pkts[19].clone()]);
    assert_eq!(r.read("c.count"), "5");
    assert_eq!(r.stderr().lines().count(), 4);

    // Without the network header annotation ARPPrint stays silent.
    let r = router("Idle -> p :: ARPPrint -> c :: Counter -> Discard;");
    r.inject("p", 0, &[pkts[19].clone()]);
    assert_eq!(r.stderr(), "");
    assert_eq!(r.read("c.count"), "1");
}

/// ARPQuerier's queries carry the ARP header as their network header, as
/// Click's do, so an ARPPrint after the querier prints them.
#[test]
fn arpquerier_queries_print_through_arpprint() {
    let r = router(
        "Idle -> q :: ARPQuerier(1.0.10.10, 2:1:0:a:a:f) -> ARPPrint(out) -> Discard; Idle -> [1]q;",
    );
    let mut ip = vec![0u8; 20];
    ip[0] = 0x45;
    ip[3] = 20;
    ip[8] = 64;
    ip[12..16].copy_from_slice(&[1, 0, 10, 10]);
    ip[16..20].copy_from_slice(&[1, 0, 0, 7]);
    let mut p = r
        .router
        .pool()
        .make(click::packet::DEFAULT_HEADROOM, &ip, 0);
    p.anno_mut()
        .set_dst_ip(core::net::Ipv4Addr::new(1, 0, 0, 7));
    r.router.inject("q", 0, p).unwrap();
    assert!(
        r.stderr().contains("arp who-has 1.0.0.7 tell 1.0.10.10"),
        "{}",
        r.stderr()
    );
}

// ---- ARPTable ----------------------------------------------------------------

/// Two ARPQueriers sharing one ARPTable (Click's TABLE keyword): what one
/// learns, the other uses; the table's handlers see both.
#[test]
fn arptable_shared_between_queriers() {
    clear_collected();
    let r = router(
        "t :: ARPTable(TIMEOUT 30);
         Idle -> ip0 :: CheckIPHeader -> [0]q0 :: ARPQuerier(10.0.0.1/24, 00:00:C0:AE:67:EF, TABLE t);
         Idle -> resp0 :: Null -> [1]q0; q0[0] -> out0 :: Collect; q0[1] -> qs0 :: Collect;
         Idle -> ip1 :: CheckIPHeader -> [0]q1 :: ARPQuerier(TABLE t, 10.0.0.3, 00:00:C0:AE:67:F0);
         Idle -> [1]q1; q1[0] -> out1 :: Collect; q1[1] -> qs1 :: Collect;",
    );
    let p = udp_to([10, 0, 0, 2], 1);
    // q0 queries and holds the packet in the shared table
    r.inject("ip0", 0, std::slice::from_ref(&p));
    assert_eq!(collected_data("qs0"), vec![query([10, 0, 0, 2])]);
    assert_eq!(r.read("t.count"), "1");
    assert_eq!(r.read("t.length"), "1");
    assert_eq!(r.read("q1.length"), "1");
    // the reply to q0 releases it; q1 then knows the address too
    r.inject(
        "resp0",
        0,
        &[arp_reply(B, [10, 0, 0, 2], ME, [10, 0, 0, 1])],
    );
    assert_eq!(collected_data("out0"), vec![framed(B, &p)]);
    r.inject("ip1", 0, std::slice::from_ref(&p));
    assert!(collected_data("qs1").is_empty());
    let mut from_q1 = framed(B, &p);
    from_q1[6..12].copy_from_slice(&ME2);
    assert_eq!(collected_data("out1"), vec![from_q1]);
    // entries inserted into the table serve both queriers
    r.write("t.insert", "10.0.0.9 52:54:00:00:00:09").unwrap();
    assert_eq!(
        r.read("t.table"),
        "10.0.0.2 1 52-54-00-00-00-02 0.000000\n10.0.0.9 1 52-54-00-00-00-09 0.000000\n"
    );
    assert_eq!(r.read("q0.table"), r.read("t.table"));
    r.write("q1.delete", "10.0.0.9").unwrap();
    assert!(r.read("t.table").contains("10.0.0.9 0 FF-FF-FF-FF-FF-FF"));
    // the table's timer expires entries (30 s, then every 31 s)
    let t0 = r.clock.now();
    r.run();
    assert_eq!(r.clock.now(), t0.add_nsec(61_000_000_000));
    assert_eq!(r.read("t.count"), "0");
    r.write("t.clear", "").unwrap();
}

#[test]
fn arptable_errors_and_config() {
    let e = try_router(
        "t :: Idle; Idle -> [0]q :: ARPQuerier(10.0.0.1, 1:2:3:4:5:6, TABLE t) -> Discard; Idle -> [1]q;",
    )
    .err()
    .unwrap()
    .join("\n");
    assert!(e.contains("TABLE: 't' is not an ARPTable element"), "{}", e);
    let e = try_router(
        "Idle -> [0]q :: ARPQuerier(10.0.0.1, 1:2:3:4:5:6, TABLE nosuch) -> Discard; Idle -> [1]q;",
    )
    .err()
    .unwrap()
    .join("\n");
    assert!(
        e.contains("TABLE: no ARPTable element named 'nosuch'"),
        "{}",
        e
    );
    let e = try_router("ARPTable(CAPACITY_SLIM_FACTOR 0)")
        .err()
        .unwrap()
        .join("\n");
    assert!(e.contains("CAPACITY_SLIM_FACTOR cannot be zero"), "{}", e);
    // ENTRY_CAPACITY on the table applies to its queriers' entries
    clear_collected();
    let r = router(&format!(
        "t :: ARPTable(ENTRY_CAPACITY 1); q :: ARPQuerier(10.0.0.1/24, 00:00:C0:AE:67:EF, TABLE t); {}",
        QCONF
    ));
    r.inject(
        "ip",
        0,
        &[udp_to([10, 0, 0, 5], 1), udp_to([10, 0, 0, 6], 2)],
    );
    assert_eq!(r.read("t.count"), "1");
    assert!(r.read("t.table").starts_with("10.0.0.6 0"));
    assert_eq!(r.read("t.drops"), "1");
    // AddressInfo: one name for IP and ETH
    let r = router(&format!(
        "AddressInfo(me 10.0.0.1 00:00:C0:AE:67:EF); q :: ARPQuerier(me); {}",
        QCONF
    ));
    assert_eq!(r.read("q.ipaddr"), "10.0.0.1");
}

/// In a batch, packets for known or special addresses go out output 0 and
/// queries out output 1, each in order: the batch is split by output.
#[test]
fn arpquerier_batch_splits_by_output() {
    let ip = |d: Ip4, n: u8| udp_to(d, n);
    let pkts = vec![
        ip([10, 0, 0, 255], 1),
        ip([10, 0, 0, 2], 2),
        ip([224, 0, 0, 9], 3),
        ip([10, 0, 0, 3], 4),
        ip([10, 0, 0, 2], 5),
        ip([255, 255, 255, 255], 6),
        ip([10, 0, 0, 4], 8),
    ];
    let (_r, seen) = run_both(
        "src :: BatchSrc -> CheckIPHeader -> [0]q :: ARPQuerier(10.0.0.1/24, 00:00:C0:AE:67:EF);
         Idle -> [1]q; q[0] -> out :: Collect; q[1] -> qs :: Collect;",
        &pkts,
        &["out", "qs"],
    );
    let data = |i: usize| -> Vec<Vec<u8>> { seen[i].iter().map(|s| s.data.clone()).collect() };
    assert_eq!(
        data(0),
        vec![
            framed(BCAST, &ip([10, 0, 0, 255], 1)),
            framed([1, 0, 0x5e, 0, 0, 9], &ip([224, 0, 0, 9], 3)),
            framed(BCAST, &ip([255, 255, 255, 255], 6)),
        ]
    );
    assert_eq!(
        data(1),
        vec![
            query([10, 0, 0, 2]),
            query([10, 0, 0, 3]),
            query([10, 0, 0, 4])
        ]
    );
}

/// Pulled through: queries for our addresses come back as replies, the
/// rest go out output 1 (pushed), unchanged.
#[test]
fn arpresponder_in_pull_context() {
    clear_collected();
    let r = router(
        "Idle -> q :: Queue -> ar :: ARPResponder(10.0.0.1 00:00:C0:AE:67:EF) -> u :: Unqueue -> rep :: Collect;
         ar[1] -> other :: Collect;",
    );
    let mine = arp_request(A, [10, 0, 0, 9], [10, 0, 0, 1]);
    let not_mine = arp_request(A, [10, 0, 0, 9], [10, 0, 0, 7]);
    r.inject("q", 0, &[mine.clone(), not_mine.clone(), mine]);
    r.run();
    let reply = arp_reply(ME, [10, 0, 0, 1], A, [10, 0, 0, 9]);
    assert_eq!(collected_data("rep"), vec![reply.clone(), reply]);
    assert_eq!(collected_data("other"), vec![not_mine]);
}
