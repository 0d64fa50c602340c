//! Shared harness for the engine's integration tests: build a router from
//! configuration text on a virtual clock, feed it packets from the real
//! pcap files in `tests/data/`, and collect what comes out.
#![allow(dead_code)]

use click::prelude::*;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// A finished (or running) test router with its console and clock.
pub struct TestRouter {
    pub router: Router,
    pub console: Rc<BufferConsole>,
    pub clock: Rc<VirtualClock>,
}

impl TestRouter {
    /// Runs until idle, moving the virtual clock to each timer.
    pub fn run(&self) -> RunState {
        let clock = self.clock.clone();
        self.router.run_until_idle(&mut |t| clock.set(t))
    }
    /// Runs at most `n` scheduler passes (for sources that never stop).
    pub fn run_passes(&self, n: usize) {
        for _ in 0..n {
            match self.router.run_pass() {
                RunState::Busy => {}
                RunState::Idle(Some(t)) => self.clock.set(t),
                _ => break,
            }
        }
    }
    pub fn read(&self, h: &str) -> String {
        self.router
            .read_handler(h)
            .unwrap_or_else(|e| panic!("read {}: {}", h, e))
    }
    pub fn write(&self, h: &str, v: &str) -> Result<(), HandlerError> {
        self.router.write_handler(h, v)
    }
    pub fn stderr(&self) -> String {
        self.console.err.borrow().clone()
    }
    pub fn stdout(&self) -> String {
        self.console.out.borrow().clone()
    }
    /// Pushes packets into `element` input `port`.
    pub fn inject(&self, element: &str, port: usize, pkts: &[Vec<u8>]) {
        for d in pkts {
            let p = self.router.pool().make(DEFAULT_HEADROOM, d, 0);
            self.router.inject(element, port, p).unwrap();
        }
    }
}

/// The registry the tests use: built-ins plus the test-only `Collect`.
pub fn registry() -> Registry {
    let mut r = Registry::with_builtin();
    r.add(&COLLECT);
    r
}

/// Builds a router; panics with Click's messages on error.
pub fn router(config: &str) -> TestRouter {
    try_router(config).unwrap_or_else(|e| panic!("configuration failed:\n{}", e.join("\n")))
}

/// Builds a router, returning Click-style error lines on failure.
pub fn try_router(config: &str) -> Result<TestRouter, Vec<String>> {
    try_router_with(config, RouterOptions::default())
}

pub fn try_router_with(config: &str, opts: RouterOptions) -> Result<TestRouter, Vec<String>> {
    let console = Rc::new(BufferConsole::default());
    let clock = Rc::new(VirtualClock::new(Timestamp::from_sec_nsec(
        1_000_000_000,
        0,
    )));
    let router = Router::from_config(
        config,
        "test.click",
        &[],
        &registry(),
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

/// Path of a file in the repository's `tests/data/`.
pub fn data_path(name: &str) -> String {
    format!("{}/../../tests/data/{}", env!("CARGO_MANIFEST_DIR"), name)
}

/// Every record of a pcap/pcapng file in `tests/data/`: (timestamp, bytes).
pub fn pcap_records(name: &str) -> Vec<(Timestamp, Vec<u8>)> {
    let mut r = click_pcap::PcapReader::open(data_path(name)).expect("open pcap");
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().expect("read pcap") {
        out.push((Timestamp::from_sec_nsec(rec.ts_sec, rec.ts_nsec), rec.data));
    }
    out
}

/// Just the bytes of every record.
pub fn pcap_packets(name: &str) -> Vec<Vec<u8>> {
    pcap_records(name).into_iter().map(|(_, d)| d).collect()
}

// ---- Collect: a test sink that remembers packets -------------------------

/// A packet as `Collect` saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub data: Vec<u8>,
    pub anno: Anno,
    pub network_header_offset: Option<isize>,
    pub transport_header_offset: Option<isize>,
}

thread_local! {
    static COLLECTED: RefCell<HashMap<String, Vec<Seen>>> = RefCell::new(HashMap::new());
}

/// Packets collected so far by the `Collect` element named `name`.
pub fn collected(name: &str) -> Vec<Seen> {
    COLLECTED.with(|c| c.borrow().get(name).cloned().unwrap_or_default())
}

/// Bytes of the packets collected by `name`.
pub fn collected_data(name: &str) -> Vec<Vec<u8>> {
    collected(name).into_iter().map(|s| s.data).collect()
}

/// Forgets everything collected (tests in one thread share the store).
pub fn clear_collected() {
    COLLECTED.with(|c| c.borrow_mut().clear());
}

#[derive(Default)]
struct Collect;

pub static COLLECT: ClassSpec = ClassSpec {
    name: "Collect",
    port_count: "1/0",
    processing: "h/",
    group: "test",
    signature: "Collect",
    summary: "Test sink: remembers every packet.",
    description: "",
    ports: "one input",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Collect),
};

impl Element for Collect {
    fn configure(&mut self, _config: &str, _cx: &ConfigureCtx) -> Result<(), String> {
        Ok(())
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        let seen = Seen {
            data: p.data().to_vec(),
            anno: p.anno().clone(),
            network_header_offset: p.network_header_offset(),
            transport_header_offset: p.transport_header_offset(),
        };
        COLLECTED.with(|c| {
            c.borrow_mut()
                .entry(cx.name().to_string())
                .or_default()
                .push(seen)
        });
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The errors of a configuration that must not build, as one string.
pub fn config_error(config: &str) -> String {
    match try_router(config) {
        Ok(_) => panic!("configuration should fail: {}", config),
        Err(e) => e.join("\n"),
    }
}

/// A packet of `len` bytes whose first two bytes are `id`.
pub fn pkt(id: u16, len: usize) -> Vec<u8> {
    let mut d = vec![0u8; len.max(2)];
    d[..2].copy_from_slice(&id.to_be_bytes());
    d
}

/// The ids of packets made by [`pkt`].
pub fn ids(seen: &[Vec<u8>]) -> Vec<u16> {
    seen.iter()
        .map(|d| u16::from_be_bytes([d[0], d[1]]))
        .collect()
}
