//! SourceIPHashMapper: a mapper choosing patterns by consistent hashing
//! of the source address.

use super::rripmapper::IPMapperElement;
use crate::prelude::*;

pub static SPEC: ClassSpec = ClassSpec {
    name: "SourceIPHashMapper",
    port_count: "0/0",
    processing: "a/a",
    group: "tcpudp",
    signature: "SourceIPHashMapper(NNODES SEED, PATTERN1 ID1, ..., PATTERNn IDn)",
    summary: "Source IP hash mapper for IPRewriter(n).",
    description: "An IPMapper like RoundRobinIPMapper, but a flow's pattern is chosen by \
consistent hashing of its source address, so one source keeps mapping to the same server even \
as servers come and go. The first argument gives the number of hash-ring nodes per server and \
the ring's random seed; each PATTERN (`SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT`) ends with its \
server ID. (The ring is drawn from this implementation's generator, so which server a source \
gets differs from Click's.)",
    ports: "none",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(IPMapperElement::new(false)),
};
