//! UDPIPEncap: encapsulates packets in static UDP/IP headers.

use crate::common::args::{parse_dst_or_anno, parse_port, replace_arg};
use crate::prelude::*;
use alloc::format;
use click_lang::args::RawString;
use click_wire::{checksum, ip_proto, Ipv4Packet, UdpPacket};
use core::net::Ipv4Addr;

/// `UDPIPEncap(SRC, SPORT, DST, DPORT [, CHECKSUM])`.
pub struct UDPIPEncap {
    src: Ipv4Addr,
    sport: u16,
    /// `None` means DST_ANNO.
    dst: Option<Ipv4Addr>,
    dport: u16,
    checksum: bool,
    id: u16,
    config: String,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "UDPIPEncap",
    port_count: "1/1",
    processing: "a/a",
    group: "tcpudp",
    signature: "UDPIPEncap(SRC, SPORT, DST, DPORT [, CHECKSUM])",
    summary: "Encapsulates packets in static UDP/IP headers.",
    description: "Encapsulates each incoming packet in a UDP/IP packet with source address SRC, \
source port SPORT, destination address DST, and destination port DPORT (ports are numbers or \
well-known names such as `dns`). The UDP checksum is calculated if CHECKSUM (boolean) is true, \
the default; a computed checksum of zero is sent as `0xFFFF` (RFC 768). As a special case, if \
DST is `DST_ANNO`, the destination address is the packet's destination address annotation; \
otherwise the annotation is set to DST.\n\n\
The IP header has TTL 250, TOS 0, no fragmentation bits, and an ID counting packets from 0. \
The IP header annotation is set. `SADDR` and `DADDR` are accepted as keyword synonyms of `SRC` \
and `DST` (Click's older names). The Strip element can be used by the receiver to remove the \
encapsulation.",
    ports: "one input, one output",
    handlers: &[
        HandlerDoc {
            name: "src",
            mode: HandlerMode::ReadWrite,
            text: "The SRC argument; writing it reconfigures the element.",
        },
        HandlerDoc {
            name: "sport",
            mode: HandlerMode::ReadWrite,
            text: "The SPORT argument; writing it reconfigures the element.",
        },
        HandlerDoc {
            name: "dst",
            mode: HandlerMode::ReadWrite,
            text: "The DST argument (0.0.0.0 for DST_ANNO); writing it reconfigures the element.",
        },
        HandlerDoc {
            name: "dport",
            mode: HandlerMode::ReadWrite,
            text: "The DPORT argument; writing it reconfigures the element.",
        },
    ],
    live_reconfigure: true,
    order_sensitive: false,
    make: || {
        Box::new(UDPIPEncap {
            src: Ipv4Addr::UNSPECIFIED,
            sport: 0,
            dst: None,
            dport: 0,
            checksum: true,
            id: 0,
            config: String::new(),
        })
    },
};

type Parsed = (Ipv4Addr, u16, Option<Ipv4Addr>, u16, bool);

fn parse(config: &str, cx: click_lang::ArgContext) -> Result<Parsed, String> {
    let mut a = Args::with_context(config, cx);
    let src = match a.read::<Ipv4Addr>("SADDR")? {
        Some(s) => s,
        None => a.read_mp::<Ipv4Addr>("SRC")?,
    };
    let sport = a.read_mp::<RawString>("SPORT")?;
    let dst = match a.read::<RawString>("DADDR")? {
        Some(d) => d,
        None => a.read_mp::<RawString>("DST")?,
    };
    let dport = a.read_mp::<RawString>("DPORT")?;
    let checksum = a.read_p::<bool>("CHECKSUM")?.unwrap_or(true);
    a.complete()?;
    let sport = parse_port(&sport.0, &cx).map_err(|e| format!("SPORT: {}", e))?;
    let dport = parse_port(&dport.0, &cx).map_err(|e| format!("DPORT: {}", e))?;
    let dst = parse_dst_or_anno(&dst.0, &cx).map_err(|_| String::from("bad DST"))?;
    Ok((src, sport, dst, dport, checksum))
}

impl UDPIPEncap {
    fn set(&mut self, p: Parsed) {
        (self.src, self.sport, self.dst, self.dport, self.checksum) = p;
    }

    #[inline]
    fn encap(&mut self, p: &mut Packet) {
        p.push(28);
        let len = p.len();
        let id = self.id;
        self.id = self.id.wrapping_add(1);
        let dst = match self.dst {
            Some(d) => {
                p.anno_mut().set_dst_ip(d);
                d
            }
            None => p.anno().dst_ip(),
        };
        let d = p.data_mut();
        let (ip, udp) = d.split_at_mut(20);
        let mut ip = Ipv4Packet::new_unchecked(ip);
        ip.set_version(4);
        ip.set_header_len(20);
        ip.set_tos(0);
        ip.set_total_len(len as u16);
        ip.set_ident(id);
        ip.set_flags_frag(0);
        ip.set_ttl(250);
        ip.set_protocol(ip_proto::UDP);
        ip.set_src_addr(self.src);
        ip.set_dst_addr(dst);
        ip.fill_checksum();
        let mut udp = UdpPacket::new_unchecked(udp);
        udp.set_src_port(self.sport);
        udp.set_dst_port(self.dport);
        udp.set_len((len - 20) as u16);
        udp.set_checksum(0);
        if self.checksum {
            // Over the whole segment, as Click does, even when the length
            // field wrapped.
            let c = checksum::transport_checksum(self.src, dst, ip_proto::UDP, udp.as_ref());
            udp.set_checksum(if c == 0 { 0xffff } else { c });
        }
        p.set_network_header(0, 20);
    }
}

impl Element for UDPIPEncap {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let parsed = parse(config, cx.arg_context())?;
        self.set(parsed);
        self.config = config.to_string();
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
        Some(Ok(match name {
            "src" => self.src.to_string(),
            "sport" => self.sport.to_string(),
            "dst" => self.dst.unwrap_or(Ipv4Addr::UNSPECIFIED).to_string(),
            "dport" => self.dport.to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        let (pos, mut kw) = match name {
            "src" => (0, "SRC"),
            "sport" => (1, "SPORT"),
            "dst" => (2, "DST"),
            "dport" => (3, "DPORT"),
            _ => return None,
        };
        // Keep Click's older keyword if the configuration used it.
        let uses = |k: &str| {
            click_lang::args::split_args(&self.config)
                .iter()
                .any(|a| a.split_whitespace().next() == Some(k) && a.trim() != k)
        };
        if kw == "SRC" && uses("SADDR") {
            kw = "SADDR";
        } else if kw == "DST" && uses("DADDR") {
            kw = "DADDR";
        }
        let newconf = replace_arg(&self.config, pos, kw, value.trim());
        Some(parse(&newconf, cx.arg_context()).map(|parsed| {
            self.set(parsed);
            self.config = newconf;
        }))
    }

    fn current_config(&self) -> Option<String> {
        Some(self.config.clone())
    }

    crate::element_any!();
}
