//! StoreIPAddress, SetIPDSCP, MarkIPCE, CheckIPHeader2, IPMirror,
//! IPInputCombo, IPOutputCombo, ICMPPingEncap and RangeIPLookup on real
//! packets (the captures in `tests/data/` and packets built independently
//! in `ip_pkt.rs`).

#[path = "ip_harness.rs"]
mod ip_harness;
#[path = "ip_pkt.rs"]
mod ip_pkt;
use ip_harness::*;
use ip_pkt::*;

fn config_error(config: &str) -> String {
    match try_build(config, 32) {
        Ok(_) => panic!("configuration should fail: {}", config),
        Err(e) => e.join("\n"),
    }
}

// ---- StoreIPAddress ------------------------------------------------------------

#[test]
fn storeipaddress_click_test_bytes() {
    // Click's StoreIPAddress-01 test: 20 bytes of 0x99 with the IP header
    // annotation at 0 and destination annotation 1.0.0.2.
    let p = vec![0x99u8; 20];
    let cfg = "src :: BatchSrc -> MarkIPHeader(0) -> SetIPAddress(1.0.0.2) -> s :: StoreIPAddress(ARG) -> out :: Collect;";
    // (arguments, [(offset, bytes expected there)]).
    type Case<'a> = (&'a str, &'a [(usize, &'a [u8])]);
    let cases: &[Case] = &[
        ("0", &[(0, &[1, 0, 0, 2])]),
        ("1.0.0.3, 4", &[(4, &[1, 0, 0, 3])]),
        ("src", &[(10, &[0xcb, 0xca]), (12, &[1, 0, 0, 2])]),
        ("dst", &[(10, &[0xcb, 0xca]), (16, &[1, 0, 0, 2])]),
        ("1.0.0.4, DST", &[(10, &[0xcb, 0xc8]), (16, &[1, 0, 0, 4])]),
    ];
    for (arg, changes) in cases {
        let mut want = p.clone();
        for (at, bytes) in changes.iter() {
            want[*at..*at + bytes.len()].copy_from_slice(bytes);
        }
        let (_r, seen) = run_both(&cfg.replace("ARG", arg), std::slice::from_ref(&p), &["out"]);
        assert_eq!(seen[0].len(), 1, "{}", arg);
        assert_eq!(seen[0][0].data, want, "StoreIPAddress({})", arg);
    }
}

#[test]
fn storeipaddress_offsets_on_capture() {
    let pkts = mixed();
    // Valid IPv4 frames: the destination annotation lands on bytes 0..4.
    let valid = [0usize, 3, 10, 13, 15, 17];
    let input: Vec<Vec<u8>> = valid.iter().map(|&i| pkts[i].clone()).collect();
    let (_r, seen) = run_both(
        "src :: BatchSrc -> CheckIPHeader(14) -> StoreIPAddress(0) -> out :: Collect;",
        &input,
        &["out"],
    );
    let want: Vec<Vec<u8>> = input
        .iter()
        .map(|f| {
            let mut w = f.clone();
            w.copy_within(30..34, 0);
            w
        })
        .collect();
    let got: Vec<Vec<u8>> = seen[0].iter().map(|s| s.data.clone()).collect();
    assert_eq!(got, want);

    // A zero annotation with a numeric offset, or a packet too short for
    // OFFSET: unchanged, to output 1 (or dropped without it).
    let short = vec![1u8, 2, 3, 4, 5, 6];
    let cfg = "src :: BatchSrc -> s :: StoreIPAddress(OFFSET 3) -> out :: Collect; s[1] -> bad :: Collect;";
    run_with(cfg, &[short.clone(), pkts[0].clone()], 32);
    assert!(data("out").is_empty());
    assert_eq!(data("bad"), vec![short.clone(), pkts[0].clone()]);
    let cfg = "src :: BatchSrc -> s :: StoreIPAddress(9.8.7.6, 3) -> out :: Collect; s[1] -> bad :: Collect;";
    run_with(cfg, &[short.clone(), pkts[0].clone()], 1);
    let mut want0 = pkts[0].clone();
    want0[3..7].copy_from_slice(&[9, 8, 7, 6]);
    assert_eq!(data("out"), vec![want0]);
    assert_eq!(data("bad"), vec![short.clone()]);
    // ADDR 0.0.0.0 is stored.
    run_with(
        "src :: BatchSrc -> StoreIPAddress(0.0.0.0, 2) -> out :: Collect;",
        &[short],
        1,
    );
    assert_eq!(data("out"), vec![vec![1u8, 2, 0, 0, 0, 0]]);
}

#[test]
fn storeipaddress_src_dst_update_checksums() {
    let base = Ip {
        src: [10, 0, 0, 1],
        dst: [10, 0, 0, 2],
        ..Ip::default()
    };
    let moved = Ip {
        src: [192, 0, 2, 77],
        ..base.clone()
    };
    let udp = base.udp(1234, 53, b"query bytes");
    let tcp = base.tcp(40000, 80, 7, 9, 0x18, 512, &[], b"GET /");
    let mut udp0 = udp.clone();
    udp0[26] = 0;
    udp0[27] = 0; // no UDP checksum
    let (_r, seen) = run_both(
        "src :: BatchSrc -> CheckIPHeader -> StoreIPAddress(192.0.2.77, src) -> out :: Collect;",
        &[udp.clone(), tcp.clone(), udp0.clone()],
        &["out"],
    );
    let mut want_udp0 = moved.udp(1234, 53, b"query bytes");
    want_udp0[26] = 0;
    want_udp0[27] = 0;
    let got: Vec<Vec<u8>> = seen[0].iter().map(|s| s.data.clone()).collect();
    assert_eq!(
        got,
        vec![
            moved.udp(1234, 53, b"query bytes"),
            moved.tcp(40000, 80, 7, 9, 0x18, 512, &[], b"GET /"),
            want_udp0,
        ]
    );

    // The destination annotation into dst (CheckIPHeader set it to the
    // destination; SetIPAddress changes it).
    run_with(
        "src :: BatchSrc -> CheckIPHeader -> SetIPAddress(172.16.9.9) -> StoreIPAddress(dst) -> out :: Collect;",
        std::slice::from_ref(&udp),
        32,
    );
    let to = Ip {
        dst: [172, 16, 9, 9],
        ..base.clone()
    };
    assert_eq!(data("out"), vec![to.udp(1234, 53, b"query bytes")]);

    // A later fragment: only the IP checksum changes.
    let frag = Ip {
        flags_off: 5,
        ..base.clone()
    }
    .packet(&udp[20..]);
    run_with(
        "src :: BatchSrc -> CheckIPHeader -> StoreIPAddress(192.0.2.77, src) -> out :: Collect;",
        std::slice::from_ref(&frag),
        32,
    );
    let want = Ip {
        flags_off: 5,
        ..moved.clone()
    }
    .packet(&udp[20..]);
    assert_eq!(data("out"), vec![want]);

    // No IP header annotation: output 1; truncated header: output 1.
    run_with(
        "src :: BatchSrc -> s :: StoreIPAddress(1.1.1.1, src) -> out :: Collect; s[1] -> bad :: Collect;",
        std::slice::from_ref(&udp),
        32,
    );
    assert!(data("out").is_empty());
    assert_eq!(data("bad"), vec![udp.clone()]);
    let tiny = udp[..12].to_vec();
    run_with(
        "src :: BatchSrc -> MarkIPHeader -> s :: StoreIPAddress(1.1.1.1, dst) -> out :: Collect; s[1] -> bad :: Collect;",
        std::slice::from_ref(&tiny),
        32,
    );
    assert_eq!(data("bad"), vec![tiny.clone()]);
    // Without output 1 they are dropped.
    let r = run_with(
        "src :: BatchSrc -> MarkIPHeader -> StoreIPAddress(1.1.1.1, dst) -> out :: Collect;",
        &[tiny],
        32,
    );
    assert!(data("out").is_empty());
    assert_eq!(r.stderr(), "");
}

#[test]
fn storeipaddress_config_errors() {
    let e = config_error("src :: BatchSrc -> StoreIPAddress(banana) -> Collect;");
    assert!(
        e.contains("type mismatch: OFFSET requires integer"),
        "{}",
        e
    );
    let e = config_error("src :: BatchSrc -> StoreIPAddress(1.2.3.4, 5, 6) -> Collect;");
    assert!(e.contains("too many arguments"), "{}", e);
    let e = config_error("src :: BatchSrc -> StoreIPAddress(nothost, 5) -> Collect;");
    assert!(e.contains("ADDR"), "{}", e);
    let e = config_error("src :: BatchSrc -> StoreIPAddress() -> Collect;");
    assert!(e.contains("missing mandatory OFFSET argument"), "{}", e);
}

// ---- SetIPDSCP -------------------------------------------------------------------

#[test]
fn setipdscp_sets_dscp_keeps_ecn() {
    let mut input = Vec::new();
    let mut want = Vec::new();
    for (k, tos) in [0u8, 0x03, 0xfd, 0x12].into_iter().enumerate() {
        let ip = Ip {
            tos,
            id: k as u16,
            ..Ip::default()
        };
        input.push(ip.udp(5, 6, b"dscp"));
        let out = Ip {
            tos: (46 << 2) | (tos & 3),
            ..ip
        };
        want.push(out.udp(5, 6, b"dscp"));
    }
    let (r, seen) = run_both(
        "src :: BatchSrc -> MarkIPHeader -> s :: SetIPDSCP(46) -> out :: Collect;",
        &input,
        &["out"],
    );
    let got: Vec<Vec<u8>> = seen[0].iter().map(|s| s.data.clone()).collect();
    assert_eq!(got, want);
    assert!(got.iter().all(|p| ip_hdr_ok(p)));
    assert_eq!(r.read("s.dscp"), "46");

    // The dscp handler reconfigures.
    r.write("s.dscp", "10").unwrap();
    assert_eq!(r.read("s.dscp"), "10");
    assert_eq!(r.read("s.config"), "10");
    let e = r.write("s.dscp", "64").unwrap_err().to_string();
    assert!(e.contains("diffserv code point out of range"), "{}", e);
    assert_eq!(r.read("s.dscp"), "10");

    // Packets without an IP header are dropped, never a panic.
    let r = run_with(
        "src :: BatchSrc -> MarkIPHeader -> SetIPDSCP(DSCP 1) -> out :: Collect;",
        &[vec![0x45, 0, 0], input[0].clone()],
        32,
    );
    assert_eq!(data("out").len(), 1);
    assert_eq!(r.stderr(), "");
    run_with(
        "src :: BatchSrc -> SetIPDSCP(DSCP 1) -> out :: Collect;",
        &[input[0].clone()],
        32,
    );
    assert!(data("out").is_empty());
    let e = config_error("src :: BatchSrc -> SetIPDSCP(64) -> Collect;");
    assert!(e.contains("diffserv code point out of range"), "{}", e);
    let e = config_error("src :: BatchSrc -> SetIPDSCP() -> Collect;");
    assert!(e.contains("missing mandatory DSCP argument"), "{}", e);
}

// ---- MarkIPCE --------------------------------------------------------------------

#[test]
fn markipce_marks_ect_and_drops_non_ect() {
    let pkt = |tos: u8| {
        Ip {
            tos,
            id: u16::from(tos),
            ..Ip::default()
        }
        .udp(9, 9, b"ecn")
    };
    let input = vec![pkt(0), pkt(1), pkt(2), pkt(3), pkt(0xb8), pkt(0xba)];
    let (r, seen) = run_both(
        "src :: BatchSrc -> MarkIPHeader -> m :: MarkIPCE -> out :: Collect;",
        &input,
        &["out"],
    );
    let ce = |tos: u8, id: u8| {
        Ip {
            tos,
            id: u16::from(id),
            ..Ip::default()
        }
        .udp(9, 9, b"ecn")
    };
    let got: Vec<Vec<u8>> = seen[0].iter().map(|s| s.data.clone()).collect();
    assert_eq!(got, vec![ce(3, 1), ce(3, 2), ce(3, 3), ce(0xbb, 0xba)]);
    assert_eq!(r.read("m.drops"), "2");

    // FORCE marks non-ECT packets too.
    let (r, seen) = run_both(
        "src :: BatchSrc -> MarkIPHeader -> m :: MarkIPCE(FORCE true) -> out :: Collect;",
        &input,
        &["out"],
    );
    assert_eq!(seen[0].len(), 6);
    assert_eq!(seen[0][0].data, ce(3, 0));
    assert_eq!(seen[0][4].data, ce(0xbb, 0xb8));
    assert_eq!(r.read("m.drops"), "0");

    // Truncated and header-less packets are dropped and counted.
    let r = run_with(
        "src :: BatchSrc -> MarkIPHeader -> m :: MarkIPCE(true) -> out :: Collect;",
        &[vec![0x45, 1], input[1].clone()],
        32,
    );
    assert_eq!(data("out").len(), 1);
    assert_eq!(r.read("m.drops"), "1");
    let r = run_with(
        "src :: BatchSrc -> m :: MarkIPCE -> out :: Collect;",
        &[input[1].clone()],
        1,
    );
    assert!(data("out").is_empty());
    assert_eq!(r.read("m.drops"), "1");
    let e = config_error("src :: BatchSrc -> MarkIPCE(maybe) -> Collect;");
    assert!(e.contains("FORCE"), "{}", e);
}

// ---- CheckIPHeader2 --------------------------------------------------------------

#[test]
fn checkipheader2_ignores_checksums() {
    let pkts = mixed();
    // 0: valid; 30: bad checksum; 33: version 5; 34: IHL 3; 31: truncated.
    let input: Vec<Vec<u8>> = [0usize, 30, 33, 34, 31, 13]
        .iter()
        .map(|&i| pkts[i].clone())
        .collect();
    let cfg = "src :: BatchSrc -> c :: CLASS -> ok :: Collect; c[1] -> bad :: Collect;";
    let (r, seen) = run_both(
        &cfg.replace("CLASS", "CheckIPHeader2(14)"),
        &input,
        &["ok", "bad"],
    );
    let ok: Vec<Vec<u8>> = seen[0].iter().map(|s| s.data.clone()).collect();
    let bad: Vec<Vec<u8>> = seen[1].iter().map(|s| s.data.clone()).collect();
    assert_eq!(
        ok,
        vec![pkts[0].clone(), pkts[30].clone(), pkts[13].clone()]
    );
    assert_eq!(
        bad,
        vec![pkts[33].clone(), pkts[34].clone(), pkts[31].clone()]
    );
    assert_eq!(r.read("c.drops"), "3");
    assert_eq!(seen[0][1].network_header_offset, Some(14));
    assert_eq!(seen[0][1].anno.bytes[..4], pkts[30][30..34]);
    assert_eq!(r.stderr(), "c: IP header check failed: bad IP version\n");

    // CheckIPHeader catches the checksum; CheckIPHeader2(CHECKSUM true) too.
    for class in ["CheckIPHeader(14)", "CheckIPHeader2(14, CHECKSUM true)"] {
        let (r, seen) = run_both(&cfg.replace("CLASS", class), &input, &["ok", "bad"]);
        assert_eq!(seen[0].len(), 2, "{}", class);
        assert_eq!(r.read("c.drops"), "4", "{}", class);
    }
    // The old BADSRC form.
    let r = run_with(
        &cfg.replace("CLASS", "CheckIPHeader2(10.0.0.1, 14)"),
        &input,
        32,
    );
    assert!(data("ok").is_empty());
    assert_eq!(r.read("c.drops"), "6");
}

// ---- IPMirror --------------------------------------------------------------------

#[test]
fn ipmirror_swaps_addresses_ports_and_seq() {
    let fwd = Ip {
        src: [10, 0, 0, 1],
        dst: [10, 0, 0, 2],
        ..Ip::default()
    };
    let rev = Ip {
        src: [10, 0, 0, 2],
        dst: [10, 0, 0, 1],
        ..Ip::default()
    };
    let udp = fwd.udp(1111, 2222, b"mirror me");
    let tcp = fwd.tcp(40000, 80, 1000, 2000, 0x10, 100, &[], b"x");
    let (_r, seen) = run_both(
        "src :: BatchSrc -> CheckIPHeader -> IPMirror -> out :: Collect;",
        &[udp.clone(), tcp.clone()],
        &["out"],
    );
    assert_eq!(seen[0][0].data, rev.udp(2222, 1111, b"mirror me"));
    assert_eq!(
        seen[0][1].data,
        rev.tcp(80, 40000, 2000, 1000, 0x10, 100, &[], b"x")
    );
    assert_eq!(seen[0][0].anno.bytes[..4], [10, 0, 0, 1]);

    // DST_ANNO false keeps the annotation.
    run_with(
        "src :: BatchSrc -> CheckIPHeader -> SetIPAddress(9.9.9.9) -> IPMirror(false) -> out :: Collect;",
        std::slice::from_ref(&udp),
        32,
    );
    let s = collected("out");
    assert_eq!(s[0].data, rev.udp(2222, 1111, b"mirror me"));
    assert_eq!(s[0].anno.bytes[..4], [9, 9, 9, 9]);

    // A later fragment and a truncated UDP header: addresses only.
    let frag = Ip {
        flags_off: 3,
        ..fwd.clone()
    }
    .packet(&udp[20..]);
    let mut short = fwd.packet(&[0x04, 0x57, 0x08]);
    short[9] = 17;
    let c = ref_csum(&{
        let mut h = short[..20].to_vec();
        h[10] = 0;
        h[11] = 0;
        h
    });
    short[10..12].copy_from_slice(&c.to_be_bytes());
    run_with(
        "src :: BatchSrc -> CheckIPHeader -> IPMirror(DST_ANNO true) -> out :: Collect;",
        &[frag.clone(), short.clone()],
        32,
    );
    let out = data("out");
    let swap = |p: &[u8]| {
        let mut w = p.to_vec();
        w[12..16].copy_from_slice(&p[16..20]);
        w[16..20].copy_from_slice(&p[12..16]);
        w
    };
    assert_eq!(out, vec![swap(&frag), swap(&short)]);
    assert!(out.iter().all(|p| ip_hdr_ok(p)));

    // No IP header: dropped.
    let r = run_with(
        "src :: BatchSrc -> IPMirror -> out :: Collect;",
        std::slice::from_ref(&udp),
        32,
    );
    assert!(data("out").is_empty());
    assert_eq!(r.stderr(), "");
    let e = config_error("src :: BatchSrc -> IPMirror(DST_ANNO perhaps) -> Collect;");
    assert!(e.contains("DST_ANNO"), "{}", e);
}

// ---- IPInputCombo ----------------------------------------------------------------

#[test]
fn ipinputcombo_equals_its_compound() {
    let pkts = mixed();
    let combo = "src :: BatchSrc -> c :: IPInputCombo(7) -> out :: Collect;";
    let (r, seen) = run_both(combo, &pkts, &["out"]);
    let compound = "src :: BatchSrc -> Paint(7) -> Strip(14) -> c :: CheckIPHeader -> GetIPAddress(16) -> out :: Collect;";
    let (r2, want) = run_both(compound, &pkts, &["out"]);
    assert!(!seen[0].is_empty());
    assert_eq!(seen[0].len(), want[0].len());
    for (a, b) in seen[0].iter().zip(want[0].iter()) {
        assert_eq!(a.data, b.data);
        assert_eq!(a.anno.bytes, b.anno.bytes);
        assert_eq!(a.anno.paint(), 7);
        assert_eq!(a.network_header_offset, b.network_header_offset);
        assert_eq!(a.transport_header_offset, b.transport_header_offset);
    }
    assert_eq!(r.read("c.drops"), r2.read("c.drops"));
    assert_ne!(r.read("c.drops"), "0");
    assert_eq!(r.stderr(), "IP checksum failed\n");
}

#[test]
fn ipinputcombo_source_address_checks() {
    let from = |src: [u8; 4], dst: [u8; 4]| {
        ether(
            &Ip {
                src,
                dst,
                ..Ip::default()
            }
            .udp(1, 2, b"x"),
        )
    };
    let a = from([10, 0, 0, 1], [10, 0, 0, 2]);
    let b = from([10, 0, 0, 255], [10, 0, 0, 2]);
    let c = from([10, 0, 0, 255], [10, 0, 0, 1]);
    let d = from([0, 0, 0, 0], [10, 0, 0, 2]);
    let e = from([18, 26, 4, 255], [10, 0, 0, 2]);
    let input = vec![a.clone(), b.clone(), c.clone(), d.clone(), e.clone()];
    let cfg = "src :: BatchSrc -> c :: IPInputCombo(ARGS) -> out :: Collect;";
    let cases: &[(&str, Vec<Vec<u8>>)] = &[
        ("1", input.clone()),
        // The old positional BADSRC adds 0.0.0.0 and 255.255.255.255.
        ("1, 18.26.4.255 10.0.0.255", vec![a.clone()]),
        (
            "1, INTERFACES 10.0.0.1/24",
            vec![a.clone(), c.clone(), e.clone()],
        ),
        (
            "1, INTERFACES 10.0.0.1/24, GOODDST 10.0.0.2",
            vec![a.clone(), b.clone(), d.clone(), e.clone()],
        ),
        (
            "1, BADSRC 18.26.4.255",
            vec![a.clone(), b.clone(), c.clone(), d.clone()],
        ),
    ];
    for (args, want) in cases {
        let r = run_with(&cfg.replace("ARGS", args), &input, 32);
        let want: Vec<Vec<u8>> = want.iter().map(|f| f[14..].to_vec()).collect();
        assert_eq!(data("out"), want, "IPInputCombo({})", args);
        assert_eq!(
            r.read("c.drops"),
            (input.len() - want.len()).to_string(),
            "{}",
            args
        );
    }
    let e = config_error("src :: BatchSrc -> IPInputCombo() -> Collect;");
    assert!(e.contains("missing mandatory COLOR argument"), "{}", e);
    let e = config_error("src :: BatchSrc -> IPInputCombo(1, BADSRC banana) -> Collect;");
    assert!(e.contains("BADSRC: expected list of IP addresses"), "{}", e);
    let e = config_error("src :: BatchSrc -> IPInputCombo(1, FOO 2) -> Collect;");
    assert!(e.contains("FOO: unknown argument"), "{}", e);
}

// ---- IPOutputCombo ---------------------------------------------------------------

#[test]
fn ipoutputcombo_equals_its_compound() {
    let pkts = mixed();
    let mut input = pkts.clone();
    // A Record Route option with a bad length (1) for output 2.
    let bad = Ip {
        options: vec![7, 1, 0, 0],
        ..Ip::default()
    }
    .udp(3, 4, b"opt");
    input.push(ether(&bad));
    let head = "src :: BatchSrc -> HostEtherFilter(52:54:00:00:00:02, DROP_OWN false, DROP_OTHER false) -> Strip(14) -> CheckIPHeader -> Paint(3) -> Paint(1, 19) -> x; ";
    let tail = "x[0] -> o0 :: Collect; x[1] -> o1 :: Collect; x[2] -> o2 :: Collect; x[3] -> o3 :: Collect; x[4] -> o4 :: Collect;";
    let sinks = ["o0", "o1", "o2", "o3", "o4"];
    let combo = format!("x :: IPOutputCombo(3, 192.0.2.1, 100); {}{}", head, tail);
    let (_r, seen) = run_both(&combo, &input, &sinks);
    let compound = format!(
        "elementclass Out {{ input -> DropBroadcasts -> p :: PaintTee(3) -> g :: IPGWOptions(192.0.2.1) -> FixIPSrc(192.0.2.1) -> d :: DecIPTTL -> l :: CheckLength(100) -> [0]output; p[1] -> [1]output; g[1] -> [2]output; d[1] -> [3]output; l[1] -> [4]output; }} x :: Out; {}{}",
        head, tail
    );
    let (_r2, want) = run_both(&compound, &input, &sinks);
    for i in 0..5 {
        assert!(!seen[i].is_empty(), "output {} used", i);
        assert_eq!(seen[i].len(), want[i].len(), "output {}", i);
        for (a, b) in seen[i].iter().zip(want[i].iter()) {
            assert_eq!(a.data, b.data, "output {}", i);
            assert_eq!(a.anno.bytes, b.anno.bytes, "output {}", i);
        }
    }
    // FixIPSrc and DecIPTTL did their work on output 0 (checksums valid).
    for s in &seen[0] {
        assert_eq!(s.data[12..16], [192, 0, 2, 1]);
        assert!(ip_hdr_ok(&s.data));
        assert!(s.data.len() <= 100);
    }
    assert_eq!(seen[2][0].anno.icmp_paramprob(), 21);

    // Other colors are not copied; packets without an IP header vanish.
    let r = run_with(
        "src :: BatchSrc -> x :: IPOutputCombo(3, 192.0.2.1, 1500); x[0] -> o0 :: Collect; x[1] -> o1 :: Collect; x[2] -> o2 :: Collect; x[3] -> o3 :: Collect; x[4] -> o4 :: Collect;",
        &input[..5],
        32,
    );
    for s in sinks {
        assert!(data(s).is_empty(), "{}", s);
    }
    assert_eq!(r.stderr(), "");
    let e = config_error("src :: BatchSrc -> x :: IPOutputCombo(3, 192.0.2.1) -> Collect; x[1] -> Collect; x[2] -> Collect; x[3] -> Collect; x[4] -> Collect;");
    assert!(e.contains("missing mandatory MTU argument"), "{}", e);
}

// ---- ICMPPingEncap ---------------------------------------------------------------

fn ping(id: u16, seq: u16, ident: u16, payload: &[u8]) -> Vec<u8> {
    let mut icmp = vec![8u8, 0, 0, 0];
    icmp.extend_from_slice(&ident.to_be_bytes());
    icmp.extend_from_slice(&seq.to_be_bytes());
    icmp.extend_from_slice(payload);
    let c = ref_csum(&icmp);
    icmp[2..4].copy_from_slice(&c.to_be_bytes());
    Ip {
        src: [1, 0, 0, 1],
        dst: [2, 0, 0, 2],
        proto: 1,
        id,
        ttl: 255,
        ..Ip::default()
    }
    .packet(&icmp)
}

#[test]
fn icmppingencap_builds_echo_requests() {
    let payloads: Vec<Vec<u8>> = vec![b"".to_vec(), b"abc".to_vec(), vec![0xff; 101]];
    let (r, seen) = run_both(
        "src :: BatchSrc -> p :: ICMPPingEncap(1.0.0.1, 2.0.0.2, IDENTIFIER 3) -> out :: Collect;",
        &payloads,
        &["out"],
    );
    let got: Vec<Vec<u8>> = seen[0].iter().map(|s| s.data.clone()).collect();
    let want: Vec<Vec<u8>> = payloads
        .iter()
        .enumerate()
        .map(|(i, pl)| ping(i as u16 + 1, i as u16 + 1, 3, pl))
        .collect();
    assert_eq!(got, want);
    for s in &seen[0] {
        assert_eq!(s.anno.bytes[..4], [2, 0, 0, 2]);
        assert_eq!(s.network_header_offset, Some(0));
        assert_eq!(s.transport_header_offset, Some(20));
    }
    assert_eq!(r.read("p.src"), "1.0.0.1");
    assert_eq!(r.read("p.dst"), "2.0.0.2");

    // Handlers change the addresses; a bad address is refused.
    r.write("p.dst", "9.9.9.9").unwrap();
    r.write("p.src", "8.8.8.8").unwrap();
    assert_eq!(r.read("p.dst"), "9.9.9.9");
    let e = r.write("p.src", "nonsense").unwrap_err().to_string();
    assert_eq!(e, "syntax error");
    assert_eq!(r.read("p.src"), "8.8.8.8");

    // The pings are valid: the responder answers them.
    run_with(
        "src :: BatchSrc -> ICMPPingEncap(1.0.0.1, 2.0.0.2) -> CheckICMPHeader -> CheckIPHeader -> ICMPPingResponder -> out :: Collect;",
        &payloads,
        32,
    );
    assert_eq!(data("out").len(), payloads.len());
    let e = config_error("src :: BatchSrc -> ICMPPingEncap(1.0.0.1) -> Collect;");
    assert!(e.contains("missing mandatory DST argument"), "{}", e);
    let e = config_error(
        "src :: BatchSrc -> ICMPPingEncap(1.0.0.1, 2.0.0.2, IDENTIFIER 65536) -> Collect;",
    );
    assert!(e.contains("IDENTIFIER"), "{}", e);
}

#[test]
fn icmppingencap_sequence_skips_zero() {
    let pkts = vec![Vec::new(); 65536];
    run_with(
        "src :: BatchSrc -> ICMPPingEncap(1.0.0.1, 2.0.0.2) -> out :: Collect;",
        &pkts,
        256,
    );
    let out = data("out");
    assert_eq!(out.len(), 65536);
    let seq = |p: &Vec<u8>| u16::from_be_bytes([p[26], p[27]]);
    assert_eq!(seq(&out[0]), 1);
    assert_eq!(seq(&out[65533]), 65534);
    assert_eq!(seq(&out[65534]), 65535);
    assert_eq!(seq(&out[65535]), 1);
    assert_eq!(out[65535], ping(1, 1, 0, b""));
}

// ---- RangeIPLookup ---------------------------------------------------------------

#[test]
fn rangeiplookup_click_update_sequence() {
    // Click's iplookups-01 sequence, through the handlers.
    let r = run_with(
        "src :: BatchSrc -> r :: RangeIPLookup; r[0] -> Collect; r[1] -> Collect; r[2] -> Collect;",
        &[],
        32,
    );
    let look = || {
        r.router
            .read_handler_param("r.lookup", "18.26.4.9")
            .unwrap()
    };
    let steps: &[(&str, &str, &str)] = &[
        ("add", "18.26/16 1.0.0.1 0", "0 1.0.0.1"),
        ("add", "18.26.0/18 2.0.0.2 1", "1 2.0.0.2"),
        ("add", "18.26.0/17 3.0.0.3 2", "1 2.0.0.2"),
        ("remove", "18.26.0/18 2.0.0.2 1", "2 3.0.0.3"),
        ("remove", "18.26.0/16 1.0.0.1 0", "2 3.0.0.3"),
        ("add", "18.26.0/12 4.0.0.4 0", "2 3.0.0.3"),
        ("remove", "18.26.0/17 3.0.0.3 2", "0 4.0.0.4"),
        ("add", "0.0.0.0/32 99.99.99.99 0", "0 4.0.0.4"),
        ("add", "18.26.4.9/32 5.0.0.5 0", "0 5.0.0.5"),
        ("remove", "18.26.4.9/32 5.0.0.5 0", "0 4.0.0.4"),
        ("add", "18.26.0/12 6.0.0.6 0", "0 4.0.0.4"),
        ("set", "18.26.0/12 7.0.0.7 0", "0 7.0.0.7"),
        ("remove", "18.26.0/12 7.0.0.7 0", "-1"),
    ];
    for (h, v, want) in steps {
        let res = r.write(&format!("r.{}", h), v);
        if v.contains("6.0.0.6") {
            // Click's test: adding over an existing prefix fails.
            assert_eq!(
                res.unwrap_err().to_string(),
                "conflict with existing route '18.16.0.0/12 4.0.0.4 0'"
            );
        } else {
            res.unwrap();
        }
        assert_eq!(look(), *want, "after {} {}", h, v);
    }
    let e = r.write("r.remove", "18.26.0/12").unwrap_err().to_string();
    assert!(e.starts_with("route '18.16.0.0/12"), "{}", e);
    assert_eq!(r.read("r.table"), "0.0.0.0/32\t\t99.99.99.99\t0\n");
    r.write("r.flush", "").unwrap();
    assert_eq!(r.read("r.table"), "");
    assert!(r.read("r.handlers").contains("flush"));
}

#[test]
fn rangeiplookup_routes_like_directiplookup() {
    let pkts = capture("router-in.pcap");
    let cfg = "src :: BatchSrc -> CheckIPHeader(14) -> rt :: CLASS(10.0.0.0/8 0, 192.168/16 10.0.0.254 1, 172.16.0.0/12 2, 10.0.0.2/32 10.9.9.9 2); rt[0] -> o0 :: Collect; rt[1] -> o1 :: Collect; rt[2] -> o2 :: Collect;";
    let sinks = ["o0", "o1", "o2"];
    let (r, seen) = run_both(&cfg.replace("CLASS", "RangeIPLookup"), &pkts, &sinks);
    let (r2, want) = run_both(&cfg.replace("CLASS", "DirectIPLookup"), &pkts, &sinks);
    let mut total = 0;
    for i in 0..3 {
        assert!(!seen[i].is_empty());
        total += seen[i].len();
        let a: Vec<(Vec<u8>, [u8; 48])> = seen[i]
            .iter()
            .map(|s| (s.data.clone(), s.anno.bytes))
            .collect();
        let b: Vec<(Vec<u8>, [u8; 48])> = want[i]
            .iter()
            .map(|s| (s.data.clone(), s.anno.bytes))
            .collect();
        assert_eq!(a, b, "output {}", i);
    }
    assert!(total < pkts.len(), "some packets have no route");
    // Unroutable packets are dropped silently.
    assert_eq!(r.stderr(), "");
    assert_eq!(r.read("rt.table"), r2.read("rt.table"));
    let e = config_error(
        &cfg.replace("CLASS", "RangeIPLookup")
            .replace("2, 10.0.0.2/32", "3, 10.0.0.2/32"),
    );
    assert!(e.contains("argument 3 bad OUTPUT"), "{}", e);
}
