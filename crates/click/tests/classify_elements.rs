//! Classifier, IPClassifier and IPFilter on mixed.pcap, live
//! reconfiguration of IPFilter, and configuration errors.

#[path = "ip_harness.rs"]
mod ip_harness;
use ip_harness::*;

fn et(d: &[u8]) -> Option<u16> {
    d.get(12..14).map(|b| u16::from_be_bytes([b[0], b[1]]))
}

#[test]
fn classifier_ethernet_patterns() {
    let pkts = capture("mixed.pcap");
    let cfg = "src :: BatchSrc -> c :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);\
               c[0] -> o0 :: Collect; c[1] -> o1 :: Collect; c[2] -> o2 :: Collect; c[3] -> o3 :: Collect;";
    let (r, seen) = run_both(cfg, &pkts, &["o0", "o1", "o2", "o3"]);
    let mut exp: Vec<Vec<Vec<u8>>> = vec![Vec::new(); 4];
    for d in &pkts {
        let op = d.get(20..22).map(|b| u16::from_be_bytes([b[0], b[1]]));
        let o = match (et(d), op) {
            (Some(0x0806), Some(1)) => 0,
            (Some(0x0806), Some(2)) => 1,
            (Some(0x0800), _) => 2,
            _ => 3,
        };
        exp[o].push(d.clone());
    }
    for i in 0..4 {
        assert_eq!(
            seen[i].iter().map(|s| s.data.clone()).collect::<Vec<_>>(),
            exp[i],
            "output {}",
            i
        );
    }
    assert_eq!(exp[0].len(), 2, "ARP request and gratuitous ARP");
    assert!(r.read("c.program").contains("safe length"));
}

/// (proto, src, dst, sport, dport) of an Ethernet/IPv4 frame.
fn five(d: &[u8]) -> (u8, [u8; 4], [u8; 4], u16, u16) {
    let hl = (d[14] & 15) as usize * 4;
    let t = 14 + hl;
    let port = |o: usize| {
        d.get(t + o..t + o + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .unwrap_or(0)
    };
    (
        d[23],
        [d[26], d[27], d[28], d[29]],
        [d[30], d[31], d[32], d[33]],
        port(0),
        port(2),
    )
}

fn valid_ip(d: &[u8]) -> bool {
    if d.len() < 34 || et(d) != Some(0x0800) || d[14] >> 4 != 4 || d[14] & 15 < 5 {
        return false;
    }
    let hl = (d[14] & 15) as usize * 4;
    let tl = u16::from_be_bytes([d[16], d[17]]) as usize;
    tl <= d.len() - 14 && tl >= hl && csum_ok(&d[14..14 + hl])
}

fn first_fragment(d: &[u8]) -> bool {
    u16::from_be_bytes([d[20], d[21]]) & 0x1fff == 0
}

#[test]
fn ipfilter_firewall_rules() {
    let pkts: Vec<Vec<u8>> = capture("mixed.pcap")
        .into_iter()
        .filter(|d| et(d) == Some(0x0800))
        .collect();
    let cfg = "src :: BatchSrc -> CheckIPHeader(14) -> f :: IPFilter(allow tcp dst port 80, 1 udp && dst port 53, \
               drop icmp, allow src 192.168.1.10, 1 dst net 224.0.0.0/4, deny all);\
               f[0] -> a :: Collect; f[1] -> b :: Collect;";
    let (_r, seen) = run_both(cfg, &pkts, &["a", "b"]);
    let (mut ea, mut eb) = (Vec::new(), Vec::new());
    for d in pkts.iter().filter(|d| valid_ip(d)) {
        let (proto, src, dst, _sp, dp) = five(d);
        let ports_ok = first_fragment(d);
        let o = if proto == 6 && ports_ok && dp == 80 {
            Some(0)
        } else if proto == 17 && ports_ok && dp == 53 {
            Some(1)
        } else if proto == 1 {
            None
        } else if src == [192, 168, 1, 10] {
            Some(0)
        } else if dst[0] & 0xf0 == 0xe0 {
            Some(1)
        } else {
            None
        };
        let len = 14 + u16::from_be_bytes([d[16], d[17]]) as usize;
        match o {
            Some(0) => ea.push(d[..len].to_vec()),
            Some(_) => eb.push(d[..len].to_vec()),
            None => {}
        }
    }
    assert!(!ea.is_empty() && !eb.is_empty());
    assert_eq!(
        seen[0].iter().map(|s| s.data.clone()).collect::<Vec<_>>(),
        ea
    );
    assert_eq!(
        seen[1].iter().map(|s| s.data.clone()).collect::<Vec<_>>(),
        eb
    );
}

#[test]
fn ipclassifier_protocols() {
    let pkts = capture("mixed.pcap");
    let cfg = "src :: BatchSrc -> CheckIPHeader(14) -> c :: IPClassifier(tcp, udp, icmp, -);\
               c[0] -> t :: Collect; c[1] -> u :: Collect; c[2] -> i :: Collect; c[3] -> o :: Collect;";
    let (r, seen) = run_both(cfg, &pkts, &["t", "u", "i", "o"]);
    let valid: Vec<&Vec<u8>> = pkts
        .iter()
        .filter(|d| d.len() >= 34 && d[14] >> 4 == 4 && valid_ip(d))
        .collect();
    let count = |p: u8| valid.iter().filter(|d| d[23] == p).count();
    assert_eq!(seen[0].len(), count(6));
    assert_eq!(seen[1].len(), count(17));
    assert_eq!(seen[2].len(), count(1));
    assert_eq!(seen[3].len(), valid.len() - count(6) - count(17) - count(1));
    assert_eq!(r.read("c.pattern1"), "udp");
    // Rewriting one pattern reconfigures the element.
    r.write("c.pattern1", "udp dst port 53").unwrap();
    assert_eq!(r.read("c.pattern1"), "udp dst port 53");
    assert!(r.write("c.pattern1", "udp dst port").is_err());
    assert_eq!(r.read("c.pattern1"), "udp dst port 53");
    assert_eq!(r.read("c.config"), "tcp, udp dst port 53, icmp, -");
}

#[test]
fn ipfilter_live_reconfiguration() {
    let pkts: Vec<Vec<u8>> = capture("mixed.pcap")
        .into_iter()
        .filter(|d| valid_ip(d))
        .collect();
    let cfg = "f :: IPFilter(allow tcp, drop all) -> a :: Collect;";
    clear_collected();
    let r = router(&format!(
        "InfiniteSource(LIMIT 0) -> m :: MarkIPHeader(14) -> {}",
        cfg
    ));
    let ntcp = pkts.iter().filter(|d| d[23] == 6).count();
    let nudp = pkts.iter().filter(|d| d[23] == 17).count();
    r.inject("m", 0, &pkts);
    assert_eq!(collected("a").len(), ntcp);
    let prog_before = r.read("f.program");

    r.write("f.config", "allow udp, deny all").unwrap();
    assert_eq!(r.read("f.config"), "allow udp, deny all");
    assert_ne!(r.read("f.program"), prog_before);
    clear_collected();
    r.inject("m", 0, &pkts);
    assert_eq!(collected("a").len(), nudp);

    // Bad rules: the write fails and the old program stays.
    let prog = r.read("f.program");
    let e = r.write("f.config", "allow udp and, deny all");
    assert!(e.is_err());
    let e = r.write("f.config", "2 tcp").unwrap_err().to_string();
    assert!(e.contains("out of range"), "{}", e);
    assert_eq!(r.read("f.program"), prog);
    assert_eq!(r.read("f.config"), "allow udp, deny all");
    clear_collected();
    r.inject("m", 0, &pkts);
    assert_eq!(collected("a").len(), nudp);
}

#[test]
fn ip_classifiers_drop_packets_without_ip_header_annotation() {
    let pkts = capture("mixed.pcap");
    let r = router("InfiniteSource(LIMIT 0) -> f :: IPFilter(allow all) -> a :: Collect;");
    r.inject("f", 0, &pkts[..5]);
    assert_eq!(collected("a").len(), 0);
    let r = router("InfiniteSource(LIMIT 0) -> c :: IPClassifier(-) -> b :: Collect;");
    r.inject("c", 0, &pkts[..5]);
    assert_eq!(collected("b").len(), 0);
    drop(r);
}

#[test]
fn classify_config_errors() {
    let e = try_router(
        "InfiniteSource(LIMIT 0) -> c :: Classifier(12/0800); c[0] -> Discard; c[1] -> Discard;",
    );
    let e = e.err().unwrap();
    assert!(
        e.iter()
            .any(|l| l.ends_with("need 2 arguments, one per output port")),
        "{:?}",
        e
    );
    let e = try_router("InfiniteSource(LIMIT 0) -> c :: IPClassifier(tcp, udp) -> Discard;")
        .err()
        .unwrap();
    assert!(
        e.iter()
            .any(|l| l.ends_with("need 1 arguments, one per output port")),
        "{:?}",
        e
    );
    let e = try_router("InfiniteSource(LIMIT 0) -> c :: Classifier(12/080) -> Discard;")
        .err()
        .unwrap();
    assert!(e.iter().any(|l| l.contains("pattern 0")), "{:?}", e);
    let e = try_router("InfiniteSource(LIMIT 0) -> c :: IPFilter(3 tcp) -> Discard;")
        .err()
        .unwrap();
    assert!(
        e.iter()
            .any(|l| l.contains("While configuring 'c :: IPFilter'")),
        "{:?}",
        e
    );
}

/// The `program` handler lays instructions out as Click does: the index
/// right-aligned in two columns, the offset in three, then value%mask.
#[test]
fn classifier_program_layout() {
    let r = router("Idle -> c :: Classifier(2/0a, 14/0b0c, -); c[0] -> Discard; c[1] -> Discard; c[2] -> Discard;");
    let prog = r.read("c.program");
    let first = prog.lines().next().unwrap();
    assert_eq!(
        first, " 0   0/00000a00%0000ff00  yes->[0]  no->step 1",
        "{}",
        prog
    );
    assert!(
        prog.lines()
            .any(|l| l.starts_with(" 1  12/00000b0c%0000ffff")),
        "{}",
        prog
    );
    assert!(prog.ends_with("alignment offset 0\n"), "{}", prog);
}

/// The `program` handler of IPFilter and IPClassifier as Click HEAD prints
/// it (its IPFilter-07 test): IP header offsets from 256, transport header
/// offsets from 512, and the safe length over both.
#[test]
fn ip_program_dump_as_clicks() {
    let r = router(
        "Idle -> c :: IPFilter(allow src 10.0.0.1, allow dst port 80) -> Idle;
         Idle -> d :: IPClassifier(tcp, -) -> Idle; d[1] -> Idle;
         Idle -> e :: Classifier(12/0800, -) -> Idle; e[1] -> Idle;",
    );
    assert_eq!(
        r.read("c.program"),
        " 0 268/0a000001%ffffffff  yes->[0]  no->step 1\n\
         \x201 264/00060000%00ff0000  yes->step 3  no->step 2\n\
         \x202 264/00110000%00ff0000  yes->step 3  no->[X]\n\
         \x203 260/00000000%00001fff  yes->step 4  no->[X]\n\
         \x204 512/00000050%0000ffff  yes->[0]  no->[X]\n\
         safe length 516\nalignment offset 0\n"
    );
    assert_eq!(
        r.read("d.program"),
        " 0 264/00060000%00ff0000  yes->[0]  no->[1]\nsafe length 266\nalignment offset 0\n"
    );
    // Classifier offsets are the packet's own
    assert!(
        r.read("e.program").starts_with(" 0  12/08000000%ffff0000"),
        "{}",
        r.read("e.program")
    );
}

/// An Ethernet/IPv4/UDP frame from `src` to `dst`.
fn ether_frame(dst: [u8; 6], src: [u8; 6]) -> Vec<u8> {
    let mut v = dst.to_vec();
    v.extend_from_slice(&src);
    v.extend_from_slice(&[0x08, 0x00]);
    v.extend_from_slice(&[
        0x45, 0, 0, 28, 0, 1, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
    ]);
    v.extend_from_slice(&[0x04, 0xd2, 0, 53, 0, 8, 0, 0]);
    v
}

/// The frames each sink saw, as indexes into `frames`.
fn which(frames: &[Vec<u8>], sink: &[Seen]) -> Vec<usize> {
    sink.iter()
        .map(|s| {
            frames
                .iter()
                .position(|f| *f == s.data)
                .expect("a frame that was sent")
        })
        .collect()
}

/// IPFilter's Ethernet primitives (Click's IPFilter-06 rules) on real
/// frames: the MAC header comes from the MAC header annotation, up to the
/// network header; packets without one, or with one too short for a word,
/// fail the primitive (and pass an explicit `not`).
#[test]
fn ipfilter_ether_addresses() {
    let a = [0, 1, 2, 3, 4, 5];
    let b = [0x10, 0x20, 0x30, 0x40, 0x50, 0x60];
    let c = [9, 0xa, 0xb, 0xc, 0xd, 0xe];
    let o = [0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff];
    let frames = vec![
        ether_frame(o, a), // 0: src a
        ether_frame(b, o), // 1: dst b
        ether_frame(o, o), // 2: neither
        ether_frame(b, a), // 3: both: the first rule
        ether_frame(c, o), // 4: host c (as dst)
        ether_frame(o, c), // 5: host c (as src)
        ether_frame(a, b), // 6: the other way round: host rules only
    ];
    let rules = "0 src 0:1:2:3:4:5, 1 dst 10:20:30:40:50:60, \
                 2 ether host 9:A:B:C:D:E, 3 not ether src 0:1:2:3:4:5, deny all";
    let sinks = ["o0", "o1", "o2", "o3"];
    let outs = "f[0] -> o0 :: Collect; f[1] -> o1 :: Collect; f[2] -> o2 :: Collect; \
                f[3] -> o3 :: Collect;";
    let run = |marks: &str| {
        let cfg = format!("src :: BatchSrc {marks} -> f :: IPFilter({rules}); {outs}");
        let (r, seen) = run_both(&cfg, &frames, &sinks);
        let got: Vec<Vec<usize>> = seen.iter().map(|s| which(&frames, s)).collect();
        (r, got)
    };

    let (r, got) = run("-> MarkMACHeader -> MarkIPHeader(14)");
    assert_eq!(got, [vec![0, 3], vec![1], vec![4, 5], vec![2, 6]]);
    assert!(
        r.read("f.program").starts_with(" 0   8/00010203%ffffffff"),
        "{}",
        r.read("f.program")
    );

    // No MAC header annotation: every Ethernet primitive is false.
    let (_, got) = run("-> MarkIPHeader(14)");
    assert_eq!(got, [vec![], vec![], vec![], (0..7).collect::<Vec<_>>()]);

    // The MAC header marked after the network header: none either.
    let (_, got) = run("-> MarkIPHeader(14) -> MarkMACHeader(20)");
    assert_eq!(got, [vec![], vec![], vec![], (0..7).collect::<Vec<_>>()]);

    // A MAC header of 8 bytes (from the source address to the network
    // header): too short for the source words (which need 12 bytes), long
    // enough for the destination words, which read the frame's source
    // (frame 6 is from b, frame 5 from c; the rest fail `src`, and pass
    // `not ether src`).
    let (_, got) = run("-> MarkMACHeader(6) -> MarkIPHeader(14)");
    assert_eq!(got, [vec![], vec![6], vec![5], vec![0, 1, 2, 3, 4]]);

    // IPClassifier takes the same primitives.
    let cfg = "src :: BatchSrc -> MarkMACHeader -> MarkIPHeader(14) \
               -> c :: IPClassifier(ether src 0:1:2:3:4:5 and udp, dst 10:20:30:40:50:60, -); \
               c[0] -> o0 :: Collect; c[1] -> o1 :: Collect; c[2] -> o2 :: Collect;";
    let (_, seen) = run_both(cfg, &frames, &["o0", "o1", "o2"]);
    let got: Vec<Vec<usize>> = seen.iter().map(|s| which(&frames, s)).collect();
    assert_eq!(got, [vec![0, 3], vec![1], vec![2, 4, 5, 6]]);
}
