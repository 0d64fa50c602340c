//! SetTimestampDelta: replaces packets' timestamps with deltas.

use crate::prelude::*;
use alloc::format;

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum Kind {
    /// From the first nonzero timestamp seen.
    #[default]
    Range,
    /// From the timestamp to now.
    Now,
    /// From the packet's first-timestamp annotation.
    First,
}

/// `SetTimestampDelta([TYPE])`.
#[derive(Default)]
pub struct SetTimestampDelta {
    kind: Kind,
    first: Timestamp,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "SetTimestampDelta",
    port_count: "1/1",
    processing: "a/a",
    group: "analysis",
    signature: "SetTimestampDelta([KEYWORDS])",
    summary: "Replaces packet timestamps with deltas.",
    description: "Replaces each nonzero timestamp annotation with a delta; zero timestamps \
stay zero.\n\nKeyword arguments:\n\n\
- `TYPE` (word): `RANGE` (the default), the time since the first nonzero timestamp this \
element saw; `NOW`, the time from the timestamp to now; `FIRST`, the time since the packet's \
\"first timestamp\" annotation.",
    ports: "one input, one output",
    handlers: &[
        HandlerDoc {
            name: "first",
            mode: HandlerMode::Read,
            text: "The first nonzero timestamp seen (0.000000 if none).",
        },
        HandlerDoc {
            name: "reset",
            mode: HandlerMode::Write,
            text: "Forgets the first timestamp: deltas count from the next nonzero one.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(SetTimestampDelta::default()),
};

impl Element for SetTimestampDelta {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let t = a.read::<String>("TYPE")?;
        a.complete()?;
        self.kind = match t.as_deref().unwrap_or("RANGE") {
            "RANGE" => Kind::Range,
            "NOW" => Kind::Now,
            "FIRST" => Kind::First,
            _ => return Err("bad TYPE".into()),
        };
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, cx: &Ctx) -> Option<Packet> {
        let tv = p.timestamp();
        if !tv.is_zero() {
            let d = match self.kind {
                Kind::Range => {
                    if self.first.is_zero() {
                        self.first = tv;
                    }
                    tv - self.first
                }
                Kind::Now => cx.now() - tv,
                Kind::First => tv - p.anno().first_timestamp(),
            };
            p.set_timestamp(d);
        }
        Some(p)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        (name == "first").then(|| Ok(format!("{}\n", self.first)))
    }

    fn write_handler(&mut self, name: &str, _value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        (name == "reset").then(|| {
            self.first = Timestamp::default();
            Ok(())
        })
    }

    crate::element_any!();
}
