//! GetIPAddress: sets the destination IP address annotation from packet data.

use crate::common::args::parse_anno;
use crate::prelude::*;
use click_lang::args::RawString;
use click_wire::Ipv4Packet;

#[derive(Copy, Clone, Default)]
enum Source {
    #[default]
    Unset,
    Offset(usize),
    Src,
    Dst,
}

/// `GetIPAddress(OFFSET [, ANNO, IP])`.
#[derive(Default)]
pub struct GetIPAddress {
    src: Source,
    anno: usize,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "GetIPAddress",
    port_count: "1/1",
    processing: "a/a",
    group: "ip",
    signature: "GetIPAddress(OFFSET [, ANNO, KEYWORDS])",
    summary: "Sets destination IP address annotation from packet data.",
    description: "Copies 4 bytes from the packet, starting at OFFSET, to the destination IP \
address annotation. OFFSET is usually 16, to fetch the destination address from an IP packet.\n\n\
- `ANNO`: the annotation to set instead (a name such as `DST_IP`, or a byte offset).\n\
- `IP` (`src` or `dst`): instead of OFFSET, take the source or destination address of the IP \
header given by the IP header annotation.\n\n\
Exactly one of OFFSET and IP must be given. Packets too short to hold the address pass \
unchanged.",
    ports: "one input, one output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(GetIPAddress::default()),
};

impl GetIPAddress {
    #[inline]
    fn annotate(&self, p: &mut Packet) {
        let v: Option<[u8; 4]> = match self.src {
            Source::Offset(o) => p.data().get(o..o + 4).map(|b| [b[0], b[1], b[2], b[3]]),
            // Click reads the source of a header cut right after it too:
            // that field needs only the header's first 16 bytes.
            Source::Src => p
                .network_header()
                .filter(|h| h.len() >= 16)
                .map(|h| Ipv4Packet::new_unchecked(h).src_addr().octets()),
            Source::Dst => p.ip_header().map(|ip| ip.dst_addr().octets()),
            Source::Unset => None,
        };
        if let Some(v) = v {
            p.anno_mut().set(self.anno, &v);
        }
    }
}

impl Element for GetIPAddress {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let offset = a.read_p::<usize>("OFFSET")?;
        let anno = match a.read_p::<RawString>("ANNO")? {
            Some(s) => parse_anno(&s.0, 4).map_err(|e| alloc::format!("ANNO: {}", e))?,
            None => 0,
        };
        let ip = a.read::<String>("IP")?;
        a.complete()?;
        let src = match (offset, ip.as_deref()) {
            (Some(o), None) => Source::Offset(o),
            (None, Some("src")) => Source::Src,
            (None, Some("dst")) => Source::Dst,
            (None, Some(_)) => return Err("bad IP".into()),
            _ => return Err("set one of OFFSET, IP".into()),
        };
        self.src = src;
        self.anno = anno;
        Ok(())
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        self.annotate(&mut p);
        Some(p)
    }

    #[inline]
    fn push_batch(&mut self, _port: usize, mut batch: Batch, cx: &Ctx) {
        for p in batch.iter_mut() {
            self.annotate(p);
        }
        cx.push_batch(0, batch);
    }

    crate::element_any!();
}
