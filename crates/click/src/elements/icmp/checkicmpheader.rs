//! CheckICMPHeader: checks ICMP headers.

use crate::common::drops::DropStats;
use crate::prelude::*;
use alloc::format;
use click_wire::icmp::icmp_type;
use click_wire::{ip_proto, IcmpPacket};

const REASONS: [&str; 3] = ["not ICMP", "bad packet length", "bad ICMP checksum"];

/// `CheckICMPHeader([KEYWORDS])`.
#[derive(Default)]
pub struct CheckICMPHeader {
    stats: DropStats<3>,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "CheckICMPHeader",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "icmp",
    signature: "CheckICMPHeader([KEYWORDS])",
    summary: "Checks ICMP header on ICMP packets.",
    description: "Expects ICMP packets with their IP header annotation set (CheckIPHeader or \
MarkIPHeader). Checks that the packet is ICMP, that it holds the 8-byte ICMP header, that error \
messages (unreachable, source quench, redirect, time exceeded, parameter problem) quote at least \
an IP header and 8 bytes (28 bytes), that timestamp requests and replies are exactly 20 bytes and \
information requests and replies exactly 8, and that the ICMP checksum is valid. Valid packets \
leave on output 0 unchanged.\n\n\
Invalid packets leave on output 1 if it exists, and are dropped otherwise. The first invalid \
packet (every one with VERBOSE) is reported on standard error as \
`NAME: ICMP header check failed: REASON`.\n\n\
Keyword arguments:\n\n\
- `VERBOSE` (boolean): report every bad packet. Default false.\n\
- `DETAILS` (boolean): keep per-reason counts for `drop_details`. Default false.",
    ports: "one input; one or two outputs (1: invalid packets)",
    handlers: crate::common::drops::DROP_HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(CheckICMPHeader::default()),
};

fn check(p: &Packet) -> Result<(), usize> {
    match p.ip_header() {
        Some(ip) if ip.protocol() == ip_proto::ICMP => {}
        _ => return Err(0),
    }
    let Some(icmp) = p.transport_header() else {
        return Err(1);
    };
    let len = icmp.len();
    let Ok(icmp) = IcmpPacket::new_checked(icmp) else {
        return Err(1);
    };
    let ok = match icmp.msg_type() {
        icmp_type::UNREACH
        | icmp_type::TIME_EXCEEDED
        | icmp_type::PARAM_PROBLEM
        | icmp_type::SOURCE_QUENCH
        | icmp_type::REDIRECT => len >= 8 + 28,
        icmp_type::TIMESTAMP | icmp_type::TIMESTAMP_REPLY => len == 20,
        icmp_type::INFO_REQUEST | icmp_type::INFO_REPLY => len == 8,
        _ => true,
    };
    if !ok {
        return Err(1);
    }
    if !icmp.verify_checksum() {
        return Err(2);
    }
    Ok(())
}

impl CheckICMPHeader {
    #[cold]
    fn drop(&mut self, reason: usize, p: Packet, cx: &Ctx) {
        if self.stats.record(reason) {
            cx.error_line(&format!(
                "{}: ICMP header check failed: {}",
                cx.name(),
                REASONS[reason]
            ));
        }
        if cx.noutputs() > 1 {
            cx.push(1, p);
        }
    }
}

impl Element for CheckICMPHeader {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        self.stats.configure(&mut a)?;
        a.complete()?;
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    fn simple_action(&mut self, p: Packet, cx: &Ctx) -> Option<Packet> {
        match check(&p) {
            Ok(()) => Some(p),
            Err(r) => {
                self.drop(r, p, cx);
                None
            }
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "drops" | "drop_details" => self.stats.read_handler(name, &REASONS),
            _ => None,
        }
    }

    crate::element_any!();
}
