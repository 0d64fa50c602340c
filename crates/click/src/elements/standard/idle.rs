//! Idle: never produces packets, drops whatever it gets.

use crate::prelude::*;

#[derive(Default)]
pub struct Idle {
    signal: Option<SignalId>,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "Idle",
    port_count: "-/-",
    processing: "a/a",
    group: "standard",
    signature: "Idle",
    summary: "Discards packets and never generates any.",
    description: "Has zero or more agnostic inputs and outputs. It never pushes a packet to any \
output or pulls a packet from any input; packets pushed to it are dropped and pulls from it \
return nothing. Its notifier is always asleep, so pullers downstream of it sleep too.",
    ports: "zero or more inputs, zero or more outputs",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Idle::default()),
};

impl Element for Idle {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()
    }
    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        self.signal = Some(cx.new_signal(false));
        Ok(())
    }
    fn push(&mut self, _port: usize, _p: Packet, _cx: &Ctx) {}
    fn push_batch(&mut self, _port: usize, _b: Batch, _cx: &Ctx) {}
    fn pull(&mut self, _port: usize, _cx: &Ctx) -> Option<Packet> {
        None
    }
    fn empty_signal(&self) -> Option<SignalId> {
        self.signal
    }
    crate::element_any!();
}
