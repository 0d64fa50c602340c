//! SetTimestamp: stores a time in the packet's timestamp annotation.

use crate::prelude::*;
use click_lang::args::Seconds;

/// `SetTimestamp([TIMESTAMP, FIRST])`.
#[derive(Default)]
pub struct SetTimestamp {
    /// The fixed time to store, or `None` for the current time.
    time: Option<Timestamp>,
    /// Set the first-timestamp annotation instead.
    first: bool,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "SetTimestamp",
    port_count: "1/1",
    processing: "a/a",
    group: "standard",
    signature: "SetTimestamp([TIMESTAMP, KEYWORDS])",
    summary: "Stores the time in the packet's timestamp annotation.",
    description: "Stores TIMESTAMP (seconds since the epoch, e.g. `1000000000.5`) in each \
packet's timestamp annotation; without TIMESTAMP (or with a negative one), the current time \
when the packet arrives (the simulated time under `--simtime`).\n\n\
Keyword arguments:\n\n\
- `FIRST` (boolean): set the packet's \"first timestamp\" annotation instead of its timestamp \
annotation. Default false.\n\
- `DELTA` (boolean): refused, as in Click (SetTimestampDelta replaced it).",
    ports: "one input, one output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(SetTimestamp::default()),
};

impl SetTimestamp {
    #[inline]
    fn stamp(&self, p: &mut Packet, now: Timestamp) {
        let t = self.time.unwrap_or(now);
        if self.first {
            p.anno_mut().set_first_timestamp(t);
        } else {
            p.set_timestamp(t);
        }
    }
}

impl Element for SetTimestamp {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let t = a.read_p::<Seconds>("TIMESTAMP")?;
        let first = a.read::<bool>("FIRST")?.unwrap_or(false);
        let delta = a.read::<bool>("DELTA")?.unwrap_or(false);
        a.complete()?;
        if delta {
            return Err(
                "SetTimestamp(DELTA) is deprecated, use SetTimestampDelta(TYPE FIRST)".into(),
            );
        }
        self.time = t.filter(|s| s.0 >= 0).map(|s| Timestamp::from_nsec(s.0));
        self.first = first;
        Ok(())
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, cx: &Ctx) -> Option<Packet> {
        self.stamp(&mut p, cx.now());
        Some(p)
    }

    fn push_batch(&mut self, _port: usize, mut batch: Batch, cx: &Ctx) {
        let now = cx.now();
        for p in batch.iter_mut() {
            self.stamp(p, now);
        }
        cx.push_batch(0, batch);
    }

    crate::element_any!();
}
