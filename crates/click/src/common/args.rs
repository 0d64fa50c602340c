//! Arguments several element families read, with Click's conventions:
//! sources' DATA and LENGTH, DELAY, IP protocols, ports, `DST_ANNO`,
//! annotation names, and the configuration rewrite behind
//! `reconfigure_keyword_handler`.

use crate::packet::ANNO_SIZE;
use crate::prelude::*;
use alloc::format;
use click_lang::args::{self, join_args, split_args};
use core::net::Ipv4Addr;

/// The data Click's sources put in packets by default (69 bytes).
pub const DEFAULT_DATA: &[u8] =
    b"Random bullshit in a packet, at least 64 bytes long. Well, now it is.";

/// Packet contents for DATA and LENGTH, as Click's sources build them:
/// LENGTH < 0 means DATA as is; otherwise DATA is cut or repeated to LENGTH.
pub fn source_data(data: &[u8], length: i64) -> Vec<u8> {
    if length < 0 {
        data.to_vec()
    } else if data.is_empty() {
        alloc::vec![0; length as usize]
    } else {
        data.iter().copied().cycle().take(length as usize).collect()
    }
}

/// Reads a DATA-style string argument as raw bytes (`\\<hex>` escapes may
/// produce non-UTF-8 bytes).
pub fn read_data(a: &mut Args, kw: &str, positional: bool) -> Result<Option<Vec<u8>>, String> {
    let v = if positional {
        a.read_p::<args::RawString>(kw)?
    } else {
        a.read::<args::RawString>(kw)?
    };
    match v {
        None => Ok(None),
        Some(args::RawString(s)) => {
            args::parse_string(&s).map_err(|e| format!("{}: {}", kw, e))?;
            Ok(Some(args::unquote_bytes(&s)))
        }
    }
}

/// The configuration of DelayShaper and DelayUnqueue: `DELAY` (a time, at
/// least 0), in nanoseconds.
pub fn delay_arg(config: &str, cx: &ConfigureCtx) -> Result<i64, String> {
    let mut a = cx.args(config);
    let d = a.read_mp::<args::Seconds>("DELAY")?.0;
    a.complete()?;
    if d < 0 {
        return Err("DELAY: must be >= 0".into());
    }
    Ok(d)
}

/// Click's `NamedIntArg(NameInfo::T_IP_PROTO)` limited to 0..=255: a protocol
/// name (`tcp`, `udp`, `icmp`, ...) or a number.
pub fn parse_ip_proto(s: &str) -> Result<u8, String> {
    let s = s.trim();
    if let Some(v) = click_wire::names::ip_proto_by_name(s) {
        return u8::try_from(v).map_err(|_| String::from("bad IP protocol"));
    }
    let v = click_lang::args::parse_i64(s).map_err(|_| String::from("expected IP protocol"))?;
    u8::try_from(v).map_err(|_| String::from("bad IP protocol"))
}

/// Click's `IPPortArg`: a port number or a well-known service name.
/// A UDP port: a number, a PortInfo name or a well-known name.
pub fn parse_port(s: &str, cx: &click_lang::ArgContext) -> Result<u16, String> {
    cx.port(s.trim(), click_lang::names::IP_PROTO_UDP)
}

/// A destination that is an address or `DST_ANNO` (take it from the packet's
/// destination IP annotation). `None` means `DST_ANNO`.
pub fn parse_dst_or_anno(s: &str, cx: &click_lang::ArgContext) -> Result<Option<Ipv4Addr>, String> {
    let s = s.trim();
    if s == "DST_ANNO" {
        Ok(None)
    } else {
        cx.ip(s)
            .map(Some)
            .map_err(|_| String::from("expected IP address or DST_ANNO"))
    }
}

/// Click's AnnoArg: an annotation name or a byte offset, for an annotation of
/// `size` bytes; the offset.
pub fn parse_anno(s: &str, size: usize) -> Result<usize, String> {
    let off = match s {
        "DST_IP" | "DST_IP_ANNO" => 0,
        "AGGREGATE" | "AGGREGATE_ANNO" => crate::packet::AGGREGATE_ANNO_OFFSET,
        "EXTRA_LENGTH" | "EXTRA_LENGTH_ANNO" => crate::packet::EXTRA_LENGTH_ANNO_OFFSET,
        "PAINT" | "PAINT_ANNO" => crate::packet::PAINT_ANNO_OFFSET,
        "VLAN_TCI" | "VLAN_TCI_ANNO" => crate::packet::VLAN_TCI_ANNO_OFFSET,
        _ => click_lang::args::parse_u64(s)
            .ok()
            .and_then(|v| usize::try_from(v).ok())
            .ok_or_else(|| String::from("expected annotation"))?,
    };
    if off + size > ANNO_SIZE {
        return Err(String::from("annotation out of range"));
    }
    Ok(off)
}

/// Click's `reconfigure_keyword_handler`: the configuration with argument
/// `pos` (or keyword `kw`) replaced by `value`.
pub fn replace_arg(config: &str, pos: usize, kw: &str, value: &str) -> String {
    let mut conf = split_args(config);
    let is_kw = |a: &str, k: &str| {
        a.len() > k.len() && a.starts_with(k) && a.as_bytes()[k.len()].is_ascii_whitespace()
    };
    let kwarg = format!("{} {}", kw, value);
    if let Some(i) = conf.iter().rposition(|a| is_kw(a, kw)) {
        conf[i] = kwarg;
    } else if pos < conf.len()
        && !conf[..=pos].iter().any(|a| {
            let w = a.split_whitespace().next().unwrap_or("");
            w.len() > 1
                && w.bytes().all(|c| c.is_ascii_uppercase() || c == b'_')
                && a.contains(char::is_whitespace)
        })
    {
        conf[pos] = value.to_string();
    } else {
        conf.push(kwarg);
    }
    join_args(&conf)
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

    #[test]
    fn annotations_and_data() {
        assert_eq!(parse_anno("DST_IP_ANNO", 4), Ok(0));
        assert_eq!(parse_anno("PAINT", 1), Ok(crate::packet::PAINT_ANNO_OFFSET));
        assert_eq!(parse_anno("44", 4), Ok(44));
        assert!(parse_anno("45", 4).is_err());
        assert!(parse_anno("FOO", 4).is_err());
        assert_eq!(source_data(b"abc", -1), b"abc");
        assert_eq!(source_data(b"abc", 5), b"abcab");
        assert_eq!(source_data(b"", 2), [0, 0]);
        assert_eq!(replace_arg("1, 2, 3", 1, "SRC", "x"), "1, x, 3");
        assert_eq!(replace_arg("1, 2, SRC 3", 1, "SRC", "x"), "1, 2, SRC x");
    }
}
