//! ICMPPingEncap: encapsulates packets in ICMP echo request and IP
//! headers.
//!
//! The element is ICMPIPEncap with type echo and a shorter argument list
//! (`ICMPPingEncap(SRC, DST [, IDENTIFIER])`); only its class entry lives
//! here.

use super::icmpipencap::ICMPIPEncap;
use crate::prelude::*;

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
    make: || Box::new(ICMPIPEncap::new(true)),
};
