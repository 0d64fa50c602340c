//! Counter: counts packets and bytes, estimates rates.

use crate::common::ewma::RateEwma;
use crate::common::{ewma, handlers, unparse};
use crate::prelude::*;
use alloc::format;
use click_lang::args::{self, RawString};

/// `Counter([KEYWORDS])`.
#[derive(Default)]
pub struct Counter {
    count: u64,
    byte_count: u64,
    rate: RateEwma,
    byte_rate: RateEwma,
    count_trigger: Option<(u64, String)>,
    byte_trigger: Option<(u64, String)>,
    count_triggered: bool,
    byte_triggered: bool,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "Counter",
    port_count: "1/1",
    processing: "a/a",
    group: "standard",
    signature: "Counter([KEYWORDS])",
    summary: "Measures packet count and rate.",
    description: "Passes packets unchanged from its input to its output, maintaining statistics \
information about packet count and packet rate (an exponentially weighted moving average over \
millisecond epochs, as Click's RateEWMA).\n\nKeyword arguments:\n\n\
- `COUNT_CALL` (`N HANDLER [VALUE]`): when the count reaches N, call the write handler.\n\
- `BYTE_COUNT_CALL` (`N HANDLER [VALUE]`): when the byte count reaches at least N, call the write handler.\n\n\
LLRPC (ControlSocket's `LLRPC`): `CLICK_LLRPC_GET_COUNT` (`#C004C003`) takes a 4-byte integer, 0 \
for the packet count or 1 for the byte count, and returns that count's low 32 bits in its place \
(host byte order).",
    ports: "one input, one output",
    handlers: &[
        HandlerDoc { name: "count", mode: HandlerMode::Read, text: "Packets that have passed through." },
        HandlerDoc { name: "byte_count", mode: HandlerMode::Read, text: "Bytes that have passed through." },
        HandlerDoc { name: "rate", mode: HandlerMode::Read, text: "Recent arrival rate, in packets per second." },
        HandlerDoc { name: "bit_rate", mode: HandlerMode::Read, text: "Recent arrival rate, in bits per second." },
        HandlerDoc { name: "byte_rate", mode: HandlerMode::Read, text: "Recent arrival rate, in bytes per second." },
        HandlerDoc { name: "reset", mode: HandlerMode::Write, text: "Resets the counts and rates to zero." },
        HandlerDoc { name: "reset_counts", mode: HandlerMode::Write, text: "Same as `reset`." },
        HandlerDoc { name: "count_call", mode: HandlerMode::ReadWrite, text: "The COUNT_CALL trigger count; writes take `N HANDLER [VALUE]`." },
        HandlerDoc { name: "byte_count_call", mode: HandlerMode::Write, text: "Sets BYTE_COUNT_CALL: `N HANDLER [VALUE]`." },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Counter::default()),
};

fn parse_call(kw: &str, v: &str) -> Result<(u64, String), String> {
    let mut rest = String::from(v);
    let n = args::shift_word(&mut rest);
    let n = match args::parse_u64(&n) {
        Ok(n) => n,
        Err(e) if e == "out of range" => u64::MAX,
        Err(_) => return Err(format!("{} type mismatch", kw)),
    };
    Ok((n, rest))
}

impl Counter {
    fn reset(&mut self) {
        self.count = 0;
        self.byte_count = 0;
        self.count_triggered = false;
        self.byte_triggered = false;
        self.rate = RateEwma::default();
        self.byte_rate = RateEwma::default();
    }

    #[inline]
    fn account(&mut self, n: u64, bytes: u64, cx: &Ctx) {
        let before = self.count;
        self.count += n;
        self.byte_count += bytes;
        let j = ewma::jiffies(cx.now_coarse());
        self.rate.update(j, n);
        self.byte_rate.update(j, bytes);
        if let Some((t, h)) = &self.count_trigger {
            if !self.count_triggered && before < *t && self.count >= *t {
                self.count_triggered = true;
                handlers::call_write_desc(cx, h);
            }
        }
        if let Some((t, h)) = &self.byte_trigger {
            if !self.byte_triggered && self.byte_count >= *t {
                self.byte_triggered = true;
                handlers::call_write_desc(cx, h);
            }
        }
    }
}

impl Element for Counter {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let cc = a.read::<RawString>("COUNT_CALL")?;
        let bc = a.read::<RawString>("BYTE_COUNT_CALL")?;
        a.complete()?;
        let cc = cc.map(|s| parse_call("COUNT_CALL", &s.0)).transpose()?;
        let bc = bc
            .map(|s| parse_call("BYTE_COUNT_CALL", &s.0))
            .transpose()?;
        self.count_trigger = cc;
        self.byte_trigger = bc;
        Ok(())
    }

    fn initialize(&mut self, _cx: &Ctx) -> Result<(), String> {
        self.reset();
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

    fn read_handler(&mut self, name: &str, cx: &Ctx) -> Option<HandlerResult<String>> {
        let j = ewma::jiffies(cx.now());
        Some(Ok(match name {
            "count" => self.count.to_string(),
            "byte_count" => self.byte_count.to_string(),
            "rate" => {
                self.rate.update(j, 0);
                self.rate.unparse_rate()
            }
            "byte_rate" => {
                self.byte_rate.update(j, 0);
                self.byte_rate.unparse_rate()
            }
            "bit_rate" => {
                self.byte_rate.update(j, 0);
                unparse::unparse_real2(
                    self.byte_rate.scaled_average() * ewma::CLICK_HZ,
                    RateEwma::SCALE - 3,
                )
            }
            "count_call" => self
                .count_trigger
                .as_ref()
                .map(|t| t.0.to_string())
                .unwrap_or_default(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        Some(match name {
            "reset" | "reset_counts" => {
                self.reset();
                Ok(())
            }
            "count_call" | "byte_count_call" => {
                let mut rest = String::from(value);
                let n = args::shift_word(&mut rest);
                match args::parse_u64(&n) {
                    Ok(n) => {
                        let t = Some((n, rest));
                        if name == "count_call" {
                            self.count_trigger = t;
                            self.count_triggered = false;
                        } else {
                            self.byte_trigger = t;
                            self.byte_triggered = false;
                        }
                        Ok(())
                    }
                    Err(_) => Err(format!("'{}' first word should be unsigned (count)", name)),
                }
            }
            _ => return None,
        })
    }

    fn llrpc(&mut self, command: u32, data: &mut [u8], _lx: &LlrpcCtx) -> Result<(), i32> {
        use crate::common::llrpc;
        if command != llrpc::GET_COUNT {
            return Err(llrpc::EINVAL);
        }
        let v = match llrpc::get_i32(data) {
            Some(0) => self.count,
            Some(1) => self.byte_count,
            _ => return Err(llrpc::EINVAL),
        };
        llrpc::put_i32(data, v as u32 as i32);
        Ok(())
    }

    crate::element_any!();
}
