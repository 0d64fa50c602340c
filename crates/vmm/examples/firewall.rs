//! Guest vs host speed: `cargo run --release -p clickos-vmm --example firewall [N]`.
//! Runs bench/firewall.click natively (same engine, this process) and in a
//! micro-VM; prints Mpps for both (best of 3).
use click::prelude::*;
use clickos_ring::layout::MAILBOX_OFF;
use clickos_ring::mailbox::{state, HostEnd, Op};
use clickos_ring::Mailbox;
use clickos_vmm::{Vm, VmConfig};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

struct Sys;
impl Clock for Sys {
    fn now(&self) -> Timestamp {
        let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        Timestamp::from_nsec(d.as_nanos() as i64)
    }
}

fn native(config: &str) -> f64 {
    let reg = clickos_guest::registry();
    let r = Router::from_config(
        config,
        "firewall",
        &[],
        &reg,
        Box::new(Sys),
        Box::new(BufferConsole::default()),
        RouterOptions::default(),
    )
    .unwrap();
    let t0 = Instant::now();
    while let RunState::Busy = r.run_pass() {}
    t0.elapsed().as_secs_f64()
}

fn in_vm(config: &str) -> f64 {
    let cfg = VmConfig {
        id: 1,
        memory: 16 << 20,
        vnics: vec![],
        fault_injection: false,
        console: Arc::new(|id, t| eprintln!("[{id}] {t}")),
    };
    let config = config.to_string();
    let vm = Vm::create(&cfg, &mut |control| {
        // SAFETY: mapped for the VM's life; the guest has not started.
        let mut host = unsafe { HostEnd::new(control) };
        host.post(Op::Install, b"", config.as_bytes()).unwrap();
    })
    .unwrap();
    // SAFETY: mapped for the VM's life.
    let m = unsafe { &*(vm.control().add(MAILBOX_OFF as usize) as *const Mailbox) };
    while m.first_run.load(Ordering::Acquire) == 0 {
        std::hint::spin_loop();
    }
    let t0 = Instant::now();
    while m.state.load(Ordering::Acquire) != state::STOPPED {
        assert!(vm.exit().is_none(), "{:?}", vm.exit());
        std::thread::sleep(Duration::from_micros(200));
    }
    t0.elapsed().as_secs_f64()
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map_or(5_000_000, |s| s.parse().unwrap());
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../bench/firewall.click"
    ))
    .unwrap();
    let flat =
        click_lang::parse_config(&src, "firewall", &[("N".to_string(), n.to_string())]).unwrap();
    let config = click_lang::unparse(&flat);
    let (mut a, mut b) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        a = a.min(native(&config));
        b = b.min(in_vm(&config));
    }
    let (a, b) = (n as f64 / a / 1e6, n as f64 / b / 1e6);
    println!(
        "firewall {n} packets: native {a:.3} Mpps, vm {b:.3} Mpps, ratio {:.3}",
        b / a
    );
}
