//! IPEncap: encapsulates packets in a static IP header.

use crate::common::args::{parse_dst_or_anno, parse_ip_proto, replace_arg};
use crate::prelude::*;
use alloc::format;
use click_lang::args::{parse_bool, RawString};
use click_wire::Ipv4Packet;
use core::net::Ipv4Addr;

/// `IPEncap(PROTO, SRC, DST [, KEYWORDS])`.
pub struct IPEncap {
    /// The header template (length, ID and checksum filled per packet).
    hdr: [u8; 20],
    /// Destination from the packet's destination IP annotation.
    dst_anno: bool,
    id: u16,
    config: String,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "IPEncap",
    port_count: "1/1",
    processing: "a/a",
    group: "ip",
    signature: "IPEncap(PROTO, SRC, DST [, KEYWORDS])",
    summary: "Encapsulates packets in static IP header.",
    description: "Encapsulates each incoming packet in an IP packet with protocol PROTO (a \
number or a name such as `tcp`, `udp`, `ipip`), source address SRC and destination address \
DST, and sets the IP header annotation. This is most useful for IP-in-IP encapsulation. The \
packet's destination address annotation is set to DST. As a special case, if DST is \
`DST_ANNO`, the destination address is taken from the packet's destination address \
annotation.\n\n\
The IP ID field counts packets, starting at 0; the header checksum is computed.\n\n\
Keyword arguments:\n\n\
- `TTL` (byte): the time-to-live field. Default 250.\n\
- `TOS` (byte): the TOS field. Default 0. Cannot be combined with DSCP, ECT or CE.\n\
- `DSCP` (0-63): the DSCP value (the TOS field's upper 6 bits). Default 0.\n\
- `ECT` (boolean or `2`): set the ECN bits to ECN-capable transport: true sets ECT(1) (ECN \
bits 1), `2` sets ECT(0) (ECN bits 2). Default false.\n\
- `CE` (boolean): set the ECN bits to 3 (congestion experienced). Default false.\n\
- `DF` (boolean): set the don't-fragment bit. Default false.\n\n\
The StripIPHeader element can be used by the receiver to remove the encapsulation header.",
    ports: "one input, one output",
    handlers: &[
        HandlerDoc {
            name: "src",
            mode: HandlerMode::ReadWrite,
            text: "The SRC argument; writing it reconfigures the element.",
        },
        HandlerDoc {
            name: "dst",
            mode: HandlerMode::ReadWrite,
            text:
                "The DST argument (`DST_ANNO` or an address); writing it reconfigures the element.",
        },
    ],
    live_reconfigure: true,
    order_sensitive: false,
    make: || {
        Box::new(IPEncap {
            hdr: [0; 20],
            dst_anno: false,
            id: 0,
            config: String::new(),
        })
    },
};

fn parse(config: &str, cx: click_lang::ArgContext) -> Result<([u8; 20], bool), String> {
    let mut a = Args::with_context(config, cx);
    let proto = a.read_mp::<RawString>("PROTO")?;
    let src = a.read_mp::<Ipv4Addr>("SRC")?;
    let dst = a.read_mp::<RawString>("DST")?;
    let tos = a.read::<u32>("TOS")?;
    let ttl = a.read::<u8>("TTL")?.unwrap_or(250);
    let dscp = a.read::<u32>("DSCP")?;
    let ect = a.read::<String>("ECT")?;
    let ce = a.read::<bool>("CE")?.unwrap_or(false);
    let df = a.read::<bool>("DF")?.unwrap_or(false);
    a.complete()?;
    let proto = parse_ip_proto(&proto.0).map_err(|e| format!("PROTO: {}", e))?;
    let dst = parse_dst_or_anno(&dst.0, &cx)
        .map_err(|_| String::from("DST argument should be IP address or 'DST_ANNO'"))?;
    let ect = match ect {
        None => 0u8,
        Some(s) => match parse_bool(&s) {
            Ok(b) => u8::from(b),
            Err(_) if s == "2" => 2,
            Err(_) => return Err(format!("bad ECT value '{}'", s)),
        },
    };
    if tos.is_some() && dscp.is_some() {
        return Err("cannot set both TOS and DSCP".into());
    }
    if tos.is_some() && (ect != 0 || ce) {
        return Err("cannot set both TOS and ECN bits".into());
    }
    if tos.is_some_and(|t| t > 255) {
        return Err("TOS too large; max 255".into());
    }
    if dscp.is_some_and(|d| d > 63) {
        return Err("DSCP too large; max 63".into());
    }
    if ect != 0 && ce {
        return Err("can set at most one ECN option".into());
    }
    let mut tos_byte = match (tos, dscp) {
        (Some(t), _) => t as u8,
        (None, Some(d)) => (d as u8) << 2,
        (None, None) => 0,
    };
    // Click's IP_ECN_ECT1 is 1 and IP_ECN_ECT2 is 2.
    tos_byte |= ect;
    if ce {
        tos_byte |= 3;
    }
    let mut h = [0u8; 20];
    let mut ip = Ipv4Packet::new_unchecked(&mut h[..]);
    ip.set_version(4);
    ip.set_header_len(20);
    ip.set_tos(tos_byte);
    ip.set_dont_frag(df);
    ip.set_ttl(ttl);
    ip.set_protocol(proto);
    ip.set_src_addr(src);
    ip.set_dst_addr(dst.unwrap_or(Ipv4Addr::UNSPECIFIED));
    Ok((h, dst.is_none()))
}

impl IPEncap {
    /// The header template as a view.
    fn template(&self) -> Ipv4Packet<&[u8]> {
        Ipv4Packet::new_unchecked(&self.hdr[..])
    }

    #[inline]
    fn encap(&mut self, p: &mut Packet) {
        p.push(20);
        let len = p.len();
        let id = self.id;
        self.id = self.id.wrapping_add(1);
        let dst_anno = self.dst_anno;
        let anno_dst = p.anno().dst_ip();
        let h = &mut p.data_mut()[..20];
        h.copy_from_slice(&self.hdr);
        let mut ip = Ipv4Packet::new_unchecked(h);
        // A packet longer than 65535 bytes cannot be described; the length
        // field then wraps, as in Click.
        ip.set_total_len(len as u16);
        ip.set_ident(id);
        if dst_anno {
            ip.set_dst_addr(anno_dst);
        }
        ip.fill_checksum();
        if !dst_anno {
            let d = self.template().dst_addr();
            p.anno_mut().set_dst_ip(d);
        }
        p.set_network_header(0, 20);
    }
}

impl Element for IPEncap {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let (hdr, dst_anno) = parse(config, cx.arg_context())?;
        self.hdr = hdr;
        self.dst_anno = dst_anno;
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
        let h = self.template();
        match name {
            "src" => Some(Ok(h.src_addr().to_string())),
            "dst" if self.dst_anno => Some(Ok("DST_ANNO".into())),
            "dst" => Some(Ok(h.dst_addr().to_string())),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        let (pos, kw) = match name {
            "src" => (1, "SRC"),
            "dst" => (2, "DST"),
            _ => return None,
        };
        let newconf = replace_arg(&self.config, pos, kw, value.trim());
        Some(parse(&newconf, cx.arg_context()).map(|(hdr, dst_anno)| {
            self.hdr = hdr;
            self.dst_anno = dst_anno;
            self.config = newconf;
        }))
    }

    fn current_config(&self) -> Option<String> {
        Some(self.config.clone())
    }

    crate::element_any!();
}
