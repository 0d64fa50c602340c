//! Strip and Unstrip: remove or restore bytes at the front of packets.

use crate::prelude::*;

/// `Strip(LENGTH)`: removes LENGTH bytes from the front of each packet.
#[derive(Default)]
pub struct Strip {
    n: usize,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "Strip",
    port_count: "1/1",
    processing: "a/a",
    group: "standard",
    signature: "Strip(LENGTH)",
    summary: "Strips bytes from front of packets.",
    description: "Deletes the first LENGTH bytes from each packet (all of it, when the packet is \
shorter). The bytes stay in the buffer's headroom, so Unstrip can restore them.",
    ports: "one input, one output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Strip::default()),
};

impl Element for Strip {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let n = a.read_mp::<u32>("LENGTH")?;
        a.complete()?;
        self.n = n as usize;
        Ok(())
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        let n = self.n.min(p.len());
        p.pull(n);
        Some(p)
    }

    fn push_batch(&mut self, _port: usize, mut b: Batch, cx: &Ctx) {
        for p in b.iter_mut() {
            let n = self.n.min(p.len());
            p.pull(n);
        }
        cx.push_batch(0, b);
    }

    crate::element_any!();
}

/// `Unstrip(LENGTH)`: puts LENGTH bytes back at the front of each packet.
#[derive(Default)]
pub struct Unstrip {
    n: usize,
}

pub static UNSTRIP_SPEC: ClassSpec = ClassSpec {
    name: "Unstrip",
    port_count: "1/1",
    processing: "a/a",
    group: "standard",
    signature: "Unstrip(LENGTH)",
    summary: "Unstrips bytes from front of packets.",
    description: "Puts LENGTH bytes back at the front of each packet: the bytes a previous Strip \
removed come back as they were (new headroom is zero-filled).",
    ports: "one input, one output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Unstrip::default()),
};

#[inline]
fn unstrip(p: &mut Packet, n: usize) {
    if n <= p.headroom() {
        p.shift_head(-(n as isize));
    } else {
        p.push(n);
    }
}

impl Element for Unstrip {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let n = a.read_mp::<u32>("LENGTH")?;
        a.complete()?;
        self.n = n as usize;
        Ok(())
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        unstrip(&mut p, self.n);
        Some(p)
    }

    fn push_batch(&mut self, _port: usize, mut b: Batch, cx: &Ctx) {
        for p in b.iter_mut() {
            unstrip(p, self.n);
        }
        cx.push_batch(0, b);
    }

    crate::element_any!();
}

/// `StripToNetworkHeader()`: strips everything before the network header.
#[derive(Default)]
pub struct StripToNetworkHeader;

pub static STRIPTONETWORKHEADER_SPEC: ClassSpec = ClassSpec {
    name: "StripToNetworkHeader",
    port_count: "1/1",
    processing: "a/a",
    group: "standard",
    signature: "StripToNetworkHeader()",
    summary: "Strips everything preceding network header.",
    description: "Strips any data preceding the network header (as MarkIPHeader, CheckIPHeader \
and friends set it) from every packet. If the network header is before the start of the packet \
data (a header that was stripped), the data start moves back to it. Packets without a network \
header pass unchanged.",
    ports: "one input, one output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(StripToNetworkHeader),
};

#[inline]
fn strip_to_network(p: &mut Packet) {
    if let Some(off) = p.network_header_offset() {
        p.shift_head(off);
    }
}

impl Element for StripToNetworkHeader {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        strip_to_network(&mut p);
        Some(p)
    }

    fn push_batch(&mut self, _port: usize, mut b: Batch, cx: &Ctx) {
        for p in b.iter_mut() {
            strip_to_network(p);
        }
        cx.push_batch(0, b);
    }

    crate::element_any!();
}
