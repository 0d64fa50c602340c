//! Names for addresses and ports: Click's `NameInfo` database, which the
//! `AddressInfo` and `PortInfo` elements fill and every argument parser
//! for IP addresses, prefixes, Ethernet addresses and ports consults.
//!
//! A [`NameTable`] maps names to values of several kinds (IPv4 address,
//! IPv4 prefix, Ethernet address, IPv6 address and prefix, TCP/UDP/... port).
//! Names are scoped like Click's: a name defined by an element inside a
//! compound (`c/info`) lives in the compound's scope (`c/`) and is seen by
//! the elements in that compound and in compounds nested in it; a lookup
//! from element `c/d/x` tries scope `c/d/`, then `c/`, then the top level.
//!
//! An [`ArgContext`] pairs a table with the element whose argument is being
//! parsed; its parsers ([`ArgContext::ip`], [`ArgContext::prefix`],
//! [`ArgContext::ether`], [`ArgContext::port`]) accept literal values and
//! names with Click's type suffixes: `NAME` or `NAME:ip` (an IPv4 address),
//! `NAME:ipnet`/`NAME:net` (a prefix), `NAME:bcast` (the prefix's broadcast
//! address), `NAME:gw` (the prefix's first host, `.1`, unless `NAME:gw` is
//! itself defined), `NAME:eth`/`NAME:ether` (an Ethernet address).
//!
//! The table is plain data: a router builds it from the whole configuration
//! before configuring any element, and routers that run parts of one
//! configuration on different threads each get a copy.

use crate::args::{parse_ether, parse_ip_parts, parse_ipv4, split_words};
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::net::{Ipv4Addr, Ipv6Addr};

/// IP protocol numbers for [`NameTable::define_port`] and
/// [`ArgContext::port`].
pub const IP_PROTO_TCP: u8 = 6;
pub const IP_PROTO_UDP: u8 = 17;

/// The kind of value a name stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NameKind {
    Ip,
    IpPrefix,
    Ether,
    Ip6,
    Ip6Prefix,
    /// A port of the given IP protocol.
    Port(u8),
}

/// A named value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameValue {
    Ip(Ipv4Addr),
    /// Address (not masked: `1.0.0.1/8` keeps its host bits) and mask.
    IpPrefix(Ipv4Addr, Ipv4Addr),
    Ether([u8; 6]),
    Ip6(Ipv6Addr),
    Ip6Prefix(Ipv6Addr, u8),
    Port(u16),
}

/// A well-known port name (the same for TCP and UDP): Click's
/// `known_ports`, valid everywhere. The table is `click_wire`'s
/// [`KNOWN_PORTS`](click_wire::names::KNOWN_PORTS), shared with the elements.
pub fn known_port(name: &str) -> Option<u16> {
    click_wire::names::port_by_name(name)
}

/// IP protocol names (Click's IPNameInfo `ip_protos`, plus the few more
/// Click's IPFilter knows).
pub fn ip_proto_name(name: &str) -> Option<u8> {
    Some(match name {
        "icmp" => 1,
        "igmp" => 2,
        "ipip" => 4,
        "tcp" => 6,
        "udp" => 17,
        "dccp" => 33,
        "gre" => 47,
        "esp" => 50,
        "ah" => 51,
        "sctp" => 132,
        _ => return None,
    })
}

/// The scope an element's names live in: its name up to and including
/// the last slash (`""` at the top level).
pub fn scope_of(element: &str) -> &str {
    match element.rfind('/') {
        Some(i) => &element[..=i],
        None => "",
    }
}

/// Names for addresses and ports, with compound scopes (Click's NameInfo).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameTable {
    /// (kind, scope + name) -> value
    map: BTreeMap<(NameKind, String), NameValue>,
}

impl NameTable {
    pub fn new() -> NameTable {
        NameTable::default()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Number of (kind, name) definitions.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Defines `name` in the scope of `element` (Click's
    /// `NameInfo::define`); a later definition of the same name and kind
    /// replaces an earlier one.
    pub fn define(&mut self, element: &str, name: &str, value: NameValue) {
        let kind = match value {
            NameValue::Ip(_) => NameKind::Ip,
            NameValue::IpPrefix(..) => NameKind::IpPrefix,
            NameValue::Ether(_) => NameKind::Ether,
            NameValue::Ip6(_) => NameKind::Ip6,
            NameValue::Ip6Prefix(..) => NameKind::Ip6Prefix,
            NameValue::Port(_) => return,
        };
        self.map
            .insert((kind, format!("{}{}", scope_of(element), name)), value);
    }

    /// Defines a port name for IP protocol `proto` in `element`'s scope.
    pub fn define_port(&mut self, element: &str, name: &str, proto: u8, port: u16) {
        self.map.insert(
            (
                NameKind::Port(proto),
                format!("{}{}", scope_of(element), name),
            ),
            NameValue::Port(port),
        );
    }

    /// Looks `name` up as seen from `element`: its own scope first, then
    /// the enclosing ones, out to the top level (Click's
    /// `NameInfo::query`).
    pub fn query(&self, kind: NameKind, element: &str, name: &str) -> Option<NameValue> {
        let mut scope = scope_of(element);
        loop {
            if let Some(v) = self.map.get(&(kind, format!("{scope}{name}"))) {
                return Some(*v);
            }
            if scope.is_empty() {
                return None;
            }
            scope = scope_of(&scope[..scope.len() - 1]);
        }
    }

    /// Every definition as (kind, scoped name, value), in name order.
    pub fn iter(&self) -> impl Iterator<Item = (NameKind, &str, NameValue)> {
        self.map.iter().map(|((k, n), v)| (*k, n.as_str(), *v))
    }

    /// Click's AddressInfo configuration: each argument is `NAME ADDRESS
    /// [ADDRESS...]`, and each address an IPv4 address, an IPv4 prefix
    /// (`1.0.0.1/8` also defines the address `1.0.0.1`, since it has host
    /// bits), an Ethernet address, or an IPv6 address or prefix. Defines
    /// what it can, in order, in `element`'s scope, and returns the errors
    /// (Click's wording) for the arguments it could not use.
    pub fn define_addresses(&mut self, element: &str, args: &[String]) -> Vec<String> {
        let mut errors = Vec::new();
        for arg in args {
            let parts = split_words(arg);
            if parts.is_empty() {
                continue; // empty arguments are allowed
            }
            if parts.len() < 2 {
                errors.push("expected 'NAME [ADDRS]'".to_string());
                continue;
            }
            let name = &parts[0];
            let mut types: u32 = 0;
            for part in &parts[1..] {
                const ETH: u32 = 1;
                const IP4: u32 = 2;
                const IP4NET: u32 = 4;
                const IP6: u32 = 8;
                const IP6NET: u32 = 16;
                let mut mine = 0;
                let mut vals: Vec<NameValue> = Vec::new();
                let cx = ArgContext::new(self, element);
                if let Ok(e) = cx.ether(part) {
                    mine |= ETH;
                    vals.push(NameValue::Ether(e));
                }
                if let Ok(a) = cx.ip(part) {
                    mine |= IP4;
                    vals.push(NameValue::Ip(a));
                } else if let Ok((a, m)) = cx.prefix(part, false) {
                    mine |= IP4NET;
                    vals.push(NameValue::IpPrefix(a, m));
                    if u32::from(a) & !u32::from(m) != 0 {
                        mine |= IP4;
                        vals.push(NameValue::Ip(a));
                    }
                }
                if let Some(a) = parse_ip6(part) {
                    mine |= IP6;
                    vals.push(NameValue::Ip6(a));
                } else if let Some((a, len)) = parse_ip6_prefix(part) {
                    mine |= IP6NET;
                    vals.push(NameValue::Ip6Prefix(a, len));
                    if len < 128 && (u128::from(a) & (u128::MAX >> len)) != 0 {
                        mine |= IP6;
                        vals.push(NameValue::Ip6(a));
                    }
                }
                if mine == 0 {
                    errors.push(format!("'{part}' is not a recognizable address"));
                    continue;
                }
                // A word that reads as several kinds (an IPv6 address that
                // is also an Ethernet address, say) defines each kind only
                // if no other word of this argument did.
                let one_type = mine & (mine - 1) == 0;
                for v in vals {
                    let bit = match v {
                        NameValue::Ether(_) => ETH,
                        NameValue::Ip(_) => IP4,
                        NameValue::IpPrefix(..) => IP4NET,
                        NameValue::Ip6(_) => IP6,
                        NameValue::Ip6Prefix(..) => IP6NET,
                        NameValue::Port(_) => 0,
                    };
                    if one_type || types & bit == 0 {
                        self.define(element, name, v);
                    }
                }
                types |= mine;
            }
        }
        errors
    }

    /// Click's PortInfo configuration: each argument is `NAME PORT[/PROTO]
    /// [NAME...]` (PROTO `tcp`, `udp` or another IP protocol name or
    /// number; both TCP and UDP without it); words after the port are more
    /// names for it, up to a word starting with `#`. Arguments starting
    /// with `#` are comments. Returns the errors.
    pub fn define_ports(&mut self, element: &str, args: &[String]) -> Vec<String> {
        let mut errors = Vec::new();
        for arg in args {
            let words = split_words(arg);
            let Some(first) = words.first() else {
                continue;
            };
            if first.starts_with('#') {
                continue;
            }
            let port_str = words.get(1).map(String::as_str).unwrap_or("");
            let (num, proto) = match port_str.split_once('/') {
                Some((n, p)) => (n, Some(p)),
                None => (port_str, None),
            };
            let Ok(port) = crate::args::parse_u64(num) else {
                errors.push("expected 'NAME PORT/PROTO'".to_string());
                continue;
            };
            if num.starts_with(['+', '-']) {
                errors.push("expected 'NAME PORT/PROTO'".to_string());
                continue;
            }
            let protos: Vec<u8> = match proto {
                None => alloc::vec![IP_PROTO_TCP, IP_PROTO_UDP],
                Some("tcp") => alloc::vec![IP_PROTO_TCP],
                Some("udp") => alloc::vec![IP_PROTO_UDP],
                Some(p) => match ip_proto_name(p).or_else(|| {
                    crate::args::parse_u64(p)
                        .ok()
                        .and_then(|v| u8::try_from(v).ok())
                }) {
                    Some(n) => alloc::vec![n],
                    // Click silently ignores an unknown protocol
                    None => continue,
                },
            };
            let port = port as u16;
            let mut names = alloc::vec![first.clone()];
            names.extend(
                words[2..]
                    .iter()
                    .take_while(|w| !w.starts_with('#'))
                    .cloned(),
            );
            for n in &names {
                for &p in &protos {
                    self.define_port(element, n, p, port);
                }
            }
        }
        errors
    }
}

fn parse_ip6(s: &str) -> Option<Ipv6Addr> {
    if !s.contains(':') {
        return None;
    }
    s.parse().ok()
}

fn parse_ip6_prefix(s: &str) -> Option<(Ipv6Addr, u8)> {
    let (a, l) = s.split_once('/')?;
    let a = parse_ip6(a)?;
    if l.is_empty() || l.len() > 3 || !l.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let len: u8 = l.parse().ok()?;
    (len <= 128).then_some((a, len))
}

/// What an argument parser knows about where the argument came from: the
/// name table and the element whose configuration (or handler) it is
/// parsing (Click's `ArgContext`). [`ArgContext::none`] knows no names.
#[derive(Clone, Copy, Debug)]
pub struct ArgContext<'a> {
    names: Option<&'a NameTable>,
    element: &'a str,
}

impl Default for ArgContext<'_> {
    fn default() -> Self {
        ArgContext::none()
    }
}

/// Splits `NAME:suffix` at the last colon, lower-casing the suffix.
fn split_suffix(s: &str) -> (&str, Option<String>) {
    match s.rfind(':') {
        Some(i) => (&s[..i], Some(s[i..].to_ascii_lowercase())),
        None => (s, None),
    }
}

impl<'a> ArgContext<'a> {
    /// A context without names: only literal values parse.
    pub const fn none() -> ArgContext<'static> {
        ArgContext {
            names: None,
            element: "",
        }
    }

    /// Names from `names`, as seen by the element called `element`.
    pub fn new(names: &'a NameTable, element: &'a str) -> ArgContext<'a> {
        ArgContext {
            names: Some(names),
            element,
        }
    }

    /// The element this context parses for (`""` if none).
    pub fn element(&self) -> &'a str {
        self.element
    }

    /// The name table, if any.
    pub fn names(&self) -> Option<&'a NameTable> {
        self.names
    }

    fn query(&self, kind: NameKind, name: &str) -> Option<NameValue> {
        self.names?.query(kind, self.element, name)
    }

    fn query_prefix_name(&self, name: &str) -> Option<(Ipv4Addr, Ipv4Addr)> {
        match self.query(NameKind::IpPrefix, name)? {
            NameValue::IpPrefix(a, m) => Some((a, m)),
            _ => None,
        }
    }

    /// Click's `AddressInfo::query_ip`: `NAME`, `NAME:ip`, `NAME:ip4`,
    /// `NAME:bcast`, `NAME:gw`.
    fn query_ip(&self, s: &str) -> Option<Ipv4Addr> {
        let (name, suffix) = split_suffix(s);
        match suffix.as_deref() {
            None | Some(":ip") | Some(":ip4") => match self.query(NameKind::Ip, name)? {
                NameValue::Ip(a) => Some(a),
                _ => None,
            },
            Some(":bcast") => {
                let (a, m) = self.query_prefix_name(name)?;
                Some(Ipv4Addr::from(u32::from(a) | !u32::from(m)))
            }
            Some(":gw") => {
                if let Some(NameValue::Ip(a)) = self.query(NameKind::Ip, s) {
                    return Some(a);
                }
                let (a, m) = self.query_prefix_name(name)?;
                Some(Ipv4Addr::from((u32::from(a) & u32::from(m)) | 1))
            }
            Some(_) => None,
        }
    }

    /// Click's `AddressInfo::query_ip_prefix`: `NAME`, `NAME:net`,
    /// `NAME:ipnet`, `NAME:ip4net`.
    fn query_ip_prefix(&self, s: &str) -> Option<(Ipv4Addr, Ipv4Addr)> {
        let (name, suffix) = split_suffix(s);
        match suffix.as_deref() {
            None => self.query_prefix_name(s),
            Some(":net" | ":ipnet" | ":ip4net") => self.query_prefix_name(name),
            Some(_) => None,
        }
    }

    /// Click's IPAddressArg: a dotted quad or a name for an address.
    pub fn ip(&self, s: &str) -> Result<Ipv4Addr, String> {
        if let Ok(a) = parse_ipv4(s) {
            return Ok(a);
        }
        self.query_ip(s)
            .ok_or_else(|| String::from("expected IP address"))
    }

    /// Click's IPPrefixArg: `ADDR/LEN` or `ADDR/MASK` (ADDR may be a name
    /// for an address, and abbreviated when literal: `10/8`), or a name for
    /// a prefix. With `allow_bare` (Click's `IPPrefixArg(true)`) an address
    /// alone means the /32 prefix, and a name that is both an address and a
    /// prefix means the address. Without it, literal bare addresses are
    /// still accepted as /32 (this engine has always taken them). Returns
    /// (address, mask); the address is not masked.
    pub fn prefix(&self, s: &str, allow_bare: bool) -> Result<(Ipv4Addr, Ipv4Addr), String> {
        let err = || String::from("expected IP address prefix");
        if let Some(slash) = s.rfind('/') {
            if slash > 0 && slash + 1 < s.len() {
                if let Some(r) = self.prefix_with_slash(&s[..slash], &s[slash + 1..]) {
                    return Ok(r);
                }
            }
        }
        if let Ok(a) = parse_ipv4(s) {
            return Ok((a, Ipv4Addr::BROADCAST));
        }
        if allow_bare {
            if let Some(a) = self.query_ip(s) {
                return Ok((a, Ipv4Addr::BROADCAST));
            }
        }
        self.query_ip_prefix(s).ok_or_else(err)
    }

    fn prefix_with_slash(&self, addr: &str, mask: &str) -> Option<(Ipv4Addr, Ipv4Addr)> {
        let (a, nbytes) = match parse_ip_parts(addr, true) {
            Some((o, n)) => (Ipv4Addr::from(o), n),
            None => (self.query_ip(addr)?, 4),
        };
        let m = if !mask.is_empty() && mask.len() <= 2 && mask.bytes().all(|c| c.is_ascii_digit()) {
            let len: u32 = mask.parse().ok()?;
            if len > 32 {
                return None;
            }
            Ipv4Addr::from(if len == 0 { 0 } else { u32::MAX << (32 - len) })
        } else {
            self.ip(mask).ok()?
        };
        // a mask longer than the bytes given (`10/16`) is an error
        if nbytes < 4 {
            let defined = if nbytes == 0 {
                0
            } else {
                u32::MAX << (32 - 8 * nbytes as u32)
            };
            if u32::from(m) & defined != u32::from(m) {
                return None;
            }
        }
        Some((a, m))
    }

    /// Click's EtherAddressArg: `xx:xx:xx:xx:xx:xx` (or with `-`), or a
    /// name for an Ethernet address (`NAME`, `NAME:eth`, `NAME:ether`,
    /// `NAME:ethernet`).
    pub fn ether(&self, s: &str) -> Result<[u8; 6], String> {
        if let Ok(e) = parse_ether(s) {
            return Ok(e);
        }
        let err = || String::from("expected Ethernet address");
        let (name, suffix) = split_suffix(s);
        let name = match suffix.as_deref() {
            None => s,
            Some(":eth" | ":ether" | ":ethernet") => name,
            Some(_) => return Err(err()),
        };
        match self.query(NameKind::Ether, name) {
            Some(NameValue::Ether(e)) => Ok(e),
            _ => Err(err()),
        }
    }

    /// Click's IPPortArg for IP protocol `proto`: a number (0-65535), a
    /// PortInfo name, or a well-known name (`www`, `ssh`, `domain`, ...).
    pub fn port(&self, s: &str, proto: u8) -> Result<u16, String> {
        if let Some(NameValue::Port(p)) = self.query(NameKind::Port(proto), s) {
            return Ok(p);
        }
        if proto == IP_PROTO_TCP || proto == IP_PROTO_UDP {
            if let Some(p) = known_port(s) {
                return Ok(p);
            }
        }
        match crate::args::parse_u64(s) {
            Ok(v) if v <= 0xFFFF => Ok(v as u16),
            Ok(_) => Err("overflow, range 0-65535".into()),
            Err(_) => Err("expected port number".into()),
        }
    }

    /// A port name only (PortInfo or well-known), no numbers: what
    /// IPFilter's word lookup uses.
    pub fn port_name(&self, s: &str, proto: u8) -> Option<u16> {
        if let Some(NameValue::Port(p)) = self.query(NameKind::Port(proto), s) {
            return Some(p);
        }
        if proto == IP_PROTO_TCP || proto == IP_PROTO_UDP {
            return known_port(s);
        }
        None
    }

    /// A list of IPv4 addresses separated by spaces (Click's
    /// `IPAddressArg` into a vector).
    pub fn ip_list(&self, s: &str) -> Result<Vec<Ipv4Addr>, String> {
        split_words(s).iter().map(|w| self.ip(w)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn table() -> NameTable {
        let mut t = NameTable::new();
        let errs = t.define_addresses(
            "AddressInfo@1",
            &[
                "eth0 1.0.0.1 1.0.0.0/8 00:00:c0:ae:67:ef".into(),
                "eth1 2.0.0.1/8 00:00:c0:4f:71:ef".into(),
                "net3 3.0.0.0/8".into(),
                "".into(),
            ],
        );
        assert!(errs.is_empty(), "{errs:?}");
        t
    }

    #[test]
    fn known_ports_come_from_the_wire_table() {
        assert_eq!(known_port("http"), Some(80));
        assert_eq!(known_port("www"), Some(80));
        assert_eq!(known_port("ssh"), Some(22));
        assert_eq!(known_port("gopher"), None);
        for &(n, p) in click_wire::names::KNOWN_PORTS {
            assert_eq!(known_port(n), Some(p));
        }
    }

    #[test]
    fn addresses_and_suffixes() {
        let t = table();
        let cx = ArgContext::new(&t, "x");
        assert_eq!(cx.ip("eth0"), Ok(Ipv4Addr::new(1, 0, 0, 1)));
        assert_eq!(cx.ip("eth0:ip"), Ok(Ipv4Addr::new(1, 0, 0, 1)));
        assert_eq!(cx.ip("eth0:IP"), Ok(Ipv4Addr::new(1, 0, 0, 1)));
        assert_eq!(cx.ip("eth1"), Ok(Ipv4Addr::new(2, 0, 0, 1)));
        assert_eq!(cx.ip("eth0:bcast"), Ok(Ipv4Addr::new(1, 255, 255, 255)));
        assert_eq!(cx.ip("eth0:gw"), Ok(Ipv4Addr::new(1, 0, 0, 1)));
        assert!(cx.ip("net3").is_err());
        assert!(cx.ip("eth0:eth").is_err());
        assert!(cx.ip("nosuch").is_err());
        assert_eq!(
            cx.prefix("eth0:ipnet", false),
            Ok((Ipv4Addr::new(1, 0, 0, 0), Ipv4Addr::new(255, 0, 0, 0)))
        );
        assert_eq!(
            cx.prefix("eth1:net", false),
            Ok((Ipv4Addr::new(2, 0, 0, 1), Ipv4Addr::new(255, 0, 0, 0)))
        );
        // a name that is an address and a prefix: the prefix, or with
        // allow_bare the address
        assert_eq!(
            cx.prefix("eth0", false),
            Ok((Ipv4Addr::new(1, 0, 0, 0), Ipv4Addr::new(255, 0, 0, 0)))
        );
        assert_eq!(
            cx.prefix("eth0", true),
            Ok((Ipv4Addr::new(1, 0, 0, 1), Ipv4Addr::BROADCAST))
        );
        assert_eq!(
            cx.prefix("eth0/24", true),
            Ok((Ipv4Addr::new(1, 0, 0, 1), Ipv4Addr::new(255, 255, 255, 0)))
        );
        assert_eq!(
            cx.prefix("eth0:bcast/32", true),
            Ok((Ipv4Addr::new(1, 255, 255, 255), Ipv4Addr::BROADCAST))
        );
        assert_eq!(cx.ether("eth0"), Ok([0, 0, 0xc0, 0xae, 0x67, 0xef]));
        assert_eq!(cx.ether("eth1:eth"), Ok([0, 0, 0xc0, 0x4f, 0x71, 0xef]));
        assert!(cx.ether("eth1:ip").is_err());
        assert!(cx.ether("net3").is_err());
        // literals still work, with or without names
        assert_eq!(
            ArgContext::none().ip("10.0.0.1"),
            Ok(Ipv4Addr::new(10, 0, 0, 1))
        );
        assert!(ArgContext::none().ip("eth0").is_err());
    }

    #[test]
    fn scopes() {
        let mut t = table();
        t.define_addresses("c/ai", &["eth0 9.9.9.9".into(), "inner 8.8.8.8".into()]);
        let top = ArgContext::new(&t, "x");
        let inner = ArgContext::new(&t, "c/x");
        let deeper = ArgContext::new(&t, "c/d/x");
        let other = ArgContext::new(&t, "e/x");
        assert_eq!(top.ip("eth0"), Ok(Ipv4Addr::new(1, 0, 0, 1)));
        assert_eq!(inner.ip("eth0"), Ok(Ipv4Addr::new(9, 9, 9, 9)));
        assert_eq!(deeper.ip("eth0"), Ok(Ipv4Addr::new(9, 9, 9, 9)));
        assert_eq!(other.ip("eth0"), Ok(Ipv4Addr::new(1, 0, 0, 1)));
        assert!(top.ip("inner").is_err());
        assert_eq!(deeper.ip("inner"), Ok(Ipv4Addr::new(8, 8, 8, 8)));
        // an outer scope's kinds still show through an inner name of
        // another kind
        assert_eq!(inner.ether("eth0"), Ok([0, 0, 0xc0, 0xae, 0x67, 0xef]));
    }

    #[test]
    fn address_errors() {
        let mut t = NameTable::new();
        let e = t.define_addresses("a", &["x".into(), "y 1.2.3.4 bogus".into()]);
        assert_eq!(
            e,
            vec![
                String::from("expected 'NAME [ADDRS]'"),
                String::from("'bogus' is not a recognizable address")
            ]
        );
        assert_eq!(
            ArgContext::new(&t, "b").ip("y"),
            Ok(Ipv4Addr::new(1, 2, 3, 4))
        );
        // IPv6 is accepted (and stored)
        let e = t.define_addresses("a", &["v6 fe80::1 2001:db8::/32".into()]);
        assert!(e.is_empty(), "{e:?}");
    }

    #[test]
    fn ports() {
        let mut t = NameTable::new();
        let e = t.define_ports(
            "p",
            &[
                "myport 1234 alias # comment".into(),
                "tport 99/tcp".into(),
                "# a comment".into(),
                "bad x".into(),
            ],
        );
        assert_eq!(e, vec![String::from("expected 'NAME PORT/PROTO'")]);
        let cx = ArgContext::new(&t, "u");
        assert_eq!(cx.port("myport", IP_PROTO_UDP), Ok(1234));
        assert_eq!(cx.port("alias", IP_PROTO_TCP), Ok(1234));
        assert_eq!(cx.port("tport", IP_PROTO_TCP), Ok(99));
        assert!(cx.port("tport", IP_PROTO_UDP).is_err());
        assert!(cx.port("comment", IP_PROTO_UDP).is_err());
        assert_eq!(cx.port("www", IP_PROTO_TCP), Ok(80));
        assert_eq!(cx.port("53", IP_PROTO_UDP), Ok(53));
        assert!(cx.port("65536", IP_PROTO_UDP).is_err());
    }
}
