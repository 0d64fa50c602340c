//! Single-core pipeline benchmark: the shipped `bench/*.click`
//! configurations (which stock Click also runs), in memory, source →
//! configuration → Discard, at 64 and 1500 bytes. Reports packets per
//! CPU-second of the running thread (median of several runs). It prints
//! no ratio against Click: a ratio against a figure from another day or
//! another configuration is not a result. `bench/peers/compare.py` runs
//! Click and FastClick on the same files in the same run.
//!
//!     cargo bench -p click --bench pipelines            # all
//!     cargo bench -p click --bench pipelines firewall   # one
//!     BENCH_N=2000000 BENCH_RUNS=5 cargo bench -p click --bench pipelines
//!     BENCH_JSON=out.json cargo bench -p click --bench pipelines  # + every run as JSON

use click::prelude::*;
use std::time::{SystemTime, UNIX_EPOCH};

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}
extern "C" {
    fn clock_gettime(clk: i32, ts: *mut Timespec) -> i32;
}
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

fn thread_cpu_ns() -> i64 {
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid pointer we pass.
    unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

struct SysClock;
impl Clock for SysClock {
    fn now(&self) -> Timestamp {
        let d = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Timestamp::from_nsec(d.as_nanos() as i64)
    }
}

struct Quiet;
impl Console for Quiet {
    fn error_line(&self, l: &str) {
        eprintln!("{}", l);
    }
    fn stdout(&self, t: &str) {
        print!("{}", t);
    }
}

fn repo(path: &str) -> String {
    format!("{}/../../{}", env!("CARGO_MANIFEST_DIR"), path)
}

/// Runs one configuration; returns (packets, thread CPU ns).
fn run_once(text: &str, file: &str, n: u64, data: &str) -> Result<(u64, i64), String> {
    let defs = vec![
        ("N".to_string(), n.to_string()),
        ("DATA".to_string(), data.to_string()),
    ];
    let reg = Registry::with_builtin();
    let r = Router::from_config(
        text,
        file,
        &defs,
        &reg,
        Box::new(SysClock),
        Box::new(Quiet),
        RouterOptions::default(),
    )
    .map_err(|e| e.join("\n"))?;
    let t0 = thread_cpu_ns();
    r.run_until_idle(&mut |_| {});
    let t1 = thread_cpu_ns();
    Ok((n, t1 - t0))
}

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let n: u64 = std::env::var("BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5_000_000);
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let pipelines: &[(&str, &str)] = &[
        ("floor", "bench/floor.click"),
        ("firewall", "bench/firewall.click"),
        ("firewall-strip", "bench/firewall-strip.click"),
        ("router", "bench/router.click"),
        ("counters", "bench/counters.click"),
        ("iprouter", "bench/iprouter.click"),
    ];
    let sizes = [(64, "bench/udp-64.hex"), (1500, "bench/udp-1500.hex")];
    // (pipeline, size, every run's Mp/s, median) for BENCH_JSON
    let mut json_rows: Vec<String> = Vec::new();
    println!(
        "pipeline        size  Mp/s(CPU)   ns/pkt   (median of {} runs, N={}; same-run ratios against Click: bench/peers/compare.py)",
        runs, n
    );
    println!("--------------  ----  ---------  -------");
    for (name, file) in pipelines {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let text = std::fs::read_to_string(repo(file)).expect("read bench config");
        for (size, hex) in sizes {
            let h = std::fs::read_to_string(repo(hex)).expect("read bench data");
            let data = format!("\\<{}>", h.trim());
            let mut rates = Vec::new();
            for _ in 0..runs {
                match run_once(&text, file, n, &data) {
                    Ok((pk, ns)) => rates.push(pk as f64 / (ns.max(1) as f64 / 1e9) / 1e6),
                    Err(e) => {
                        eprintln!("{}: {}", name, e);
                        break;
                    }
                }
            }
            if rates.is_empty() {
                continue;
            }
            rates.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let med = rates[rates.len() / 2];
            let runs_list: Vec<String> = rates.iter().map(|r| format!("{r:.4}")).collect();
            json_rows.push(format!(
                "{{\"pipeline\": \"{name}\", \"size\": {size}, \"mpps\": [{}], \"median_mpps\": {med:.4}}}",
                runs_list.join(", ")
            ));
            println!(
                "{:<14}  {:>4}  {:>9.2}  {:>7.1}",
                name,
                size,
                med,
                1e3 / med
            );
        }
    }
    if let Ok(path) = std::env::var("BENCH_JSON") {
        let text = format!(
            "{{\n  \"kind\": \"pipelines\",\n  \"n\": {n},\n  \"runs\": {runs},\n  \"results\": [\n    {}\n  ]\n}}\n",
            json_rows.join(",\n    ")
        );
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("BENCH_JSON {path}: {e}");
            std::process::exit(1);
        }
    }
}
