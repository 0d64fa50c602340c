//! Boot micro-benchmark: `cargo run --release -p clickos-vmm --example boot [N] [IDLE]`.
//!
//! N sequential boots: create → runtime ready (state EMPTY) → INSTALL a
//! configuration → its first task has run (`Mailbox::first_run`) →
//! destroy; then IDLE idle instances at once for the memory per instance.
use clickos_ring::layout::MAILBOX_OFF;
use clickos_ring::mailbox::{state, HostEnd, Op};
use clickos_ring::Mailbox;
use clickos_vmm::{Vm, VmConfig};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

const CONFIG: &str = "InfiniteSource(LIMIT 1, STOP false) -> c::Counter -> Discard;";

fn mb(vm: &Vm) -> &Mailbox {
    // SAFETY: mapped for the VM's life.
    unsafe { &*(vm.control().add(MAILBOX_OFF as usize) as *const Mailbox) }
}

fn post_install(control: *mut u8) {
    // SAFETY: the control region is mapped for the VM's life; the guest has
    // not started.
    let mut host = unsafe { HostEnd::new(control) };
    host.post(Op::Install, b"", CONFIG.as_bytes()).unwrap();
    host.announce_wait();
}

fn rss_kb() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let l = s.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    l.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn meminfo(key: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/meminfo").unwrap();
    let l = s.lines().find(|l| l.starts_with(key)).unwrap();
    l.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() - 1) as f64 * p) as usize]
}

fn main() {
    let n: usize = std::env::args().nth(1).map_or(200, |s| s.parse().unwrap());
    let idle: u32 = std::env::args().nth(2).map_or(200, |s| s.parse().unwrap());
    let cfg = |id| VmConfig {
        id,
        memory: clickos_vmm::DEFAULT_MEMORY,
        vnics: vec![],
        fault_injection: false,
        console: Arc::new(|id, t| eprintln!("[{id}] {t}")),
    };
    // Warm up (image load, KVM open).
    drop(Vm::create(&cfg(0), &mut |_| {}).unwrap());
    let (mut create, mut ready, mut destroy) = (vec![], vec![], vec![]);
    let mut phases: Vec<Vec<(&'static str, Duration)>> = vec![];
    for i in 0..n {
        let t0 = Instant::now();
        let vm = Vm::create(&cfg(i as u32), &mut post_install).unwrap();
        create.push(t0.elapsed());
        let m = mb(&vm);
        loop {
            if m.first_run.load(Ordering::Acquire) != 0 && m.resp_seq.load(Ordering::Acquire) == 1 {
                break;
            }
            if let Some(e) = vm.exit() {
                panic!("{e:?}");
            }
            vm.wait_notify(Duration::from_millis(1));
        }
        ready.push(t0.elapsed());
        phases.push(vm.phases());
        let t1 = Instant::now();
        drop(vm);
        destroy.push(t1.elapsed());
    }
    println!("{n} boots (create → config installed and first task run):");
    for (name, v) in [
        ("create", &mut create),
        ("ready", &mut ready),
        ("destroy (caller)", &mut destroy),
    ] {
        println!(
            "  {name:18} median {:>8.3?}  p90 {:>8.3?}  p99 {:>8.3?}",
            pct(v, 0.5),
            pct(v, 0.9),
            pct(v, 0.99)
        );
    }
    println!("  phases (median):");
    for (k, (name, _)) in phases[0].iter().enumerate() {
        let mut v: Vec<Duration> = phases
            .iter()
            .filter_map(|p| p.get(k).map(|x| x.1))
            .collect();
        println!("    {name:14} {:>9.3?}", pct(&mut v, 0.5));
    }

    std::thread::sleep(Duration::from_millis(200));
    let (rss0, free0) = (rss_kb(), meminfo("MemAvailable:"));
    let t0 = Instant::now();
    let vms: Vec<Vm> = (0..idle)
        .map(|i| Vm::create(&cfg(1000 + i), &mut post_install).unwrap())
        .collect();
    for vm in &vms {
        while mb(vm).state.load(Ordering::Acquire) != state::IDLE {
            if let Some(e) = vm.exit() {
                panic!("{e:?}");
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    let took = t0.elapsed();
    std::thread::sleep(Duration::from_millis(200));
    let (rss1, free1) = (rss_kb(), meminfo("MemAvailable:"));
    let fp: u64 = vms.iter().map(|v| v.memory_footprint()).sum::<u64>() / idle as u64;
    println!(
        "{idle} idle instances in {took:.2?}: RSS +{} kB/instance, MemAvailable -{} kB/instance, footprint() {} kB",
        (rss1 - rss0) / idle as u64,
        free0.saturating_sub(free1) / idle as u64,
        fp / 1024
    );
    let t0 = Instant::now();
    drop(vms);
    println!("destroyed {idle} in {:.2?} (caller side)", t0.elapsed());
}
