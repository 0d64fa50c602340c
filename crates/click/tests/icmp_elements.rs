//! ICMPError, ICMPPingResponder and CheckICMPHeader on real packets.

mod frames;
#[path = "ip_harness.rs"]
mod ip_harness;

use click::prelude::{Clock, Packet, Timestamp};
use frames::*;
use ip_harness::*;

const HOST: Ip4 = [192, 168, 1, 10];
const FAR: Ip4 = [10, 9, 9, 9];
const RTR: Ip4 = [10, 0, 0, 1];

fn udp_pkt(src: Ip4, dst: Ip4, ttl: u8, n: usize) -> Ip {
    let payload: Vec<u8> = (0..n).map(|i| i as u8).collect();
    Ip::new(src, dst, 17, &udp(4000, 53, &payload))
        .ttl(ttl)
        .id(0x4242)
}

/// The error ICMPError(RTR, ty, code) should send for `orig`, by hand.
fn expected_error(ty: u8, code: u8, rest: [u8; 4], quote: &[u8], id: u16, to: Ip4) -> Vec<u8> {
    Ip::new(RTR, to, 1, &icmp(ty, code, rest, quote))
        .ttl(200)
        .id(id)
        .bytes()
}

#[test]
fn icmperror_time_exceeded_exact_bytes() {
    clear_collected();
    let r = router(
        "Idle -> c :: CheckIPHeader -> e :: ICMPError(10.0.0.1, timeexceeded) -> out :: Collect;",
    );
    let orig = udp_pkt(HOST, FAR, 1, 30).bytes();
    r.inject("c", 0, &[orig.clone(), orig.clone()]);
    let got = collected("out");
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].data, expected_error(11, 0, [0; 4], &orig, 1, HOST));
    assert_eq!(got[1].data, expected_error(11, 0, [0; 4], &orig, 2, HOST));
    // IP total length, TTL 200, protocol 1, checksums verify.
    let d = &got[0].data;
    assert_eq!(d.len(), 20 + 8 + orig.len());
    assert_eq!(u16::from_be_bytes([d[2], d[3]]) as usize, d.len());
    assert_eq!(csum(&d[..20]), 0);
    assert_eq!(csum(&d[20..]), 0);
    // Annotations: destination, fix-IP-source, header offsets, timestamp.
    assert_eq!(got[0].anno.dst_ip().octets(), HOST);
    assert_eq!(got[0].anno.u8_at(19), 1);
    assert_eq!(got[0].network_header_offset, Some(0));
    assert_eq!(got[0].transport_header_offset, Some(20));
    assert_eq!(got[0].anno.timestamp, r.clock.now());
    assert_eq!(r.read("e.drops"), "0");

    // USE_FIX_ANNO false; numeric TYPE and CODE.
    clear_collected();
    let r = router(
        "Idle -> c :: CheckIPHeader -> ICMPError(10.0.0.1, 11, 1, USE_FIX_ANNO false) -> out :: Collect;",
    );
    r.inject("c", 0, std::slice::from_ref(&orig));
    let got = collected("out");
    assert_eq!(got[0].data, expected_error(11, 1, [0; 4], &orig, 1, HOST));
    assert_eq!(got[0].anno.u8_at(19), 0);
}

#[test]
fn icmperror_mtu_limits_the_quote() {
    clear_collected();
    let r = router("Idle -> c :: CheckIPHeader -> e :: ICMPError(10.0.0.1, unreachable, port) -> out :: Collect;");
    let big = udp_pkt(HOST, FAR, 64, 1000).bytes();
    r.inject("c", 0, std::slice::from_ref(&big));
    let d = &collected("out")[0].data;
    assert_eq!(d.len(), 576);
    assert_eq!(*d, expected_error(3, 3, [0; 4], &big[..548], 1, HOST));
    // The mtu handler changes it on the fly.
    clear_collected();
    r.write("e.mtu", "100").unwrap();
    assert_eq!(r.read("e.mtu"), "100");
    r.inject("c", 0, std::slice::from_ref(&big));
    assert_eq!(
        collected("out")[0].data,
        expected_error(3, 3, [0; 4], &big[..72], 2, HOST)
    );
    r.write("e.src", "10.0.0.77").unwrap();
    assert_eq!(r.read("e.src"), "10.0.0.77");
    assert!(r.write("e.src", "bogus").is_err());
}

#[test]
fn icmperror_never_answers_what_rfc1812_forbids() {
    clear_collected();
    let r = router(
        "Idle -> c :: CheckIPHeader -> e :: ICMPError(10.0.0.1, timeexceeded, BADADDRS 192.168.1.255 10.9.9.255) -> out :: Collect;",
    );
    let err_in = Ip::new(
        FAR,
        HOST,
        1,
        &icmp(3, 1, [0; 4], &udp_pkt(HOST, FAR, 9, 4).bytes()[..28]),
    )
    .ttl(1);
    let echo_in = Ip::new(HOST, FAR, 1, &echo(7, 1, b"hello")).ttl(1);
    let short_icmp = Ip::new(HOST, FAR, 1, &[8, 0, 0]).ttl(1);
    let suppressed = vec![
        err_in.bytes(),
        short_icmp.bytes(),
        udp_pkt(HOST, [255, 255, 255, 255], 1, 4).bytes(),
        udp_pkt(HOST, [224, 0, 0, 5], 1, 4).bytes(),
        udp_pkt(HOST, [10, 9, 9, 255], 1, 4).bytes(),
        udp_pkt([192, 168, 1, 255], FAR, 1, 4).bytes(),
        udp_pkt([0, 1, 2, 3], FAR, 1, 4).bytes(),
        udp_pkt([127, 0, 0, 1], FAR, 1, 4).bytes(),
        udp_pkt([224, 1, 1, 1], FAR, 1, 4).bytes(),
        udp_pkt([240, 1, 1, 1], FAR, 1, 4).bytes(),
        udp_pkt([255, 255, 255, 255], FAR, 1, 4).bytes(),
        udp_pkt(HOST, FAR, 1, 40).frag(0x2000 | 8).bytes(),
    ];
    r.inject("c", 0, &suppressed);
    assert!(collected("out").is_empty());
    assert_eq!(r.read("e.drops"), suppressed.len().to_string());
    // An echo request, and a first fragment, do get errors.
    let first_frag = udp_pkt(HOST, FAR, 1, 40).frag(0x2000).bytes();
    r.inject("c", 0, &[echo_in.bytes(), first_frag.clone()]);
    assert_eq!(
        collected_data("out"),
        vec![
            expected_error(11, 0, [0; 4], &echo_in.bytes(), 1, HOST),
            expected_error(11, 0, [0; 4], &first_frag, 2, HOST)
        ]
    );

    // Link-level broadcasts and multicasts (packet type annotation).
    clear_collected();
    let r = router(
        "Idle -> h :: HostEtherFilter(00:00:C0:AE:67:EF) -> Strip(14) -> CheckIPHeader -> e :: ICMPError(10.0.0.1, timeexceeded) -> out :: Collect;",
    );
    let ip = udp_pkt(HOST, FAR, 1, 8).bytes();
    let me = [0x00, 0x00, 0xc0, 0xae, 0x67, 0xef];
    let a = [0x52, 0x54, 0, 0, 0, 1];
    r.inject(
        "h",
        0,
        &[
            eth(BCAST, a, 0x0800, &ip),
            eth([1, 0, 0x5e, 0, 0, 1], a, 0x0800, &ip),
            eth(me, a, 0x0800, &ip),
        ],
    );
    assert_eq!(
        collected_data("out"),
        vec![expected_error(11, 0, [0; 4], &ip, 1, HOST)]
    );
    assert_eq!(r.read("e.drops"), "2");

    // Malformed input never panics: no network header, short headers.
    let r = router("Idle -> e :: ICMPError(10.0.0.1, timeexceeded) -> Discard;");
    r.inject("e", 0, &[vec![], vec![0x45; 10]]);
    let mut p = r.router.pool().make(
        64,
        &[
            0x4f, 0, 0, 20, 0, 0, 0, 0, 1, 17, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8,
        ],
        0,
    );
    p.set_network_header(0, 20);
    r.router.inject("e", 0, p).unwrap();
    assert_eq!(r.read("e.drops"), "3");
}

#[test]
fn icmperror_redirect_needfrag_paramprob() {
    clear_collected();
    // Redirect: the gateway comes from the destination annotation, which
    // the route lookup set.
    let r = router(
        "Idle -> c :: CheckIPHeader -> RadixIPLookup(0.0.0.0/0 10.0.0.254 0) -> ICMPError(10.0.0.1, redirect, host) -> out :: Collect;",
    );
    let orig = udp_pkt(HOST, FAR, 64, 12).bytes();
    r.inject("c", 0, std::slice::from_ref(&orig));
    assert_eq!(
        collected_data("out"),
        vec![expected_error(5, 1, [10, 0, 0, 254], &orig, 1, HOST)]
    );

    clear_collected();
    let r = router(
        "Idle -> c :: CheckIPHeader -> e :: ICMPError(10.0.0.1, unreachable, needfrag, PMTU 1400) -> out :: Collect;",
    );
    r.inject("c", 0, std::slice::from_ref(&orig));
    assert_eq!(
        collected_data("out"),
        vec![expected_error(3, 4, [0, 0, 0x05, 0x78], &orig, 1, HOST)]
    );
    assert_eq!(r.read("e.pmtu"), "1400");

    // Parameter problem: the pointer comes from the annotation (code 0
    // only).
    clear_collected();
    let r = router(
        "Idle -> e0 :: ICMPError(10.0.0.1, parameterproblem) -> out :: Collect;
         Idle -> e1 :: ICMPError(10.0.0.1, parameterproblem, missingopt) -> out;",
    );
    for e in ["e0", "e1"] {
        let mut p = r.router.pool().make(64, &orig, 0);
        p.set_network_header(0, 20);
        p.anno_mut().set_u8_at(17, 22);
        r.router.inject(e, 0, p).unwrap();
    }
    assert_eq!(
        collected_data("out"),
        vec![
            expected_error(12, 0, [22, 0, 0, 0], &orig, 1, HOST),
            expected_error(12, 1, [0; 4], &orig, 1, HOST)
        ]
    );
}

#[test]
fn icmperror_reverses_source_routes() {
    // LSRR: type 131, length 11, pointer 8 -- the first hop (10.1.1.1)
    // has been visited, 10.2.2.2 is next; NOP-padded to 12 bytes.
    let opts = [131, 11, 8, 10, 1, 1, 1, 10, 2, 2, 2, 1];
    let orig = udp_pkt(HOST, FAR, 1, 8).options(&opts).bytes();
    clear_collected();
    let r = router(
        "Idle -> c :: CheckIPHeader -> ICMPError(10.0.0.1, timeexceeded) -> out :: Collect;
         Idle -> c2 :: CheckIPHeader -> ICMPError(10.0.0.1, redirect) -> out;
         Idle -> pp :: ICMPError(10.0.0.1, parameterproblem) -> out;",
    );
    r.inject("c", 0, std::slice::from_ref(&orig));
    let mut want = Ip::new(RTR, HOST, 1, &icmp(11, 0, [0; 4], &orig))
        .ttl(200)
        .id(1);
    // The reversed route so far: type, length 7, pointer 4, 10.1.1.1, EOL.
    want.options = vec![131, 7, 4, 10, 1, 1, 1, 0];
    assert_eq!(collected_data("out"), vec![want.bytes()]);
    // No redirects for source-routed packets.
    r.inject("c2", 0, std::slice::from_ref(&orig));
    assert_eq!(collected_data("out").len(), 1);
    // A parameter problem pointing into the option does not copy it.
    let mut p = r.router.pool().make(64, &orig, 0);
    p.set_network_header(0, 32);
    p.anno_mut().set_u8_at(17, 22);
    r.router.inject("pp", 0, p).unwrap();
    assert_eq!(
        collected_data("out")[1],
        expected_error(12, 0, [22, 0, 0, 0], &orig, 1, HOST)
    );
}

#[test]
fn icmperror_configuration_errors() {
    let err = |c: &str| {
        try_router(&format!("Idle -> {} -> Discard;", c))
            .err()
            .expect("should fail")
            .join("\n")
    };
    assert!(err("ICMPError(10.0.0.1, echo)").contains("ICMP type 8 is not an error type"));
    assert!(err("ICMPError(10.0.0.1, 300)").contains("ICMP type must be between 0 and 255"));
    assert!(err("ICMPError(10.0.0.1, unreachable, bogus)")
        .contains("argument 2 takes ICMP code (integer between 0 and 255)"));
    assert!(err("ICMPError(10.0.0.1, nonsense)").contains("TYPE: expected ICMP type"));
    assert!(err("ICMPError(10.0.0.1)").contains("missing mandatory TYPE argument"));
    assert!(err("ICMPError(10.0.0.1, 3, BADADDRS 1.2.3)").contains("BADADDRS"));
}

// ---- ICMPPingResponder ------------------------------------------------------

#[test]
fn pingresponder_replies_in_place() {
    clear_collected();
    let r = router(
        "Idle -> c :: CheckIPHeader -> Paint(5) -> ping :: ICMPPingResponder;
         ping[0] -> out :: Collect; ping[1] -> other :: Collect;",
    );
    let mut req = Ip::new(HOST, RTR, 1, &echo(0x77, 3, b"abcdefghijklmnopqrstuvwxyz"))
        .ttl(61)
        .id(0x9999)
        .frag(0x4000);
    req.tos = 0x10;
    let mut want = Ip::new(
        RTR,
        HOST,
        1,
        &icmp(0, 0, [0, 0x77, 0, 3], b"abcdefghijklmnopqrstuvwxyz"),
    )
    .ttl(255)
    .id(0x9999);
    want.tos = 0x10;
    r.clock.set(Timestamp::from_sec_usec(1_000_000_123, 456));
    r.inject("c", 0, &[req.bytes()]);
    let got = collected("out");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].data, want.bytes());
    assert_eq!(got[0].anno.dst_ip().octets(), HOST);
    assert_eq!(got[0].anno.paint(), 0);
    assert_eq!(
        got[0].anno.timestamp,
        Timestamp::from_sec_usec(1_000_000_123, 456)
    );

    // The real capture's echo request (record 15) gets a valid reply.
    clear_collected();
    let pkts = capture("mixed.pcap");
    let ip = pkts[15][14..].to_vec();
    r.inject("c", 0, std::slice::from_ref(&ip));
    let d = &collected("out")[0].data;
    assert_eq!(&d[12..16], &ip[16..20]);
    assert_eq!(&d[16..20], &ip[12..16]);
    assert_eq!(d[8], 255);
    assert_eq!(d[20], 0);
    assert_eq!(csum(&d[..20]), 0);
    assert_eq!(csum(&d[20..]), 0);
    assert_eq!(&d[24..], &ip[24..]);

    // Everything else goes to output 1 untouched.
    let others = vec![
        pkts[16][14..].to_vec(),                         // echo reply
        pkts[17][14..].to_vec(),                         // unreachable
        udp_pkt(HOST, RTR, 64, 10).bytes(),              // UDP
        Ip::new(HOST, RTR, 1, &[8, 0, 0, 0, 0]).bytes(), // short ICMP
    ];
    r.inject("c", 0, &others);
    assert_eq!(collected_data("other"), others);
    assert_eq!(collected_data("out").len(), 1);

    // A bad checksum stays bad (incremental update).
    clear_collected();
    let mut bad = req.bytes();
    bad[24] ^= 0xff;
    r.inject("c", 0, &[bad]);
    let d = &collected("out")[0].data;
    assert_eq!(csum(&d[..20]), 0);
    assert_ne!(csum(&d[20..]), 0);

    // One output: non-echo packets are dropped; a packet without an IP
    // header annotation is not an echo request.
    clear_collected();
    let r = router("Idle -> ping :: ICMPPingResponder -> out :: Collect;");
    r.inject("ping", 0, &[req.bytes()]);
    assert!(collected("out").is_empty());
    let mut p = Packet::from_slice(&req.bytes());
    p.set_network_header(0, 20);
    r.router.inject("ping", 0, p).unwrap();
    assert_eq!(collected("out").len(), 1);
}

// ---- CheckICMPHeader --------------------------------------------------------

#[test]
fn checkicmpheader_checks() {
    clear_collected();
    let r = router(
        "Idle -> c :: CheckIPHeader -> ch :: CheckICMPHeader(DETAILS true); ch[0] -> ok :: Collect; ch[1] -> bad :: Collect;",
    );
    let pkts = capture("mixed.pcap");
    let good: Vec<Vec<u8>> = [15usize, 16, 17, 18, 46]
        .iter()
        .map(|&i| pkts[i][14..].to_vec())
        .collect();
    r.inject("c", 0, &good);
    assert_eq!(collected_data("ok"), good);
    let mut badsum = good[0].clone();
    let n = badsum.len();
    badsum[n - 1] ^= 1;
    let bad = vec![
        udp_pkt(HOST, RTR, 64, 4).bytes(),
        Ip::new(HOST, RTR, 1, &[8, 0, 0xf7, 0xff]).bytes(),
        Ip::new(HOST, RTR, 1, &icmp(3, 1, [0; 4], &[0; 27])).bytes(),
        Ip::new(HOST, RTR, 1, &icmp(13, 0, [0; 4], &[0; 13])).bytes(),
        Ip::new(HOST, RTR, 1, &icmp(15, 0, [0; 4], &[0; 1])).bytes(),
        badsum,
    ];
    r.inject("c", 0, &bad);
    assert_eq!(collected_data("bad"), bad);
    assert_eq!(r.read("ch.drops"), "6");
    assert_eq!(
        r.read("ch.drop_details"),
        "1\tnot ICMP\n4\tbad packet length\n1\tbad ICMP checksum\n"
    );
    assert_eq!(r.stderr(), "ch: ICMP header check failed: not ICMP\n");
    // Exact-length timestamp and info messages pass.
    clear_collected();
    let ok2 = vec![
        Ip::new(HOST, RTR, 1, &icmp(13, 0, [0; 4], &[0; 12])).bytes(),
        Ip::new(HOST, RTR, 1, &icmp(16, 0, [0; 4], &[])).bytes(),
        Ip::new(HOST, RTR, 1, &icmp(3, 1, [0; 4], &[0; 28])).bytes(),
    ];
    r.inject("c", 0, &ok2);
    assert_eq!(collected_data("ok"), ok2);

    // Without a second output bad packets are dropped; VERBOSE reports
    // each; no annotation means "not ICMP".
    let r = router("Idle -> ch :: CheckICMPHeader(VERBOSE true) -> c :: Counter -> Discard;");
    r.inject("ch", 0, &[good[0].clone()]);
    let mut p = Packet::from_slice(&good[0]);
    p.set_network_header(0, 20);
    r.router.inject("ch", 0, p).unwrap();
    let mut p = Packet::from_slice(&good[0][..24]);
    p.set_network_header(0, 20);
    r.router.inject("ch", 0, p).unwrap();
    assert_eq!(r.read("c.count"), "1");
    assert_eq!(r.read("ch.drops"), "2");
    assert_eq!(
        r.stderr(),
        "ch: ICMP header check failed: not ICMP\nch: ICMP header check failed: bad packet length\n"
    );
}
