//! IPFragmenter and IPReassembler: byte-exact fragments of real datagrams,
//! reassembly in any order, overlaps, duplicates, malformed fragments,
//! expiry by timer and the memory bound.

#[path = "ip_harness.rs"]
mod ip_harness;
#[path = "ip_pkt.rs"]
mod ip_pkt;
use ip_harness::*;
use ip_pkt::*;

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A 4000-byte UDP datagram (8-byte header + 3992 data bytes) in IP.
fn big_udp(id: u16) -> (Ip, Vec<u8>) {
    let ip = Ip {
        src: [192, 168, 1, 10],
        dst: [172, 16, 0, 5],
        id,
        ttl: 33,
        ..Ip::default()
    };
    let data: Vec<u8> = (0..3992u32).map(|i| (i * 7 + i / 251) as u8).collect();
    let p = ip.udp(4444, 5555, &data);
    assert_eq!(p.len(), 4020);
    (ip, p)
}

/// Independent fragmentation of `ip_pkt` (20-byte header) into pieces of
/// `sizes` data bytes, following RFC 791.
fn ref_fragments(hdr: &Ip, ip_pkt: &[u8], sizes: &[usize]) -> Vec<Vec<u8>> {
    let payload = &ip_pkt[20..];
    let mut out = Vec::new();
    let mut off = 0;
    for (k, &n) in sizes.iter().enumerate() {
        let last = k + 1 == sizes.len();
        let h = Ip {
            flags_off: (if last { 0 } else { 0x2000 }) | (off / 8) as u16,
            ..hdr.clone()
        };
        out.push(h.packet(&payload[off..off + n]));
        off += n;
    }
    assert_eq!(off, payload.len());
    out
}

#[test]
fn fragment_4000_byte_udp_at_mtu_1500() {
    let (hdr, p) = big_udp(0x1234);
    let want = ref_fragments(&hdr, &p, &[1480, 1480, 1040]);
    let cfg = "src :: BatchSrc -> MarkIPHeader -> f :: IPFragmenter(1500) -> out :: Collect;";
    let (r, seen) = run_both(cfg, std::slice::from_ref(&p), &["out"]);
    let got: Vec<Vec<u8>> = seen[0].iter().map(|s| s.data.clone()).collect();
    assert_eq!(got, want);
    for s in &seen[0] {
        assert!(s.data.len() <= 1500);
        assert!(ip_hdr_ok(&s.data));
        assert_eq!(s.network_header_offset, Some(0));
        assert_eq!(s.transport_header_offset, Some(20));
    }
    assert_eq!(r.read("f.fragments"), "3");
    assert_eq!(r.read("f.fragmented_count"), "1");
    assert_eq!(r.read("f.drops"), "0");
    assert_eq!(r.stderr(), "");
}

#[test]
fn fragment_then_reassemble_is_byte_identical() {
    let (_, p) = big_udp(7);
    let cfg = "src :: BatchSrc -> MarkIPHeader -> IPFragmenter(1500) -> r :: IPReassembler -> out :: Collect;";
    let (r, seen) = run_both(cfg, std::slice::from_ref(&p), &["out"]);
    assert_eq!(seen[0].len(), 1);
    assert_eq!(seen[0][0].data, p);
    assert_eq!(seen[0][0].network_header_offset, Some(0));
    assert_eq!(seen[0][0].transport_header_offset, Some(20));
    assert!(r.read("r.dump").starts_with(
        "frags seen total:    3\ngood reassemblies:   1\nfailed reassemblies: 0\nbad fragments seen:  0\ncached chunk data:\n"
    ));
    // Several MTUs and a mix of datagrams (the small one passes through).
    for mtu in [68usize, 100, 576, 1000, 1500, 4019, 4020] {
        let (_, a) = big_udp(1);
        let (_, b) = big_udp(2);
        let small = Ip::default().udp(1, 2, b"tiny");
        let input = vec![a.clone(), small.clone(), b.clone()];
        let cfg = format!(
            "src :: BatchSrc -> CheckIPHeader -> f :: IPFragmenter({}) -> c :: Counter -> IPReassembler -> out :: Collect;",
            mtu
        );
        let (r, seen) = run_both(&cfg, &input, &["out"]);
        let got: Vec<Vec<u8>> = seen[0].iter().map(|s| s.data.clone()).collect();
        assert_eq!(got, input, "mtu {}", mtu);
        let per = ((mtu - 20) & !7).max(8);
        let nfrag = if mtu >= 4020 {
            0
        } else {
            4000usize.div_ceil(per)
        };
        assert_eq!(
            r.read("f.fragments"),
            (2 * nfrag).to_string(),
            "mtu {}",
            mtu
        );
        assert_eq!(
            r.read("c.count"),
            (2 * nfrag.max(1) + 1).to_string(),
            "mtu {}",
            mtu
        );
    }
}

fn data_of(sink: &str) -> Vec<Vec<u8>> {
    collected_data(sink)
}

/// Builds `config` (whose entry element is `m`) and pushes `pkts` into it
/// without running the scheduler, so no timer fires.
fn inject_only(config: &str, pkts: &[Vec<u8>]) -> TestRouter {
    clear_collected();
    let r = try_build(&format!("src :: BatchSrc -> {}", config), 32).unwrap();
    r.inject("m", 0, pkts);
    r
}

#[test]
fn fragments_keep_mac_header_and_annotations() {
    let (hdr, p) = big_udp(9);
    let f = ether(&p);
    run_with(
        "src :: BatchSrc -> Paint(5) -> CheckIPHeader(14) -> SetIPAddress(9.8.7.6) -> IPFragmenter(1500) -> out :: Collect;",
        std::slice::from_ref(&f),
        32,
    );
    let out = collected("out");
    let want = ref_fragments(&hdr, &p, &[1480, 1480, 1040]);
    assert_eq!(out.len(), 3);
    assert_eq!(out[0].data, ether(&want[0]));
    assert_eq!(out[0].network_header_offset, Some(14));
    assert_eq!(out[1].data, want[1]);
    assert_eq!(out[2].data, want[2]);
    for s in &out {
        assert_eq!(s.anno.bytes[16], 5, "paint copied");
        assert_eq!(&s.anno.bytes[..4], &[9, 8, 7, 6], "dst copied");
    }
    // Reassembly from the Ethernet-framed fragments gives back the frame.
    run_with(
        "src :: BatchSrc -> CheckIPHeader(14) -> IPFragmenter(1500) -> r :: IPReassembler -> out :: Collect;",
        std::slice::from_ref(&f),
        32,
    );
    assert_eq!(collected_data("out"), vec![f]);
}

#[test]
fn options_are_copied_by_copy_flag() {
    // Record route (type 7, not copied), NOP, loose source route (0x83,
    // copied), router alert (0x94, copied), end of list.
    let opts = vec![
        7, 7, 4, 0, 0, 0, 0, // RR, 7 bytes
        1, // NOP
        0x83, 7, 4, 10, 9, 8, 7, // LSRR, 7 bytes
        0x94, 4, 0, 0, // router alert
        0, // EOL
    ];
    let ip = Ip {
        options: opts.clone(),
        id: 0xbeef,
        ..Ip::default()
    };
    let data: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
    let p = ip.udp(53, 53, &data); // 40-byte header + 308 bytes
    assert_eq!(p.len(), 348);
    let r = run_with(
        "src :: BatchSrc -> CheckIPHeader -> f :: IPFragmenter(150) -> out :: Collect;",
        std::slice::from_ref(&p),
        32,
    );
    let out = data_of("out");
    // First: 40-byte header, (150-40)&~7 = 104 data bytes.
    // Later: 20 + 12 (LSRR 7 + RA 4, padded) = 32-byte header,
    // (150-32)&~7 = 112 data bytes: 104..216, 216..308 (92).
    let later = Ip {
        options: vec![0x83, 7, 4, 10, 9, 8, 7, 0x94, 4, 0, 0, 0],
        ..ip.clone()
    };
    let payload = &p[40..];
    let mut want = vec![Ip {
        flags_off: 0x2000,
        ..ip.clone()
    }
    .packet(&payload[..104])];
    want.push(
        Ip {
            flags_off: 0x2000 | 13,
            ..later.clone()
        }
        .packet(&payload[104..216]),
    );
    want.push(
        Ip {
            flags_off: 27,
            ..later
        }
        .packet(&payload[216..]),
    );
    assert_eq!(out, want);
    assert_eq!(r.read("f.fragments"), "3");
    // Reassembly uses the first fragment's header (all options).
    run_with(
        "src :: BatchSrc -> CheckIPHeader -> IPFragmenter(150) -> IPReassembler -> out :: Collect;",
        std::slice::from_ref(&p),
        32,
    );
    assert_eq!(data_of("out"), vec![p]);
}

#[test]
fn df_packets_go_to_output_1() {
    let (hdr, _) = big_udp(3);
    let df = Ip {
        flags_off: 0x4000,
        ..hdr.clone()
    };
    let data = vec![0x5a; 1600];
    let p = df.udp(1, 2, &data);
    let input: Vec<Vec<u8>> = (0..7).map(|_| p.clone()).collect();
    let cfg = "src :: BatchSrc -> MarkIPHeader -> f :: IPFragmenter(1500); f[0] -> out :: Collect; f[1] -> df :: Collect;";
    let (r, seen) = run_both(cfg, &input, &["out", "df"]);
    assert!(seen[0].is_empty());
    assert_eq!(seen[1].len(), 7);
    assert!(seen[1].iter().all(|s| s.data == p));
    assert_eq!(r.read("f.drops"), "7");
    // Only the first 5 are reported.
    let line = "IPFragmenter(1500) DF 192.168.1.10 172.16.0.5 len=1628";
    assert_eq!(r.stderr(), format!("{}\n", line).repeat(5));
    // VERBOSE reports every one; no output 1 drops.
    let r = run_with(
        "src :: BatchSrc -> MarkIPHeader -> f :: IPFragmenter(1500, VERBOSE true) -> out :: Collect;",
        &input,
        32,
    );
    assert!(data_of("out").is_empty());
    assert_eq!(r.stderr(), format!("{}\n", line).repeat(7));
    // An MTU too small for 8 data bytes after the header is the same case.
    let small = Ip::default().udp(1, 2, &[1; 40]);
    let r = run_with(
        "src :: BatchSrc -> MarkIPHeader -> f :: IPFragmenter(27); f[1] -> df :: Collect; f[0] -> out :: Collect;",
        std::slice::from_ref(&small),
        32,
    );
    assert_eq!(data_of("df"), vec![small]);
    assert_eq!(r.read("f.drops"), "1");
}

#[test]
fn honor_df_false_fragments_with_fresh_id() {
    let (hdr, _) = big_udp(0x7777);
    let df = Ip {
        flags_off: 0x4000,
        ..hdr
    };
    let p = df.udp(1, 2, &[0x33; 2000]);
    let r = run_with(
        "src :: BatchSrc -> MarkIPHeader -> f :: IPFragmenter(1000, false) -> out :: Collect;",
        std::slice::from_ref(&p),
        32,
    );
    let out = data_of("out");
    assert_eq!(out.len(), 3);
    let id = u16::from_be_bytes([out[0][4], out[0][5]]);
    for f in &out {
        assert_eq!(u16::from_be_bytes([f[4], f[5]]), id);
        assert_eq!(f[6] & 0x40, 0, "DF cleared");
        assert!(ip_hdr_ok(f));
    }
    assert_eq!(r.read("f.drops"), "0");
    // Reassembled: the original with the new ID and DF clear.
    run_with(
        "src :: BatchSrc -> MarkIPHeader -> IPFragmenter(1000, HONOR_DF false) -> IPReassembler -> out :: Collect;",
        std::slice::from_ref(&p),
        32,
    );
    let got = data_of("out");
    let mut want = Ip {
        flags_off: 0,
        id: u16::from_be_bytes([got[0][4], got[0][5]]),
        ..df.clone()
    }
    .packet(&p[20..]);
    want[20..].copy_from_slice(&p[20..]);
    assert_eq!(got, vec![want]);
}

#[test]
fn fragmenting_a_fragment_keeps_offset_and_mf() {
    let (hdr, p) = big_udp(0x55);
    let frags = ref_fragments(&hdr, &p, &[1480, 1480, 1040]);
    // Refragment the middle (offset 1480, MF) and last fragments at 600.
    run_with(
        "src :: BatchSrc -> MarkIPHeader -> IPFragmenter(600) -> out :: Collect;",
        &frags,
        32,
    );
    let out = data_of("out");
    // 580-byte pieces: first 1480 -> 576, 576, 328; middle likewise;
    // last 1040 -> 576, 464.
    let want = ref_fragments(&hdr, &p, &[576, 576, 328, 576, 576, 328, 576, 464]);
    assert_eq!(out, want);
    // And they reassemble.
    run_with(
        "src :: BatchSrc -> MarkIPHeader -> IPFragmenter(600) -> IPReassembler -> out :: Collect;",
        &frags,
        32,
    );
    assert_eq!(data_of("out"), vec![p]);
}

#[test]
fn small_and_padded_packets_pass() {
    let p = Ip::default().udp(1, 2, &[9; 100]);
    let mut padded = p.clone();
    padded.extend_from_slice(&[0; 30]);
    let r = run_with(
        "src :: BatchSrc -> MarkIPHeader -> f :: IPFragmenter(128) -> out :: Collect;",
        &[p.clone(), padded],
        32,
    );
    assert_eq!(data_of("out"), vec![p.clone(), p]);
    assert_eq!(r.read("f.fragments"), "0");
    // Malformed: IP length beyond the packet; no header annotation.
    let mut bad = Ip::default().udp(1, 2, &[9; 300]);
    bad[2..4].copy_from_slice(&1000u16.to_be_bytes());
    let r = run_with(
        "src :: BatchSrc -> MarkIPHeader -> f :: IPFragmenter(100) -> out :: Collect;",
        &[bad],
        32,
    );
    assert!(data_of("out").is_empty());
    assert_eq!(r.read("f.drops"), "1");
    let r = run_with(
        "src :: BatchSrc -> f :: IPFragmenter(100) -> out :: Collect;",
        &[vec![0x45; 200]],
        32,
    );
    assert!(data_of("out").is_empty());
    assert_eq!(r.read("f.drops"), "1");
    assert!(try_build("src :: BatchSrc -> IPFragmenter(7) -> Discard;", 1).is_err());
    assert!(try_build("src :: BatchSrc -> IPFragmenter -> Discard;", 1).is_err());
}

// ---- IPReassembler ---------------------------------------------------------

#[test]
fn reassembles_mixed_capture_fragment_pair() {
    let pkts = capture("mixed.pcap");
    // scapy: IP(src=10.0.0.1, dst=10.0.0.2, id=0x4242)/UDP(5000, 6000)/bytes(range(100))
    let want = ether(
        &Ip {
            id: 0x4242,
            ..Ip::default()
        }
        .udp(5000, 6000, &(0..100u8).collect::<Vec<_>>()),
    );
    for order in [[21usize, 22], [22, 21]] {
        let input: Vec<Vec<u8>> = order.iter().map(|&i| pkts[i].clone()).collect();
        let (r, seen) = run_both(
            "src :: BatchSrc -> CheckIPHeader(14) -> r :: IPReassembler -> out :: Collect;",
            &input,
            &["out"],
        );
        assert_eq!(seen[0].len(), 1);
        assert_eq!(seen[0][0].data, want);
        assert_eq!(seen[0][0].network_header_offset, Some(14));
        assert!(r.read("r.dump").contains("good reassemblies:   1\n"));
    }
    // Non-fragments pass untouched.
    let input: Vec<Vec<u8>> = vec![pkts[0].clone(), pkts[13].clone()];
    run_with(
        "src :: BatchSrc -> CheckIPHeader(14) -> IPReassembler -> out :: Collect;",
        &input,
        32,
    );
    assert_eq!(data_of("out"), input);
}

/// Fragment `p` (20-byte header) at the given (offset, len) pieces; the
/// piece ending at the payload end has MF clear.
fn pieces(hdr: &Ip, p: &[u8], cuts: &[(usize, usize)]) -> Vec<Vec<u8>> {
    let payload = &p[20..];
    cuts.iter()
        .map(|&(off, len)| {
            let last = off + len == payload.len();
            Ip {
                flags_off: (if last { 0 } else { 0x2000 }) | (off / 8) as u16,
                ..hdr.clone()
            }
            .packet(&payload[off..off + len])
        })
        .collect()
}

#[test]
fn out_of_order_duplicate_and_overlapping_fragments() {
    let (hdr, p) = big_udp(0x2222);
    let n = p.len() - 20; // 4000
    let cases: Vec<Vec<(usize, usize)>> = vec![
        // reverse order
        vec![(2960, 1040), (1480, 1480), (0, 1480)],
        // duplicates
        vec![
            (0, 1480),
            (0, 1480),
            (2960, 1040),
            (1480, 1480),
            (2960, 1040),
        ],
        // overlaps: pieces covering each other
        vec![
            (0, 800),
            (400, 1600),
            (1600, 2400),
            (1000, 8),
            (3000, 1000),
            (2000, 1200),
        ],
        // a fragment that covers everything but the tail, then small ones
        vec![(8, 3984), (0, 16), (3992, 8)],
        // last fragment first
        vec![(3992, 8), (0, 8), (8, 3984)],
    ];
    for cuts in cases {
        let frags = pieces(&hdr, &p, &cuts);
        let covered: usize = cuts.iter().map(|c| c.1).sum();
        assert!(covered >= n);
        let (r, seen) = run_both(
            "src :: BatchSrc -> MarkIPHeader -> r :: IPReassembler -> out :: Collect;",
            &frags,
            &["out"],
        );
        assert_eq!(seen[0].len(), 1, "{:?}", cuts);
        assert_eq!(seen[0][0].data, p, "{:?}", cuts);
        let dump = r.read("r.dump");
        assert!(dump.ends_with("cached chunk data:\n"), "{}", dump);
    }
    // Later bytes win where fragments overlap with different contents.
    let a = Ip {
        flags_off: 0x2000,
        ..hdr.clone()
    }
    .packet(&[1u8; 16]);
    let b = Ip {
        flags_off: 1,
        ..hdr.clone()
    }
    .packet(&[2u8; 16]);
    run_with(
        "src :: BatchSrc -> MarkIPHeader -> IPReassembler -> out :: Collect;",
        &[a, b],
        32,
    );
    let mut payload = vec![1u8; 8];
    payload.extend_from_slice(&[2u8; 16]);
    assert_eq!(data_of("out"), vec![hdr.packet(&payload)]);
}

#[test]
fn malformed_fragments_are_dropped_and_counted() {
    let (hdr, p) = big_udp(0x3333);
    let good = pieces(&hdr, &p, &[(0, 1480), (1480, 1480), (2960, 1040)]);
    let mut bad = Vec::new();
    // Truncated: IP length says more than the packet has.
    let mut t = good[1].clone();
    t.truncate(700);
    bad.push(t);
    // Middle fragment whose length is not a multiple of 8.
    bad.push(
        Ip {
            flags_off: 0x2000 | 10,
            ..hdr.clone()
        }
        .packet(&[0; 13]),
    );
    // Empty fragment.
    bad.push(
        Ip {
            flags_off: 0x2000 | 10,
            ..hdr.clone()
        }
        .packet(&[]),
    );
    // Ends past 65535.
    bad.push(
        Ip {
            flags_off: 0x1fff,
            ..hdr.clone()
        }
        .packet(&[0; 16]),
    );
    // A last fragment contradicting the data already received: ends at 100
    // although bytes up to 2960 arrived.
    bad.push(
        Ip {
            flags_off: 8,
            ..hdr.clone()
        }
        .packet(&[0; 36]),
    );
    // Header length below 20, truncated header.
    let mut h = good[0].clone();
    h[0] = 0x44;
    bad.push(h);
    bad.push(good[0][..12].to_vec());
    let mut input = vec![good[0].clone(), good[1].clone()];
    input.extend(bad.iter().cloned());
    input.push(good[2].clone());
    let (r, seen) = run_both(
        "src :: BatchSrc -> MarkIPHeader -> r :: IPReassembler -> out :: Collect;",
        &input,
        &["out"],
    );
    assert_eq!(seen[0].len(), 1);
    assert_eq!(seen[0][0].data, p);
    let dump = r.read("r.dump");
    assert!(dump.contains("bad fragments seen:  7\n"), "{}", dump);
    assert!(dump.contains("good reassemblies:   1\n"), "{}", dump);
    // Fragments past a known end, and a second different last fragment.
    let input = vec![
        good[2].clone(),
        Ip {
            flags_off: 0x2000 | 600,
            ..hdr.clone()
        }
        .packet(&[0; 8]),
        Ip {
            flags_off: 300,
            ..hdr.clone()
        }
        .packet(&[0; 8]),
    ];
    let r = inject_only(
        "m :: MarkIPHeader -> r :: IPReassembler -> out :: Collect;",
        &input,
    );
    assert!(data_of("out").is_empty());
    let dump = r.read("r.dump");
    assert!(dump.contains("bad fragments seen:  2\n"), "{}", dump);
    // 4444 = 0x115c, 5555: the ports are not there yet (no offset 0).
    assert!(
        dump.ends_with("cached chunk data:\n (192.168.1.10, 0, 172.16.0.5, 0) 13107 (2960,4000)\n"),
        "{}",
        dump
    );
}

#[test]
fn a_datagram_longer_than_65535_bytes_is_refused() {
    let hdr = Ip::default();
    // Payload 0..65512 (MF) + a last piece to 65536: header 20 + 65536 > 65535.
    let mut frags = Vec::new();
    let mut off = 0;
    while off < 65528 {
        frags.push(
            Ip {
                flags_off: 0x2000 | (off / 8) as u16,
                ..hdr.clone()
            }
            .packet(&[7; 1480][..1480.min(65528 - off)]),
        );
        off += 1480.min(65528 - off);
    }
    frags.push(
        Ip {
            flags_off: (65528 / 8) as u16,
            ..hdr.clone()
        }
        .packet(&[7; 7]),
    );
    let r = run_with(
        "src :: BatchSrc -> MarkIPHeader -> r :: IPReassembler -> out :: Collect;",
        &frags,
        32,
    );
    assert!(data_of("out").is_empty());
    let dump = r.read("r.dump");
    assert!(dump.contains("failed reassemblies: 1\n"), "{}", dump);
    assert!(dump.ends_with("cached chunk data:\n"), "{}", dump);
}

#[test]
fn incomplete_datagrams_expire_by_timer() {
    let (hdr, p) = big_udp(0x4444);
    let frags = pieces(&hdr, &p, &[(0, 1480), (2960, 1040)]);
    let r = run_with(
        "src :: BatchSrc -> MarkIPHeader -> Paint(3) -> r :: IPReassembler; r[0] -> out :: Collect; r[1] -> expired :: Collect;",
        &frags,
        32,
    );
    // run() advanced the virtual clock through the reap timers.
    assert!(data_of("out").is_empty());
    let exp = collected("expired");
    assert_eq!(exp.len(), 1);
    // The partial packet: first fragment's header, length 4020, no MF
    // (the last fragment arrived), a zero hole at 1480..2960.
    let mut payload = p[20..].to_vec();
    payload[1480..2960].fill(0);
    assert_eq!(exp[0].data, hdr.packet(&payload));
    assert_eq!(exp[0].anno.bytes[16], 3);
    let dump = r.read("r.dump");
    assert!(dump.contains("failed reassemblies: 1\n"), "{}", dump);
    assert!(dump.ends_with("cached chunk data:\n"), "{}", dump);
    // It took at least 30 s of router time.
    let start = 1_000_000_000i64;
    let now = click::prelude::Clock::now(&*r.clock);
    assert!(now.sec() >= start + 30, "{:?}", now.sec());
    assert!(now.sec() <= start + 40, "{:?}", now.sec());

    // Only a middle fragment: the partial packet gets a bare 20-byte
    // header with MF set; without output 1 nothing is emitted.
    let mid = pieces(&hdr, &p, &[(1480, 1480)]);
    run_with(
        "src :: BatchSrc -> MarkIPHeader -> r :: IPReassembler; r[0] -> out :: Collect; r[1] -> expired :: Collect;",
        &mid,
        32,
    );
    let mut payload = vec![0u8; 2960];
    payload[1480..].copy_from_slice(&p[20 + 1480..20 + 2960]);
    let want = Ip {
        flags_off: 0x2000,
        ..hdr.clone()
    }
    .packet(&payload);
    assert_eq!(data_of("expired"), vec![want]);
    let r = run_with(
        "src :: BatchSrc -> MarkIPHeader -> r :: IPReassembler -> out :: Collect;",
        &mid,
        32,
    );
    assert!(data_of("out").is_empty());
    assert!(r.read("r.dump").ends_with("cached chunk data:\n"));
}

#[test]
fn memory_bound_expires_oldest_datagrams() {
    // HIMEM 10000: each 4000-byte datagram's first fragment holds 1480
    // bytes + 40. After 7 datagrams (10640 bytes) the next fragment makes
    // the element free down to 7500 bytes: the 2 oldest are expired.
    let mut input = Vec::new();
    for id in 0..8u16 {
        let (hdr, p) = big_udp(100 + id);
        input.extend(pieces(&hdr, &p, &[(0, 1480)]));
    }
    let r = run_with(
        "src :: BatchSrc -> MarkIPHeader -> r :: IPReassembler(HIMEM 10000); r[0] -> out :: Collect; r[1] -> expired :: Collect;",
        &input,
        32,
    );
    // The timer later expires the rest too; count those expired before:
    // the first two expirations are ids 100 and 101.
    let exp = data_of("expired");
    assert_eq!(exp.len(), 8);
    assert_eq!(u16::from_be_bytes([exp[0][4], exp[0][5]]), 100);
    assert_eq!(u16::from_be_bytes([exp[1][4], exp[1][5]]), 101);
    assert!(data_of("out").is_empty());
    let dump = r.read("r.dump");
    assert!(dump.contains("failed reassemblies: 8\n"), "{}", dump);
}

#[test]
fn dump_lists_pending_datagrams() {
    let (hdr, p) = big_udp(0x0101);
    let (hdr2, p2) = big_udp(0x0201);
    let mut input = pieces(&hdr, &p, &[(0, 1480), (2960, 1040)]);
    input.extend(pieces(&hdr2, &p2, &[(1480, 16)]));
    let r = inject_only(
        "m :: MarkIPHeader -> r :: IPReassembler -> out :: Collect;",
        &input,
    );
    // Both IDs are in bucket 1; the newer first.
    assert_eq!(
        r.read("r.dump"),
        "frags seen total:    3\ngood reassemblies:   0\nfailed reassemblies: 0\nbad fragments seen:  0\ncached chunk data:\n \
         (192.168.1.10, 0, 172.16.0.5, 0) 513 (1480,1496)\n \
         (192.168.1.10, 4444, 172.16.0.5, 5555) 257 (0,1480) (2960,4000)\n"
    );
}

#[test]
fn random_fragmentations_reassemble_and_garbage_never_panics() {
    let mut rng = Lcg(42);
    for round in 0..40 {
        let len = 1 + rng.below(3000);
        let data: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let hdr = Ip {
            id: round,
            ..Ip::default()
        };
        let p = hdr.udp(1, 2, &data);
        let n = p.len() - 20;
        // Random 8-aligned cut points, then random extra overlapping and
        // duplicate pieces, shuffled.
        let mut cuts = vec![0usize];
        while *cuts.last().unwrap() < n {
            let c = cuts.last().unwrap() + 8 * (1 + rng.below(40));
            cuts.push(c.min(n));
        }
        let mut ranges: Vec<(usize, usize)> =
            cuts.windows(2).map(|w| (w[0], w[1] - w[0])).collect();
        for _ in 0..rng.below(4) {
            let r = ranges[rng.below(ranges.len())];
            ranges.push(r);
        }
        for _ in 0..rng.below(3) {
            let a = 8 * rng.below(n / 8 + 1);
            if a < n {
                let b = (a + 8 * (1 + rng.below(20))).min(n);
                ranges.push((a, b - a));
            }
        }
        for i in (1..ranges.len()).rev() {
            ranges.swap(i, rng.below(i + 1));
        }
        let frags = pieces(&hdr, &p, &ranges);
        run_with(
            "src :: BatchSrc -> MarkIPHeader -> IPReassembler -> out :: Collect;",
            &frags,
            32,
        );
        let out = data_of("out");
        assert!(!out.is_empty(), "round {}", round);
        assert_eq!(out[0], p, "round {}", round);
    }
    // Garbage: mutated fragments and random bytes.
    let (hdr, p) = big_udp(5);
    let good = pieces(&hdr, &p, &[(0, 1480), (1480, 1480), (2960, 1040)]);
    let mut input = Vec::new();
    for _ in 0..600 {
        let mut f = good[rng.below(3)].clone();
        let cut = rng.below(f.len() + 1);
        f.truncate(cut.max(rng.below(60)));
        for _ in 0..rng.below(6) {
            if !f.is_empty() {
                let i = rng.below(f.len().min(40));
                f[i] = rng.next() as u8;
            }
        }
        input.push(f);
    }
    for _ in 0..200 {
        let n = rng.below(100);
        input.push((0..n).map(|_| rng.next() as u8).collect());
    }
    run_with(
        "src :: BatchSrc -> MarkIPHeader -> IPFragmenter(200, HONOR_DF false) -> r :: IPReassembler(HIMEM 20000); r[1] -> Discard; r[0] -> out :: Collect;",
        &input,
        32,
    );
    run_with(
        "src :: BatchSrc -> MarkIPHeader -> r :: IPReassembler -> IPFragmenter(100) -> out :: Collect;",
        &input,
        32,
    );
}

#[test]
fn max_mtu_annotation() {
    let (_, p) = big_udp(0x999);
    run_with(
        "src :: BatchSrc -> MarkIPHeader -> IPFragmenter(1200) -> IPReassembler(MAX_MTU_ANNO 20, MAX_MEMORY 100000) -> out :: Collect;",
        std::slice::from_ref(&p),
        32,
    );
    let out = collected("out");
    assert_eq!(out[0].data, p);
    // Largest fragment: 20 + 1176 bytes, stored as Click's set_anno_u16.
    assert_eq!(&out[0].anno.bytes[20..22], &1196u16.to_ne_bytes());
    assert!(try_build(
        "src :: BatchSrc -> IPReassembler(MAX_MTU_ANNO 47) -> Discard;",
        1
    )
    .is_err());
}
