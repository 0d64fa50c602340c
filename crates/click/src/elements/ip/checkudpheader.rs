//! CheckUDPHeader and CheckTCPHeader: check transport headers for
//! correctness (lengths, checksums).

use crate::common::drops::DropStats;
use crate::prelude::*;
use alloc::format;
use click_wire::{ip_proto, TcpPacket, UdpPacket};

const UDP_REASONS: [&str; 3] = ["not UDP", "bad packet length", "bad UDP checksum"];
const TCP_REASONS: [&str; 3] = ["not TCP", "bad packet length", "bad TCP checksum"];

#[derive(Copy, Clone, PartialEq, Eq)]
enum Proto {
    Udp,
    Tcp,
}

/// The state shared by CheckUDPHeader and CheckTCPHeader.
pub struct CheckTransportHeader {
    proto: Proto,
    stats: DropStats<3>,
}

/// `CheckUDPHeader([KEYWORDS])`.
pub type CheckUDPHeader = CheckTransportHeader;
/// `CheckTCPHeader([KEYWORDS])`.
pub type CheckTCPHeader = CheckTransportHeader;

impl CheckTransportHeader {
    fn new(proto: Proto) -> Self {
        CheckTransportHeader {
            proto,
            stats: DropStats::default(),
        }
    }
}

pub static UDP_SPEC: ClassSpec = ClassSpec {
    name: "CheckUDPHeader",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "tcpudp",
    signature: "CheckUDPHeader([KEYWORDS])",
    summary: "Checks UDP header on UDP/IP packets.",
    description: "Expects UDP/IP packets as input, with the IP header annotation set (by \
CheckIPHeader or MarkIPHeader). Checks that the IP protocol is UDP, that the UDP length is at \
least 8 and fits in the packet, and that the UDP checksum is correct (a zero checksum means \
\"no checksum\" and is accepted).\n\n\
Valid packets leave on output 0. Invalid packets are pushed to output 1 if it exists, and \
dropped otherwise. The first invalid packet (every one with VERBOSE) is reported on standard \
error as `UDP header check failed: REASON`, REASON being `not UDP`, `bad packet length` or \
`bad UDP checksum`.\n\n\
Keyword arguments:\n\n\
- `VERBOSE` (boolean): report every invalid packet. Default false.\n\
- `DETAILS` (boolean): keep per-reason counts for `drop_details`. Default false.",
    ports: "one input; one or two outputs (1: invalid packets)",
    handlers: crate::common::drops::DROP_HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(CheckTransportHeader::new(Proto::Udp)),
};

pub static TCP_SPEC: ClassSpec = ClassSpec {
    name: "CheckTCPHeader",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "tcpudp",
    signature: "CheckTCPHeader([KEYWORDS])",
    summary: "Checks TCP header on TCP/IP packets.",
    description: "Expects TCP/IP packets as input, with the IP header annotation set (by \
CheckIPHeader or MarkIPHeader). Checks that the IP protocol is TCP, that the TCP data offset is \
at least 5 words and within the IP payload, that the IP payload fits in the packet, and that \
the TCP checksum is correct.\n\n\
Valid packets leave on output 0. Invalid packets are pushed to output 1 if it exists, and \
dropped otherwise. The first invalid packet (every one with VERBOSE) is reported on standard \
error as `NAME: TCP header check failed: REASON`, REASON being `not TCP`, `bad packet length` \
or `bad TCP checksum`.\n\n\
Keyword arguments:\n\n\
- `VERBOSE` (boolean): report every invalid packet. Default false.\n\
- `DETAILS` (boolean): keep per-reason counts for `drop_details`. Default false.",
    ports: "one input; one or two outputs (1: invalid packets)",
    handlers: crate::common::drops::DROP_HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(CheckTransportHeader::new(Proto::Tcp)),
};

const NOT_PROTO: usize = 0;
const BAD_LENGTH: usize = 1;
const BAD_CHECKSUM: usize = 2;

impl CheckTransportHeader {
    /// Click's checks; `Err(reason index)` for an invalid packet.
    #[inline]
    fn check(&self, p: &Packet) -> Result<(), usize> {
        let (Some(ip), Some(nh), Some(th)) = (
            p.ip_header(),
            p.network_header_offset(),
            p.transport_header_offset(),
        ) else {
            return Err(NOT_PROTO);
        };
        let want = match self.proto {
            Proto::Udp => ip_proto::UDP,
            Proto::Tcp => ip_proto::TCP,
        };
        if ip.protocol() != want {
            return Err(NOT_PROTO);
        }
        let iph_len = usize::from(ip.header_len());
        let tho = usize::try_from(th - nh).map_err(|_| BAD_LENGTH)?;
        let ip_len = usize::from(ip.total_len());
        let (src, dst) = (ip.src_addr(), ip.dst_addr());
        let ip = ip.into_inner();
        if iph_len < 20 || tho > ip.len() {
            return Err(BAD_LENGTH);
        }
        let seg = &ip[tho..];
        match self.proto {
            Proto::Udp => {
                let udp = UdpPacket::new_fixed_checked(seg).map_err(|_| BAD_LENGTH)?;
                let len = usize::from(udp.len());
                if len < 8 || ip.len() < len + iph_len || seg.len() < len {
                    return Err(BAD_LENGTH);
                }
                // A zero checksum field means none was sent.
                if !udp.verify_checksum(src, dst) {
                    return Err(BAD_CHECKSUM);
                }
            }
            Proto::Tcp => {
                let len = ip_len.checked_sub(iph_len).ok_or(BAD_LENGTH)?;
                let tcp = TcpPacket::new_fixed_checked(seg).map_err(|_| BAD_LENGTH)?;
                let tcph_len = usize::from(tcp.header_len());
                if tcph_len < 20 || len < tcph_len || ip.len() < len + iph_len || seg.len() < len {
                    return Err(BAD_LENGTH);
                }
                if !TcpPacket::new_unchecked(&seg[..len]).verify_checksum(src, dst) {
                    return Err(BAD_CHECKSUM);
                }
            }
        }
        Ok(())
    }

    #[cold]
    fn drop(&mut self, reason: usize, p: Packet, cx: &Ctx) {
        if self.stats.record(reason) {
            match self.proto {
                Proto::Udp => {
                    cx.error_line(&format!("UDP header check failed: {}", UDP_REASONS[reason]))
                }
                Proto::Tcp => cx.error_line(&format!(
                    "{}: TCP header check failed: {}",
                    cx.name(),
                    TCP_REASONS[reason]
                )),
            }
        }
        if cx.noutputs() > 1 {
            cx.push(1, p);
        }
    }
}

impl Element for CheckTransportHeader {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        self.stats.configure(&mut a)?;
        a.complete()?;
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    #[inline]
    fn simple_action(&mut self, p: Packet, cx: &Ctx) -> Option<Packet> {
        match self.check(&p) {
            Ok(()) => Some(p),
            Err(r) => {
                self.drop(r, p, cx);
                None
            }
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "drops" | "drop_details" => {
                let reasons = match self.proto {
                    Proto::Udp => &UDP_REASONS,
                    Proto::Tcp => &TCP_REASONS,
                };
                self.stats.read_handler(name, reasons)
            }
            _ => None,
        }
    }

    crate::element_any!();
}
