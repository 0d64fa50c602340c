//! Truncate: limits packets to a length.

use crate::packet::EXTRA_LENGTH_ANNO_OFFSET;
use crate::prelude::*;

/// `Truncate(LENGTH [, KEYWORDS])`.
pub struct Truncate {
    nbytes: usize,
    extra_anno: bool,
}

impl Default for Truncate {
    fn default() -> Self {
        Truncate {
            nbytes: 0,
            extra_anno: true,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "Truncate",
    port_count: "1/1",
    processing: "a/a",
    group: "standard",
    signature: "Truncate(LENGTH [, KEYWORDS])",
    summary: "Limits packet length.",
    description: "Shortens packets longer than LENGTH bytes to LENGTH bytes, removing bytes from \
the end; shorter packets pass unchanged.\n\nKeyword arguments:\n\n\
- `LENGTH` (unsigned): the maximum length. Mandatory.\n\
- `EXTRA_LENGTH` (boolean): add the removed bytes to the packet's extra-length annotation (as \
ToIPSummaryDump and ToDump count them). Default true.",
    ports: "one input, one output",
    handlers: &[
        HandlerDoc {
            name: "length",
            mode: HandlerMode::ReadWrite,
            text: "The LENGTH.",
        },
        HandlerDoc {
            name: "extra_length",
            mode: HandlerMode::ReadWrite,
            text: "The EXTRA_LENGTH setting.",
        },
    ],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(Truncate::default()),
};

impl Element for Truncate {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let n = a.read_mp::<u32>("LENGTH")?;
        let extra = a.read::<bool>("EXTRA_LENGTH")?.unwrap_or(true);
        a.complete()?;
        self.nbytes = n as usize;
        self.extra_anno = extra;
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        let len = p.len();
        if len > self.nbytes {
            let cut = len - self.nbytes;
            p.take(cut);
            if self.extra_anno {
                let a = p.anno_mut();
                let old = a.u32_at(EXTRA_LENGTH_ANNO_OFFSET);
                a.set_u32_at(EXTRA_LENGTH_ANNO_OFFSET, old.wrapping_add(cut as u32));
            }
        }
        Some(p)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "length" => Some(Ok(self.nbytes.to_string())),
            "extra_length" => Some(Ok(self.extra_anno.to_string())),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        let v = click_lang::args::uncomment(value);
        match name {
            "length" => Some(
                click_lang::args::parse_u64(&v)
                    .ok()
                    .filter(|n| *n <= u64::from(u32::MAX))
                    .map(|n| self.nbytes = n as usize)
                    .ok_or_else(|| String::from("LENGTH: expected unsigned integer")),
            ),
            "extra_length" => Some(
                click_lang::args::parse_bool(&v)
                    .map(|b| self.extra_anno = b)
                    .map_err(|_| String::from("EXTRA_LENGTH: expected boolean")),
            ),
            _ => None,
        }
    }

    crate::element_any!();
}
