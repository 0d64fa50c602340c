//! IPRewriter: rewrites TCP/UDP packets' addresses and ports (NAPT).

use super::iprewriterbase::*;
use crate::common::iprw::Kind;
use crate::prelude::*;

pub static SPEC: ClassSpec = ClassSpec {
    name: "IPRewriter",
    port_count: "1-/1-",
    processing: "h/h",
    group: "tcpudp",
    signature: "IPRewriter(INPUTSPEC1, ..., INPUTSPECn [, KEYWORDS])",
    summary: "Rewrites TCP/UDP packets' addresses and ports (NAPT).",
    description: concat!(
        "Rewrites the source address, source port, destination address and/or destination port of TCP \
and UDP packets, with their checksums: a network address/port translator. Mappings live in two \
tables, TCP and UDP, keyed by (SA, SP, DA, DP). A packet that matches a mapping, in either \
direction and whatever its input, is rewritten and leaves on the mapping's output; the first \
packet of a flow installs `(SA, SP, DA, DP) => (SA', SP', DA', DP') [*FOUTPUT]` and the reply \
`(DA', DP', SA', SP') => (DA, DP, SA, SP) [*ROUTPUT]`. Non-TCP/UDP packets, later fragments and \
packets with less than 8 bytes of transport header are dropped unless their input is `pass`.\n\n",
        crate::iprw_inputspec_doc!(),
        "\n\nKeywords:\n\n",
        "- `TCP_TIMEOUT` (or `TIMEOUT`): timeout of TCP flows with data seen both ways (default 24 hours).\n\
- `TCP_DONE_TIMEOUT`: timeout of TCP flows closed (FIN both ways, or RST; default 4 minutes).\n\
- `TCP_NODATA_TIMEOUT`: timeout of the other TCP flows (default 5 minutes).\n\
- `TCP_GUARANTEE` (or `GUARANTEE`): TCP flows are kept this long after each packet (default 5 seconds; 0: no guarantee).\n\
- `UDP_TIMEOUT`: timeout of UDP flows (default 5 minutes).\n\
- `UDP_STREAMING_TIMEOUT`: timeout of UDP flows of 3 or more packets with a reply (default UDP_TIMEOUT).\n\
- `UDP_GUARANTEE`: as TCP_GUARANTEE, for UDP (default 5 seconds).\n\
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
        HandlerDoc {
            name: "tcp_table",
            mode: HandlerMode::Read,
            text: "The TCP mappings, one line per direction, as Click prints them: `(SA, SP, DA, DP) => (SA', SP', DA', DP') [*FOUT ROUT] iINPUT expSECONDS` (the star marks the line's own output; `tcp_mappings` is the deprecated name).",
        },
        HandlerDoc {
            name: "udp_table",
            mode: HandlerMode::Read,
            text: "The UDP mappings, as `tcp_table` (`udp_mappings` is the deprecated name).",
        },
        HandlerDoc {
            name: "tcp_lookup",
            mode: HandlerMode::Read,
            text: "With parameter `SADDR SPORT DADDR DPORT`: the flow a TCP packet with that flow ID is rewritten to, in the same form; nothing when there is no mapping.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Rewriter::new(Kind::Ip)),
};
