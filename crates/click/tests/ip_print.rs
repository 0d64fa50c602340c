//! IPPrint on the real frames of `tests/data/mixed.pcap`: every expected
//! line is derived by hand from Click's ipprint.cc and the packet
//! parameters in `tests/data/make_pcaps.py` (scapy defaults: IP ID 1, TTL
//! 64, TCP window 8192).

#[path = "ip_harness.rs"]
mod ip_harness;
#[path = "ip_pkt.rs"]
mod ip_pkt;
use click::prelude::*;
use ip_harness::*;
use ip_pkt::*;

/// Runs `config` (entry element `m`) on records of mixed.pcap, with their
/// capture timestamps, and returns standard error.
fn print_records(config: &str, recs: &[usize]) -> String {
    let all = pcap_records("mixed.pcap");
    clear_collected();
    let r = try_build(&format!("src :: BatchSrc -> {}", config), 32).unwrap();
    for &i in recs {
        let (ts, d) = &all[i];
        let mut p = r.router.pool().make(DEFAULT_HEADROOM, d, 0);
        p.set_timestamp(*ts);
        r.router.inject("m", 0, p).unwrap();
    }
    r.stderr()
}

fn lines(config: &str, recs: &[usize]) -> Vec<String> {
    print_records(config, recs)
        .lines()
        .map(String::from)
        .collect()
}

const PLAIN: &str = "m :: MarkIPHeader(14) -> IPPrint(TIMESTAMP false) -> out :: Collect;";

#[test]
fn tcp_lines() {
    let got = lines(PLAIN, &[0, 1, 2, 3, 4, 5, 9, 38, 44, 47, 48]);
    let want = [
        "10.0.0.1.40000 > 10.0.0.2.80: S 1000:1001(1,54,40) win 8192",
        "10.0.0.2.80 > 10.0.0.1.40000: S 5000:5001(1,54,40) ack 1001 win 8192",
        "10.0.0.1.40000 > 10.0.0.2.80: . 1001:1001(0,54,40) ack 5001 win 8192",
        "10.0.0.1.40000 > 10.0.0.2.80: P 1001:1035(34,88,74) ack 5001 win 8192",
        "10.0.0.1.40000 > 10.0.0.2.80: F 1035:1036(1,54,40) ack 5001 win 8192",
        "10.0.0.1.40001 > 10.0.0.2.22: S 7:8(1,54,40) win 8192",
        "10.0.0.1.40003 > 10.0.0.2.8080: R 1:1(0,54,40) win 8192",
        "10.0.0.1.40004 > 10.0.0.2.80: S 0:1(1,54,40) win 8192",
        "192.168.1.10.50000 > 10.0.0.2.443: S 0:1(1,54,40) win 8192",
        "10.0.0.1.40005 > 10.0.0.2.80: S 0:1(1,74,60) win 8192",
        "10.0.0.1.40006 > 10.0.0.2.22: P 0:4(4,58,44) ack 0 win 8192",
    ];
    assert_eq!(got, want);
}

#[test]
fn udp_icmp_other_and_fragment_lines() {
    let got = lines(
        PLAIN,
        &[
            10, 12, 13, 14, 15, 16, 17, 18, 21, 22, 26, 27, 41, 46, 49, 51,
        ],
    );
    let want = [
        "10.0.0.1.33333 > 10.0.0.53.53: udp 37",
        "10.0.0.1.123 > 10.0.0.123.123: udp 56",
        "10.0.0.1.1234 > 10.0.0.2.5678: udp 40",
        "10.0.0.1.1111 > 10.0.0.2.9: udp 15",
        "10.0.0.1 > 10.0.0.2: icmp echo (1, 1)",
        "10.0.0.2 > 10.0.0.1: icmp echo-reply (1, 1)",
        "10.0.0.2 > 10.0.0.1: icmp 10.0.0.2 unreachable port udp/9999",
        "10.0.0.254 > 10.0.0.1: icmp timeexceeded transit",
        "10.0.0.1.5000 > 10.0.0.2.6000: udp 108 (frag 16962:64@0+)",
        "10.0.0.1 > 10.0.0.2: udp (frag 16962:44@64)",
        "10.0.0.1.1234 > 10.0.0.2.5678: udp 8",
        "10.0.0.1.1234 > 10.0.0.2.5678: udp 8",
        "10.0.0.1 > 10.0.0.2: ip-proto-47",
        "10.0.0.1 > 8.8.8.8: icmp echo (2, 9)",
        "10.0.0.1.1234 > 10.0.0.2.5678: udp 26",
        "10.0.0.1.1234 > 10.0.0.2.5678: udp 966",
    ];
    assert_eq!(got, want);
}

#[test]
fn malformed_headers() {
    // 31: IP length 1000 > frame (UDP still whole); 32: 10-byte runt;
    // 33: version 5 (not checked); 34: IHL 3, so the "UDP header" is the
    // addresses; 35: IHL 15, past the end of the frame.
    let got = lines(PLAIN, &[31, 32, 33, 34, 35]);
    let want = [
        "10.0.0.1.1234 > 10.0.0.2.5678: udp 28",
        "truncated-ip",
        "10.0.0.1.1 > 10.0.0.2.2: udp 8",
        "10.0.0.1.2560 > 10.0.0.2.1: udp 2560",
        "10.0.0.1 > 10.0.0.2: truncated-udp",
    ];
    assert_eq!(got, want);
    // No IP header annotation: nothing printed, packet passes.
    let r = run_with(
        "src :: BatchSrc -> IPPrint -> out :: Collect;",
        &capture("mixed.pcap")[..3],
        32,
    );
    assert_eq!(r.stderr(), "");
    assert_eq!(collected_data("out").len(), 3);
}

#[test]
fn truncated_transport_headers() {
    let ip = Ip::default();
    let tcp = ip.tcp(1000, 80, 5, 6, 0x12, 512, &[], b"");
    let udp = ip.udp(53, 53, b"x");
    let icmp_echo = Ip {
        proto: 1,
        ..ip.clone()
    }
    .packet(&[8, 0, 0, 0, 0, 1]);
    // ICMP unreachable (protocol) quoting a header, truncated quote,
    // needfrag with MTU, host unreachable, unknown type and code.
    let mut quoted = Ip {
        proto: 47,
        ..ip.clone()
    }
    .packet(&[0; 8]);
    quoted.truncate(28);
    let mk = |ty: u8, code: u8, rest: [u8; 4], q: &[u8]| {
        let mut b = vec![ty, code, 0, 0];
        b.extend_from_slice(&rest);
        b.extend_from_slice(q);
        Ip {
            proto: 1,
            ..Ip::default()
        }
        .packet(&b)
    };
    let input = vec![
        tcp[..20 + 3].to_vec(),
        tcp[..20 + 10].to_vec(),
        tcp[..20 + 15].to_vec(),
        udp[..20 + 6].to_vec(),
        icmp_echo,
        mk(3, 2, [0; 4], &quoted),
        mk(3, 3, [0; 4], &quoted[..22]),
        mk(3, 3, [0; 4], &quoted[..10]),
        mk(3, 4, [0, 0, 0x05, 0xdc], &quoted),
        mk(3, 1, [0; 4], &quoted),
        mk(3, 99, [0; 4], &quoted),
        mk(42, 7, [0; 4], &[]),
        mk(5, 1, [0; 4], &quoted),
        mk(11, 0, [0; 4], &[]),
        mk(12, 5, [0; 4], &[]),
    ];
    // The truncated TCP/UDP ones keep their original IP length field, as
    // in a capture cut short; IPPrint uses the smaller of the two.
    let r = run_with(
        "src :: BatchSrc -> MarkIPHeader -> IPPrint(TIMESTAMP false) -> out :: Collect;",
        &input,
        32,
    );
    let want = "10.0.0.1 > 10.0.0.2: truncated-tcp\n\
                10.0.0.1.1000 > 10.0.0.2.80: truncated-tcp\n\
                10.0.0.1.1000 > 10.0.0.2.80: S 5:6(1,35,40) ack 6truncated-tcp\n\
                10.0.0.1.53 > 10.0.0.2.53: truncated-udp\n\
                10.0.0.1 > 10.0.0.2: icmp echo truncated-icmp\n\
                10.0.0.1 > 10.0.0.2: icmp 10.0.0.2 unreachable protocol 47\n\
                10.0.0.1 > 10.0.0.2: icmp 10.0.0.2 unreachable port protocol 47truncated-icmp\n\
                10.0.0.1 > 10.0.0.2: icmp unreachable port truncated-icmp\n\
                10.0.0.1 > 10.0.0.2: icmp 10.0.0.2 unreachable needfrag (mtu 1500)\n\
                10.0.0.1 > 10.0.0.2: icmp 10.0.0.2 unreachable host\n\
                10.0.0.1 > 10.0.0.2: icmp 10.0.0.2 unreachable code 99\n\
                10.0.0.1 > 10.0.0.2: icmp type 42 code 7\n\
                10.0.0.1 > 10.0.0.2: icmp redirect host\n\
                10.0.0.1 > 10.0.0.2: icmp timeexceeded transit\n\
                10.0.0.1 > 10.0.0.2: icmp parameterproblem code 5\n";
    assert_eq!(r.stderr(), want);
}

#[test]
fn label_timestamp_and_field_options() {
    let got = lines(
        "m :: MarkIPHeader(14) -> Paint(5) -> IPPrint(lbl, ID true, TTL true, TOS true, LENGTH true, PAINT true) -> out :: Collect;",
        &[0, 3, 29],
    );
    let want = [
        "lbl: 1700000100.000000: paint 5: id 1 ttl 64 tos 0 length 40 10.0.0.1.40000 > 10.0.0.2.80: S 1000:1001(1,54,40) win 8192",
        "lbl: 1700000103.111039: paint 5: id 1 ttl 64 tos 0 length 74 10.0.0.1.40000 > 10.0.0.2.80: P 1001:1035(34,88,74) ack 5001 win 8192",
        "lbl: 1700000129.073377: paint 5: id 1 ttl 0 tos 0 length 28 10.0.0.1.1234 > 10.0.0.2.5678: udp 8",
    ];
    assert_eq!(got, want);
    let got = lines(
        "m :: MarkIPHeader(14) -> Paint(5) -> IPPrint(AGGREGATE true, PAINT true, TIMESTAMP false) -> out :: Collect;",
        &[13],
    );
    assert_eq!(got, ["#0.5: 10.0.0.1.1234 > 10.0.0.2.5678: udp 40"]);
    let got = lines(
        "m :: MarkIPHeader(14) -> IPPrint(AGGREGATE true, TIMESTAMP false) -> out :: Collect;",
        &[13],
    );
    assert_eq!(got, ["#0: 10.0.0.1.1234 > 10.0.0.2.5678: udp 40"]);
    // SWAP false: echo ID and sequence as a little-endian host reads them.
    let got = lines(
        "m :: MarkIPHeader(14) -> IPPrint(TIMESTAMP false, SWAP false) -> out :: Collect;",
        &[46],
    );
    assert_eq!(got, ["10.0.0.1 > 8.8.8.8: icmp echo (512, 2304)"]);
}

#[test]
fn contents_and_payload() {
    let out = print_records(
        "m :: MarkIPHeader(14) -> IPPrint(TIMESTAMP false, CONTENTS hex, MAXLENGTH 24) -> out :: Collect;",
        &[15],
    );
    assert_eq!(
        out,
        "10.0.0.1 > 10.0.0.2: icmp echo (1, 1)\n  52540000 00025254 00000001 08004500 003c0001 00004001\n"
    );
    let out = print_records(
        "m :: MarkIPHeader(14) -> IPPrint(TIMESTAMP false, PAYLOAD ascii) -> out :: Collect;",
        &[3],
    );
    assert_eq!(
        out,
        "10.0.0.1.40000 > 10.0.0.2.80: P 1001:1035(34,88,74) ack 5001 win 8192\n  GET / HT TP/1.1.. Host: 10 .0.0.2.. ..\n"
    );
    // Payload of a UDP packet in hex, all of it, over two lines.
    let data: Vec<u8> = (0..30u8).collect();
    let p = Ip::default().udp(7, 9, &data);
    let r = run_with(
        "src :: BatchSrc -> MarkIPHeader -> IPPrint(TIMESTAMP false, PAYLOAD HEX, MAXLENGTH -1) -> out :: Collect;",
        &[p],
        32,
    );
    assert_eq!(
        r.stderr(),
        "10.0.0.1.7 > 10.0.0.2.9: udp 38\n  00010203 04050607 08090a0b 0c0d0e0f 10111213 14151617\n  18191a1b 1c1d\n"
    );
    // ASCII contents of a whole frame: 48 characters a line.
    let p = Ip::default().udp(7, 9, &[b'a'; 40]);
    let r = run_with(
        "src :: BatchSrc -> MarkIPHeader -> IPPrint(TIMESTAMP false, CONTENTS ASCII) -> out :: Collect;",
        &[p],
        32,
    );
    // The 28 header bytes as printable characters, then 40 'a's: groups of
    // 8 separated by spaces, 48 to a line.
    let h = Ip::default().udp(7, 9, &[b'a'; 40]);
    let chars: Vec<char> = h
        .iter()
        .map(|&b| {
            if (32..=126).contains(&b) {
                b as char
            } else {
                '.'
            }
        })
        .collect();
    assert_eq!(&chars[..4], &['E', '.', '.', 'D']);
    let text = |a: usize, b: usize| -> String {
        chars[a..b]
            .chunks(8)
            .map(|c| c.iter().collect::<String>())
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        r.stderr(),
        format!(
            "10.0.0.1.7 > 10.0.0.2.9: udp 48\n  {}\n  {}\n",
            text(0, 48),
            text(48, 68)
        )
    );
    assert!(r.stderr().ends_with("\n  aaaaaaaa aaaaaaaa aaaa\n"));
}

#[test]
fn active_handler_and_config_errors() {
    let r = run_with(
        "src :: BatchSrc -> MarkIPHeader(14) -> p :: IPPrint(TIMESTAMP false, ACTIVE false) -> out :: Collect;",
        &capture("mixed.pcap")[13..14],
        32,
    );
    assert_eq!(r.stderr(), "");
    assert_eq!(r.read("p.active"), "false");
    r.write("p.active", "true").unwrap();
    assert_eq!(r.read("p.active"), "true");
    for (cfg, msg) in [
        (
            "IPPrint(CONTENTS bogus)",
            "bad contents value 'BOGUS'; should be 'NONE', 'HEX', or 'ASCII'",
        ),
        (
            "IPPrint(PAYLOAD bogus)",
            "bad payload value 'BOGUS'; should be 'false', 'hex', or 'ascii'",
        ),
        (
            "IPPrint(PAYLOAD hex, CONTENTS hex)",
            "specify at most one of PAYLOAD and CONTENTS",
        ),
        ("IPPrint(OUTFILE x)", "OUTFILE: unknown argument"),
    ] {
        let e = try_build(&format!("src :: BatchSrc -> {} -> Discard;", cfg), 1)
            .err()
            .unwrap_or_else(|| panic!("{} should fail", cfg));
        assert!(e.iter().any(|l| l.ends_with(msg)), "{}: {:?}", cfg, e);
    }
    assert!(try_build("src :: BatchSrc -> IPPrint(x, CHANNEL foo) -> Discard;", 1).is_ok());
}
