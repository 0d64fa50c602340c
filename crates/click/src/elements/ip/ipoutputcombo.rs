//! IPOutputCombo: an IP router's output path (DropBroadcasts, PaintTee,
//! IPGWOptions, FixIPSrc, DecIPTTL, CheckLength) in one element.

use super::decipttl::{self, DecIPTTL};
use super::dropbroadcasts::is_bcast;
use super::fixipsrc::fix_ip_src;
use super::ipgwoptions::{self, IPGWOptions};
use crate::prelude::*;
use core::net::Ipv4Addr;

/// `IPOutputCombo(COLOR, IPADDR, MTU)`.
pub struct IPOutputCombo {
    color: u8,
    ip: Ipv4Addr,
    mtu: u32,
    gw: IPGWOptions,
    ttl: DecIPTTL,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "IPOutputCombo",
    port_count: "1/5",
    processing: "h/h",
    group: "ip",
    signature: "IPOutputCombo(COLOR, IPADDR, MTU)",
    summary: "Output combo for IP routing.",
    description: "A single element encapsulating common tasks on an IP router's output path. \
Effectively equivalent to\n\n\
```\n\
elementclass IPOutputCombo { $COLOR, $IPADDR, $MTU |\n\
\x20 input[0] -> DropBroadcasts\n\
\x20       -> p::PaintTee($COLOR)\n\
\x20       -> g::IPGWOptions($IPADDR)\n\
\x20       -> FixIPSrc($IPADDR)\n\
\x20       -> d::DecIPTTL\n\
\x20       -> l::CheckLength($MTU)\n\
\x20       -> [0]output;\n\
\x20 p[1] -> [1]output;\n\
\x20 g[1] -> [2]output;\n\
\x20 d[1] -> [3]output;\n\
\x20 l[1] -> [4]output;\n\
}\n\
```\n\n\
Expects IP packets with the IP header annotation set. Link-level broadcast and multicast \
packets (by the packet-type annotation) are dropped silently. A copy of each packet whose paint \
annotation equals COLOR (0..255) goes to output 1 (usually to an ICMPError redirect). Record \
Route and Timestamp options are processed with IPADDR as the router's address; packets with bad \
options go to output 2 with the ICMP parameter-problem annotation set. If the Fix IP Source \
annotation is set, the source address becomes IPADDR. Packets whose TTL is 0 or 1 go to output \
3; the others have the TTL decremented (checksum updated incrementally). Packets longer than MTU \
bytes go to output 4; the rest leave on output 0.\n\n\
Output 0 is the path for normal packets; outputs 1 through 3 are the PaintTee, IPGWOptions and \
DecIPTTL error outputs, and output 4 is for packets longer than MTU. IPOutputCombo does no \
fragmentation: connect output 4 to an IPFragmenter. Packets without a readable IP header are \
dropped.",
    ports: "one input; five outputs (0: normal, 1: paint copies, 2: bad options, 3: TTL expired, \
4: longer than MTU)",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || {
        Box::new(IPOutputCombo {
            color: 0,
            ip: Ipv4Addr::UNSPECIFIED,
            mtu: 0,
            gw: IPGWOptions::with_addr(Ipv4Addr::UNSPECIFIED),
            ttl: DecIPTTL::default(),
        })
    },
};

impl Element for IPOutputCombo {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let color = a.read_mp::<u8>("COLOR")?;
        let ip = a.read_mp::<Ipv4Addr>("IPADDR")?;
        let mtu = a.read_mp::<u32>("MTU")?;
        a.complete()?;
        self.color = color;
        self.ip = ip;
        self.mtu = mtu;
        self.gw = IPGWOptions::with_addr(ip);
        Ok(())
    }

    fn push(&mut self, _port: usize, mut p: Packet, cx: &Ctx) {
        // DropBroadcasts
        if is_bcast(&p) {
            return;
        }
        // PaintTee
        if p.anno().paint() == self.color {
            cx.push(1, p.clone_in(cx.pool()));
        }
        // IPGWOptions
        match self.gw.process(&mut p, || cx.now()) {
            ipgwoptions::Verdict::Pass => {}
            ipgwoptions::Verdict::Error(off) => {
                p.anno_mut().set_icmp_paramprob(off);
                cx.push(2, p);
                return;
            }
            ipgwoptions::Verdict::Drop => return,
        }
        // FixIPSrc
        fix_ip_src(&mut p, self.ip);
        // DecIPTTL
        match self.ttl.process(&mut p) {
            decipttl::Verdict::Pass => {}
            decipttl::Verdict::Expired => {
                cx.push(3, p);
                return;
            }
            decipttl::Verdict::Bad => return,
        }
        // CheckLength
        if p.len() as u64 > u64::from(self.mtu) {
            cx.push(4, p);
            return;
        }
        cx.push(0, p);
    }

    crate::element_any!();
}
