//! Discard: drops every packet.

use crate::prelude::*;

/// `Discard([ACTIVE])`: drops all packets. In pull context it pulls
/// continuously while active.
#[derive(Default)]
pub struct Discard {
    count: u64,
    active: bool,
    pull_mode: bool,
    signal: Option<UpstreamSignal>,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "Discard",
    port_count: "1/0",
    processing: "a/a",
    group: "standard",
    signature: "Discard([ACTIVE, KEYWORDS])",
    summary: "Drops all packets.",
    description: "Discards every packet it receives. In a pull context it runs a task that pulls \
packets as fast as they are available (sleeping while upstream notifiers say no packets can come).\n\n\
Keyword arguments:\n\n- `ACTIVE` (boolean): whether to pull packets in a pull context. Default true.",
    ports: "one input, no outputs",
    handlers: &[
        HandlerDoc { name: "count", mode: HandlerMode::Read, text: "Number of packets discarded." },
        HandlerDoc { name: "reset_counts", mode: HandlerMode::Write, text: "Resets `count` to zero." },
        HandlerDoc { name: "active", mode: HandlerMode::ReadWrite, text: "Whether the pull task is active." },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Discard::default()),
};

impl Element for Discard {
    fn configure(&mut self, config: &str, _cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = Args::new(config);
        let active = a.read_p::<bool>("ACTIVE")?.unwrap_or(true);
        a.complete()?;
        self.active = active;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        if cx.input_is_pull(0) {
            self.pull_mode = true;
            self.signal = Some(cx.upstream_signal(0));
            if self.active {
                cx.schedule_task();
            }
        }
        Ok(())
    }

    #[inline]
    fn push(&mut self, _port: usize, _p: Packet, _cx: &Ctx) {
        self.count += 1;
    }

    #[inline]
    fn push_batch(&mut self, _port: usize, b: Batch, _cx: &Ctx) {
        self.count += b.len() as u64;
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        if !self.active {
            return false;
        }
        let mut n = 0;
        while n < 32 {
            match cx.pull(0) {
                Some(_) => {
                    self.count += 1;
                    n += 1;
                }
                None => break,
            }
        }
        if n > 0 {
            return true;
        }
        // Nothing came: sleep if the upstream notifiers allow it.
        match &self.signal {
            Some(sig) => cx.signal_active(sig),
            None => true,
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "count" => Some(Ok(self.count.to_string())),
            "active" => Some(Ok(self.active.to_string())),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "reset_counts" => {
                self.count = 0;
                Some(Ok(()))
            }
            "active" => Some(click_lang::args::parse_bool(value.trim()).map(|v| {
                self.active = v;
                if v && self.pull_mode {
                    cx.schedule_task();
                }
            })),
            _ => None,
        }
    }

    crate::element_any!();
}
