//! Helpers shared by the IP elements: argument parsers with Click's
//! conventions.

use crate::prelude::*;
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
