//! RandomSample: passes each packet with a probability.

use crate::common::rng::Rng;
use crate::common::{handlers, unparse};
use crate::prelude::*;
use alloc::format;

/// Fractional bits of the sampling probability (Click's SAMPLING_SHIFT).
const SHIFT: u32 = 28;
const ONE: u32 = 1 << SHIFT;
const MASK: u32 = ONE - 1;

/// `RandomSample([P, KEYWORDS])`.
pub struct RandomSample {
    /// Sampling probability in 1/2^28 units.
    prob: u32,
    active: bool,
    drops: u64,
    /// Seeded from the element's name at the first configuration.
    rng: Option<Rng>,
}

impl Default for RandomSample {
    fn default() -> Self {
        RandomSample {
            prob: ONE,
            active: true,
            drops: 0,
            rng: None,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "RandomSample",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "standard",
    signature: "RandomSample([P, KEYWORDS])",
    summary: "Samples packets with some probability.",
    description: "Samples packets with probability P: about one packet in 1/P goes out output \
0. The others are dropped, or pushed out output 1 when it exists. In pull mode a pull that \
draws an unsampled packet returns nothing. The random choices come from a generator seeded from \
the element's name, so a configuration behaves the same on every run. Give P, SAMPLE or DROP. \
The probability has 28 fractional bits.\n\n\
Keyword arguments:\n\n\
- `P` (real, 0 to 1): the sampling probability.\n\
- `SAMPLE` (real, 0 to 1): the same as P (it wins when both are given).\n\
- `DROP` (real, 0 to 1): the drop probability, 1 − P; used when neither P nor SAMPLE is given.\n\
- `ACTIVE` (boolean): when false every packet goes to output 0. Default true.",
    ports: "one input; output 0 for sampled packets, optional push output 1 for the others",
    handlers: &[
        HandlerDoc {
            name: "sampling_prob",
            mode: HandlerMode::ReadWrite,
            text: "The sampling probability.",
        },
        HandlerDoc {
            name: "drop_prob",
            mode: HandlerMode::ReadWrite,
            text: "The drop probability.",
        },
        HandlerDoc {
            name: "active",
            mode: HandlerMode::ReadWrite,
            text: "The ACTIVE value.",
        },
        HandlerDoc {
            name: "drops",
            mode: HandlerMode::Read,
            text: "Packets not sampled.",
        },
    ],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(RandomSample::default()),
};

/// A probability in 1/2^28 units; an error when not between 0 and 1.
fn fixed(kw: &str, s: &str) -> Result<u32, String> {
    let x = click_lang::args::parse_f64(s).map_err(|e| format!("{}: {}", kw, e))?;
    if !(0.0..=1.0).contains(&x) {
        return Err("sampling probability must be between 0 and 1".into());
    }
    Ok((x * f64::from(ONE) + 0.5) as u32)
}

fn unparse(p: u32) -> String {
    unparse::unparse_real2(u64::from(p), SHIFT)
}

impl RandomSample {
    #[inline]
    fn sampled(&mut self) -> bool {
        if !self.active {
            return true;
        }
        let r = self.rng.get_or_insert_with(|| Rng::new(0)).next_u64() as u32;
        (r & MASK) < self.prob
    }
}

impl Element for RandomSample {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let p = a.read_p::<click_lang::args::RawString>("P")?;
        let sample = a.read::<click_lang::args::RawString>("SAMPLE")?;
        let drop = a.read::<click_lang::args::RawString>("DROP")?;
        let active = a.read::<bool>("ACTIVE")?.unwrap_or(true);
        a.complete()?;
        let p = p.map(|r| fixed("P", &r.0)).transpose()?;
        let sample = sample.map(|r| fixed("SAMPLE", &r.0)).transpose()?;
        let drop = drop.map(|r| fixed("DROP", &r.0)).transpose()?;
        let prob = match (sample.or(p), drop) {
            (Some(s), _) => s,
            (None, Some(d)) => ONE - d,
            (None, None) => return Err("you must specify a sampling probability".into()),
        };
        if self.rng.is_none() {
            self.rng = Some(Rng::from_name(cx.name));
        }
        self.prob = prob;
        self.active = active;
        Ok(())
    }

    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        if self.sampled() {
            cx.push(0, p);
        } else {
            self.drops += 1;
            cx.push(1, p);
        }
    }

    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        let p = cx.pull(0)?;
        if self.sampled() {
            Some(p)
        } else {
            self.drops += 1;
            cx.push(1, p);
            None
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "sampling_prob" => unparse(self.prob),
            "drop_prob" => unparse(ONE - self.prob),
            "active" => self.active.to_string(),
            "drops" => self.drops.to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        let v = handlers::clean(value);
        Some(match name {
            "sampling_prob" => fixed("SAMPLE", &v).map(|p| self.prob = p),
            "drop_prob" => fixed("DROP", &v).map(|d| self.prob = ONE - d),
            "active" => handlers::parse_bool(&v)
                .map(|b| self.active = b)
                .ok_or_else(|| String::from("ACTIVE: expected boolean")),
            _ => return None,
        })
    }

    fn current_config(&self) -> Option<String> {
        Some(format!(
            "SAMPLE {}, ACTIVE {}",
            unparse(self.prob),
            self.active
        ))
    }

    crate::element_any!();
}
