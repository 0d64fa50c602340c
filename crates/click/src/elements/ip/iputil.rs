//! Helpers shared by the IP elements: argument parsers with Click's
//! conventions and header checksum routines.

use crate::prelude::*;
use click_wire::checksum;
use core::net::Ipv4Addr;

/// Click's `NamedIntArg(NameInfo::T_IP_PROTO)` limited to 0..=255: a protocol
/// name (`tcp`, `udp`, `icmp`, ...) or a number.
pub(crate) fn parse_ip_proto(s: &str) -> Result<u8, String> {
    let s = s.trim();
    if let Some(v) = click_wire::names::ip_proto_by_name(s) {
        return u8::try_from(v).map_err(|_| String::from("bad IP protocol"));
    }
    let v = click_lang::args::parse_i64(s).map_err(|_| String::from("expected IP protocol"))?;
    u8::try_from(v).map_err(|_| String::from("bad IP protocol"))
}

/// Click's `IPPortArg`: a port number or a well-known service name.
/// A UDP port: a number, a PortInfo name or a well-known name.
pub(crate) fn parse_port(s: &str, cx: &click_lang::ArgContext) -> Result<u16, String> {
    cx.port(s.trim(), click_lang::names::IP_PROTO_UDP)
}

/// A destination that is an address or `DST_ANNO` (take it from the packet's
/// destination IP annotation). `None` means `DST_ANNO`.
pub(crate) fn parse_dst_or_anno(
    s: &str,
    cx: &click_lang::ArgContext,
) -> Result<Option<Ipv4Addr>, ()> {
    let s = s.trim();
    if s == "DST_ANNO" {
        Ok(None)
    } else {
        cx.ip(s).map(Some).map_err(|_| ())
    }
}

/// Recomputes the checksum of the IP header `h` (exactly the header bytes).
#[inline]
pub(crate) fn set_ip_checksum(h: &mut [u8]) {
    h[10] = 0;
    h[11] = 0;
    let c = checksum::ip_checksum(h);
    h[10..12].copy_from_slice(&c.to_be_bytes());
}

/// Source and destination addresses of an IP header (at least 20 bytes).
#[inline]
pub(crate) fn addrs(ip: &[u8]) -> (Ipv4Addr, Ipv4Addr) {
    (
        Ipv4Addr::new(ip[12], ip[13], ip[14], ip[15]),
        Ipv4Addr::new(ip[16], ip[17], ip[18], ip[19]),
    )
}

/// The checksum to store in a TCP or UDP header over `seg` (whose checksum
/// field must be zero), with the IPv4 pseudo-header for `proto` and length
/// `seg.len()`.
#[inline]
pub(crate) fn transport_checksum(ip: &[u8], proto: u8, seg: &[u8]) -> u16 {
    let (s, d) = addrs(ip);
    checksum::transport_checksum(s, d, proto, seg)
}

/// Whether a TCP or UDP segment `seg` (checksum field included) verifies.
#[inline]
pub(crate) fn transport_checksum_ok(ip: &[u8], proto: u8, seg: &[u8]) -> bool {
    transport_checksum(ip, proto, seg) == 0
}

/// `IP_FIRSTFRAG`: a zero fragment offset (an unfragmented packet or a
/// first fragment).
#[inline]
pub(crate) fn is_first_fragment(ip: &[u8]) -> bool {
    u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff == 0
}

/// `IP_ISFRAG`: MF set or a nonzero offset.
#[inline]
pub(crate) fn is_fragment(ip: &[u8]) -> bool {
    u16::from_be_bytes([ip[6], ip[7]]) & 0x3fff != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protos_and_ports() {
        assert_eq!(parse_ip_proto("udp"), Ok(17));
        assert_eq!(parse_ip_proto("4"), Ok(4));
        assert!(parse_ip_proto("256").is_err());
        assert!(parse_ip_proto("tcpudp").is_err());
        let cx = click_lang::ArgContext::none();
        assert_eq!(parse_port("dns", &cx), Ok(53));
        assert_eq!(parse_port("1234", &cx), Ok(1234));
        assert!(parse_port("70000", &cx).is_err());
        assert_eq!(parse_dst_or_anno("DST_ANNO", &cx), Ok(None));
        assert_eq!(
            parse_dst_or_anno("1.2.3.4", &cx),
            Ok(Some(Ipv4Addr::new(1, 2, 3, 4)))
        );
    }
}
