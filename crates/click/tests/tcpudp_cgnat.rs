//! CGNATMapper (IPRewriter as a carrier-grade NAT): exact rewritten bytes
//! for endpoint-independent mapping and filtering, paired pooling, port
//! blocks and their limits, hairpinning, pings and ICMP errors, the
//! mapping log, and a hot swap that keeps the bindings.

mod frames;
#[path = "ip_harness.rs"]
mod ip_harness;

use click::prelude::Clock;
use click_wire::checksum::transport_checksum;
use frames::*;
use ip_harness::*;
use std::collections::BTreeSet;
use std::net::Ipv4Addr;

const A: Ip4 = [10, 0, 0, 5];
const B: Ip4 = [10, 0, 0, 6];
const OUT: Ip4 = [203, 0, 113, 10];
const OUT2: Ip4 = [203, 0, 113, 20];
const NAT: Ip4 = [198, 51, 100, 1];

fn tcp_pkt(src: Ip4, sport: u16, dst: Ip4, dport: u16) -> Vec<u8> {
    let mut t = Vec::new();
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&0x0102_0304u32.to_be_bytes());
    t.extend_from_slice(&0x0a0b_0c0du32.to_be_bytes());
    t.extend_from_slice(&[0x50, 0x18, 0x20, 0x00, 0, 0, 0, 0]);
    t.extend_from_slice(b"hello CGNAT");
    let c = transport_checksum(Ipv4Addr::from(src), Ipv4Addr::from(dst), 6, &t);
    t[16..18].copy_from_slice(&c.to_be_bytes());
    Ip::new(src, dst, 6, &t).id(7).bytes()
}

fn udp_pkt(src: Ip4, sport: u16, dst: Ip4, dport: u16) -> Vec<u8> {
    let mut u = udp(sport, dport, b"payload!");
    let c = transport_checksum(Ipv4Addr::from(src), Ipv4Addr::from(dst), 17, &u);
    u[6..8].copy_from_slice(&c.to_be_bytes());
    Ip::new(src, dst, 17, &u).id(9).bytes()
}

fn cgnat(keywords: &str) -> TestRouter {
    clear_collected();
    router(&format!(
        "cgn :: CGNATMapper({keywords});
         Idle -> a :: MarkIPHeader -> rw :: IPRewriter(cgn, cgn, TCP_GUARANTEE 0, UDP_GUARANTEE 0) -> out0 :: Collect;
         Idle -> b :: MarkIPHeader -> [1]rw; rw[1] -> out1 :: Collect;"
    ))
}

/// `SECONDS.MS` of the router's clock.
fn stamp(r: &TestRouter) -> String {
    let ms = r.clock.now().nsec() / 1_000_000;
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

#[test]
fn endpoint_independent_mapping_and_filtering_exact_bytes() {
    let r = cgnat("POOL 198.51.100.1, BLOCK 512");
    r.inject(
        "a",
        0,
        &[
            tcp_pkt(A, 3333, OUT, 80),
            // same internal endpoint, another destination: same mapping
            tcp_pkt(A, 3333, OUT2, 443),
            // another protocol has ports of its own
            udp_pkt(A, 3333, OUT, 53),
            tcp_pkt(A, 4444, OUT, 80),
        ],
    );
    assert_eq!(
        collected_data("out0"),
        vec![
            tcp_pkt(NAT, 1024, OUT, 80),
            tcp_pkt(NAT, 1024, OUT2, 443),
            udp_pkt(NAT, 1024, OUT, 53),
            tcp_pkt(NAT, 1025, OUT, 80),
        ]
    );
    // replies, and (endpoint-independent filtering) a host never
    // contacted reaching the mapped port
    r.inject(
        "b",
        0,
        &[
            tcp_pkt(OUT, 80, NAT, 1024),
            tcp_pkt([192, 0, 2, 99], 5555, NAT, 1024),
            udp_pkt([192, 0, 2, 99], 5555, NAT, 1024),
            // nothing bound there: filtered
            tcp_pkt([192, 0, 2, 99], 5555, NAT, 2000),
            // a stranger to a non-pool address
            tcp_pkt([192, 0, 2, 99], 5555, [192, 0, 2, 1], 80),
        ],
    );
    assert_eq!(
        collected_data("out1"),
        vec![
            tcp_pkt(OUT, 80, A, 3333),
            tcp_pkt([192, 0, 2, 99], 5555, A, 3333),
            udp_pkt([192, 0, 2, 99], 5555, A, 3333),
        ]
    );
    // the inside host answers the unsolicited flow through its mapping
    r.inject("a", 0, &[tcp_pkt(A, 3333, [192, 0, 2, 99], 5555)]);
    assert_eq!(
        collected_data("out0")[4],
        tcp_pkt(NAT, 1024, [192, 0, 2, 99], 5555)
    );
    assert_eq!(
        r.read("cgn.mappings"),
        "tcp 10.0.0.5:3333 => 198.51.100.1:1024 flows 3\n\
         tcp 10.0.0.5:4444 => 198.51.100.1:1025 flows 1\n\
         udp 10.0.0.5:3333 => 198.51.100.1:1024 flows 2\n"
    );
    assert_eq!(r.read("cgn.filtered"), "1");
    assert_eq!(r.read("cgn.strangers"), "1");
    assert_eq!(r.read("rw.mapping_failures"), "2");
    assert_eq!(
        r.read("cgn.subscribers"),
        "10.0.0.5 198.51.100.1 1024-1535\n"
    );
}

#[test]
fn filtering_off_admits_replies_only() {
    let r = cgnat("POOL 198.51.100.1, FILTERING false");
    r.inject("a", 0, &[udp_pkt(A, 3333, OUT, 53)]);
    r.inject(
        "b",
        0,
        &[udp_pkt(OUT2, 53, NAT, 1024), udp_pkt(OUT, 53, NAT, 1024)],
    );
    assert_eq!(collected_data("out1"), vec![udp_pkt(OUT, 53, A, 3333)]);
    assert_eq!(r.read("cgn.filtered"), "1");
}

#[test]
fn port_blocks_and_limits() {
    let r = cgnat("POOL 198.51.100.1, PORTS 1024-1031, BLOCK 4, PER_SUBSCRIBER_BLOCKS 1");
    let mut pkts: Vec<Vec<u8>> = (0..5).map(|i| udp_pkt(A, 5000 + i, OUT, 53)).collect();
    pkts.extend((0..2).map(|i| udp_pkt(B, 6000 + i, OUT, 53)));
    pkts.push(udp_pkt([10, 0, 0, 7], 7000, OUT, 53));
    r.inject("a", 0, &pkts);
    assert_eq!(
        collected_data("out0"),
        vec![
            udp_pkt(NAT, 1024, OUT, 53),
            udp_pkt(NAT, 1025, OUT, 53),
            udp_pkt(NAT, 1026, OUT, 53),
            udp_pkt(NAT, 1027, OUT, 53),
            // A's fifth port: its one block is full (dropped, counted)
            udp_pkt(NAT, 1028, OUT, 53),
            udp_pkt(NAT, 1029, OUT, 53),
            // the third subscriber: no block left in the pool
        ]
    );
    assert_eq!(
        r.read("cgn.subscribers"),
        "10.0.0.5 198.51.100.1 1024-1027\n10.0.0.6 198.51.100.1 1028-1031\n"
    );
    assert_eq!(r.read("cgn.port_failures"), "1");
    assert_eq!(r.read("cgn.pool_failures"), "1");
    assert_eq!(r.read("rw.mapping_failures"), "2");
    // TCP has ports of its own in the same blocks
    r.inject("a", 0, &[tcp_pkt(A, 5000, OUT, 80)]);
    assert_eq!(
        collected_data("out0").pop().unwrap(),
        tcp_pkt(NAT, 1024, OUT, 80)
    );
    // once its flows are gone, A's block returns to the pool
    r.write("rw.clear", "").unwrap();
    assert_eq!(r.read("cgn.subscribers"), "");
    assert_eq!(r.read("cgn.bindings"), "0");
    r.inject("a", 0, &[udp_pkt([10, 0, 0, 7], 7000, OUT, 53)]);
    assert_eq!(
        collected_data("out0").pop().unwrap(),
        udp_pkt(NAT, 1024, OUT, 53)
    );
}

#[test]
fn paired_pooling_keeps_each_subscriber_on_one_address() {
    let r = cgnat("POOL 198.51.100.1-198.51.100.4, BLOCK 256, PER_SUBSCRIBER_BLOCKS 2");
    let mut by_sub: Vec<BTreeSet<[u8; 4]>> = Vec::new();
    for s in 0..16u8 {
        let sub = [10, 1, 0, s + 1];
        let pkts: Vec<Vec<u8>> = (0..300)
            .map(|i| udp_pkt(sub, 10000 + i, [203, 0, 113, (i % 7) as u8 + 1], 53))
            .collect();
        r.inject("a", 0, &pkts);
        let got = collected_data("out0");
        assert_eq!(got.len(), 300 * (s as usize + 1), "subscriber {s}");
        let addrs: BTreeSet<[u8; 4]> = got[got.len() - 300..]
            .iter()
            .map(|d| d[12..16].try_into().unwrap())
            .collect();
        // ... over two blocks (300 ports > 256), one address
        assert_eq!(addrs.len(), 1, "subscriber {s}: {addrs:?}");
        by_sub.push(addrs);
    }
    let all: BTreeSet<[u8; 4]> = by_sub.iter().flatten().copied().collect();
    assert!(all.len() >= 3, "subscribers spread over the pool: {all:?}");
    assert!(all
        .iter()
        .all(|a| a[..3] == [198, 51, 100] && (1..=4).contains(&a[3])));
    let subs = r.read("cgn.subscribers");
    assert_eq!(subs.lines().count(), 16);
    assert!(subs.lines().all(|l| l.split(' ').count() == 4), "{subs}");
}

#[test]
fn hairpinning_between_two_subscribers() {
    let r = cgnat("POOL 198.51.100.1, BLOCK 512");
    // A talks to the outside: bound to NAT:1024
    r.inject("a", 0, &[udp_pkt(A, 3333, OUT, 53)]);
    // B sends to A's public endpoint: it comes back inside, to A, from
    // B's own public endpoint (B's block starts at 1536)
    r.inject("a", 0, &[udp_pkt(B, 7777, NAT, 1024)]);
    assert_eq!(collected_data("out1"), vec![udp_pkt(NAT, 1536, A, 3333)]);
    // A's answer goes back to B the same way
    r.inject("a", 0, &[udp_pkt(A, 3333, NAT, 1536)]);
    assert_eq!(collected_data("out1")[1], udp_pkt(NAT, 1024, B, 7777));
    assert_eq!(r.read("cgn.hairpins"), "1");
    // B's binding is endpoint independent too
    r.inject("a", 0, &[udp_pkt(B, 7777, OUT, 53)]);
    assert_eq!(
        collected_data("out0").pop().unwrap(),
        udp_pkt(NAT, 1536, OUT, 53)
    );
    // hairpin off: dropped
    let r = cgnat("POOL 198.51.100.1, HAIRPIN false");
    r.inject(
        "a",
        0,
        &[udp_pkt(A, 3333, OUT, 53), udp_pkt(B, 7777, NAT, 1024)],
    );
    assert!(collected_data("out1").is_empty());
    assert_eq!(r.read("cgn.filtered"), "1");
}

#[test]
fn pings_and_icmp_errors_share_the_subscriber_address() {
    clear_collected();
    let r = router(
        "cgn :: CGNATMapper(POOL 198.51.100.1, BLOCK 512);
         Idle -> a :: MarkIPHeader -> rw :: IPRewriter(cgn, cgn) -> out0 :: Collect;
         Idle -> b :: MarkIPHeader -> [1]rw; rw[1] -> out1 :: Collect;
         Idle -> pa :: MarkIPHeader -> pr :: ICMPPingRewriter(cgn, drop) -> out0;
         Idle -> pb :: MarkIPHeader -> [1]pr; pr[1] -> out1;
         Idle -> e :: MarkIPHeader -> ICMPRewriter(rw pr) -> out1;",
    );
    r.inject(
        "pa",
        0,
        &[Ip::new(A, OUT, 1, &echo(77, 1, b"ping")).bytes()],
    );
    assert_eq!(
        collected_data("out0"),
        vec![Ip::new(NAT, OUT, 1, &echo(1024, 1, b"ping")).bytes()]
    );
    let reply = |dst: Ip4, id: u16| {
        let mut rest = [0u8; 4];
        rest[..2].copy_from_slice(&id.to_be_bytes());
        rest[2..].copy_from_slice(&1u16.to_be_bytes());
        Ip::new(OUT, dst, 1, &icmp(0, 0, rest, b"ping")).bytes()
    };
    r.inject("pb", 0, &[reply(NAT, 1024)]);
    assert_eq!(collected_data("out1"), vec![reply(A, 77)]);
    // a UDP datagram to a closed port: the port unreachable quoting the
    // NATed datagram goes back to A, quoting what A sent
    let orig = udp_pkt(A, 3333, OUT, 9);
    r.inject("a", 0, std::slice::from_ref(&orig));
    let sent = collected_data("out0").pop().unwrap();
    assert_eq!(sent, udp_pkt(NAT, 1024, OUT, 9));
    let err = Ip::new(OUT, NAT, 1, &icmp(3, 3, [0; 4], &sent)).bytes();
    r.inject("e", 0, &[err]);
    let expect = Ip::new(OUT, A, 1, &icmp(3, 3, [0; 4], &orig)).bytes();
    assert_eq!(collected_data("out1").pop().unwrap(), expect);
    assert_eq!(
        r.read("cgn.mappings"),
        "icmp 10.0.0.5:77 => 198.51.100.1:1024 flows 1\n\
         udp 10.0.0.5:3333 => 198.51.100.1:1024 flows 1\n"
    );
}

#[test]
fn mappings_are_logged_when_made_and_when_their_last_flow_goes() {
    let r = cgnat("POOL 198.51.100.1, BLOCK 512, LOG /nonexistent-dir/cgnat.log");
    let t0 = stamp(&r);
    r.inject(
        "a",
        0,
        &[
            tcp_pkt(A, 3333, OUT, 80),
            tcp_pkt(A, 3333, OUT2, 80),
            udp_pkt(B, 53, OUT, 53),
        ],
    );
    assert_eq!(
        r.read("cgn.log"),
        format!(
            "{t0} create tcp subscriber 10.0.0.5 internal 10.0.0.5:3333 external 198.51.100.1:1024\n\
             {t0} create udp subscriber 10.0.0.6 internal 10.0.0.6:53 external 198.51.100.1:1536\n"
        )
    );
    r.clock.set(r.clock.now().add_nsec(2_500_000_000));
    r.run_passes(2);
    let t1 = stamp(&r);
    r.write("rw.clear", "").unwrap();
    let log = r.read("cgn.log");
    let mut lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 4, "{log}");
    lines[2..].sort();
    assert_eq!(
        lines[2..],
        [
            format!("{t1} delete tcp subscriber 10.0.0.5 internal 10.0.0.5:3333 external 198.51.100.1:1024"),
            format!("{t1} delete udp subscriber 10.0.0.6 internal 10.0.0.6:53 external 198.51.100.1:1536"),
        ]
    );
    assert_eq!(r.read("cgn.created"), "2");
    assert_eq!(r.read("cgn.deleted"), "2");
    // no file system here (as in an instance): the lines go to the console
    r.clock.set(r.clock.now().add_nsec(200_000_000));
    r.run_passes(3);
    let err = r.stderr();
    assert!(
        err.contains("cannot write /nonexistent-dir/cgnat.log"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "{t0} create tcp subscriber 10.0.0.5 internal 10.0.0.5:3333 external 198.51.100.1:1024"
        )),
        "{err}"
    );
}

#[test]
fn bindings_expire_with_their_flows() {
    let r = router(
        "cgn :: CGNATMapper(POOL 198.51.100.1);
         Idle -> a :: MarkIPHeader -> rw :: IPRewriter(cgn, cgn, UDP_TIMEOUT 10, UDP_GUARANTEE 0, REAP_INTERVAL 1) -> out0 :: Collect;
         Idle -> b :: MarkIPHeader -> [1]rw; rw[1] -> out1 :: Collect;",
    );
    clear_collected();
    let t0 = r.clock.now();
    r.inject("a", 0, &[udp_pkt(A, 3333, OUT, 53)]);
    r.clock.set(t0.add_nsec(6_000_000_000));
    // a second flow from the same endpoint holds the binding longer
    r.inject("a", 0, &[udp_pkt(A, 3333, OUT2, 53)]);
    r.clock.set(t0.add_nsec(12_000_000_000));
    r.run_passes(2);
    assert_eq!(r.read("rw.table_size"), "1");
    assert_eq!(r.read("cgn.bindings"), "1");
    r.clock.set(t0.add_nsec(18_000_000_000));
    r.run_passes(2);
    assert_eq!(r.read("rw.table_size"), "0");
    assert_eq!(r.read("cgn.bindings"), "0");
    assert_eq!(r.read("cgn.deleted"), "1");
}

#[test]
fn hot_swap_keeps_the_bindings() {
    let cfg = "cgn :: CGNATMapper(POOL 198.51.100.1, BLOCK 512);
         Idle -> a :: MarkIPHeader -> rw :: IPRewriter(cgn, cgn) -> out0 :: Collect;
         Idle -> b :: MarkIPHeader -> [1]rw; rw[1] -> out1 :: Collect;";
    clear_collected();
    let old = router(cfg);
    old.inject("a", 0, &[tcp_pkt(A, 3333, OUT, 80), tcp_pkt(B, 1, OUT, 80)]);
    let new = router(cfg);
    new.router.take_state_from(&old.router);
    assert_eq!(new.read("rw.table_size"), "2");
    assert_eq!(new.read("cgn.bindings"), "2");
    assert_eq!(old.read("cgn.bindings"), "0");
    // endpoint-independent filtering and mapping still hold
    new.inject("b", 0, &[tcp_pkt(OUT2, 9, NAT, 1024)]);
    assert_eq!(collected_data("out1"), vec![tcp_pkt(OUT2, 9, A, 3333)]);
    new.inject("a", 0, &[tcp_pkt(A, 3333, [192, 0, 2, 1], 80)]);
    assert_eq!(
        collected_data("out0").pop().unwrap(),
        tcp_pkt(NAT, 1024, [192, 0, 2, 1], 80)
    );
    assert_eq!(new.read("cgn.created"), "2");
    // and the flows release into the new mapper
    new.write("rw.clear", "").unwrap();
    assert_eq!(new.read("cgn.bindings"), "0");
    assert_eq!(new.read("cgn.deleted"), "2");
}

#[test]
fn bad_configurations() {
    for (cfg, want) in [
        ("", "POOL"),
        ("POOL 1.2.3.4, PORTS 9-3", "PORTS"),
        ("POOL 1.2.3.4, PORTS 1000-1001, BLOCK 4", "BLOCK"),
        (
            "POOL 1.2.3.4, PER_SUBSCRIBER_BLOCKS 0",
            "PER_SUBSCRIBER_BLOCKS",
        ),
        ("POOL 1.2.3.9-1.2.3.4", "POOL"),
    ] {
        let e = config_error(&format!(
            "cgn :: CGNATMapper({cfg}); Idle -> rw :: IPRewriter(cgn) -> Discard;"
        ));
        assert!(e.contains(want), "{cfg}: {e}");
    }
}
