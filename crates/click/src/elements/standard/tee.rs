//! Tee and PullTee: duplicate packets.

use crate::prelude::*;
use alloc::format;

fn check_n(config: &str, noutputs: usize) -> Result<(), String> {
    let mut a = Args::new(config);
    let n = a.read_p::<u32>("N")?;
    a.complete()?;
    if let Some(n) = n {
        if n as usize != noutputs {
            return Err(format!("{} outputs implies {} arms", noutputs, noutputs));
        }
    }
    Ok(())
}

/// `Tee([N])`: pushes a copy of each packet to every output.
#[derive(Default)]
pub struct Tee;

pub static SPEC: ClassSpec = ClassSpec {
    name: "Tee",
    port_count: "1/1-",
    processing: "h/h",
    group: "standard",
    signature: "Tee([N])",
    summary: "Duplicates packets.",
    description: "Pushes each packet it receives out every output: clones to outputs 0 to N-2, \
the original to output N-1. N, if given, must equal the number of outputs.",
    ports: "one input, one or more outputs",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Tee),
};

impl Element for Tee {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        check_n(config, cx.noutputs)
    }

    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        let n = cx.noutputs();
        for i in 0..n.saturating_sub(1) {
            cx.push(i, p.clone_in(cx.pool()));
        }
        cx.push(n.saturating_sub(1), p);
    }

    fn push_batch(&mut self, _port: usize, b: Batch, cx: &Ctx) {
        let n = cx.noutputs();
        for i in 0..n.saturating_sub(1) {
            let copies: Batch = b.iter().map(|p| p.clone_in(cx.pool())).collect();
            cx.push_batch(i, copies);
        }
        cx.push_batch(n.saturating_sub(1), b);
    }

    crate::element_any!();
}

/// `PullTee([N])`: returns pulled packets on output 0, pushes copies out
/// the others.
#[derive(Default)]
pub struct PullTee;

pub static PULLTEE_SPEC: ClassSpec = ClassSpec {
    name: "PullTee",
    port_count: "1/1-",
    processing: "l/lh",
    group: "standard",
    signature: "PullTee([N])",
    summary: "Duplicates packets.",
    description: "Output 0 is pull, the others push. A packet pulled from output 0 is pulled from \
the input, and copies of it are pushed out outputs 1 to N-1 before it is returned.",
    ports: "one pull input, one pull output and zero or more push outputs",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(PullTee),
};

impl Element for PullTee {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        check_n(config, cx.noutputs)
    }

    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        let p = cx.pull(0)?;
        for i in 1..cx.noutputs() {
            cx.push(i, p.clone_in(cx.pool()));
        }
        Some(p)
    }

    crate::element_any!();
}
