//! Shared helpers for the ip/ethernet/classify tests: a batch source that
//! replays packets (from `tests/data/` captures) into a router, so the same
//! traffic can be run packet-at-a-time and in batches.
#![allow(dead_code)]

#[path = "common/mod.rs"]
mod common;

pub use common::*;

use click::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;

thread_local! {
    static PENDING: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// `BatchSrc`: pushes the packets given to [`run_with`] once, in batches
/// of the router's `max_batch`.
#[derive(Default)]
struct BatchSrc;

pub static BATCH_SRC: ClassSpec = ClassSpec {
    name: "BatchSrc",
    port_count: "0/1",
    processing: "h/h",
    group: "test",
    signature: "BatchSrc",
    summary: "Test source: replays packets in batches.",
    description: "",
    ports: "one output",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(BatchSrc),
};

impl Element for BatchSrc {
    fn configure(&mut self, _config: &str, _cx: &ConfigureCtx) -> Result<(), String> {
        Ok(())
    }
    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        cx.schedule_task();
        Ok(())
    }
    fn run_task(&mut self, cx: &Ctx) -> bool {
        let pkts = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
        let mut out = Emitter::new(cx, 0);
        for d in &pkts {
            out.emit(cx, cx.pool().make(DEFAULT_HEADROOM, d, 0));
        }
        out.flush(cx);
        false
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Builds `config` (which should contain `src :: BatchSrc`), replays `pkts`
/// through it with batches of at most `max_batch`, and runs until idle.
pub fn run_with(config: &str, pkts: &[Vec<u8>], max_batch: usize) -> TestRouter {
    clear_collected();
    PENDING.with(|p| *p.borrow_mut() = pkts.to_vec());
    let r = try_build(config, max_batch)
        .unwrap_or_else(|e| panic!("configuration failed:\n{}", e.join("\n")));
    r.run();
    r
}

/// Builds a router with BatchSrc registered.
pub fn try_build(config: &str, max_batch: usize) -> Result<TestRouter, Vec<String>> {
    let mut reg = registry();
    reg.add(&BATCH_SRC);
    let console = Rc::new(BufferConsole::default());
    let clock = Rc::new(VirtualClock::new(Timestamp::from_sec_nsec(
        1_000_000_000,
        0,
    )));
    let opts = RouterOptions {
        max_batch,
        ..Default::default()
    };
    let router = Router::from_config(
        config,
        "test.click",
        &[],
        &reg,
        Box::new(clock.clone()),
        Box::new(console.clone()),
        opts,
    )?;
    Ok(TestRouter {
        router,
        console,
        clock,
    })
}

/// Runs `config` on `pkts` packet-at-a-time and in batches of 32 and
/// checks that every named Collect sink saw the same packets; returns the
/// packet-at-a-time router.
pub fn run_both(config: &str, pkts: &[Vec<u8>], sinks: &[&str]) -> (TestRouter, Vec<Vec<Seen>>) {
    let rb = run_with(config, pkts, 32);
    let batched: Vec<Vec<Vec<u8>>> = sinks.iter().map(|s| collected_data(s)).collect();
    let r1 = run_with(config, pkts, 1);
    let single: Vec<Vec<Seen>> = sinks.iter().map(|s| collected(s)).collect();
    for (i, s) in sinks.iter().enumerate() {
        let sd: Vec<Vec<u8>> = single[i].iter().map(|x| x.data.clone()).collect();
        assert_eq!(
            sd, batched[i],
            "sink {} differs between batch and single mode",
            s
        );
    }
    drop(rb);
    (r1, single)
}

/// Every record of a capture in `tests/data/`.
pub fn capture(name: &str) -> Vec<Vec<u8>> {
    pcap_packets(name)
}

/// The frames of `tests/data/mixed.pcap`.
pub fn mixed() -> Vec<Vec<u8>> {
    capture("mixed.pcap")
}

/// What sink `sink` collected, as bytes.
pub fn data(sink: &str) -> Vec<Vec<u8>> {
    collected_data(sink)
}

/// Internet checksum verification of a header (true when it verifies).
pub fn csum_ok(h: &[u8]) -> bool {
    click::wire::checksum::ip_checksum(h) == 0
}
