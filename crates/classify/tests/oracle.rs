//! Property tests against an independent oracle: expressions are generated
//! as data, rendered to IPFilter / IPClassifier / Classifier text, and
//! evaluated here, straight on the packet bytes, with Click's meaning of
//! each primitive — never through the crate's parser or its reference
//! evaluator. Every generated case is valid: each must compile, and the
//! compiled program must pick the output the oracle picks.
//!
//! Click's meanings used: `==`, `>` and `>=` are tests; `!=`, `<=` and `<`
//! are their negations (`!=` of `==`, `<=` of `>`, `<` of `>=`: Click
//! compiles `x < X` as `!(x > X - 1)`). The negation covers the src/dst
//! combination but not the implied protocol check: `tcp port != 80` is
//! "TCP, first fragment, and neither port is 80", and `port < 1024` is
//! "TCP or UDP, first fragment, and neither port is >= 1024". Transport
//! tests match only a first fragment (offset 0).

use click_classify::Program;
use proptest::prelude::*;

// ---- the expression as data ------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Rel {
    Eq,
    Ne,
    Gt,
    Lt,
    Ge,
    Le,
}

impl Rel {
    fn text(self) -> &'static str {
        match self {
            Rel::Eq => "== ",
            Rel::Ne => "!= ",
            Rel::Gt => "> ",
            Rel::Lt => "< ",
            Rel::Ge => ">= ",
            Rel::Le => "<= ",
        }
    }
    /// The positive test and whether the result is negated.
    fn base(self) -> (fn(u32, u32) -> bool, bool) {
        fn eq(a: u32, b: u32) -> bool {
            a == b
        }
        fn gt(a: u32, b: u32) -> bool {
            a > b
        }
        fn ge(a: u32, b: u32) -> bool {
            a >= b
        }
        match self {
            Rel::Eq => (eq, false),
            Rel::Ne => (eq, true),
            Rel::Gt => (gt, false),
            Rel::Le => (gt, true),
            Rel::Ge => (ge, false),
            Rel::Lt => (ge, true),
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Dir {
    /// No qualifier: `src or dst` for host and port.
    Any,
    Src,
    Dst,
    SrcOrDst,
    SrcAndDst,
}

impl Dir {
    fn text(self) -> &'static str {
        match self {
            Dir::Any => "",
            Dir::Src => "src ",
            Dir::Dst => "dst ",
            Dir::SrcOrDst => "src or dst ",
            Dir::SrcAndDst => "src and dst ",
        }
    }
    fn combine(self, src: bool, dst: bool) -> bool {
        match self {
            Dir::Src => src,
            Dir::Dst => dst,
            Dir::Any | Dir::SrcOrDst => src || dst,
            Dir::SrcAndDst => src && dst,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Transp {
    Any,
    Tcp,
    Udp,
}

/// Header fields: (IPFilter words, is it in the transport header, the
/// protocol it implies, byte offset, bit shift, width in bits).
#[derive(Clone, Copy, Debug)]
struct Field {
    name: &'static str,
    transport: bool,
    proto: Option<u8>,
    off: usize,
    shift: u32,
    bits: u32,
}

const FIELDS: &[Field] = &[
    Field {
        name: "ip ttl",
        transport: false,
        proto: None,
        off: 8,
        shift: 0,
        bits: 8,
    },
    Field {
        name: "ip tos",
        transport: false,
        proto: None,
        off: 1,
        shift: 0,
        bits: 8,
    },
    Field {
        name: "ip dscp",
        transport: false,
        proto: None,
        off: 1,
        shift: 2,
        bits: 6,
    },
    Field {
        name: "ip id",
        transport: false,
        proto: None,
        off: 4,
        shift: 0,
        bits: 16,
    },
    Field {
        name: "ip len",
        transport: false,
        proto: None,
        off: 2,
        shift: 0,
        bits: 16,
    },
    Field {
        name: "ip hl",
        transport: false,
        proto: None,
        off: 0,
        shift: 0,
        bits: 4,
    },
    Field {
        name: "ip vers",
        transport: false,
        proto: None,
        off: 0,
        shift: 4,
        bits: 4,
    },
    Field {
        name: "tcp win",
        transport: true,
        proto: Some(6),
        off: 14,
        shift: 0,
        bits: 16,
    },
    Field {
        name: "icmp type",
        transport: true,
        proto: Some(1),
        off: 0,
        shift: 0,
        bits: 8,
    },
];

#[derive(Clone, Debug)]
enum Prim {
    Host(Dir, [u8; 4]),
    Net(Dir, [u8; 4], u8),
    Proto(&'static str, u8),
    /// `ip proto REL N`
    ProtoRel(Rel, u8),
    Port(Dir, Transp, Rel, u16),
    /// A field with a relation, or `& MASK` with `==` / `!=`.
    Field(usize, Option<u32>, Rel, u32),
    /// `ip[OFF:LEN] REL V` (LEN 1, 2 or 4)
    Bytes(usize, usize, Rel, u32),
    TcpFlag(&'static str, u8),
    Frag(bool),
    Const(bool),
}

#[derive(Clone, Debug)]
enum Expr {
    Prim(Prim),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
}

fn ip(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

impl Prim {
    fn render(&self) -> String {
        match self {
            Prim::Host(d, a) => format!("{}host {}", d.text(), ip(*a)),
            Prim::Net(d, a, l) => format!("{}net {}/{}", d.text(), ip(*a), l),
            Prim::Proto(n, _) => n.to_string(),
            Prim::ProtoRel(r, v) => format!("ip proto {}{}", r.text(), v),
            Prim::Port(d, t, r, v) => {
                let t = match t {
                    Transp::Any => "",
                    Transp::Tcp => "tcp ",
                    Transp::Udp => "udp ",
                };
                format!("{}{}port {}{}", d.text(), t, r.text(), v)
            }
            Prim::Field(f, Some(m), r, v) => {
                format!("{} & {} {}{}", FIELDS[*f].name, m, r.text(), v)
            }
            Prim::Field(f, None, r, v) => format!("{} {}{}", FIELDS[*f].name, r.text(), v),
            Prim::Bytes(o, 1, r, v) => format!("ip[{}] {}{}", o, r.text(), v),
            Prim::Bytes(o, l, r, v) => format!("ip[{}:{}] {}{}", o, l, r.text(), v),
            Prim::TcpFlag(n, _) => n.to_string(),
            Prim::Frag(true) => "ip frag".into(),
            Prim::Frag(false) => "ip unfrag".into(),
            Prim::Const(b) => b.to_string(),
        }
    }

    /// Click's meaning, on an IPv4 packet `d` long enough for every test.
    fn eval(&self, d: &[u8]) -> bool {
        let th = usize::from(d[0] & 0xF) * 4;
        let proto = d[9];
        let first_frag = u16::from_be_bytes([d[6], d[7]]) & 0x1FFF == 0;
        let word = |o: usize, l: usize| {
            d[o..o + l]
                .iter()
                .fold(0u32, |a, &b| (a << 8) | u32::from(b))
        };
        let rel = |r: Rel, x: u32, v: u32| {
            let (f, neg) = r.base();
            f(x, v) != neg
        };
        match self {
            Prim::Host(dir, a) => {
                let a = u32::from_be_bytes(*a);
                dir.combine(word(12, 4) == a, word(16, 4) == a)
            }
            Prim::Net(dir, a, l) => {
                let m = if *l == 0 {
                    0
                } else {
                    u32::MAX << (32 - u32::from(*l))
                };
                let a = u32::from_be_bytes(*a) & m;
                dir.combine(word(12, 4) & m == a, word(16, 4) & m == a)
            }
            Prim::Proto(_, p) => proto == *p,
            Prim::ProtoRel(r, v) => rel(*r, u32::from(proto), u32::from(*v)),
            Prim::Port(dir, t, r, v) => {
                let ok = match t {
                    Transp::Any => proto == 6 || proto == 17,
                    Transp::Tcp => proto == 6,
                    Transp::Udp => proto == 17,
                };
                let (f, neg) = r.base();
                let v = u32::from(*v);
                ok && first_frag && (dir.combine(f(word(th, 2), v), f(word(th + 2, 2), v)) != neg)
            }
            Prim::Field(i, m, r, v) => {
                let f = FIELDS[*i];
                let full = (1u32 << f.bits) - 1;
                let base = if f.transport { th } else { 0 };
                let x = (word(base + f.off, (f.bits as usize).div_ceil(8)) >> f.shift) & full;
                let m = m.unwrap_or(full);
                let implied = match f.proto {
                    Some(p) => proto == p && first_frag,
                    None => true,
                };
                implied && rel(*r, x & m, v & m)
            }
            Prim::Bytes(o, l, r, v) => rel(*r, word(*o, *l), *v),
            Prim::TcpFlag(_, bit) => proto == 6 && first_frag && d[th + 13] & bit == *bit,
            Prim::Frag(frag) => (u16::from_be_bytes([d[6], d[7]]) & 0x3FFF != 0) == *frag,
            Prim::Const(b) => *b,
        }
    }
}

impl Expr {
    fn render(&self) -> String {
        match self {
            Expr::Prim(p) => p.render(),
            Expr::Not(e) => format!("not ({})", e.render()),
            Expr::And(a, b) => format!("({}) and ({})", a.render(), b.render()),
            Expr::Or(a, b) => format!("({}) or ({})", a.render(), b.render()),
        }
    }
    fn eval(&self, d: &[u8]) -> bool {
        match self {
            Expr::Prim(p) => p.eval(d),
            Expr::Not(e) => !e.eval(d),
            Expr::And(a, b) => a.eval(d) && b.eval(d),
            Expr::Or(a, b) => a.eval(d) || b.eval(d),
        }
    }
}

// ---- generators ------------------------------------------------------------

const ADDRS: [[u8; 4]; 4] = [
    [10, 0, 0, 1],
    [10, 0, 0, 2],
    [192, 168, 1, 2],
    [10, 0, 1, 9],
];

fn rel() -> impl Strategy<Value = Rel> {
    prop_oneof![
        Just(Rel::Eq),
        Just(Rel::Ne),
        Just(Rel::Gt),
        Just(Rel::Lt),
        Just(Rel::Ge),
        Just(Rel::Le)
    ]
}

fn dir() -> impl Strategy<Value = Dir> {
    prop_oneof![
        Just(Dir::Any),
        Just(Dir::Src),
        Just(Dir::Dst),
        Just(Dir::SrcOrDst),
        Just(Dir::SrcAndDst)
    ]
}

fn addr() -> impl Strategy<Value = [u8; 4]> {
    prop_oneof![(0usize..4).prop_map(|i| ADDRS[i]), any::<[u8; 4]>()]
}

/// A value near the ones packets carry, so relations go both ways.
fn near(bits: u32) -> impl Strategy<Value = u32> {
    let full = if bits >= 32 {
        u32::MAX
    } else {
        (1u32 << bits) - 1
    };
    prop_oneof![
        Just(0u32),
        Just(full),
        (0u32..=full.min(300)),
        any::<u32>().prop_map(move |v| v & full),
    ]
}

fn prim() -> impl Strategy<Value = Prim> {
    let field = (0usize..FIELDS.len()).prop_flat_map(|i| {
        let bits = FIELDS[i].bits;
        prop_oneof![
            (rel(), near(bits)).prop_map(move |(r, v)| Prim::Field(i, None, r, v)),
            (
                1u32..(1u32 << bits),
                prop_oneof![Just(Rel::Eq), Just(Rel::Ne)],
                near(bits)
            )
                .prop_map(move |(m, r, v)| Prim::Field(i, Some(m), r, v & m)),
        ]
    });
    let bytes = prop_oneof![Just(1usize), Just(2), Just(4)].prop_flat_map(|l| {
        // a field must fit in one aligned 32-bit word
        (0usize..5, 0usize..=(4 - l), rel(), near(8 * l as u32))
            .prop_map(move |(w, o, r, v)| Prim::Bytes(4 * w + o, l, r, v))
    });
    prop_oneof![
        (dir(), addr()).prop_map(|(d, a)| Prim::Host(d, a)),
        (dir(), addr(), 0u8..=32).prop_map(|(d, a, l)| {
            let m = if l == 0 {
                0
            } else {
                u32::MAX << (32 - u32::from(l))
            };
            Prim::Net(d, (u32::from_be_bytes(a) & m).to_be_bytes(), l)
        }),
        prop_oneof![
            Just(Prim::Proto("tcp", 6)),
            Just(Prim::Proto("udp", 17)),
            Just(Prim::Proto("icmp", 1)),
        ],
        (
            rel(),
            prop_oneof![Just(1u8), Just(6), Just(17), any::<u8>()]
        )
            .prop_map(|(r, v)| Prim::ProtoRel(r, v)),
        (
            dir(),
            prop_oneof![Just(Transp::Any), Just(Transp::Tcp), Just(Transp::Udp)],
            rel(),
            prop_oneof![Just(80u16), Just(53), Just(1023), Just(1024), any::<u16>()]
        )
            .prop_map(|(d, t, r, v)| Prim::Port(d, t, r, v)),
        field,
        bytes,
        prop_oneof![
            Just(Prim::TcpFlag("syn", 0x02)),
            Just(Prim::TcpFlag("ack", 0x10)),
            Just(Prim::TcpFlag("fin", 0x01)),
            Just(Prim::TcpFlag("rst", 0x04)),
        ],
        any::<bool>().prop_map(Prim::Frag),
        any::<bool>().prop_map(Prim::Const),
    ]
}

fn expr() -> impl Strategy<Value = Expr> {
    prim()
        .prop_map(Expr::Prim)
        .prop_recursive(3, 12, 2, |inner| {
            prop_oneof![
                inner.clone().prop_map(|e| Expr::Not(Box::new(e))),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| Expr::And(Box::new(a), Box::new(b))),
                (inner.clone(), inner).prop_map(|(a, b)| Expr::Or(Box::new(a), Box::new(b))),
            ]
        })
}

/// Whole IPv4 packets (header with 0–2 option words, 20 transport bytes
/// and a little more), with fields drawn to hit the generated values.
fn packet() -> impl Strategy<Value = Vec<u8>> {
    (
        prop_oneof![Just(1u8), Just(6), Just(17), any::<u8>()],
        5u8..8,
        prop_oneof![
            Just(0u16),
            Just(0x4000),
            Just(0x2000),
            Just(0x0010),
            any::<u16>()
        ],
        (0usize..4, 0usize..4, any::<[u8; 4]>(), any::<bool>()),
        prop_oneof![Just(80u16), Just(53), Just(1023), Just(1024), any::<u16>()],
        prop_oneof![Just(80u16), Just(53), any::<u16>()],
        (any::<u8>(), any::<u8>(), any::<u16>(), any::<u16>()),
        prop::collection::vec(any::<u8>(), 24..40),
    )
        .prop_map(
            |(proto, ihl, frag, (s, d, rnd, use_rnd), sp, dp, (ttl, tos, id, len), rest)| {
                let src = if use_rnd { rnd } else { ADDRS[s] };
                let mut v = vec![0x40 | ihl, tos];
                v.extend_from_slice(&len.to_be_bytes());
                v.extend_from_slice(&id.to_be_bytes());
                v.extend_from_slice(&frag.to_be_bytes());
                v.extend_from_slice(&[ttl, proto, 0, 0]);
                v.extend_from_slice(&src);
                v.extend_from_slice(&ADDRS[d]);
                v.extend_from_slice(&rest[..ihl as usize * 4 - 20]);
                v.extend_from_slice(&sp.to_be_bytes());
                v.extend_from_slice(&dp.to_be_bytes());
                v.extend_from_slice(&rest[8..]);
                v
            },
        )
}

fn ip_classifier_oracle(pats: &[Expr], d: &[u8]) -> Option<usize> {
    pats.iter().position(|e| e.eval(d))
}

/// IPFilter's actions: `allow` is output 0, `deny`/`drop` drop, `N` is
/// output N; the first matching rule decides, no match drops.
const ACTIONS: [(&str, Option<usize>); 4] = [
    ("allow", Some(0)),
    ("drop", None),
    ("1", Some(1)),
    ("deny", None),
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn ip_classifier_agrees_with_the_oracle(
        pats in prop::collection::vec(expr(), 1..5),
        pkts in prop::collection::vec(packet(), 1..24),
    ) {
        let text: Vec<String> = pats.iter().map(Expr::render).collect();
        let refs: Vec<&str> = text.iter().map(String::as_str).collect();
        let p = Program::compile_ip_classifier(&refs)
            .map_err(|e| TestCaseError::fail(format!("{text:?} must compile: {e}")))?;
        for d in &pkts {
            prop_assert_eq!(p.matches(d), ip_classifier_oracle(&pats, d), "patterns {:?}\npacket {:?}", text, d);
        }
    }

    #[test]
    fn ip_filter_agrees_with_the_oracle(
        pats in prop::collection::vec(expr(), 1..5),
        pkts in prop::collection::vec(packet(), 1..24),
    ) {
        let rules: Vec<String> = pats.iter().enumerate().map(|(i, e)| format!("{} {}", ACTIONS[i % 4].0, e.render())).collect();
        let refs: Vec<&str> = rules.iter().map(String::as_str).collect();
        let p = Program::compile_ip_filter(&refs, 2)
            .map_err(|e| TestCaseError::fail(format!("{rules:?} must compile: {e}")))?;
        for d in &pkts {
            let want = pats.iter().position(|e| e.eval(d)).and_then(|i| ACTIONS[i % 4].1);
            prop_assert_eq!(p.matches(d), want, "rules {:?}\npacket {:?}", rules, d);
        }
    }

    #[test]
    fn classifier_agrees_with_the_oracle(
        pats in prop::collection::vec(
            prop::collection::vec((any::<bool>(), 0usize..24, prop::collection::vec((any::<u8>(), prop_oneof![Just(0xffu8), Just(0xf0), Just(0x0f), Just(0), any::<u8>()]), 1..6)), 0..4),
            1..5),
        pkts in prop::collection::vec(prop::collection::vec(prop_oneof![Just(0u8), Just(0xff), any::<u8>()], 32..40), 1..24),
    ) {
        // OFFSET/VALUE%MASK clauses, `!` negated; a pattern with no clause
        // is `-` (matches everything).
        let text: Vec<String> = pats.iter().map(|cl| {
            if cl.is_empty() {
                return "-".to_string();
            }
            cl.iter().map(|(neg, off, bytes)| {
                let v: String = bytes.iter().map(|(b, m)| format!("{:02x}", b & m)).collect();
                let m: String = bytes.iter().map(|(_, m)| format!("{m:02x}")).collect();
                format!("{}{off}/{v}%{m}", if *neg { "!" } else { "" })
            }).collect::<Vec<_>>().join(" ")
        }).collect();
        let refs: Vec<&str> = text.iter().map(String::as_str).collect();
        let p = Program::compile_classifier(&refs)
            .map_err(|e| TestCaseError::fail(format!("{text:?} must compile: {e}")))?;
        for d in &pkts {
            let want = pats.iter().position(|cl| cl.iter().all(|(neg, off, bytes)| {
                let hit = bytes.iter().enumerate().all(|(i, (b, m))| d[off + i] & m == b & m);
                hit != *neg
            }));
            prop_assert_eq!(p.matches(d), want, "patterns {:?}\npacket {:?}", text, d);
        }
    }
}

/// The oracle itself, on cases worked out by hand.
#[test]
fn oracle_worked_examples() {
    // TCP 10.0.0.1:1024 -> 10.0.0.2:80, TTL 64, SYN, no options
    let mut d = vec![
        0x45, 0, 0, 40, 0, 1, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
    ];
    d.extend_from_slice(&[
        0x04, 0x00, 0, 80, 0, 0, 0, 0, 0, 0, 0, 0, 0x50, 0x02, 0x20, 0, 0, 0, 0, 0,
    ]);
    let p = |p: Prim| p.eval(&d);
    // `port >= 80`: either port is >= 80; `port < 1024`: neither is >= 1024
    assert!(p(Prim::Port(Dir::Any, Transp::Tcp, Rel::Ge, 80)));
    assert!(!p(Prim::Port(Dir::Any, Transp::Tcp, Rel::Lt, 1024)));
    assert!(p(Prim::Port(Dir::Any, Transp::Tcp, Rel::Lt, 1025)));
    assert!(p(Prim::Port(Dir::Dst, Transp::Tcp, Rel::Lt, 1024)));
    assert!(p(Prim::Port(Dir::Dst, Transp::Any, Rel::Ge, 80)));
    assert!(!p(Prim::Port(Dir::Dst, Transp::Any, Rel::Gt, 80)));
    assert!(p(Prim::Port(Dir::Src, Transp::Tcp, Rel::Gt, 1023)));
    assert!(!p(Prim::Port(Dir::Src, Transp::Udp, Rel::Gt, 1023)));
    assert!(p(Prim::Field(0, None, Rel::Ge, 64)));
    assert!(!p(Prim::Field(0, None, Rel::Gt, 64)));
    assert!(p(Prim::Field(7, None, Rel::Eq, 0x2000)));
    assert!(p(Prim::TcpFlag("syn", 2)));
    assert!(!p(Prim::TcpFlag("ack", 0x10)));
    assert!(!p(Prim::Frag(true)));
    assert!(p(Prim::Host(Dir::SrcOrDst, [10, 0, 0, 2])));
    assert!(!p(Prim::Host(Dir::SrcAndDst, [10, 0, 0, 2])));
    assert!(p(Prim::Net(Dir::SrcAndDst, [10, 0, 0, 0], 24)));
}
