//! RED: Floyd and Jacobson's Random Early Detection in front of queues.

use crate::common::rng::Rng;
use crate::common::{ewma, handlers, unparse};
use crate::prelude::*;
use alloc::format;
use click_lang::args::{self, RawString};

/// Average queue sizes carry this many fraction bits.
const QUEUE_SCALE: u32 = 10;
/// MAX_P and drop probabilities are fixed point with 16 fraction bits.
const ONE: u64 = 0x10000;

/// The parameters a configuration (or a handler write) sets.
#[derive(Clone, Debug, PartialEq)]
struct Params {
    min_thresh: u64,
    max_thresh: u64,
    max_p: u64,
    stability: u32,
    gentle: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            min_thresh: 0,
            max_thresh: 0,
            max_p: 0,
            stability: 4,
            gentle: true,
        }
    }
}

impl Params {
    fn check(&self) -> Result<(), String> {
        if self.max_thresh > 0xFFFF {
            return Err("MAX_THRESH must be <= 65535".into());
        }
        if self.min_thresh > self.max_thresh {
            return Err("MIN_THRESH must be <= MAX_THRESH".into());
        }
        if self.max_p > ONE {
            return Err("MAX_P must be between 0 and 1".into());
        }
        if self.stability > 16 {
            return Err("STABILITY must be between 0 and 16".into());
        }
        Ok(())
    }
}

/// Click's FixedPointArg(16): a nonnegative real in 1/65536ths.
pub(crate) fn parse_fixed16(s: &str) -> Result<u64, String> {
    let x = args::parse_f64(s)?;
    if x < 0.0 {
        return Err("expected nonnegative real number".into());
    }
    let v = x * ONE as f64 + 0.5;
    if v >= u32::MAX as f64 {
        return Err("out of range".into());
    }
    Ok(v as u64)
}

fn read_fixed16(a: &mut Args, kw: &str) -> Result<u64, String> {
    let RawString(s) = a.read_mp::<RawString>(kw)?;
    parse_fixed16(&s).map_err(|e| format!("{}: {}", kw, e))
}

/// Click's DirectEWMA with a settable stability shift, 64-bit, 10 fraction
/// bits.
#[derive(Clone, Debug, Default)]
struct Ewma {
    avg: u64,
    shift: u32,
}

impl Ewma {
    fn compensation(&self) -> u64 {
        if self.shift == 0 {
            0
        } else {
            1 << (self.shift - 1)
        }
    }
    fn step(&mut self, xs: u64) {
        if xs >= self.avg {
            self.avg += (xs - self.avg) >> self.shift;
        } else {
            self.avg -= (self.avg - xs) >> self.shift;
        }
    }
    fn update(&mut self, x: u64) {
        let xs = (x << QUEUE_SCALE) + self.compensation();
        self.step(xs);
    }
    fn update_n(&mut self, x: u64, n: u64) {
        let xs = x << QUEUE_SCALE;
        if n >= 100 {
            self.avg = xs;
            return;
        }
        let xs = xs + self.compensation();
        for _ in 0..n {
            self.step(xs);
        }
    }
    fn unscaled(&self) -> u64 {
        (self.avg + (1 << (QUEUE_SCALE - 1))) >> QUEUE_SCALE
    }
}

/// `RED(MIN_THRESH, MAX_THRESH, MAX_P, [KEYWORDS])`.
pub struct Red {
    p: Params,
    queue_names: Vec<String>,
    queues: Vec<usize>,
    size: Ewma,
    c1: u64,
    c2: u64,
    g1: u64,
    g2: u64,
    kill_thresh: u64,
    count: i64,
    random_value: i64,
    last_jiffies: u64,
    drops: u64,
    rng: Rng,
}

impl Default for Red {
    fn default() -> Self {
        Red {
            p: Params::default(),
            queue_names: Vec::new(),
            queues: Vec::new(),
            size: Ewma::default(),
            c1: 0,
            c2: 1,
            g1: 0,
            g2: 0,
            kill_thresh: 0,
            count: -1,
            random_value: 0,
            last_jiffies: 0,
            drops: 0,
            rng: Rng::new(0),
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "RED",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "standard",
    signature: "RED(MIN_THRESH, MAX_THRESH, MAX_P, [KEYWORDS])",
    summary: "Drops packets according to Random Early Detection.",
    description: "Implements Floyd and Jacobson's Random Early Detection dropping policy. A RED \
element watches one or more Storage elements (Queue, SimpleQueue, FrontDropQueue): it keeps an \
exponentially weighted moving average of the sum of their lengths and drops packets with a \
probability that grows with it. Below MIN_THRESH nothing is dropped; between MIN_THRESH and \
MAX_THRESH the probability rises linearly from 0 to MAX_P (spread evenly with Floyd and \
Jacobson's count, so the actual drop rate is about twice that); above MAX_THRESH it rises from \
MAX_P to 1 at twice MAX_THRESH when GENTLE, and beyond that (or above MAX_THRESH when not GENTLE) \
every packet is dropped.\n\n\
By default the queues are found from the configuration's flow: a push RED uses the nearest \
Storage elements downstream of its output 0, a pull RED the nearest upstream of its input. The \
QUEUES keyword names them instead. Dropped packets go out output 1 if it exists. Random choices \
come from a generator seeded from the element's name, so a configuration behaves the same on \
every run.\n\nKeyword arguments:\n\n\
- `MIN_THRESH`, `MAX_THRESH` (unsigned): thresholds on the average queue length. Mandatory; \
MAX_THRESH at most 65535.\n\
- `MAX_P` (real between 0 and 1): drop probability at MAX_THRESH. Mandatory.\n\
- `QUEUES` (space-separated element names): the Storage elements to watch.\n\
- `STABILITY` (unsigned, 0 to 16): the average's weight is 2^-STABILITY; 0 means use the \
instantaneous length. Default 4.\n\
- `GENTLE` (boolean): gentle RED above MAX_THRESH. Default true.",
    ports: "one input; one or two outputs (the second, push, for drops)",
    handlers: &[
        HandlerDoc {
            name: "min_thresh",
            mode: HandlerMode::ReadWrite,
            text: "The MIN_THRESH.",
        },
        HandlerDoc {
            name: "max_thresh",
            mode: HandlerMode::ReadWrite,
            text: "The MAX_THRESH.",
        },
        HandlerDoc {
            name: "max_p",
            mode: HandlerMode::ReadWrite,
            text: "The MAX_P.",
        },
        HandlerDoc {
            name: "drops",
            mode: HandlerMode::Read,
            text: "Packets dropped so far.",
        },
        HandlerDoc {
            name: "queues",
            mode: HandlerMode::Read,
            text: "The Storage elements watched, one per line.",
        },
        HandlerDoc {
            name: "avg_queue_size",
            mode: HandlerMode::Read,
            text: "The current average queue length.",
        },
        HandlerDoc {
            name: "stats",
            mode: HandlerMode::Read,
            text: "Current and average queue length and drops, one per line.",
        },
    ],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(Red::default()),
};

impl Red {
    fn set_params(&mut self, p: Params) {
        let (min, max, mp) = (p.min_thresh, p.max_thresh, p.max_p);
        if min >= max {
            self.c1 = 0;
            self.c2 = 1;
        } else {
            self.c1 = mp / (max - min);
            self.c2 = mp * min / (max - min);
        }
        self.g1 = (ONE - mp).checked_div(max).unwrap_or(0);
        self.g2 = ONE.saturating_sub(2 * mp);
        self.kill_thresh = if p.gentle && mp != ONE { max * 2 } else { max };
        self.size.shift = p.stability;
        self.p = p;
    }

    /// The summed length of the watched queues.
    fn queue_size(&self, cx: &Ctx) -> u64 {
        self.queues
            .iter()
            .map(|&q| cx.storage_len(q).unwrap_or(0) as u64)
            .sum()
    }

    fn rand16(&mut self) -> i64 {
        ((self.rng.next_u64() >> 5) & 0xFFFF) as i64
    }

    fn should_drop(&mut self, cx: &Ctx) -> bool {
        let s = self.queue_size(cx);
        let avg = if self.p.stability == 0 {
            s
        } else if s > 0 {
            self.size.update(s);
            self.last_jiffies = 0;
            self.size.unscaled()
        } else {
            // Empty queue: age the average by the 20 ms ticks that passed.
            let j = ewma::jiffies(cx.now()) / 20;
            let n = if self.last_jiffies != 0 {
                j.saturating_sub(self.last_jiffies)
            } else {
                1
            };
            self.size.update_n(0, n);
            self.last_jiffies = j;
            self.size.unscaled()
        };
        if avg <= self.p.min_thresh {
            self.count = -1;
            return false;
        }
        if avg > self.kill_thresh {
            self.count = -1;
            return true;
        }
        let scaled = if self.p.stability == 0 {
            s << QUEUE_SCALE
        } else {
            self.size.avg
        };
        let p_b = if avg <= self.p.max_thresh {
            ((self.c1 * scaled) >> QUEUE_SCALE) as i64 - self.c2 as i64
        } else {
            ((self.g1 * scaled) >> QUEUE_SCALE) as i64 - self.g2 as i64
        };
        self.count += 1;
        if self.count > 0 && p_b > 0 && self.count > self.random_value / p_b {
            self.count = 0;
            self.random_value = self.rand16();
            return true;
        }
        if self.count == 0 {
            self.random_value = self.rand16();
        }
        false
    }

    fn drop_packet(&mut self, p: Packet, cx: &Ctx) {
        self.drops += 1;
        cx.push(1, p);
    }

    fn config_string(&self) -> String {
        let mut s = format!(
            "{}, {}, {}, QUEUES",
            self.p.min_thresh,
            self.p.max_thresh,
            unparse::unparse_real2(self.p.max_p, 16)
        );
        for n in &self.queue_names {
            s.push(' ');
            s.push_str(n);
        }
        s.push_str(&format!(", STABILITY {}", self.p.stability));
        if !self.p.gentle {
            s.push_str(", GENTLE false");
        }
        s
    }
}

impl Element for Red {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let min_thresh = u64::from(a.read_mp::<u32>("MIN_THRESH")?);
        let max_thresh = u64::from(a.read_mp::<u32>("MAX_THRESH")?);
        let max_p = read_fixed16(&mut a, "MAX_P")?;
        let queues = a.read::<RawString>("QUEUES")?;
        let stability = a.read::<u32>("STABILITY")?.unwrap_or(4);
        let gentle = a.read::<bool>("GENTLE")?.unwrap_or(true);
        a.complete()?;
        let p = Params {
            min_thresh,
            max_thresh,
            max_p,
            stability,
            gentle,
        };
        p.check()?;
        // As in Click, QUEUES counts only until the queues are known.
        if self.queue_names.is_empty() {
            if let Some(RawString(q)) = queues {
                self.queue_names = q.split_whitespace().map(String::from).collect();
            }
        }
        self.set_params(p);
        if self.queues.is_empty() {
            self.rng = Rng::from_name(cx.name);
        }
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let mut queues = Vec::new();
        if self.queue_names.is_empty() {
            queues = cx.nearby_storage(0, cx.output_is_push(0));
            if queues.is_empty() {
                return Err("no nearby Queues".into());
            }
            self.queue_names = queues
                .iter()
                .map(|&q| cx.element_name(q).to_string())
                .collect();
        } else {
            let mut errs = Vec::new();
            for n in &self.queue_names {
                match cx.find_element(n) {
                    None => errs.push(format!("no element named '{}'", n)),
                    Some(q) if cx.storage_len(q).is_none() => {
                        errs.push(format!("'{}' is not a Storage element", n))
                    }
                    Some(q) => queues.push(q),
                }
            }
            if !errs.is_empty() {
                return Err(errs.join("\n"));
            }
        }
        self.queues = queues;
        self.size.avg = 0;
        self.drops = 0;
        self.count = -1;
        self.last_jiffies = 0;
        Ok(())
    }

    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        if self.should_drop(cx) {
            self.drop_packet(p, cx);
        } else {
            cx.push(0, p);
        }
    }

    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        loop {
            let p = cx.pull(0)?;
            if !self.should_drop(cx) {
                return Some(p);
            }
            self.drop_packet(p, cx);
        }
    }

    fn read_handler(&mut self, name: &str, cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "min_thresh" => self.p.min_thresh.to_string(),
            "max_thresh" => self.p.max_thresh.to_string(),
            "max_p" => unparse::unparse_real2(self.p.max_p, 16),
            "drops" => self.drops.to_string(),
            "queues" => self
                .queue_names
                .iter()
                .map(|n| format!("{}\n", n))
                .collect(),
            "avg_queue_size" => unparse::unparse_real2(self.size.avg, QUEUE_SCALE),
            "stats" => format!(
                "{} current queue\n{} avg queue\n{} drops\n",
                self.queue_size(cx),
                unparse::unparse_real2(self.size.avg, QUEUE_SCALE),
                self.drops
            ),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        let v = handlers::clean(value);
        let mut p = self.p.clone();
        let r = match name {
            "min_thresh" => args::parse_u64(&v)
                .map(|x| p.min_thresh = x)
                .map_err(|e| format!("MIN_THRESH: {}", e)),
            "max_thresh" => args::parse_u64(&v)
                .map(|x| p.max_thresh = x)
                .map_err(|e| format!("MAX_THRESH: {}", e)),
            "max_p" => parse_fixed16(&v)
                .map(|x| p.max_p = x)
                .map_err(|e| format!("MAX_P: {}", e)),
            _ => return None,
        };
        Some(r.and_then(|_| p.check()).map(|_| self.set_params(p)))
    }

    fn current_config(&self) -> Option<String> {
        Some(self.config_string())
    }

    crate::element_any!();
}
