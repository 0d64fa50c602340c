//! The NAT family (IPRewriter and friends): exact rewritten bytes with
//! checksums checked by recomputation, port exhaustion, ICMP errors and
//! pings through the NAT, timeouts, capacity eviction, malformed packets
//! and random bytes.

mod frames;
#[path = "ip_harness.rs"]
mod ip_harness;

use click::prelude::Clock;
use click_wire::checksum::transport_checksum;
use frames::*;
use ip_harness::*;
use std::net::Ipv4Addr;

const IN: Ip4 = [10, 0, 0, 5];
const OUT: Ip4 = [8, 8, 8, 8];
const NAT: Ip4 = [1, 0, 0, 1];

/// A TCP segment (20-byte header, flags ACK|PSH) with its checksum for
/// `src` -> `dst`.
fn tcp_seg(src: Ip4, dst: Ip4, sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut t = Vec::new();
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&0x0102_0304u32.to_be_bytes());
    t.extend_from_slice(&0x0a0b_0c0du32.to_be_bytes());
    t.extend_from_slice(&[0x50, 0x18, 0x20, 0x00, 0, 0, 0, 0]);
    t.extend_from_slice(payload);
    let c = transport_checksum(Ipv4Addr::from(src), Ipv4Addr::from(dst), 6, &t);
    t[16..18].copy_from_slice(&c.to_be_bytes());
    t
}

fn tcp_pkt(src: Ip4, sport: u16, dst: Ip4, dport: u16) -> Vec<u8> {
    Ip::new(src, dst, 6, &tcp_seg(src, dst, sport, dport, b"hello NAT"))
        .id(7)
        .bytes()
}

/// A UDP datagram with a real checksum.
fn udp_pkt(src: Ip4, sport: u16, dst: Ip4, dport: u16) -> Vec<u8> {
    let mut u = udp(sport, dport, b"payload!");
    let c = transport_checksum(Ipv4Addr::from(src), Ipv4Addr::from(dst), 17, &u);
    u[6..8].copy_from_slice(&c.to_be_bytes());
    Ip::new(src, dst, 17, &u).id(9).bytes()
}

/// Checks every checksum of an IPv4 TCP/UDP packet by recomputation.
fn assert_checksums(d: &[u8]) {
    assert_eq!(csum(&d[..20]), 0, "IP checksum of {}", hex(d));
    let src: [u8; 4] = d[12..16].try_into().unwrap();
    let dst: [u8; 4] = d[16..20].try_into().unwrap();
    let seg = &d[20..];
    match d[9] {
        6 | 17 => assert_eq!(
            transport_checksum(Ipv4Addr::from(src), Ipv4Addr::from(dst), d[9], seg),
            0,
            "transport checksum of {}",
            hex(d)
        ),
        1 => assert_eq!(csum(seg), 0, "ICMP checksum of {}", hex(d)),
        _ => {}
    }
}

const NAPT: &str = "Idle -> a :: MarkIPHeader -> rw :: IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop) -> out0 :: Collect;
Idle -> b :: MarkIPHeader -> [1]rw; rw[1] -> out1 :: Collect;";

#[test]
fn outbound_napt_and_reply_exact_bytes() {
    clear_collected();
    let r = router(NAPT);
    r.inject(
        "a",
        0,
        &[tcp_pkt(IN, 3333, OUT, 80), udp_pkt(IN, 5353, OUT, 53)],
    );
    let got = collected_data("out0");
    assert_eq!(got.len(), 2);
    // exactly the packet the NAT's address and port would have sent
    assert_eq!(got[0], tcp_pkt(NAT, 1024, OUT, 80));
    assert_eq!(got[1], udp_pkt(NAT, 1025, OUT, 53));
    got.iter().for_each(|d| assert_checksums(d));
    assert_eq!(collected("out0")[0].anno.dst_ip().octets(), OUT);

    // replies, on the other input, are mapped back
    r.inject(
        "b",
        0,
        &[tcp_pkt(OUT, 80, NAT, 1024), udp_pkt(OUT, 53, NAT, 1025)],
    );
    let back = collected_data("out1");
    assert_eq!(
        back,
        vec![tcp_pkt(OUT, 80, IN, 3333), udp_pkt(OUT, 53, IN, 5353)]
    );
    back.iter().for_each(|d| assert_checksums(d));
    assert_eq!(collected("out1")[0].anno.dst_ip().octets(), IN);

    // UDP without a checksum keeps none
    let mut nocsum = Ip::new(IN, OUT, 17, &udp(6000, 53, b"x")).bytes();
    nocsum[26] = 0;
    nocsum[27] = 0;
    r.inject("a", 0, &[nocsum]);
    let d = collected_data("out0").pop().unwrap();
    assert_eq!(&d[26..28], &[0, 0]);
    assert_eq!(csum(&d[..20]), 0);

    assert_eq!(r.read("rw.table_size"), "3");
    assert_eq!(
        r.read("rw.patterns"),
        "1.0.0.1 1024-65535 - - [3]\n<drop>\n"
    );
    let tcp = r.read("rw.tcp_table");
    assert!(
        tcp.contains(
            "(10.0.0.5, 3333, 8.8.8.8, 80) => (1.0.0.1, 1024, 8.8.8.8, 80) [*0 1] i0 exp86400"
        ),
        "{tcp}"
    );
    assert!(
        tcp.contains(
            "(8.8.8.8, 80, 1.0.0.1, 1024) => (8.8.8.8, 80, 10.0.0.5, 3333) [0 *1] i0 exp86400"
        ),
        "{tcp}"
    );
    assert_eq!(r.read("rw.udp_table").lines().count(), 4);
    let lookup = r
        .router
        .read_handler_param("rw.tcp_lookup", "10.0.0.5 3333 8.8.8.8 80")
        .unwrap();
    assert_eq!(lookup, "1.0.0.1 1024 8.8.8.8 80");
}

#[test]
fn exhausted_port_range_counts_failures() {
    clear_collected();
    let r = router(
        "Idle -> a :: MarkIPHeader -> rw :: TCPRewriter(pattern 1.0.0.1 1024-1025# - - 0 1) -> out0 :: Collect; rw[1] -> Discard;",
    );
    r.inject(
        "a",
        0,
        &[
            tcp_pkt(IN, 1, OUT, 80),
            tcp_pkt(IN, 2, OUT, 80),
            tcp_pkt(IN, 3, OUT, 80),
            tcp_pkt(IN, 1, OUT, 80),
        ],
    );
    let got = collected_data("out0");
    assert_eq!(
        got,
        vec![
            tcp_pkt(NAT, 1024, OUT, 80),
            tcp_pkt(NAT, 1025, OUT, 80),
            tcp_pkt(NAT, 1024, OUT, 80)
        ]
    );
    assert_eq!(r.read("rw.mapping_failures"), "1");
    assert_eq!(r.read("rw.table_size"), "2");
    // a flow to another destination can reuse the ports
    r.inject("a", 0, &[tcp_pkt(IN, 3, [9, 9, 9, 9], 80)]);
    assert_eq!(
        collected_data("out0")[3],
        tcp_pkt(NAT, 1024, [9, 9, 9, 9], 80)
    );
}

#[test]
fn icmp_error_about_a_mapped_tcp_packet() {
    clear_collected();
    let r = router(
        "Idle -> a :: MarkIPHeader -> rw :: IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1) -> out0 :: Collect;
         rw[1] -> Discard;
         Idle -> e :: MarkIPHeader -> ICMPRewriter(rw) -> out :: Collect;",
    );
    let orig = tcp_pkt(IN, 3333, OUT, 80);
    r.inject("a", 0, std::slice::from_ref(&orig));
    let sent = collected_data("out0").pop().unwrap();
    // a router on the way answers "time exceeded" to the NAT address,
    // quoting what the NAT sent (whole TCP header included)
    let err = Ip::new([9, 9, 9, 9], NAT, 1, &icmp(11, 0, [0; 4], &sent[..40])).bytes();
    r.inject("e", 0, &[err]);
    let got = collected_data("out");
    assert_eq!(got.len(), 1);
    let d = &got[0];
    // to the inside host, quoting the original packet exactly
    let expect = Ip::new([9, 9, 9, 9], IN, 1, &icmp(11, 0, [0; 4], &orig[..40])).bytes();
    assert_eq!(*d, expect);
    assert_eq!(csum(&d[..20]), 0);
    assert_eq!(csum(&d[20..]), 0);
    assert_eq!(csum(&d[28..48]), 0, "quoted IP checksum");
    assert_eq!(
        &d[48..68],
        &orig[20..40],
        "quoted TCP header, checksum included"
    );
    assert_eq!(got.len(), 1);
    assert_eq!(collected("out")[0].anno.dst_ip().octets(), IN);

    // an error quoting a packet no mapping knows is dropped
    let stray = tcp_pkt(NAT, 999, OUT, 80);
    let err = Ip::new([9, 9, 9, 9], NAT, 1, &icmp(3, 1, [0; 4], &stray[..28])).bytes();
    r.inject("e", 0, &[err]);
    assert_eq!(collected_data("out").len(), 1);
}

#[test]
fn icmp_ping_rewriter_maps_identifiers() {
    clear_collected();
    let r = router(
        "Idle -> a :: MarkIPHeader -> p :: ICMPPingRewriter(pattern 2.0.0.2 - 0-65535# 0 1, drop) -> out0 :: Collect;
         Idle -> b :: MarkIPHeader -> [1]p; p[1] -> out1 :: Collect;",
    );
    let req = |src: Ip4, id: u16| Ip::new(src, [5, 0, 0, 5], 1, &echo(id, 7, b"ping")).bytes();
    r.inject(
        "a",
        0,
        &[req([1, 0, 0, 1], 10230), req([1, 0, 0, 2], 10230)],
    );
    let got = collected_data("out0");
    assert_eq!(got, vec![req([2, 0, 0, 2], 0), req([2, 0, 0, 2], 1)]);
    got.iter().for_each(|d| assert_checksums(d));
    let reply = |dst: Ip4, id: u16| {
        let mut rest = [0u8; 4];
        rest[..2].copy_from_slice(&id.to_be_bytes());
        rest[2..].copy_from_slice(&7u16.to_be_bytes());
        Ip::new([5, 0, 0, 5], dst, 1, &icmp(0, 0, rest, b"ping")).bytes()
    };
    r.inject(
        "b",
        0,
        &[
            reply([2, 0, 0, 2], 1),
            reply([2, 0, 0, 2], 0),
            reply([2, 0, 0, 2], 77),
        ],
    );
    let back = collected_data("out1");
    assert_eq!(
        back,
        vec![reply([1, 0, 0, 2], 10230), reply([1, 0, 0, 1], 10230)]
    );
    back.iter().for_each(|d| assert_checksums(d));
    assert_eq!(r.read("p.drops"), "1");
    assert!(r
        .read("p.table")
        .contains("(1.0.0.1, 5.0.0.5, 10230) => (2.0.0.2, 5.0.0.5, 0) [*0 1] i0"));
}

/// The sources' public ports, as the rewritten packets of `sink` carry them.
fn sports(sink: &str) -> Vec<u16> {
    collected_data(sink)
        .iter()
        .map(|d| u16::from_be_bytes([d[20], d[21]]))
        .collect()
}

/// Random port choice keeps a public port to one flow while any is
/// unused (Click shares a port between destinations as soon as the
/// random one is free for this destination), then shares as Click does;
/// flows going give their ports back.
#[test]
fn random_ports_stay_unshared_while_the_pool_lasts() {
    clear_collected();
    let r = router(
        "Idle -> a :: MarkIPHeader -> rw :: UDPRewriter(pattern 1.0.0.1 2000-2255? - - 0 1) -> out0 :: Collect; rw[1] -> Discard;",
    );
    // 256 flows from one host and port to 256 destinations: 256 ports
    let flows: Vec<Vec<u8>> = (0..256u32)
        .map(|i| udp_pkt(IN, 40000, [8, 8, (i >> 8) as u8 + 1, i as u8], 53))
        .collect();
    r.inject("a", 0, &flows);
    let mut ports = sports("out0");
    assert_eq!(ports.len(), 256);
    ports.sort_unstable();
    assert_eq!(ports, (2000..2256).collect::<Vec<u16>>());
    // the pool is used up: a flow to yet another destination shares a port
    r.inject("a", 0, &[udp_pkt(IN, 40001, [9, 9, 9, 9], 53)]);
    let shared = *sports("out0").last().unwrap();
    assert!((2000..2256).contains(&shared), "{shared}");
    assert_eq!(r.read("rw.table_size"), "257");
    assert_eq!(r.read("rw.mapping_failures"), "0");
    // to a destination that already has every port, none is free
    r.inject("a", 0, &[udp_pkt(IN, 40002, [9, 9, 9, 9], 53)]);
    // (one more share with 9.9.9.9 is possible: 255 ports are still free for it)
    assert_eq!(r.read("rw.table_size"), "258");
    let p2 = *sports("out0").last().unwrap();
    assert_ne!(p2, shared, "two flows to 9.9.9.9:53 on one public port");
    // emptied, the pool hands out unshared ports again
    r.write("rw.clear", "").unwrap();
    clear_collected();
    r.inject("a", 0, &flows[..200]);
    let mut ports = sports("out0");
    ports.sort_unstable();
    ports.dedup();
    assert_eq!(ports.len(), 200, "a port shared after clear");
}

#[test]
fn timeouts_expire_flows() {
    clear_collected();
    let r = router(
        "Idle -> a :: MarkIPHeader -> rw :: UDPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop, TIMEOUT 10, GUARANTEE 2, REAP_INTERVAL 1) -> out0 :: Collect;
         Idle -> b :: MarkIPHeader -> [1]rw; rw[1] -> out1 :: Collect;",
    );
    let t0 = r.clock.now();
    r.inject("a", 0, &[udp_pkt(IN, 1, OUT, 53)]);
    r.clock.set(t0.add_nsec(8_000_000_000));
    r.run_passes(1);
    // guarantee 2 s, then best-effort 10 s: alive at 8 s
    assert_eq!(r.read("rw.table_size"), "1");
    let t = r.read("rw.table");
    assert!(
        t.contains("[*0 1] i0 exp1") || t.contains("[*0 1] i0 exp2"),
        "{t}"
    );
    r.clock.set(t0.add_nsec(12_500_000_000));
    r.run_passes(1);
    assert_eq!(r.read("rw.table_size"), "0");
    assert_eq!(r.read("rw.size"), "0");
    r.inject("b", 0, &[udp_pkt(OUT, 53, NAT, 1024)]);
    assert!(collected_data("out1").is_empty());
    // a new flow gets the next sequential port
    r.inject("a", 0, &[udp_pkt(IN, 1, OUT, 53)]);
    assert_eq!(collected_data("out0")[1], udp_pkt(NAT, 1025, OUT, 53));
}

/// A flow that keeps getting packets outlives its first expiry while an
/// idle one goes (the expiry heaps are updated lazily: the reaper must
/// still see the refreshed expiry, and only it).
#[test]
fn traffic_keeps_a_flow_alive_past_its_first_expiry() {
    clear_collected();
    let r = router(
        "Idle -> a :: MarkIPHeader -> rw :: UDPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop, TIMEOUT 10, GUARANTEE 0, REAP_INTERVAL 1) -> out0 :: Collect;
         Idle -> b :: MarkIPHeader -> [1]rw; rw[1] -> out1 :: Collect;",
    );
    let t0 = r.clock.now();
    r.inject("a", 0, &[udp_pkt(IN, 1, OUT, 53), udp_pkt(IN, 2, OUT, 53)]);
    assert_eq!(
        collected_data("out0"),
        vec![udp_pkt(NAT, 1024, OUT, 53), udp_pkt(NAT, 1025, OUT, 53)]
    );
    // at 6 s only the first flow has traffic: its expiry moves to 16 s
    r.clock.set(t0.add_nsec(6_000_000_000));
    r.inject("a", 0, &[udp_pkt(IN, 1, OUT, 53)]);
    r.clock.set(t0.add_nsec(12_500_000_000));
    r.run_passes(1);
    assert_eq!(r.read("rw.table_size"), "1");
    // (no reply to the first flow yet: a reply makes a UDP flow
    // streaming, with STREAMING_TIMEOUT's two minutes)
    r.inject("b", 0, &[udp_pkt(OUT, 53, NAT, 1025)]);
    assert!(collected_data("out1").is_empty());
    r.clock.set(t0.add_nsec(15_500_000_000));
    r.run_passes(1);
    assert_eq!(r.read("rw.table_size"), "1");
    r.clock.set(t0.add_nsec(17_000_000_000));
    r.run_passes(1);
    assert_eq!(r.read("rw.table_size"), "0");
    r.inject("b", 0, &[udp_pkt(OUT, 53, NAT, 1024)]);
    assert!(collected_data("out1").is_empty());
}

/// At capacity the flow to go is the one expiring first *now*: a flow
/// made first but used since outlives one made later and left idle.
/// Replies from OUT:80 to the NAT's ports 1024, 1025 and 1026, injected on
/// `b`: what came back inside on `out1` (only live mappings pass).
fn replies_to_the_first_three_ports(r: &TestRouter) -> Vec<Vec<u8>> {
    r.inject(
        "b",
        0,
        &[
            tcp_pkt(OUT, 80, NAT, 1024),
            tcp_pkt(OUT, 80, NAT, 1025),
            tcp_pkt(OUT, 80, NAT, 1026),
        ],
    );
    collected_data("out1")
}

#[test]
fn capacity_evicts_by_current_expiry_not_creation() {
    clear_collected();
    let r = router(
        "Idle -> a :: MarkIPHeader -> rw :: IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop, MAPPING_CAPACITY 2, GUARANTEE 0, REAP_INTERVAL 0) -> out0 :: Collect;
         Idle -> b :: MarkIPHeader -> [1]rw; rw[1] -> out1 :: Collect;",
    );
    let t0 = r.clock.now();
    r.inject("a", 0, &[tcp_pkt(IN, 1, OUT, 80)]);
    r.clock.set(t0.add_nsec(1_000_000_000));
    r.inject("a", 0, &[tcp_pkt(IN, 2, OUT, 80)]);
    r.clock.set(t0.add_nsec(2_000_000_000));
    r.inject("a", 0, &[tcp_pkt(IN, 1, OUT, 80)]);
    r.clock.set(t0.add_nsec(3_000_000_000));
    r.inject("a", 0, &[tcp_pkt(IN, 3, OUT, 80)]);
    assert_eq!(r.read("rw.size"), "2");
    assert_eq!(
        replies_to_the_first_three_ports(&r),
        vec![tcp_pkt(OUT, 80, IN, 1), tcp_pkt(OUT, 80, IN, 3)]
    );
}

#[test]
fn capacity_evicts_the_oldest_best_effort_flow() {
    clear_collected();
    let r = router(
        "Idle -> a :: MarkIPHeader -> rw :: IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop, MAPPING_CAPACITY 2, GUARANTEE 0, REAP_INTERVAL 0) -> out0 :: Collect;
         Idle -> b :: MarkIPHeader -> [1]rw; rw[1] -> out1 :: Collect;",
    );
    let t0 = r.clock.now();
    for (i, port) in [1u16, 2, 3].iter().enumerate() {
        r.clock.set(t0.add_nsec(i as i64 * 1_000_000_000));
        r.inject("a", 0, &[tcp_pkt(IN, *port, OUT, 80)]);
    }
    assert_eq!(r.read("rw.size"), "2");
    assert_eq!(r.read("rw.mapping_failures"), "0");
    assert_eq!(
        replies_to_the_first_three_ports(&r),
        vec![tcp_pkt(OUT, 80, IN, 2), tcp_pkt(OUT, 80, IN, 3)]
    );
    // shrinking the capacity evicts at once; clear empties the set
    r.write("rw.capacity", "1").unwrap();
    assert_eq!(r.read("rw.size"), "1");
    assert_eq!(r.read("rw.capacity"), "1");
    r.write("rw.clear", "").unwrap();
    assert_eq!(r.read("rw.table_size"), "0");

    // with guarantees, a full set refuses new flows (admission control)
    clear_collected();
    let r = router(
        "Idle -> a :: MarkIPHeader -> rw :: IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, MAPPING_CAPACITY 1) -> out0 :: Collect; rw[1] -> Discard;",
    );
    r.inject("a", 0, &[tcp_pkt(IN, 1, OUT, 80), tcp_pkt(IN, 2, OUT, 80)]);
    assert_eq!(collected_data("out0").len(), 1);
    assert_eq!(r.read("rw.mapping_failures"), "1");
}

#[test]
fn malformed_and_truncated_packets_are_counted_not_fatal() {
    clear_collected();
    let r = router(
        "Idle -> a :: MarkIPHeader -> rw :: IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1) -> out0 :: Collect; rw[1] -> Discard;
         Idle -> p :: MarkIPHeader -> rwp :: IPRewriter(pass 0) -> outp :: Collect;",
    );
    let good = tcp_pkt(IN, 3333, OUT, 80);
    let mut frag = good.clone();
    frag[6] = 0x00;
    frag[7] = 0x10; // offset 128
    let bad: Vec<Vec<u8>> = vec![
        good[..24].to_vec(),                      // 4 bytes of TCP
        Ip::new(IN, OUT, 47, &[0u8; 12]).bytes(), // GRE
        frag,                                     // later fragment
        good[..10].to_vec(),                      // not even an IP header
        vec![],                                   // nothing
    ];
    r.inject("a", 0, &bad);
    assert!(collected_data("out0").is_empty());
    assert_eq!(r.read("rw.drops"), "5");
    assert_eq!(r.read("rw.table_size"), "0");
    // a 'pass' input lets them through unchanged
    r.inject("p", 0, &bad[..3]);
    assert_eq!(collected_data("outp"), bad[..3].to_vec());
    // a TCP header cut before its checksum: mapped, but as in Click only
    // the IP header is rewritten (TCPRewriter's apply needs 18 bytes)
    let cut = good[..30].to_vec();
    r.inject("a", 0, std::slice::from_ref(&cut));
    let d = collected_data("out0").pop().unwrap();
    assert_eq!(&d[12..16], &NAT);
    assert_eq!(&d[20..30], &cut[20..30]);
    assert_eq!(r.read("rw.table_size"), "1");
    assert_eq!(csum(&d[..20]), 0);
}

#[test]
fn bad_configurations() {
    let e = try_router("i :: Idle; j :: Idle; rw :: IPAddrRewriter(pattern 1.0.0.x - 0 1, pattern 1.255.0.0-1.0.255.255 - 0 1); i -> [0]rw; j -> [1]rw; rw -> Discard; rw[1] -> Discard;").err().unwrap().join("\n");
    assert!(e.contains("input spec 0: bad source address"), "{e}");
    assert!(e.contains("input spec 1: bad source address"), "{e}");
    let e = try_router("i :: Idle; j :: Idle; rw :: IPRewriter(pattern 1.0.0.1 456-19 - - 0 1, pattern 1.0.0.1 1 - - 0 5); i -> [0]rw; j -> [1]rw; rw -> Discard; rw[1] -> Discard;").err().unwrap().join("\n");
    assert!(e.contains("input spec 0: bad source port"), "{e}");
    assert!(e.contains("input spec 1: output port out of range"), "{e}");
    let e = try_router("i :: Idle -> rw :: IPRewriter(drop, drop) -> i;")
        .err()
        .unwrap()
        .join("\n");
    assert!(e.contains("need 1 arguments, one per input port"), "{e}");
    let e = try_router("i :: Idle -> rw :: IPRewriter(pattern nosuch 0 0) -> i;")
        .err()
        .unwrap()
        .join("\n");
    assert!(e.contains("no such pattern 'nosuch'"), "{e}");
    let e = try_router("i :: Idle -> rw :: IPRewriter(i) -> i;")
        .err()
        .unwrap()
        .join("\n");
    assert!(e.contains("element is not an IPMapper"), "{e}");
    let e = try_router("i :: Idle -> rw :: IPRewriter(drop, MAPPING_CAPACITY i) -> i;")
        .err()
        .unwrap()
        .join("\n");
    assert!(e.contains("bad MAPPING_CAPACITY"), "{e}");
}

#[test]
fn shared_capacity_and_named_patterns() {
    clear_collected();
    let r = router(
        "IPRewriterPatterns(nat 1.0.0.1 1024-65535# - -);
         Idle -> a :: MarkIPHeader -> rw1 :: IPRewriter(pattern nat 0 0, MAPPING_CAPACITY rw2, GUARANTEE 0) -> o1 :: Collect;
         Idle -> b :: MarkIPHeader -> rw2 :: UDPRewriter(pattern nat 0 0, MAPPING_CAPACITY 2, GUARANTEE 0) -> o2 :: Collect;",
    );
    r.inject("a", 0, &[tcp_pkt(IN, 1, OUT, 80)]);
    r.inject("b", 0, &[udp_pkt(IN, 2, OUT, 53)]);
    // the named pattern is shared: its sequence continues across rewriters
    assert_eq!(collected_data("o2"), vec![udp_pkt(NAT, 1025, OUT, 53)]);
    assert_eq!(r.read("rw1.size"), "2");
    assert_eq!(r.read("rw2.size"), "2");
    r.inject("a", 0, &[tcp_pkt(IN, 3, OUT, 80)]);
    assert_eq!(r.read("rw2.size"), "2");
    assert_eq!(r.read("rw1.table_size"), "1");
    assert_eq!(r.read("rw2.table_size"), "1");
}

/// Random bytes, and random corruptions of good packets, through every
/// rewriter: nothing panics.
#[test]
fn random_packets_never_panic() {
    clear_collected();
    let r = router(
        "Idle -> a :: MarkIPHeader -> t :: Tee(5);
         t[0] -> rw :: IPRewriter(pattern 1.0.0.1 1024-1100 - - 0 1, keep 0 1, MAPPING_CAPACITY 50) -> Discard; rw[1] -> Discard;
         t[1] -> i :: ICMPRewriter(rw p) -> Discard;
         t[2] -> p :: ICMPPingRewriter(pattern 2.0.0.2 - 0-20 0 1) -> Discard; p[1] -> Discard;
         t[3] -> ad :: IPAddrRewriter(pattern 3.0.0.1-3.0.0.9 - 0 1) -> Discard; ad[1] -> Discard;
         t[4] -> [1]rw;",
    );
    let mut seed: u64 = 0x1234_5678_9abc_def0;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let templates = [
        tcp_pkt(IN, 3333, OUT, 80),
        udp_pkt(IN, 53, OUT, 53),
        Ip::new(IN, OUT, 1, &echo(5, 1, b"abc")).bytes(),
        Ip::new(
            [9, 9, 9, 9],
            NAT,
            1,
            &icmp(11, 0, [0; 4], &tcp_pkt(NAT, 1024, OUT, 80)[..28]),
        )
        .bytes(),
    ];
    for i in 0..6000 {
        let pkt = if i % 2 == 0 {
            let n = (next() % 90) as usize;
            (0..n).map(|_| next() as u8).collect::<Vec<u8>>()
        } else {
            let mut p = templates[(next() % 4) as usize].clone();
            for _ in 0..(next() % 6) {
                let k = (next() as usize) % p.len();
                p[k] = next() as u8;
            }
            let cut = (next() as usize) % (p.len() + 1);
            if next() % 3 == 0 {
                p.truncate(cut);
            }
            if !p.is_empty() && next() % 2 == 0 {
                p[0] = 0x45;
            }
            p
        };
        r.inject("a", 0, &[pkt]);
    }
    let n: usize = r.read("rw.size").parse().unwrap();
    assert!(n <= 50);
    r.read("rw.tcp_table");
    r.read("p.table");
    r.read("ad.table");
}

/// Hot swap: a rewriter with the same INPUTSPECs keeps the old one's flows.
#[test]
fn hot_swap_keeps_the_flows() {
    clear_collected();
    let old = router(NAPT);
    old.inject("a", 0, &[tcp_pkt(IN, 3333, OUT, 80)]);
    let new = router(NAPT);
    new.router.take_state_from(&old.router);
    assert_eq!(new.read("rw.table_size"), "1");
    assert_eq!(old.read("rw.size"), "0");
    new.inject("b", 0, &[tcp_pkt(OUT, 80, NAT, 1024)]);
    assert_eq!(collected_data("out1"), vec![tcp_pkt(OUT, 80, IN, 3333)]);
    // a new flow does not reuse the port the old router gave out
    new.inject("a", 0, &[tcp_pkt(IN, 4444, OUT, 80)]);
    assert_eq!(collected_data("out0")[1], tcp_pkt(NAT, 1025, OUT, 80));
}

// ---------------------------------------------------------------------
// FTPPortMapper and TCPRewriter's sequence-number deltas

const SRV: Ip4 = [8, 8, 8, 8];
const DATA_NAT: Ip4 = [100, 200, 100, 200];

/// A TCP/IP packet with explicit sequence and acknowledgement numbers,
/// options (a multiple of 4 bytes) and payload; all checksums right.
#[allow(clippy::too_many_arguments)]
fn tcp_full(
    src: Ip4,
    sport: u16,
    dst: Ip4,
    dport: u16,
    seq: u32,
    ack: u32,
    opts: &[u8],
    payload: &[u8],
) -> Vec<u8> {
    assert_eq!(opts.len() % 4, 0);
    let mut t = Vec::new();
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&seq.to_be_bytes());
    t.extend_from_slice(&ack.to_be_bytes());
    t.extend_from_slice(&[
        ((20 + opts.len()) / 4 * 16) as u8,
        0x18,
        0x20,
        0x00,
        0,
        0,
        0,
        0,
    ]);
    t.extend_from_slice(opts);
    t.extend_from_slice(payload);
    let c = transport_checksum(Ipv4Addr::from(src), Ipv4Addr::from(dst), 6, &t);
    t[16..18].copy_from_slice(&c.to_be_bytes());
    Ip::new(src, dst, 6, &t).id(21).bytes()
}

/// NOP NOP SACK with the given blocks.
fn sack(blocks: &[(u32, u32)]) -> Vec<u8> {
    let mut o = vec![1, 1, 5, (2 + 8 * blocks.len()) as u8];
    for (l, r) in blocks {
        o.extend_from_slice(&l.to_be_bytes());
        o.extend_from_slice(&r.to_be_bytes());
    }
    o
}

/// Client 10.0.0.5 -> FTP server 8.8.8.8 through a NAT whose control
/// connection uses 1.0.0.1 and whose data connections use input 2's
/// 100.200.100.200 pattern.
const FTP: &str = "rw :: TCPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop,
    pattern 100.200.100.200 40000-65535# - - 0 1);
Idle -> a :: MarkIPHeader -> FTPPortMapper(rw, rw, 2) -> rw -> out0 :: Collect;
Idle -> b :: MarkIPHeader -> FTPPortMapper(rw, rw, 2) -> [1]rw[1] -> out1 :: Collect;
Idle -> [2]rw;";

fn one(sink: &str) -> Vec<u8> {
    let mut v = collected_data(sink);
    assert_eq!(v.len(), 1, "{sink}: {} packets", v.len());
    let d = v.pop().unwrap();
    assert_checksums(&d);
    clear_collected();
    d
}

#[test]
fn ftp_port_command_rewritten_and_sequence_numbers_shifted_both_ways() {
    clear_collected();
    let r = router(FTP);
    // a PORT on a connection the rewriter has not seen passes unchanged
    let port = b"PORT 10,0,0,5,200,10\r\n".to_vec();
    r.inject(
        "a",
        0,
        &[tcp_full(IN, 3333, SRV, 21, 1008, 7000, &[], &port)],
    );
    assert_eq!(
        one("out0"),
        tcp_full(NAT, 1024, SRV, 21, 1008, 7000, &[], &port)
    );
    assert!(r.read("rw.table").lines().count() == 2);

    // now it is mapped: the argument becomes the data mapping's address
    // and port (100.200.100.200:40000), 7 bytes longer
    r.inject(
        "a",
        0,
        &[tcp_full(IN, 3333, SRV, 21, 1030, 7000, &[], &port)],
    );
    assert_eq!(
        one("out0"),
        tcp_full(
            NAT,
            1024,
            SRV,
            21,
            1030,
            7000,
            &[],
            b"PORT 100,200,100,200,156,64\r\n"
        )
    );
    // the data connection's mapping exists, both ways
    assert_eq!(
        r.router
            .read_handler_param("rw.lookup", "10.0.0.5 51210 8.8.8.8 20")
            .unwrap(),
        "100.200.100.200 40000 8.8.8.8 20"
    );
    r.inject(
        "b",
        0,
        &[tcp_full(SRV, 20, DATA_NAT, 40000, 1, 0, &[], b"data")],
    );
    assert_eq!(
        one("out1"),
        tcp_full(SRV, 20, IN, 51210, 1, 0, &[], b"data")
    );

    // later client data moves up by 7; a retransmission of earlier data
    // keeps its sequence number
    r.inject(
        "a",
        0,
        &[tcp_full(IN, 3333, SRV, 21, 1052, 7000, &[], b"LIST\r\n")],
    );
    assert_eq!(
        one("out0"),
        tcp_full(NAT, 1024, SRV, 21, 1059, 7000, &[], b"LIST\r\n")
    );
    r.inject(
        "a",
        0,
        &[tcp_full(IN, 3333, SRV, 21, 1008, 7000, &[], b"USER x\r\n")],
    );
    assert_eq!(
        one("out0"),
        tcp_full(NAT, 1024, SRV, 21, 1008, 7000, &[], b"USER x\r\n")
    );
    assert!(
        r.read("rw.table")
            .contains("(10.0.0.5, 3333, 8.8.8.8, 21) => (1.0.0.1, 1024, 8.8.8.8, 21) seq +7 "),
        "{}",
        r.read("rw.table")
    );

    // the server's acknowledgements come back down by 7, SACK blocks too,
    // except for data before the PORT command's end
    r.inject(
        "b",
        0,
        &[tcp_full(SRV, 21, NAT, 1024, 7000, 1065, &[], b"")],
    );
    assert_eq!(
        one("out1"),
        tcp_full(SRV, 21, IN, 3333, 7000, 1058, &[], b"")
    );
    r.inject(
        "b",
        0,
        &[tcp_full(SRV, 21, NAT, 1024, 7000, 1030, &[], b"")],
    );
    assert_eq!(
        one("out1"),
        tcp_full(SRV, 21, IN, 3333, 7000, 1030, &[], b"")
    );
    r.inject(
        "b",
        0,
        &[tcp_full(
            SRV,
            21,
            NAT,
            1024,
            7000,
            1008,
            &sack(&[(1059, 1065), (1030, 1059)]),
            b"",
        )],
    );
    assert_eq!(
        one("out1"),
        tcp_full(
            SRV,
            21,
            IN,
            3333,
            7000,
            1008,
            &sack(&[(1052, 1058), (1030, 1052)]),
            b""
        )
    );
    // a NOP NOP timestamp option is not read as SACK
    let ts = [1, 1, 8, 10, 0, 0, 4, 0, 0, 0, 4, 1];
    r.inject(
        "b",
        0,
        &[tcp_full(SRV, 21, NAT, 1024, 7000, 1065, &ts, b"")],
    );
    assert_eq!(
        one("out1"),
        tcp_full(SRV, 21, IN, 3333, 7000, 1058, &ts, b"")
    );

    // a PORT command from the server (the reply direction), 1 byte shorter
    let big = b"PORT 200,200,200,200,200,200\r\n";
    r.inject(
        "b",
        0,
        &[tcp_full(SRV, 21, NAT, 1024, 7000, 1065, &[], big)],
    );
    assert_eq!(
        one("out1"),
        tcp_full(
            SRV,
            21,
            IN,
            3333,
            7000,
            1058,
            &[],
            b"PORT 100,200,100,200,156,65\r\n"
        )
    );
    r.inject(
        "b",
        0,
        &[tcp_full(SRV, 21, NAT, 1024, 7030, 1065, &[], b"226 ok\r\n")],
    );
    assert_eq!(
        one("out1"),
        tcp_full(SRV, 21, IN, 3333, 7029, 1058, &[], b"226 ok\r\n")
    );
    // the client acknowledges the server's shifted numbers; they go back up
    r.inject("a", 0, &[tcp_full(IN, 3333, SRV, 21, 1058, 7037, &[], b"")]);
    assert_eq!(
        one("out0"),
        tcp_full(NAT, 1024, SRV, 21, 1065, 7038, &[], b"")
    );
    r.inject("a", 0, &[tcp_full(IN, 3333, SRV, 21, 1058, 7010, &[], b"")]);
    assert_eq!(
        one("out0"),
        tcp_full(NAT, 1024, SRV, 21, 1065, 7010, &[], b"")
    );
    assert!(
        r.read("rw.table")
            .contains("(8.8.8.8, 21, 1.0.0.1, 1024) => (8.8.8.8, 21, 10.0.0.5, 3333) seq -1 "),
        "{}",
        r.read("rw.table")
    );
}

#[test]
fn ftp_second_port_command_stacks_deltas_and_old_ones_are_forgotten_after_1g() {
    clear_collected();
    let r = router(FTP);
    r.inject("a", 0, &[tcp_full(IN, 3333, SRV, 21, 0, 0, &[], b"x")]);
    let _ = one("out0");
    // +7 from 23, then +7 more from 52
    r.inject(
        "a",
        0,
        &[tcp_full(
            IN,
            3333,
            SRV,
            21,
            1,
            0,
            &[],
            b"PORT 10,0,0,5,200,10\r\n",
        )],
    );
    let _ = one("out0");
    r.inject(
        "a",
        0,
        &[tcp_full(
            IN,
            3333,
            SRV,
            21,
            30,
            0,
            &[],
            b"PORT 10,0,0,5,200,11\r\n",
        )],
    );
    assert_eq!(
        one("out0"),
        tcp_full(
            NAT,
            1024,
            SRV,
            21,
            37,
            0,
            &[],
            b"PORT 100,200,100,200,156,65\r\n"
        )
    );
    for (seq, want) in [(52u32, 66u32), (40, 47), (23, 30), (22, 22), (0, 0)] {
        r.inject("a", 0, &[tcp_full(IN, 3333, SRV, 21, seq, 0, &[], b"y")]);
        assert_eq!(
            one("out0"),
            tcp_full(NAT, 1024, SRV, 21, want, 0, &[], b"y"),
            "seq {seq}"
        );
    }
    for (ack, want) in [(66u32, 52u32), (37, 30), (30, 23), (29, 29)] {
        r.inject("b", 0, &[tcp_full(SRV, 21, NAT, 1024, 0, ack, &[], b"")]);
        assert_eq!(
            one("out1"),
            tcp_full(SRV, 21, IN, 3333, 0, want, &[], b""),
            "ack {ack}"
        );
    }
    // 2^30 past the last change: every client number moves by 14, even
    // old ones
    r.inject(
        "a",
        0,
        &[tcp_full(IN, 3333, SRV, 21, 1_100_000_000, 0, &[], b"1G")],
    );
    assert_eq!(
        one("out0"),
        tcp_full(NAT, 1024, SRV, 21, 1_100_000_014, 0, &[], b"1G")
    );
    r.inject("a", 0, &[tcp_full(IN, 3333, SRV, 21, 0, 0, &[], b"y")]);
    assert_eq!(one("out0"), tcp_full(NAT, 1024, SRV, 21, 14, 0, &[], b"y"));
    r.inject("b", 0, &[tcp_full(SRV, 21, NAT, 1024, 0, 14, &[], b"")]);
    assert_eq!(one("out1"), tcp_full(SRV, 21, IN, 3333, 0, 0, &[], b""));
}

#[test]
fn ftp_port_mapper_works_through_iprewriter_and_leaves_other_packets_alone() {
    clear_collected();
    let r = router(
        "rw :: IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop);
Idle -> a :: MarkIPHeader -> FTPPortMapper(rw, rw, 0) -> rw -> out0 :: Collect;
Idle -> [1]rw[1] -> out1 :: Collect;",
    );
    r.inject("a", 0, &[tcp_full(IN, 3333, SRV, 21, 0, 0, &[], b"x")]);
    let _ = one("out0");
    // 1.0.0.1:1025 is 4 bytes shorter than 10.0.0.5:51210
    r.inject(
        "a",
        0,
        &[tcp_full(
            IN,
            3333,
            SRV,
            21,
            1,
            0,
            &[],
            b"port  10,0,0,5,200,10\n",
        )],
    );
    assert_eq!(
        one("out0"),
        tcp_full(NAT, 1024, SRV, 21, 1, 0, &[], b"port  1,0,0,1,4,1\n")
    );
    r.inject("a", 0, &[tcp_full(IN, 3333, SRV, 21, 23, 0, &[], b"z")]);
    assert_eq!(one("out0"), tcp_full(NAT, 1024, SRV, 21, 19, 0, &[], b"z"));
    // not a complete PORT command, or a bad one: unchanged
    for p in [
        &b"PORT 10,0,0,5,200,10"[..],
        b"PORT 10,0,0,5,256,10\r\n",
        b"NOOP\r\nPORT 10,0,0,5,200,10\r\n",
        b"PORTX 10,0,0,5,200,10\r\n",
    ] {
        r.inject("a", 0, &[tcp_full(IN, 3333, SRV, 21, 30, 0, &[], p)]);
        assert_eq!(one("out0"), tcp_full(NAT, 1024, SRV, 21, 26, 0, &[], p));
    }
    assert_eq!(r.read("rw.table_size"), "2");
}

#[test]
fn ftp_port_mapper_configuration_errors() {
    let e = try_router("c :: Counter; Idle -> FTPPortMapper(c, c, 0) -> c -> Discard;")
        .err()
        .expect("a Counter is no rewriter");
    assert!(e.join("\n").contains("CONTROL_REWRITER"), "{e:?}");
    let e = try_router("u :: UDPRewriter(drop); Idle -> FTPPortMapper(u, u, 0) -> u -> Discard;")
        .err()
        .expect("a UDPRewriter has no sequence numbers");
    assert!(e.join("\n").contains("CONTROL_REWRITER"), "{e:?}");
    let e =
        try_router("rw :: TCPRewriter(drop); Idle -> FTPPortMapper(rw, rw, 1) -> rw -> Discard;")
            .err()
            .expect("input 1 out of range");
    assert!(
        e.join("\n").contains("DATA_REWRITER_INPUT out of range"),
        "{e:?}"
    );
}
