//! CheckLength: sends packets longer than a limit to a second output.

use crate::prelude::*;

/// `CheckLength(LENGTH)`.
#[derive(Default)]
pub struct CheckLength {
    max: u32,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "CheckLength",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "standard",
    signature: "CheckLength(LENGTH)",
    summary: "Drops large packets.",
    description: "Checks every packet's length against LENGTH (unsigned, mandatory). If the \
packet has length LENGTH or smaller, it is sent to output 0; otherwise, it is pushed to output 1 \
(or dropped if there is no output 1). Works in push and pull.",
    ports: "one input; one or two outputs (1: packets longer than LENGTH, push)",
    handlers: &[HandlerDoc {
        name: "length",
        mode: HandlerMode::ReadWrite,
        text: "The LENGTH limit.",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(CheckLength::default()),
};

impl Element for CheckLength {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let max = a.read_mp::<u32>("LENGTH")?;
        a.complete()?;
        self.max = max;
        Ok(())
    }

    #[inline]
    fn simple_action(&mut self, p: Packet, cx: &Ctx) -> Option<Packet> {
        if p.len() as u64 > u64::from(self.max) {
            if cx.noutputs() > 1 {
                cx.push(1, p);
            }
            None
        } else {
            Some(p)
        }
    }

    #[inline]
    fn push_batch(&mut self, _port: usize, mut batch: Batch, cx: &Ctx) {
        let max = self.max as usize;
        if batch.iter().all(|p| p.len() <= max) {
            cx.push_batch(0, batch);
            return;
        }
        let (good, bad): (Batch, Batch) = batch.drain(..).partition(|p| p.len() <= max);
        cx.push_batch(0, good);
        if cx.noutputs() > 1 {
            cx.push_batch(1, bad);
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "length" => Some(Ok(self.max.to_string())),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "length" => Some(
                click_lang::args::parse_u64(value.trim())
                    .ok()
                    .and_then(|v| u32::try_from(v).ok())
                    .map(|v| self.max = v)
                    .ok_or_else(|| String::from("expected unsigned integer")),
            ),
            _ => None,
        }
    }

    crate::element_any!();
}
