extern crate std;

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use crate::Program;

// ---------------------------------------------------------------------------
// Packet builders

struct Ip {
    src: [u8; 4],
    dst: [u8; 4],
    proto: u8,
    ttl: u8,
    tos: u8,
    id: u16,
    frag: u16, // flags+offset word
    opts: Vec<u8>,
    payload: Vec<u8>,
}

impl Ip {
    fn new(proto: u8) -> Ip {
        Ip {
            src: [10, 0, 0, 1],
            dst: [192, 168, 1, 2],
            proto,
            ttl: 64,
            tos: 0,
            id: 0x1234,
            frag: 0,
            opts: Vec::new(),
            payload: Vec::new(),
        }
    }
    fn src(mut self, a: [u8; 4]) -> Ip {
        self.src = a;
        self
    }
    fn dst(mut self, a: [u8; 4]) -> Ip {
        self.dst = a;
        self
    }
    fn bytes(&self) -> Vec<u8> {
        let hl = 20 + self.opts.len();
        assert!(hl.is_multiple_of(4));
        let tot = hl + self.payload.len();
        let mut v = vec![0x40 | (hl / 4) as u8, self.tos];
        v.extend_from_slice(&(tot as u16).to_be_bytes());
        v.extend_from_slice(&self.id.to_be_bytes());
        v.extend_from_slice(&self.frag.to_be_bytes());
        v.push(self.ttl);
        v.push(self.proto);
        v.extend_from_slice(&[0, 0]);
        v.extend_from_slice(&self.src);
        v.extend_from_slice(&self.dst);
        v.extend_from_slice(&self.opts);
        v.extend_from_slice(&self.payload);
        v
    }
}

fn tcp(sport: u16, dport: u16, flags: u8) -> Ip {
    let mut p = Ip::new(6);
    let mut t = Vec::new();
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, flags, 0x20, 0x00, 0, 0, 0, 0]);
    p.payload = t;
    p
}

fn udp(sport: u16, dport: u16) -> Ip {
    let mut p = Ip::new(17);
    let mut t = Vec::new();
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&[0, 8, 0, 0]);
    p.payload = t;
    p
}

fn icmp(ty: u8, code: u8) -> Ip {
    let mut p = Ip::new(1);
    p.payload = vec![ty, code, 0, 0, 0, 1, 0, 1];
    p
}

fn ipc(pats: &[&str]) -> Program {
    match Program::compile_ip_classifier(pats) {
        Ok(p) => p,
        Err(e) => panic!("{pats:?}: {e}"),
    }
}

/// Does a single IPClassifier pattern match?
fn m(pat: &str, pkt: &[u8]) -> bool {
    let p = ipc(&[pat]);
    let r = p.matches(pkt);
    assert_eq!(
        r,
        p.reference_matches(pkt),
        "compiled vs reference for {pat:?}\n{}",
        p.dump()
    );
    r == Some(0)
}

fn err(pat: &str) -> String {
    match Program::compile_ip_classifier(&[pat]) {
        Ok(p) => panic!("{pat:?} should fail, got\n{}", p.dump()),
        Err(e) => e,
    }
}

// ---------------------------------------------------------------------------
// Classifier

#[test]
fn classifier_ethernet() {
    let p = Program::compile_classifier(&["12/0806 20/0001", "12/0806 20/0002", "12/0800", "-"])
        .unwrap();
    let mut arp_req = vec![0u8; 42];
    arp_req[12] = 0x08;
    arp_req[13] = 0x06;
    arp_req[21] = 1;
    let mut arp_rep = arp_req.clone();
    arp_rep[21] = 2;
    let mut ip = vec![0u8; 34];
    ip[12] = 0x08;
    let other = vec![0u8; 60];
    assert_eq!(p.matches(&arp_req), Some(0));
    assert_eq!(p.matches(&arp_rep), Some(1));
    assert_eq!(p.matches(&ip), Some(2));
    assert_eq!(p.matches(&other), Some(3));
    assert_eq!(p.matches(&[]), Some(3));
    assert_eq!(p.noutputs(), 4);
    let d = p.dump();
    assert!(d.contains("12/08060000%ffff0000"), "{d}");
    assert!(d.contains("20/00010000%ffff0000"), "{d}");
    // 4 instructions like Click's documented program
    assert_eq!(p.len(), 4, "{d}");
}

#[test]
fn classifier_no_match_drops_and_short() {
    let p = Program::compile_classifier(&["12/0800"]).unwrap();
    assert_eq!(p.matches(&[0u8; 13]), None); // short
    let mut v = vec![0u8; 14];
    v[12] = 8;
    assert_eq!(p.matches(&v), Some(0));
    // Only masked bytes must be present: 12/0800 needs bytes 12..14.
    assert_eq!(p.matches(&v[..14]), Some(0));
    let p = Program::compile_classifier(&["!12/0800"]).unwrap();
    assert_eq!(p.matches(&v), None);
    assert_eq!(p.matches(&[0u8; 13]), Some(0)); // negated clause on short packet
}

#[test]
fn classifier_masks_wildcards_negation() {
    let p = Program::compile_classifier(&["0/f0%f0", "1/?5", "2/ab%0f !0/00"]).unwrap();
    assert_eq!(p.matches(&[0xf3, 0, 0]), Some(0));
    assert_eq!(p.matches(&[0x13, 0x75, 0]), Some(1));
    assert_eq!(p.matches(&[0x13, 0x74, 0x0b]), Some(2));
    assert_eq!(p.matches(&[0x00, 0x74, 0x0b]), None);
    // unaligned, multi-word value
    let p = Program::compile_classifier(&["2/0102030405"]).unwrap();
    assert_eq!(p.matches(&[9, 9, 1, 2, 3, 4, 5]), Some(0));
    assert_eq!(p.matches(&[9, 9, 1, 2, 3, 4, 6]), None);
    assert_eq!(p.matches(&[9, 9, 1, 2, 3, 4]), None);
    // empty pattern matches everything
    let p = Program::compile_classifier(&[""]).unwrap();
    assert_eq!(p.matches(&[]), Some(0));
}

#[test]
fn classifier_errors() {
    let e = |p: &[&str]| Program::compile_classifier(p).unwrap_err();
    assert_eq!(e(&["12/0800", "x"]), "pattern 1: expected a digit");
    assert_eq!(e(&["12"]), "pattern 0: expected '/'");
    assert_eq!(e(&["12/8"]), "pattern 0: value has less than 2 hex digits");
    assert_eq!(
        e(&["12/080"]),
        "pattern 0: value has odd number of hex digits"
    );
    assert_eq!(e(&["12/0800%ff"]), "pattern 0: mask has too few hex digits");
    assert_eq!(
        e(&["12/08%ffff"]),
        "pattern 0: mask has too many hex digits"
    );
    assert_eq!(e(&["12/0800 -"]), "pattern 0: expected a digit");
}

// ---------------------------------------------------------------------------
// IP primitives

#[test]
fn hosts_and_nets() {
    let p = tcp(1000, 80, 0x02)
        .src([10, 0, 0, 1])
        .dst([192, 168, 1, 2])
        .bytes();
    assert!(m("host 10.0.0.1", &p));
    assert!(m("host 192.168.1.2", &p));
    assert!(!m("host 10.0.0.2", &p));
    assert!(m("src host 10.0.0.1", &p));
    assert!(!m("dst host 10.0.0.1", &p));
    assert!(m("dst host 192.168.1.2", &p));
    assert!(m("src or dst host 192.168.1.2", &p));
    assert!(!m("src and dst host 192.168.1.2", &p));
    let same = tcp(1, 2, 0).src([1, 1, 1, 1]).dst([1, 1, 1, 1]).bytes();
    assert!(m("src and dst host 1.1.1.1", &same));
    assert!(m("src 10.0.0.1", &p));
    assert!(m("10.0.0.1", &p));
    assert!(m("net 10.0.0.0/8", &p));
    assert!(m("src net 10.0.0.0/8", &p));
    assert!(!m("dst net 10.0.0.0/8", &p));
    assert!(m("dst net 192.168.0.0 mask 255.255.0.0", &p));
    assert!(m("10.0.0.0/24", &p));
    assert!(!m("10.0.1.0/24", &p));
    assert!(m("src net 1.0.0.0/8 or 10.0.0.0/8", &p));
    assert!(!m("src net 1.0.0.0/8 or 2.0.0.0/8", &p));
    assert!(m("src host != 10.0.0.2", &p));
    assert!(!m("src host != 10.0.0.1", &p));
    assert!(m("src host & 255.0.0.0 10.0.0.0", &p));
    assert!(m("net 10.0.0.1", &p));
}

#[test]
fn protocols() {
    let t = tcp(1000, 80, 0).bytes();
    let u = udp(53, 1000).bytes();
    let i = icmp(8, 0).bytes();
    assert!(m("tcp", &t) && !m("tcp", &u));
    assert!(m("udp", &u) && !m("udp", &t));
    assert!(m("icmp", &i) && !m("icmp", &t));
    assert!(m("ip proto tcp", &t));
    assert!(m("ip proto 17", &u));
    assert!(m("proto 1", &i));
    assert!(m("ip proto != 6", &u) && !m("ip proto != 6", &t));
    assert!(m("ip proto > 10", &u) && !m("ip proto > 10", &t));
    assert!(m("igmp", &Ip::new(2).bytes()));
    assert!(m("ipip", &Ip::new(4).bytes()));
    assert!(m("tcp or udp", &u));
    assert!(m("tcp or 17", &u));
    assert!(!m("not tcp", &t) && m("not tcp", &u));
    assert!(m("tcpudp", &u) && m("tcpudp", &t) && !m("tcpudp", &i));
}

#[test]
fn ports() {
    let t = tcp(1000, 80, 0).bytes();
    let u = udp(53, 1234).bytes();
    assert!(m("port 80", &t));
    assert!(m("dst port 80", &t) && !m("src port 80", &t));
    assert!(m("port www", &t) && m("port http", &t) && m("www", &t));
    assert!(m("tcp port 80", &t) && !m("udp port 80", &t));
    assert!(m("src port domain", &u) && m("src port dns", &u) && m("udp src port 53", &u));
    assert!(m("port 80 or 443", &t));
    assert!(m("port 443 or 80", &t));
    assert!(!m("port 443 or 8080", &t));
    assert!(m("dst port > 1023", &u) && !m("dst port > 1023", &t));
    assert!(m("dst port >= 80", &t) && !m("dst port >= 81", &t));
    assert!(m("dst port <= 80", &t) && !m("dst port <= 79", &t));
    assert!(m("dst port < 81", &t) && !m("dst port < 80", &t));
    assert!(m("dst port == 80", &t) && m("dst port = 80", &t));
    assert!(m("dst port != 81", &t) && !m("dst port != 80", &t));
    // != does not match other protocols
    assert!(!m("src tcp port != 5", &u));
    assert!(m("not src tcp port 5", &u));
    assert!(m("src and dst port > 50", &u) && !m("src and dst port > 60", &u));
    assert!(m("src tcp port & 0xff00 == 0x0300", &t)); // 1000 = 0x3e8
                                                       // ports are not checked on ICMP
    assert!(!m("port 80", &icmp(8, 0).bytes()));
    assert!(m("dst tcp port 8000 or 8080", &tcp(1, 8080, 0).bytes()));
}

#[test]
fn relations_exhaustive_on_ttl() {
    for ttl in [0u8, 1, 63, 64, 65, 127, 128, 200, 255] {
        let mut p = Ip::new(6);
        p.ttl = ttl;
        let b = p.bytes();
        for v in [0u32, 1, 64, 128, 254, 255] {
            assert_eq!(
                m(&alloc::format!("ip ttl > {v}"), &b),
                ttl as u32 > v,
                "ttl {ttl} > {v}"
            );
            assert_eq!(
                m(&alloc::format!("ip ttl < {v}"), &b),
                (ttl as u32) < v,
                "ttl {ttl} < {v}"
            );
            assert_eq!(m(&alloc::format!("ip ttl >= {v}"), &b), ttl as u32 >= v);
            assert_eq!(m(&alloc::format!("ip ttl <= {v}"), &b), ttl as u32 <= v);
            assert_eq!(m(&alloc::format!("ip ttl != {v}"), &b), ttl as u32 != v);
            assert_eq!(
                m(&alloc::format!("ip ttl & 0x5a > {v}"), &b),
                (ttl & 0x5a) as u32 > v
            );
        }
    }
}

#[test]
fn ip_fields() {
    let mut p = tcp(1, 2, 0);
    p.tos = 0xb8 | 0x01; // dscp 46, ecn 1
    p.id = 0xbeef;
    p.ttl = 7;
    let b = p.bytes();
    assert!(m("ip vers 4", &b) && !m("ip vers 6", &b));
    assert!(m("ip hl 5", &b));
    assert!(m("ip tos 0xb9", &b));
    assert!(m("ip dscp 46", &b));
    assert!(m("ip ect", &b) && !m("ip ce", &b));
    assert!(m("ip ecn 1", &b) && m("ip ect 1", &b));
    assert!(m("ip ttl 7", &b) && m("ip ttl 7 or 8", &b));
    assert!(m("ip id 0xbeef", &b));
    assert!(m(&alloc::format!("ip len {}", b.len()), &b));
    assert!(m("ip len > 20", &b));
    let mut ce = Ip::new(6);
    ce.tos = 3;
    assert!(m("ip ce", &ce.bytes()) && m("ip ect", &ce.bytes()));
    assert!(!m("ip ect", &Ip::new(6).bytes()));
    assert!(m("ip[8] = 7", &b));
    assert!(m("ip[4:2] = 0xbeef", &b));
    assert!(m("ip[12:4] = 0x0a000001", &b));
    assert!(m("ip[1] & 0xfc = 0xb8", &b));
}

#[test]
fn fragments() {
    let whole = tcp(1, 80, 0x02).bytes();
    let mut first = tcp(1, 80, 0x02);
    first.frag = 0x2000; // MF
    let mut later = tcp(1, 80, 0x02);
    later.frag = 0x0010; // offset
    let (first, later) = (first.bytes(), later.bytes());
    assert!(!m("ip frag", &whole) && m("ip unfrag", &whole) && m("unfrag", &whole));
    assert!(m("ip frag", &first) && m("frag", &later));
    assert!(m("dst port 80", &first));
    assert!(!m("dst port 80", &later));
    assert!(!m("syn", &later));
    assert!(!m("tcp[13] & 2 != 0", &later));
    assert!(m("tcp", &later)); // protocol tests still apply
    assert!(!m("dst port != 81", &later));
    let mut ic = icmp(8, 0);
    ic.frag = 0x0001;
    assert!(!m("icmp type echo", &ic.bytes()));
}

#[test]
fn tcp_flags_and_window() {
    let syn = tcp(1, 80, 0x02).bytes();
    let synack = tcp(80, 1, 0x12).bytes();
    let finack = tcp(80, 1, 0x11).bytes();
    assert!(m("tcp opt syn", &syn) && m("syn", &syn) && m("tcp syn", &syn));
    assert!(!m("ack", &syn) && m("ack", &synack));
    assert!(m("syn ack", &synack) && m("syn && ack", &synack));
    assert!(m("fin ack", &finack) && !m("fin ack", &synack));
    assert!(m("syn and not ack", &syn) && !m("syn and not ack", &synack));
    assert!(m("rst or psh or urg or fin", &finack));
    assert!(!m("syn", &udp(1, 2).bytes()));
    assert!(m("tcp win 8192", &syn) && m("tcp win > 100", &syn));
    assert!(m("tcp[13] & 2 != 0", &syn));
    assert!(m("tcp[13] & 0x12 = 0x12", &synack));
    assert!(m("transp[0:2] = 1", &syn));
    assert!(m("transp[2:2] = 80", &syn));
    assert!(m("transp[0:4] = 0x00010050", &syn));
    assert!(m("udp[2:2] = 2", &udp(1, 2).bytes()));
}

#[test]
fn icmp_types() {
    let echo = icmp(8, 0).bytes();
    let reply = icmp(0, 0).bytes();
    assert!(m("icmp type echo", &echo) && !m("icmp type echo", &reply));
    assert!(
        m("icmp type echo-reply", &reply)
            && m("icmp echo-reply", &reply)
            && m("echo-reply", &reply)
    );
    assert!(m("icmp type 8", &echo) && m("icmp type > 3", &echo));
    assert!(m("icmp type != 0", &echo) && !m("icmp type != 0", &tcp(1, 2, 0).bytes()));
    assert!(m("icmp echo", &echo));
    assert!(m("icmp type unreachable", &icmp(3, 1).bytes()));
    assert!(m("icmp[1] = 1", &icmp(3, 1).bytes()));
}

#[test]
fn ip_options_shift_transport() {
    let mut p = tcp(1000, 80, 0x02);
    p.opts = vec![1, 1, 1, 0]; // NOPs + EOL, IHL=6
    let b = p.bytes();
    assert_eq!(b[0], 0x46);
    assert!(m("dst port 80", &b) && m("syn", &b) && m("src port 1000", &b));
    assert!(m("ip hl 6", &b));
}

#[test]
fn short_packets() {
    let full = tcp(1000, 80, 0x02).bytes();
    let trunc = &full[..22]; // only src port present
    assert!(m("src port 1000", trunc));
    assert!(!m("dst port 80", trunc));
    assert!(!m("dst port != 80", trunc)); // primitive false when short
    assert!(m("not dst port 80", trunc)); // explicit not negates
    assert!(!m("dst port > 10", trunc));
    assert!(!m("dst port <= 10", trunc));
    assert!(!m("syn", trunc));
    assert!(m("tcp", trunc));
    assert!(!m("tcp", &full[..9])); // protocol byte missing
    assert!(m("not tcp", &full[..9]));
    assert!(!m("host 10.0.0.1", &[]));
    assert!(m("true", &[]) && m("-", &[]) && !m("false", &[]));
    // overlapping tests of different widths on the same word
    assert!(!m("src tcp port 1000 and transp[0:4] != 5", trunc));
    assert!(m("src tcp port 1000 and not transp[0:4] = 5", trunc));
    assert!(!m("src tcp port 1000 and transp[0:4] = 5", trunc));
    assert!(m("src tcp port 1000 and transp[0:4] != 5", &full));
    // ip[0] needs only 1 byte
    assert!(m("ip[0] = 0x45", &full[..1]));
}

#[test]
fn connectives() {
    let t = tcp(1000, 80, 0x02).bytes();
    assert!(m("tcp and dst port 80", &t));
    assert!(m("tcp && dst port 80", &t));
    assert!(m("udp || tcp", &t));
    assert!(m("!udp", &t));
    assert!(m("not (udp or icmp)", &t));
    assert!(m("(udp or tcp) and (port 80)", &t));
    assert!(m("tcp ? dst port 80 : false", &t));
    assert!(!m("udp ? true : dst port 81", &t));
    assert!(m("udp ? false : tcp ? syn : false", &t));
    assert!(m("ip proto tcp && dst port www", &t));
    assert!(m("true", &t) && m("all", &t) && m("any", &t) && m("-", &t) && !m("false", &t));
    assert!(m("", &t)); // empty IPClassifier pattern matches all
    assert!(m("src 10.0.0.1 and dst port www and syn", &t));
    assert!(m("tcp dst port 80", &t)); // tcp is a qualifier here
}

#[test]
fn first_match_wins_ipclassifier() {
    let p = ipc(&[
        "10.0.0.0/24 and syn",
        "10.0.0.0/24 and fin ack",
        "10.0.0.0/24 and tcp",
        "-",
    ]);
    assert_eq!(p.matches(&tcp(1, 2, 0x02).bytes()), Some(0));
    assert_eq!(p.matches(&tcp(1, 2, 0x11).bytes()), Some(1));
    assert_eq!(p.matches(&tcp(1, 2, 0x10).bytes()), Some(2));
    assert_eq!(p.matches(&udp(1, 2).bytes()), Some(3));
    let p = ipc(&["dst tcp port 8000 or 8080", "dst tcp port > 1023", "tcp"]);
    assert_eq!(p.matches(&tcp(1, 8080, 0).bytes()), Some(0));
    assert_eq!(p.matches(&tcp(1, 2000, 0).bytes()), Some(1));
    assert_eq!(p.matches(&tcp(1, 80, 0).bytes()), Some(2));
    assert_eq!(p.matches(&udp(1, 80).bytes()), None);
}

#[test]
fn ipfilter_actions() {
    let f = |r: &[&str], n| Program::compile_ip_filter(r, n).unwrap();
    let p = f(&["allow tcp", "drop udp", "1 icmp", "deny all"], 2);
    assert_eq!(p.matches(&tcp(1, 2, 0).bytes()), Some(0));
    assert_eq!(p.matches(&udp(1, 2).bytes()), None);
    assert_eq!(p.matches(&icmp(8, 0).bytes()), Some(1));
    assert_eq!(p.matches(&Ip::new(2).bytes()), None);
    assert_eq!(p.noutputs(), 2);
    assert!(
        p.warnings().iter().any(|w| w.contains("deny")),
        "{:?}",
        p.warnings()
    );
    let p = f(&["allow"], 1);
    assert_eq!(p.matches(&[]), Some(0));
    assert!(p.is_empty());
    assert!(p.dump().contains("all->[0]"));
    let p = f(&["deny -", "allow -"], 1);
    assert_eq!(p.matches(&tcp(1, 2, 0).bytes()), None);
    let p = f(&[], 1);
    assert_eq!(p.matches(&tcp(1, 2, 0).bytes()), None);
}

#[test]
fn ipfilter_errors() {
    let e = |r: &[&str], n| Program::compile_ip_filter(r, n).unwrap_err();
    assert_eq!(
        e(&["allow tcp", "3 udp"], 2),
        "pattern 1: slot '3' out of range"
    );
    assert_eq!(
        e(&["allow tcp"], 0),
        "pattern 0: 'allow' is meaningless, element has zero outputs"
    );
    assert_eq!(e(&["permit tcp"], 1), "pattern 0: unknown slot ID 'permit'");
    assert_eq!(e(&["allow tcp", ""], 1), "empty pattern 1");
    assert_eq!(
        e(&["allow tcp )"], 1),
        "pattern 0: garbage after expression at ')'"
    );
}

#[test]
fn pattern_errors() {
    assert_eq!(
        err("echo"),
        "pattern 0: 'echo' is ambiguous; try 'port echo', 'port echo', 'icmp type echo'"
    );
    assert_eq!(err("tcp and"), "pattern 0: missing expression");
    assert_eq!(err("(tcp"), "pattern 0: missing ')'");
    assert_eq!(err("not"), "pattern 0: missing expression after 'not'");
    assert!(err("port").contains("value missing"), "{}", err("port"));
    assert!(err("host").contains("address missing"));
    assert!(err("host > 10.0.0.1").contains("operator not supported"));
    assert!(err("port 70000").contains("out of range"));
    assert!(err("ip ttl 256").contains("out of range"));
    assert!(err("80").contains("specify header field or 'port'"));
    assert!(err("foo").contains("empty term near 'foo'"));
    assert!(err("tcp ? udp").contains("missing ':'"));
    assert!(err("ip[3:2] = 1").contains("does not fit in a single word"));
    assert!(err("ip[0:5] = 1").contains("LEN"));
    assert!(err("ip[x] = 1").contains("syntax error after '['"));
    assert!(err("ip[0 = 1").contains("missing ']'"));
    assert!(err("udp opt syn").contains("meaningless"));
    assert!(err("icmp port 80").contains("bad protocol"));
    assert!(err("src src host 1.2.3.4").contains("specified twice"));
    assert!(err("port > ").contains("value missing") || err("port > ").contains("dangling"));
    assert!(err("port > www2").contains("dangling operator"));
    assert!(err("tcp[0] & 0 = 1").contains("zero mask"));
    assert!(err("ip ce 1").contains("not supported") || err("ip ce 1").contains("value"));
    assert!(err("tcp opt != syn").contains("not supported"));
    assert!(
        err("ip proto tcpudp > 1").contains("not supported")
            || err("ip proto tcpudp > 1").contains("proto")
    );
}

#[test]
fn quoting_none_and_misc() {
    let t = tcp(1000, 80, 0x02).bytes();
    assert!(m("\"dst port 80\"", &t));
    assert!(m("'tcp' and \"syn\"", &t));
    assert!(!m("none", &t));
    let p = Program::compile_ip_filter(&["\"allow tcp\""], 1).unwrap();
    assert_eq!(p.matches(&t), Some(0));
    assert!(m("dst host 10.0.0.9 or 192.168.1.2", &t));
    assert!(!m("src host 10.0.0.9 or 192.168.1.2", &t));
    assert!(m("ip ttl 1 or 2 or 64", &t));
    let p = ipc(&["src ip ttl 64"]);
    assert!(
        p.warnings()[0].contains("'src' or 'dst' ignored"),
        "{:?}",
        p.warnings()
    );
    // juxtaposition and a trailing relation quirk
    assert!(m("tcp syn dst port 80", &t));
}

#[test]
fn warnings_always_true_false() {
    let p = ipc(&["dst port > 65535", "ip ttl < 0", "ip ttl >= 0"]);
    let w = p.warnings();
    assert!(
        w.iter()
            .any(|s| s.starts_with("pattern 0: relation '> 65535' is always false")),
        "{w:?}"
    );
    assert!(w.iter().any(|s| s.starts_with("pattern 1:")), "{w:?}");
    assert_eq!(p.matches(&tcp(1, 2, 0).bytes()), Some(2));
}

// ---------------------------------------------------------------------------
// Firewall compile quality

const FIREWALL: &[&str] = &[
    "allow src host 10.0.0.1 && tcp dst port 80",
    "deny udp port 53",
    "allow tcp dst port 22 and src net 10.0.0.0/8",
    "allow tcp dst port 443",
    "deny src net 192.168.0.0/16",
    "allow icmp type echo",
    "allow icmp type echo-reply",
    "deny tcp syn and dst port > 1023",
    "allow udp dst port 123 or udp dst port 67",
    "deny all",
];

#[test]
fn firewall_is_compact_and_fast() {
    let p = Program::compile_ip_filter(FIREWALL, 1).unwrap();
    let pkts: Vec<(Vec<u8>, Option<usize>)> = vec![
        (tcp(1000, 80, 2).bytes(), Some(0)),
        (tcp(1000, 80, 2).src([10, 9, 9, 9]).bytes(), None),
        (udp(1000, 53).bytes(), None),
        (tcp(1000, 22, 2).bytes(), Some(0)),
        (tcp(1000, 443, 2).src([1, 2, 3, 4]).bytes(), Some(0)),
        (icmp(8, 0).src([192, 168, 0, 1]).bytes(), None),
        (icmp(8, 0).src([1, 1, 1, 1]).bytes(), Some(0)),
        (icmp(0, 0).src([1, 1, 1, 1]).bytes(), Some(0)),
        (udp(1000, 123).src([1, 1, 1, 1]).bytes(), Some(0)),
        (tcp(1000, 5000, 2).src([1, 1, 1, 1]).bytes(), None),
        (Ip::new(47).src([1, 1, 1, 1]).bytes(), None),
    ];
    let mut max = 0;
    for (b, want) in &pkts {
        assert_eq!(p.matches(b), *want);
        assert_eq!(p.reference_matches(b), *want);
        max = max.max(p.steps(b));
    }
    std::println!(
        "firewall: {} insns, max {} steps/packet\n{}",
        p.len(),
        max,
        p.dump()
    );
    assert!(max <= 14, "max steps {max}\n{}", p.dump());
    assert!(p.len() <= 60, "{} insns\n{}", p.len(), p.dump());
}

#[test]
fn large_rule_set_compiles_quickly() {
    let rules: Vec<String> = (0..2000)
        .map(|i| {
            alloc::format!(
                "{} src host 10.{}.{}.1 && tcp dst port {}",
                if i % 3 == 0 { "drop" } else { "allow" },
                i / 250,
                i % 250,
                1000 + i % 50
            )
        })
        .collect();
    let refs: Vec<&str> = rules.iter().map(|s| s.as_str()).collect();
    let t0 = std::time::Instant::now();
    let p = Program::compile_ip_filter(&refs, 1).unwrap();
    let el = t0.elapsed();
    let hit = tcp(5, 1000 + 1999 % 50, 0).src([10, 7, 249, 1]).bytes();
    assert_eq!(p.matches(&hit), p.reference_matches(&hit));
    assert_eq!(p.matches(&hit), Some(0));
    std::println!(
        "2000 rules: {} insns, compile {:?}, {} steps",
        p.len(),
        el,
        p.steps(&hit)
    );
    assert!(el.as_secs() < 5);
}

#[test]
fn four_walks_in_lockstep_agree_with_one() {
    let prog = Program::compile_ip_filter(
        &[
            "deny src net 192.168.0.0/16",
            "allow tcp && dst port 80",
            "1 udp && dst port 53 && not src net 10.0.0.0/8",
            "allow udp && src net 10.0.0.0/8 && dst port 5678",
            "2 icmp type echo",
            "deny all",
        ],
        3,
    )
    .unwrap();
    let short = udp(1, 5678).bytes()[..10].to_vec();
    let pkts: Vec<Vec<u8>> = vec![
        udp(1234, 5678).src([10, 0, 0, 1]).bytes(),
        udp(1234, 53).src([11, 0, 0, 1]).bytes(),
        tcp(1, 80, 0x02).bytes(),
        tcp(1, 80, 0x02).src([192, 168, 1, 1]).bytes(),
        icmp(8, 0).bytes(),
        icmp(0, 0).bytes(),
        udp(1234, 5678).src([9, 0, 0, 1]).bytes(),
        short,
    ];
    // every combination of four of them (with repeats), so lanes end at
    // different steps, and a short packet takes the careful path
    let n = pkts.len();
    for k in 0..n * n * n * n {
        let i = [k % n, k / n % n, k / (n * n) % n, k / (n * n * n)];
        let d = i.map(|i| &pkts[i][..]);
        assert_eq!(prog.matches4(d), d.map(|x| prog.matches(x)), "{i:?}");
    }
}

/// The bench firewall's rules compile to the program Click 2.1 prints
/// (conjunct tests sorted by offset, protocol word first; the port
/// primitive's `tcp || udp` dropped after `udp`), so the allowed UDP
/// packet takes Click's nine steps, not more.
#[test]
fn firewall_program_is_clicks() {
    let rules = [
        "deny src net 192.168.0.0/16",
        "deny dst net 172.16.0.0/12",
        "allow tcp && dst port 80",
        "allow tcp && dst port 443",
        "allow tcp && dst port 22 && src net 10.1.0.0/16",
        "deny udp && dst port 53 && not src net 10.0.0.0/8",
        "allow udp && dst port 123",
        "deny icmp type echo",
        "allow udp && src net 10.0.0.0/8 && dst port 5678",
        "deny all",
    ];
    let p = Program::compile_ip_filter(&rules, 1).unwrap();
    let want = " 0 268/c0a80000%ffff0000  yes->[X]  no->step 1
 1 272/ac100000%fff00000  yes->[X]  no->step 2
 2 264/00060000%00ff0000  yes->step 3  no->step 8
 3 260/00000000%00001fff  yes->step 4  no->[X]
 4 512/00000050%0000ffff  yes->[0]  no->step 5
 5 512/000001bb%0000ffff  yes->[0]  no->step 6
 6 268/0a010000%ffff0000  yes->step 7  no->[X]
 7 512/00000016%0000ffff  yes->[0]  no->[X]
 8 264/00110000%00ff0000  yes->step 9  no->[X]
 9 260/00000000%00001fff  yes->step 10  no->[X]
10 512/00000035%0000ffff  yes->[X]  no->step 11
11 512/0000007b%0000ffff  yes->[0]  no->step 12
12 268/0a000000%ff000000  yes->step 13  no->[X]
13 512/0000162e%0000ffff  yes->[0]  no->[X]
safe length 516
alignment offset 0
";
    assert_eq!(p.dump(), want);
    let pkt = udp(1234, 5678).src([10, 0, 0, 1]).bytes();
    assert_eq!(p.steps(&pkt), 9);
    assert_eq!(p.matches(&pkt), Some(0));
}

/// Click's test/ip/IPFilter-04: jumps threaded per way in (after `tcp or
/// udp`, a failed port test goes straight to the next port test, not back
/// to the protocol tests), and two tests of one word merged into one
/// (`syn and !ack`, `port >= 1024`).
#[test]
fn optimizer_matches_clicks_ipfilter_04() {
    let c = ipc(&[
        "dst port 7777",
        "dst port 8888",
        "dst port 7000",
        "icmp type echo",
        "icmp",
        "-",
    ]);
    assert_eq!(
        c.dump(),
        " 0 264/00060000%00ff0000  yes->step 2  no->step 1
 1 264/00110000%00ff0000  yes->step 2  no->step 6
 2 260/00000000%00001fff  yes->step 3  no->[5]
 3 512/00001e61%0000ffff  yes->[0]  no->step 4
 4 512/000022b8%0000ffff  yes->[1]  no->step 5
 5 512/00001b58%0000ffff  yes->[2]  no->[5]
 6 264/00010000%00ff0000  yes->step 7  no->[5]
 7 260/00000000%00001fff  yes->step 8  no->[4]
 8 512/08000000%ff000000  yes->[3]  no->[4]
safe length 516
alignment offset 0
"
    );
    let e = ipc(&[
        "proto icmp",
        "dst port 53",
        "(proto tcp and !(syn and !ack)) or (tcpudp port >= 1024)",
        "-",
    ]);
    assert_eq!(
        e.dump(),
        " 0 264/00010000%00ff0000  yes->[0]  no->step 1
 1 264/00060000%00ff0000  yes->step 3  no->step 2
 2 264/00110000%00ff0000  yes->step 3  no->[3]
 3 260/00000000%00001fff  yes->step 4  no->step 5
 4 512/00000035%0000ffff  yes->[1]  no->step 5
 5 264/00060000%00ff0000  yes->step 6  no->step 8
 6 260/00000000%00001fff  yes->step 7  no->[2]
 7 524/00020000%00120000  yes->step 9  no->[2]
 8 260/00000000%00001fff  yes->step 9  no->[3]
 9 512/00000000%fc00fc00  yes->[3]  no->[2]  short->yes
safe length 526
alignment offset 0
"
    );
    // Which packet goes where, through the optimized programs.
    let cases: [(Vec<u8>, Option<usize>, Option<usize>); 9] = [
        (udp(5, 8888).bytes(), Some(1), Some(2)),
        (tcp(5, 7000, 0x02).bytes(), Some(2), Some(2)),
        (tcp(5, 80, 0x02).bytes(), Some(5), Some(3)),
        (tcp(5, 7000, 0x12).bytes(), Some(2), Some(2)),
        (tcp(2000, 80, 0x02).bytes(), Some(5), Some(2)),
        (udp(5, 53).bytes(), Some(5), Some(1)),
        (udp(5, 54).bytes(), Some(5), Some(3)),
        (icmp(8, 0).bytes(), Some(3), Some(0)),
        (icmp(0, 0).bytes(), Some(4), Some(0)),
    ];
    for (pkt, want_c, want_e) in &cases {
        assert_eq!(c.matches(pkt), *want_c, "{pkt:?}");
        assert_eq!(e.matches(pkt), *want_e, "{pkt:?}");
        assert_eq!(c.reference_matches(pkt), *want_c);
        assert_eq!(e.reference_matches(pkt), *want_e);
    }
    // A UDP header cut after the source port: `port >= 1024` is one test
    // of both ports, as in Click, so the packet is too short for it.
    let mut cut = udp(2000, 5).bytes();
    cut.truncate(22);
    cut[3] = 22;
    assert_eq!(e.matches(&cut), Some(3));
    assert_eq!(e.reference_matches(&cut), Some(3));
}

/// `src and dst port 80` is one test of the port word; a `>=` on one port
/// stays apart from the other's test (stock Click 2.1 prints the same).
#[test]
fn src_and_dst_port_is_one_test() {
    let p = Program::compile_ip_filter(
        &[
            "allow src and dst port 80",
            "allow tcp src port >= 1024 and dst port 80",
            "deny all",
        ],
        1,
    )
    .unwrap();
    assert_eq!(
        p.dump(),
        " 0 264/00060000%00ff0000  yes->step 2  no->step 1
 1 264/00110000%00ff0000  yes->step 2  no->[X]
 2 260/00000000%00001fff  yes->step 3  no->[X]
 3 512/00500050%ffffffff  yes->[0]  no->step 4
 4 264/00060000%00ff0000  yes->step 5  no->[X]
 5 512/00000000%fc000000  yes->[X]  no->step 6  short->yes
 6 512/00000050%0000ffff  yes->[0]  no->[X]
safe length 516
alignment offset 0
"
    );
    assert_eq!(p.matches(&udp(80, 80).bytes()), Some(0));
    assert_eq!(p.matches(&udp(80, 81).bytes()), None);
    assert_eq!(p.matches(&tcp(2000, 80, 0).bytes()), Some(0));
    assert_eq!(p.matches(&tcp(1000, 80, 0).bytes()), None);
}

/// The flat table (IHL 5) and the general walk (any IHL) agree: the same
/// transport header behind a 20-byte and a 24-byte IP header classifies
/// the same, through `matches`, `code` and `codes_n`.
#[test]
fn flat_and_general_walks_agree() {
    let p = Program::compile_ip_filter(
        &[
            "0 tcp && dst port 80",
            "1 udp && src net 10.0.0.0/8 && dst port 5678",
            "2 icmp type echo",
        ],
        3,
    )
    .unwrap();
    let with_opts = |b: &[u8]| {
        let mut v = b.to_vec();
        v[0] = 0x46;
        v.splice(20..20, [1, 1, 1, 0]);
        v
    };
    let cases: Vec<(Vec<u8>, Option<usize>)> = vec![
        (tcp(1, 80, 0x02).bytes(), Some(0)),
        (udp(1234, 5678).src([10, 0, 0, 1]).bytes(), Some(1)),
        (udp(1234, 5678).src([11, 0, 0, 1]).bytes(), None),
        (icmp(8, 0).bytes(), Some(2)),
        (icmp(0, 0).bytes(), None),
    ];
    for (b, want) in &cases {
        let o = with_opts(b);
        for d in [&b[..], &o[..]] {
            assert_eq!(p.matches(d), *want, "{d:?}");
            assert_eq!(p.matches(d), p.reference_matches(d), "{d:?}");
            let code = want.map(|w| w as u32).unwrap_or(crate::DROP_CODE);
            assert_eq!(p.code(d), code, "{d:?}");
            assert_eq!(p.codes_n([d, d, d, d]), [code; 4], "{d:?}");
        }
    }
}

// ---------------------------------------------------------------------------
// Ethernet primitives

/// Click's test/ip/IPFilter-06.clicktest: Ethernet addresses as values
/// (`src ADDR`, `dst ADDR`, `host ADDR`) compile to MAC-relative words
/// below 256, read from 2 bytes before the MAC header.
#[test]
fn ether_program_is_clicks() {
    let p = Program::compile_ip_filter(
        &[
            "allow src 0:1:2:3:4:5",
            "allow src 10.0.0.0 & 8.0.0.0 = 8.0.0.0",
            "allow dst 10:20:30:40:50:60",
            "allow host 9:A:B:C:D:E",
            "deny all",
        ],
        1,
    )
    .unwrap();
    let want = " 0   8/00010203%ffffffff  yes->step 1  no->step 2
 1  12/04050000%ffff0000  yes->[0]  no->step 2
 2 268/0a000000%ffffffff  yes->[0]  no->step 3
 3   0/00001020%0000ffff  yes->step 4  no->step 5
 4   4/30405060%ffffffff  yes->[0]  no->step 5
 5   8/090a0b0c%ffffffff  yes->step 6  no->step 7
 6  12/0d0e0000%ffff0000  yes->[0]  no->step 7
 7   0/0000090a%0000ffff  yes->step 8  no->[X]
 8   4/0b0c0d0e%ffffffff  yes->[0]  no->[X]
safe length 272
alignment offset 0
";
    assert_eq!(p.dump(), want);
    assert!(p.needs_mac());
    assert!(!Program::compile_ip_filter(&["allow src 10.0.0.1"], 1)
        .unwrap()
        .needs_mac());
}

/// An Ethernet header (dst, src, type 0x0800).
fn eth(dst: [u8; 6], src: [u8; 6]) -> Vec<u8> {
    let mut v = dst.to_vec();
    v.extend_from_slice(&src);
    v.extend_from_slice(&[0x08, 0x00]);
    v
}

#[test]
fn ether_matching() {
    let a = [0, 1, 2, 3, 4, 5];
    let b = [0x10, 0x20, 0x30, 0x40, 0x50, 0x60];
    let o = [0xaa; 6];
    let ip = udp(1, 2).bytes();
    let check = |pat: &str, mac: &[u8], want: bool| {
        let p = ipc(&[pat]);
        let r = p.matches_mac(mac, &ip);
        assert_eq!(r, p.reference_matches_mac(mac, &ip), "{pat:?} {mac:?}");
        assert_eq!(r == Some(0), want, "{pat:?} {mac:?}\n{}", p.dump());
        let code = if want { 0 } else { crate::DROP_CODE };
        assert_eq!(p.code_mac(mac, &ip), code, "{pat:?} {mac:?}");
    };
    for (pat, ab, ba, oo) in [
        ("src 0:1:2:3:4:5", false, true, false),
        ("ether src 00-01-02-03-04-05", false, true, false),
        ("ether src host 0:1:2:3:4:5", false, true, false),
        ("dst 0:1:2:3:4:5", true, false, false),
        ("host 0:1:2:3:4:5", true, true, false),
        ("ether 0:1:2:3:4:5", true, true, false),
        ("src and dst 0:1:2:3:4:5", false, false, false),
        ("src 0:1:2:3:4:5 or 10:20:30:40:50:60", true, true, false),
        ("ether src != 0:1:2:3:4:5", true, false, true),
        ("not ether src 0:1:2:3:4:5", true, false, true),
        // masks: only the bytes the mask keeps
        ("src & ff:ff:ff:0:0:0 0:1:2:ff:ff:ff", false, true, false),
        ("ether dst & 0:0:0:0:0:ff 0:0:0:0:0:5", true, false, false),
        ("dst & 0:ff:0:0:0:0 = 0:1:0:0:0:0", true, false, false),
        ("ether src 0:1:2:3:4:5 and udp", false, true, false),
    ] {
        check(pat, &eth(a, b), ab);
        check(pat, &eth(b, a), ba);
        check(pat, &eth(o, o), oo);
    }
    // No MAC header, or one too short for a word: the primitive is false
    // (and its `!=` too), an explicit `not` true.
    let full = eth(b, a);
    for mac in [&[][..], &full[..1], &full[..11], &full[..6]] {
        check("src 0:1:2:3:4:5", mac, false);
        check("ether src != 0:1:2:3:4:5", mac, false);
        check("not src 0:1:2:3:4:5", mac, true);
    }
    // The destination fits in 6 bytes, the source word 12 needs 12.
    check("dst 10:20:30:40:50:60", &full[..6], true);
    check("src 0:1:2:3:4:5", &full[..11], false);
    check("src 0:1:2:3:4:5", &full[..12], true);
    // Without a MAC header given (`matches`), Ethernet words are short.
    let p = ipc(&["ether src 0:1:2:3:4:5", "not ether src 0:1:2:3:4:5"]);
    assert_eq!(p.matches(&ip), Some(1));
    assert_eq!(p.code(&ip), 1);
    assert_eq!(p.codes_n([&ip[..], &ip[..]]), [1, 1]);
    assert_eq!(p.steps(&ip), 1);
}

#[test]
fn ether_parsing() {
    // a bare value after an Ethernet primitive is an Ethernet address
    let p = ipc(&["src 0:1:2:3:4:5 or 0:1:2:3:4:6"]);
    assert_eq!(p.len(), 3, "{}", p.dump());
    assert!(err("ether net 10.0.0.0/8").contains("address missing"));
    assert!(err("ip host 0:1:2:3:4:5").contains("address missing"));
    assert!(err("ether host 10.0.0.1").contains("address missing"));
    assert!(err("ether port 80").contains("ip only"));
    assert!(err("ether tcp").contains("ip only"));
    assert!(err("ether src > 0:1:2:3:4:5").contains("operator not supported"));
    assert!(err("src & 255.0.0.0 0:1:2:3:4:5").contains("bad mask"));
    assert!(err("src & ff:ff:ff:ff:ff:ff 10.0.0.1").contains("bad mask"));
    assert!(err("ttl & ff:ff:ff:ff:ff:ff 3").contains("bad mask"));
    // an all-zero Ethernet mask is allowed (and always true)
    let p = ipc(&["src & 0:0:0:0:0:0 0:1:2:3:4:5"]);
    assert_eq!(p.matches_mac(&[], &udp(1, 2).bytes()), Some(0));
    assert!(!p.needs_mac());
}

/// Tests of one word joined by `and` become one test, as Click's
/// `combine_compatible_states` makes them (Click 2.1 prints these), and
/// stay exact on packets too short for the word.
#[test]
fn same_word_tests_combine() {
    let f = |r: &[&str]| Program::compile_ip_filter(r, 1).unwrap().dump();
    assert_eq!(
        f(&["allow src 10.0.0.0 & 8.0.0.0 = 8.0.0.0", "deny all"]),
        " 0 268/0a000000%ffffffff  yes->[0]  no->[X]\nsafe length 272\nalignment offset 0\n"
    );
    assert_eq!(
        f(&["allow tcp", "allow ip ttl 5 and ip ttl & 4 = 4", "deny all"]),
        " 0 264/00060000%00ff0000  yes->[0]  no->step 1
 1 264/05000000%ff000000  yes->[0]  no->[X]
safe length 266
alignment offset 0
"
    );
    // different words stay apart
    assert_eq!(ipc(&["src 10.1.2.3 and dst 10.1.2.3"]).len(), 2);
    // conflicting values are not merged (threading decides them)
    assert!(!m("ip ttl 5 and ip ttl & 4 = 0", &udp(1, 2).bytes()));
    // short packets: `not (ip ttl != 5)` is true there, `ip ttl & 4 = 4`
    // false; together false, whatever order the walk tests them in
    let mut pkt = udp(1, 2).bytes();
    pkt[8] = 5;
    for pat in [
        "not (ip ttl != 5) and ip ttl & 4 = 4",
        "ip ttl & 4 = 4 and not (ip ttl != 5)",
    ] {
        assert!(m(pat, &pkt), "{pat}");
        assert!(!m(pat, &pkt[..8]), "{pat}");
        assert!(m(&alloc::format!("not ({pat})"), &pkt[..8]), "{pat}");
    }
    // a test of more bytes, true on short packets, after one of fewer:
    // not one test (the pair's outcome depends on the shorter test when
    // only the longer is short)
    let pat = "ip ttl 5 and not (ip[8:2] != 0x0511)";
    assert!(m(pat, &pkt[..9]));
    let mut other = pkt.clone();
    other[8] = 6;
    assert!(!m(pat, &other[..9]));
    assert_eq!(ipc(&[pat]).len(), 2);
    // both true on short packets: the combined test is too
    let pat = "not (ip ttl != 5) and not (ip ttl & 4 != 4)";
    assert!(m(pat, &pkt[..8]));
    assert_eq!(ipc(&[pat]).len(), 1);
}
