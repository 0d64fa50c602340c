//! Packets the engine panicked on before the elements read headers through
//! `click_wire` views (found by running every converted element over
//! random and broken packets with the old and the new code): each is now
//! handled the way the element handles any other packet, and counted.

#[path = "ip_harness.rs"]
mod ip_harness;
use ip_harness::*;

/// A UDP/IPv4 packet (20-byte header, 8-byte UDP header, 4 bytes of data)
/// with valid checksums, its IHL then set to `ihl`.
fn udp_with_ihl(ihl: u8) -> Vec<u8> {
    let mut d = vec![
        0x45, 0, 0, 32, 0, 1, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, // IP
        0x04, 0xd2, 0x16, 0x2e, 0, 12, 0, 0, // UDP
        1, 2, 3, 4,
    ];
    let c = click::wire::checksum::ip_checksum(&d[..20]);
    d[10..12].copy_from_slice(&c.to_be_bytes());
    d[0] = 0x40 | ihl;
    d
}

/// A TCP/IPv4 packet (no options, no data).
fn tcp_with_ihl(ihl: u8) -> Vec<u8> {
    let mut d = vec![
        0x45, 0, 0, 40, 0, 1, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, // IP
        0, 80, 4, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0x20, 0, 0, 0, 0, 0, // TCP
    ];
    d[0] = 0x40 | ihl;
    d
}

#[test]
fn checksum_setters_take_a_transport_annotation_inside_the_ip_header() {
    // MarkIPHeader puts the transport header IHL*4 bytes in: 16 (IHL 4) or
    // 0 (IHL 0) bytes, inside the 20-byte IP header. SetUDPChecksum and
    // SetTCPChecksum indexed the addresses in the bytes before it and
    // panicked; like Click they now trust the annotation.
    for ihl in [0, 1, 4] {
        let pkts = vec![udp_with_ihl(ihl), tcp_with_ihl(ihl)];
        let r = run_with(
            "src :: BatchSrc -> MarkIPHeader -> u :: SetUDPChecksum -> ok :: Collect;
             u[1] -> bad :: Collect;",
            &pkts,
            1,
        );
        assert_eq!(data("ok").len() + data("bad").len(), 2, "IHL {ihl}");
        drop(r);
        let r = run_with(
            "src :: BatchSrc -> MarkIPHeader -> SetTCPChecksum(true) -> ok :: Collect;",
            &pkts,
            1,
        );
        // A bad packet is dropped with a message, not a panic.
        let dropped = r.stderr().matches("SetTCPChecksum: bad lengths").count();
        assert_eq!(data("ok").len() + dropped, 2, "IHL {ihl}");
    }
}

#[test]
fn checksum_setters_still_fix_well_formed_packets() {
    let _r = run_with(
        "src :: BatchSrc -> MarkIPHeader -> c :: Classifier(9/11, -);
         c[0] -> SetUDPChecksum -> ok :: Collect; c[1] -> SetTCPChecksum -> ok;",
        &[udp_with_ihl(5), tcp_with_ihl(5)],
        1,
    );
    let out = data("ok");
    assert_eq!(out.len(), 2);
    let pseudo = |d: &[u8], proto: u8| {
        let mut ph = d[12..20].to_vec();
        ph.extend_from_slice(&[0, proto, 0, (d.len() - 20) as u8]);
        ph.extend_from_slice(&d[20..]);
        ph
    };
    assert!(csum_ok(&pseudo(&out[0], 17)), "UDP checksum verifies");
    assert!(csum_ok(&pseudo(&out[1], 6)), "TCP checksum verifies");
}

#[test]
fn ensure_ether_drops_a_header_annotation_past_a_short_packet() {
    // MarkIPHeader(14) on a 9-byte packet: the annotation is past its end.
    // EnsureEther read the Ethernet type from the 9 bytes and panicked; it
    // now drops the packet and counts it.
    let pkts = vec![vec![0u8; 9], vec![0u8; 13]];
    let r = run_with(
        "src :: BatchSrc -> MarkIPHeader(14) -> e :: EnsureEther -> ok :: Collect;",
        &pkts,
        1,
    );
    assert_eq!(data("ok").len(), 0);
    assert_eq!(r.read("e.drops"), "2");
}
