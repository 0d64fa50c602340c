//! Align: moves packet data to an address alignment.

use crate::prelude::*;

/// `Align(MODULUS, OFFSET)`.
#[derive(Default)]
pub struct Align {
    mask: usize,
    offset: usize,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "Align",
    port_count: "1/1",
    processing: "a/a",
    group: "standard",
    signature: "Align(MODULUS, OFFSET)",
    summary: "Aligns packet data.",
    description: "Makes each packet's data start at a memory address that is OFFSET modulo \
MODULUS, moving the data (and its header annotations) later in its buffer when it is not. \
MODULUS is 2, 4 or 8; OFFSET is smaller than MODULUS.",
    ports: "one input, one output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Align::default()),
};

impl Element for Align {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let modulus = a.read_mp::<u32>("MODULUS")?;
        let offset = a.read_mp::<i32>("OFFSET")?;
        a.complete()?;
        if !matches!(modulus, 2 | 4 | 8) {
            return Err("MODULUS must be 2, 4, or 8".into());
        }
        if offset >= modulus as i32 {
            return Err("OFFSET must be smaller than MODULUS".into());
        }
        self.mask = modulus as usize - 1;
        // a negative OFFSET (Click keeps it in an int) never matches
        // `address & mask`; take it modulo MODULUS
        self.offset = (offset.rem_euclid(modulus as i32)) as usize;
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        let at = p.data().as_ptr() as usize & self.mask;
        if at != self.offset {
            let delta = (self.offset + self.mask + 1 - at) & self.mask;
            p.shift_data(delta);
        }
        Some(p)
    }

    crate::element_any!();
}
