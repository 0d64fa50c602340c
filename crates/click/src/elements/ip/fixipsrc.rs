//! FixIPSrc: sets the IP source address if the Fix IP Source annotation is
//! set.

use crate::prelude::*;
use core::net::Ipv4Addr;

/// `FixIPSrc(IPADDR)`.
pub struct FixIPSrc {
    ip: Ipv4Addr,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "FixIPSrc",
    port_count: "1/1",
    processing: "a/a",
    group: "ip",
    signature: "FixIPSrc(IPADDR)",
    summary: "Sets IP source field if requested by annotation.",
    description: "Expects an IP packet as input, with the IP header annotation set. If its Fix \
IP Source annotation is set (Click's `FIX_IP_SRC_ANNO`, byte 19 of the annotation area; \
ICMPError sets it), changes its IP source address field to IPADDR, recomputes the header \
checksum, and clears the annotation. Used by elements such as ICMPError that are required by \
standards to use the IP address on the outgoing interface as the source.\n\n\
Other packets pass unchanged, as do packets whose IP header is truncated (their annotation is \
still cleared).",
    ports: "one input, one output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || {
        Box::new(FixIPSrc {
            ip: Ipv4Addr::UNSPECIFIED,
        })
    },
};

/// FixIPSrc's action (shared with IPOutputCombo): if `p`'s Fix IP Source
/// annotation is set, clears it and, when the IP header is readable, sets
/// the source address to `src` and recomputes the header checksum.
#[inline]
pub(crate) fn fix_ip_src(p: &mut Packet, src: Ipv4Addr) {
    if !p.anno().fix_ip_src() || !p.has_network_header() {
        return;
    }
    p.anno_mut().set_fix_ip_src(false);
    if let Some(mut ip) = p.ip_header_mut() {
        if ip.check_header_len().is_ok() {
            ip.set_src_addr(src);
            ip.fill_checksum();
        }
    }
}

impl Element for FixIPSrc {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let ip = a.read_mp::<Ipv4Addr>("IPADDR")?;
        a.complete()?;
        self.ip = ip;
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        fix_ip_src(&mut p, self.ip);
        Some(p)
    }

    crate::element_any!();
}
