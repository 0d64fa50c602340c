//! SnortIDS: rule semantics, refusals, reloads, malformed packets, and a
//! no-panic run over random rules and packets.

use click::prelude::*;
use click_ids::matcher::{decode, RuleSet, Verdict};
use click_ids::rules::Action;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

// ---- packets --------------------------------------------------------------

const TCP: u8 = 6;
const UDP: u8 = 17;
const ICMP: u8 = 1;
const SYN: u8 = 0x02;
const ACK: u8 = 0x10;
const PSH: u8 = 0x08;

/// An IPv4 packet (no Ethernet header) with a TCP, UDP or ICMP header.
fn ip(
    proto: u8,
    src: [u8; 4],
    dst: [u8; 4],
    sp: u16,
    dp: u16,
    flags: u8,
    payload: &[u8],
) -> Vec<u8> {
    let l4: Vec<u8> = match proto {
        TCP => {
            let mut h = vec![0u8; 20];
            h[0..2].copy_from_slice(&sp.to_be_bytes());
            h[2..4].copy_from_slice(&dp.to_be_bytes());
            h[12] = 5 << 4;
            h[13] = flags;
            h
        }
        UDP => {
            let mut h = vec![0u8; 8];
            h[0..2].copy_from_slice(&sp.to_be_bytes());
            h[2..4].copy_from_slice(&dp.to_be_bytes());
            h[4..6].copy_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
            h
        }
        _ => vec![8, 0, 0, 0, 0, 1, 0, 1],
    };
    let total = 20 + l4.len() + payload.len();
    let mut p = vec![0u8; 20];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[8] = 64;
    p[9] = proto;
    p[12..16].copy_from_slice(&src);
    p[16..20].copy_from_slice(&dst);
    let c = click_wire::checksum::ip_checksum(&p[..20]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p.extend_from_slice(&l4);
    p.extend_from_slice(payload);
    p
}

const A: [u8; 4] = [10, 0, 0, 1];
const B: [u8; 4] = [192, 168, 1, 2];

fn tcp(payload: &[u8]) -> Vec<u8> {
    ip(TCP, A, B, 40000, 80, ACK | PSH, payload)
}

/// The rules (sids) that fire on `pkt`, and the action.
fn run(set: &mut RuleSet, pkt: &[u8], now_ns: i64) -> (Vec<u32>, Option<Action>) {
    let (d, _) = decode(pkt).expect("decodes");
    let mut v = Verdict::default();
    set.inspect(&d, now_ns, &mut v);
    let sids = v.events.iter().map(|&i| set.rule(i as usize).sid).collect();
    (sids, v.action)
}

fn set(rules: &str) -> RuleSet {
    RuleSet::parse(&[("RULES", rules)]).unwrap_or_else(|e| panic!("{e}"))
}

/// Whether the one rule with `opts` fires on a TCP packet with `payload`.
fn fires(opts: &str, payload: &[u8]) -> bool {
    let mut s = set(&format!("alert tcp any any -> any any ({opts} sid:1;)"));
    !run(&mut s, &tcp(payload), 0).0.is_empty()
}

fn refused(rules: &str) -> String {
    match RuleSet::parse(&[("RULES", rules)]) {
        Ok(_) => panic!("rules should be refused: {rules}"),
        Err(e) => e.to_string(),
    }
}

// ---- content --------------------------------------------------------------

#[test]
fn content_plain_nocase_hex() {
    assert!(fires(r#"content:"GET";"#, b"GET / HTTP/1.0"));
    assert!(!fires(r#"content:"GET";"#, b"get / HTTP/1.0"));
    assert!(fires(r#"content:"GET", nocase;"#, b"get / HTTP/1.0"));
    assert!(fires(r#"content:"GET"; nocase;"#, b"gEt / HTTP/1.0"));
    assert!(fires(r#"content:"|00 01|AB|ff|";"#, b"xx\x00\x01AB\xffyy"));
    assert!(!fires(r#"content:"|00 01|AB|ff|";"#, b"xx\x00\x01AB\xfeyy"));
    assert!(fires(r#"content:"|0001|";"#, b"\x00\x01"));
    assert!(fires(r#"content:"a\;b\"c";"#, b"xa;b\"cx"));
    // Every content must match, not just the fast pattern.
    assert!(fires(
        r#"content:"abc"; content:"longer-one";"#,
        b"abc longer-one"
    ));
    assert!(!fires(
        r#"content:"abc"; content:"longer-one";"#,
        b"abx longer-one"
    ));
    // nocase applies to its own content only.
    assert!(!fires(
        r#"content:"abc", nocase; content:"XYZ";"#,
        b"ABC xyz"
    ));
    assert!(fires(
        r#"content:"abc", nocase; content:"XYZ";"#,
        b"ABC XYZ"
    ));
}

#[test]
fn content_offset_depth() {
    // offset: the match starts at offset or later.
    assert!(fires(r#"content:"abc", offset 2;"#, b"xxabc"));
    assert!(!fires(r#"content:"abc", offset 3;"#, b"xxabc"));
    // depth: the match lies within [offset, offset+depth).
    assert!(fires(r#"content:"abc", depth 5;"#, b"xxabc"));
    assert!(!fires(r#"content:"abc", depth 4;"#, b"xxabc"));
    assert!(fires(r#"content:"abc", offset 2, depth 3;"#, b"xxabc"));
    assert!(!fires(r#"content:"abc", offset 1, depth 3;"#, b"xxabc"));
    assert!(fires(r#"content:"abc", offset 1, depth 4;"#, b"xxabc"));
    // A later occurrence inside the window counts.
    assert!(fires(r#"content:"ab", offset 1, depth 4;"#, b"abxab"));
    // Snort 2 form.
    assert!(fires(r#"content:"abc"; offset:2; depth:3;"#, b"xxabc"));
    assert!(!fires(r#"content:"abc"; offset:2; depth:3;"#, b"xxxabc"));
    // Offset past the payload.
    assert!(!fires(r#"content:"a", offset 100;"#, b"aaaa"));
}

#[test]
fn content_distance_within() {
    // distance: at least N bytes after the end of the previous match.
    assert!(fires(
        r#"content:"ab"; content:"cd", distance 2;"#,
        b"ab..cd"
    ));
    assert!(!fires(
        r#"content:"ab"; content:"cd", distance 3;"#,
        b"ab..cd"
    ));
    // within: ends at most N bytes after cursor+distance.
    assert!(fires(r#"content:"ab"; content:"cd", within 4;"#, b"ab..cd"));
    assert!(!fires(
        r#"content:"ab"; content:"cd", within 3;"#,
        b"ab..cd"
    ));
    assert!(fires(
        r#"content:"ab"; content:"cd", distance 1, within 3;"#,
        b"ab..cd"
    ));
    assert!(!fires(
        r#"content:"ab"; content:"cd", distance 1, within 2;"#,
        b"ab..cd"
    ));
    // Negative distance: may overlap the previous match.
    assert!(fires(
        r#"content:"abcd"; content:"bc", distance -3, within 2;"#,
        b"abcd"
    ));
    assert!(!fires(
        r#"content:"abcd"; content:"bc", distance -2, within 2;"#,
        b"abcd"
    ));
    // Relative to the previous match, not the start: "cd" before "ab" fails.
    assert!(!fires(
        r#"content:"ab"; content:"cd", distance 0;"#,
        b"cd ab"
    ));
    // Backtracking: the first "ab" is too far from "cd"; the second is close.
    assert!(fires(
        r#"content:"ab"; content:"cd", within 3;"#,
        b"ab......abxcd"
    ));
    // Three in a chain, each relative to the one before.
    assert!(fires(
        r#"content:"a"; content:"b", within 1; content:"c", within 1;"#,
        b"a.ab.abc"
    ));
    assert!(!fires(
        r#"content:"a"; content:"b", within 1; content:"c", within 1;"#,
        b"a.ab.ab.c"
    ));
    // Snort 2 form.
    assert!(fires(
        r#"content:"ab"; content:"cd"; distance:1; within:3;"#,
        b"ab..cd"
    ));
    // The first content of a rule with distance is relative to the start.
    assert!(fires(r#"content:"cd", distance 2;"#, b"abcd"));
    assert!(!fires(r#"content:"cd", distance 3;"#, b"abcd"));
}

#[test]
fn pcre_flags() {
    assert!(fires(
        r#"pcre:"/^GET \/[a-z]+\.php/";"#,
        b"GET /index.php HTTP/1.1"
    ));
    assert!(!fires(r#"pcre:"/^GET \/[a-z]+\.php/";"#, b"get /index.php"));
    assert!(fires(r#"pcre:"/^GET \/[a-z]+\.php/i";"#, b"get /INDEX.PHP"));
    assert!(!fires(r#"pcre:"/a.b/";"#, b"a\nb"));
    assert!(fires(r#"pcre:"/a.b/s";"#, b"a\nb"));
    assert!(!fires(r#"pcre:"/^foo$/";"#, b"x\nfoo\ny"));
    assert!(fires(r#"pcre:"/^foo$/m";"#, b"x\nfoo\ny"));
    assert!(fires(r#"pcre:"/f o o # comment/x";"#, b"..foo.."));
    // Bytes, not UTF-8.
    assert!(fires(r#"pcre:"/\xff\x00+\xfe/";"#, b"a\xff\x00\x00\xfeb"));
    // Content and pcre together.
    assert!(fires(
        r#"content:"user"; pcre:"/user=[0-9]{3}/";"#,
        b"user=123"
    ));
    assert!(!fires(
        r#"content:"user"; pcre:"/user=[0-9]{3}/";"#,
        b"user=12x"
    ));
}

// ---- header ---------------------------------------------------------------

fn hdr_fires(header: &str, pkt: &[u8]) -> bool {
    let mut s = set(&format!("{header} (sid:1;)"));
    !run(&mut s, pkt, 0).0.is_empty()
}

#[test]
fn addresses_ports_lists_negation() {
    let p = ip(TCP, A, B, 40000, 80, ACK, b"x");
    assert!(hdr_fires("alert tcp 10.0.0.1 any -> 192.168.1.2 80", &p));
    assert!(hdr_fires(
        "alert tcp 10.0.0.0/8 any -> 192.168.0.0/16 any",
        &p
    ));
    assert!(!hdr_fires("alert tcp 10.0.0.2 any -> any any", &p));
    assert!(hdr_fires("alert tcp !10.0.0.2 any -> any any", &p));
    assert!(!hdr_fires("alert tcp !10.0.0.0/24 any -> any any", &p));
    assert!(hdr_fires("alert tcp [1.2.3.4,10.0.0.1] any -> any any", &p));
    assert!(hdr_fires(
        "alert tcp [1.2.3.4, 10.0.0.1] any -> any any",
        &p
    ));
    assert!(!hdr_fires("alert tcp [1.2.3.4,5.6.7.8] any -> any any", &p));
    assert!(!hdr_fires(
        "alert tcp [10.0.0.0/8,!10.0.0.1] any -> any any",
        &p
    ));
    assert!(hdr_fires(
        "alert tcp [10.0.0.0/8,!10.0.0.2] any -> any any",
        &p
    ));
    assert!(!hdr_fires(
        "alert tcp ![1.2.3.4,10.0.0.1] any -> any any",
        &p
    ));
    assert!(hdr_fires(
        "alert tcp [[1.1.1.1,10.0.0.1],2.2.2.2] any -> any any",
        &p
    ));
    // Ports.
    assert!(hdr_fires("alert tcp any 1024: -> any :1023", &p));
    assert!(!hdr_fires("alert tcp any :1023 -> any any", &p));
    assert!(hdr_fires("alert tcp any any -> any [443,80]", &p));
    assert!(hdr_fires("alert tcp any any -> any [443,70:90]", &p));
    assert!(!hdr_fires("alert tcp any any -> any ![443,70:90]", &p));
    assert!(!hdr_fires("alert tcp any any -> any !80", &p));
    assert!(hdr_fires("alert tcp any any -> any !81", &p));
    assert!(!hdr_fires("alert tcp any any -> any [1:100,!80]", &p));
    // Protocol.
    assert!(!hdr_fires("alert udp any any -> any any", &p));
    assert!(hdr_fires("alert ip any any -> any any", &p));
    assert!(!hdr_fires("alert icmp any any -> any any", &p));
    let u = ip(UDP, A, B, 5353, 53, 0, b"q");
    assert!(hdr_fires("alert udp any any -> any 53", &u));
    let i = ip(ICMP, A, B, 0, 0, 0, b"ping");
    assert!(hdr_fires("alert icmp 10.0.0.1 any -> any any", &i));
    assert!(hdr_fires("alert ip any any -> 192.168.1.2 any", &i));
}

#[test]
fn direction_and_variables() {
    let p = ip(TCP, A, B, 40000, 80, ACK, b"x");
    let back = ip(TCP, B, A, 80, 40000, ACK, b"x");
    let r = "alert tcp 10.0.0.1 any -> 192.168.1.2 80";
    assert!(hdr_fires(r, &p));
    assert!(!hdr_fires(r, &back));
    let r = "alert tcp 10.0.0.1 any <> 192.168.1.2 80";
    assert!(hdr_fires(r, &p));
    assert!(hdr_fires(r, &back));
    let vars = "var HOME_NET 192.168.0.0/16\nipvar EXT !$HOME_NET\nportvar WEB [80,8080]\n";
    let mut s = set(&format!(
        "{vars}alert tcp $EXT any -> $HOME_NET $WEB (sid:1;)"
    ));
    assert_eq!(run(&mut s, &p, 0).0, vec![1]);
    assert!(run(&mut s, &back, 0).0.is_empty());
}

#[test]
fn flow_stateless() {
    let to_server_est = ip(TCP, A, B, 40000, 80, ACK | PSH, b"x");
    let to_client_est = ip(TCP, B, A, 80, 40000, ACK | PSH, b"x");
    let syn = ip(TCP, A, B, 40000, 80, SYN, b"");
    // A SYN from a low port to a high one is still to_server.
    let syn_low = ip(TCP, A, B, 80, 40000, SYN, b"");
    let synack = ip(TCP, B, A, 40000, 80, SYN | ACK, b"");
    let f = |flow: &str, p: &[u8]| {
        let mut s = set(&format!(
            "alert tcp any any <> any any (flow:{flow}; sid:1;)"
        ));
        !run(&mut s, p, 0).0.is_empty()
    };
    assert!(f("to_server", &to_server_est));
    assert!(f("from_client", &to_server_est));
    assert!(!f("to_server", &to_client_est));
    assert!(f("to_client", &to_client_est));
    assert!(f("from_server", &to_client_est));
    assert!(f("to_server,established", &to_server_est));
    assert!(!f("established", &syn));
    assert!(f("not_established", &syn));
    assert!(f("to_server", &syn_low));
    assert!(!f("to_client", &syn_low));
    assert!(f("to_client", &synack));
    assert!(!f("not_established", &to_server_est));
    assert!(f("stateless", &syn));
    // UDP: port heuristic; every packet is "established".
    let mut s = set("alert udp any any -> any any (flow:to_server,established; sid:1;)");
    assert!(!run(&mut s, &ip(UDP, A, B, 5353, 53, 0, b"q"), 0)
        .0
        .is_empty());
    assert!(run(&mut s, &ip(UDP, A, B, 53, 5353, 0, b"q"), 0)
        .0
        .is_empty());
    // ip rule with flow on an ICMP packet: no ports, never matches.
    let mut s = set("alert ip any any -> any any (flow:to_server; sid:1;)");
    assert!(run(&mut s, &ip(ICMP, A, B, 0, 0, 0, b""), 0).0.is_empty());
}

#[test]
fn detection_filter_counts() {
    let mut s = set(
        "alert tcp any any -> any any (content:\"login\"; detection_filter: track by_src, count 3, seconds 10; sid:1;)",
    );
    let sec = 1_000_000_000i64;
    let p = tcp(b"login failed");
    // The first 3 matches in the window are below the rate; the 4th and 5th fire.
    let got: Vec<bool> = (0..5)
        .map(|i| !run(&mut s, &p, i * sec).0.is_empty())
        .collect();
    assert_eq!(got, vec![false, false, false, true, true]);
    // Another source has its own count.
    let other = ip(TCP, [10, 0, 0, 9], B, 40000, 80, ACK, b"login");
    assert!(run(&mut s, &other, 5 * sec).0.is_empty());
    // After the window (10 s from its first match) the count starts over.
    let got: Vec<bool> = (0..4)
        .map(|i| !run(&mut s, &p, 20 * sec + i).0.is_empty())
        .collect();
    assert_eq!(got, vec![false, false, false, true]);
    // by_dst counts per destination.
    let mut s = set(
        "alert tcp any any -> any any (content:\"x\"; detection_filter:track by_dst,count 1,seconds 60; sid:2;)",
    );
    let a = ip(TCP, [1, 1, 1, 1], B, 40000, 80, ACK, b"x");
    let b2 = ip(TCP, [2, 2, 2, 2], B, 40000, 80, ACK, b"x");
    assert!(run(&mut s, &a, 0).0.is_empty());
    assert_eq!(run(&mut s, &b2, 1).0, vec![2]);
    assert_eq!(s.stats(0).matches, 2);
    assert_eq!(s.stats(0).events, 1);
}

#[test]
fn actions_pass_drop_alert() {
    let rules = "alert tcp any any -> any any (msg:\"a\"; content:\"evil\"; sid:1;)\n\
                 drop tcp any any -> any any (msg:\"d\"; content:\"evil-drop\"; sid:2;)\n\
                 pass tcp 10.0.0.1 any -> any any (content:\"trusted\"; sid:3;)";
    let mut s = set(rules);
    assert_eq!(
        run(&mut s, &tcp(b"evil"), 0),
        (vec![1], Some(Action::Alert))
    );
    assert_eq!(
        run(&mut s, &tcp(b"evil-drop"), 0),
        (vec![1, 2], Some(Action::Drop))
    );
    assert_eq!(
        run(&mut s, &tcp(b"trusted evil-drop"), 0),
        (vec![], Some(Action::Pass))
    );
    assert_eq!(run(&mut s, &tcp(b"nothing"), 0), (vec![], None));
}

// ---- refusals -------------------------------------------------------------

#[test]
fn refused_rules_name_line_and_reason() {
    let ok = "alert tcp any any -> any 80 (msg:\"ok\"; content:\"a\"; sid:1;)";
    let cases: &[(&str, &str)] = &[
        ("log tcp any any -> any any (sid:2;)", "unsupported action 'log'"),
        ("alert http any any -> any any (sid:2;)", "unsupported protocol 'http'"),
        ("alert tcp any any => any any (sid:2;)", "unsupported direction '=>'"),
        ("alert tcp any any -> any any (msg:\"x\"; sid:2; http_uri;)", "unsupported option 'http_uri'"),
        ("alert tcp any any -> any any (content:\"x\", rawbytes; sid:2;)", "unsupported content modifier 'rawbytes'"),
        ("alert tcp any any -> any any (content:!\"x\"; sid:2;)", "negated content"),
        ("alert tcp any any -> any any (content:\"abc\", depth 2; sid:2;)", "depth is shorter than the content"),
        ("alert tcp any any -> any any (content:\"a\", offset 1, distance 2; sid:2;)", "mixes offset/depth with distance/within"),
        ("alert tcp any any -> any any (pcre:\"/a/R\"; sid:2;)", "unsupported flag 'R'"),
        ("alert tcp any any -> any any (pcre:\"/(a)\\1/\"; sid:2;)", "pcre: cannot compile"),
        ("alert tcp any any -> any any (pcre:\"/a(?=b)/\"; sid:2;)", "pcre: cannot compile"),
        ("alert tcp any any -> any any (flow:only_stream; sid:2;)", "flow: unsupported value 'only_stream'"),
        ("alert tcp any any -> any any (detection_filter: track by_rule, count 1, seconds 1; sid:2;)", "track must be by_src or by_dst"),
        ("alert tcp any any -> any any (detection_filter: track by_src, count 1; sid:2;)", "needs track, count and seconds"),
        ("alert tcp any any -> any any (msg:\"no sid\";)", "rule has no sid"),
        ("alert tcp any any -> any any (sid:1;)", "duplicate gid:sid 1:1 (first at RULES line 2)"),
        ("alert tcp $NOPE any -> any any (sid:2;)", "undefined variable $NOPE"),
        ("alert tcp 1.2.3.4/33 any -> any any (sid:2;)", "bad prefix length"),
        ("alert tcp ::1 any -> any any (sid:2;)", "IPv6"),
        ("alert tcp any 70000 -> any any (sid:2;)", "bad port"),
        ("alert icmp any 80 -> any any (sid:2;)", "ports must be 'any'"),
        ("alert tcp any any -> any any (classtype:nope; sid:2;)", "unknown classtype 'nope'"),
        ("alert tcp any any -> any any (sid:2)", "not terminated by ';'"),
        ("alert tcp any any -> any any sid:2;", "no option list"),
        ("alert tcp any any -> any any (content:\"|4|\"; sid:2;)", "odd number of hex digits"),
        ("alert tcp any any -> any any (nocase; sid:2;)", "'nocase' without a preceding content"),
        ("alert tcp any any -> any any (pcre:\"/a/\"; content:\"b\", distance 1; sid:2;)", "relative content"),
    ];
    for (bad, reason) in cases {
        let text = format!("# comment\n{ok}\n\n{bad}\n{ok}");
        let e = refused(&text);
        assert!(
            e.starts_with("RULES line 4: ") && e.contains(reason),
            "for {bad}: got '{e}', want line 4 and '{reason}'"
        );
    }
    // A continuation line keeps the number of the rule's first line.
    let e = refused(&format!(
        "{ok}\nalert tcp any any \\\n -> any any (bogus; sid:9;)"
    ));
    assert_eq!(e, "RULES line 2: unsupported option 'bogus'");
}

// ---- the element ----------------------------------------------------------

thread_local! {
    static SEEN: RefCell<HashMap<String, Vec<Vec<u8>>>> = RefCell::new(HashMap::new());
}

#[derive(Default)]
struct Collect;

static COLLECT: ClassSpec = ClassSpec {
    name: "Collect",
    port_count: "1/0",
    processing: "h/",
    group: "test",
    signature: "Collect",
    summary: "",
    description: "",
    ports: "",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Collect),
};

impl Element for Collect {
    fn configure(&mut self, _c: &str, _cx: &ConfigureCtx) -> Result<(), String> {
        Ok(())
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        SEEN.with(|s| {
            s.borrow_mut()
                .entry(cx.name().to_string())
                .or_default()
                .push(p.data().to_vec())
        });
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn seen(name: &str) -> Vec<Vec<u8>> {
    SEEN.with(|s| s.borrow().get(name).cloned().unwrap_or_default())
}

struct T {
    router: Router,
    console: Rc<BufferConsole>,
}

fn try_router(config: &str) -> Result<T, String> {
    SEEN.with(|s| s.borrow_mut().clear());
    let mut reg = Registry::with_builtin();
    click_ids::register(&mut reg);
    reg.add(&COLLECT);
    let config = format!("{config}\nIdle -> ids;");
    let console = Rc::new(BufferConsole::default());
    let clock = Rc::new(VirtualClock::new(Timestamp::from_sec_nsec(
        1_000_000_000,
        0,
    )));
    let router = Router::from_config(
        &config,
        "test.click",
        &[],
        &reg,
        Box::new(clock),
        Box::new(console.clone()),
        RouterOptions::default(),
    )
    .map_err(|e| e.join("\n"))?;
    Ok(T { router, console })
}

impl T {
    fn inject(&self, pkts: &[Vec<u8>]) {
        for d in pkts {
            let mut p = self.router.pool().make(DEFAULT_HEADROOM, d, 0);
            p.anno_mut().timestamp = Timestamp::from_sec_usec(1_700_000_000, 123_456);
            self.router.inject("ids", 0, p).unwrap();
        }
        self.router.run_until_idle(&mut |_| {});
    }
    fn read(&self, h: &str) -> String {
        self.router.read_handler(h).unwrap()
    }
}

const RULES2: &str = "alert tcp any any -> any 80 (msg:\"web attack\"; content:\"/etc/passwd\"; classtype:attempted-recon; sid:1000001; rev:3;)\n\
drop tcp any any -> any 80 (msg:\"drop me\"; content:\"DROPME\"; priority:1; sid:1000002;)\n\
alert icmp any any -> any any (msg:\"ping\"; sid:1000003;)";

fn quoted(r: &str) -> String {
    format!("'{r}'")
}

#[test]
fn element_ports_alert_lines_handlers() {
    let t = try_router(&format!(
        "ids :: SnortIDS(RULES {}); ids[0] -> out :: Collect; ids[1] -> dropped :: Collect;",
        quoted(RULES2)
    ))
    .unwrap();
    let good = tcp(b"hello");
    let recon = tcp(b"GET /../../etc/passwd HTTP/1.0");
    let drop = tcp(b"xxDROPMExx");
    let ping = ip(ICMP, A, B, 0, 0, 0, b"abcdefgh");
    t.inject(&[good.clone(), recon.clone(), drop.clone(), ping.clone()]);
    assert_eq!(seen("out"), vec![good, recon, ping]);
    assert_eq!(seen("dropped"), vec![drop]);
    let want = "11/14-22:13:20.123456  [**] [1:1000001:3] web attack [**] [Classification: Attempted Information Leak] [Priority: 2] {TCP} 10.0.0.1:40000 -> 192.168.1.2:80\n\
11/14-22:13:20.123456  [**] [1:1000002:1] drop me [**] [Priority: 1] {TCP} 10.0.0.1:40000 -> 192.168.1.2:80\n\
11/14-22:13:20.123456  [**] [1:1000003:1] ping [**] [Priority: 0] {ICMP} 10.0.0.1 -> 192.168.1.2\n";
    assert_eq!(t.read("ids.alerts"), want);
    assert_eq!(*t.console.err.borrow(), want);
    assert_eq!(t.read("ids.count"), "4");
    assert_eq!(t.read("ids.drops"), "1");
    assert_eq!(t.read("ids.alerts_total"), "3");
    assert_eq!(t.read("ids.rule_count"), "3");
    assert_eq!(
        t.read("ids.stats"),
        "1:1000001:3 alert matches 1 events 1\n1:1000002:1 drop matches 1 events 1\n1:1000003:1 alert matches 1 events 1\n"
    );
}

#[test]
fn element_without_drop_port_discards_and_ring_is_bounded() {
    let t = try_router(&format!(
        "ids :: SnortIDS(RULES {}, CONSOLE false, ALERT_RING 2) -> out :: Collect;",
        quoted(RULES2)
    ))
    .unwrap();
    let drop = tcp(b"DROPME");
    t.inject(&[drop.clone(), drop.clone(), drop.clone(), tcp(b"ok")]);
    assert_eq!(seen("out").len(), 1);
    assert_eq!(t.read("ids.drops"), "3");
    assert_eq!(t.read("ids.alerts").lines().count(), 2);
    assert_eq!(t.read("ids.alerts_total"), "3");
    assert_eq!(*t.console.err.borrow(), "");
}

#[test]
fn reload_is_atomic() {
    let t = try_router(&format!(
        "ids :: SnortIDS(RULES {}, CONSOLE false) -> out :: Collect; ids[1] -> dr :: Collect;",
        quoted(RULES2)
    ))
    .unwrap();
    let bad = "alert tcp any any -> any any (content:\"x\"; sid:5;)\n\nalert tcp any any -> any any (content:\"y\"; frobnicate; sid:6;)";
    let e = t
        .router
        .write_handler("ids.rules", bad)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("RULES line 3: unsupported option 'frobnicate'"),
        "{e}"
    );
    assert!(e.contains("unchanged"), "{e}");
    // The old rules are still in force.
    assert_eq!(t.read("ids.rule_count"), "3");
    assert_eq!(t.read("ids.rules"), RULES2);
    t.inject(&[tcp(b"DROPME")]);
    assert_eq!(seen("dr").len(), 1);
    // A good set replaces them.
    let good = "drop tcp any any -> any any (content:\"new\"; sid:7;)";
    t.router.write_handler("ids.rules", good).unwrap();
    assert_eq!(t.read("ids.rule_count"), "1");
    t.inject(&[tcp(b"DROPME"), tcp(b"brand new")]);
    assert_eq!(seen("out").len(), 1);
    assert_eq!(seen("dr").len(), 2);
    assert_eq!(t.read("ids.stats"), "1:7:1 drop matches 1 events 1\n");
    t.router.write_handler("ids.reload", "").unwrap();
    assert_eq!(t.read("ids.stats"), "1:7:1 drop matches 0 events 0\n");
}

#[test]
fn configuration_errors_name_line() {
    let e = try_router("ids :: SnortIDS(RULES 'alert tcp any any -> any any (sid:1;)\nalert tcp any any -> any any (sid:x;)') -> Discard;")
        .err()
        .unwrap();
    assert!(
        e.contains("RULES line 2: sid: expected an integer, found 'x'"),
        "{e}"
    );
    // FILE is read through the console: the test console has no files.
    let e = try_router("ids :: SnortIDS(FILE /nonexistent.rules) -> Discard;")
        .err()
        .unwrap();
    assert!(e.contains("FILE /nonexistent.rules"), "{e}");
}

#[test]
fn malformed_packets_are_counted_and_passed() {
    let t = try_router("ids :: SnortIDS(RULES 'alert ip any any -> any any (content:\"zz\"; sid:1;)\nalert tcp any any -> any any (sid:2;)', CONSOLE false) -> out :: Collect;")
        .unwrap();
    let good = tcp(b"zz");
    let mut cut_ip = good.clone();
    cut_ip.truncate(15);
    let mut bad_len = good.clone();
    bad_len[2..4].copy_from_slice(&1000u16.to_be_bytes());
    let mut ipv6ish = good.clone();
    ipv6ish[0] = 0x65;
    let mut bad_hl = good.clone();
    bad_hl[0] = 0x43;
    // IP fine, TCP header cut to 10 bytes (payload "zz" inside what is left).
    let mut cut_tcp = ip(TCP, A, B, 1, 2, ACK, b"");
    cut_tcp.truncate(30);
    cut_tcp.extend_from_slice(b"zz");
    let tl = cut_tcp.len() as u16;
    cut_tcp[2..4].copy_from_slice(&tl.to_be_bytes());
    // TCP data offset pointing past the end.
    let mut bad_off = good.clone();
    bad_off[32] = 0xf0;
    let pkts = vec![
        good,
        vec![],
        cut_ip,
        bad_len,
        ipv6ish,
        bad_hl,
        cut_tcp,
        bad_off,
    ];
    t.inject(&pkts);
    assert_eq!(seen("out").len(), pkts.len());
    assert_eq!(t.read("ids.count"), "8");
    assert_eq!(t.read("ids.malformed"), "7");
    // The good packet fires both; the cut TCP packets only the ip rule.
    assert_eq!(
        t.read("ids.stats"),
        "1:1:1 alert matches 3 events 3\n1:2:1 alert matches 1 events 1\n"
    );
}

// ---- random rules and packets ---------------------------------------------

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
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len())]
    }
}

#[test]
fn random_rules_and_packets_never_panic() {
    let mut rng = Lcg(0x5eed);
    let pieces = [
        "alert",
        "drop",
        "pass",
        "tcp",
        "udp",
        "icmp",
        "ip",
        "any",
        "!",
        "[",
        "]",
        ",",
        "->",
        "<>",
        "10.0.0.0/8",
        "1.2.3.4",
        "80",
        "1024:",
        ":80",
        "$X",
        "(",
        ")",
        ";",
        ":",
        "\"",
        "|",
        "41",
        "content:\"ab\"",
        "content:\"|00 ff|\"",
        "nocase",
        "offset 1",
        "depth 3",
        "distance -2",
        "within 4",
        "distance:1",
        "within:2",
        "pcre:\"/a.b/ism\"",
        "pcre:\"/(/\"",
        "flow:to_server",
        "flow:established",
        "detection_filter: track by_src, count 2, seconds 1",
        "msg:\"m\"",
        "sid:1",
        "sid:2",
        "rev:2",
        "classtype:misc-attack",
        "priority:2",
        "var X 1.2.3.4",
        "\n",
        "\\",
        " ",
        "  ",
        "x",
        "9999999999999",
    ];
    let templates = [
        "alert tcp any any -> any any (content:\"ab\"; content:\"cd\", distance 1, within 4; sid:1;)",
        "drop ip any any <> any any (pcre:\"/a.b/s\"; sid:2;)",
        "alert udp any 1024: -> any [53,5353] (content:\"a\", nocase, offset 1, depth 6; flow:to_server; sid:3;)",
        "pass tcp ![1.2.3.4] any -> any !80 (content:\"b\"; detection_filter: track by_dst, count 1, seconds 1; sid:4;)",
        "alert icmp any any -> any any (content:\"|00|\"; sid:5;)",
    ];
    let mut accepted = 0;
    let mut sets: Vec<RuleSet> = Vec::new();
    for _ in 0..600 {
        let mut text = String::new();
        if rng.below(3) == 0 {
            text.push_str(rng.pick(&templates));
            text.push('\n');
        }
        for _ in 0..rng.below(30) {
            text.push_str(rng.pick(&pieces));
            if rng.below(2) == 0 {
                text.push(' ');
            }
        }
        // Mutate a template byte-wise too.
        let mut t: Vec<u8> = rng.pick(&templates).as_bytes().to_vec();
        for _ in 0..rng.below(4) {
            let i = rng.below(t.len());
            t[i] = rng.below(128) as u8;
        }
        if rng.below(2) == 0 {
            text = String::from_utf8_lossy(&t).into_owned();
        }
        if let Ok(s) = RuleSet::parse(&[("RULES", &text)]) {
            accepted += 1;
            if sets.len() < 50 {
                sets.push(s);
            }
        }
    }
    sets.push(set(&templates.join("\n")));
    assert!(accepted > 10, "only {accepted} random rule sets parsed");
    let mut v = Verdict::default();
    for i in 0..3000 {
        let n = rng.below(80);
        let mut p: Vec<u8> = (0..n).map(|_| rng.below(256) as u8).collect();
        if i % 2 == 0 {
            // Mostly-valid packets with random payloads and fields.
            let proto = [TCP, UDP, ICMP, 47][rng.below(4)];
            let pl: Vec<u8> = (0..rng.below(40))
                .map(|_| b"abcd\x00\xff"[rng.below(6)])
                .collect();
            p = ip(
                proto,
                A,
                B,
                rng.below(65536) as u16,
                rng.below(65536) as u16,
                rng.below(256) as u8,
                &pl,
            );
            for _ in 0..rng.below(3) {
                let k = rng.below(p.len());
                p[k] = rng.below(256) as u8;
            }
            if rng.below(4) == 0 {
                p.truncate(rng.below(p.len() + 1));
            }
        }
        if let Ok((d, _)) = decode(&p) {
            for s in sets.iter_mut() {
                s.inspect(&d, i as i64 * 100_000_000, &mut v);
            }
        }
    }
}
