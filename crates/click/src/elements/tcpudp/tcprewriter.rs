//! TCPRewriter: rewrites TCP packets' addresses and ports.

use super::iprewriterbase::*;
use crate::common::iprw::Kind;
use crate::prelude::*;

pub static SPEC: ClassSpec = ClassSpec {
    name: "TCPRewriter",
    port_count: "1-/1-",
    processing: "h/h",
    group: "tcpudp",
    signature: "TCPRewriter(INPUTSPEC1, ..., INPUTSPECn [, KEYWORDS])",
    summary: "Rewrites TCP packets' addresses, ports, and sequence numbers.",
    description: concat!(
        "IPRewriter for TCP only: one table, TCP flows. Other packets, later fragments and packets with \
less than 8 bytes of TCP header are dropped unless their input is `pass`.\n\n\
Each flow can also shift its sequence numbers, as FTPPortMapper asks when it changes the length \
of a PORT command: per direction, a list of transitions \"from sequence number S on, add D\". A \
packet's sequence number gets the delta of the newest transition at or before it (so a \
retransmission of older data keeps the older delta); its acknowledgement number and SACK blocks, \
which speak of the other direction's rewritten numbers, get that direction's delta taken off; \
the TCP checksum is updated incrementally. A transition is forgotten (its delta then applies to \
every sequence number) once the direction's sequence numbers are 2^30 past it. New flows start \
without deltas; the `table` handler shows a direction's current one as ` seq +D`. (IPRewriter's \
TCP flows do the same.)\n\n",
        crate::iprw_inputspec_doc!(),
        "\n\nKeywords:\n\n",
        "- `TCP_TIMEOUT` (or `TIMEOUT`): timeout of flows with data seen both ways (default 24 hours).\n\
- `TCP_DONE_TIMEOUT`: timeout of closed flows (FIN both ways, or RST; default 4 minutes).\n\
- `TCP_NODATA_TIMEOUT`: timeout of the other flows (default 5 minutes).\n\
- `TCP_GUARANTEE` (or `GUARANTEE`): flows are kept this long after each packet (default 5 seconds; 0: no guarantee).\n\
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
        HandlerDoc {
            name: "lookup",
            mode: HandlerMode::Read,
            text: "With parameter `SADDR SPORT DADDR DPORT`: the flow a packet with that flow ID is rewritten to, in the same form; nothing when there is no mapping.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Rewriter::new(Kind::Tcp)),
};
