//! RandomSeed: seeds Click's shared `random()` stream.

use crate::common::handlers;
use crate::common::rng;
use crate::prelude::*;
use alloc::string::ToString;

/// `RandomSeed([SEED])`.
#[derive(Default)]
pub struct RandomSeed {
    /// The seed last set (None: seeded from the clock at initialization).
    seed: Option<u32>,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "RandomSeed",
    port_count: "0/0",
    processing: "a/a",
    group: "standard",
    signature: "RandomSeed([SEED])",
    summary: "Sets the random seed.",
    description: "Seeds Click's shared random number stream with SEED, an unsigned 32-bit \
integer, when configured. Without RandomSeed every element that chooses at random (RandomSwitch, \
RED, RandomSample, the rewriters' port choice, ...) draws from its own generator seeded from its \
name. Once a RandomSeed has run, they all draw from one stream instead: the C library's \
`random()` as glibc implements it (an additive feedback generator, r[i] = r[i-3] + r[i-31]), \
seeded with `srandom(SEED)`, with Click's `click_random(low, high)` arithmetic, so a \
configuration with `RandomSeed(N)` makes the choices stock Click makes with the same seed. The \
stream is the process's, as in Click, and is forgotten when the RandomSeed is cleaned up. \
Without SEED, the stream is seeded from the clock at initialization.",
    ports: "none",
    handlers: &[HandlerDoc {
        name: "seed",
        mode: HandlerMode::ReadWrite,
        text: "The seed last set (empty when seeded from the clock). Writing an integer \
reseeds the stream with it.",
    }],
    live_reconfigure: false,
    order_sensitive: true,
    make: || Box::new(RandomSeed::default()),
};

impl Element for RandomSeed {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let seed = a.read_p::<u32>("SEED")?;
        a.complete()?;
        self.seed = seed;
        if let Some(s) = seed {
            rng::click_srandom(s);
        }
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        if self.seed.is_none() {
            let t = cx.now();
            rng::click_srandom((t.sec() as u32) ^ t.subsec_nsec());
        }
        Ok(())
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        (name == "seed").then(|| Ok(self.seed.map(|s| s.to_string()).unwrap_or_default()))
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        (name == "seed").then(|| match handlers::parse_int(value) {
            Some(s) if (0..=i64::from(u32::MAX)).contains(&s) => {
                self.seed = Some(s as u32);
                rng::click_srandom(s as u32);
                Ok(())
            }
            _ => Err("expected unsigned integer".into()),
        })
    }

    fn cleanup(&mut self, _cx: &Ctx) {
        rng::click_random_unseed();
    }

    fn current_config(&self) -> Option<String> {
        Some(self.seed.map(|s| s.to_string()).unwrap_or_default())
    }

    crate::element_any!();
}
