//! ICMPIPEncap: exact packets out.

mod common;
use common::*;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn icmpipencap_builds_headers() {
    clear_collected();
    // each element numbers its IP IDs (and the sequence numbers of query
    // types) from 1
    let r = router(
        "Idle -> e :: ICMPIPEncap(1.0.0.1, 2.0.0.2, echo, IDENTIFIER 7) -> c :: Collect;
         Idle -> u :: ICMPIPEncap(1.0.0.1, 2.0.0.2, unreachable, host, IDENTIFIER 7) -> c;
         Idle -> t :: ICMPIPEncap(1.0.0.1, 2.0.0.2, 13, IDENTIFIER 7) -> c;",
    );
    r.inject("e", 0, &[b"ab".to_vec()]);
    r.inject("u", 0, &[b"ab".to_vec(), b"ab".to_vec()]);
    r.inject("t", 0, &[Vec::new(), Vec::new(), Vec::new()]);
    let c = collected("c");
    // echo: identifier and sequence (the IP ID); checksums over each header
    assert_eq!(
        c[0].data,
        hex("4500001e00010000ff01b8db010000010200000208009695000700016162")
    );
    // unreachable/host: no identifier or sequence
    assert_eq!(
        c[2].data,
        hex("4500001e00020000ff01b8da010000010200000203019b9c000000006162")
    );
    // timestamp: a 20-byte ICMP header
    assert_eq!(
        c[5].data,
        hex("4500002800030000ff01b8cf01000001020000020d00f2f500070003000000000000000000000000")
    );
    assert_eq!(c[0].anno.dst_ip(), std::net::Ipv4Addr::new(2, 0, 0, 2));
    assert_eq!(c[0].network_header_offset, Some(0));
    assert_eq!(c[0].transport_header_offset, Some(20));
    assert_eq!(r.read("e.src"), "1.0.0.1");
    r.write("e.dst", "3.0.0.3").unwrap();
    assert_eq!(r.read("e.dst"), "3.0.0.3");
    assert!(
        config_error("Idle -> ICMPIPEncap(1.0.0.1, 2.0.0.2, 300) -> Idle;")
            .contains("invalid TYPE")
    );
    assert!(
        config_error("Idle -> ICMPIPEncap(1.0.0.1, 2.0.0.2, 3, bogus) -> Idle;")
            .contains("invalid CODE")
    );
}
