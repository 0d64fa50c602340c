//! Shaper and BandwidthShaper: pull-through rate limiters.

use crate::common::rate::GapRate;
use crate::common::{handlers, unparse};
use crate::prelude::*;
use click_lang::args::Bandwidth;

/// `Shaper(RATE)` and `BandwidthShaper(RATE)`.
pub struct Shaper {
    rate: GapRate,
    bandwidth: bool,
}

impl Shaper {
    fn new(bandwidth: bool) -> Shaper {
        Shaper {
            rate: GapRate::default(),
            bandwidth,
        }
    }

    fn read_rate(&self, config: &str) -> Result<u64, String> {
        let mut a = Args::new(config);
        let r = if self.bandwidth {
            let b = a.read_mp::<Bandwidth>("RATE")?.0;
            if b > u64::from(u32::MAX) {
                return Err("RATE: out of range".into());
            }
            b
        } else {
            u64::from(a.read_mp::<u32>("RATE")?)
        };
        a.complete()?;
        Ok(r)
    }

    fn unparse_rate(&self) -> String {
        if self.bandwidth {
            unparse::unparse_bandwidth(self.rate.rate())
        } else {
            self.rate.rate().to_string()
        }
    }
}

const HANDLERS: &[HandlerDoc] = &[
    HandlerDoc {
        name: "rate",
        mode: HandlerMode::ReadWrite,
        text: "The RATE.",
    },
    HandlerDoc {
        name: "reset",
        mode: HandlerMode::Write,
        text: "Forgets the rate's history (as if just configured).",
    },
];

pub static SPEC: ClassSpec = ClassSpec {
    name: "Shaper",
    port_count: "1/1-2",
    processing: "l/l",
    group: "standard",
    signature: "Shaper(RATE)",
    summary: "Shapes traffic to a maximum packet rate.",
    description: "A pull element that lets at most RATE packets per second through: a pull is \
passed upstream only when the uniform RATE process (Click's GapRate, counted per second) is due \
for another packet. Shaper depends on the timing of the pulls it receives: sporadic pulls give \
sporadic packets, frequent pulls give packets at RATE with little burstiness. When the pulls fall \
behind it catches up in a burst of at most a second's worth. RATE 0 lets nothing through. Shaper \
is no notifier: a puller downstream keeps polling while the queue upstream holds packets.\n\n\
Pulls on the optional output 1 return packets only while the shaping condition is not met \
(taken from upstream, so they may be packets that output 0 would have had later); while it is, \
output 1 gets nothing.\n\n\
Keyword arguments:\n\n\
- `RATE` (unsigned): packets per second. Mandatory.",
    ports: "one pull input; pull output 0 (shaped) and an optional pull output 1 (packets \
pulled while the rate does not allow one)",
    handlers: HANDLERS,
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(Shaper::new(false)),
};

pub static BANDWIDTHSHAPER_SPEC: ClassSpec = ClassSpec {
    name: "BandwidthShaper",
    port_count: "1/1-2",
    processing: "l/l",
    group: "standard",
    signature: "BandwidthShaper(RATE)",
    summary: "Shapes traffic to a maximum bandwidth.",
    description: "Like Shaper, but RATE is a bandwidth (`10Mbps`, `1MBps`; a bare number is \
bytes per second) and each packet counts its length in bytes: a pull is passed upstream only when \
the bytes let through so far this second are no more than RATE allows by now. Pulls on the \
optional output 1 return packets that do not meet that condition.\n\n\
Keyword arguments:\n\n\
- `RATE` (bandwidth): bytes per second. Mandatory.",
    ports: "one pull input; pull output 0 (shaped) and an optional pull output 1 (packets \
pulled while the rate does not allow one)",
    handlers: HANDLERS,
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(Shaper::new(true)),
};

impl Element for Shaper {
    fn configure(&mut self, config: &str, _cx: &ConfigureCtx) -> Result<(), String> {
        let r = self.read_rate(config)?;
        if r != self.rate.rate() {
            self.rate = GapRate::new(r);
        }
        Ok(())
    }

    #[inline]
    fn pull(&mut self, port: usize, cx: &Ctx) -> Option<Packet> {
        let due = self.rate.need_update(cx.now());
        if port == 1 {
            // output 1 has only what does not meet the shaping condition now
            return if due { None } else { cx.pull(0) };
        }
        if !due {
            return None;
        }
        let p = cx.pull(0)?;
        self.rate
            .update_with(if self.bandwidth { p.len() as i64 } else { 1 });
        Some(p)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        (name == "rate").then(|| Ok(self.unparse_rate()))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        Some(match name {
            "rate" => self
                .read_rate(&handlers::clean(value))
                .map(|r| self.rate.set_rate(r, cx.now())),
            "reset" => {
                self.rate.reset();
                Ok(())
            }
            _ => return None,
        })
    }

    fn current_config(&self) -> Option<String> {
        Some(self.unparse_rate())
    }

    crate::element_any!();
}
