//! Property tests: compiled programs agree with the crate's reference
//! evaluator (over the same parsed tree, so a parser bug passes here: see
//! oracle.rs for the independent oracle), also on truncated packets, and
//! nothing panics on arbitrary patterns or packets.

use click_classify::Program;
use proptest::prelude::*;

/// Random primitive / test strings drawn from the IPFilter language.
/// A primitive's direction qualifier: none, `src`, `dst`, `src or dst`,
/// `src and dst`.
fn direction() -> impl Strategy<Value = &'static str> + Clone {
    prop_oneof![
        Just(""),
        Just("src "),
        Just("dst "),
        Just("src or dst "),
        Just("src and dst ")
    ]
}

fn primitive() -> impl Strategy<Value = String> {
    let addr = prop_oneof![
        Just("10.0.0.1".to_string()),
        Just("10.0.0.2".to_string()),
        Just("192.168.1.2".to_string()),
        (0u8..4).prop_map(|x| format!("10.0.0.{x}")),
    ];
    let port = prop_oneof![
        Just("80".to_string()),
        Just("www".to_string()),
        Just("53".to_string()),
        Just("1023".to_string()),
        (0u32..70000).prop_map(|x| x.to_string()),
    ];
    let rel = prop_oneof![
        Just(""),
        Just("== "),
        Just("!= "),
        Just("> "),
        Just("< "),
        Just(">= "),
        Just("<= ")
    ];
    let sd = direction();
    let tp = prop_oneof![Just(""), Just("tcp "), Just("udp ")];
    prop_oneof![
        (sd.clone(), addr.clone()).prop_map(|(s, a)| format!("{s}host {a}")),
        (sd.clone(), addr.clone()).prop_map(|(s, a)| format!("{s}{a}")),
        (sd.clone(), 0u32..=32).prop_map(|(s, b)| format!("{s}net 10.0.0.0/{b}")),
        (sd.clone(), tp, rel.clone(), port).prop_map(|(s, t, r, p)| format!("{s}{t}port {r}{p}")),
        prop_oneof![
            Just("tcp"),
            Just("udp"),
            Just("icmp"),
            Just("syn"),
            Just("ack"),
            Just("fin ack"),
            Just("tcp opt rst"),
            Just("ip frag"),
            Just("unfrag"),
            Just("ip ect"),
            Just("ip ce"),
            Just("icmp type echo"),
            Just("echo-reply"),
            Just("true"),
            Just("false"),
            Just("tcpudp"),
        ]
        .prop_map(|s| s.to_string()),
        (
            prop_oneof![
                Just("ip ttl"),
                Just("ip tos"),
                Just("ip dscp"),
                Just("ip hl"),
                Just("ip vers"),
                Just("ip len"),
                Just("ip id"),
                Just("ip proto"),
                Just("tcp win"),
                Just("icmp type"),
                Just("ip[9]"),
                Just("ip[2:2]"),
                Just("tcp[13]"),
                Just("transp[0:4]"),
                Just("udp[4:2]"),
                Just("ip[20:4]"),
            ],
            prop::option::of(1u32..0x100),
            rel,
            prop_oneof![
                Just(0u32),
                Just(1),
                Just(6),
                Just(17),
                Just(80),
                Just(64),
                0u32..300
            ]
        )
            .prop_map(|(f, m, r, v)| match m {
                Some(m) => format!("{f} & {m} {r}{v}"),
                None => format!("{f} {r}{v}"),
            }),
    ]
}

/// Ethernet primitives over a few addresses, with and without masks.
fn ether_primitive() -> impl Strategy<Value = String> {
    let addr = prop_oneof![
        Just("0:1:2:3:4:5".to_string()),
        Just("10:20:30:40:50:60".to_string()),
        Just("ff-ff-ff-ff-ff-ff".to_string()),
        any::<[u8; 6]>().prop_map(|a| a.map(|x| format!("{x:x}")).join(":")),
    ];
    let mask = prop_oneof![
        Just(String::new()),
        Just("& ff:ff:ff:0:0:0 ".to_string()),
        Just("& 0:0:0:0:0:ff ".to_string()),
        any::<[u8; 6]>().prop_map(|a| format!("& {} ", a.map(|x| format!("{x:x}")).join(":"))),
    ];
    let sd = direction();
    let head = prop_oneof![Just(""), Just("ether "), Just("ether host ")];
    let rel = prop_oneof![Just(""), Just("= "), Just("!= ")];
    (head, sd, mask, rel, addr).prop_map(|(h, s, m, r, a)| format!("{h}{s}{m}{r}{a}"))
}

fn expr() -> impl Strategy<Value = String> {
    primitive().prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} and {b}")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) or ({b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} or {b}")),
            inner.clone().prop_map(|a| format!("not ({a})")),
            inner.clone().prop_map(|a| format!("! {a}")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| format!("({a}) ? ({b}) : ({c})")),
            (
                inner.clone(),
                prop_oneof![Just("80"), Just("10.0.0.2"), Just("syn"), Just("7")]
            )
                .prop_map(|(a, b)| format!("{a} or {b}")),
        ]
    })
}

/// Mostly-plausible IPv4 packets, with random truncation.
fn packet() -> impl Strategy<Value = Vec<u8>> {
    (
        prop_oneof![Just(1u8), Just(6), Just(17), any::<u8>()],
        5u8..8,
        prop_oneof![Just(0u16), Just(0x2000), Just(0x0010), any::<u16>()],
        prop_oneof![
            Just([10u8, 0, 0, 1]),
            Just([10, 0, 0, 2]),
            Just([192, 168, 1, 2]),
            any::<[u8; 4]>()
        ],
        prop_oneof![
            Just([10u8, 0, 0, 1]),
            Just([192, 168, 1, 2]),
            any::<[u8; 4]>()
        ],
        prop_oneof![Just(80u16), Just(53), Just(1023), Just(1024), any::<u16>()],
        prop_oneof![Just(80u16), Just(53), any::<u16>()],
        any::<u8>(),
        prop::collection::vec(any::<u8>(), 0..40),
        any::<u8>(),
        prop_oneof![Just(usize::MAX), 0usize..12, 18usize..30, 0usize..80],
        prop_oneof![Just(0u8), Just(1), Just(3), any::<u8>()],
    )
        .prop_map(
            |(proto, ihl, frag, src, dst, sp, dp, ttl, rest, flags, cut, tos)| {
                let mut v = vec![0x40 | ihl, tos, 0, 60];
                v.extend_from_slice(&[0x12, 0x34]);
                v.extend_from_slice(&frag.to_be_bytes());
                v.extend_from_slice(&[ttl, proto, 0, 0]);
                v.extend_from_slice(&src);
                v.extend_from_slice(&dst);
                v.resize(ihl as usize * 4, 1);
                v.extend_from_slice(&sp.to_be_bytes());
                v.extend_from_slice(&dp.to_be_bytes());
                v.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0x50, flags]);
                v.extend_from_slice(&rest);
                v.truncate(cut);
                v
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn compiled_matches_reference(
        pats in prop::collection::vec(expr(), 1..5),
        pkts in prop::collection::vec(packet(), 1..24),
    ) {
        let refs: Vec<&str> = pats.iter().map(|s| s.as_str()).collect();
        if let Ok(p) = Program::compile_ip_classifier(&refs) {
            for pkt in &pkts {
                prop_assert_eq!(p.matches(pkt), p.reference_matches(pkt), "pats {:?} pkt {:?}\n{}", pats, pkt, p.dump());
            }
        }
        // Same rules as an IPFilter with mixed actions.
        let rules: Vec<String> = pats.iter().enumerate().map(|(i, s)| {
            let a = ["allow", "drop", "1", "deny"][i % 4];
            format!("{a} {s}")
        }).collect();
        let refs: Vec<&str> = rules.iter().map(|s| s.as_str()).collect();
        if let Ok(p) = Program::compile_ip_filter(&refs, 2) {
            for pkt in &pkts {
                prop_assert_eq!(p.matches(pkt), p.reference_matches(pkt), "rules {:?} pkt {:?}\n{}", rules, pkt, p.dump());
            }
        }
    }

    #[test]
    fn classifier_matches_reference(
        pats in prop::collection::vec(
            prop::collection::vec((any::<bool>(), 0u32..24, "[0-9a-f?]{2}([0-9a-f?]{2}){0,5}", prop::option::of("[0-9a-f]{12}")), 0..4)
                .prop_map(|cl| cl.into_iter().map(|(neg, off, v, m)| {
                    let m = m.map(|m| format!("%{}", &m[..v.len()])).unwrap_or_default();
                    format!("{}{off}/{v}{m}", if neg { "!" } else { "" })
                }).collect::<Vec<_>>().join(" ")),
            1..5),
        pkts in prop::collection::vec(prop::collection::vec(prop_oneof![Just(0u8), Just(0xff), any::<u8>()], 0..32), 1..24),
    ) {
        let refs: Vec<&str> = pats.iter().map(|s| s.as_str()).collect();
        let p = Program::compile_classifier(&refs).unwrap();
        for pkt in &pkts {
            prop_assert_eq!(p.matches(pkt), p.reference_matches(pkt), "pats {:?} pkt {:?}\n{}", pats, pkt, p.dump());
        }
    }

    #[test]
    fn no_panic_token_soup(
        words in prop::collection::vec(prop_oneof![
            Just("src"), Just("dst"), Just("host"), Just("net"), Just("port"), Just("tcp"), Just("udp"),
            Just("icmp"), Just("ip"), Just("proto"), Just("and"), Just("or"), Just("not"), Just("!"),
            Just("("), Just(")"), Just("["), Just("]"), Just(":"), Just("?"), Just("&"), Just("=="),
            Just("!="), Just(">"), Just("<"), Just(">="), Just("<="), Just("80"), Just("0"), Just("-1"),
            Just("0xffffffff"), Just("4294967295"), Just("10.0.0.1"), Just("10.0.0.0/8"), Just("mask"),
            Just("255.0.0.0"), Just("www"), Just("echo"), Just("syn"), Just("opt"), Just("type"),
            Just("ttl"), Just("frag"), Just("unfrag"), Just("ect"), Just("ce"), Just("transp"), Just("tcpudp"),
            Just("true"), Just("false"), Just("-"), Just("all"), Just("3:2"), Just("0:4"), Just("win"),
            Just("len"), Just("dscp"), Just("ecn"), Just("&&"), Just("||"), Just("allow"), Just("drop"), Just("1"),
        ], 0..14),
        pkts in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..64), 1..8),
    ) {
        let s = words.join(" ");
        for p in [Program::compile_ip_classifier(&[&s]), Program::compile_ip_filter(&[&s], 2)].into_iter().flatten() {
            let _ = p.dump();
            for pkt in &pkts {
                prop_assert_eq!(p.matches(pkt), p.reference_matches(pkt), "pattern {:?} pkt {:?}\n{}", s, pkt, p.dump());
            }
        }
    }

    #[test]
    fn no_panic_arbitrary_strings(s in "\\PC{0,40}", pkt in prop::collection::vec(any::<u8>(), 0..64)) {
        for p in [
            Program::compile_ip_classifier(&[&s]),
            Program::compile_ip_filter(&[&s], 3),
            Program::compile_classifier(&[&s]),
        ].into_iter().flatten() {
            let _ = p.matches(&pkt);
            let _ = p.dump();
        }
    }

    /// Ethernet primitives mixed with IP ones: the compiled program (the
    /// checked walk with the MAC header) agrees with the reference on
    /// MAC headers of every length, none included.
    #[test]
    fn ether_matches_reference(
        pats in prop::collection::vec(
            prop_oneof![ether_primitive(), primitive()].prop_recursive(3, 12, 3, |inner| prop_oneof![
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} and {b}")),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) or ({b})")),
                inner.clone().prop_map(|a| format!("not ({a})")),
            ]),
            1..4),
        pkts in prop::collection::vec(
            (
                prop_oneof![
                    Just([0u8, 1, 2, 3, 4, 5]),
                    Just([0x10, 0x20, 0x30, 0x40, 0x50, 0x60]),
                    Just([0xff; 6]),
                    any::<[u8; 6]>(),
                ],
                prop_oneof![Just([0u8, 1, 2, 3, 4, 5]), Just([0x10, 0x20, 0x30, 0x40, 0x50, 0x60]), any::<[u8; 6]>()],
                prop_oneof![Just(14usize), Just(0), 0usize..18],
                packet(),
            ),
            1..16),
    ) {
        let rules: Vec<String> = pats.iter().enumerate().map(|(i, s)| {
            let a = ["allow", "drop", "1", "deny"][i % 4];
            format!("{a} {s}")
        }).collect();
        let refs: Vec<&str> = rules.iter().map(|s| s.as_str()).collect();
        if let Ok(p) = Program::compile_ip_filter(&refs, 2) {
            for (dst, src, cut, ip) in &pkts {
                let mut mac = dst.to_vec();
                mac.extend_from_slice(src);
                mac.extend_from_slice(&[8, 0, 0, 0]);
                mac.truncate(*cut);
                prop_assert_eq!(p.matches_mac(&mac, ip), p.reference_matches_mac(&mac, ip), "rules {:?} mac {:?} pkt {:?}\n{}", rules, mac, ip, p.dump());
                prop_assert_eq!(p.matches(ip), p.reference_matches_mac(&[], ip), "rules {:?} pkt {:?}\n{}", rules, ip, p.dump());
            }
        }
    }
}
