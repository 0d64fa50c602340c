//! Meter and BandwidthMeter: classify a packet stream by its recent rate.

use crate::common::ewma::RateEwma;
use crate::common::ewma::CLICK_HZ;
use crate::common::{ewma, unparse};
use crate::prelude::*;
use alloc::format;

/// `Meter(RATE1, ..., RATEn)` and `BandwidthMeter(RATE1, ..., RATEn)`.
pub struct Meter {
    bandwidth: bool,
    /// The thresholds, scaled as the estimator's average (per jiffy,
    /// `RateEwma::SCALE` fractional bits).
    meters: Vec<u64>,
    rate: RateEwma,
}

impl Meter {
    fn new(bandwidth: bool) -> Meter {
        Meter {
            bandwidth,
            meters: Vec::new(),
            rate: RateEwma::default(),
        }
    }
}

const HANDLERS: &[HandlerDoc] = &[
    HandlerDoc {
        name: "rate",
        mode: HandlerMode::Read,
        text: "The current rate estimate (per second).",
    },
    HandlerDoc {
        name: "meters",
        mode: HandlerMode::Read,
        text: "The rate thresholds, one per line, as the meter keeps them.",
    },
];

pub static SPEC: ClassSpec = ClassSpec {
    name: "Meter",
    port_count: "1/2-",
    processing: "h/h",
    group: "standard",
    signature: "Meter(RATE1, RATE2, ..., RATEn)",
    summary: "Classifies packet stream by rate (packets/s).",
    description: "Classifies packets by the rate at which they arrive, in packets per second, \
measured with an exponentially weighted moving average (Click's RateEWMA: one-jiffy epochs, \
stability shift 4). The arguments are one or more rates, each larger than the one before; a \
Meter with n rates has n+1 outputs. While the rate is below RATE1, packets go to output 0; at \
least RATE1 but below RATE2, to output 1; and so on; at least RATEn, to output n. The whole \
stream goes to the output for the current rate (RatedSplitter splits a stream instead). \
BandwidthMeter measures bytes per second.\n\n\
Arguments:\n\n\
- `RATE1` ... `RATEn` (unsigned, packets per second, at most 4194303).",
    ports: "one push input; n+1 push outputs for n rates",
    handlers: HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Meter::new(false)),
};

pub static BANDWIDTHMETER_SPEC: ClassSpec = ClassSpec {
    name: "BandwidthMeter",
    port_count: "1/2-",
    processing: "h/h",
    group: "standard",
    signature: "BandwidthMeter(RATE1, RATE2, ..., RATEn)",
    summary: "Classifies packet stream by arrival rate (bytes/s).",
    description: "Classifies packets by the rate at which bytes arrive, measured with an \
exponentially weighted moving average (Click's RateEWMA: one-jiffy epochs, stability shift 4). \
The arguments are one or more bandwidths (`10Mbps`, `1MBps`; a bare number is bytes per \
second), each larger than the one before; a BandwidthMeter with n rates has n+1 outputs. While \
the rate is below RATE1, packets go to output 0; at least RATE1 but below RATE2, to output 1; \
and so on; at least RATEn, to output n.\n\n\
Arguments:\n\n\
- `RATE1` ... `RATEn` (bandwidth, at most 4194303 bytes per second).",
    ports: "one push input; n+1 push outputs for n rates",
    handlers: HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Meter::new(true)),
};

impl Element for Meter {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let conf = click_lang::args::split_args(config);
        let class = if self.bandwidth {
            "BandwidthMeter"
        } else {
            "Meter"
        };
        if conf.is_empty() {
            return Err(format!("too few arguments to {}(RATE1, ...)", class));
        }
        let mut vals: Vec<u64> = Vec::with_capacity(conf.len());
        for (i, arg) in conf.iter().enumerate() {
            let v = if self.bandwidth {
                click_lang::args::parse_bandwidth(arg)
                    .map_err(|_| format!("argument {} should be bandwidth (rate)", i + 1))?
            } else {
                click_lang::args::parse_u64(arg)
                    .map_err(|_| format!("argument {} should be unsigned (rate)", i + 1))?
            };
            if i > 0 && v <= vals[i - 1] {
                return Err(format!("rate {} must be > rate {}", i + 1, i));
            }
            vals.push(v);
        }
        let max = u64::from(u32::MAX) >> RateEwma::SCALE;
        for (i, v) in vals.iter_mut().enumerate() {
            if *v > max {
                return Err(format!("rate {} too large (max {})", i + 1, max));
            }
            *v = (*v << RateEwma::SCALE) / CLICK_HZ;
        }
        if cx.noutputs != vals.len() + 1 {
            return Err(format!("need {} output ports", vals.len() + 1));
        }
        self.meters = vals;
        Ok(())
    }

    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        let delta = if self.bandwidth { p.len() as u64 } else { 1 };
        self.rate.update(ewma::jiffies(cx.now()), delta);
        let r = self.rate.scaled_average();
        let out = self
            .meters
            .iter()
            .position(|m| r < *m)
            .unwrap_or(self.meters.len());
        cx.push(out, p);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "rate" => self.rate.unparse_rate(),
            "meters" => self
                .meters
                .iter()
                .map(|m| {
                    format!(
                        "{}\n",
                        unparse::unparse_real2(m * CLICK_HZ, RateEwma::SCALE)
                    )
                })
                .collect(),
            _ => return None,
        }))
    }

    crate::element_any!();
}
