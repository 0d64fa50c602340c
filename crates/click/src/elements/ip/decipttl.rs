//! DecIPTTL: decrements IP time-to-live, drops dead packets.

use crate::prelude::*;

/// `DecIPTTL([KEYWORDS])`.
pub struct DecIPTTL {
    active: bool,
    multicast: bool,
    drops: u64,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "DecIPTTL",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "ip",
    signature: "DecIPTTL([KEYWORDS])",
    summary: "Decrements IP time-to-live, drops dead packets.",
    description: "Expects IP packets with the IP header annotation set. If the TTL is 1 or 0 \
(expired), sends the packet to output 1 (or drops it if output 1 is not connected) and counts it. \
Otherwise decrements the TTL, updates the header checksum incrementally (RFC 1624) and sends the \
packet to output 0. Output 1 is usually connected to an ICMPError(..., timeexceeded) element.\n\n\
Keyword arguments:\n\n\
- `ACTIVE` (boolean): if false, pass every packet unchanged. Default true.\n\
- `MULTICAST` (boolean): if false, multicast packets are passed unchanged. Default true.",
    ports: "one input; one or two outputs (1: expired packets)",
    handlers: &[
        HandlerDoc {
            name: "drops",
            mode: HandlerMode::Read,
            text: "Number of expired packets.",
        },
        HandlerDoc {
            name: "active",
            mode: HandlerMode::ReadWrite,
            text: "The ACTIVE setting.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(DecIPTTL::default()),
};

/// What [`DecIPTTL::process`] did with a packet.
pub(crate) enum Verdict {
    /// TTL decremented (or the packet passed unchanged).
    Pass,
    /// TTL 0 or 1: left unchanged.
    Expired,
    /// No readable IP header.
    Bad,
}

impl Default for DecIPTTL {
    fn default() -> Self {
        DecIPTTL {
            active: true,
            multicast: true,
            drops: 0,
        }
    }
}

impl DecIPTTL {
    /// Decrements the TTL of one packet in place (shared with
    /// IPOutputCombo).
    #[inline(always)]
    pub(crate) fn process(&self, p: &mut Packet) -> Verdict {
        if !self.active {
            return Verdict::Pass;
        }
        let Some(mut ip) = p.ip_header_mut() else {
            return Verdict::Bad;
        };
        if !self.multicast && ip.dst_addr().is_multicast() {
            return Verdict::Pass;
        }
        if ip.ttl() <= 1 {
            return Verdict::Expired;
        }
        // Click's incremental update: ~(~old_sum + 0xFEFF) (RFC 1624).
        ip.decrement_ttl();
        Verdict::Pass
    }

    #[cold]
    fn expired(&mut self, p: Packet, cx: &Ctx) {
        self.drops += 1;
        if cx.noutputs() > 1 {
            cx.push(1, p);
        }
    }
}

impl Element for DecIPTTL {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let active = a.read::<bool>("ACTIVE")?.unwrap_or(true);
        let multicast = a.read::<bool>("MULTICAST")?.unwrap_or(true);
        a.complete()?;
        self.active = active;
        self.multicast = multicast;
        Ok(())
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, cx: &Ctx) -> Option<Packet> {
        match self.process(&mut p) {
            Verdict::Pass => Some(p),
            Verdict::Expired => {
                self.expired(p, cx);
                None
            }
            Verdict::Bad => None,
        }
    }

    #[inline]
    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        if let Some(p) = self.simple_action(p, cx) {
            cx.push(0, p);
        }
    }

    #[inline]
    fn push_batch(&mut self, _port: usize, mut batch: Batch, cx: &Ctx) {
        let mut i = 0;
        while i < batch.len() {
            match self.process(&mut batch[i]) {
                Verdict::Pass => i += 1,
                _ => break,
            }
        }
        if i == batch.len() {
            cx.push_batch(0, batch);
            return;
        }
        let rest = batch.split_off(i);
        let mut first = true;
        for mut p in rest {
            // The first packet of `rest` was already examined (and left
            // unchanged).
            let v = if first {
                first = false;
                match p.ip_header() {
                    Some(_) => Verdict::Expired,
                    None => Verdict::Bad,
                }
            } else {
                self.process(&mut p)
            };
            match v {
                Verdict::Pass => batch.push(p),
                Verdict::Expired => self.expired(p, cx),
                Verdict::Bad => {}
            }
        }
        cx.push_batch(0, batch);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "drops" => Some(Ok(self.drops.to_string())),
            "active" => Some(Ok(self.active.to_string())),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "active" => Some(click_lang::args::parse_bool(value.trim()).map(|v| self.active = v)),
            _ => None,
        }
    }

    crate::element_any!();
}
