//! ICMPPingRewriter: rewrites ICMP echo requests and replies.

use super::iprewriterbase::*;
use crate::common::iprw::Kind;
use crate::prelude::*;

pub static SPEC: ClassSpec = ClassSpec {
    name: "ICMPPingRewriter",
    port_count: "1-/1-",
    processing: "h/h",
    group: "tcpudp",
    signature: "ICMPPingRewriter(INPUTSPEC1, ..., INPUTSPECn [, KEYWORDS])",
    summary: "Rewrites ICMP echo requests and replies.",
    description: concat!(
        "NAT for pings: an echo request (SRC, DST, IDENT) is rewritten by its input's INPUTSPEC to \
(SRC', DST', IDENT') (the pattern's source port range chooses identifiers, e.g. \
`pattern 2.0.0.2 - 0-65535# 0 1`), and replies to it are rewritten back. Unexpected echo \
replies, other ICMP types and other protocols are dropped unless their input is `pass`. The \
ICMP checksum is updated.\n\n",
        crate::iprw_inputspec_doc!(),
        "\n\nKeywords:\n\n",
        "- `TIMEOUT`: flow timeout (default 5 minutes).\n\
- `GUARANTEE`: flows are kept this long after each packet (default 5 seconds).\n\
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
    make: || Box::new(Rewriter::new(Kind::IcmpPing)),
};
