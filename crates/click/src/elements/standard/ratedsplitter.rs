//! RatedSplitter and BandwidthRatedSplitter: packets within a rate go out
//! output 0, the rest out output 1.

use crate::common::rate::RateConfig;
use crate::common::rate::TokenBucket;
use crate::prelude::*;

/// `RatedSplitter(RATE, [KEYWORDS])` and
/// `BandwidthRatedSplitter(RATE, [KEYWORDS])`.
pub struct RatedSplitter {
    cfg: RateConfig,
    tb: TokenBucket,
}

impl RatedSplitter {
    fn new(bandwidth: bool) -> RatedSplitter {
        RatedSplitter {
            cfg: RateConfig {
                bandwidth,
                ..RateConfig::default()
            },
            tb: TokenBucket::default(),
        }
    }
}

const HANDLERS: &[HandlerDoc] = &[HandlerDoc {
    name: "rate",
    mode: HandlerMode::ReadWrite,
    text: "The RATE. Writing it reconfigures the rate, keeping the burst keywords.",
}];

pub static SPEC: ClassSpec = ClassSpec {
    name: "RatedSplitter",
    port_count: "1/1-2",
    processing: "h/h",
    group: "standard",
    signature: "RatedSplitter(RATE, [KEYWORDS])",
    summary: "Splits a flow of packets at a packet rate.",
    description: "Sends incoming packets out output 0 up to RATE packets per second, and the \
rest out output 1 (dropped if there is no output 1). Unlike a meter, RATE packets per second still \
go out output 0 when more arrive. The rate is a token bucket whose capacity defaults to 20 \
milliseconds worth of tokens; like Click's, it starts full.\n\nKeyword arguments:\n\n\
- `RATE` (unsigned): packets per second. Mandatory.\n\
- `BURST_DURATION` (time): the bucket holds RATE × BURST_DURATION tokens.\n\
- `BURST_SIZE` (unsigned): the bucket holds this many tokens (`BURST` is a synonym). Not \
together with BURST_DURATION.",
    ports: "one push input; one or two push outputs",
    handlers: HANDLERS,
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(RatedSplitter::new(false)),
};

pub static BANDWIDTHRATEDSPLITTER_SPEC: ClassSpec = ClassSpec {
    name: "BandwidthRatedSplitter",
    port_count: "1/1-2",
    processing: "h/h",
    group: "standard",
    signature: "BandwidthRatedSplitter(RATE, [KEYWORDS])",
    summary: "Splits a flow of packets at a bandwidth.",
    description: "Sends incoming packets out output 0 up to RATE, a bandwidth (`10Mbps`, \
`1MBps`; a bare number is bytes per second), and the rest out output 1 (dropped if there is no \
output 1). The rate is a token bucket of bytes: a packet goes out output 0 when the bucket holds \
at least 131072 bytes, and costs its length. The capacity is 20 milliseconds worth of bytes (or \
BURST_BYTES) plus those 131072; the bucket starts full.\n\nKeyword arguments:\n\n\
- `RATE` (bandwidth): bytes per second. Mandatory.\n\
- `BURST_DURATION` (time): burst of RATE × BURST_DURATION bytes.\n\
- `BURST_BYTES` (unsigned): burst in bytes (`BURST` is a synonym). Not together with \
BURST_DURATION.",
    ports: "one push input; one or two push outputs",
    handlers: HANDLERS,
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(RatedSplitter::new(true)),
};

impl Element for RatedSplitter {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let cfg = RateConfig::read(&mut a, self.cfg.bandwidth)?;
        a.complete()?;
        cfg.apply(&mut self.tb);
        self.cfg = cfg;
        Ok(())
    }

    fn initialize(&mut self, _cx: &Ctx) -> Result<(), String> {
        self.tb.set_full();
        Ok(())
    }

    #[inline]
    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        self.tb.refill(cx.now());
        if self.tb.contains(self.cfg.threshold()) {
            self.tb.remove(self.cfg.cost(p.len()));
            cx.push(0, p);
        } else {
            cx.push(1, p);
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        (name == "rate").then(|| Ok(self.cfg.unparse_rate()))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        (name == "rate").then(|| {
            self.cfg.with_rate_text(value).map(|c| {
                self.tb.refill(cx.now());
                c.apply(&mut self.tb);
                self.cfg = c;
            })
        })
    }

    fn current_config(&self) -> Option<String> {
        Some(self.cfg.unparse_rate())
    }

    crate::element_any!();
}
