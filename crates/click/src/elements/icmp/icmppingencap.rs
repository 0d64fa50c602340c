//! ICMPPingEncap: encapsulates packets in ICMP echo request and IP
//! headers.

use crate::prelude::*;
use click_wire::{icmp_type, ip_proto, IcmpPacket, Ipv4Packet};
use core::net::Ipv4Addr;

/// `ICMPPingEncap(SRC, DST [, IDENTIFIER])`.
pub struct ICMPPingEncap {
    src: Ipv4Addr,
    dst: Ipv4Addr,
    icmp_id: u16,
    /// The next IP ID and ICMP sequence number.
    ip_id: u16,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "ICMPPingEncap",
    port_count: "1/1",
    processing: "a/a",
    group: "icmp",
    signature: "ICMPPingEncap(SRC, DST [, KEYWORDS])",
    summary: "Encapsulates packets in ICMP ping headers.",
    description: "Encapsulates input packets in an ICMP echo request header and an IP header \
with source address SRC and destination address DST: the packet data becomes the echo payload. \
The IP header has TOS 0, TTL 255, no fragmentation and protocol ICMP; the IP ID field and the \
ICMP sequence field (both in network byte order) start at 1 and advance by one for each packet, \
skipping 0 when they wrap. Both checksums are computed. Sets the IP header annotation and the \
destination IP address annotation (to DST).\n\n\
Keyword arguments:\n\n\
- `IDENTIFIER` (0..65535): the ICMP identifier field of the emitted pings. Default 0.",
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
    make: || {
        Box::new(ICMPPingEncap {
            src: Ipv4Addr::UNSPECIFIED,
            dst: Ipv4Addr::UNSPECIFIED,
            icmp_id: 0,
            ip_id: 1,
        })
    },
};

impl ICMPPingEncap {
    #[inline]
    fn encap(&mut self, p: &mut Packet) {
        p.push(28);
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
        let mut icmp = IcmpPacket::new_unchecked(icmp);
        icmp.set_msg_type(icmp_type::ECHO);
        icmp.set_echo_ident(self.icmp_id);
        icmp.set_echo_seq_no(id);
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

impl Element for ICMPPingEncap {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let src = a.read_mp::<Ipv4Addr>("SRC")?;
        let dst = a.read_mp::<Ipv4Addr>("DST")?;
        let icmp_id = a.read::<u16>("IDENTIFIER")?.unwrap_or(0);
        a.complete()?;
        self.src = src;
        self.dst = dst;
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
