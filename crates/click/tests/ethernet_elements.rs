//! EtherEncap, EtherMirror, EtherRewrite, StoreEtherAddress and
//! HostEtherFilter on real captures.

#[path = "ip_harness.rs"]
mod ip_harness;
use click::prelude::PacketType;
use ip_harness::*;

const A: [u8; 6] = [0x52, 0x54, 0, 0, 0, 1];
const B: [u8; 6] = [0x52, 0x54, 0, 0, 0, 2];

#[test]
fn etherencap_and_handlers() {
    let pkts = capture("raw.pcap");
    let cfg = "src :: BatchSrc -> e :: EtherEncap(0x0800, 1:2:3:4:5:6, 52:54:00:00:00:02) -> o :: Collect;";
    let (r, seen) = run_both(cfg, &pkts, &["o"]);
    assert_eq!(seen[0].len(), pkts.len());
    for (s, d) in seen[0].iter().zip(&pkts) {
        assert_eq!(&s.data[..6], &B);
        assert_eq!(&s.data[6..12], &[1, 2, 3, 4, 5, 6]);
        assert_eq!(&s.data[12..14], &[8, 0]);
        assert_eq!(&s.data[14..], &d[..]);
    }
    assert_eq!(r.read("e.src"), "01-02-03-04-05-06");
    assert_eq!(r.read("e.dst"), "52-54-00-00-00-02");
    assert_eq!(r.read("e.ethertype"), "2048");
    r.write("e.dst", "52:54:00:00:00:01").unwrap();
    r.write("e.ethertype", "0x86dd").unwrap();
    assert_eq!(r.read("e.dst"), "52-54-00-00-00-01");
    assert_eq!(r.read("e.etht"), "34525");
    assert_eq!(r.read("e.config"), "0x86dd, 1:2:3:4:5:6, 52:54:00:00:00:01");
    assert!(r.write("e.src", "nonsense").is_err());
    assert_eq!(r.read("e.src"), "01-02-03-04-05-06");
    clear_collected();
    r.inject("e", 0, &pkts[..1]);
    let s = &collected("o")[0];
    assert_eq!(
        &s.data[..14],
        &[0x52, 0x54, 0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 0x86, 0xdd]
    );

    let e =
        try_router("InfiniteSource(LIMIT 0) -> e :: EtherEncap(0x0800, 1:2:3:4:5:6) -> Discard;")
            .err()
            .unwrap();
    assert!(
        e.iter()
            .any(|l| l.ends_with("missing mandatory DST argument")),
        "{:?}",
        e
    );
}

#[test]
fn ethermirror_and_etherrewrite() {
    let pkts = capture("mixed.pcap");
    let (_r, seen) = run_both(
        "src :: BatchSrc -> EtherMirror -> o :: Collect;",
        &pkts,
        &["o"],
    );
    for (s, d) in seen[0].iter().zip(&pkts) {
        if d.len() >= 12 {
            assert_eq!(&s.data[..6], &d[6..12]);
            assert_eq!(&s.data[6..12], &d[..6]);
            assert_eq!(&s.data[12..], &d[12..]);
        } else {
            assert_eq!(&s.data, d);
        }
    }
    let (r, seen) = run_both(
        "src :: BatchSrc -> w :: EtherRewrite(SRC 52:54:00:00:00:01, DST 52:54:00:00:00:02) -> o :: Collect;",
        &pkts,
        &["o"],
    );
    for (s, d) in seen[0].iter().zip(&pkts) {
        if d.len() >= 12 {
            assert_eq!(&s.data[..6], &B);
            assert_eq!(&s.data[6..12], &A);
            assert_eq!(&s.data[12..], &d[12..]);
        }
    }
    assert_eq!(r.read("w.src"), "52-54-00-00-00-01");
    r.write("w.src", "00:00:00:00:00:09").unwrap();
    assert_eq!(r.read("w.src"), "00-00-00-00-00-09");
    assert_eq!(r.read("w.dst"), "52-54-00-00-00-02");
}

#[test]
fn storeetheraddress() {
    let pkts = capture("mixed.pcap");
    let cfg = "src :: BatchSrc -> s :: StoreEtherAddress(0:0:0:0:0:7, src); s[0] -> o :: Collect; s[1] -> short :: Collect;";
    let (r, seen) = run_both(cfg, &pkts, &["o", "short"]);
    assert_eq!(seen[1].len(), 1, "the 10-byte runt");
    assert_eq!(seen[1][0].data, pkts[32]);
    for s in &seen[0] {
        assert_eq!(&s.data[6..12], &[0, 0, 0, 0, 0, 7]);
    }
    assert_eq!(r.read("s.addr"), "00-00-00-00-00-07");
    r.write("s.addr", "1:1:1:1:1:1").unwrap();
    assert_eq!(r.read("s.addr"), "01-01-01-01-01-01");
    let e =
        try_router("InfiniteSource(LIMIT 0) -> StoreEtherAddress(1:1:1:1:1:1, foo) -> Discard;")
            .err()
            .unwrap();
    assert!(
        e.iter().any(|l| l.ends_with("type mismatch: bad OFFSET")),
        "{:?}",
        e
    );
    let e = try_router("InfiniteSource(LIMIT 0) -> StoreEtherAddress(OFFSET 0) -> Discard;")
        .err()
        .unwrap();
    assert!(
        e.iter()
            .any(|l| l.ends_with("must specify exactly one of ADDR/ANNO")),
        "{:?}",
        e
    );
}

#[test]
fn hostetherfilter_packet_types() {
    let pkts = capture("mixed.pcap");
    let cfg = "src :: BatchSrc -> h :: HostEtherFilter(52:54:00:00:00:02); h[0] -> o :: Collect; h[1] -> x :: Collect;";
    let (r, seen) = run_both(cfg, &pkts, &["o", "x"]);
    let mut exp_o = Vec::new();
    let mut exp_x = Vec::new();
    for d in &pkts {
        if d.len() < 12 {
            exp_x.push((d.clone(), PacketType::Host));
            continue;
        }
        let t = if d[..6] == B {
            PacketType::Host
        } else if d[..6] == [0xff; 6] {
            PacketType::Broadcast
        } else if d[0] & 1 != 0 {
            PacketType::Multicast
        } else {
            PacketType::OtherHost
        };
        if t == PacketType::OtherHost {
            exp_x.push((d.clone(), t));
        } else {
            exp_o.push((d.clone(), t));
        }
    }
    let got = |v: &Vec<Seen>| {
        v.iter()
            .map(|s| (s.data.clone(), s.anno.packet_type))
            .collect::<Vec<_>>()
    };
    assert_eq!(got(&seen[0]), exp_o);
    assert_eq!(got(&seen[1]), exp_x);
    assert!(exp_o.iter().any(|x| x.1 == PacketType::Broadcast));
    assert!(exp_x.len() > 1);
    assert_eq!(r.read("h.ether"), "52-54-00-00-00-02");

    // DROP_OWN: frames from A go to output 1; DROP_OTHER false keeps others.
    let r = run_with(
        "src :: BatchSrc -> h :: HostEtherFilter(52:54:00:00:00:01, true, false); h[0] -> o :: Collect; h[1] -> x :: Collect;",
        &pkts,
        32,
    );
    let own = pkts
        .iter()
        .filter(|d| d.len() >= 12 && d[6..12] == A)
        .count();
    let short = pkts.iter().filter(|d| d.len() < 12).count();
    assert_eq!(collected("x").len(), own + short);
    assert_eq!(collected("o").len(), pkts.len() - own - short);
    drop(r);
}

/// Writing a handler rewrites the configuration the way Click's
/// reconfigure_keyword_handler does: in place when the argument is there
/// (by keyword or position), appended as a keyword after keyword
/// arguments, and an argument that merely equals a keyword's name (an
/// AddressInfo called SRC) is not that keyword.
#[test]
fn handler_writes_rewrite_the_configuration() {
    let r = router(
        "AddressInfo(SRC 00:01:02:03:04:05);
         Idle -> e :: EtherEncap(0x0800, SRC, 00:01:02:03:04:06) -> Discard;
         Idle -> v :: VLANEncap(VLAN_PCP 3) -> Discard;",
    );
    r.write("e.dst", "00:00:00:00:00:07").unwrap();
    assert_eq!(r.read("e.config"), "0x0800, SRC, 00:00:00:00:00:07");
    assert_eq!(r.read("e.src"), "00-01-02-03-04-05");
    assert_eq!(r.read("e.dst"), "00-00-00-00-00-07");
    r.write("e.src", "00:00:00:00:00:08").unwrap();
    assert_eq!(
        r.read("e.config"),
        "0x0800, 00:00:00:00:00:08, 00:00:00:00:00:07"
    );
    r.write("v.vlan_tci", "7").unwrap();
    assert_eq!(r.read("v.config"), "VLAN_PCP 3, VLAN_TCI 7");
    assert_eq!(r.read("v.vlan_tci"), ((3 << 13) | 7).to_string());
}
