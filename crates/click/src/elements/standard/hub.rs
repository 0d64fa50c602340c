//! Hub: duplicates packets like an Ethernet hub.

use crate::prelude::*;

/// `Hub`.
#[derive(Default)]
pub struct Hub;

pub static SPEC: ClassSpec = ClassSpec {
    name: "Hub",
    port_count: "-/=",
    processing: "h/h",
    group: "standard",
    signature: "Hub",
    summary: "Duplicates packets like a hub.",
    description: "Has any number of inputs and as many outputs. A packet arriving on input N \
is emitted on every output except N, in order (copies first; the original goes out the last \
of them). With a single port, packets are dropped.",
    ports: "N push inputs, N push outputs",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Hub),
};

impl Element for Hub {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()
    }

    fn push(&mut self, port: usize, p: Packet, cx: &Ctx) {
        let nout = cx.noutputs();
        let last = (0..nout).rev().find(|&i| i != port);
        let Some(last) = last else {
            return;
        };
        for i in 0..last {
            if i != port {
                cx.push(i, p.clone_in(cx.pool()));
            }
        }
        cx.push(last, p);
    }

    crate::element_any!();
}
