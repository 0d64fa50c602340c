//! The same instance scenarios at every isolation level: vm (skipped with
//! the reason when KVM or the vm level is unavailable, a failure in CI),
//! process (the `clickos __instance` child) and none (a thread).

mod common;

use clickos_instance::{
    ConfigError, ConsoleSink, CreateError, Ended, HandlerError, Instance, InstanceOptions,
    Isolation, State, VnicSpec,
};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const LEVELS: [Isolation; 3] = [Isolation::Vm, Isolation::Process, Isolation::None];

static NEXT_ID: AtomicU32 = AtomicU32::new(1);

fn next_id() -> u32 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// Runs `f` at every available level; records why a level is skipped
/// (in CI, an unavailable level fails the test).
fn each_level(f: impl Fn(Isolation)) {
    for level in LEVELS {
        if let Err(why) = level.available() {
            common::skip::skip(&format!("{level} isolation unavailable: {why}"));
            continue;
        }
        println!("level {level}");
        f(level);
    }
}

#[derive(Clone, Default)]
struct Console(Arc<Mutex<String>>);

impl Console {
    fn sink(&self) -> ConsoleSink {
        let buf = self.0.clone();
        Arc::new(move |_id, text: &str| buf.lock().unwrap().push_str(text))
    }
    fn text(&self) -> String {
        self.0.lock().unwrap().clone()
    }
    /// Waits until the console contains `what`.
    fn wait_for(&self, what: &str, timeout: Duration) -> bool {
        let t0 = Instant::now();
        while t0.elapsed() < timeout {
            if self.text().contains(what) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        false
    }
}

fn opts(level: Isolation) -> InstanceOptions {
    InstanceOptions {
        isolation: level,
        helper_exe: Some(env!("CARGO_BIN_EXE_clickos").into()),
        ..Default::default()
    }
}

fn create(level: Isolation, config: &str) -> Instance {
    create_with(config, &opts(level))
}

fn create_with(config: &str, o: &InstanceOptions) -> Instance {
    match Instance::create(next_id(), config, o) {
        Ok(i) => i,
        Err(e) => panic!("{}: creating {config:?}: {e}", o.isolation),
    }
}

/// Waits until the instance has ended.
fn wait_ended(i: &Instance, timeout: Duration) -> Option<Ended> {
    let t0 = Instant::now();
    while t0.elapsed() < timeout {
        if let Some(e) = i.ended() {
            return Some(e);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    i.ended()
}

const FINITE: &str = "InfiniteSource(LIMIT 1000, STOP true) -> c :: Counter -> Discard";
const TIMED: &str = "TimedSource(0.01) -> c :: Counter -> Discard";

#[test]
fn boots_runs_and_answers_handlers() {
    each_level(|level| {
        let i = create(level, FINITE);
        println!(
            "{level}: boot {:?} phases {:?} footprint {:?}",
            i.boot_time(),
            i.phases(),
            i.memory_footprint()
        );
        i.wait_stopped(Duration::from_secs(5)).unwrap();
        assert_eq!(i.state(), State::Stopped);
        assert_eq!(i.read("c.count").unwrap().trim(), "1000");
        let elems = i.list().unwrap();
        assert!(elems.iter().any(|e| e == "c"), "{level}: list {elems:?}");
        let hs = i.handlers("c").unwrap();
        assert!(
            hs.iter().any(|(n, f)| n == "count" && f == "r"),
            "{level}: handlers {hs:?}"
        );
        assert!(hs.iter().any(|(n, f)| n == "reset" && f == "w"));
        // Handlers keep working on a stopped router, and writes too.
        i.write("c.reset", "").unwrap();
        assert_eq!(i.read("c.count").unwrap().trim(), "0");
        assert_eq!(i.stop().unwrap(), Ended::Exited(0), "{level}");
        assert_eq!(i.ended(), Some(Ended::Exited(0)));
        assert!(matches!(i.read("c.count"), Err(HandlerError::Ended(_))));
    });
}

#[test]
fn timers_run_while_idle_and_writes_take_effect() {
    each_level(|level| {
        let i = create(
            level,
            &format!("{TIMED}; r :: RatedSource(RATE 100) -> rc :: Counter -> Discard"),
        );
        std::thread::sleep(Duration::from_millis(200));
        let n: u64 = i.read("c.count").unwrap().trim().parse().unwrap();
        assert!(
            n >= 5,
            "{level}: TimedSource(0.01) ran only {n} times in 200 ms"
        );
        assert!(matches!(i.state(), State::Idle | State::Running), "{level}");
        i.write("c.reset", "").unwrap();
        let m: u64 = i.read("c.count").unwrap().trim().parse().unwrap();
        assert!(m < n, "{level}: reset did not reset ({m} after {n})");
        i.write("r.rate", "250").unwrap();
        assert_eq!(i.read("r.rate").unwrap().trim(), "250");
        // Handler round trips on an idle instance.
        let t0 = Instant::now();
        let rounds = 200;
        for _ in 0..rounds {
            i.read("c.count").unwrap();
        }
        println!(
            "{level}: handler read {:?} per round trip",
            t0.elapsed() / rounds
        );
        assert_eq!(i.stop().unwrap(), Ended::Exited(0));
    });
}

#[test]
fn handler_errors_have_kinds() {
    each_level(|level| {
        let i = create(level, TIMED);
        assert!(
            matches!(i.read("nope.count"), Err(HandlerError::NoSuchElement(_))),
            "{level}: {:?}",
            i.read("nope.count")
        );
        assert!(
            matches!(i.read("c.nope"), Err(HandlerError::NoSuchHandler(_))),
            "{level}: {:?}",
            i.read("c.nope")
        );
        assert!(
            matches!(
                i.write("c.count", "3"),
                Err(HandlerError::PermissionDenied(_))
            ),
            "{level}: {:?}",
            i.write("c.count", "3")
        );
        let long = "x".repeat(300);
        assert!(matches!(i.read(&long), Err(HandlerError::BadRequest(_))));
        assert!(
            matches!(i.fault("panic"), Err(HandlerError::PermissionDenied(_))),
            "{level}: faults need fault_injection"
        );
        assert!(i.read("c.count").is_ok());
    });
}

#[test]
fn configuration_errors_and_atomic_replace() {
    each_level(|level| {
        match Instance::create(next_id(), "x :: NoSuchClass -> Discard", &opts(level)) {
            Err(CreateError::Config(ConfigError::Invalid(lines))) => {
                assert!(
                    lines.iter().any(|l| l.contains("config:1:")),
                    "{level}: {lines:?}"
                );
            }
            Err(e) => panic!("{level}: expected a configuration error, got {e}"),
            Ok(_) => panic!("{level}: a bad configuration was accepted"),
        }
        let i = create(level, TIMED);
        match i.install_as("ok :: Counter;\ny :: NoSuchClass;", "bad.click") {
            Err(ConfigError::Invalid(lines)) => {
                assert!(
                    lines.iter().any(|l| l.contains("bad.click:2:")),
                    "{level}: {lines:?}"
                );
            }
            other => panic!("{level}: {other:?}"),
        }
        // The old configuration keeps running.
        assert!(i.read("c.count").is_ok(), "{level}");
        i.install("InfiniteSource(LIMIT 7, STOP true) -> d :: Counter -> Discard")
            .unwrap();
        i.wait_stopped(Duration::from_secs(5)).unwrap();
        assert_eq!(i.read("d.count").unwrap().trim(), "7");
        assert!(matches!(
            i.read("c.count"),
            Err(HandlerError::NoSuchElement(_))
        ));
        // Compound elements: names are plain strings for the engine.
        i.install(
            "elementclass Two { input -> c :: Counter -> output }\n\
             InfiniteSource(LIMIT 5, STOP true) -> t :: Two -> Discard",
        )
        .unwrap();
        i.wait_stopped(Duration::from_secs(5)).unwrap();
        assert_eq!(i.read("t/c.count").unwrap().trim(), "5", "{level}");
        // A new configuration runs again after a stopped one.
        i.install(TIMED).unwrap();
        assert!(matches!(i.state(), State::Idle | State::Running));
        assert!(i.read("c.count").is_ok());
        // Installing keeps the state of elements of the same name (Click's
        // hot swap): the queued packets survive, the source does not.
        i.install("InfiniteSource(LIMIT 4, STOP false) -> q :: Queue(10) -> Idle")
            .unwrap();
        let t0 = std::time::Instant::now();
        while i.read("q.length").unwrap().trim() != "4" {
            assert!(t0.elapsed() < Duration::from_secs(5), "{level}");
            std::thread::sleep(Duration::from_millis(5));
        }
        i.install("Idle -> q :: Queue(10) -> Idle").unwrap();
        assert_eq!(i.read("q.length").unwrap().trim(), "4", "{level}");
    });
}

#[test]
fn console_output_reaches_the_sink() {
    each_level(|level| {
        let con = Console::default();
        let o = InstanceOptions {
            console: Some(con.sink()),
            ..opts(level)
        };
        let i = create_with(
            "InfiniteSource(DATA \\<48454c4c4f>, LIMIT 3, STOP true) -> Print(hello) -> Discard",
            &o,
        );
        i.wait_stopped(Duration::from_secs(5)).unwrap();
        assert!(
            con.wait_for("hello", Duration::from_secs(2)),
            "{level}: console {:?}",
            con.text()
        );
        assert_eq!(i.stop().unwrap(), Ended::Exited(0));
    });
}

#[test]
fn vnic_echo() {
    each_level(|level| {
        let o = InstanceOptions {
            vnics: vec![VnicSpec::default()],
            ..opts(level)
        };
        let i = create_with("f :: FromVNIC(0) -> c :: Counter -> ToVNIC(0)", &o);
        let port = i.vnic(0).unwrap();
        assert!(i.vnic(1).is_none());
        for round in 0..3 {
            let frames: Vec<Vec<u8>> = (0..20u8)
                .map(|k| {
                    let mut f = vec![round as u8; 60];
                    f[0] = k;
                    f
                })
                .collect();
            for f in &frames {
                assert!(port.send(f));
            }
            port.flush();
            for f in &frames {
                let got = port
                    .recv_timeout(Duration::from_secs(2))
                    .unwrap_or_else(|| panic!("{level}: round {round}: no echo"));
                assert_eq!(&got, f);
            }
            // Let the instance fall idle between rounds.
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(i.read("c.count").unwrap().trim(), "60");
        assert!(port.recv().is_none());
        let t0 = Instant::now();
        for _ in 0..100 {
            port.send_now(&[7u8; 64]);
            port.recv_timeout(Duration::from_secs(1)).unwrap();
        }
        println!("{level}: vNIC echo {:?} per frame", t0.elapsed() / 100);
        assert_eq!(i.stop().unwrap(), Ended::Exited(0));
    });
}

/// Injects `kind` into a fresh instance and checks how it ends; a neighbour
/// created beforehand keeps answering.
fn fault_case(level: Isolation, kind: &str, vnics: usize, check: impl Fn(&Ended) -> bool) {
    let neighbour = create(level, TIMED);
    let con = Console::default();
    let o = InstanceOptions {
        fault_injection: true,
        vnics: vec![VnicSpec::default(); vnics],
        console: Some(con.sink()),
        ..opts(level)
    };
    let victim = create_with(
        if vnics > 0 {
            "FromVNIC(0) -> ToVNIC(0); TimedSource(0.01) -> c :: Counter -> Discard"
        } else {
            TIMED
        },
        &o,
    );
    let r = victim.fault(kind);
    println!("{level}: fault {kind}: reply {r:?}");
    if kind == "scribble-rings" {
        // The host notices when it next touches the rings.
        let port = victim.vnic(0).unwrap();
        let t0 = Instant::now();
        while victim.ended().is_none() && t0.elapsed() < Duration::from_secs(3) {
            port.send_now(b"probe");
            port.recv_timeout(Duration::from_millis(50));
        }
    }
    let t0 = Instant::now();
    while victim.ended().is_none() && t0.elapsed() < Duration::from_secs(6) {
        let _ = victim.read("c.count");
        std::thread::sleep(Duration::from_millis(20));
    }
    let end = wait_ended(&victim, Duration::from_secs(1))
        .unwrap_or_else(|| panic!("{level}: fault {kind}: the instance is still alive"));
    println!("{level}: fault {kind}: {end}; console: {:?}", con.text());
    assert!(check(&end), "{level}: fault {kind}: ended as {end:?}");
    assert!(matches!(
        victim.read("c.count"),
        Err(HandlerError::Ended(_))
    ));
    assert!(
        neighbour.read("c.count").is_ok(),
        "{level}: the neighbour stopped answering after fault {kind}"
    );
    assert_eq!(neighbour.ended(), None);
}

#[test]
fn fault_panic() {
    each_level(|level| {
        fault_case(
            level,
            "panic",
            0,
            |e| matches!(e, Ended::Panicked(m) if m.contains("injected fault: panic")),
        )
    });
}

#[test]
fn fault_spin_is_caught_by_the_watchdog() {
    each_level(|level| {
        fault_case(
            level,
            "spin",
            0,
            |e| matches!(e, Ended::Killed(m) if m.contains("unresponsive")),
        )
    });
}

#[test]
fn fault_oom() {
    each_level(|level| {
        if level == Isolation::None {
            // No memory limit: the fault is refused and the instance lives.
            let o = InstanceOptions {
                fault_injection: true,
                ..opts(level)
            };
            let i = create_with(TIMED, &o);
            assert!(
                matches!(i.fault("oom"), Err(HandlerError::Failed(m)) if m.contains("memory")),
                "none: oom must be refused"
            );
            assert!(i.read("c.count").is_ok());
            return;
        }
        fault_case(level, "oom", 0, |e| match e {
            Ended::Panicked(m) | Ended::Crashed(m) => m.contains("memory"),
            _ => false,
        })
    });
}

#[test]
fn fault_scribble_mailbox() {
    each_level(|level| {
        fault_case(
            level,
            "scribble-mailbox",
            0,
            |e| matches!(e, Ended::Crashed(m) if m.contains("corrupted mailbox")),
        )
    });
}

#[test]
fn fault_scribble_rings() {
    each_level(|level| {
        fault_case(
            level,
            "scribble-rings",
            1,
            |e| matches!(e, Ended::Crashed(m) if m.contains("corrupted ring")),
        )
    });
}

#[test]
fn destroy_kills_and_reports() {
    each_level(|level| {
        let i = create(level, TIMED);
        let busy = create(level, "InfiniteSource -> c :: Counter -> Discard");
        assert_eq!(busy.state(), State::Running);
        std::thread::sleep(Duration::from_millis(50));
        let n: u64 = busy.read("c.count").unwrap().trim().parse().unwrap();
        assert!(n > 0);
        assert_eq!(i.destroy(), Ended::Killed("destroyed".into()));
        assert_eq!(busy.destroy(), Ended::Killed("destroyed".into()));
    });
}

#[test]
fn levels_parse() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Instance>();
    shareable::<clickos_instance::VnicPort>();
    assert_eq!("vm".parse::<Isolation>(), Ok(Isolation::Vm));
    assert_eq!("process".parse::<Isolation>(), Ok(Isolation::Process));
    assert_eq!("none".parse::<Isolation>(), Ok(Isolation::None));
    assert!("jail".parse::<Isolation>().is_err());
    let (level, note) = Isolation::default_for_host();
    match level {
        Isolation::Vm => assert!(note.is_none()),
        _ => assert!(note.unwrap().contains("vm")),
    }
}

/// The pid of process-level instance `id` (its command line names it).
fn child_pid(id: u32) -> Option<u32> {
    let needle = format!("\0__instance\0{id}\0");
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(c) = std::fs::read(format!("/proc/{pid}/cmdline")) {
            if String::from_utf8_lossy(&c).contains(&needle) {
                return Some(pid);
            }
        }
    }
    None
}

fn status_field(pid: u32, field: &str) -> String {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix(field))
        .unwrap_or("")
        .trim()
        .to_string()
}

#[test]
fn process_level_is_confined() {
    let i = create(Isolation::Process, TIMED);
    let pid = child_pid(i.id()).expect("the instance process");
    assert_eq!(status_field(pid, "Seccomp:"), "2", "seccomp filter mode");
    assert_eq!(status_field(pid, "NoNewPrivs:"), "1");
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let as_line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))
        .unwrap()
        .to_string();
    assert!(!as_line.contains("unlimited"), "{as_line}");
    // Namespaces, where this host permits them (we run as root here).
    let ns = |p: &str| std::fs::read_link(p).ok();
    if ns(&format!("/proc/{pid}/ns/net")) == ns("/proc/self/ns/net") {
        // the rest of the test still runs; in CI this fails
        common::skip::skip(
            "the namespace check: the instance shares our network namespace (unshare not permitted?)",
        );
    }
    // stdio, the wake and done eventfds: nothing else.
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count();
    assert_eq!(fds, 5, "open descriptors in the instance");
    let rss = i.memory_footprint().unwrap();
    println!("process: instance RSS {} KiB; {as_line}", rss / 1024);
    assert!(i.read("c.count").is_ok());
    // Dropping the instance kills the process.
    drop(i);
    let t0 = Instant::now();
    while std::path::Path::new(&format!("/proc/{pid}")).exists()
        && t0.elapsed() < Duration::from_secs(2)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the child outlived its Instance"
    );
}

/// CPU time (ns) a task has used, from schedstat.
fn cpu_ns(path: &str) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Our threads whose name starts with `prefix`.
fn threads_named(prefix: &str) -> Vec<String> {
    let mut v = vec![];
    for e in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let p = e.path();
        if let Ok(c) = std::fs::read_to_string(p.join("comm")) {
            if c.trim().starts_with(prefix) {
                v.push(p.join("schedstat").to_string_lossy().into_owned());
            }
        }
    }
    v
}

#[test]
fn idle_instances_cost_no_cpu() {
    each_level(|level| {
        let n = match level {
            Isolation::None => 1000,
            _ => 100,
        };
        let insts: Vec<Instance> = (0..n)
            .map(|_| create(level, "Idle -> c :: Counter -> Discard"))
            .collect();
        // Where each instance runs: a thread `clickos-ID` (none), a vCPU
        // thread `vcpu-ID` (vm), or a child process (process).
        let thread_prefix = match level {
            Isolation::None => Some("clickos-"),
            Isolation::Vm => Some("vcpu-"),
            Isolation::Process => None,
        };
        let stats: Vec<String> = match thread_prefix {
            Some(prefix) => {
                let ids: std::collections::HashSet<String> = insts
                    .iter()
                    .map(|i| format!("{prefix}{}", i.id()))
                    .collect();
                threads_named(prefix)
                    .into_iter()
                    .filter(|p| {
                        let comm = std::fs::read_to_string(p.replace("schedstat", "comm"))
                            .unwrap_or_default();
                        ids.contains(comm.trim())
                    })
                    .collect()
            }
            None => insts
                .iter()
                .filter_map(|i| child_pid(i.id()))
                .map(|pid| format!("/proc/{pid}/schedstat"))
                .collect(),
        };
        assert_eq!(
            stats.len(),
            n,
            "{level}: found {} of {n} instances",
            stats.len()
        );
        let mut all = stats.clone();
        all.extend(threads_named("clickos-watchd"));
        let before: u64 = all.iter().map(|p| cpu_ns(p)).sum();
        let window = Duration::from_secs(2);
        std::thread::sleep(window);
        let used: u64 = all.iter().map(|p| cpu_ns(p)).sum::<u64>() - before;
        let share = used as f64 / window.as_nanos() as f64;
        println!(
            "{level}: {n} idle instances + watchdog used {:.3}% of a core",
            share * 100.0
        );
        assert!(
            share < 0.02,
            "{level}: {n} idle instances use {:.1}% of a core",
            share * 100.0
        );
        for i in &insts {
            assert_eq!(i.state(), State::Idle);
        }
        assert_eq!(insts[n / 2].read("c.count").unwrap().trim(), "0");
    });
}

/// The instance fills its TX ring with slots whose lengths exceed the
/// buffer: the host's `recv` reports the instance as corrupted (it used to
/// skip such slots in a loop the instance could keep busy, unreported).
#[test]
fn fault_bad_slot_lengths_is_corruption() {
    each_level(|level| {
        let neighbour = create(level, TIMED);
        let o = InstanceOptions {
            fault_injection: true,
            vnics: vec![VnicSpec::default()],
            ..opts(level)
        };
        let victim = create_with("FromVNIC(0) -> ToVNIC(0)", &o);
        assert_eq!(victim.fault("bad-slot-lengths").unwrap(), "", "{level}");
        let port = victim.vnic(0).unwrap();
        let t0 = Instant::now();
        while victim.ended().is_none() && t0.elapsed() < Duration::from_secs(10) {
            port.recv_timeout(Duration::from_millis(50));
        }
        match victim.ended() {
            Some(Ended::Crashed(m)) => assert!(
                m.contains("corrupted ring") && m.contains("slot length"),
                "{level}: {m}"
            ),
            e => panic!("{level}: bad slot lengths not reported: {e:?}"),
        }
        assert!(neighbour.read("c.count").is_ok(), "{level}: neighbour");
    });
}

/// A process-level instance's own namespaces, core dumps and
/// dumpability, seen from outside through /proc. Where this host does not
/// permit the namespaces the test says so and passes, except under
/// `CI=true`, where a missing namespace is a failure.
#[test]
fn process_level_has_its_own_namespaces_and_dumps_no_core() {
    let ci = std::env::var("CI").as_deref() == Ok("true");
    let i = create(Isolation::Process, TIMED);
    let pid = child_pid(i.id()).expect("the instance process");
    let ns = |p: &str, kind: &str| std::fs::read_link(format!("/proc/{p}/ns/{kind}")).unwrap();
    for kind in ["user", "pid", "net", "mnt", "ipc", "uts"] {
        if ns(&pid.to_string(), kind) == ns("self", kind) {
            let msg = format!("the instance shares our {kind} namespace");
            assert!(!ci, "{msg} (CI=true: namespaces must be available)");
            println!("skipped: {msg} (not permitted here?)");
        }
    }
    // Its own PID namespace: it is pid 1 there, and it has a pid here.
    let nspid = status_field(pid, "NSpid:");
    let levels: Vec<&str> = nspid.split_whitespace().collect();
    if ns(&pid.to_string(), "pid") != ns("self", "pid") {
        assert_eq!(levels.len(), 2, "NSpid: {nspid}");
        assert_eq!(levels[0], pid.to_string());
        assert_eq!(levels[1], "1", "NSpid: {nspid}");
    }
    // A root parent's instance runs as nobody, with no capabilities.
    let uid = status_field(pid, "Uid:");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 && ns(&pid.to_string(), "user") != ns("self", "user") {
        assert_eq!(uid, "65534\t65534\t65534\t65534", "Uid");
        assert_eq!(status_field(pid, "Gid:"), "65534\t65534\t65534\t65534");
        assert_eq!(status_field(pid, "Groups:"), "");
    }
    assert_eq!(status_field(pid, "CapEff:"), "0000000000000000");
    assert_eq!(status_field(pid, "CapPrm:"), "0000000000000000");
    // No core dumps: RLIMIT_CORE 0 ...
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let core: Vec<&str> = limits
        .lines()
        .find(|l| l.starts_with("Max core file size"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(&core[4..6], ["0", "0"], "{core:?}");
    // ... and not dumpable: the kernel then gives the files in its /proc
    // directory to root (of the init user namespace, since 0 is unmapped
    // in the instance's) instead of to the user it runs as.
    use std::os::unix::fs::MetadataExt;
    let status = format!("/proc/{pid}/status");
    let owner = std::fs::metadata(&status).unwrap().uid();
    let euid: u32 = uid.split_whitespace().nth(1).unwrap().parse().unwrap();
    if euid != 0 {
        assert_eq!(owner, 0, "{status} belongs to uid {owner}: dumpable");
    } else {
        println!("note: the instance runs as root; dumpability is not observable here");
    }
    assert!(i.read("c.count").is_ok());
}
