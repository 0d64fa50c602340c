//! CheckIPHeader, MarkIPHeader, StripIPHeader/UnstripIPHeader,
//! GetIPAddress and DecIPTTL on the real captures in `tests/data/`.

#[path = "ip_harness.rs"]
mod ip_harness;
use ip_harness::*;

/// Independent reference for CheckIPHeader's verdict on a frame with the IP
/// header at `off`: Ok(trimmed length) or Err(reason).
fn reference_check(d: &[u8], off: usize) -> Result<usize, &'static str> {
    if d.len() < off + 20 {
        return Err("tiny packet");
    }
    let ip = &d[off..];
    if ip[0] >> 4 != 4 {
        return Err("bad IP version");
    }
    let hl = (ip[0] & 15) as usize * 4;
    if hl < 20 {
        return Err("bad IP header length");
    }
    let tl = u16::from_be_bytes([ip[2], ip[3]]) as usize;
    if tl > ip.len() || tl < hl {
        return Err("bad IP length");
    }
    if !csum_ok(&ip[..hl]) {
        return Err("bad IP checksum");
    }
    Ok(off + tl)
}

const REASONS: [&str; 6] = [
    "tiny packet",
    "bad IP version",
    "bad IP header length",
    "bad IP length",
    "bad IP checksum",
    "bad source address",
];

#[test]
fn checkipheader_on_mixed_capture() {
    let pkts = capture("mixed.pcap");
    let cfg = "src :: BatchSrc -> c :: CheckIPHeader(OFFSET 14, DETAILS true); c[0] -> good :: Collect; c[1] -> bad :: Collect;";
    let (r, seen) = run_both(cfg, &pkts, &["good", "bad"]);
    let (good, bad) = (&seen[0], &seen[1]);
    let mut exp_good = Vec::new();
    let mut exp_bad = Vec::new();
    let mut counts = [0u32; 6];
    for d in &pkts {
        match reference_check(d, 14) {
            Ok(n) => exp_good.push(d[..n].to_vec()),
            Err(why) => {
                exp_bad.push(d.clone());
                counts[REASONS.iter().position(|r| *r == why).unwrap()] += 1;
            }
        }
    }
    assert_eq!(
        good.iter().map(|s| s.data.clone()).collect::<Vec<_>>(),
        exp_good
    );
    assert_eq!(
        bad.iter().map(|s| s.data.clone()).collect::<Vec<_>>(),
        exp_bad
    );
    // Spot checks against the capture's manifest.
    for (i, why) in [
        (19, "bad IP version"),
        (24, "bad IP version"),
        (30, "bad IP checksum"),
        (31, "bad IP length"),
        (32, "tiny packet"),
        (33, "bad IP version"),
        (34, "bad IP header length"),
        (35, "bad IP length"),
        (51, "bad IP length"),
    ] {
        assert_eq!(reference_check(&pkts[i], 14), Err(why), "record {}", i);
    }
    for i in [0, 12, 21, 22, 26, 27, 28, 29, 36, 37, 38, 39, 40, 41, 49] {
        assert!(reference_check(&pkts[i], 14).is_ok(), "record {}", i);
    }
    // Annotations: network header at 14, transport after it, dst IP set.
    for s in good {
        assert_eq!(s.network_header_offset, Some(14));
        let hl = (s.data[14] & 15) as isize * 4;
        assert_eq!(s.transport_header_offset, Some(14 + hl));
        assert_eq!(&s.anno.bytes[..4], &s.data[30..34]);
    }
    assert_eq!(r.read("c.drops"), exp_bad.len().to_string());
    let details: String = counts
        .iter()
        .zip(REASONS)
        .map(|(n, r)| format!("{}\t{}\n", n, r))
        .collect();
    assert_eq!(r.read("c.drop_details"), details);
    // Only the first failure is reported.
    let err = r.stderr();
    assert_eq!(err.lines().count(), 1, "{}", err);
    assert_eq!(err, "c: IP header check failed: bad IP version\n");
}

#[test]
fn checkipheader_trims_ethernet_padding() {
    let pkts = capture("mixed.pcap");
    let mut padded = pkts[0].clone();
    padded.extend_from_slice(&[0; 6]);
    let r = run_with(
        "src :: BatchSrc -> c :: CheckIPHeader(14) -> good :: Collect;",
        &[padded],
        32,
    );
    assert_eq!(collected_data("good"), vec![pkts[0].clone()]);
    assert_eq!(r.read("c.drops"), "0");
}

#[test]
fn checkipheader_verbose_drops_without_output1() {
    let pkts = capture("mixed.pcap");
    let r = run_with(
        "src :: BatchSrc -> c :: CheckIPHeader(14, VERBOSE true) -> good :: Collect;",
        &pkts,
        32,
    );
    let nbad = pkts
        .iter()
        .filter(|d| reference_check(d, 14).is_err())
        .count();
    assert_eq!(r.read("c.drops"), nbad.to_string());
    assert_eq!(r.stderr().lines().count(), nbad);
    assert!(r
        .stderr()
        .contains("c: IP header check failed: bad IP checksum\n"));
    assert_eq!(collected("good").len(), pkts.len() - nbad);
    // drop_details exists only with DETAILS.
    assert!(r.router.read_handler("c.drop_details").is_err());
}

#[test]
fn checkipheader_checksum_off_and_badsrc() {
    let pkts = capture("mixed.pcap");
    let r = run_with(
        "src :: BatchSrc -> c :: CheckIPHeader(OFFSET 14, CHECKSUM false) -> good :: Collect;",
        &[pkts[30].clone()],
        32,
    );
    assert_eq!(collected("good").len(), 1);
    assert_eq!(r.read("c.drops"), "0");

    // 10.0.0.1 is the source of records 0, 2, 3: bad unless sent to GOODDST.
    let sel: Vec<Vec<u8>> = [0usize, 1, 2].iter().map(|&i| pkts[i].clone()).collect();
    let r = run_with(
        "src :: BatchSrc -> c :: CheckIPHeader(OFFSET 14, BADSRC 10.0.0.1 1.2.3.4, DETAILS 1) -> good :: Collect;",
        &sel,
        32,
    );
    let srcs: Vec<[u8; 4]> = sel.iter().map(|d| [d[26], d[27], d[28], d[29]]).collect();
    let nbad = srcs.iter().filter(|s| **s == [10, 0, 0, 1]).count();
    assert!(nbad >= 1);
    assert_eq!(r.read("c.drops"), nbad.to_string());
    assert!(r
        .read("c.drop_details")
        .ends_with(&format!("{}\tbad source address\n", nbad)));
    assert!(r.stderr().contains("bad source address"));

    let r = run_with(
        "src :: BatchSrc -> c :: CheckIPHeader(OFFSET 14, BADSRC 10.0.0.1, GOODDST 10.0.0.2) -> good :: Collect;",
        &sel,
        32,
    );
    let exempt = sel
        .iter()
        .filter(|d| [d[26], d[27], d[28], d[29]] == [10, 0, 0, 1] && d[30..34] == [10, 0, 0, 2])
        .count();
    assert_eq!(r.read("c.drops"), (nbad - exempt).to_string());

    // INTERFACES 10.0.0.1/24: broadcast 10.0.0.255, 0.0.0.0 and
    // 255.255.255.255 are bad sources; record 36 comes from 0.0.0.0.
    let r = run_with(
        "src :: BatchSrc -> c :: CheckIPHeader(OFFSET 14, INTERFACES 10.0.0.1/24) -> good :: Collect;",
        &[pkts[36].clone(), pkts[0].clone()],
        32,
    );
    assert_eq!(&pkts[36][26..30], &[0, 0, 0, 0]);
    assert_eq!(r.read("c.drops"), "1");
}

#[test]
fn checkipheader_config_errors() {
    let e = try_router("i :: InfiniteSource(LIMIT 0) -> c :: CheckIPHeader(FOO 1) -> Discard;")
        .err()
        .unwrap();
    assert!(
        e.iter().any(|l| l.contains("FOO: unknown argument")),
        "{:?}",
        e
    );
    let e =
        try_router("i :: InfiniteSource(LIMIT 0) -> c :: CheckIPHeader(BADSRC 1.2.3) -> Discard;")
            .err()
            .unwrap();
    assert!(
        e.iter()
            .any(|l| l.contains("While configuring 'c :: CheckIPHeader'")),
        "{:?}",
        e
    );
    // The old positional form is CheckIPHeader(BADSRC, OFFSET): `1` is no
    // address list.
    let e = try_router("i :: InfiniteSource(LIMIT 0) -> c :: CheckIPHeader(1, 2) -> Discard;")
        .err()
        .unwrap();
    assert!(
        e.iter()
            .any(|l| l.contains("BADSRC: expected list of IP addresses")),
        "{:?}",
        e
    );
    let e =
        try_router("i :: InfiniteSource(LIMIT 0) -> c :: CheckIPHeader(1.0.0.1, 2, 3) -> Discard;")
            .err()
            .unwrap();
    assert!(
        e.iter().any(|l| l.contains("too many arguments")),
        "{:?}",
        e
    );
    assert!(
        try_router("i :: InfiniteSource(LIMIT 0) -> c :: CheckIPHeader(14) -> Discard;").is_ok()
    );
    // fake-iprouter.click's old-style bad source list, positional.
    assert!(try_router(
        "i :: InfiniteSource(LIMIT 0) -> c :: CheckIPHeader(18.26.4.255 1.255.255.255) -> Discard;"
    )
    .is_ok());
    assert!(try_router(
        "i :: InfiniteSource(LIMIT 0) -> c :: CheckIPHeader(18.26.4.255 1.255.255.255, 14) -> Discard;"
    )
    .is_ok());
}

#[test]
fn markipheader_strip_unstrip() {
    let pkts = capture("router-in.pcap");
    let (_r, seen) = run_both(
        "src :: BatchSrc -> MarkIPHeader(14) -> m :: Collect;",
        &pkts[..3],
        &["m"],
    );
    assert!(seen[0]
        .iter()
        .all(|s| s.network_header_offset == Some(14) && s.transport_header_offset == Some(34)));
    // MarkIPHeader neither trims nor sets the destination annotation.
    assert!(seen[0]
        .iter()
        .zip(&pkts)
        .all(|(s, d)| s.data == *d && s.anno.bytes[..4] == [0; 4]));

    let (_r, seen) = run_both(
        "src :: BatchSrc -> CheckIPHeader(14) -> StripIPHeader -> s :: Collect;",
        &pkts,
        &["s"],
    );
    for (s, d) in seen[0].iter().zip(&pkts) {
        assert_eq!(s.data[..], d[34..34 + s.data.len()]);
        assert_eq!(s.network_header_offset, Some(-20));
    }
    let (_r, seen) = run_both(
        "src :: BatchSrc -> CheckIPHeader(14) -> StripIPHeader -> UnstripIPHeader -> UnstripIPHeader -> u :: Collect;",
        &pkts,
        &["u"],
    );
    for (s, d) in seen[0].iter().zip(&pkts) {
        let tl = u16::from_be_bytes([d[16], d[17]]) as usize;
        assert_eq!(s.data[..], d[14..14 + tl]);
        assert_eq!(s.network_header_offset, Some(0));
    }
}

#[test]
fn getipaddress_forms() {
    let pkts = capture("router-in.pcap");
    let (_r, seen) = run_both(
        "src :: BatchSrc -> GetIPAddress(30) -> g :: Collect;",
        &pkts,
        &["g"],
    );
    assert!(seen[0]
        .iter()
        .zip(&pkts)
        .all(|(s, d)| s.anno.bytes[..4] == d[30..34]));
    let (_r, seen) = run_both(
        "src :: BatchSrc -> MarkIPHeader(14) -> GetIPAddress(IP src) -> g :: Collect;",
        &pkts,
        &["g"],
    );
    assert!(seen[0]
        .iter()
        .zip(&pkts)
        .all(|(s, d)| s.anno.bytes[..4] == d[26..30]));
    let (_r, seen) = run_both(
        "src :: BatchSrc -> MarkIPHeader(14) -> GetIPAddress(IP dst, ANNO 4) -> g :: Collect;",
        &pkts,
        &["g"],
    );
    assert!(seen[0]
        .iter()
        .zip(&pkts)
        .all(|(s, d)| s.anno.bytes[4..8] == d[30..34] && s.anno.bytes[..4] == [0; 4]));

    for (cfg, msg) in [
        ("GetIPAddress()", "set one of OFFSET, IP"),
        ("GetIPAddress(16, IP dst)", "set one of OFFSET, IP"),
        ("GetIPAddress(IP foo)", "bad IP"),
    ] {
        let e = try_router(&format!(
            "InfiniteSource(LIMIT 0) -> g :: {} -> Discard;",
            cfg
        ))
        .err()
        .unwrap();
        assert!(e.iter().any(|l| l.ends_with(msg)), "{}: {:?}", cfg, e);
    }
}

/// Full-header checksum of an IP header inside an Ethernet frame.
fn ip_csum_ok(f: &[u8]) -> bool {
    let hl = (f[14] & 15) as usize * 4;
    csum_ok(&f[14..14 + hl])
}

#[test]
fn decipttl_checksums_and_expiry() {
    let pkts = capture("mixed.pcap");
    let cfg = "src :: BatchSrc -> CheckIPHeader(14) -> d :: DecIPTTL; d[0] -> ok :: Collect; d[1] -> dead :: Collect;";
    let (r, seen) = run_both(cfg, &pkts, &["ok", "dead"]);
    let valid: Vec<&Vec<u8>> = pkts
        .iter()
        .filter(|d| reference_check(d, 14).is_ok())
        .collect();
    let expired = valid.iter().filter(|d| d[22] <= 1).count();
    assert_eq!(expired, 2, "records 28 (TTL 1) and 29 (TTL 0)");
    assert_eq!(seen[1].len(), expired);
    assert_eq!(seen[0].len(), valid.len() - expired);
    assert_eq!(r.read("d.drops"), expired.to_string());
    let live: Vec<&&Vec<u8>> = valid.iter().filter(|d| d[22] > 1).collect();
    for (s, orig) in seen[0].iter().zip(live) {
        assert!(ip_csum_ok(&s.data), "checksum after DecIPTTL");
        assert_eq!(s.data[22] + 1, orig[22]);
        // Only TTL and checksum changed.
        let mut a = s.data.clone();
        let mut b = orig[..s.data.len()].to_vec();
        a[22] = 0;
        b[22] = 0;
        a[24..26].fill(0);
        b[24..26].fill(0);
        assert_eq!(a, b);
    }
    // Expired packets are unchanged.
    for s in &seen[1] {
        assert!(s.data[22] <= 1 && ip_csum_ok(&s.data));
    }

    // Without output 1, expired packets are dropped and counted.
    let r = run_with(
        "src :: BatchSrc -> CheckIPHeader(14) -> d :: DecIPTTL -> ok :: Collect;",
        &pkts,
        32,
    );
    assert_eq!(r.read("d.drops"), "2");
    assert_eq!(collected("ok").len(), valid.len() - 2);
}

#[test]
fn decipttl_multicast_active_and_checksum_edge_cases() {
    let pkts = capture("mixed.pcap");
    let r = run_with(
        "src :: BatchSrc -> CheckIPHeader(14) -> d :: DecIPTTL(MULTICAST false) -> ok :: Collect;",
        &[pkts[37].clone()],
        32,
    );
    assert_eq!(&pkts[37][30..34], &[224, 0, 0, 251]);
    assert_eq!(collected("ok")[0].data, pkts[37]);
    assert_eq!(r.read("d.drops"), "0");

    let r = run_with(
        "src :: BatchSrc -> CheckIPHeader(14) -> d :: DecIPTTL(ACTIVE false) -> ok :: Collect;",
        &pkts[..3],
        32,
    );
    assert_eq!(r.read("d.active"), "false");
    assert_eq!(collected_data("ok"), pkts[..3].to_vec());
    r.write("d.active", "true").unwrap();
    assert_eq!(r.read("d.active"), "true");
    assert!(r.write("d.active", "maybe").is_err());

    // Every TTL and a range of checksums: the incremental update always
    // equals a full recomputation.
    let mut frames = Vec::new();
    let base = pkts[0].clone();
    for ttl in 2..=255u8 {
        for id in [0u16, 1, 0x00ff, 0x7fff, 0xfeff, 0xffff] {
            let mut f = base.clone();
            f[22] = ttl;
            f[18..20].copy_from_slice(&id.to_be_bytes());
            f[24..26].fill(0);
            let c = click::wire::checksum::ip_checksum(&f[14..34]);
            f[24..26].copy_from_slice(&c.to_be_bytes());
            frames.push(f);
        }
    }
    let (_r, seen) = run_both(
        "src :: BatchSrc -> MarkIPHeader(14) -> d :: DecIPTTL -> ok :: Collect;",
        &frames,
        &["ok"],
    );
    assert_eq!(seen[0].len(), frames.len());
    for (s, f) in seen[0].iter().zip(&frames) {
        assert_eq!(s.data[22], f[22] - 1);
        assert!(ip_csum_ok(&s.data), "ttl {} id {:?}", f[22], &f[18..20]);
    }
}
