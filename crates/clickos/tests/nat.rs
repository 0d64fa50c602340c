//! End to end: `clickos run` NATs an IP summary dump (TCP, UDP, a ping and
//! an ICMP error about a mapped flow) through IPRewriter, ICMPPingRewriter
//! and ICMPRewriter, checks every checksum on the way out, and prints the
//! rewritten flows line by line; then reads the tables.

mod common;
use common::*;

#[test]
fn clickos_run_nats_a_summary_dump() {
    let dir = tmpdir("nat");
    let outb = dir.join("outbound.dump");
    std::fs::write(
        &outb,
        "!data proto src sport dst dport ip_ttl\n\
         T 10.0.0.5 3333 8.8.8.8 80 64\n\
         U 10.0.0.5 5353 8.8.4.4 53 64\n\
         T 10.0.0.6 3333 8.8.8.8 80 64\n\
         U 10.0.0.5 5353 8.8.4.4 53 1\n",
    )
    .unwrap();
    let inb = dir.join("inbound.dump");
    std::fs::write(
        &inb,
        "!data proto src sport dst dport ip_ttl\n\
         T 8.8.8.8 80 1.0.0.1 1024 64\n\
         U 8.8.4.4 53 1.0.0.1 1025 64\n\
         T 8.8.8.8 80 1.0.0.1 1026 64\n\
         T 8.8.8.8 80 1.0.0.1 2000 64\n",
    )
    .unwrap();
    let out = dir.join("out.dump");
    let cfg = format!(
        "rw :: IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop);
         t :: ToIPSummaryDump({}, FIELDS proto src sport dst dport);
         chk :: {{ input -> CheckIPHeader(VERBOSE true) -> c :: IPClassifier(tcp, udp, -);
                  c[0] -> CheckTCPHeader(VERBOSE true) -> output;
                  c[1] -> CheckUDPHeader(VERBOSE true) -> output;
                  c[2] -> CheckICMPHeader(VERBOSE true) -> output }};
         FromIPSummaryDump({}, STOP true, CHECKSUM true) -> [0]rw;
         f2 :: FromIPSummaryDump({}, STOP true, CHECKSUM true, ACTIVE false) -> [1]rw;
         rw[0] -> chk -> ttl :: DecIPTTL -> t;
         ttl[1] -> ICMPError(9.9.9.9, timeexceeded) -> ICMPRewriter(rw) -> chk2 :: CheckIPHeader(VERBOSE true) -> CheckICMPHeader(VERBOSE true) -> t;
         rw[1] -> chk3 :: CheckIPHeader(VERBOSE true) -> c3 :: IPClassifier(tcp, udp);
         c3[0] -> CheckTCPHeader(VERBOSE true) -> t;
         c3[1] -> CheckUDPHeader(VERBOSE true) -> t;
         DriverManager(wait_stop, write f2.active true, wait_stop)",
        out.display(),
        outb.display(),
        inb.display()
    );
    let r = click(&[
        "-e",
        &cfg,
        "-h",
        "rw.tcp_table",
        "-h",
        "rw.udp_table",
        "-h",
        "rw.table_size",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert!(!r.err.contains("failed"), "checksums: {}", r.err);
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('!')).collect();
    assert_eq!(
        lines,
        vec![
            "T 1.0.0.1 1024 8.8.8.8 80",
            "U 1.0.0.1 1025 8.8.4.4 53",
            "T 1.0.0.1 1026 8.8.8.8 80",
            // the TTL-1 datagram expired after the NAT: its ICMP error,
            // rewritten back to the inside host
            "I 9.9.9.9 - 10.0.0.5 -",
            // replies, mapped back; the one to an unmapped port dropped
            "T 8.8.8.8 80 10.0.0.5 3333",
            "U 8.8.4.4 53 10.0.0.5 5353",
            "T 8.8.8.8 80 10.0.0.6 3333",
        ],
        "{text}"
    );
    let mut tables: Vec<&str> = r.out.lines().collect();
    tables.sort();
    assert!(
        tables.contains(
            &"(10.0.0.5, 3333, 8.8.8.8, 80) => (1.0.0.1, 1024, 8.8.8.8, 80) [*0 1] i0 exp300"
        ),
        "{}",
        r.out
    );
    assert!(
        tables.contains(
            &"(8.8.4.4, 53, 1.0.0.1, 1025) => (8.8.4.4, 53, 10.0.0.5, 5353) [0 *1] i0 exp300"
        ),
        "{}",
        r.out
    );
    assert!(tables.contains(&"3"), "{}", r.out);
}
