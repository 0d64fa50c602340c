//! Scaling with threads: the firewall (and router) on one thread, as two
//! copies (`-j 2 --replicate`), as Click's two-path configuration placed by
//! StaticThreadSched (`-j 2 bench/firewall-x2.click`), and cut in two across
//! threads (`bench/firewall-split.click`). Each setup runs `clickos run` as
//! a child; runs are interleaved and the median is reported, as aggregate
//! packets per wall-clock second and per CPU-second of the process.
//!
//!     cargo bench -p clickos --bench threads
//!     BENCH_N=10000000 BENCH_RUNS=7 cargo bench -p clickos --bench threads
//!     cargo bench -p clickos --bench threads -- --json out.json

use std::process::{Command, Stdio};
use std::time::Instant;

fn repo(path: &str) -> String {
    format!("{}/../../{}", env!("CARGO_MANIFEST_DIR"), path)
}

/// (user + system) CPU seconds of finished children so far.
fn children_cpu() -> f64 {
    // SAFETY: getrusage writes one rusage into the valid pointer we pass;
    // a zeroed rusage is a valid value to start from.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru);
        ru
    };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(ru.ru_utime) + t(ru.ru_stime)
}

struct Setup {
    pipeline: &'static str,
    label: &'static str,
    threads: usize,
    args: Vec<String>,
    /// Packets that come out, per N: or read from a handler.
    out: Out,
}

enum Out {
    PerN(u64),
    Handler(&'static str),
}

struct Sample {
    wall: f64,
    cpu: f64,
    packets: u64,
}

fn run(s: &Setup, n: u64) -> Result<Sample, String> {
    let mut args = vec!["run".to_string()];
    args.extend(s.args.iter().cloned());
    args.push(format!("N={n}"));
    if let Out::Handler(h) = s.out {
        args.push("-h".into());
        args.push(h.into());
    }
    let cpu0 = children_cpu();
    let t0 = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_clickos"))
        .args(&args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    let wall = t0.elapsed().as_secs_f64();
    let cpu = children_cpu() - cpu0;
    if !o.status.success() {
        return Err(format!(
            "clickos {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    let packets = match s.out {
        Out::PerN(k) => k * n,
        Out::Handler(_) => String::from_utf8_lossy(&o.stdout)
            .trim()
            .parse()
            .map_err(|_| "handler output".to_string())?,
    };
    Ok(Sample { wall, cpu, packets })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let json = argv
        .iter()
        .position(|a| a == "--json")
        .and_then(|i| argv.get(i + 1).cloned());
    let n: u64 = std::env::var("BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5_000_000);
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let f = |p: &str| repo(p);
    let setups = vec![
        Setup {
            pipeline: "firewall",
            label: "bench/firewall.click",
            threads: 1,
            args: vec![f("bench/firewall.click")],
            out: Out::PerN(1),
        },
        Setup {
            pipeline: "firewall",
            label: "-j 2 --replicate bench/firewall.click",
            threads: 2,
            args: vec![
                "-j".into(),
                "2".into(),
                "--replicate".into(),
                f("bench/firewall.click"),
            ],
            out: Out::PerN(2),
        },
        Setup {
            pipeline: "firewall",
            label: "-j 1 bench/firewall-x2.click",
            threads: 1,
            args: vec![f("bench/firewall-x2.click")],
            out: Out::PerN(2),
        },
        Setup {
            pipeline: "firewall",
            label: "-j 2 bench/firewall-x2.click (StaticThreadSched)",
            threads: 2,
            args: vec!["-j".into(), "2".into(), f("bench/firewall-x2.click")],
            out: Out::PerN(2),
        },
        Setup {
            pipeline: "firewall",
            label: "-j 2 bench/firewall-split.click (pipeline, out.count)",
            threads: 2,
            args: vec!["-j".into(), "2".into(), f("bench/firewall-split.click")],
            out: Out::Handler("out.count"),
        },
        Setup {
            pipeline: "router",
            label: "bench/router.click",
            threads: 1,
            args: vec![f("bench/router.click")],
            out: Out::PerN(1),
        },
        Setup {
            pipeline: "router",
            label: "-j 2 --replicate bench/router.click",
            threads: 2,
            args: vec![
                "-j".into(),
                "2".into(),
                "--replicate".into(),
                f("bench/router.click"),
            ],
            out: Out::PerN(2),
        },
    ];
    let filter: Vec<&String> = argv.iter().filter(|a| !a.starts_with('-')).collect();
    let setups: Vec<Setup> = setups
        .into_iter()
        .filter(|s| filter.is_empty() || filter.iter().any(|f| s.pipeline.contains(f.as_str())))
        .collect();
    let mut samples: Vec<Vec<Sample>> = setups.iter().map(|_| Vec::new()).collect();
    for r in 0..runs {
        for (i, s) in setups.iter().enumerate() {
            eprint!("\r[{}/{}] {:<60}", r + 1, runs, s.label);
            match run(s, n) {
                Ok(x) => samples[i].push(x),
                Err(e) => {
                    eprintln!("\n{e}");
                    std::process::exit(1);
                }
            }
        }
    }
    eprintln!();
    println!(
        "64-byte packets, N={n} per source, median of {runs} interleaved runs; Mp/s = packets out per second"
    );
    println!(
        "{:<9} {:<55} {:>7} {:>11} {:>13} {:>12}",
        "pipeline", "setup", "threads", "Mp/s wall", "Mp/s per CPU", "vs 1 thread"
    );
    let mut base: Option<(&str, f64)> = None;
    let mut rows = Vec::new();
    for (s, xs) in setups.iter().zip(&samples) {
        let rate = median(xs.iter().map(|x| x.packets as f64 / x.wall / 1e6).collect());
        let per_cpu = median(
            xs.iter()
                .map(|x| x.packets as f64 / x.cpu.max(1e-9) / 1e6)
                .collect(),
        );
        if s.threads == 1 && base.is_none_or(|b| b.0 != s.pipeline) {
            base = Some((s.pipeline, rate));
        }
        let vs = base
            .filter(|b| b.0 == s.pipeline)
            .map(|b| format!("{:.2}x", rate / b.1))
            .unwrap_or_default();
        println!(
            "{:<9} {:<55} {:>7} {:>11.2} {:>13.2} {:>12}",
            s.pipeline, s.label, s.threads, rate, per_cpu, vs
        );
        rows.push(format!(
            "{{\"pipeline\":\"{}\",\"setup\":\"{}\",\"threads\":{},\"mpps_wall\":{:.3},\"mpps_per_cpu\":{:.3}}}",
            s.pipeline, s.label, s.threads, rate, per_cpu
        ));
    }
    if let Some(path) = json {
        let text = format!("[{}]\n", rows.join(",\n"));
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("{path}: {e}");
        }
    }
}
