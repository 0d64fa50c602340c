//! `clickos vm bench`: boot time, density, handler latency and in-instance
//! engine speed, printed as a table (medians and p99 over many runs).

use click::prelude::*;
use clickos_instance::{Instance, InstanceOptions, Isolation};
use clickos_userlevel::clock::SystemClock;
use std::io::Write;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A small configuration: one packet through a counter, then idle (no timers).
pub const SMALL: &str = "src :: InfiniteSource(LIMIT 1) -> c :: Counter -> Discard;";
/// Busy: packets forever.
const BUSY: &str = "src :: InfiniteSource(BURST 32) -> c :: Counter -> Discard;";
const FIREWALL: &str = include_str!("../../../bench/firewall.click");

struct Opts {
    isolation: Isolation,
    runs: usize,
    instances: usize,
    packets: u64,
    only: Vec<String>,
    json: Option<String>,
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let idx = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[idx.min(v.len() - 1)]
}

fn tty() -> bool {
    // SAFETY: isatty has no preconditions.
    unsafe { libc::isatty(2) == 1 }
}

/// A progress line on a terminal (nothing when standard error is a file).
pub(crate) fn progress(msg: &str) {
    if !tty() {
        return;
    }
    let mut e = std::io::stderr().lock();
    let _ = write!(e, "\r\x1b[2K{msg}");
    let _ = e.flush();
}

pub(crate) fn progress_done() {
    if !tty() {
        return;
    }
    let mut e = std::io::stderr().lock();
    let _ = write!(e, "\r\x1b[2K");
    let _ = e.flush();
}

fn options(o: &Opts) -> InstanceOptions {
    InstanceOptions {
        isolation: o.isolation,
        helper_exe: std::env::current_exe().ok(),
        console: Some(std::sync::Arc::new(|id: u32, t: &str| {
            eprintln!("[instance {id}] {}", t.trim_end())
        })),
        ..Default::default()
    }
}

/// Drops instances on a background thread: destroying a VM can take
/// milliseconds, and a control plane keeps that off the create path.
fn reaper() -> (mpsc::Sender<Instance>, std::thread::JoinHandle<()>) {
    let (tx, rx) = mpsc::channel::<Instance>();
    let h = std::thread::spawn(move || {
        for i in rx {
            drop(i)
        }
    });
    (tx, h)
}

/// (user + system) CPU seconds of this whole process, all threads.
fn process_cpu() -> f64 {
    let (user, system) = clickos_userlevel::sys::cpu_times();
    user + system
}

/// CPU seconds of this whole process, all threads (a vCPU thread's guest
/// time included), to the nanosecond.
fn process_cpu_precise() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn meminfo_kib(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    s.lines()
        .find(|l| l.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn used_kib() -> Option<u64> {
    Some(meminfo_kib("MemTotal:")? - meminfo_kib("MemAvailable:")?)
}

struct Row {
    what: String,
    median: String,
    p99: String,
    target: &'static str,
    reference: &'static str,
}

fn ms(x: f64) -> String {
    if x < 1e-3 {
        format!("{:.1} µs", x * 1e6)
    } else {
        format!("{:.2} ms", x * 1e3)
    }
}

fn bench_boot(o: &Opts, rows: &mut Vec<Row>, json: &mut Vec<String>) -> Result<(), String> {
    let (tx, reap) = reaper();
    let mut t = Vec::with_capacity(o.runs);
    for i in 0..o.runs {
        if i % 10 == 0 {
            progress(&format!("boot: {i}/{}", o.runs));
        }
        let t0 = Instant::now();
        let inst =
            Instance::create(10_000 + i as u32, SMALL, &options(o)).map_err(|e| e.to_string())?;
        t.push(t0.elapsed().as_secs_f64());
        if inst.read("c.count").as_deref().map(str::trim) != Ok("1") {
            return Err("boot: the instance's first task did not run".into());
        }
        let _ = tx.send(inst);
    }
    drop(tx);
    let _ = reap.join();
    progress_done();
    let (m, p) = (pct(&mut t, 0.5), pct(&mut t, 0.99));
    json.push(format!(
        "\"boot_ms\": {{\"median\": {:.4}, \"p99\": {:.4}}}",
        m * 1e3,
        p * 1e3
    ));
    rows.push(Row {
        what: format!(
            "boot: create → config installed, first task run ({} runs)",
            o.runs
        ),
        median: ms(m),
        p99: ms(p),
        target: "≤ 3 ms",
        reference: "ClickOS ~30 ms; LightVM 2.3 ms; Firecracker ≥ 125 ms",
    });
    Ok(())
}

fn bench_density(o: &Opts, rows: &mut Vec<Row>, json: &mut Vec<String>) -> Result<(), String> {
    let n = o.instances;
    std::thread::sleep(Duration::from_millis(200));
    let used0 = used_kib();
    let rss0 = rss_kib();
    let mut insts = Vec::with_capacity(n);
    let mut lat = Vec::with_capacity(n);
    let start = Instant::now();
    for i in 0..n {
        if i % 25 == 0 {
            progress(&format!("density: {i}/{n} instances"));
        }
        let t0 = Instant::now();
        let inst = Instance::create(20_000 + i as u32, SMALL, &options(o))
            .map_err(|e| format!("density: instance {}: {e}", i + 1))?;
        lat.push(t0.elapsed().as_secs_f64());
        insts.push(inst);
    }
    let total = start.elapsed().as_secs_f64();
    progress("density: settling");
    std::thread::sleep(Duration::from_millis(500));
    let used1 = used_kib();
    let rss1 = rss_kib();
    let footprint: u64 = insts.iter().filter_map(|i| i.memory_footprint()).sum();
    // CPU while all are idle.
    let window = if n >= 1000 { 5.0 } else { 2.0 };
    progress(&format!("density: measuring idle CPU for {window} s"));
    let c0 = process_cpu();
    let w0 = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(window));
    let cpu = (process_cpu() - c0) / w0.elapsed().as_secs_f64() * 100.0;
    // Everyone still answers.
    for (i, inst) in insts.iter().enumerate() {
        if i % 100 == 0 {
            progress(&format!("density: checking {i}/{n}"));
        }
        if inst.read("c.count").as_deref().map(str::trim) != Ok("1") {
            return Err(format!("density: instance {} does not answer", i + 1));
        }
    }
    progress("density: destroying");
    let d0 = Instant::now();
    drop(insts);
    let destroy = d0.elapsed().as_secs_f64();
    progress_done();
    let per = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a) as f64 / n as f64 / 1024.0),
        _ => None,
    };
    let host_mib = per(used0, used1);
    let rss_mib = per(rss0, rss1);
    let nth = |k: usize| lat.get(k - 1).copied().unwrap_or(f64::NAN);
    let (l1, l100, ln) = (nth(1), nth(100.min(n)), nth(n));
    json.push(format!(
        "\"density\": {{\"instances\": {n}, \"first_ms\": {:.4}, \"hundredth_ms\": {:.4}, \"last_ms\": {:.4}, \"total_s\": {total:.3}, \"host_mib_per_instance\": {}, \"rss_mib_per_instance\": {}, \"idle_cpu_percent\": {cpu:.3}, \"destroy_all_s\": {destroy:.3}}}",
        l1 * 1e3,
        l100 * 1e3,
        ln * 1e3,
        host_mib.map_or("null".into(), |x| format!("{x:.3}")),
        rss_mib.map_or("null".into(), |x| format!("{x:.3}")),
    ));
    rows.push(Row {
        what: format!(
            "density: start of the 1st / {}th / {n}th instance",
            100.min(n)
        ),
        median: format!("{} / {} / {}", ms(l1), ms(l100), ms(ln)),
        p99: format!("all {n} in {total:.2} s"),
        target: "≤ 10 ms (1000th)",
        reference: "ClickOS 400th: 219 ms",
    });
    rows.push(Row {
        what: format!("density: host memory per idle instance ({n} running)"),
        median: match host_mib {
            Some(x) => format!("{x:.2} MiB"),
            None => "n/a".into(),
        },
        p99: match (rss_mib, footprint) {
            (Some(r), 0) => format!("RSS {r:.2} MiB"),
            (Some(r), f) => format!(
                "RSS {r:.2} MiB; own {:.2} MiB",
                f as f64 / n as f64 / 1048576.0
            ),
            _ => String::new(),
        },
        target: "≤ 2 MiB",
        reference: "ClickOS 5 MB",
    });
    rows.push(Row {
        what: format!("density: CPU with {n} idle instances"),
        median: format!("{cpu:.2} % of a core"),
        p99: format!("destroying all: {destroy:.2} s"),
        target: "< 2 %",
        reference: "",
    });
    Ok(())
}

fn latency(
    inst: &Instance,
    runs: usize,
    f: impl Fn(&Instance) -> Result<(), String>,
) -> Result<(f64, f64), String> {
    let mut t = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t0 = Instant::now();
        f(inst)?;
        t.push(t0.elapsed().as_secs_f64());
    }
    Ok((pct(&mut t, 0.5), pct(&mut t, 0.99)))
}

fn bench_handlers(o: &Opts, rows: &mut Vec<Row>, json: &mut Vec<String>) -> Result<(), String> {
    let runs = (o.runs * 10).max(100);
    for (label, config) in [("a busy", BUSY), ("an idle", SMALL)] {
        progress(&format!("handlers: {label} instance"));
        let inst = Instance::create(30_000, config, &options(o)).map_err(|e| e.to_string())?;
        let read = |i: &Instance| i.read("c.count").map(|_| ()).map_err(|e| e.to_string());
        let write = |i: &Instance| i.write("c.reset_counts", "").map_err(|e| e.to_string());
        if label == "an idle" {
            // Let it settle into IDLE between calls, as an idle instance would be.
            std::thread::sleep(Duration::from_millis(20));
        }
        let (wm, wp) = latency(&inst, runs, write)?;
        let (rm, rp) = latency(&inst, runs, read)?;
        progress_done();
        json.push(format!(
            "\"handlers_{}_us\": {{\"write_median\": {:.2}, \"write_p99\": {:.2}, \"read_median\": {:.2}, \"read_p99\": {:.2}}}",
            label.rsplit(' ').next().unwrap_or(label),
            wm * 1e6,
            wp * 1e6,
            rm * 1e6,
            rp * 1e6
        ));
        rows.push(Row {
            what: format!("handler write on {label} instance (c.reset_counts, {runs} calls)"),
            median: ms(wm),
            p99: ms(wp),
            target: if label == "a busy" { "≤ 50 µs" } else { "" },
            reference: "ClickOS 0.1 ms",
        });
        rows.push(Row {
            what: format!("handler read on {label} instance (c.count, {runs} calls)"),
            median: ms(rm),
            p99: ms(rp),
            target: if label == "a busy" { "≤ 100 µs" } else { "" },
            reference: "ClickOS 9.4 ms",
        });
    }
    Ok(())
}

/// Runs the firewall directly, as `clickos run` does; returns (wall, CPU)
/// seconds.
fn firewall_direct(config: &str) -> Result<(f64, f64), String> {
    let reg = clickos_guest::registry();
    let r = Router::from_config(
        config,
        "bench/firewall.click",
        &[],
        &reg,
        Box::new(SystemClock),
        Box::new(BufferConsole::default()),
        RouterOptions::default(),
    )
    .map_err(|e| e.join("\n"))?;
    let (t0, c0) = (Instant::now(), process_cpu_precise());
    clickos_userlevel::runloop::drive(&r, None);
    Ok((t0.elapsed().as_secs_f64(), process_cpu_precise() - c0))
}

/// Runs the firewall in an instance; returns (wall, CPU) seconds, the CPU
/// time being this process's: the instance's (its vCPU thread, or its
/// thread at isolation none) and the caller's, which only waits. At
/// isolation process the instance is another process: no CPU figure (NaN).
fn firewall_instance(o: &Opts, config: &str) -> Result<(f64, f64), String> {
    let inst = Instance::create(40_000, config, &options(o)).map_err(|e| e.to_string())?;
    let (t0, c0) = (Instant::now(), process_cpu_precise());
    inst.wait_stopped(Duration::from_secs(120))
        .map_err(|e| format!("firewall instance: {e}"))?;
    let cpu = if o.isolation == Isolation::Process {
        f64::NAN
    } else {
        process_cpu_precise() - c0
    };
    Ok((t0.elapsed().as_secs_f64(), cpu))
}

fn bench_speed(o: &Opts, rows: &mut Vec<Row>, json: &mut Vec<String>) -> Result<(), String> {
    let defines = vec![("N".to_string(), o.packets.to_string())];
    let flat = click_lang::parse_config(FIREWALL, "bench/firewall.click", &defines)
        .map_err(|e| format!("{e:?}"))?;
    let config = click_lang::unparse(&flat);
    let rounds = 3;
    let (mut direct, mut inside) = (f64::INFINITY, f64::INFINITY);
    let (mut direct_cpu, mut inside_cpu) = (f64::INFINITY, f64::INFINITY);
    for k in 0..rounds {
        progress(&format!("speed: round {}/{rounds}: clickos run", k + 1));
        let (w, c) = firewall_direct(&config)?;
        (direct, direct_cpu) = (direct.min(w), direct_cpu.min(c));
        progress(&format!("speed: round {}/{rounds}: in an instance", k + 1));
        let (w, c) = firewall_instance(o, &config)?;
        (inside, inside_cpu) = (
            inside.min(w),
            if c.is_nan() { c } else { inside_cpu.min(c) },
        );
    }
    progress_done();
    let n = o.packets as f64;
    let (d, i) = (n / direct / 1e6, n / inside / 1e6);
    // Per CPU-second: what a loaded machine's other work does not move.
    let (dc, ic) = (n / direct_cpu / 1e6, n / inside_cpu / 1e6);
    let per_cpu = if ic.is_nan() {
        String::new()
    } else {
        format!(
            ", \"clickos_run_per_cpu_s\": {dc:.3}, \"instance_per_cpu_s\": {ic:.3}, \"ratio_per_cpu_s\": {:.4}",
            ic / dc
        )
    };
    json.push(format!(
        "\"firewall_mpps\": {{\"clickos_run\": {d:.3}, \"instance\": {i:.3}, \"ratio\": {:.4}{per_cpu}}}",
        i / d
    ));
    rows.push(Row {
        what: format!(
            "firewall, 64 B, {} packets: in the instance vs `clickos run` (best of {rounds})",
            o.packets
        ),
        median: format!("{i:.2} vs {d:.2} Mp/s"),
        p99: if ic.is_nan() {
            format!("{:.1} %", i / d * 100.0)
        } else {
            format!(
                "{:.1} % (per CPU-second: {ic:.2} vs {dc:.2} Mp/s, {:.1} %)",
                i / d * 100.0,
                ic / dc * 100.0
            )
        },
        target: "≥ 95 %",
        reference: "",
    });
    Ok(())
}

pub fn bench(args: &[String]) -> i32 {
    let mut o = Opts {
        isolation: Isolation::Vm,
        runs: 100,
        instances: 1000,
        packets: 10_000_000,
        only: Vec::new(),
        json: None,
    };
    let mut iso: Option<Isolation> = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let mut next = || {
            i += 1;
            args.get(i).cloned()
        };
        let bad = |what: &str| {
            eprintln!("clickos vm bench: {what}");
            1
        };
        match a {
            "--isolation" | "-i" => match next().as_deref().map(super::vmcmd::parse_isolation) {
                Some(Ok(l)) => iso = Some(l),
                Some(Err(e)) => return bad(&e),
                None => return bad("--isolation needs a level"),
            },
            "--runs" => match next()
                .and_then(|v| v.parse().ok())
                .filter(|&n: &usize| n > 0)
            {
                Some(n) => o.runs = n,
                None => return bad("--runs needs a positive number"),
            },
            "--instances" => match next()
                .and_then(|v| v.parse().ok())
                .filter(|&n: &usize| n > 0)
            {
                Some(n) => o.instances = n,
                None => return bad("--instances needs a positive number"),
            },
            "--packets" => match next().and_then(|v| v.parse().ok()).filter(|&n: &u64| n > 0) {
                Some(n) => o.packets = n,
                None => return bad("--packets needs a positive number"),
            },
            "--only" => match next() {
                Some(v) => o.only = v.split(',').map(|s| s.trim().to_string()).collect(),
                None => return bad("--only needs a list"),
            },
            "--json" => match next() {
                Some(v) => o.json = Some(v),
                None => return bad("--json needs a file"),
            },
            "--quick" => {
                o.runs = 20;
                o.instances = 100;
                o.packets = 2_000_000;
            }
            "--help" | "-h" => {
                print!("{}", super::vmcmd::usage());
                return 0;
            }
            other => return bad(&format!("unknown option '{other}'")),
        }
        i += 1;
    }
    o.isolation = iso.unwrap_or_else(super::vmcmd::default_isolation);
    for s in &o.only {
        if !["boot", "density", "handlers", "speed"].contains(&s.as_str()) {
            eprintln!("clickos vm bench: unknown benchmark '{s}' (boot, density, handlers, speed)");
            return 1;
        }
    }
    let want = |s: &str| o.only.is_empty() || o.only.iter().any(|x| x == s);
    let mut rows = Vec::new();
    let mut json = vec![format!(
        "\"isolation\": \"{}\"",
        super::vmcmd::level_name(o.isolation)
    )];
    let mut failed = false;
    type Bench = fn(&Opts, &mut Vec<Row>, &mut Vec<String>) -> Result<(), String>;
    let benches: [(&str, Bench); 4] = [
        ("boot", bench_boot),
        ("density", bench_density),
        ("handlers", bench_handlers),
        ("speed", bench_speed),
    ];
    for (name, f) in benches {
        if want(name) {
            if let Err(e) = f(&o, &mut rows, &mut json) {
                progress_done();
                eprintln!("clickos vm bench: {name}: {e}");
                failed = true;
            }
        }
    }
    println!(
        "ClickOS instance benchmarks — isolation '{}', {} CPUs\n",
        super::vmcmd::level_name(o.isolation),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("| measurement | median | p99 / detail | target | reference |");
    println!("|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {} | {} |",
            r.what, r.median, r.p99, r.target, r.reference
        );
    }
    if let Some(path) = &o.json {
        let text = format!("{{\n  {}\n}}\n", json.join(",\n  "));
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("clickos vm bench: {path}: {e}");
            failed = true;
        }
    }
    i32::from(failed)
}
