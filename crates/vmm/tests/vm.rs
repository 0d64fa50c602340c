//! Boots real micro-VMs. Where KVM is missing every test records a skip
//! ("/dev/kvm unavailable: <why>"), and fails in CI (`tests/support/skip.rs`).

#[path = "../../../tests/support/skip.rs"]
mod skip;

use clickos_ring::layout::MAILBOX_OFF;
use clickos_ring::mailbox::{state, HostEnd, Op, Status};
use clickos_ring::Mailbox;
use clickos_vmm::{Exit, Vm, VmConfig};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn kvm() -> bool {
    skip::require(clickos_vmm::available().map_err(|why| format!("/dev/kvm unavailable: {why}")))
}

type Lines = Arc<Mutex<Vec<String>>>;

fn config(id: u32, fault_injection: bool) -> (VmConfig, Lines) {
    let lines: Lines = Arc::default();
    let l = lines.clone();
    let cfg = VmConfig {
        id,
        memory: clickos_vmm::DEFAULT_MEMORY,
        vnics: vec![],
        fault_injection,
        console: Arc::new(move |_, t| l.lock().unwrap().push(t.to_string())),
    };
    (cfg, lines)
}

fn mailbox(vm: &Vm) -> &Mailbox {
    // SAFETY: the control region is mapped for the VM's lifetime.
    unsafe { &*(vm.control().add(MAILBOX_OFF as usize) as *const Mailbox) }
}

/// One mailbox request; returns (status, reply) or None on timeout / end.
fn call(vm: &Vm, o: Op, name: &str, data: &str, timeout: Duration) -> Option<(Status, String)> {
    // SAFETY: the control region is mapped for the VM's lifetime; these
    // tests post one request at a time.
    let mut host = unsafe { HostEnd::new(vm.control()) };
    host.post(o, name.as_bytes(), data.as_bytes()).ok()?;
    host.announce_wait();
    vm.wake();
    let t0 = Instant::now();
    while t0.elapsed() < timeout {
        if host.replied().ok()? {
            let reply = host.reply().ok()?;
            let mut buf = vec![0u8; reply.len];
            host.read_data(&mut buf);
            return Some((reply.status, String::from_utf8_lossy(&buf).into_owned()));
        }
        if vm.exit().is_some() {
            return None;
        }
        vm.wait_notify(Duration::from_millis(20));
    }
    None
}

fn wait_state(vm: &Vm, want: u32, timeout: Duration) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < timeout {
        if mailbox(vm).state.load(Ordering::Acquire) == want {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

fn wait_exit(vm: &Vm, timeout: Duration) -> Option<Exit> {
    let t0 = Instant::now();
    while t0.elapsed() < timeout {
        if let Some(e) = vm.exit() {
            return Some(e);
        }
        vm.wait_notify(Duration::from_millis(10));
    }
    None
}

#[test]
fn boots_installs_and_stops() {
    if !kvm() {
        return;
    }
    let (cfg, lines) = config(7, false);
    let vm = Vm::create(&cfg, &mut |_| {}).unwrap();
    assert!(
        wait_state(&vm, state::EMPTY, Duration::from_secs(5)),
        "{:?}",
        vm.exit()
    );
    let (st, msg) = call(
        &vm,
        Op::Install,
        "test",
        "InfiniteSource(LIMIT 3, STOP false) -> Print(hello) -> c::Counter -> Discard;",
        Duration::from_secs(5),
    )
    .expect("install reply");
    assert_eq!(st, Status::Ok, "{msg}");
    // The source runs after the install reply: poll the counter.
    let mut count = String::new();
    for _ in 0..100 {
        let (st, c) = call(&vm, Op::Read, "c.count", "", Duration::from_secs(5)).unwrap();
        assert_eq!(st, Status::Ok, "{c}");
        count = c.trim().to_string();
        if count == "3" {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(count, "3");
    let out = lines.lock().unwrap().join("\n");
    assert!(out.contains("hello"), "console: {out}");
    let (st, _) = call(&vm, Op::Stop, "", "", Duration::from_secs(5)).unwrap();
    assert_eq!(st, Status::Ok);
    assert_eq!(
        wait_exit(&vm, Duration::from_secs(5)),
        Some(Exit::Exited(0))
    );
    let phases = vm.phases();
    assert!(phases.iter().any(|p| p.0 == "first exit"), "{phases:?}");
}

#[test]
fn timers_idle_until_their_deadline() {
    if !kvm() {
        return;
    }
    let (cfg, _) = config(8, false);
    let vm = Vm::create(&cfg, &mut |_| {}).unwrap();
    let (st, msg) = call(
        &vm,
        Op::Install,
        "",
        "TimedSource(INTERVAL 0.01) -> c::Counter -> Discard;",
        Duration::from_secs(5),
    )
    .unwrap();
    assert_eq!(st, Status::Ok, "{msg}");
    std::thread::sleep(Duration::from_millis(300));
    let (_, n) = call(&vm, Op::Read, "c.count", "", Duration::from_secs(5)).unwrap();
    let n: u64 = n.trim().parse().unwrap();
    // 30 expected; wide bounds for a loaded machine.
    assert!((10..=40).contains(&n), "count {n}");
    // The guest idles between packets.
    assert!(wait_state(&vm, state::IDLE, Duration::from_secs(2)));
}

#[test]
fn panic_and_oom_are_reported() {
    if !kvm() {
        return;
    }
    for (fault, want) in [
        ("panic", "injected fault: panic"),
        ("oom", "memory allocation of"),
    ] {
        let (cfg, _) = config(9, true);
        let vm = Vm::create(&cfg, &mut |_| {}).unwrap();
        let _ = call(&vm, Op::Fault, "", fault, Duration::from_secs(5));
        match wait_exit(&vm, Duration::from_secs(10)) {
            Some(Exit::Panicked(m)) => assert!(m.contains(want), "{fault}: {m}"),
            other => panic!("{fault}: {other:?}"),
        }
    }
}

#[test]
fn kill_stops_a_spinning_guest() {
    if !kvm() {
        return;
    }
    let (cfg, _) = config(10, true);
    let vm = Vm::create(&cfg, &mut |_| {}).unwrap();
    let (st, _) = call(&vm, Op::Fault, "", "spin", Duration::from_secs(5)).unwrap();
    assert_eq!(st, Status::Ok);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(vm.exit(), None);
    let t0 = Instant::now();
    vm.kill("test");
    assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());
    assert_eq!(vm.exit(), Some(Exit::Killed("test".into())));
    vm.kill("again");
    assert_eq!(vm.exit(), Some(Exit::Killed("test".into())));
}

// Raw code at IMAGE_GPA (0x100000).
#[test]
fn faults_are_reported_with_rip_and_cr2() {
    if !kvm() {
        return;
    }
    let (cfg, _) = config(11, false);
    // ud2
    let vm = Vm::create_raw(&cfg, &[0x0f, 0x0b]).unwrap();
    vm.join();
    let e = format!("{:?}", vm.exit());
    assert!(e.contains("Crashed") && e.contains("RIP=0x100000"), "{e}");
    // mov byte [0x4000], 1: an unmapped page
    let vm = Vm::create_raw(&cfg, &[0xc6, 0x04, 0x25, 0x00, 0x40, 0x00, 0x00, 0x01]).unwrap();
    vm.join();
    let e = format!("{:?}", vm.exit());
    assert!(e.contains("CR2=0x4000"), "{e}");
    // mov byte [0x100000], 1: write to read-only text
    let vm = Vm::create_raw(&cfg, &[0xc6, 0x04, 0x25, 0x00, 0x00, 0x10, 0x00, 0x01]).unwrap();
    vm.join();
    let e = format!("{:?}", vm.exit());
    assert!(e.contains("CR2=0x100000"), "{e}");
    // A stack overflow: push in a loop.
    let vm = Vm::create_raw(&cfg, &[0x50, 0xeb, 0xfd]).unwrap();
    vm.join();
    let e = format!("{:?}", vm.exit());
    assert!(e.contains("stack overflow"), "{e}");
}

#[test]
fn bad_hypercalls_crash_the_instance() {
    if !kvm() {
        return;
    }
    let (cfg, _) = config(12, false);
    let cases: &[(&[u8], &str)] = &[
        // mov dx,0x506; out dx,eax  (not allowed by the I/O bitmap: a fault)
        (&[0x66, 0xba, 0x06, 0x05, 0xef], "triple fault"),
        // mov dx,0x500; mov eax,5000; out dx,eax  (console length too big)
        (
            &[0x66, 0xba, 0x00, 0x05, 0xb8, 0x88, 0x13, 0, 0, 0xef],
            "console length 5000",
        ),
        // mov dx,0x504; out dx,al  (wrong size)
        (&[0x66, 0xba, 0x04, 0x05, 0xee], "1-byte write"),
        // mov dx,0x502; mov eax,3; out dx,eax  (kick of a missing vNIC)
        (
            &[0x66, 0xba, 0x02, 0x05, 0xb8, 3, 0, 0, 0, 0xef],
            "unknown vNIC 3",
        ),
        // in eax,dx from 0x501
        (&[0x66, 0xba, 0x01, 0x05, 0xed], "read from port 0x501"),
    ];
    for (code, want) in cases {
        let vm = Vm::create_raw(&cfg, code).unwrap();
        vm.join();
        let e = format!("{:?}", vm.exit());
        assert!(e.contains("Crashed") && e.contains(want), "{want}: {e}");
    }
}

#[test]
fn many_vms_at_once() {
    if !kvm() {
        return;
    }
    let n = 32;
    let vms: Vec<Vm> = (0..n)
        .map(|i| Vm::create(&config(100 + i, false).0, &mut |_| {}).unwrap())
        .collect();
    for vm in &vms {
        assert!(
            wait_state(vm, state::EMPTY, Duration::from_secs(10)),
            "{:?}",
            vm.exit()
        );
    }
    for vm in &vms {
        let (st, msg) = call(
            vm,
            Op::Install,
            "",
            "Idle -> Discard;",
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(st, Status::Ok, "{msg}");
    }
    for vm in &vms {
        call(vm, Op::Stop, "", "", Duration::from_secs(10)).unwrap();
    }
    for vm in &vms {
        assert_eq!(
            wait_exit(vm, Duration::from_secs(10)),
            Some(Exit::Exited(0))
        );
    }
}

/// A console sink that blocks (standard error a pipe nobody reads) holds
/// the vCPU thread inside the sink: `kill` still returns, after its
/// deadline, and reports that the thread was abandoned; the VM's memory
/// stays mapped for the thread, which finishes once the sink returns.
#[test]
fn kill_has_a_deadline_when_the_vcpu_thread_is_stuck() {
    if !kvm() {
        return;
    }
    let stuck = Arc::new((Mutex::new(true), std::sync::Condvar::new()));
    let entered = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (s, e) = (stuck.clone(), entered.clone());
    let cfg = VmConfig {
        id: 13,
        memory: clickos_vmm::DEFAULT_MEMORY,
        vnics: vec![],
        fault_injection: false,
        console: Arc::new(move |_, _| {
            e.store(true, Ordering::SeqCst);
            let (m, c) = &*s;
            let mut blocked = m.lock().unwrap();
            while *blocked {
                blocked = c.wait(blocked).unwrap();
            }
        }),
    };
    let vm = Arc::new(Vm::create(&cfg, &mut |_| {}).unwrap());
    assert!(wait_state(&vm, state::EMPTY, Duration::from_secs(10)));
    // The reply to the install may never come: the first scheduler pass
    // (the Print) runs before it, and that is where the vCPU thread stops.
    let _ = call(
        &vm,
        Op::Install,
        "",
        "InfiniteSource(LIMIT 1, STOP true) -> Print(stuck) -> Discard;",
        Duration::from_millis(500),
    );
    let t0 = Instant::now();
    while !entered.load(Ordering::SeqCst) && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(entered.load(Ordering::SeqCst), "the guest never printed");
    // kill on another thread, watched: before the deadline existed it
    // never returned.
    let (tx, rx) = std::sync::mpsc::channel();
    let v = vm.clone();
    std::thread::spawn(move || {
        v.kill("test");
        let _ = tx.send(());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("kill did not return while the vCPU thread was stuck in the console sink");
    match vm.exit() {
        Some(Exit::Killed(m)) => assert!(m.contains("test") && m.contains("abandoned"), "{m}"),
        e => panic!("{e:?}"),
    }
    // A second kill returns at once; dropping the VM leaves its memory to
    // the thread, which ends when the sink returns.
    vm.kill("again");
    drop(vm);
    let (m, c) = &*stuck;
    *m.lock().unwrap() = false;
    c.notify_all();
}

fn count(vm: &Vm, h: &str) -> u64 {
    let (st, n) = call(vm, Op::Read, h, "", Duration::from_secs(5)).expect("read reply");
    assert_eq!(st, Status::Ok, "{n}");
    n.trim().parse().unwrap()
}

#[test]
fn a_snapshot_resumes_with_its_state_and_its_clock() {
    if !kvm() {
        return;
    }
    let (cfg, _) = config(9, false);
    let vm = Vm::create(&cfg, &mut |_| {}).unwrap();
    let (st, msg) = call(
        &vm,
        Op::Install,
        "",
        "InfiniteSource(LIMIT 1234, STOP false) -> a::Counter -> Discard;
         TimedSource(INTERVAL 0.01) -> t::Counter -> Discard;",
        Duration::from_secs(5),
    )
    .unwrap();
    assert_eq!(st, Status::Ok, "{msg}");
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(count(&vm, "a.count"), 1234);
    let snap = vm.snapshot(b"my note").expect("snapshot");
    let t_before = {
        // A paused guest answers nothing; read the timer count after
        // resuming the original, below, to compare.
        vm.unpause();
        count(&vm, "t.count")
    };
    // Pausing twice and going on works.
    let again = vm.snapshot(b"").expect("second snapshot");
    assert!(again.len() > 4096);
    vm.kill("replaced by its snapshot");
    drop(vm);
    let parsed = clickos_vmm::snapshot::parse(&snap).expect("parse");
    assert_eq!(parsed.note(), b"my note");
    // Well below the 8 MiB of RAM: zero pages and unchanged image pages
    // are left out.
    assert!(snap.len() < 4 << 20, "{} bytes", snap.len());
    std::thread::sleep(Duration::from_millis(300));
    // As if restored on a host whose TSC has nothing to do with this one's:
    // the clock's base in the boot information is garbage (1970); restore
    // must rebase it, or every timer would stall.
    let mut parsed = parsed;
    let bi_page = (clickos_ring::layout::BOOTINFO_OFF / 4096) as u32;
    let run = parsed
        .ram
        .iter_mut()
        .find(|r| (r.0..r.0 + (r.1.len() / 4096) as u32).contains(&bi_page))
        .expect("the boot information page is in the snapshot");
    let off =
        (bi_page - run.0) as usize * 4096 + std::mem::offset_of!(clickos_ring::BootInfo, epoch_ns);
    run.1[off..off + 8].copy_from_slice(&0i64.to_le_bytes());
    let (cfg2, _) = config(10, false);
    let vm2 = Vm::restore(&parsed, 10, cfg2.console).expect("restore");
    assert_eq!(count(&vm2, "a.count"), 1234);
    let t0 = count(&vm2, "t.count");
    assert!(
        t0 + 5 >= t_before,
        "timer count went back: {t0} < {t_before}"
    );
    std::thread::sleep(Duration::from_millis(300));
    let t1 = count(&vm2, "t.count");
    // The timer keeps firing (100/s; wide bounds for a loaded machine): a
    // clock that jumped back would stall it.
    assert!(t1 >= t0 + 10, "timer stalled after restore: {t0} -> {t1}");
    assert!(vm2.exit().is_none(), "{:?}", vm2.exit());
    // It takes new configurations and stops cleanly.
    let (st, _) = call(&vm2, Op::Stop, "", "", Duration::from_secs(5)).unwrap();
    assert_eq!(st, Status::Ok);
    assert_eq!(
        wait_exit(&vm2, Duration::from_secs(5)),
        Some(Exit::Exited(0))
    );
}

#[test]
fn a_snapshot_of_a_busy_guest_resumes() {
    if !kvm() {
        return;
    }
    let (cfg, _) = config(11, false);
    let vm = Vm::create(&cfg, &mut |_| {}).unwrap();
    let (st, msg) = call(
        &vm,
        Op::Install,
        "",
        "InfiniteSource(STOP false) -> c::Counter -> Discard;",
        Duration::from_secs(5),
    )
    .unwrap();
    assert_eq!(st, Status::Ok, "{msg}");
    std::thread::sleep(Duration::from_millis(100));
    let snap = vm.snapshot(b"").expect("snapshot of a running guest");
    drop(vm);
    let parsed = clickos_vmm::snapshot::parse(&snap).unwrap();
    let (cfg2, _) = config(12, false);
    let vm2 = Vm::restore(&parsed, 12, cfg2.console).expect("restore");
    let a = count(&vm2, "c.count");
    std::thread::sleep(Duration::from_millis(100));
    let b = count(&vm2, "c.count");
    assert!(b > a, "{a} -> {b}");
}
