//! AdjustTimestamp: adds a (possibly negative) time to packets' timestamps.

use crate::common::handlers::clean;
use crate::prelude::*;
use alloc::format;
use click_lang::args::{parse_time_ns, Seconds};

/// `AdjustTimestamp([TIME, FIRST, ALL])`.
#[derive(Default)]
pub struct AdjustTimestamp {
    delta: i64,
    first: bool,
    all: bool,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "AdjustTimestamp",
    port_count: "1/1",
    processing: "a/a",
    group: "analysis",
    signature: "AdjustTimestamp([TIME, KEYWORDS])",
    summary: "Adjusts the timestamp annotation by a time.",
    description: "Adds TIME, a signed time (`-1`, `+1.5`, `20ms`; default 0), to each packet's \
timestamp annotation. As in Click, a zero timestamp is left alone unless ALL is true.\n\n\
Keyword arguments:\n\n\
- `FIRST` (boolean): adjust the \"first timestamp\" annotation instead. Default false.\n\
- `ALL` (boolean): adjust zero timestamps too. Default false.",
    ports: "one input, one output",
    handlers: &[HandlerDoc {
        name: "time",
        mode: HandlerMode::ReadWrite,
        text: "TIME, the adjustment.",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(AdjustTimestamp::default()),
};

impl Element for AdjustTimestamp {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let t = a.read_p::<Seconds>("TIME")?.map_or(0, |s| s.0);
        let first = a.read::<bool>("FIRST")?.unwrap_or(false);
        let all = a.read::<bool>("ALL")?.unwrap_or(false);
        a.complete()?;
        self.delta = t;
        self.first = first;
        self.all = all;
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        let ts = if self.first {
            p.anno().first_timestamp()
        } else {
            p.timestamp()
        };
        if !ts.is_zero() || self.all {
            let t = ts.add_nsec(self.delta);
            if self.first {
                p.anno_mut().set_first_timestamp(t);
            } else {
                p.set_timestamp(t);
            }
        }
        Some(p)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        (name == "time").then(|| Ok(Timestamp::from_nsec(self.delta).to_string()))
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        (name == "time").then(|| {
            parse_time_ns(&clean(value))
                .map(|t| self.delta = t)
                .map_err(|e| format!("time: {e}"))
        })
    }

    crate::element_any!();
}
