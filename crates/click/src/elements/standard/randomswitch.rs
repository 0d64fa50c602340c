//! RandomSwitch: sends each packet to a random output.

use crate::common::rng::Rng;
use crate::prelude::*;

/// `RandomSwitch`.
pub struct RandomSwitch {
    rng: Rng,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "RandomSwitch",
    port_count: "1/1-",
    processing: "h/h",
    group: "standard",
    signature: "RandomSwitch",
    summary: "Sends packets to random outputs.",
    description: "Pushes each arriving packet out one of its N outputs, chosen uniformly at \
random. The pseudo-random generator is seeded from the element's name, so a configuration makes \
the same choices on every run.",
    ports: "one push input, one or more push outputs",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(RandomSwitch { rng: Rng::new(0) }),
};

impl Element for RandomSwitch {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()?;
        self.rng = Rng::from_name(cx.name);
        Ok(())
    }

    #[inline]
    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        let o = self.rng.below(cx.noutputs() as u64) as usize;
        cx.push(o, p);
    }

    crate::element_any!();
}
