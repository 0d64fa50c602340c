//! The benchmark of README's daemon table (issue 15, "Benchmarks"): a real
//! `clickos daemon` at isolation `vm`, driven over its UNIX socket with
//! plain HTTP/1.1 (one connection per request, as every client does), next
//! to the instance library's own boot time measured in the same run.
//!
//! ```sh
//! cargo build --release -p clickos
//! CLICKOS_BENCH_OUT=bench/results/daemon.json cargo test --release -p clickos \
//!     --test daemon_bench -- --ignored --nocapture
//! ```
//!
//! `CLICKOS_BENCH_N` sets the fleet size (default 1000). Timings are
//! reported, never asserted; what is asserted is that every request did
//! what it says (instances running, configurations installed, handler
//! values read back).

mod common;

use clickos_instance::{Instance, InstanceOptions, Isolation};
use common::{bin, tmpdir};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A small instance: a counter that never sees a packet.
const CFG: &str = "Idle -> c :: Counter -> Discard;";
/// The update pushed to 200 instances.
const CFG2: &str = "Idle -> c :: Counter -> Discard; Idle -> d :: Counter -> Discard;";

/// One exchange: (status, body, time from connect to the last byte).
fn http(sock: &Path, method: &str, path: &str, body: Option<&str>) -> (u16, String, Duration) {
    let t0 = Instant::now();
    let mut s = UnixStream::connect(sock).expect("connect");
    let b = body.unwrap_or("");
    let req = if body.is_some() {
        format!(
            "{method} {path} HTTP/1.1\r\nHost: d\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{b}",
            b.len()
        )
    } else {
        format!("{method} {path} HTTP/1.1\r\nHost: d\r\n\r\n")
    };
    s.write_all(req.as_bytes()).unwrap();
    let mut out = Vec::with_capacity(1024);
    s.read_to_end(&mut out).unwrap();
    let took = t0.elapsed();
    let text = String::from_utf8_lossy(&out);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|x| x.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|x| x.1.to_string())
        .unwrap_or_default();
    (status, body, took)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// (median, p99) of `v`.
fn stats(v: &[f64]) -> (f64, f64) {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let p = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (p(0.5), p(0.99))
}

fn spawn_daemon(dir: &Path, sock: &Path) -> Child {
    Command::new(bin())
        .arg("daemon")
        .arg("--state")
        .arg(dir.join("state"))
        .arg("--socket")
        .arg(sock)
        .args(["--isolation", "vm", "--max-connections", "4096"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

fn wait_up(sock: &Path) {
    let t0 = Instant::now();
    while UnixStream::connect(sock).is_err() {
        assert!(t0.elapsed() < Duration::from_secs(30), "daemon not up");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// How many instances are running.
fn running(sock: &Path) -> usize {
    let (st, body, _) = http(sock, "GET", "/v1/instances", None);
    assert_eq!(st, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    v["instances"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["state"] == "running")
        .count()
}

/// Waits until `n` instances run; the time it took from `t0`.
fn wait_running(sock: &Path, n: usize, t0: Instant) -> Duration {
    loop {
        if running(sock) >= n {
            return t0.elapsed();
        }
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "only {} of {n} running",
            running(sock)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `f(k)` for k in 0..n on `threads` threads; the wall time.
fn par(n: usize, threads: usize, f: impl Fn(usize) + Sync) -> Duration {
    let next = AtomicUsize::new(0);
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= n {
                    break;
                }
                f(k);
            });
        }
    });
    t0.elapsed()
}

fn status_kb(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|x| x.parse().ok())
        .unwrap_or(0)
}

fn mem_available_kb() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("MemAvailable:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|x| x.parse().ok())
        .unwrap_or(0)
}

fn sh(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn create_body(name: &str) -> String {
    json!({"name": name, "config": CFG}).to_string()
}

#[test]
#[ignore]
fn bench_daemon() {
    if !common::can_use_kvm() {
        return;
    }
    let n: usize = std::env::var("CLICKOS_BENCH_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    const ROUNDS: usize = 100;
    const THREADS: usize = 4;
    let dir = tmpdir("dbench");
    let sock = dir.join("d.sock");
    let mut daemon = spawn_daemon(&dir, &sock);
    wait_up(&sock);
    let load_before = sh("cat", &["/proc/loadavg"]);

    // 1. create -> running: the library's boot and the API's create,
    // alternating so that both see the same machine.
    let opts = InstanceOptions {
        isolation: Isolation::Vm,
        console: Some(std::sync::Arc::new(|_, _| {})),
        ..InstanceOptions::default()
    };
    let (mut lib, mut api, mut api_boot) = (vec![], vec![], vec![]);
    for k in 0..ROUNDS {
        let t0 = Instant::now();
        let i = Instance::create(50_000 + k as u32, CFG, &opts).unwrap();
        lib.push(ms(t0.elapsed()));
        assert_eq!(i.read("c.count").unwrap().trim(), "0");
        drop(i);
        let name = format!("s{k}");
        let (st, body, took) = http(&sock, "POST", "/v1/instances", Some(&create_body(&name)));
        assert_eq!(st, 201, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["state"], "running");
        api.push(ms(took));
        api_boot.push(v["boot_seconds"].as_f64().unwrap() * 1e3);
        let (st, body, _) = http(&sock, "DELETE", &format!("/v1/instances/{name}"), None);
        assert_eq!(st, 200, "{body}");
    }
    // The library's own handler read, for the API's round trip below.
    let i = Instance::create(59_999, CFG, &opts).unwrap();
    let mut lib_rd = vec![];
    for _ in 0..2000 {
        let t0 = Instant::now();
        let v = i.read("c.count").unwrap();
        lib_rd.push(t0.elapsed().as_secs_f64() * 1e6);
        assert_eq!(v.trim(), "0");
    }
    drop(i);
    let (lib_rd_med, lib_rd_p99) = stats(&lib_rd);
    let over: Vec<f64> = api.iter().zip(&api_boot).map(|(a, b)| a - b).collect();
    let (lib_med, lib_p99) = stats(&lib);
    let (api_med, api_p99) = stats(&api);
    let (over_med, over_p99) = stats(&over);
    println!(
        "create: library {lib_med:.2}/{lib_p99:.2} ms, API {api_med:.2}/{api_p99:.2} ms, API minus the daemon's boot {over_med:.2}/{over_p99:.2} ms"
    );

    // 2. N instances through the API, THREADS clients at once.
    let pid = daemon.id();
    let avail0 = mem_available_kb();
    let rss0 = status_kb(pid, "VmRSS:");
    let failed = AtomicUsize::new(0);
    let first_err = std::sync::Mutex::new(None::<String>);
    let fleet_time = par(n, THREADS, |k| {
        let (st, body, _) = http(
            &sock,
            "POST",
            "/v1/instances",
            Some(&create_body(&format!("m{k}"))),
        );
        if st != 201 {
            failed.fetch_add(1, Ordering::Relaxed);
            first_err.lock().unwrap().get_or_insert(body);
        }
    });
    let failed = failed.into_inner();
    assert_eq!(failed, 0, "{:?}", first_err.lock().unwrap());
    assert_eq!(running(&sock), n);
    let rss = status_kb(pid, "VmRSS:");
    let threads_n = status_kb(pid, "Threads:");
    let avail1 = mem_available_kb();
    println!(
        "{n} instances in {:.2} s; daemon RSS {} MiB (+{} KiB each), MemAvailable -{} MiB, {threads_n} threads",
        fleet_time.as_secs_f64(),
        rss / 1024,
        (rss - rss0) / n as u64,
        avail0.saturating_sub(avail1) / 1024
    );

    // 3. Handler round trips on one of them.
    let (mut rd, mut wr) = (vec![], vec![]);
    for _ in 0..2000 {
        let (st, body, t) = http(&sock, "GET", "/v1/instances/m0/handlers/c.count", None);
        assert_eq!(st, 200, "{body}");
        assert!(body.contains("\"value\":\"0"), "{body}");
        rd.push(t.as_secs_f64() * 1e6);
        let (st, body, t) = http(
            &sock,
            "PUT",
            "/v1/instances/m0/handlers/c.reset",
            Some(r#"{"value":""}"#),
        );
        assert_eq!(st, 200, "{body}");
        wr.push(t.as_secs_f64() * 1e6);
    }
    let (rd_med, rd_p99) = stats(&rd);
    let (wr_med, wr_p99) = stats(&wr);
    println!("handler read {rd_med:.0}/{rd_p99:.0} us, write {wr_med:.0}/{wr_p99:.0} us (library read {lib_rd_med:.0}/{lib_rd_p99:.0} us)");

    // 4. One configuration pushed to 200 of them.
    let update = 200.min(n);
    let body2 = json!({"config": CFG2}).to_string();
    let update_time = par(update, THREADS, |k| {
        let (st, body, _) = http(
            &sock,
            "PUT",
            &format!("/v1/instances/m{k}/config"),
            Some(&body2),
        );
        assert_eq!(st, 200, "{body}");
    });
    for k in [0, update / 2, update - 1] {
        let (st, body, _) = http(
            &sock,
            "GET",
            &format!("/v1/instances/m{k}/handlers/d.count"),
            None,
        );
        assert_eq!(st, 200, "m{k}: {body}");
    }
    println!(
        "config update to {update} instances in {:.0} ms",
        ms(update_time)
    );

    // 5. Daemon restarts: kill -9 (from the configurations), then a clean
    // stop (vm instances parked with their state) and start.
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    let t0 = Instant::now();
    daemon = spawn_daemon(&dir, &sock);
    wait_up(&sock);
    let up9 = t0.elapsed();
    let all9 = wait_running(&sock, n, t0);
    println!(
        "kill -9 restart: socket up in {:.0} ms, all {n} running in {:.2} s",
        ms(up9),
        all9.as_secs_f64()
    );
    let (st, body, _) = http(&sock, "GET", "/v1/instances/m0/handlers/d.count", None);
    assert_eq!(st, 200, "the update survived kill -9: {body}");
    let t0 = Instant::now();
    assert!(Command::new("kill")
        .args(["-TERM", &daemon.id().to_string()])
        .status()
        .unwrap()
        .success());
    let st = daemon.wait().unwrap();
    assert!(st.success());
    let stop = t0.elapsed();
    let parked: u64 = std::fs::read_dir(dir.join("state/parked"))
        .map(|rd| {
            rd.flatten()
                .map(|f| f.metadata().map(|m| m.len()).unwrap_or(0))
                .sum()
        })
        .unwrap_or(0);
    let t1 = Instant::now();
    daemon = spawn_daemon(&dir, &sock);
    wait_up(&sock);
    let up_clean = t1.elapsed();
    let all_clean = wait_running(&sock, n, t1);
    println!(
        "clean restart: stop (park {n}, {} MB of snapshots) {:.2} s, socket up in {:.0} ms, all running in {:.2} s",
        parked / 1_000_000,
        stop.as_secs_f64(),
        ms(up_clean),
        all_clean.as_secs_f64()
    );
    let (st, body, _) = http(&sock, "GET", "/v1/events?since=0", None);
    assert_eq!(st, 200);
    let restored = body.matches("element state restored").count();
    assert_eq!(restored, n, "every instance came back from its snapshot");
    let _ = daemon.kill();
    let _ = daemon.wait();
    let _ = std::fs::remove_dir_all(&dir);

    let doc = json!({
        "kind": "daemon",
        "date": sh("date", &["-u", "+%Y-%m-%d %H:%M:%S UTC"]),
        "kernel": sh("uname", &["-r"]),
        "cpu": sh("sh", &["-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"]),
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "mem_gib": sh("sh", &["-c", "awk '/MemTotal/ {printf \"%.0f\", $2/1048576}' /proc/meminfo"]),
        "load_before": load_before.split_whitespace().next().unwrap_or("").to_string(),
        "load_after": sh("cat", &["/proc/loadavg"]).split_whitespace().next().unwrap_or("").to_string(),
        "profile": if cfg!(debug_assertions) { "dev" } else { "release" },
        "config": CFG,
        "memory_mib": 8,
        "rounds": ROUNDS,
        "client_threads": THREADS,
        "create": {
            "library_ms": [lib_med, lib_p99],
            "api_ms": [api_med, api_p99],
            "api_minus_boot_ms": [over_med, over_p99],
        },
        "fleet": {
            "n": n,
            "seconds": fleet_time.as_secs_f64(),
            "daemon_rss_mib": rss / 1024,
            "rss_per_instance_kib": (rss - rss0) / n as u64,
            "mem_available_drop_mib": avail0.saturating_sub(avail1) / 1024,
            "threads": threads_n,
        },
        "handler_us": {"read": [rd_med, rd_p99], "write": [wr_med, wr_p99], "samples": rd.len(), "library_read": [lib_rd_med, lib_rd_p99]},
        "update": {"n": update, "ms": ms(update_time)},
        "restart": {
            "kill9_socket_ms": ms(up9),
            "kill9_all_running_s": all9.as_secs_f64(),
            "clean_stop_s": stop.as_secs_f64(),
            "clean_socket_ms": ms(up_clean),
            "clean_all_running_s": all_clean.as_secs_f64(),
            "parked_mb": parked as f64 / 1e6,
        },
        "command": "cargo build --release -p clickos && CLICKOS_BENCH_OUT=bench/results/daemon.json cargo test --release -p clickos --test daemon_bench -- --ignored --nocapture",
    });
    if let Ok(p) = std::env::var("CLICKOS_BENCH_OUT") {
        let p = if Path::new(&p).is_absolute() {
            PathBuf::from(p)
        } else {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(p)
        };
        std::fs::write(&p, serde_json::to_string_pretty(&doc).unwrap() + "\n").unwrap();
    }
    println!("{doc}");
}
