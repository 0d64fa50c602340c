//! UDPRewriter: rewrites UDP (and TCP, DCCP) packets' addresses and ports.

use super::iprewriterbase::*;
use crate::common::iprw::Kind;
use crate::prelude::*;

pub static SPEC: ClassSpec = ClassSpec {
    name: "UDPRewriter",
    port_count: "1-/1-",
    processing: "h/h",
    group: "tcpudp",
    signature: "UDPRewriter(INPUTSPEC1, ..., INPUTSPECn [, KEYWORDS])",
    summary: "Rewrites UDP (and TCP, DCCP) packets' addresses and ports.",
    description: concat!(
        "IPRewriter with one table for TCP, UDP and DCCP alike (keyed by addresses and ports only) \
and UDP's timeouts. Other packets, later fragments and packets with less than 8 bytes of \
transport header are dropped unless their input is `pass`.\n\n",
        crate::iprw_inputspec_doc!(),
        "\n\nKeywords:\n\n",
        "- `TIMEOUT` (or `UDP_TIMEOUT`): flow timeout (default 5 minutes).\n\
- `STREAMING_TIMEOUT` (or `UDP_STREAMING_TIMEOUT`): timeout of flows of 3 or more packets with a reply (default TIMEOUT).\n\
- `GUARANTEE` (or `UDP_GUARANTEE`): flows are kept this long after each packet (default 5 seconds; 0: no guarantee).\n\
- `DST_ANNO`: set the destination address annotation to the new destination (default true).\n\
- `REPLY_ANNO`: a one-byte annotation (e.g. `PAINT`) recorded from a flow's first packet and set on its replies.\n",
        crate::iprw_common_keywords!()
    ),
    ports: "one or more push inputs (one per INPUTSPEC), one or more push outputs",
    handlers: &[
        H_TABLE_SIZE,
        H_NMAPPINGS,
        H_FAILURES,
        H_PATTERNS,
        H_SIZE,
        H_CAPACITY,
        H_CLEAR,
        H_PATTERN_N,
        H_DROPS,
        H_TABLE,
        H_MAPPINGS,
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Rewriter::new(Kind::Udp)),
};
