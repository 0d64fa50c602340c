//! StoreEtherAddress: stores an Ethernet address into the packet.

use crate::common::args::parse_anno;
use crate::prelude::*;
use alloc::format;
use click_lang::args::{parse_u64, RawString};
use click_wire::EtherAddress;

/// `StoreEtherAddress(ADDR, OFFSET [, ANNO])`.
#[derive(Default)]
pub struct StoreEtherAddress {
    addr: [u8; 6],
    offset: usize,
    anno: Option<usize>,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "StoreEtherAddress",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "ethernet",
    signature: "StoreEtherAddress(ADDR, OFFSET [, ANNO])",
    summary: "Stores Ethernet address in packet.",
    description: "Writes an Ethernet address into the packet at OFFSET: ADDR, or the 6-byte \
annotation ANNO (exactly one must be given). OFFSET may be `src` (6), `dst` (0) or a byte offset. \
Packets too short for the address go to output 1 if connected, and are dropped otherwise.",
    ports: "one input; one or two outputs (1: packets too short)",
    handlers: &[HandlerDoc {
        name: "addr",
        mode: HandlerMode::ReadWrite,
        text: "The address ADDR.",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(StoreEtherAddress::default()),
};

impl Element for StoreEtherAddress {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let addr = a.read_p::<[u8; 6]>("ADDR")?;
        let off = a.read_mp::<RawString>("OFFSET")?.0;
        let anno = match a.read::<RawString>("ANNO")? {
            Some(s) => Some(parse_anno(&s.0, 6).map_err(|e| format!("ANNO: {}", e))?),
            None => None,
        };
        a.complete()?;
        if addr.is_some() == anno.is_some() {
            return Err("must specify exactly one of ADDR/ANNO".into());
        }
        let offset = match off.to_ascii_lowercase().as_str() {
            "src" => 6,
            "dst" => 0,
            o => parse_u64(o)
                .ok()
                .and_then(|v| usize::try_from(v).ok())
                .filter(|v| v.checked_add(6).is_some())
                .ok_or_else(|| String::from("type mismatch: bad OFFSET"))?,
        };
        self.addr = addr.unwrap_or_default();
        self.offset = offset;
        self.anno = anno;
        Ok(())
    }

    #[inline]
    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        if self.offset + 6 <= p.len() {
            if let Some(p) = self.simple_action(p, cx) {
                cx.push(0, p);
            }
        } else if cx.noutputs() > 1 {
            cx.push(1, p);
        }
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        if self.offset + 6 > p.len() {
            return None;
        }
        let v = match self.anno {
            Some(a) => p.anno().get::<6>(a),
            None => self.addr,
        };
        p.data_mut()[self.offset..self.offset + 6].copy_from_slice(&v);
        Some(p)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "addr" => Some(Ok(EtherAddress(self.addr).to_string())),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "addr" => Some(cx.arg_context().ether(value.trim()).map(|a| self.addr = a)),
            _ => None,
        }
    }

    crate::element_any!();
}
