//! IPAddrPairRewriter: rewrites IP packets' address pairs.

use super::iprewriterbase::*;
use crate::common::iprw::Kind;
use crate::prelude::*;

pub static SPEC: ClassSpec = ClassSpec {
    name: "IPAddrPairRewriter",
    port_count: "1-/1-",
    processing: "h/h",
    group: "tcpudp",
    signature: "IPAddrPairRewriter(INPUTSPEC1, ..., INPUTSPECn [, KEYWORDS])",
    summary: "Rewrites IP packets' address pairs.",
    description: concat!(
        "Basic NAT keyed by (source, destination) address pair: a mapping `(SA, DA) => (SA', DA')` \
rewrites both addresses of any IP protocol, and the reply pair back. Patterns are \
`pattern SADDR[-SADDR2][#] DADDR FOUTPUT ROUTPUT`. The IP checksum and TCP/UDP checksums are \
updated.\n\n",
        crate::iprw_inputspec_doc!(),
        "\n\nKeywords:\n\n",
        "- `TIMEOUT`: flow timeout (default 2 hours).\n\
- `GUARANTEE`: flows are kept this long after each packet (default 5 seconds).\n\
- `REPLY_ANNO`: a one-byte annotation recorded from a flow's first packet and set on its replies.\n",
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
    make: || Box::new(Rewriter::new(Kind::IpAddrPair)),
};
