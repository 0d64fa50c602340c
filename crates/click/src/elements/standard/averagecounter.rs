//! AverageCounter: counts packets and measures the average rate.

use crate::common::ewma::CLICK_HZ;
use crate::common::{ewma, unparse};
use crate::prelude::*;
use click_lang::args::Seconds;

/// `AverageCounter([IGNORE])`.
#[derive(Default)]
pub struct AverageCounter {
    count: u64,
    byte_count: u64,
    first: u64,
    last: u64,
    ignore: u64,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "AverageCounter",
    port_count: "1/1",
    processing: "a/a",
    group: "standard",
    signature: "AverageCounter([IGNORE])",
    summary: "Measures historical packet count and rate.",
    description: "Passes packets unchanged from its input to its output, maintaining statistics \
information about packet count and packet rate using a strict average: the rate is the count \
divided by the time between the first and the last packet.\n\nKeyword arguments:\n\n\
- `IGNORE` (time): packets arriving within this long after the first packet are not counted, \
and the time is not part of the average. Default 0.",
    ports: "one input, one output",
    handlers: &[
        HandlerDoc {
            name: "count",
            mode: HandlerMode::Read,
            text: "Packets counted.",
        },
        HandlerDoc {
            name: "byte_count",
            mode: HandlerMode::Read,
            text: "Bytes counted.",
        },
        HandlerDoc {
            name: "rate",
            mode: HandlerMode::Read,
            text: "Average packets per second.",
        },
        HandlerDoc {
            name: "byte_rate",
            mode: HandlerMode::Read,
            text: "Average bytes per second.",
        },
        HandlerDoc {
            name: "bit_rate",
            mode: HandlerMode::Read,
            text: "Average bits per second.",
        },
        HandlerDoc {
            name: "reset",
            mode: HandlerMode::Write,
            text: "Resets the counts and the start time.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(AverageCounter::default()),
};

impl AverageCounter {
    #[inline]
    fn account(&mut self, n: u64, bytes: u64, cx: &Ctx) {
        let j = ewma::jiffies(cx.now()).max(1);
        if self.first == 0 {
            self.first = j;
        }
        if j - self.first >= self.ignore {
            self.count += n;
            self.byte_count += bytes;
        }
        self.last = j;
    }

    fn rate(&self, count: u64) -> f64 {
        let d = self
            .last
            .saturating_sub(self.first)
            .saturating_sub(self.ignore)
            .max(1);
        (count as f64 * CLICK_HZ as f64) / d as f64
    }
}

impl Element for AverageCounter {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let ignore = a.read_p::<Seconds>("IGNORE")?.map(|s| s.0).unwrap_or(0);
        a.complete()?;
        self.ignore = (ignore.max(0) as u64) / 1_000_000;
        Ok(())
    }

    #[inline]
    fn simple_action(&mut self, p: Packet, cx: &Ctx) -> Option<Packet> {
        self.account(1, p.len() as u64, cx);
        Some(p)
    }

    #[inline]
    fn push_batch(&mut self, _port: usize, b: Batch, cx: &Ctx) {
        let bytes: usize = b.iter().map(|p| p.len()).sum();
        self.account(b.len() as u64, bytes as u64, cx);
        cx.push_batch(0, b);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "count" => self.count.to_string(),
            "byte_count" => self.byte_count.to_string(),
            "rate" => unparse::fmt_double(self.rate(self.count)),
            "byte_rate" => unparse::fmt_double(self.rate(self.byte_count)),
            "bit_rate" => unparse::fmt_double(self.rate(self.byte_count) * 8.0),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, _value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "reset" => {
                self.count = 0;
                self.byte_count = 0;
                self.first = 0;
                self.last = 0;
                Some(Ok(()))
            }
            _ => None,
        }
    }

    crate::element_any!();
}
