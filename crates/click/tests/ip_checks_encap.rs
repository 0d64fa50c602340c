//! SetIPChecksum, SetUDPChecksum, SetTCPChecksum, CheckUDPHeader,
//! CheckTCPHeader, CheckLength, SetIPAddress, DropBroadcasts, FixIPSrc,
//! IPEncap and UDPIPEncap on real packets (the captures in `tests/data/`
//! and packets built independently in `ip_pkt.rs`).

#[path = "ip_harness.rs"]
mod ip_harness;
#[path = "ip_pkt.rs"]
mod ip_pkt;
use ip_harness::*;
use ip_pkt::*;

// ---- SetIPChecksum ---------------------------------------------------------

#[test]
fn setipchecksum_restores_zeroed_checksums() {
    let pkts = mixed();
    // Every valid IPv4 frame, with its checksum zeroed (or scrambled).
    let valid: Vec<usize> = vec![0, 3, 10, 13, 15, 17, 21, 22, 26, 27, 36, 37, 40, 47];
    let mut input = Vec::new();
    for (k, &i) in valid.iter().enumerate() {
        let mut f = pkts[i].clone();
        f[24] = if k % 2 == 0 { 0 } else { 0xab };
        f[25] = if k % 2 == 0 { 0 } else { 0xcd };
        input.push(f);
    }
    let (_r, seen) = run_both(
        "src :: BatchSrc -> MarkIPHeader(14) -> SetIPChecksum -> out :: Collect;",
        &input,
        &["out"],
    );
    let got: Vec<Vec<u8>> = seen[0].iter().map(|s| s.data.clone()).collect();
    let want: Vec<Vec<u8>> = valid.iter().map(|&i| pkts[i].clone()).collect();
    assert_eq!(got, want);
}

#[test]
fn setipchecksum_drops_bad_lengths() {
    let good = Ip::default().udp(1, 2, b"abc");
    let mut bad_hl = good.clone();
    bad_hl[0] = 0x44; // 16-byte header
    let mut long_hl = good.clone();
    long_hl[0] = 0x4f; // 60-byte header, packet has 31 bytes
    let r = run_with(
        "src :: BatchSrc -> MarkIPHeader -> SetIPChecksum -> out :: Collect;",
        &[bad_hl, good.clone(), long_hl],
        32,
    );
    assert_eq!(data("out"), vec![good]);
    assert_eq!(
        r.stderr(),
        "SetIPChecksum: bad lengths\nSetIPChecksum: bad lengths\n"
    );
    // No IP header annotation at all.
    let r = run_with(
        "src :: BatchSrc -> SetIPChecksum -> out :: Collect;",
        &[Ip::default().udp(1, 2, b"")],
        32,
    );
    assert!(data("out").is_empty());
    assert_eq!(r.stderr(), "SetIPChecksum: bad lengths\n");
}

// ---- SetUDPChecksum / SetTCPChecksum ---------------------------------------

#[test]
fn setudpchecksum_matches_scapy() {
    let pkts = mixed();
    // UDP records with scapy-computed checksums.
    let udp = [10usize, 11, 12, 13, 14, 36, 37, 40, 45];
    let mut input = Vec::new();
    for &i in &udp {
        let mut f = pkts[i].clone();
        f[40] = 0;
        f[41] = 0;
        input.push(f);
    }
    let (_r, seen) = run_both(
        "src :: BatchSrc -> CheckIPHeader(14) -> s :: SetUDPChecksum -> out :: Collect; s[1] -> bad :: Collect;",
        &input,
        &["out", "bad"],
    );
    let got: Vec<Vec<u8>> = seen[0].iter().map(|s| s.data.clone()).collect();
    let want: Vec<Vec<u8>> = udp.iter().map(|&i| pkts[i].clone()).collect();
    assert_eq!(got, want);
    assert!(seen[1].is_empty());
}

#[test]
fn setudpchecksum_fragments_and_short_packets() {
    let pkts = mixed();
    // Record 21 is a first fragment (MF): not checksummed.
    let frag = pkts[21].clone();
    let whole = Ip::default().udp(7, 8, b"hello world");
    let mut short = whole.clone();
    short[24..26].copy_from_slice(&100u16.to_be_bytes()); // UDP length 100 > packet
    let cfg = "src :: BatchSrc -> CheckIPHeader(14) -> s :: SetUDPChecksum -> out :: Collect; s[1] -> bad :: Collect;";
    let r = run_with(cfg, &[frag.clone(), ether(&short), ether(&whole)], 32);
    assert_eq!(data("out"), vec![ether(&whole)]);
    assert_eq!(data("bad"), vec![frag.clone(), ether(&short)]);
    assert_eq!(r.stderr(), "");
    // With one output: dropped, reported once.
    let r = run_with(
        "src :: BatchSrc -> CheckIPHeader(14) -> s :: SetUDPChecksum -> out :: Collect;",
        &[frag, ether(&short), ether(&whole)],
        32,
    );
    assert_eq!(data("out"), vec![ether(&whole)]);
    assert_eq!(r.stderr(), "s: fragment or short packet\n");
}

#[test]
fn setudpchecksum_zero_result_is_sent_as_ffff() {
    // Find a payload whose UDP checksum computes to 0 (sum 0xffff).
    let ip = Ip::default();
    let base = ip.udp(1, 2, &[0, 0]);
    // Choose the two data bytes so the ones-complement sum becomes 0xffff.
    let mut seg = base[20..].to_vec();
    seg[6] = 0;
    seg[7] = 0;
    let mut ph = Vec::new();
    ph.extend_from_slice(&ip.src);
    ph.extend_from_slice(&ip.dst);
    ph.extend_from_slice(&[0, 17]);
    ph.extend_from_slice(&(seg.len() as u16).to_be_bytes());
    ph.extend_from_slice(&seg);
    let need = 0xffff - ref_sum(&ph); // data word that completes the sum
    let mut p = base.clone();
    p[28..30].copy_from_slice(&(need as u16).to_be_bytes());
    p[26] = 0x12;
    p[27] = 0x34;
    run_with(
        "src :: BatchSrc -> CheckIPHeader -> SetUDPChecksum -> out :: Collect;",
        &[p],
        32,
    );
    let out = data("out");
    assert_eq!(&out[0][26..28], &[0xff, 0xff]);
}

#[test]
fn settcpchecksum_matches_scapy() {
    let pkts = mixed();
    let tcp = [0usize, 1, 2, 3, 4, 5, 6, 7, 8, 9, 44, 47, 48];
    let mut input = Vec::new();
    for &i in &tcp {
        let mut f = pkts[i].clone();
        f[50] = 0x55;
        f[51] = 0xaa;
        input.push(f);
    }
    let (r, seen) = run_both(
        "src :: BatchSrc -> CheckIPHeader(14) -> SetTCPChecksum -> out :: Collect;",
        &input,
        &["out"],
    );
    let got: Vec<Vec<u8>> = seen[0].iter().map(|s| s.data.clone()).collect();
    let want: Vec<Vec<u8>> = tcp.iter().map(|&i| pkts[i].clone()).collect();
    assert_eq!(got, want);
    assert_eq!(r.stderr(), "");
    // Record 38 has a bad TCP checksum (0xdead); SetTCPChecksum fixes it to
    // what an independent computation gives.
    run_with(
        "src :: BatchSrc -> CheckIPHeader(14) -> SetTCPChecksum -> out :: Collect;",
        &[pkts[38].clone()],
        32,
    );
    let out = data("out");
    let f = &out[0];
    let mut seg = f[34..].to_vec();
    seg[16] = 0;
    seg[17] = 0;
    let c = ref_l4_csum([10, 0, 0, 1], [10, 0, 0, 2], 6, &seg);
    assert_eq!(u16::from_be_bytes([f[50], f[51]]), c);
    assert_ne!(c, 0xdead);
}

#[test]
fn settcpchecksum_fixoff_and_bad_lengths() {
    let ip = Ip::default();
    let good = ip.tcp(1, 2, 3, 4, 0x10, 100, &[], b"data");
    // Data offset 2 words: FIXOFF sets it to 5.
    let mut small = good.clone();
    small[32] = 0x20;
    // Data offset 15 words (60 bytes) > 24-byte segment: set to 6.
    let mut big = good.clone();
    big[32] = 0xf0;
    let r = run_with(
        "src :: BatchSrc -> CheckIPHeader -> SetTCPChecksum(true) -> out :: Collect;",
        &[small, big],
        32,
    );
    let out = data("out");
    assert_eq!(out[0], good);
    assert_eq!(out[1][32], 0x60);
    let mut seg = out[1][20..].to_vec();
    seg[16] = 0;
    seg[17] = 0;
    assert_eq!(
        u16::from_be_bytes([out[1][36], out[1][37]]),
        ref_l4_csum(ip.src, ip.dst, 6, &seg)
    );
    assert_eq!(r.stderr(), "");
    // IP payload shorter than a TCP header.
    let tiny = ip.packet(&[0u8; 10]);
    let r = run_with(
        "src :: BatchSrc -> CheckIPHeader -> SetTCPChecksum(FIXOFF false) -> out :: Collect;",
        &[tiny],
        32,
    );
    assert!(data("out").is_empty());
    assert_eq!(r.stderr(), "SetTCPChecksum: bad lengths\n");
}

// ---- CheckUDPHeader / CheckTCPHeader ---------------------------------------

#[test]
fn checkudpheader_on_mixed_capture() {
    let pkts = mixed();
    let mut input = pkts.clone();
    // A UDP packet with a corrupted payload byte (checksum now wrong).
    let mut corrupt = pkts[13].clone();
    corrupt[50] ^= 0x40;
    input.push(corrupt.clone());
    // UDP length 7 (< 8).
    let mut short = pkts[14].clone();
    short[38..40].copy_from_slice(&7u16.to_be_bytes());
    input.push(short.clone());
    let cfg = "src :: BatchSrc -> CheckIPHeader(14) -> c :: CheckUDPHeader(DETAILS true); c[0] -> good :: Collect; c[1] -> bad :: Collect;";
    let (r, seen) = run_both(cfg, &input, &["good", "bad"]);
    let good: Vec<Vec<u8>> = seen[0].iter().map(|s| s.data.clone()).collect();
    // Independent reference: frames passing CheckIPHeader(14) (trimmed to
    // the IP length), then Click's UDP checks.
    let mut want = Vec::new();
    let mut counts = [0usize; 3];
    for f in &input {
        if f.len() < 34 || f[14] >> 4 != 4 || f[14] & 15 < 5 {
            continue;
        }
        let hl = usize::from(f[14] & 15) * 4;
        let tl = usize::from(u16::from_be_bytes([f[16], f[17]]));
        if tl < hl || 14 + tl > f.len() || !ip_hdr_ok(&f[14..]) {
            continue;
        }
        let ip = &f[14..14 + tl];
        if ip[9] != 17 {
            counts[0] += 1;
            continue;
        }
        let ulen = usize::from(u16::from_be_bytes([ip[hl + 4], ip[hl + 5]]));
        if ulen < 8 || hl + ulen > ip.len() {
            counts[1] += 1;
            continue;
        }
        if ip[hl + 6..hl + 8] != [0, 0] {
            let mut seg = ip[hl..hl + ulen].to_vec();
            seg[6] = 0;
            seg[7] = 0;
            let c = ref_l4_csum(
                [ip[12], ip[13], ip[14], ip[15]],
                [ip[16], ip[17], ip[18], ip[19]],
                17,
                &seg,
            );
            // 0 and 0xffff both verify.
            let stored = u16::from_be_bytes([ip[hl + 6], ip[hl + 7]]);
            if stored != c && !(c == 0 && stored == 0xffff) {
                counts[2] += 1;
                continue;
            }
        }
        want.push(f[..14 + tl].to_vec());
    }
    assert_eq!(good, want);
    assert!(good.len() >= 12, "{}", good.len());
    assert_eq!(counts[2], 1);
    // The short one and both fragments of record 21/22 (the first one's UDP
    // length covers the whole datagram).
    assert_eq!(counts[1], 3);
    let details = r.read("c.drop_details");
    let lines: Vec<&str> = details.lines().collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0], format!("{}\tnot UDP", counts[0]));
    assert_eq!(lines[1], "3\tbad packet length");
    assert_eq!(lines[2], "1\tbad UDP checksum");
    let bad: Vec<Vec<u8>> = seen[1].iter().map(|s| s.data.clone()).collect();
    assert!(bad.contains(&corrupt));
    assert!(bad.contains(&short));
    assert!(r
        .stderr()
        .lines()
        .any(|l| l == "UDP header check failed: not UDP"));
    assert_eq!(r.stderr().lines().count(), 2, "{}", r.stderr());
    let drops: usize = r.read("c.drops").parse().unwrap();
    assert_eq!(drops, bad.len());
}

#[test]
fn checkudpheader_second_fragment_is_bad_length_or_checksum() {
    // A second fragment's "UDP header" is payload bytes; Click checks it
    // anyway. Record 22 carries bytes 64..100 of the datagram (0x38..).
    let pkts = mixed();
    let r = run_with(
        "src :: BatchSrc -> CheckIPHeader(14) -> c :: CheckUDPHeader(VERBOSE true) -> good :: Collect;",
        &[pkts[22].clone()],
        32,
    );
    assert!(data("good").is_empty());
    assert_eq!(r.read("c.drops"), "1");
    // Bytes 4..6 of the fragment payload are 0x3c3d = 15421 > packet.
    assert_eq!(r.stderr(), "UDP header check failed: bad packet length\n");
}

#[test]
fn checktcpheader_on_mixed_capture() {
    let pkts = mixed();
    let tcp = [0usize, 1, 2, 3, 4, 5, 6, 7, 8, 9, 44, 47, 48];
    let mut input: Vec<Vec<u8>> = tcp.iter().map(|&i| pkts[i].clone()).collect();
    input.push(pkts[38].clone()); // bad TCP checksum
    input.push(pkts[13].clone()); // UDP: not TCP
    let mut off = pkts[0].clone();
    off[46] = 0x40; // data offset 4 words
    input.push(off.clone());
    let cfg = "src :: BatchSrc -> CheckIPHeader(14) -> c :: CheckTCPHeader(VERBOSE 1, DETAILS 1); c[0] -> good :: Collect; c[1] -> bad :: Collect;";
    let (r, seen) = run_both(cfg, &input, &["good", "bad"]);
    let good: Vec<Vec<u8>> = seen[0].iter().map(|s| s.data.clone()).collect();
    assert_eq!(good, input[..tcp.len()].to_vec());
    let bad: Vec<Vec<u8>> = seen[1].iter().map(|s| s.data.clone()).collect();
    assert_eq!(bad, vec![pkts[38].clone(), pkts[13].clone(), off]);
    assert_eq!(
        r.stderr(),
        "c: TCP header check failed: bad TCP checksum\n\
         c: TCP header check failed: not TCP\n\
         c: TCP header check failed: bad packet length\n"
    );
    assert_eq!(r.read("c.drops"), "3");
    assert_eq!(
        r.read("c.drop_details"),
        "1\tnot TCP\n1\tbad packet length\n1\tbad TCP checksum\n"
    );
}

#[test]
fn transport_checks_without_annotation_or_details() {
    let r = run_with(
        "src :: BatchSrc -> c :: CheckTCPHeader -> good :: Collect;",
        &[Ip::default().tcp(1, 2, 3, 4, 2, 5, &[], b"")],
        32,
    );
    assert!(data("good").is_empty());
    assert_eq!(r.read("c.drops"), "1");
    assert_eq!(r.stderr(), "c: TCP header check failed: not TCP\n");
    assert!(r.router.read_handler("c.drop_details").is_err());
}

// ---- CheckLength ------------------------------------------------------------

#[test]
fn checklength_push_pull_and_handler() {
    let pkts = mixed();
    let cfg = "src :: BatchSrc -> c :: CheckLength(100); c[0] -> short :: Collect; c[1] -> long :: Collect;";
    let (r, seen) = run_both(cfg, &pkts, &["short", "long"]);
    let s: Vec<Vec<u8>> = seen[0].iter().map(|x| x.data.clone()).collect();
    let l: Vec<Vec<u8>> = seen[1].iter().map(|x| x.data.clone()).collect();
    assert_eq!(
        s,
        pkts.iter()
            .filter(|p| p.len() <= 100)
            .cloned()
            .collect::<Vec<_>>()
    );
    assert_eq!(
        l,
        pkts.iter()
            .filter(|p| p.len() > 100)
            .cloned()
            .collect::<Vec<_>>()
    );
    assert!(!l.is_empty() && !s.is_empty());
    assert_eq!(r.read("c.length"), "100");
    r.write("c.length", "60").unwrap();
    assert_eq!(r.read("c.length"), "60");
    assert!(r.write("c.length", "x").is_err());
    // Pull: long packets are pushed out of output 1 while pulling.
    let r = run_with(
        "src :: BatchSrc -> q :: Queue(100) -> c :: CheckLength(LENGTH 60) -> u :: Unqueue -> short :: Collect; c[1] -> long :: Collect;",
        &pkts,
        32,
    );
    assert_eq!(
        data("short"),
        pkts.iter()
            .filter(|p| p.len() <= 60)
            .cloned()
            .collect::<Vec<_>>()
    );
    assert_eq!(
        data("long"),
        pkts.iter()
            .filter(|p| p.len() > 60)
            .cloned()
            .collect::<Vec<_>>()
    );
    drop(r);
    // One output: long packets are dropped.
    run_with(
        "src :: BatchSrc -> CheckLength(60) -> short :: Collect;",
        &pkts,
        32,
    );
    assert_eq!(
        data("short"),
        pkts.iter()
            .filter(|p| p.len() <= 60)
            .cloned()
            .collect::<Vec<_>>()
    );
    assert!(try_build("src :: BatchSrc -> CheckLength -> Discard;", 1).is_err());
}

// ---- SetIPAddress -------------------------------------------------------------

#[test]
fn setipaddress_sets_annotation() {
    let pkts = mixed();
    let r = run_with(
        "src :: BatchSrc -> s :: SetIPAddress(192.168.1.1) -> SetIPAddress(1.2.3.4, ANNO 4) -> out :: Collect;",
        &pkts[..3],
        32,
    );
    for s in collected("out") {
        assert_eq!(&s.anno.bytes[..8], &[192, 168, 1, 1, 1, 2, 3, 4]);
    }
    assert_eq!(data("out"), pkts[..3].to_vec());
    assert_eq!(r.read("s.addr"), "192.168.1.1");
    r.write("s.addr", "10.9.8.7").unwrap();
    assert_eq!(r.read("s.addr"), "10.9.8.7");
    assert!(r.write("s.addr", "nope").is_err());
    assert!(try_build("src :: BatchSrc -> SetIPAddress -> Discard;", 1).is_err());
    assert!(try_build(
        "src :: BatchSrc -> SetIPAddress(1.2.3.4, ANNO 46) -> Discard;",
        1
    )
    .is_err());
}

// ---- DropBroadcasts -----------------------------------------------------------

#[test]
fn dropbroadcasts_by_packet_type() {
    let pkts = mixed();
    // HostEtherFilter sets the packet type: record 19 (ARP to ff:ff..) is
    // BROADCAST, 36 also, 37 (01:00:5e:..) MULTICAST; 0 is for this host.
    let input = vec![
        pkts[0].clone(),
        pkts[19].clone(),
        pkts[37].clone(),
        pkts[36].clone(),
        pkts[1].clone(),
    ];
    let cfg = "src :: BatchSrc -> HostEtherFilter(52:54:00:00:00:02, DROP_OWN false, DROP_OTHER false) -> d :: DropBroadcasts -> ok :: Collect; d[1] -> bc :: Collect;";
    let (r, seen) = run_both(cfg, &input, &["ok", "bc"]);
    let ok: Vec<Vec<u8>> = seen[0].iter().map(|s| s.data.clone()).collect();
    let bc: Vec<Vec<u8>> = seen[1].iter().map(|s| s.data.clone()).collect();
    assert_eq!(ok, vec![pkts[0].clone(), pkts[1].clone()]);
    assert_eq!(
        bc,
        vec![pkts[19].clone(), pkts[37].clone(), pkts[36].clone()]
    );
    assert_eq!(r.read("d.drops"), "3");
    assert_eq!(r.stderr(), "DropBroadcasts: dropped a packet\n");
    // Without the packet type, nothing is dropped.
    let r = run_with(
        "src :: BatchSrc -> d :: DropBroadcasts -> ok :: Collect;",
        &input,
        32,
    );
    assert_eq!(data("ok"), input);
    assert_eq!(r.read("d.drops"), "0");
}

// ---- FixIPSrc -------------------------------------------------------------------

#[test]
fn fixipsrc_rewrites_marked_packets() {
    let ip = Ip {
        src: [10, 0, 0, 1],
        ..Ip::default()
    };
    let p = ip.udp(1, 2, b"payload");
    // Paint(1, 19) sets FIX_IP_SRC_ANNO.
    run_with(
        "src :: BatchSrc -> MarkIPHeader -> Paint(1, 19) -> FixIPSrc(192.0.2.9) -> out :: Collect;",
        std::slice::from_ref(&p),
        32,
    );
    let out = collected("out");
    let want = Ip {
        src: [192, 0, 2, 9],
        ..ip.clone()
    };
    // Only the IP header changes (the UDP checksum is not FixIPSrc's job).
    let mut expect = want.packet(&p[20..]);
    expect[20..].copy_from_slice(&p[20..]);
    assert_eq!(out[0].data, expect);
    assert!(ip_hdr_ok(&out[0].data));
    assert_eq!(out[0].anno.bytes[19], 0, "annotation cleared");
    // Unmarked packets pass unchanged.
    run_with(
        "src :: BatchSrc -> MarkIPHeader -> FixIPSrc(192.0.2.9) -> out :: Collect;",
        std::slice::from_ref(&p),
        32,
    );
    assert_eq!(data("out"), vec![p.clone()]);
    // Options are covered by the recomputed checksum.
    let opt = Ip {
        options: vec![1, 1, 1, 0],
        ..ip
    };
    let q = opt.udp(1, 2, b"x");
    run_with(
        "src :: BatchSrc -> MarkIPHeader -> Paint(7, ANNO 19) -> FixIPSrc(IPADDR 1.1.1.1) -> out :: Collect;",
        &[q],
        32,
    );
    let out = data("out");
    assert_eq!(&out[0][12..16], &[1, 1, 1, 1]);
    assert!(ip_hdr_ok(&out[0]));
}

// ---- IPEncap -------------------------------------------------------------------

#[test]
fn ipencap_builds_headers() {
    let inner = Ip::default().udp(5, 6, b"inner");
    let r = run_with(
        "src :: BatchSrc -> e :: IPEncap(ipip, 18.26.4.24, 140.247.60.147) -> out :: Collect;",
        &[inner.clone(), inner.clone()],
        32,
    );
    let out = collected("out");
    for (k, s) in out.iter().enumerate() {
        let want = Ip {
            src: [18, 26, 4, 24],
            dst: [140, 247, 60, 147],
            proto: 4,
            id: k as u16,
            ttl: 250,
            ..Ip::default()
        }
        .packet(&inner);
        assert_eq!(s.data, want);
        assert_eq!(&s.anno.bytes[..4], &[140, 247, 60, 147]);
        assert_eq!(s.network_header_offset, Some(0));
        assert_eq!(s.transport_header_offset, Some(20));
    }
    assert_eq!(r.read("e.src"), "18.26.4.24");
    assert_eq!(r.read("e.dst"), "140.247.60.147");
    r.write("e.dst", "DST_ANNO").unwrap();
    assert_eq!(r.read("e.dst"), "DST_ANNO");
    assert_eq!(r.read("e.config"), "ipip, 18.26.4.24, DST_ANNO");
    r.write("e.src", "1.1.1.1").unwrap();
    assert_eq!(r.read("e.config"), "ipip, 1.1.1.1, DST_ANNO");
    assert!(r.write("e.src", "bogus").is_err());
    assert_eq!(r.read("e.src"), "1.1.1.1");
}

#[test]
fn ipencap_keywords_and_dst_anno() {
    let cases: &[(&str, u8, u16, u8)] = &[
        ("TOS 0x1c", 0x1c, 0, 250),
        ("DSCP 46, ECT true", (46 << 2) | 1, 0, 250),
        ("DSCP 10, ECT 2", (10 << 2) | 2, 0, 250),
        ("CE true, DF true, TTL 7", 3, 0x4000, 7),
        ("DSCP 63", 63 << 2, 0, 250),
    ];
    for &(kw, tos, flags, ttl) in cases {
        let cfg = format!(
            "src :: BatchSrc -> IPEncap(17, 10.1.1.1, 10.2.2.2, {}) -> out :: Collect;",
            kw
        );
        run_with(&cfg, &[b"xyz".to_vec()], 32);
        let want = Ip {
            src: [10, 1, 1, 1],
            dst: [10, 2, 2, 2],
            proto: 17,
            id: 0,
            tos,
            ttl,
            flags_off: flags,
            ..Ip::default()
        }
        .packet(b"xyz");
        assert_eq!(data("out"), vec![want], "{}", kw);
    }
    // DST_ANNO takes the destination from the annotation.
    run_with(
        "src :: BatchSrc -> SetIPAddress(9.9.9.9) -> IPEncap(PROTO tcp, SRC 1.2.3.4, DST DST_ANNO) -> out :: Collect;",
        &[vec![0xaa; 4]],
        32,
    );
    let want = Ip {
        src: [1, 2, 3, 4],
        dst: [9, 9, 9, 9],
        proto: 6,
        id: 0,
        ttl: 250,
        ..Ip::default()
    }
    .packet(&[0xaa; 4]);
    assert_eq!(data("out"), vec![want]);
    for (cfg, msg) in [
        (
            "IPEncap(4, 1.2.3.4, 5.6.7.8, TOS 1, DSCP 2)",
            "cannot set both TOS and DSCP",
        ),
        (
            "IPEncap(4, 1.2.3.4, 5.6.7.8, TOS 1, CE true)",
            "cannot set both TOS and ECN bits",
        ),
        (
            "IPEncap(4, 1.2.3.4, 5.6.7.8, TOS 256)",
            "TOS too large; max 255",
        ),
        (
            "IPEncap(4, 1.2.3.4, 5.6.7.8, DSCP 64)",
            "DSCP too large; max 63",
        ),
        (
            "IPEncap(4, 1.2.3.4, 5.6.7.8, ECT 1, CE 1)",
            "can set at most one ECN option",
        ),
        ("IPEncap(4, 1.2.3.4, 5.6.7.8, ECT 3)", "bad ECT value '3'"),
        (
            "IPEncap(4, 1.2.3.4, nowhere)",
            "DST argument should be IP address or 'DST_ANNO'",
        ),
        ("IPEncap(300, 1.2.3.4, 5.6.7.8)", "PROTO: bad IP protocol"),
        ("IPEncap(4, 1.2.3.4)", "missing mandatory DST argument"),
    ] {
        let e = try_build(&format!("src :: BatchSrc -> {} -> Discard;", cfg), 1)
            .err()
            .unwrap_or_else(|| panic!("{} should fail", cfg));
        assert!(e.iter().any(|l| l.ends_with(msg)), "{}: {:?}", cfg, e);
    }
}

#[test]
fn ipencap_round_trips_through_checkipheader_and_strip() {
    let pkts = mixed();
    let input: Vec<Vec<u8>> = pkts[..16].to_vec();
    let cfg = "src :: BatchSrc -> IPEncap(ipip, 1.1.1.1, 2.2.2.2) -> c :: CheckIPHeader -> StripIPHeader -> out :: Collect;";
    let (r, seen) = run_both(cfg, &input, &["out"]);
    let got: Vec<Vec<u8>> = seen[0].iter().map(|s| s.data.clone()).collect();
    assert_eq!(got, input);
    assert_eq!(r.read("c.drops"), "0");
}

// ---- UDPIPEncap ----------------------------------------------------------------

#[test]
fn udpipencap_builds_headers() {
    let payloads: Vec<Vec<u8>> = vec![b"hello".to_vec(), vec![], (0..=255u8).collect()];
    let r = run_with(
        "src :: BatchSrc -> u :: UDPIPEncap(1.0.0.1, 1234, 2.0.0.2, dns) -> out :: Collect;",
        &payloads,
        32,
    );
    let out = collected("out");
    for (k, s) in out.iter().enumerate() {
        let want = Ip {
            src: [1, 0, 0, 1],
            dst: [2, 0, 0, 2],
            id: k as u16,
            ttl: 250,
            ..Ip::default()
        }
        .udp(1234, 53, &payloads[k]);
        assert_eq!(s.data, want);
        assert_eq!(&s.anno.bytes[..4], &[2, 0, 0, 2]);
        assert_eq!(s.network_header_offset, Some(0));
        assert_eq!(s.transport_header_offset, Some(20));
    }
    assert_eq!(r.read("u.src"), "1.0.0.1");
    assert_eq!(r.read("u.sport"), "1234");
    assert_eq!(r.read("u.dst"), "2.0.0.2");
    assert_eq!(r.read("u.dport"), "53");
    r.write("u.dport", "9999").unwrap();
    r.write("u.src", "7.7.7.7").unwrap();
    assert_eq!(r.read("u.dport"), "9999");
    assert_eq!(r.read("u.config"), "7.7.7.7, 1234, 2.0.0.2, 9999");
    assert!(r.write("u.sport", "99999").is_err());
    assert_eq!(r.read("u.sport"), "1234");
}

#[test]
fn udpipencap_checksum_off_dst_anno_and_old_keywords() {
    run_with(
        "src :: BatchSrc -> SetIPAddress(3.3.3.3) -> UDPIPEncap(SADDR 1.1.1.1, SPORT 1, DADDR DST_ANNO, DPORT 2, CHECKSUM false) -> out :: Collect;",
        &[b"abc".to_vec()],
        32,
    );
    let mut want = Ip {
        src: [1, 1, 1, 1],
        dst: [3, 3, 3, 3],
        id: 0,
        ttl: 250,
        ..Ip::default()
    }
    .udp(1, 2, b"abc");
    want[26] = 0;
    want[27] = 0;
    assert_eq!(data("out"), vec![want]);
    // The result passes CheckIPHeader and CheckUDPHeader.
    let r = run_with(
        "src :: BatchSrc -> UDPIPEncap(10.0.0.1, 9, 10.0.0.2, 10) -> CheckIPHeader -> c :: CheckUDPHeader -> out :: Collect;",
        &mixed(),
        32,
    );
    assert_eq!(data("out").len(), mixed().len());
    assert_eq!(r.read("c.drops"), "0");
    assert!(try_build(
        "src :: BatchSrc -> UDPIPEncap(1.1.1.1, 1, 2.2.2.2) -> Discard;",
        1
    )
    .is_err());
    assert!(try_build(
        "src :: BatchSrc -> UDPIPEncap(1.1.1.1, 1, 2.2.2.2, 70000) -> Discard;",
        1
    )
    .is_err());
}
