//! Name tables matching Click's `IPNameInfo` (elements/ip/ipnameinfo.cc),
//! used by Click's configuration syntax (`IPClassifier`, `ICMPError`, ...).
//!
//! Lookups by name are case-sensitive, like Click's `StaticNameDB`.

use crate::icmp::{icmp_code, icmp_type};
use crate::ipv4::ip_proto;

/// Click's pseudo protocol number matching TCP *or* UDP ("tcpudp").
pub const IP_PROTO_TCP_OR_UDP: u16 = 256;
/// Click's pseudo protocol number matching any transport protocol ("transp").
pub const IP_PROTO_TRANSP: u16 = 257;

/// IP protocol names (`NameInfo::T_IP_PROTO`), including Click's two pseudo
/// protocols above 255.
pub const IP_PROTOS: &[(&str, u16)] = &[
    ("icmp", ip_proto::ICMP as u16),
    ("igmp", ip_proto::IGMP as u16),
    ("ipip", ip_proto::IPIP as u16),
    ("tcp", ip_proto::TCP as u16),
    ("tcpudp", IP_PROTO_TCP_OR_UDP),
    ("transp", IP_PROTO_TRANSP),
    ("udp", ip_proto::UDP as u16),
];

/// ICMP type names (`NameInfo::T_ICMP_TYPE`).
pub const ICMP_TYPES: &[(&str, u8)] = &[
    ("echo", icmp_type::ECHO),
    ("echo-reply", icmp_type::ECHO_REPLY),
    ("inforeq", icmp_type::INFO_REQUEST),
    ("inforeq-reply", icmp_type::INFO_REPLY),
    ("maskreq", icmp_type::MASK_REQUEST),
    ("maskreq-reply", icmp_type::MASK_REPLY),
    ("parameterproblem", icmp_type::PARAM_PROBLEM),
    ("redirect", icmp_type::REDIRECT),
    ("routeradvert", icmp_type::ROUTER_ADVERT),
    ("routersolicit", icmp_type::ROUTER_SOLICIT),
    ("sourcequench", icmp_type::SOURCE_QUENCH),
    ("timeexceeded", icmp_type::TIME_EXCEEDED),
    ("timestamp", icmp_type::TIMESTAMP),
    ("timestamp-reply", icmp_type::TIMESTAMP_REPLY),
    ("unreachable", icmp_type::UNREACH),
];

/// Code names for ICMP unreachable.
pub const ICMP_UNREACH_CODES: &[(&str, u8)] = {
    use icmp_code::unreach::*;
    &[
        ("filterprohibited", FILTER_PROHIB),
        ("host", HOST),
        ("hostprecedence", HOST_PRECEDENCE),
        ("hostprohibited", HOST_PROHIB),
        ("hostunknown", HOST_UNKNOWN),
        ("isolated", ISOLATED),
        ("needfrag", NEEDFRAG),
        ("net", NET),
        ("netprohibited", NET_PROHIB),
        ("netunknown", NET_UNKNOWN),
        ("port", PORT),
        ("precedencecutoff", PRECEDENCE_CUTOFF),
        ("protocol", PROTOCOL),
        ("srcroutefail", SRCFAIL),
        ("toshost", TOSHOST),
        ("tosnet", TOSNET),
    ]
};

/// Code names for ICMP redirect.
pub const ICMP_REDIRECT_CODES: &[(&str, u8)] = {
    use icmp_code::redirect::*;
    &[
        ("host", HOST),
        ("net", NET),
        ("toshost", TOSHOST),
        ("tosnet", TOSNET),
    ]
};

/// Code names for ICMP time exceeded.
pub const ICMP_TIME_EXCEEDED_CODES: &[(&str, u8)] = {
    use icmp_code::time_exceeded::*;
    &[("reassembly", REASSEMBLY), ("transit", TRANSIT)]
};

/// Code names for ICMP parameter problem.
pub const ICMP_PARAM_PROBLEM_CODES: &[(&str, u8)] = {
    use icmp_code::param_problem::*;
    &[
        ("erroratptr", ERRATPTR),
        ("length", LENGTH),
        ("missingopt", OPTABSENT),
    ]
};

/// Well-known TCP/UDP port names Click knows without `/etc/services`
/// (`known_ports` in Click's IPNameInfo). The one table: the configuration
/// language (`click_lang::names`) reads it too.
pub const KNOWN_PORTS: &[(&str, u16)] = &[
    ("auth", 113),
    ("bootpc", 68),
    ("bootps", 67),
    ("chargen", 19),
    ("daytime", 13),
    ("discard", 9),
    ("dns", 53),
    ("domain", 53),
    ("echo", 7),
    ("finger", 79),
    ("ftp", 21),
    ("ftp-data", 20),
    ("http", 80),
    ("https", 443),
    ("imap3", 220),
    ("imaps", 993),
    ("irc", 194),
    ("netbios-dgm", 138),
    ("netbios-ns", 137),
    ("netbios-ssn", 139),
    ("nntp", 119),
    ("ntp", 123),
    ("pop3", 110),
    ("pop3s", 995),
    ("rip", 520),
    ("route", 520),
    ("smtp", 25),
    ("snmp", 161),
    ("snmp-trap", 162),
    ("ssh", 22),
    ("sunrpc", 111),
    ("telnet", 23),
    ("tftp", 69),
    ("www", 80),
];

fn by_name<V: Copy>(table: &[(&str, V)], name: &str) -> Option<V> {
    table.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
}

fn by_value<V: Copy + PartialEq>(
    table: &'static [(&'static str, V)],
    v: V,
) -> Option<&'static str> {
    table.iter().find(|&&(_, x)| x == v).map(|&(n, _)| n)
}

/// IP protocol number (or Click pseudo-protocol) for a name.
pub fn ip_proto_by_name(name: &str) -> Option<u16> {
    by_name(IP_PROTOS, name)
}

/// Name of an IP protocol number, if Click has one.
pub fn ip_proto_name(proto: u16) -> Option<&'static str> {
    by_value(IP_PROTOS, proto)
}

/// ICMP type for a Click name (`"echo"`, `"echo-reply"`, `"unreachable"`, ...).
pub fn icmp_type_by_name(name: &str) -> Option<u8> {
    by_name(ICMP_TYPES, name)
}

/// Click's name for an ICMP type.
pub fn icmp_type_name(ty: u8) -> Option<&'static str> {
    by_value(ICMP_TYPES, ty)
}

/// The code-name table for an ICMP type (empty for types without named codes).
pub fn icmp_code_table(ty: u8) -> &'static [(&'static str, u8)] {
    match ty {
        icmp_type::UNREACH => ICMP_UNREACH_CODES,
        icmp_type::REDIRECT => ICMP_REDIRECT_CODES,
        icmp_type::TIME_EXCEEDED => ICMP_TIME_EXCEEDED_CODES,
        icmp_type::PARAM_PROBLEM => ICMP_PARAM_PROBLEM_CODES,
        _ => &[],
    }
}

/// ICMP code for a name, within the given type.
pub fn icmp_code_by_name(ty: u8, name: &str) -> Option<u8> {
    by_name(icmp_code_table(ty), name)
}

/// Click's name for an ICMP code of the given type.
pub fn icmp_code_name(ty: u8, code: u8) -> Option<&'static str> {
    by_value(icmp_code_table(ty), code)
}

/// Port number for a well-known name (same table for TCP and UDP).
pub fn port_by_name(name: &str) -> Option<u16> {
    by_name(KNOWN_PORTS, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups() {
        assert_eq!(icmp_type_by_name("echo"), Some(8));
        assert_eq!(icmp_type_by_name("echo-reply"), Some(0));
        assert_eq!(icmp_type_by_name("timestamp-reply"), Some(14));
        assert_eq!(icmp_type_by_name("Echo"), None);
        assert_eq!(icmp_type_name(3), Some("unreachable"));
        assert_eq!(icmp_type_name(11), Some("timeexceeded"));
        assert_eq!(icmp_type_name(99), None);
        assert_eq!(icmp_code_by_name(icmp_type::UNREACH, "needfrag"), Some(4));
        assert_eq!(icmp_code_by_name(icmp_type::REDIRECT, "host"), Some(1));
        assert_eq!(
            icmp_code_by_name(icmp_type::TIME_EXCEEDED, "transit"),
            Some(0)
        );
        assert_eq!(
            icmp_code_by_name(icmp_type::PARAM_PROBLEM, "missingopt"),
            Some(1)
        );
        assert_eq!(icmp_code_by_name(icmp_type::ECHO, "host"), None);
        assert_eq!(
            icmp_code_name(icmp_type::UNREACH, 13),
            Some("filterprohibited")
        );
        assert_eq!(icmp_code_name(icmp_type::UNREACH, 16), None);
        assert_eq!(ip_proto_by_name("tcpudp"), Some(256));
        assert_eq!(ip_proto_by_name("udp"), Some(17));
        assert_eq!(ip_proto_name(1), Some("icmp"));
        assert_eq!(ip_proto_name(99), None);
        assert_eq!(port_by_name("www"), Some(80));
        assert_eq!(port_by_name("route"), Some(520));
        assert_eq!(port_by_name("gopher"), None);
    }

    #[test]
    fn known_ports_are_the_union_of_both_old_tables() {
        // The table the configuration language had (Click's `known_ports`)
        // and the one this crate had (which lacked "http"), merged.
        let union: &[(&str, u16)] = &[
            ("auth", 113),
            ("bootpc", 68),
            ("bootps", 67),
            ("chargen", 19),
            ("daytime", 13),
            ("discard", 9),
            ("dns", 53),
            ("domain", 53),
            ("echo", 7),
            ("finger", 79),
            ("ftp", 21),
            ("ftp-data", 20),
            ("http", 80),
            ("https", 443),
            ("imap3", 220),
            ("imaps", 993),
            ("irc", 194),
            ("netbios-dgm", 138),
            ("netbios-ns", 137),
            ("netbios-ssn", 139),
            ("nntp", 119),
            ("ntp", 123),
            ("pop3", 110),
            ("pop3s", 995),
            ("rip", 520),
            ("route", 520),
            ("smtp", 25),
            ("snmp", 161),
            ("snmp-trap", 162),
            ("ssh", 22),
            ("sunrpc", 111),
            ("telnet", 23),
            ("tftp", 69),
            ("www", 80),
        ];
        assert_eq!(KNOWN_PORTS, union);
        assert_eq!(port_by_name("http"), Some(80));
        assert_eq!(port_by_name("www"), port_by_name("http"));
    }

    #[test]
    fn tables_are_consistent() {
        // Every type 0..=18 that has a constant has exactly one name.
        for &(n, t) in ICMP_TYPES {
            assert_eq!(icmp_type_by_name(n), Some(t));
            assert_eq!(icmp_type_name(t), Some(n));
        }
        // Unreachable codes cover 0..=15 exactly once.
        let mut seen = [false; 16];
        for &(_, c) in ICMP_UNREACH_CODES {
            assert!(!seen[c as usize]);
            seen[c as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        // Tables are sorted by name (as in Click, whose StaticNameDB
        // binary-searches them).
        for t in [
            ICMP_TYPES,
            ICMP_UNREACH_CODES,
            ICMP_REDIRECT_CODES,
            ICMP_TIME_EXCEEDED_CODES,
            ICMP_PARAM_PROBLEM_CODES,
        ] {
            assert!(t.windows(2).all(|w| w[0].0 < w[1].0));
        }
        assert!(KNOWN_PORTS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(IP_PROTOS.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
