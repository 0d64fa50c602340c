//! IPAddrRewriter: rewrites IP packets' source addresses (Basic NAT).

use super::iprewriterbase::*;
use crate::common::iprw::Kind;
use crate::prelude::*;

pub static SPEC: ClassSpec = ClassSpec {
    name: "IPAddrRewriter",
    port_count: "1-/1-",
    processing: "h/h",
    group: "tcpudp",
    signature: "IPAddrRewriter(INPUTSPEC1, ..., INPUTSPECn [, KEYWORDS])",
    summary: "Rewrites IP packets' source addresses (Basic NAT).",
    description: concat!(
        "Basic NAT for any IP protocol: a mapping changes a source address, `SA => SA'`; packets from \
SA get source SA', packets to SA' get destination SA. Lookups try the source address, then \
the destination. Patterns are `pattern SADDR[-SADDR2][#] - FOUTPUT ROUTPUT` (or a prefix \
`ADDR/LEN`, whose .0 and .255 are skipped): the new source address is chosen in the range, \
sequentially with `#`. The IP checksum and TCP/UDP checksums are updated.\n\n",
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
    make: || Box::new(Rewriter::new(Kind::IpAddr)),
};
