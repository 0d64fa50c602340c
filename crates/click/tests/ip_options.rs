//! IPGWOptions: Record Route and Timestamp processing on real packets,
//! malformed options to output 1 with the ICMP parameter-problem
//! annotation, and the ICMPError that reads it.

#[path = "ip_harness.rs"]
mod ip_harness;
#[path = "ip_pkt.rs"]
mod ip_pkt;
use ip_harness::*;
use ip_pkt::*;

/// Milliseconds since midnight UT at the test clock's start (1e9 s):
/// 1e9 mod 86400 = 6400 s.
const MS: [u8; 4] = 6_400_000u32.to_be_bytes();

fn with_opts(opts: &[u8]) -> Vec<u8> {
    Ip {
        options: opts.to_vec(),
        ..Ip::default()
    }
    .udp(1234, 5678, b"opts")
}

/// Runs one packet through IPGWOptions; returns (output 0, output 1).
fn gw(config: &str, p: &[u8]) -> (Vec<ip_harness::Seen>, Vec<ip_harness::Seen>, String) {
    let r = run_with(
        &format!(
            "src :: BatchSrc -> MarkIPHeader -> g :: IPGWOptions({}); g[0] -> ok :: Collect; g[1] -> bad :: Collect;",
            config
        ),
        &[p.to_vec()],
        32,
    );
    (collected("ok"), collected("bad"), r.read("g.drops"))
}

#[test]
fn record_route_on_capture_record() {
    // mixed.pcap record 26: IHL 8, RR option 07 0b 04 + two empty slots.
    let pkts = capture("mixed.pcap");
    let f = pkts[26].clone();
    assert_eq!(&f[34..38], &[7, 11, 4, 0]);
    let r = run_with(
        "src :: BatchSrc -> CheckIPHeader(14) -> IPGWOptions(192.168.9.1) -> a :: Collect;",
        std::slice::from_ref(&f),
        32,
    );
    drop(r);
    let once = collected_data("a")[0].clone();
    let mut want = f[14..].to_vec();
    want[22] = 8;
    want[23..27].copy_from_slice(&[192, 168, 9, 1]);
    let c = ref_csum(&{
        let mut h = want[..32].to_vec();
        h[10] = 0;
        h[11] = 0;
        h
    });
    want[10..12].copy_from_slice(&c.to_be_bytes());
    assert_eq!(&once[14..], &want[..]);
    assert_eq!(&once[..14], &f[..14]);
    // Two more routers fill the option; a fourth finds it full.
    run_with(
        "src :: BatchSrc -> CheckIPHeader(14) -> IPGWOptions(192.168.9.1) -> IPGWOptions(10.1.1.1) -> IPGWOptions(10.2.2.2) -> c :: Collect;",
        &[f],
        32,
    );
    let out = collected_data("c")[0].clone();
    let ip = &out[14..];
    assert_eq!(&ip[20..32], &[7, 11, 12, 192, 168, 9, 1, 10, 1, 1, 1, 0]);
    assert!(ip_hdr_ok(ip));
}

#[test]
fn timestamp_options() {
    // Flag 0: room for two timestamps.
    let p = with_opts(&[68, 12, 5, 0x00, 0, 0, 0, 0, 0, 0, 0, 0]);
    let (ok, bad, drops) = gw("1.2.3.4", &p);
    assert!(bad.is_empty());
    assert_eq!(drops, "0");
    let o = &ok[0].data;
    assert_eq!(&o[20..24], &[68, 12, 9, 0x00]);
    assert_eq!(&o[24..28], &MS);
    assert_eq!(&o[28..32], &[0; 4]);
    assert!(ip_hdr_ok(o));
    assert_eq!(&o[32..], &p[32..]);
    // Flag 0, full: the overflow count goes up.
    let p = with_opts(&[68, 8, 9, 0x20, 1, 2, 3, 4]);
    let (ok, _, _) = gw("1.2.3.4", &p);
    assert_eq!(&ok[0].data[20..28], &[68, 8, 9, 0x30, 1, 2, 3, 4]);
    assert!(ip_hdr_ok(&ok[0].data));
    // Flag 1: address and timestamp.
    let p = with_opts(&[68, 12, 5, 0x01, 0, 0, 0, 0, 0, 0, 0, 0]);
    let (ok, _, _) = gw("1.2.3.4", &p);
    let mut want = vec![68, 12, 13, 0x01, 1, 2, 3, 4];
    want.extend_from_slice(&MS);
    assert_eq!(&ok[0].data[20..32], &want[..]);
    // Flag 1 with 4 bytes left: overflow.
    let p = with_opts(&[68, 8, 5, 0x01, 0, 0, 0, 0]);
    let (ok, _, _) = gw("1.2.3.4", &p);
    assert_eq!(&ok[0].data[20..28], &[68, 8, 5, 0x11, 0, 0, 0, 0]);
    // Flag 3: only the prespecified addresses that are ours.
    let p = with_opts(&[
        68, 20, 5, 0x03, 9, 9, 9, 9, 0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0,
    ]);
    let (ok, _, _) = gw("1.2.3.4, 5.5.5.5 9.9.9.9", &p);
    let mut want = vec![68, 20, 13, 0x03, 9, 9, 9, 9];
    want.extend_from_slice(&MS);
    want.extend_from_slice(&[1, 2, 3, 4, 0, 0, 0, 0]);
    assert_eq!(&ok[0].data[20..40], &want[..]);
    let (ok, _, _) = gw("1.2.3.4", &p);
    assert_eq!(&ok[0].data[20..40], &p[20..40], "9.9.9.9 is not ours");
    assert_eq!(ok[0].data, p, "checksum recomputed to the same value");
}

#[test]
fn other_options_pass_untouched() {
    // NOP, router alert, loose source route, EOL: nothing to do, so the
    // packet is bit-identical (no checksum recomputation).
    let mut p = with_opts(&[1, 0x94, 4, 0, 0, 0x83, 7, 4, 10, 0, 0, 9]);
    // Give it a wrong checksum to see it is not recomputed.
    p[10] ^= 0xff;
    let (ok, bad, _) = gw("1.2.3.4", &p);
    assert!(bad.is_empty());
    assert_eq!(ok[0].data, p);
    // No options at all.
    let q = Ip::default().udp(1, 2, b"");
    let (ok, _, _) = gw("1.2.3.4", &q);
    assert_eq!(ok[0].data, q);
    // Options after an EOL are ignored.
    let p = with_opts(&[0, 7, 0, 0]);
    let (ok, bad, _) = gw("1.2.3.4", &p);
    assert!(bad.is_empty());
    assert_eq!(ok[0].data, p);
}

#[test]
fn bad_options_go_to_output_1_with_paramprob() {
    let cases: &[(&[u8], u8)] = &[
        // Length 0 at offset 20: pointer to the length byte.
        (&[0x94, 0, 0, 0], 21),
        // Length past the header.
        (&[1, 0x83, 9, 0], 22),
        // Last byte of the header starts an option.
        (&[1, 1, 1, 0x83], 24),
        // RR with pointer 2 (1-origin; minimum 4).
        (&[7, 7, 2, 0, 0, 0, 0, 0], 22),
        // RR with pointer past the end but not at it.
        (&[7, 7, 9, 0, 0, 0, 0, 0], 22),
        // TS pointer 4 (< 5).
        (&[68, 8, 4, 0, 0, 0, 0, 0], 22),
        // TS unknown flag 2.
        (&[68, 8, 5, 0x02, 0, 0, 0, 0], 23),
        // TS flag 3 with no room for address + timestamp.
        (&[68, 8, 5, 0x03, 0, 0, 0, 0], 23),
        // TS overflow count already 15.
        (&[68, 8, 9, 0xf0, 0, 0, 0, 0], 23),
        // TS shorter than 4 bytes.
        (&[68, 3, 5, 0], 21),
        // A good RR followed by a bad option (offset 28).
        (&[7, 7, 4, 0, 0, 0, 0, 0x94, 1, 0, 0, 0], 28),
    ];
    for (opts, off) in cases {
        let p = with_opts(opts);
        let (ok, bad, drops) = gw("1.2.3.4", &p);
        assert!(ok.is_empty(), "{:?}", opts);
        assert_eq!(bad.len(), 1, "{:?}", opts);
        assert_eq!(bad[0].anno.bytes[17], *off, "{:?}", opts);
        assert_eq!(drops, "1");
    }
    // Header longer than the packet: pointer 0. One output: dropped.
    let mut p = with_opts(&[1, 1, 1, 1]);
    p[0] = 0x4f;
    let (_, bad, _) = gw("1.2.3.4", &p);
    assert_eq!(bad[0].anno.bytes[17], 0);
    let r = run_with(
        "src :: BatchSrc -> MarkIPHeader -> g :: IPGWOptions(1.2.3.4) -> ok :: Collect;",
        &[with_opts(&[0x94, 0, 0, 0]), vec![0x46; 10]],
        32,
    );
    assert!(collected("ok").is_empty());
    assert_eq!(r.read("g.drops"), "2");
}

#[test]
fn parameter_problem_reaches_icmperror() {
    // The annotation becomes the ICMP pointer.
    let p = with_opts(&[1, 0x83, 9, 0]);
    run_with(
        "src :: BatchSrc -> MarkIPHeader -> g :: IPGWOptions(1.2.3.4) -> Discard; g[1] -> ICMPError(192.0.2.1, parameterproblem) -> e :: Collect;",
        std::slice::from_ref(&p),
        32,
    );
    let e = collected_data("e");
    assert_eq!(e.len(), 1);
    let icmp = &e[0][(e[0][0] as usize & 15) * 4..];
    assert_eq!(icmp[0], 12, "parameter problem");
    assert_eq!(icmp[4], 22, "pointer");
    assert_eq!(&icmp[8..8 + 24], &p[..24]);
}

#[test]
fn config() {
    assert!(try_build("src :: BatchSrc -> IPGWOptions -> Discard;", 1).is_err());
    assert!(try_build(
        "src :: BatchSrc -> IPGWOptions(1.2.3.4, bogus) -> Discard;",
        1
    )
    .is_err());
    assert!(try_build(
        "src :: BatchSrc -> IPGWOptions(MYADDR 1.2.3.4, OTHERADDRS 5.6.7.8 9.9.9.9) -> Discard;",
        1
    )
    .is_ok());
}
