//! UDPIPEncap: encapsulates packets in static UDP/IP headers.

use super::iputil::{parse_dst_or_anno, parse_port, set_ip_checksum, transport_checksum};
use crate::elements::ethernet::etherencap::replace_arg;
use crate::prelude::*;
use alloc::format;
use click_lang::args::RawString;
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
        let (ip, rest) = d.split_at_mut(20);
        ip[0] = 0x45;
        ip[1] = 0;
        ip[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&id.to_be_bytes());
        ip[6] = 0;
        ip[7] = 0;
        ip[8] = 250;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&self.src.octets());
        ip[16..20].copy_from_slice(&dst.octets());
        set_ip_checksum(ip);
        let ulen = (len - 20) as u16;
        rest[0..2].copy_from_slice(&self.sport.to_be_bytes());
        rest[2..4].copy_from_slice(&self.dport.to_be_bytes());
        rest[4..6].copy_from_slice(&ulen.to_be_bytes());
        rest[6] = 0;
        rest[7] = 0;
        if self.checksum {
            let mut c = transport_checksum(ip, 17, rest);
            if c == 0 {
                c = 0xffff;
            }
            rest[6..8].copy_from_slice(&c.to_be_bytes());
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
