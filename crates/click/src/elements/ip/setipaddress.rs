//! SetIPAddress: sets the destination IP address annotation.

use crate::common::args::parse_anno;
use crate::prelude::*;
use alloc::format;
use click_lang::args::RawString;
use core::net::Ipv4Addr;

/// `SetIPAddress(IPADDR [, ANNO])`.
pub struct SetIPAddress {
    ip: Ipv4Addr,
    anno: usize,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "SetIPAddress",
    port_count: "1/1",
    processing: "a/a",
    group: "ip",
    signature: "SetIPAddress(IPADDR [, KEYWORDS])",
    summary: "Sets destination IP address annotations.",
    description: "Sets the destination IP address annotation of each packet to the static IP \
address IPADDR. Does not touch the packet data.\n\n\
Keyword arguments:\n\n\
- `ANNO`: the 4-byte annotation to set instead of the destination IP address annotation (a \
name such as `DST_IP`, or a byte offset).",
    ports: "one input, one output",
    handlers: &[HandlerDoc {
        name: "addr",
        mode: HandlerMode::ReadWrite,
        text: "The IPADDR address.",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || {
        Box::new(SetIPAddress {
            ip: Ipv4Addr::UNSPECIFIED,
            anno: 0,
        })
    },
};

impl Element for SetIPAddress {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let ip = a.read_mp::<Ipv4Addr>("IPADDR")?;
        let anno = match a.read::<RawString>("ANNO")? {
            Some(s) => parse_anno(&s.0, 4).map_err(|e| format!("ANNO: {}", e))?,
            None => 0,
        };
        a.complete()?;
        self.ip = ip;
        self.anno = anno;
        Ok(())
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        p.anno_mut().set(self.anno, &self.ip.octets());
        Some(p)
    }

    #[inline]
    fn push_batch(&mut self, _port: usize, mut batch: Batch, cx: &Ctx) {
        let v = self.ip.octets();
        for p in batch.iter_mut() {
            p.anno_mut().set(self.anno, &v);
        }
        cx.push_batch(0, batch);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "addr" => Some(Ok(self.ip.to_string())),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "addr" => Some(
                cx.arg_context()
                    .ip(value.trim())
                    .map(|a| self.ip = a)
                    .map_err(|_| String::from("expected IP address")),
            ),
            _ => None,
        }
    }

    crate::element_any!();
}
