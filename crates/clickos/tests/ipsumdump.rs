//! The IP summary dump fields (Click's elements/analysis/ipsumdump*.cc):
//! options, ECN/DSCP, ICMP names, Ethernet, MD5, binary dumps, BAD_PACKETS,
//! MULTIPACKET, and malformed input.

mod common;
use click_pcap::PcapReader;
use common::*;
use std::collections::BTreeMap;

fn records(path: &str) -> Vec<click_pcap::Record> {
    PcapReader::open(path)
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

/// Lines of a dump, without `!` header lines.
fn body(s: &str) -> Vec<&str> {
    s.lines().filter(|l| !l.starts_with('!')).collect()
}

fn run_ok(cfg: &str) -> Run {
    let r = click(&["-e", cfg]);
    assert_eq!(r.code, 0, "config: {cfg}\nstderr: {}", r.err);
    r
}

fn ip_checksum_ok(h: &[u8]) -> bool {
    let mut s = 0u32;
    for c in h.chunks(2) {
        s += ((c[0] as u32) << 8) | *c.get(1).unwrap_or(&0) as u32;
    }
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    s == 0xffff
}

/// Exact text of the new fields for known packets of mixed.pcap (see
/// tests/data/README.md): record route and router alert options, TCP
/// options, ICMP names and identifiers, fragments, DF, Ethernet headers,
/// payload digests.
#[test]
fn known_packets_print_as_click() {
    let cfg = format!(
        "FromDump({}, STOP true, FORCE_IP true) -> ToIPSummaryDump(-, FIELDS ts_sec ip_hl ip_opt \
         ip_frag ip_fragoff tcp_off tcp_opt tcp_ntopt tcp_sack icmp_type_name icmp_code_name \
         icmp_flowid icmp_seq eth_src eth_dst eth_type ip_dscp ip_ecn)",
        data("mixed.pcap")
    );
    let r = run_ok(&cfg);
    let by_sec: BTreeMap<u64, &str> = body(&r.out)
        .into_iter()
        .map(|l| {
            let (s, rest) = l.split_once(' ').unwrap();
            (s.parse::<u64>().unwrap() - 1_700_000_100, rest)
        })
        .collect();
    let eth = "52-54-00-00-00-01 52-54-00-00-00-02 0800 0 no";
    let back = "52-54-00-00-00-02 52-54-00-00-00-01 0800 0 no";
    let want = [
        (0, format!("20 . . 0 20 . . . - - - - {eth}")),
        (15, format!("20 . . 0 - - - - echo 0 1 1 {eth}")),
        (16, format!("20 . . 0 - - - - echo-reply 0 1 1 {back}")),
        (17, format!("20 . . 0 - - - - unreachable port - - {back}")),
        (18, format!("20 . . 0 - - - - timeexceeded transit - - {back}")),
        (21, format!("20 . F 0+ - - - - - - - - {eth}")),
        (22, format!("20 . f 64 - - - - - - - - {eth}")),
        // VLAN-tagged: the MAC header is not right before the IP header
        (23, "20 . . 0 - - - - - - - - - - - 0 no".to_string()),
        // record route, 8 option bytes, pointer at the first of two slots
        (26, format!("32 rr{{}}+2 . 0 - - - - - - - - {eth}")),
        // router alert: an option Click prints by number
        (27, format!("24 148=0:0 . 0 - - - - - - - - {eth}")),
        // MSS, SACK-permitted, timestamp, NOP, window scale
        (
            47,
            format!(
                "20 . . 0 40 mss1460;sackok;ts1:0;wscale7 mss1460;sackok;wscale7 sackok - - - - {eth}"
            ),
        ),
        (48, format!("20 . ! 0! 20 . . . - - - - {eth}")),
    ];
    for (sec, line) in want {
        assert_eq!(
            by_sec.get(&sec).copied(),
            Some(line.as_str()),
            "record {sec}"
        );
    }

    // payload digests (checked against Python's hashlib); the text digest
    // is Click's 22-character md5_finish_text form
    let cfg = format!(
        "FromDump({}, STOP true, FORCE_IP true) -> ToIPSummaryDump(-, FIELDS ts_sec payload_len payload_md5_hex payload_md5)",
        data("mixed.pcap")
    );
    let r = run_ok(&cfg);
    let lines = body(&r.out);
    assert!(
        lines.contains(&"1700000113 32 dc8fe1d6497ebd23f5975d8d2a1c5e81 C@y4wNKF9os9x2vJQWHxbc")
    );
    // ICMP payloads include the ICMP header, as in Click
    assert!(lines
        .iter()
        .any(|l| l.starts_with("1700000115 40 7b4b6e6208119a1fe38526b11906bf06 ")));
    assert!(lines.contains(&"1700000100 0 d41d8cd98f00b204e9800998ecf8427e u3bJz@iaYsq6aMaMSJVq_b"));
}

/// Text round trip: every field FromIPSummaryDump reads comes back the
/// same when its packets are summarized again (`wire_len` is left out: it
/// is the Ethernet frame's length here, the rebuilt packets' otherwise).
#[test]
fn text_round_trip_all_fields() {
    let dir = tmpdir("ipsum-rt");
    let f1 = dir.join("a.txt").to_string_lossy().into_owned();
    let f2 = dir.join("b.txt").to_string_lossy().into_owned();
    let fields = "ntimestamp eth_src eth_dst eth_type ip_src ip_dst ip_proto ip_len ip_id ip_ttl \
                  ip_tos ip_dscp ip_ecn ip_frag ip_fragoff ip_hl ip_sum ip_opt sport dport tcp_seq \
                  tcp_ack tcp_flags tcp_off tcp_window tcp_urp tcp_opt tcp_ntopt tcp_sack udp_len \
                  icmp_type icmp_code icmp_type_name icmp_code_name icmp_flowid icmp_seq \
                  icmp_nextmtu payload_len payload first_timestamp count link direction aggregate \
                  ts_sec ts_usec ts_usec1";
    run_ok(&format!(
        "FromDump({}, STOP true, FORCE_IP true) -> ToIPSummaryDump({f1}, FIELDS {fields})",
        data("mixed.pcap")
    ));
    let r = run_ok(&format!(
        "fi :: FromIPSummaryDump({f1}, STOP true) -> ToIPSummaryDump({f2}, FIELDS {fields})"
    ));
    assert_eq!(r.err, "");
    let a = std::fs::read_to_string(&f1).unwrap();
    let b = std::fs::read_to_string(&f2).unwrap();
    assert_eq!(body(&a).len(), 41);
    for (x, y) in a.lines().zip(b.lines()) {
        assert_eq!(x, y);
    }
    assert_eq!(a, b);
}

/// Byte round trip: Ethernet frames summarized with the header fields and
/// payload, read back with CHECKSUM, give the same bytes, except where the
/// text cannot say everything: bad or absent checksums, fragments (whose
/// transport checksum covers data not present), truncated captures (CHECKSUM
/// extends them), a VLAN tag, and padding options (Click does not print
/// NOPs, so `mss1460;...;wscale7` comes back without the NOP before the
/// window scale).
#[test]
fn byte_round_trip_through_text() {
    let dir = tmpdir("ipsum-bytes");
    let fields = "ntimestamp eth_src eth_dst eth_type ip_src ip_dst ip_proto ip_len ip_id ip_ttl \
                  ip_tos ip_frag ip_fragoff ip_hl ip_opt sport dport tcp_seq tcp_ack tcp_flags \
                  tcp_off tcp_window tcp_urp tcp_opt udp_len icmp_type icmp_code icmp_flowid \
                  icmp_seq payload";
    for (file, differ) in [
        ("udp-64.pcap", vec![]),
        ("mixed.pcap", vec![21u64, 23, 30, 31, 38, 39, 47, 51]),
    ] {
        let txt = dir.join("d.txt").to_string_lossy().into_owned();
        let out = dir.join("d.pcap").to_string_lossy().into_owned();
        run_ok(&format!(
            "FromDump({}, STOP true, FORCE_IP true) -> ToIPSummaryDump({txt}, FIELDS {fields})",
            data(file)
        ));
        run_ok(&format!(
            "FromIPSummaryDump({txt}, STOP true, CHECKSUM true) -> ToDump({out})"
        ));
        let orig: BTreeMap<(i64, u32), click_pcap::Record> = records(&data(file))
            .into_iter()
            .map(|r| ((r.ts_sec, r.ts_nsec), r))
            .collect();
        let got = records(&out);
        assert!(got.len() >= 20, "{file}: {} records", got.len());
        let mut same = 0;
        for g in &got {
            let o = &orig[&(g.ts_sec, g.ts_nsec)];
            let idx = (g.ts_sec - 1_700_000_100) as u64;
            if file == "mixed.pcap" && differ.contains(&idx) {
                assert_ne!(o.data, g.data, "{file} record {idx} was expected to differ");
                continue;
            }
            assert_eq!(o.data, g.data, "{file} record at {}", g.ts_sec);
            assert_eq!(o.orig_len, g.orig_len);
            same += 1;
        }
        assert_eq!(same, got.len() - if differ.is_empty() { 0 } else { 8 });
    }
}

/// BINARY dumps: the layout of one record, byte for byte, and a round trip
/// of mixed.pcap through a binary file giving the same text as writing
/// text directly.
#[test]
fn binary_dumps() {
    let dir = tmpdir("ipsum-bin");
    let f = dir.join("one.bin").to_string_lossy().into_owned();
    run_ok(&format!(
        "FromIPSummaryDump(DATA \"!data timestamp ip_src sport ip_opt tcp_opt eth_src direction\n\
         1.5 1.2.3.4 80 rr{{}}+1 mss1460 0:1:2:3:4:5 <\", STOP true)
         -> ToIPSummaryDump({f}, BINARY true, FIELDS timestamp ip_src sport ip_opt tcp_opt ntimestamp ts_usec1 eth_src icmp_type direction)"
    ));
    let b = std::fs::read(&f).unwrap();
    let head = "!IPSummaryDump 1.3\n!data timestamp ip_src sport ip_opt tcp_opt ntimestamp ts_usec1 eth_src icmp_type direction\n!binary\n";
    assert_eq!(&b[..head.len()], head.as_bytes());
    let mut rec: Vec<u8> = vec![0, 0, 0, 0];
    rec.extend([0, 0, 0, 1, 0, 0x07, 0xa1, 0x20]); // 1 s, 500000 µs
    rec.extend([1, 2, 3, 4]);
    rec.extend([0, 80]);
    rec.extend([8, 7, 7, 4, 0, 0, 0, 0, 0]); // rr{}+1, EOL-padded to 8
    rec.extend([4, 2, 4, 5, 180]);
    rec.extend([0x1d, 0xcd, 0x65, 0, 0, 0, 0, 1]); // ns, then s
    rec.extend([0, 0x16, 0xe3, 0x60, 0, 0, 0, 0]); // low word, high word
    rec.extend([0, 1, 2, 3, 4, 5]);
    rec.push(0); // not ICMP: zero
    rec.push(1); // '<'
    let n = rec.len() as u32;
    rec[..4].copy_from_slice(&n.to_be_bytes());
    assert_eq!(&b[head.len()..], &rec[..]);
    // and it reads back (the zero ICMP type does not apply to TCP)
    let r = run_ok(&format!(
        "FromIPSummaryDump({f}, STOP true) -> ToIPSummaryDump(-, FIELDS timestamp ip_src sport ip_opt tcp_opt ntimestamp ts_usec1 eth_src eth_type direction icmp_type)"
    ));
    assert_eq!(r.err, "");
    assert_eq!(
        body(&r.out),
        ["1.500000 1.2.3.4 80 rr{}+1 mss1460 1.500000 1500000 00-01-02-03-04-05 0800 < -"]
    );

    // mixed.pcap through a binary file
    let fields = "ntimestamp ip_src ip_dst ip_proto ip_len ip_id ip_ttl ip_tos ip_frag \
                  ip_fragoff ip_hl ip_sum ip_opt sport dport tcp_seq tcp_ack tcp_flags tcp_off \
                  tcp_window tcp_urp tcp_opt tcp_ntopt tcp_sack udp_len icmp_type icmp_code \
                  icmp_flowid icmp_seq icmp_nextmtu payload_len first_timestamp count link \
                  direction aggregate ts_usec1 ip_dscp ip_ecn icmp_type_name icmp_code_name";
    let bin = dir.join("m.bin").to_string_lossy().into_owned();
    let txt = dir.join("m.txt").to_string_lossy().into_owned();
    let cfg = format!(
        "fd :: FromDump({}, STOP true, FORCE_IP true) -> t :: Tee -> ToIPSummaryDump({bin}, BINARY true, FIELDS {fields}); t[1] -> ToIPSummaryDump({txt}, FIELDS {fields})",
        data("mixed.pcap")
    );
    run_ok(&cfg);
    let r = run_ok(&format!(
        "FromIPSummaryDump({bin}, STOP true) -> ToIPSummaryDump(-, FIELDS {fields})"
    ));
    assert_eq!(r.err, "");
    let want = std::fs::read_to_string(&txt).unwrap();
    assert_eq!(body(&r.out).len(), 41);
    assert_eq!(body(&r.out), body(&want));
    // payload cannot be binary
    let r = click(&[
        "-q",
        "-e",
        "Idle -> ToIPSummaryDump(-, BINARY true, FIELDS ip_src payload)",
    ]);
    assert_ne!(r.code, 0);
    assert!(
        r.err.contains("cannot use field payload with BINARY"),
        "{}",
        r.err
    );
}

/// FromIPSummaryDump builds headers from the new fields: IP options with
/// the right header length and checksum, TCP options and data offset, ICMP
/// types by name (with the header length of the type), ECN/DSCP words,
/// fragment words, Ethernet headers.
#[test]
fn fields_build_headers() {
    let dir = tmpdir("ipsum-build2");
    let out = dir.join("o.pcap").to_string_lossy().into_owned();
    let cfg = format!(
        "FromIPSummaryDump(STOP true, CHECKSUM true, DATA \"!data ip_src ip_dst ip_proto ip_opt tcp_opt ip_dscp ip_ecn ip_frag\n\
         1.0.0.1 2.0.0.2 T ssrr{{1.1.1.1,^2.2.2.2}} mss1400,sackok,ts7:8,wscale2 46 ce !\n\
         1.0.0.1 2.0.0.2 U nop,148=0:0 - 0 ect2 F\")
         -> CheckIPHeader -> ToDump({out}, ENCAP IP)"
    );
    run_ok(&cfg);
    let recs = records(&out);
    assert_eq!(recs.len(), 2, "CheckIPHeader passed both");
    let p = &recs[0].data;
    assert_eq!(p[0], 0x48, "20 + 12 bytes of options (11 + EOL)");
    assert!(ip_checksum_ok(&p[..32]));
    assert_eq!(&p[20..32], &[137, 11, 8, 1, 1, 1, 1, 2, 2, 2, 2, 0]);
    assert_eq!(p[1], (46 << 2) | 3);
    assert_eq!(&p[6..8], &[0x40, 0]);
    let t = &p[32..];
    // NOP NOP before the timestamp? no: it is not the first option
    assert_eq!(t[12] >> 4, 10, "TCP header 40 bytes");
    assert_eq!(
        &t[20..40],
        &[2, 4, 5, 120, 4, 2, 8, 10, 0, 0, 0, 7, 0, 0, 0, 8, 3, 3, 2, 0]
    );
    assert_eq!(recs[0].data.len(), 72);
    let p = &recs[1].data;
    assert_eq!(p[0], 0x47, "20 + 8 bytes of options (5 + EOL padding)");
    assert_eq!(&p[20..28], &[1, 148, 4, 0, 0, 0, 0, 0]);
    assert!(ip_checksum_ok(&p[..28]));
    assert_eq!(p[1], 2);
    assert_eq!(&p[6..8], &[0x20, 0]);
    assert_eq!(&p[32..34], &[0, 8], "UDP length");

    // ICMP by name; Ethernet fields make an Ethernet frame
    let cfg = format!(
        "FromIPSummaryDump(STOP true, CHECKSUM true, DATA \"!data eth_dst eth_src ip_dst icmp_type_name icmp_code_name icmp_flowid icmp_seq icmp_nextmtu\n\
         !proto I\n\
         0:1:2:3:4:5 a-b-c-d-e-f 9.9.9.9 echo 0 77 3 -\n\
         0:1:2:3:4:5 a-b-c-d-e-f 9.9.9.9 unreachable needfrag - - 1400\n\
         0:1:2:3:4:5 a-b-c-d-e-f 9.9.9.9 timestamp 0 5 6 -\n\
         0:1:2:3:4:5 a-b-c-d-e-f 9.9.9.9 3 port 5 6 1400\")
         -> ToDump({out}, ENCAP ETHER)"
    );
    run_ok(&cfg);
    let recs = records(&out);
    assert_eq!(recs.len(), 4);
    let p = &recs[0].data;
    assert_eq!(&p[..14], &[0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15, 8, 0]);
    assert_eq!(&p[14 + 20..14 + 28], &[8, 0, 0xf7, 0xaf, 0, 77, 0, 3]);
    assert!(ip_checksum_ok(&p[14 + 20..]), "ICMP checksum");
    let r = run_ok(&format!(
        "FromDump({out}, STOP true, FORCE_IP true) -> ToIPSummaryDump(-, FIELDS eth_src eth_dst icmp_type_name icmp_code_name icmp_flowid icmp_seq icmp_nextmtu ip_len)"
    ));
    let e = "0A-0B-0C-0D-0E-0F 00-01-02-03-04-05";
    assert_eq!(
        body(&r.out),
        [
            format!("{e} echo 0 77 3 - 28"),
            format!("{e} unreachable needfrag - - 1400 28"),
            // a timestamp message's header is 20 bytes
            format!("{e} timestamp 0 5 6 - 40"),
            // codes are named for the packet's type; a port unreachable
            // has no next-hop MTU
            format!("{e} unreachable port - - - 28"),
        ]
    );
}

/// Bad option text, bad words and absurd values are reported (file and
/// line), left out of the packet (which is still emitted, as in Click), and
/// counted; a line with nothing usable is a `packet parse error`.
#[test]
fn malformed_fields_are_reported_not_fatal() {
    let dir = tmpdir("ipsum-bad");
    let f = dir.join("bad.txt");
    std::fs::write(
        &f,
        "!data ip_src ip_opt tcp_opt ip_ecn ip_hl tcp_off\n\
         1.0.0.1 rr{1.2.3} - - - -\n\
         1.0.0.2 - mss99999 - - -\n\
         1.0.0.3 - - maybe - -\n\
         1.0.0.4 ssrr{1.2.3.4:5.6.7.8} - - 100 64\n\
         1.0.0.5 nop,rr{}+10 sack1 ce - -\n\
         bogus rr{ x - - -\n",
    )
    .unwrap();
    let cfg = format!(
        "fi :: FromIPSummaryDump({}, STOP true) -> ToIPSummaryDump(-, FIELDS ip_src ip_hl ip_opt ip_ecn)",
        f.display()
    );
    let r = click(&["-e", &cfg, "-h", "fi.bad_fields", "-h", "fi.count"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let errs: Vec<&str> = r.err.lines().collect();
    let file = f.display().to_string();
    assert_eq!(
        errs,
        [
            format!("fi :: FromIPSummaryDump: {file}:2: bad ip_opt 'rr{{1.2.3}}'"),
            format!("fi :: FromIPSummaryDump: {file}:3: bad tcp_opt 'mss99999'"),
            format!("fi :: FromIPSummaryDump: {file}:4: bad ip_ecn 'maybe'"),
            format!("fi :: FromIPSummaryDump: {file}:5: bad ip_hl '100'"),
            format!(
                "fi :: FromIPSummaryDump: {file}:5: bad ip_opt 'ssrr{{1.2.3.4:5.6.7.8}}' (further bad fields not reported)"
            ),
            format!("fi :: FromIPSummaryDump: {file}:7: packet parse error"),
        ]
    );
    let out: Vec<&str> = r.out.lines().collect();
    assert_eq!(
        &out[2..],
        [
            "1.0.0.1 20 . no",
            "1.0.0.2 20 . no",
            "1.0.0.3 20 . no",
            "1.0.0.4 20 . no",
            "1.0.0.5 20 . ce",
            "fi.bad_fields:",
            "11",
            "",
            "fi.count:",
            "5",
            "",
        ]
    );

    // unknown and write-only fields in !data are warnings; their columns
    // are skipped
    let r = run_ok(
        "FromIPSummaryDump(STOP true, DATA \"!data ip_src frob payload_md5 ip_capture_len ip_dst\n1.1.1.1 x y z 2.2.2.2\") -> ToIPSummaryDump(-, FIELDS src dst)",
    );
    assert_eq!(body(&r.out), ["1.1.1.1 2.2.2.2"]);
    assert!(
        r.err.contains(":1: warning: unknown content type 'frob'"),
        "{}",
        r.err
    );
    assert!(
        r.err
            .contains("warning: content type 'payload_md5' ignored on input"),
        "{}",
        r.err
    );
    // no !data at all
    let r = run_ok("FromIPSummaryDump(STOP true, DATA \"1.1.1.1\n2.2.2.2\") -> Discard");
    assert!(r.err.contains("missing banner line"), "{}", r.err);
    assert!(r.err.contains(":1: no '!data' provided"), "{}", r.err);
    assert_eq!(r.err.lines().count(), 2, "{}", r.err);
}

/// Malformed binary dumps: a record cut by the end of the file, a length
/// word below 4, a record shorter than its fields, and random bytes; never a
/// panic.
#[test]
fn malformed_binary_dumps() {
    let dir = tmpdir("ipsum-badbin");
    let good = dir.join("g.bin").to_string_lossy().into_owned();
    run_ok(&format!(
        "FromDump({}, STOP true, FORCE_IP true) -> ToIPSummaryDump({good}, BINARY true, FIELDS ip_src ip_id sport tcp_opt ip_len)",
        data("udp-64.pcap")
    ));
    let b = std::fs::read(&good).unwrap();
    let head_len = b.windows(8).position(|w| w == b"!binary\n").unwrap() + 8;
    let rec_len = u32::from_be_bytes(b[head_len..head_len + 4].try_into().unwrap()) as usize;
    assert_eq!(rec_len, 4 + 4 + 2 + 2 + 1 + 4);
    let read = |bytes: &[u8]| {
        let f = dir.join("x.bin");
        std::fs::write(&f, bytes).unwrap();
        click(&[
            "-e",
            &format!(
                "fi :: FromIPSummaryDump({}, STOP true) -> ToIPSummaryDump(-, FIELDS ip_src ip_id sport ip_len)",
                f.display()
            ),
            "-h",
            "fi.count",
        ])
    };
    // cut inside the 4th record
    let r = read(&b[..head_len + 3 * rec_len + 7]);
    assert_eq!(r.code, 0);
    assert!(
        r.err
            .contains(":record 4: truncated binary record (7 of 17 bytes)"),
        "{}",
        r.err
    );
    assert_eq!(
        body(&r.out)[..3],
        [
            "10.0.0.1 1 1234 50",
            "10.0.0.1 2 1234 50",
            "10.0.0.1 3 1234 50"
        ]
    );
    assert_eq!(r.out.lines().last(), Some("3"), "{}", r.out);
    // a length word below 4
    let mut x = b[..head_len + rec_len].to_vec();
    x.extend([0, 0, 0, 2, 9, 9]);
    let r = read(&x);
    assert!(
        r.err.contains(":record 2: binary record too short"),
        "{}",
        r.err
    );
    assert_eq!(r.out.lines().last(), Some("1"), "{}", r.out);
    // a record whose length covers only the first two fields: those apply
    let mut x = b[..head_len].to_vec();
    x.extend([0, 0, 0, 10, 10, 0, 0, 9, 0, 42]);
    x.extend([0, 0, 0, 4]); // empty record: nothing usable
    let r = read(&x);
    // (tcp_opt, being last, is still applied: a TCP header with port 0)
    assert_eq!(body(&r.out), ["10.0.0.9 42 0 40", "0.0.0.0 0 0 40", "2"]);
    assert_eq!(r.err, "");
    // a huge length word
    let mut x = b[..head_len].to_vec();
    x.extend([0x7f, 0xff, 0xff, 0xff, 1, 2, 3]);
    let r = read(&x);
    assert!(r.err.contains("binary record too long"), "{}", r.err);
    // random bytes after !binary
    let mut seed = 12345u32;
    for _ in 0..20 {
        let mut x = b[..head_len].to_vec();
        for _ in 0..200 {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            x.push((seed >> 16) as u8);
        }
        let r = read(&x);
        assert_eq!(r.code, 0, "{}", r.err);
        assert!(!r.err.contains("panicked"), "{}", r.err);
    }
    // and random text lines with options
    let mut text = String::from("!data ip_opt tcp_opt tcp_sack ip_src payload\n");
    let alphabet = b"rstslrpc{}^,;.:=+!0123456789 nopeolmswackx\"";
    for _ in 0..300 {
        for _ in 0..40 {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            text.push(alphabet[(seed >> 16) as usize % alphabet.len()] as char);
        }
        text.push('\n');
    }
    let f = dir.join("r.txt");
    std::fs::write(&f, text).unwrap();
    let r = click(&[
        "-e",
        &format!(
            "FromIPSummaryDump({}, STOP true) -> ToIPSummaryDump(-, FIELDS ip_opt tcp_opt)",
            f.display()
        ),
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(!r.err.contains("panicked"), "{}", r.err);
}

/// BAD_PACKETS: a `!bad` line before each bad packet's summary, saying
/// what Click says.
#[test]
fn bad_packets_lines() {
    let cfg = format!(
        "FromDump({}, STOP true) -> MarkIPHeader(14) -> ToIPSummaryDump(-, FIELDS ts_sec ip_src sport, BAD_PACKETS true)",
        data("mixed.pcap")
    );
    let r = run_ok(&cfg);
    let lines: Vec<&str> = r.out.lines().skip(2).collect();
    let after = |sec: &str| -> Vec<&str> {
        let i = lines
            .iter()
            .position(|l| l.starts_with(&format!("17000001{sec} ")))
            .unwrap();
        lines[i.saturating_sub(1)..=i].to_vec()
    };
    assert_eq!(after("19"), ["!bad IP version 0", "1700000119 - -"]);
    assert_eq!(
        after("22"),
        ["!bad fragmented TCP/UDP header", "1700000122 10.0.0.1 -"]
    );
    assert_eq!(after("24"), ["!bad IP version 6", "1700000124 - -"]);
    assert_eq!(
        after("31"),
        ["!bad truncated IP missing 952", "1700000131 10.0.0.1 1234"]
    );
    assert_eq!(after("32"), ["!bad no IP header", "1700000132 - -"]);
    assert_eq!(after("33"), ["!bad IP version 5", "1700000133 - -"]);
    assert_eq!(after("34"), ["!bad IP header length 3", "1700000134 - -"]);
    assert_eq!(after("35"), ["!bad IP length 28", "1700000135 - -"]);
    // ICMP has no ports, which is not a bad packet
    assert_eq!(after("15")[1], "1700000115 10.0.0.1 -");
    assert!(!after("15")[0].starts_with('!'));
    // CAREFUL_TRUNC false accepts the truncated capture
    let r = run_ok(&cfg.replace("BAD_PACKETS true", "BAD_PACKETS true, CAREFUL_TRUNC false"));
    assert!(!r.out.contains("truncated IP missing"));
    // Click's IPSummaryDump-01: truncated TCP headers
    let r = run_ok(
        "FromIPSummaryDump(DATA \"!data sport dport tcp_urp tcp_opt\n1 2 3 wscale10\n2 3 4 wscale10\", STOP true) \
         -> s :: RoundRobinSwitch -> t :: ToIPSummaryDump(-, BAD_PACKETS true, FIELDS sport dport tcp_urp tcp_opt); \
         s[1] -> Truncate(38) -> t",
    );
    // (Truncate adds what it removes to the extra length, so the IP
    // length is accounted for and the TCP header is what is short)
    assert_eq!(
        r.out.lines().skip(2).collect::<Vec<_>>(),
        ["1 2 3 wscale10", "!bad truncated TCP header", "2 3 - -"]
    );
}

/// MULTIPACKET: a line with `count` N becomes N packets on input, whose
/// lengths divide the total and whose timestamps run from
/// `first_timestamp` to `timestamp`; ToIPSummaryDump(MULTIPACKET) writes N
/// lines.
#[test]
fn multipacket_and_count() {
    let r = run_ok(
        "FromIPSummaryDump(DATA \"!data timestamp first_timestamp count ip_len\n10 4 3 3000\n11 - - 50\", STOP true, MULTIPACKET true) \
         -> ToIPSummaryDump(-, FIELDS timestamp ip_len count first_timestamp)",
    );
    assert_eq!(
        body(&r.out),
        [
            "4.000000 1000 1 4.000000",
            "7.000000 1000 1 4.000000",
            "10.000000 1000 1 4.000000",
            "11.000000 50 1 0.000000",
        ]
    );
    // without MULTIPACKET, count is an annotation
    let r = run_ok(
        "FromIPSummaryDump(DATA \"!data timestamp first_ts count ip_len\n10 4 3 3000\", STOP true) \
         -> ToIPSummaryDump(-, FIELDS ts pkt_count wire_len)",
    );
    assert_eq!(body(&r.out), ["10.000000 3 40"]);
    let r = run_ok(
        "FromIPSummaryDump(DATA \"!data timestamp first_ts count ip_len\n10 4 3 3000\", STOP true) \
         -> ToIPSummaryDump(-, MULTIPACKET true, FIELDS ts count ip_len)",
    );
    assert_eq!(
        body(&r.out),
        ["4.000000 1 3000", "7.000000 1 3000", "10.000000 1 3000"]
    );
}

/// Names: Click's synonyms, `!data` spellings (ntimestamp is `timestamp`
/// in text dumps), and the `ip_` prefix for bare names.
#[test]
fn field_names_and_header() {
    let r = run_ok(
        "FromIPSummaryDump(DATA \"!data ts src\n1.000000001 1.2.3.4\", STOP true) -> ToIPSummaryDump(-, FIELDS ntimestamp first_ts ether_src agg wire_length dscp ecn opt 'ip hl' tcp_win payload_length)",
    );
    let lines: Vec<&str> = r.out.lines().collect();
    assert_eq!(
        lines[1],
        "!data timestamp first_timestamp eth_src aggregate wire_len ip_dscp ip_ecn ip_opt ip_hl tcp_window payload_len"
    );
    assert_eq!(lines[2], "1.000000001 0.000000 - 0 40 0 no . 20 0 0");
    let r = click(&["-q", "-e", "Idle -> ToIPSummaryDump(-, FIELDS ip_src frob)"]);
    assert_ne!(r.code, 0);
    assert!(r.err.contains("unknown content type 'frob'"), "{}", r.err);
}

/// Click's `!proto` and `!flowid` lines, FLOWID, and old (1.0) fragment
/// offsets.
#[test]
fn bang_lines_and_versions() {
    let r = run_ok(
        "FromIPSummaryDump(DATA \"!IPSummaryDump 1.0\n!flowid 1.1.1.1 10 2.2.2.2 20 U\n!data ip_id ip_fragoff\n1 8\n!proto icmp\n!data ip_id\n2\", STOP true) \
         -> ToIPSummaryDump(-, FIELDS ip_id src sport dst dport proto ip_fragoff)",
    );
    assert_eq!(
        body(&r.out),
        ["1 1.1.1.1 - 2.2.2.2 - U 64", "2 1.1.1.1 - 2.2.2.2 - I 0"]
    );
    let r = run_ok(
        "FromIPSummaryDump(DATA \"!data ip_id\n1\", STOP true, FLOWID 3.3.3.3 7 4.4.4.4 8) \
         -> ToIPSummaryDump(-, FIELDS src sport dst dport proto)",
    );
    assert_eq!(body(&r.out), ["3.3.3.3 7 4.4.4.4 8 T"]);
    let r = run_ok(
        "FromIPSummaryDump(DATA \"!IPSummaryDump 2.0\n!data ip_id\n1\", STOP true) -> Discard",
    );
    assert!(
        r.err.contains("unexpected IPSummaryDump version 2.0"),
        "{}",
        r.err
    );
}

/// An IP length longer than the headers and payload given: as in Click
/// (ipsumdump_payload.cc), the TCP header, or with `tcp_opt` given the IP
/// header, grows by whole words of EOL options, and the payload is written
/// where it started, over them (Click's Pad-01 test). With both option
/// fields given nothing grows: the packet is shorter than its IP length.
#[test]
fn payload_shorter_than_ip_len_as_click() {
    let dir = tmpdir("ipsd-payload-len");
    let out = |fields: &str, row: &str| {
        let f = dir.join("p.txt");
        std::fs::write(&f, format!("!data {fields}\n{row}\n")).unwrap();
        let r = run_ok(&format!(
            "FromIPSummaryDump({}, STOP true) -> ToIPSummaryDump(-, FIELDS ip_len \
             ip_capture_len ip_hl tcp_off payload)",
            f.display()
        ));
        body(&r.out).join("\n")
    };
    assert_eq!(
        out("ip_src ip_len payload", "1.0.0.1 50 \"HiFart\""),
        "50 46 20 24 \"rt\""
    );
    assert_eq!(
        out("ip_src tcp_opt ip_len payload", "1.0.0.1 . 50 \"HiFart\""),
        "50 46 24 20 \"rt\""
    );
    assert_eq!(
        out(
            "ip_src ip_opt tcp_opt ip_len payload",
            "1.0.0.1 . . 50 \"HiFart\""
        ),
        "50 46 20 20 \"HiFart\""
    );
}
