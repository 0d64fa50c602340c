//! StoreData: overwrites packet bytes at an offset.

use crate::common::args::read_data;
use crate::prelude::*;

/// Bytes StoreData(GROW true) adds to one packet at most; a packet that
/// would need more is dropped (and counted).
pub const MAX_GROW: usize = 65536;

/// `StoreData(OFFSET, DATA [, MASK, KEYWORDS])`.
#[derive(Default)]
pub struct StoreData {
    offset: usize,
    data: Vec<u8>,
    /// Empty: store every bit of DATA.
    mask: Vec<u8>,
    grow: bool,
    drops: u64,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "StoreData",
    port_count: "1/1",
    processing: "a/a",
    group: "standard",
    signature: "StoreData(OFFSET, DATA [, MASK, KEYWORDS])",
    summary: "Changes packet data.",
    description: "Overwrites packet data starting at byte OFFSET with DATA. Bytes of DATA that \
would fall beyond the end of the packet are not stored, and a packet no longer than OFFSET \
passes unchanged, unless GROW is true: then the packet is first extended with zero bytes to \
hold all of DATA (a packet that would grow by more than 65536 bytes is dropped).\n\n\
With MASK, only the bits set in MASK change: each byte becomes `(old & ~MASK) | (DATA & \
MASK)`.\n\n\
Keyword arguments:\n\n\
- `OFFSET` (unsigned): where DATA goes. Mandatory.\n\
- `DATA` (string; `\\<hex>` for bytes): the data. Mandatory.\n\
- `MASK` (string): bit mask, at least as long as DATA. Default: all bits.\n\
- `GROW` (boolean): extend short packets to hold DATA. Default false.",
    ports: "one input, one output",
    handlers: &[HandlerDoc {
        name: "drops",
        mode: HandlerMode::Read,
        text: "Packets dropped because they would grow too much.",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(StoreData::default()),
};

impl Element for StoreData {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let offset = a.read_mp::<u32>("OFFSET")?;
        let data = read_data(&mut a, "DATA", true)?
            .ok_or_else(|| String::from("missing mandatory DATA argument"))?;
        let mask = read_data(&mut a, "MASK", true)?.unwrap_or_default();
        let grow = a.read::<bool>("GROW")?.unwrap_or(false);
        a.complete()?;
        if !mask.is_empty() && mask.len() < data.len() {
            return Err("MASK must be at least as long as DATA".into());
        }
        self.offset = offset as usize;
        self.data = data;
        self.mask = mask;
        self.grow = grow;
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        let need = self.offset + self.data.len();
        if p.len() < need && self.grow {
            let more = need - p.len();
            if more > MAX_GROW {
                self.drops += 1;
                return None;
            }
            p.put(more);
        } else if p.len() <= self.offset {
            return Some(p);
        }
        let d = p.data_mut();
        let n = self.data.len().min(d.len() - self.offset);
        let dst = &mut d[self.offset..self.offset + n];
        if self.mask.is_empty() {
            dst.copy_from_slice(&self.data[..n]);
        } else {
            for ((b, v), m) in dst.iter_mut().zip(&self.data).zip(&self.mask) {
                *b = (*b & !m) | (v & m);
            }
        }
        Some(p)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        (name == "drops").then(|| Ok(self.drops.to_string()))
    }

    crate::element_any!();
}
