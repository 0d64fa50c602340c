//! CheckARPHeader: checks ARP headers.

use crate::common::drops::DropStats;
use crate::prelude::*;
use alloc::format;

const REASONS: [&str; 4] = [
    "tiny packet",
    "too small for addresses",
    "bad hardware type/length",
    "bad protocol type/length",
];

/// `CheckARPHeader([OFFSET, KEYWORDS])`.
#[derive(Default)]
pub struct CheckARPHeader {
    offset: usize,
    stats: DropStats<4>,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "CheckARPHeader",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "arp",
    signature: "CheckARPHeader([OFFSET, KEYWORDS])",
    summary: "Checks ARP header.",
    description: "Input packets should have ARP headers starting OFFSET bytes in. Checks that \
the packet holds the 8-byte fixed header and the four addresses its length fields announce, that \
an Ethernet hardware type (1) comes with 6-byte hardware addresses, and that an IPv4 protocol \
type (0x0800) comes with 4-byte protocol addresses (IPv6, 0x86DD, with 16-byte ones). Valid \
packets get their network header annotation set to the ARP header (its length covering the \
addresses) and leave on output 0.\n\n\
Invalid packets leave on output 1 if it exists, and are dropped otherwise. The first invalid \
packet (every one with VERBOSE) is reported on standard error as \
`ARP header check failed: REASON`.\n\n\
Keyword arguments:\n\n\
- `OFFSET` (unsigned): byte position of the ARP header. Default 0.\n\
- `VERBOSE` (boolean): report every bad packet. Default false.\n\
- `DETAILS` (boolean): keep per-reason counts for `drop_details`. Default false.",
    ports: "one input; one or two outputs (1: invalid packets)",
    handlers: crate::common::drops::DROP_HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(CheckARPHeader::default()),
};

impl CheckARPHeader {
    /// Checks one packet; on success sets the network header.
    fn check(&self, p: &mut Packet) -> Result<(), usize> {
        let off = self.offset;
        let d = p.data();
        if d.len() < off + 8 {
            return Err(0);
        }
        let a = &d[off..];
        let hrd = u16::from_be_bytes([a[0], a[1]]);
        let pro = u16::from_be_bytes([a[2], a[3]]);
        let (hln, pln) = (a[4] as usize, a[5] as usize);
        let hlen = 8 + 2 * hln + 2 * pln;
        if a.len() < hlen {
            return Err(1);
        }
        if hrd == 1 && hln != 6 {
            return Err(2);
        }
        if (pro == 0x0800 && pln != 4) || (pro == 0x86dd && pln != 16) {
            return Err(3);
        }
        p.set_network_header(off, hlen);
        Ok(())
    }

    #[cold]
    fn drop(&mut self, reason: usize, p: Packet, cx: &Ctx) {
        if self.stats.record(reason) {
            cx.error_line(&format!("ARP header check failed: {}", REASONS[reason]));
        }
        if cx.noutputs() > 1 {
            cx.push(1, p);
        }
    }
}

impl Element for CheckARPHeader {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let offset = a.read_p::<usize>("OFFSET")?.unwrap_or(0);
        self.stats.configure(&mut a)?;
        a.complete()?;
        self.offset = offset;
        Ok(())
    }

    fn push(&mut self, _port: usize, mut p: Packet, cx: &Ctx) {
        match self.check(&mut p) {
            Ok(()) => cx.push(0, p),
            Err(r) => self.drop(r, p, cx),
        }
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    fn simple_action(&mut self, mut p: Packet, cx: &Ctx) -> Option<Packet> {
        match self.check(&mut p) {
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
