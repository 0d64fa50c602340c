//! ICMPIPEncap: encapsulates packets in ICMP and IP headers.

use crate::prelude::*;
use click_lang::args::{parse_i64, RawString};
use click_wire::icmp::icmp_type;
use click_wire::names::{icmp_code_by_name, icmp_type_by_name};
use click_wire::{ip_proto, IcmpPacket, Ipv4Packet};
use core::net::Ipv4Addr;

/// `ICMPIPEncap(SRC, DST, TYPE [, CODE, IDENTIFIER])`.
pub struct ICMPIPEncap {
    src: Ipv4Addr,
    dst: Ipv4Addr,
    ty: u8,
    code: u8,
    icmp_id: u16,
    /// The next IP ID (and, for query types, ICMP sequence number).
    ip_id: u16,
    /// Configured as ICMPPingEncap: `(SRC, DST [, IDENTIFIER])`, always an
    /// echo request.
    ping: bool,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "ICMPIPEncap",
    port_count: "1/1",
    processing: "a/a",
    group: "icmp",
    signature: "ICMPIPEncap(SRC, DST, TYPE [, CODE, KEYWORDS])",
    summary: "Encapsulates packets in ICMP/IP headers.",
    description: "Encapsulates input packets in an ICMP header of type TYPE and code CODE \
(numbers or names, as ICMPError takes them: `echo`, `unreachable`, `host`, ...; CODE defaults \
to 0) and an IP header from SRC to DST: the packet data follows the ICMP header (8 bytes, 20 \
for the timestamp types), which is zero but for type, code and checksum. The IP header has \
TOS 0, TTL 255, no fragmentation and protocol ICMP; its ID starts at 1 and advances by one for \
each packet, skipping 0 when it wraps. For echo, echo reply, timestamp, timestamp reply, \
information request and information reply the ICMP identifier is IDENTIFIER and the sequence \
number is the IP ID. Both checksums are computed. Sets the IP header annotation and the \
destination IP address annotation (to DST).\n\n\
Keyword arguments:\n\n\
- `IDENTIFIER` (0..65535): the ICMP identifier of query messages. Default 0.",
    ports: "one input, one output",
    handlers: &[
        HandlerDoc {
            name: "src",
            mode: HandlerMode::ReadWrite,
            text: "The SRC argument.",
        },
        HandlerDoc {
            name: "dst",
            mode: HandlerMode::ReadWrite,
            text: "The DST argument.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(ICMPIPEncap::new(false)),
};

/// Click's `click_icmp_hl`: the ICMP header length of a type.
fn icmp_hl(ty: u8) -> usize {
    if ty == icmp_type::TIMESTAMP || ty == icmp_type::TIMESTAMP_REPLY {
        20
    } else {
        8
    }
}

/// Types whose header has an identifier and a sequence number.
fn sequenced(ty: u8) -> bool {
    // echo reply, echo, timestamp, timestamp reply, information request
    // and reply
    matches!(ty, 0 | 8 | 13 | 14 | 15 | 16)
}

impl ICMPIPEncap {
    /// A new element; `ping` makes it ICMPPingEncap (echo requests, its
    /// shorter argument list).
    pub(crate) fn new(ping: bool) -> Self {
        ICMPIPEncap {
            src: Ipv4Addr::UNSPECIFIED,
            dst: Ipv4Addr::UNSPECIFIED,
            ty: if ping { icmp_type::ECHO } else { 0 },
            code: 0,
            icmp_id: 0,
            ip_id: 1,
            ping,
        }
    }

    #[inline]
    fn encap(&mut self, p: &mut Packet) {
        let hl = icmp_hl(self.ty);
        p.push(20 + hl);
        let len = p.len();
        let id = self.ip_id;
        let d = p.data_mut();
        let (ip, icmp) = d.split_at_mut(20);
        let mut ip = Ipv4Packet::new_unchecked(ip);
        ip.set_version(4);
        ip.set_header_len(20);
        // A packet longer than 65535 bytes cannot be described; the length
        // field then wraps, as in Click.
        ip.set_total_len(len as u16);
        ip.set_ident(id);
        ip.set_ttl(255);
        ip.set_protocol(ip_proto::ICMP);
        ip.set_src_addr(self.src);
        ip.set_dst_addr(self.dst);
        ip.fill_checksum();
        icmp[..hl].fill(0);
        let mut icmp = IcmpPacket::new_unchecked(icmp);
        icmp.set_msg_type(self.ty);
        icmp.set_msg_code(self.code);
        if sequenced(self.ty) {
            icmp.set_echo_ident(self.icmp_id);
            icmp.set_echo_seq_no(id);
        }
        icmp.fill_checksum();
        p.anno_mut().set_dst_ip(self.dst);
        p.set_network_header(0, 20);
        self.ip_id = if self.ip_id == 0xffff {
            1
        } else {
            self.ip_id + 1
        };
    }
}

impl Element for ICMPIPEncap {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let src = a.read_mp::<Ipv4Addr>("SRC")?;
        let dst = a.read_mp::<Ipv4Addr>("DST")?;
        if self.ping {
            let icmp_id = a.read::<u16>("IDENTIFIER")?.unwrap_or(0);
            a.complete()?;
            self.src = src;
            self.dst = dst;
            self.icmp_id = icmp_id;
            return Ok(());
        }
        let ty = a.read_mp::<RawString>("TYPE")?.0;
        let code = a.read_p::<RawString>("CODE")?.map(|r| r.0);
        let icmp_id = a.read::<u16>("IDENTIFIER")?.unwrap_or(0);
        a.complete()?;
        let ty = ty.trim();
        let ty = match icmp_type_by_name(ty) {
            Some(t) => i64::from(t),
            None => parse_i64(ty).map_err(|_| String::from("TYPE: expected ICMP type"))?,
        };
        let ty = u8::try_from(ty).map_err(|_| String::from("invalid TYPE"))?;
        let code = match code.as_deref().map(str::trim) {
            None => 0,
            Some(c) => match icmp_code_by_name(ty, c) {
                Some(c) => c,
                None => parse_i64(c)
                    .ok()
                    .and_then(|v| u8::try_from(v).ok())
                    .ok_or_else(|| String::from("invalid CODE"))?,
            },
        };
        self.src = src;
        self.dst = dst;
        self.ty = ty;
        self.code = code;
        self.icmp_id = icmp_id;
        Ok(())
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        self.encap(&mut p);
        Some(p)
    }

    #[inline]
    fn push_batch(&mut self, _port: usize, mut batch: Batch, cx: &Ctx) {
        for p in batch.iter_mut() {
            self.encap(p);
        }
        cx.push_batch(0, batch);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "src" => Some(Ok(self.src.to_string())),
            "dst" => Some(Ok(self.dst.to_string())),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        let slot = match name {
            "src" => &mut self.src,
            "dst" => &mut self.dst,
            _ => return None,
        };
        Some(
            cx.arg_context()
                .ip(value.trim())
                .map(|a| *slot = a)
                .map_err(|_| String::from("syntax error")),
        )
    }

    crate::element_any!();
}
