//! ICMPError: generates ICMP error packets.

use crate::prelude::*;
use alloc::format;
use click_lang::args::{parse_i64, split_words, RawString};
use click_wire::icmp::{icmp_code, icmp_type};
use click_wire::names::{icmp_code_by_name, icmp_type_by_name};
use click_wire::{ip_proto, IcmpPacket, Ipv4Packet};
use core::net::Ipv4Addr;

const IPOPT_EOL: u8 = 0;
const IPOPT_NOP: u8 = 1;
const IPOPT_LSRR: u8 = 131;
const IPOPT_SSRR: u8 = 137;

/// `ICMPError(SRC, TYPE [, CODE, KEYWORDS])`.
pub struct ICMPError {
    src: Ipv4Addr,
    ty: u8,
    code: u8,
    bad_addrs: Vec<u32>,
    mtu: u32,
    pmtu: u32,
    use_fix_anno: bool,
    /// IP ID of the next error (Click numbers them from 1).
    next_id: u16,
    /// Packets that produced no error.
    drops: u64,
}

impl Default for ICMPError {
    fn default() -> Self {
        ICMPError {
            src: Ipv4Addr::UNSPECIFIED,
            ty: icmp_type::UNREACH,
            code: 0,
            bad_addrs: Vec::new(),
            mtu: 576,
            pmtu: 0,
            use_fix_anno: true,
            next_id: 1,
            drops: 0,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "ICMPError",
    port_count: "1/1",
    processing: "a/a",
    group: "icmp",
    signature: "ICMPError(SRC, TYPE [, CODE, KEYWORDS])",
    summary: "Generates ICMP error packets.",
    description: "Generates an ICMP error packet of type TYPE and code CODE in response to each \
incoming IP packet (which must have its IP header annotation set) and emits it in place of the \
packet. The error's IP source address is SRC, its destination the offending packet's source; its \
payload is as much of the offending packet, from its IP header on, as fits in MTU bytes (RFC \
1812 4.3.2.3: at least the IP header and 8 bytes). The error has TTL 200, TOS 0 and an IP ID \
counting up from 1 (each ICMPError element counts on its own; Click shares one counter); ICMPError sets its destination IP annotation and, unless \
USE_FIX_ANNO is false, its fix-IP-source annotation, and stamps it with the current time.\n\n\
TYPE and CODE are integers (0-255) or names. Error types: `unreachable` (3), `sourcequench` \
(4), `redirect` (5), `timeexceeded` (11), `parameterproblem` (12); other types are rejected. \
Codes: `net`, `host`, `protocol`, `port`, `needfrag`, ... for `unreachable`; `net`, `host`, \
`tosnet`, `toshost` for `redirect`; `transit`, `reassembly` for `timeexceeded`; \
`erroratptr`, `missingopt`, `length` for `parameterproblem`. CODE defaults to 0.\n\n\
Following RFC 1812 4.3.2.7, no error is generated (the packet is just dropped) for ICMP error \
messages (or ICMP packets too short to tell), packets to broadcast or multicast IP \
destinations or to a BADADDRS address, packets that arrived as link-level broadcast or \
multicast (packet type annotation), packets whose source is not a valid unicast host address \
(0.x.x.x, 127.x.x.x, class D or E, 255.255.255.255, BADADDRS), and fragments other than the \
first. Packets without a well-formed IP header are dropped too.\n\n\
A `parameterproblem` error with code 0 carries the pointer from the packet's ICMP \
parameter-problem annotation (set by IPGWOptions); a `redirect` carries the gateway from the \
destination IP annotation; an `unreachable`/`needfrag` error carries PMTU as the next-hop MTU \
(RFC 1191). If the packet has a valid loose or strict source route option, the error carries \
the route recorded so far, reversed (RFC 1812 4.3.2.6) -- unless the error is a redirect, \
which is then not sent at all, or a parameter problem pointing into that option.\n\n\
Keyword arguments:\n\n\
- `BADADDRS` (space-separated IP addresses): no errors to or about these addresses (usually the \
local broadcast addresses).\n\
- `MTU` (unsigned): largest error packet generated. Default 576.\n\
- `PMTU` (unsigned): next-hop MTU reported in `needfrag` errors. Default 0.\n\
- `USE_FIX_ANNO` (boolean; also `SET_FIX_ANNO`): set the fix-IP-source annotation. Default \
true.",
    ports: "one input, one output",
    handlers: &[
        HandlerDoc {
            name: "src",
            mode: HandlerMode::ReadWrite,
            text: "The SRC address.",
        },
        HandlerDoc {
            name: "mtu",
            mode: HandlerMode::ReadWrite,
            text: "The MTU value.",
        },
        HandlerDoc {
            name: "pmtu",
            mode: HandlerMode::ReadWrite,
            text: "The PMTU value.",
        },
        HandlerDoc {
            name: "drops",
            mode: HandlerMode::Read,
            text: "Packets for which no error was generated.",
        },
    ],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(ICMPError::default()),
};

/// Whether `ty` is one of the ICMP error types.
pub fn is_error_type(ty: u8) -> bool {
    matches!(
        ty,
        icmp_type::UNREACH
            | icmp_type::SOURCE_QUENCH
            | icmp_type::REDIRECT
            | icmp_type::TIME_EXCEEDED
            | icmp_type::PARAM_PROBLEM
    )
}

/// Finds a valid LSRR/SSRR option in an IP header (`hdr` is exactly the
/// header). Returns its offset.
fn source_route(hdr: &[u8]) -> Option<usize> {
    let mut oi = 20;
    while oi < hdr.len() {
        let ty = hdr[oi];
        if ty == IPOPT_NOP {
            oi += 1;
            continue;
        }
        if ty == IPOPT_EOL || oi + 1 >= hdr.len() {
            return None;
        }
        let xlen = hdr[oi + 1] as usize;
        if xlen < 2 || oi + xlen > hdr.len() {
            return None;
        }
        if (ty == IPOPT_LSRR || ty == IPOPT_SSRR) && xlen >= 3 {
            let ptr = hdr[oi + 2] as usize;
            if ptr >= 4 && ptr.is_multiple_of(4) && ptr <= xlen + 1 {
                return Some(oi);
            }
        }
        oi += xlen;
    }
    None
}

impl ICMPError {
    fn unicast(&self, a: u32) -> bool {
        a != u32::MAX && a & 0xf000_0000 != 0xe000_0000 && !self.bad_addrs.contains(&a)
    }

    fn valid_source(&self, a: u32) -> bool {
        let net = a >> 24;
        self.unicast(a) && net != 0 && net != 127 && net & 0xf0 != 0xf0
    }

    /// The error for `p`, or `None` when none may be sent.
    fn make_error(&mut self, p: &Packet, cx: &Ctx) -> Option<Packet> {
        let iph = p.ip_header()?;
        if iph.version() != 4 || iph.check_header_len().is_err() {
            return None;
        }
        let hlen = usize::from(iph.header_len());
        let hdr = iph.header();
        // The whole offending packet, from its IP header on.
        let ip = iph.as_ref();
        // Don't answer ICMP errors (whose first 4 bytes must be there).
        if iph.protocol() == ip_proto::ICMP
            && (hlen + 4 > ip.len() || IcmpPacket::new_unchecked(&ip[hlen..]).is_error())
        {
            return None;
        }
        let src = u32::from(iph.src_addr());
        let dst = u32::from(iph.dst_addr());
        if !self.unicast(dst) {
            return None;
        }
        if matches!(
            p.anno().packet_type,
            PacketType::Broadcast | PacketType::Multicast
        ) {
            return None;
        }
        if !self.valid_source(src) {
            return None;
        }
        // Only the first fragment.
        if !iph.is_first_fragment() {
            return None;
        }
        let pointer = p.anno().icmp_paramprob();
        let mut sr = source_route(hdr);
        if let Some(o) = sr {
            if self.ty == icmp_type::REDIRECT {
                return None;
            }
            let ptr_at = pointer as usize;
            if self.ty == icmp_type::PARAM_PROBLEM
                && self.code == icmp_code::param_problem::ERRATPTR
                && o <= ptr_at
                && ptr_at < o + hdr[o + 1] as usize
            {
                sr = None;
            }
        }

        // The new IP header, with the reversed source route if any.
        let mut opts = [0u8; 40];
        let olen_total = match sr {
            Some(o) => {
                let ptr = hdr[o + 2] as usize;
                let olen = ptr - 1;
                opts[0] = hdr[o];
                opts[1] = olen as u8;
                opts[2] = 4;
                // Recorded hops, last first.
                let mut w = 3;
                let mut r = o + ptr - 5;
                while r >= o + 3 {
                    opts[w..w + 4].copy_from_slice(&hdr[r..r + 4]);
                    w += 4;
                    if r < 4 {
                        break;
                    }
                    r -= 4;
                }
                // olen + 1 is a multiple of 4; the last byte is EOL.
                opts[olen] = IPOPT_EOL;
                olen + 1
            }
            None => 0,
        };
        let nhl = 20 + olen_total;
        let room = (self.mtu as usize).saturating_sub(nhl + 8);
        let xlen = room.min(ip.len());
        let total = nhl + 8 + xlen;
        let mut q = cx.pool().make_len(DEFAULT_HEADROOM, total, 0);
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        {
            let d = q.data_mut();
            d.fill(0);
            let (h, icmp) = d.split_at_mut(nhl);
            let mut h = Ipv4Packet::new_unchecked(h);
            h.set_version(4);
            // A multiple of 4 up to 60: the reversed route is at most the
            // offending header's options.
            h.set_header_len(nhl as u8);
            h.set_total_len(total as u16);
            h.set_ident(id);
            h.set_ttl(200);
            h.set_protocol(ip_proto::ICMP);
            h.set_src_addr(self.src);
            h.set_dst_addr(Ipv4Addr::from(src));
            h.options_mut().copy_from_slice(&opts[..olen_total]);
            h.fill_checksum();
            let mut icmp = IcmpPacket::new_unchecked(icmp);
            icmp.set_msg_type(self.ty);
            icmp.set_msg_code(self.code);
            if self.ty == icmp_type::PARAM_PROBLEM
                && self.code == icmp_code::param_problem::ERRATPTR
            {
                icmp.set_param_pointer(pointer);
            }
            if self.ty == icmp_type::REDIRECT {
                // The gateway address.
                icmp.set_rest_of_header(u32::from(p.anno().dst_ip()));
            }
            if self.ty == icmp_type::UNREACH && self.code == icmp_code::unreach::NEEDFRAG {
                icmp.set_next_hop_mtu(self.pmtu as u16);
            }
            icmp.data_mut().copy_from_slice(&ip[..xlen]);
            icmp.fill_checksum();
        }
        q.set_network_header(0, nhl);
        q.anno_mut().set_dst_ip(Ipv4Addr::from(src));
        if self.use_fix_anno {
            q.anno_mut().set_fix_ip_src(true);
        }
        q.set_timestamp(cx.now());
        Some(q)
    }
}

fn parse_type(s: &str) -> Result<u8, String> {
    let v = match icmp_type_by_name(s) {
        Some(t) => i64::from(t),
        None => parse_i64(s).map_err(|_| String::from("TYPE: expected ICMP type"))?,
    };
    if !(0..=255).contains(&v) {
        return Err("ICMP type must be between 0 and 255".into());
    }
    let t = v as u8;
    if !is_error_type(t) {
        return Err(format!("ICMP type {} is not an error type", t));
    }
    Ok(t)
}

fn parse_code(ty: u8, s: &str) -> Result<u8, String> {
    let err = || String::from("argument 2 takes ICMP code (integer between 0 and 255)");
    if let Some(c) = icmp_code_by_name(ty, s) {
        return Ok(c);
    }
    let v = parse_i64(s).map_err(|_| err())?;
    u8::try_from(v).map_err(|_| err())
}

impl Element for ICMPError {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let src = a.read_mp::<Ipv4Addr>("SRC")?;
        let ty = a.read_mp::<RawString>("TYPE")?.0;
        let code = a.read_p::<RawString>("CODE")?.map(|r| r.0);
        let bad = a.read_p::<RawString>("BADADDRS")?.map(|r| r.0);
        let mtu = a.read::<u32>("MTU")?.unwrap_or(576);
        let pmtu = a.read::<u32>("PMTU")?.unwrap_or(0);
        let fix1 = a.read::<bool>("SET_FIX_ANNO")?;
        let fix2 = a.read::<bool>("USE_FIX_ANNO")?;
        a.complete()?;
        let ty = parse_type(ty.trim())?;
        let code = match code {
            Some(c) => parse_code(ty, c.trim())?,
            None => 0,
        };
        let mut bad_addrs = Vec::new();
        if let Some(b) = bad {
            for w in split_words(&b) {
                let a = cx
                    .arg_context()
                    .ip(&w)
                    .map_err(|_| String::from("BADADDRS: expected list of IP addresses"))?;
                bad_addrs.push(u32::from(a));
            }
        }
        self.src = src;
        self.ty = ty;
        self.code = code;
        self.bad_addrs = bad_addrs;
        self.mtu = mtu;
        self.pmtu = pmtu;
        self.use_fix_anno = fix2.or(fix1).unwrap_or(true);
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    fn simple_action(&mut self, p: Packet, cx: &Ctx) -> Option<Packet> {
        let q = self.make_error(&p, cx);
        if q.is_none() {
            self.drops += 1;
        }
        q
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "src" => self.src.to_string(),
            "mtu" => self.mtu.to_string(),
            "pmtu" => self.pmtu.to_string(),
            "drops" => self.drops.to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        let v = click_lang::args::uncomment(value);
        let v = v.trim();
        Some(match name {
            "src" => cx
                .arg_context()
                .ip(v)
                .map(|a| self.src = a)
                .map_err(|_| "expected IP address".into()),
            "mtu" => click_lang::args::parse_u64(v)
                .ok()
                .and_then(|x| u32::try_from(x).ok())
                .map(|x| self.mtu = x)
                .ok_or_else(|| "expected unsigned integer".into()),
            "pmtu" => click_lang::args::parse_u64(v)
                .ok()
                .and_then(|x| u32::try_from(x).ok())
                .map(|x| self.pmtu = x)
                .ok_or_else(|| "expected unsigned integer".into()),
            _ => return None,
        })
    }

    crate::element_any!();
}
