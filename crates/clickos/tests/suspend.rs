//! Suspend, resume and migrate (issue 15, item 6): an instance's whole
//! state (configuration, counters, NAT mappings, queued packets) survives
//! a snapshot, in this process and through the daemon. The vm level only;
//! without KVM every test records a skip, which fails in CI.

mod common;

use clickos_instance::{CreateError, Instance, InstanceOptions, Isolation, VnicPort, VnicSpec};
use std::time::Duration;

/// A NAT: UDP from the inside gets source 1.0.0.1:1024-65535 and comes
/// back out of the same vNIC; everything counted.
const NAT: &str = "FromVNIC(0) -> in :: Counter -> Strip(14) -> CheckIPHeader
    -> rw :: IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, MAPPING_CAPACITY 100000)
    -> EtherEncap(0x0800, 2:0:0:0:0:2, 2:0:0:0:0:1) -> out :: Counter -> ToVNIC(0);
    rw[1] -> Discard;
    TimedSource(INTERVAL 0.01) -> t :: Counter -> Discard;";

fn csum(data: &[u8]) -> u16 {
    let mut s = 0u32;
    for c in data.chunks(2) {
        s += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// A UDP frame from 10.0.(n/60000).x:(n%60000 + 1024) to 8.8.8.8:53.
fn udp(n: u32) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00];
    let src = [10, 0, (n / 60000) as u8, 1];
    let sport = (n % 60000 + 1024) as u16;
    let mut ip = vec![0x45, 0, 0, 36, 0, 0, 0, 0, 64, 17, 0, 0];
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&[8, 8, 8, 8]);
    let c = csum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&53u16.to_be_bytes());
    f.extend_from_slice(&16u16.to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(b"query!!!");
    f
}

/// Sends flows `from..to` through the NAT, `batch` at a time, and takes
/// every frame back.
fn push_flows(port: &VnicPort, from: u32, to: u32) {
    let mut n = from;
    while n < to {
        let end = (n + 128).min(to);
        for k in n..end {
            assert!(port.send(&udp(k)), "ring full at flow {k}");
        }
        port.flush();
        for k in n..end {
            port.recv_timeout(Duration::from_secs(5))
                .unwrap_or_else(|| panic!("flow {k}: no frame back"));
        }
        n = end;
    }
}

fn opts() -> InstanceOptions {
    InstanceOptions {
        isolation: Isolation::Vm,
        vnics: vec![VnicSpec::default()],
        console: Some(std::sync::Arc::new(|_, _| {})),
        ..InstanceOptions::default()
    }
}

/// The NAT's UDP table without the expiry times (they count down).
fn mappings_of(i: &Instance) -> String {
    let t = i.read("rw.udp_mappings").unwrap();
    let lines: Vec<String> = t
        .lines()
        .map(|l| {
            l.split_whitespace()
                .filter(|w| !w.starts_with("exp"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert!(lines.len() >= 500, "{} lines", lines.len());
    lines.join("\n")
}

fn num(i: &Instance, h: &str) -> u64 {
    i.read(h).unwrap().trim().parse().unwrap()
}

#[test]
fn a_nat_instance_suspends_and_resumes_with_its_mappings_and_counters() {
    if !common::can_use_kvm() {
        return;
    }
    let i = Instance::create(901, NAT, &opts()).unwrap();
    push_flows(&i.vnic(0).unwrap(), 0, 500);
    let mappings = mappings_of(&i);
    assert_eq!(num(&i, "rw.table_size"), 500);
    assert_eq!(num(&i, "in.count"), 500);
    assert_eq!(num(&i, "out.count"), 500);
    // A snapshot of a running instance: it runs on.
    let checkpoint = i.snapshot(b"checkpoint").unwrap();
    assert_eq!(num(&i, "rw.table_size"), 500);
    let snap = i.suspend(b"hello").unwrap();
    assert!(i.ended().is_some());
    println!("snapshot: {} bytes", snap.len());
    let (r, note) = Instance::resume(902, &snap, &opts()).unwrap();
    assert_eq!(note, b"hello");
    assert_eq!(num(&r, "rw.table_size"), 500);
    assert_eq!(mappings_of(&r), mappings);
    assert_eq!(num(&r, "in.count"), 500);
    assert_eq!(num(&r, "out.count"), 500);
    // It keeps counting and translating: old flows reuse their mappings,
    // new ones add to them; its timers run.
    let port = r.vnic(0).unwrap();
    push_flows(&port, 250, 750);
    assert_eq!(num(&r, "rw.table_size"), 750);
    assert_eq!(num(&r, "in.count"), 1000);
    assert_eq!(num(&r, "out.count"), 1000);
    let t0 = num(&r, "t.count");
    std::thread::sleep(Duration::from_millis(200));
    assert!(num(&r, "t.count") > t0 + 5, "timers stalled");
    // The checkpoint resumes too, with what it had then.
    drop(r);
    let (c, note) = Instance::resume(903, &checkpoint, &opts()).unwrap();
    assert_eq!(note, b"checkpoint");
    assert_eq!(num(&c, "rw.table_size"), 500);
}

/// Live migration's two parts in this process: the memory copied while
/// the NAT runs and keeps translating (new mappings after the copy), then
/// the pause and only what changed; the resumed instance has everything.
#[test]
fn a_nat_instance_migrates_with_precopy_and_keeps_what_changed_after_it() {
    if !common::can_use_kvm() {
        return;
    }
    let i = Instance::create(921, NAT, &opts()).unwrap();
    let port = i.vnic(0).unwrap();
    push_flows(&port, 0, 500);
    let base = i.precopy(b"base").unwrap();
    // Runs on: 300 new flows, counted and mapped after the copy.
    push_flows(&port, 500, 800);
    assert_eq!(num(&i, "rw.table_size"), 800);
    let mappings = mappings_of(&i);
    // Neither part alone is a snapshot.
    let refused = |b: &[u8]| match Instance::resume(922, b, &opts()) {
        Err(CreateError::Launch(m)) => m,
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("a migration part was resumed alone"),
    };
    assert!(
        refused(&base).contains("live migration"),
        "{}",
        refused(&base)
    );
    let prepared = Instance::prepare_resume(923, &base, &opts()).unwrap();
    assert_eq!(prepared.note(), b"base");
    let delta = i.migrate_pause(b"delta").unwrap();
    println!("base {} bytes, delta {} bytes", base.len(), delta.len());
    assert!(refused(&delta).contains("live migration"));
    let (r, note) = prepared.finish(Some(&delta)).unwrap();
    i.migrate_end(true);
    assert!(i.ended().is_some());
    assert_eq!(note, b"delta");
    assert_eq!(num(&r, "rw.table_size"), 800);
    assert_eq!(mappings_of(&r), mappings);
    assert_eq!(num(&r, "in.count"), 800);
    assert_eq!(num(&r, "out.count"), 800);
    let port = r.vnic(0).unwrap();
    push_flows(&port, 700, 900);
    assert_eq!(num(&r, "rw.table_size"), 900);
    assert_eq!(num(&r, "in.count"), 1000);
    let t0 = num(&r, "t.count");
    std::thread::sleep(Duration::from_millis(200));
    assert!(num(&r, "t.count") > t0 + 5, "timers stalled");

    // A migration given up: the source runs on from where it paused.
    let j = Instance::create(924, NAT, &opts()).unwrap();
    push_flows(&j.vnic(0).unwrap(), 0, 100);
    j.precopy(b"").unwrap();
    j.migrate_pause(b"").unwrap();
    j.migrate_end(false);
    assert!(j.ended().is_none());
    push_flows(&j.vnic(0).unwrap(), 50, 150);
    assert_eq!(num(&j, "rw.table_size"), 150);
    // A delta with no pre-copy before it is refused, and it runs on.
    assert!(j.migrate_pause(b"").unwrap_err().contains("no pre-copy"));
    assert_eq!(num(&j, "in.count"), 200);
}

#[test]
fn damaged_snapshots_are_refused_and_other_levels_cannot_suspend() {
    if !common::can_use_kvm() {
        return;
    }
    let i = Instance::create(911, NAT, &opts()).unwrap();
    let snap = i.snapshot(b"").unwrap();
    let refused = |b: &[u8]| match Instance::resume(912, b, &opts()) {
        Err(CreateError::Launch(m)) => m,
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("a damaged snapshot was resumed"),
    };
    assert!(refused(&snap[..snap.len() / 2]).contains("truncated"));
    let mut bad = snap.clone();
    bad[snap.len() / 2] ^= 0x40;
    assert!(refused(&bad).contains("checksum"));
    let mut v = snap.clone();
    v[16] = 99;
    assert!(refused(&v).contains("version 99 is not supported"));
    assert!(refused(b"#!/bin/sh\n").contains("not a ClickOS snapshot"));
    // The original is untouched.
    assert_eq!(num(&i, "rw.table_size"), 0);
    let thread = Instance::create(
        913,
        "Idle -> c :: Counter -> Discard;",
        &InstanceOptions {
            isolation: Isolation::None,
            ..InstanceOptions::default()
        },
    )
    .unwrap();
    let e = thread.snapshot(b"").unwrap_err();
    assert!(e.contains("suspend needs --isolation vm"), "{e}");
    let e = match Instance::resume(
        914,
        &snap,
        &InstanceOptions {
            isolation: Isolation::Process,
            ..InstanceOptions::default()
        },
    ) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("resumed at the process level"),
    };
    assert!(e.contains("resume needs --isolation vm"), "{e}");
}

// ---- through the daemon and the CLI ----

use common::{bin, tmpdir};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

struct Daemon {
    child: Child,
    dir: PathBuf,
    sock: PathBuf,
}

fn spawn_daemon(dir: &Path, sock: &Path) -> Child {
    Command::new(bin())
        .arg("daemon")
        .arg("--state")
        .arg(dir.join("state"))
        .arg("--socket")
        .arg(sock)
        .args(["--isolation", "vm"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

impl Daemon {
    fn start(dir: &Path) -> Daemon {
        std::fs::create_dir_all(dir).unwrap();
        let sock = dir.join("d.sock");
        let mut d = Daemon {
            child: spawn_daemon(dir, &sock),
            dir: dir.to_path_buf(),
            sock,
        };
        d.wait_up();
        d
    }
    fn wait_up(&mut self) {
        let t0 = Instant::now();
        while std::os::unix::net::UnixStream::connect(&self.sock).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "daemon did not come up"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    fn kill9_and_restart(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        self.child = spawn_daemon(&self.dir, &self.sock);
        self.wait_up();
    }
    /// A clean stop (SIGTERM, waited for) and a start on the same state.
    fn term_and_restart(&mut self) {
        let st = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        let t0 = Instant::now();
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                assert!(st.success(), "daemon ended with {st}");
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "daemon did not stop"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        self.child = spawn_daemon(&self.dir, &self.sock);
        self.wait_up();
    }
    /// Waits until `name` is running.
    fn wait_running(&self, name: &str) {
        let t0 = Instant::now();
        while self.state(name) != "running" {
            assert!(
                t0.elapsed() < Duration::from_secs(15),
                "{name} is {}",
                self.state(name)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    fn events(&self) -> Vec<serde_json::Value> {
        self.ok(&["--json", "events"])
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
    fn cli(&self, args: &[&str]) -> (i32, String, String) {
        let o = Command::new(bin())
            .args(args)
            .env("CLICKOS_SOCKET", &self.sock)
            .env_remove("CLICKOS_TOKEN")
            .output()
            .unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
    fn ok(&self, args: &[&str]) -> String {
        let (code, out, err) = self.cli(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        out
    }
    fn num(&self, name: &str, h: &str) -> u64 {
        self.ok(&["read", name, h]).trim().parse().unwrap()
    }
    fn state(&self, name: &str) -> String {
        let v: serde_json::Value =
            serde_json::from_str(&self.ok(&["--json", "show", name])).unwrap();
        v["state"].as_str().unwrap_or("").to_string()
    }
    /// Waits until handler `h` reads `want`.
    fn wait_num(&self, name: &str, h: &str, want: u64) {
        let t0 = Instant::now();
        loop {
            let n = self.num(name, h);
            if n == want {
                return;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "{name} {h} = {n}, wanted {want}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A capture of flows `from..to` (the NAT's input).
fn pcap(path: &Path, from: u32, to: u32) -> String {
    let mut b = Vec::new();
    b.extend_from_slice(&0xa1b2c3d4u32.to_le_bytes());
    b.extend_from_slice(&2u16.to_le_bytes());
    b.extend_from_slice(&4u16.to_le_bytes());
    b.extend_from_slice(&[0; 8]);
    b.extend_from_slice(&65535u32.to_le_bytes());
    b.extend_from_slice(&1u32.to_le_bytes());
    for n in from..to {
        let f = udp(n);
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&n.to_le_bytes());
        b.extend_from_slice(&(f.len() as u32).to_le_bytes());
        b.extend_from_slice(&(f.len() as u32).to_le_bytes());
        b.extend_from_slice(&f);
    }
    std::fs::write(path, b).unwrap();
    path.display().to_string()
}

#[test]
fn suspend_resume_and_migrate_through_the_daemon() {
    if !common::can_use_kvm() {
        return;
    }
    let dir = tmpdir("dsuspend");
    let mut a = Daemon::start(&dir.join("a"));
    let b = Daemon::start(&dir.join("b"));
    let cfg = dir.join("nat.click");
    std::fs::write(&cfg, NAT).unwrap();
    let cfg = cfg.display().to_string();
    let in1 = pcap(&dir.join("in1.pcap"), 0, 200);
    let att1 = format!("pcap:{in1},{}", dir.join("out1.pcap").display());
    a.ok(&["create", "nat", &cfg, "--vnic", &att1]);
    a.wait_num("nat", "in.count", 200);
    a.wait_num("nat", "out.count", 200);
    assert_eq!(a.num("nat", "rw.table_size"), 200);

    // Suspend to a file: the daemon keeps its own copy across kill -9.
    let file = dir.join("nat.snap").display().to_string();
    let out = a.ok(&["suspend", "nat", &file]);
    assert!(out.contains("nat: suspended"), "{out}");
    assert!(std::fs::metadata(&file).unwrap().len() > 4096);
    assert_eq!(a.state("nat"), "suspended");
    assert_ne!(a.cli(&["read", "nat", "in.count"]).0, 0);
    a.kill9_and_restart();
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(a.state("nat"), "suspended");
    // Resumed in place: counters and mappings kept, the vNIC rewired (its
    // capture replays the same 200 flows: counted again, no new mapping).
    a.ok(&["resume", "nat"]);
    assert_eq!(a.state("nat"), "running");
    a.wait_num("nat", "in.count", 400);
    a.wait_num("nat", "out.count", 400);
    assert_eq!(a.num("nat", "rw.table_size"), 200);

    // A migration the other daemon refuses (the name is taken there): it
    // runs on here, unchanged.
    let mappings = cli_mappings(&a, "nat");
    assert!(mappings.lines().count() >= 200, "{mappings}");
    b.ok(&["create", "taken", "-e", "Idle -> Discard;"]);
    let (code, out, err) = a.cli(&[
        "migrate",
        "nat",
        "--to",
        b.sock.to_str().unwrap(),
        "--name",
        "taken",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains("exists"), "{err}");
    assert_eq!(a.state("nat"), "running");
    assert_eq!(cli_mappings(&a, "nat"), mappings);
    assert_eq!(a.num("nat", "in.count"), 400);
    b.ok(&["destroy", "taken"]);

    // Migrate to the other daemon, its vNIC attached there to 100 new flows.
    let in2 = pcap(&dir.join("in2.pcap"), 200, 300);
    let att2 = format!("pcap:{in2},{}", dir.join("out2.pcap").display());
    let out = a.ok(&[
        "migrate",
        "nat",
        "--to",
        b.sock.to_str().unwrap(),
        "--vnic",
        &att2,
    ]);
    assert!(out.contains("migrated"), "{out}");
    assert_eq!(a.cli(&["show", "nat"]).0, 4, "gone from the first daemon");
    let v: serde_json::Value = serde_json::from_str(&b.ok(&["--json", "show", "nat"])).unwrap();
    assert_eq!(v["state"], "running");
    b.wait_num("nat", "in.count", 500);
    b.wait_num("nat", "out.count", 500);
    assert_eq!(b.num("nat", "rw.table_size"), 300);
    // The 200 mappings it had are there, as they were.
    let there = cli_mappings(&b, "nat");
    for m in mappings.lines() {
        assert!(there.contains(m), "{m} missing after the migration");
    }
    assert!(b
        .events()
        .iter()
        .any(|e| e["kind"] == "resumed" && e["message"].as_str().unwrap().contains("migrated in")));
    assert!(a.events().iter().any(|e| e["kind"] == "migrated"));

    // And back the old way (the whole snapshot through the CLI).
    let out = b.ok(&[
        "migrate",
        "nat",
        "--to",
        a.sock.to_str().unwrap(),
        "--through-cli",
        "--vnic",
        &format!("pcap:,{}", dir.join("out4.pcap").display()),
    ]);
    assert!(out.contains("migrated"), "{out}");
    assert_eq!(a.num("nat", "in.count"), 500);
    assert_eq!(a.num("nat", "rw.table_size"), 300);
    assert_eq!(b.cli(&["show", "nat"]).0, 4);
    a.ok(&[
        "migrate",
        "nat",
        "--to",
        b.sock.to_str().unwrap(),
        "--vnic",
        &format!("pcap:,{}", dir.join("out5.pcap").display()),
    ]);
    assert_eq!(b.num("nat", "in.count"), 500);
    assert_eq!(b.state("nat"), "running");

    // The file resumes too, as a new instance, with the state it had.
    let att3 = format!("pcap:,{}", dir.join("out3.pcap").display());
    b.ok(&["resume", &file, "--name", "copy", "--vnic", &att3]);
    assert_eq!(b.num("copy", "in.count"), 200);
    assert_eq!(b.num("copy", "rw.table_size"), 200);

    // Damaged files are refused with why, and nothing changes.
    let bytes = std::fs::read(&file).unwrap();
    let bad = dir.join("bad.snap");
    std::fs::write(&bad, &bytes[..bytes.len() - 100]).unwrap();
    let before = b.ok(&["list"]).lines().count();
    let (code, _, err) = b.cli(&["resume", bad.to_str().unwrap(), "--name", "x"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("truncated"), "{err}");
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 3] ^= 1;
    std::fs::write(&bad, &flipped).unwrap();
    let (code, _, err) = b.cli(&["resume", bad.to_str().unwrap(), "--name", "x"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("checksum"), "{err}");
    assert_eq!(b.ok(&["list"]).lines().count(), before);
    assert_eq!(b.cli(&["show", "x"]).0, 4);

    // A raw (application/octet-stream) body that is not a snapshot: 422
    // with why, nothing created.
    {
        use std::io::{Read, Write};
        let mut s = std::os::unix::net::UnixStream::connect(&b.sock).unwrap();
        let junk = [7u8; 300];
        write!(
            s,
            "POST /v1/instances/resume?name=junk HTTP/1.1\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\n\r\n",
            junk.len()
        )
        .unwrap();
        s.write_all(&junk).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        assert!(out.starts_with("HTTP/1.1 422"), "{out}");
        assert!(out.contains("bad_snapshot"), "{out}");
        assert_eq!(b.cli(&["show", "junk"]).0, 4);
    }

    // Other levels cannot be suspended; they run on.
    a.ok(&[
        "create",
        "p",
        "-e",
        "Idle -> c :: Counter -> Discard;",
        "--isolation",
        "process",
    ]);
    let (code, _, err) = a.cli(&["suspend", "p"]);
    assert_eq!(code, 1);
    assert!(err.contains("suspend needs --isolation vm"), "{err}");
    assert_eq!(a.state("p"), "running");
}

/// The NAT's UDP mappings through the CLI, without the expiry times.
fn cli_mappings(d: &Daemon, name: &str) -> String {
    d.ok(&["read", name, "rw.udp_mappings"])
        .lines()
        .map(|l| {
            l.split_whitespace()
                .filter(|w| !w.starts_with("exp"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Issue 15 item 1: after a clean stop and start of the daemon a vm
/// instance's element state (counters, NAT mappings) comes back; after
/// `kill -9` it boots fresh from its configuration; a `process` instance
/// always boots fresh; a damaged parked snapshot falls back to the
/// configuration with an event saying why.
#[test]
fn element_state_survives_a_clean_daemon_restart() {
    if !common::can_use_kvm() {
        return;
    }
    let dir = tmpdir("dclean");
    let mut d = Daemon::start(&dir.join("a"));
    let cfg = dir.join("nat.click");
    std::fs::write(&cfg, NAT).unwrap();
    let cfg = cfg.display().to_string();
    // Its capture replays whenever the vNIC is wired: 200 flows counted
    // at each start, mapped once.
    let input = pcap(&dir.join("in.pcap"), 0, 200);
    let att = format!("pcap:{input},{}", dir.join("out.pcap").display());
    d.ok(&["create", "nat", &cfg, "--vnic", &att]);
    d.ok(&[
        "create",
        "p",
        "-e",
        "InfiniteSource(LIMIT 7, STOP false) -> c :: Counter -> Discard;",
        "--isolation",
        "process",
    ]);
    d.wait_num("nat", "in.count", 200);
    d.wait_num("nat", "out.count", 200);
    assert_eq!(d.num("nat", "rw.table_size"), 200);
    let mappings = cli_mappings(&d, "nat");
    assert!(mappings.lines().count() >= 200, "{mappings}");
    let ticks = d.num("nat", "t.count");
    assert!(ticks > 0);

    // Clean stop and start: the state is the same (the replayed capture
    // adds 200 to the counters and nothing to the mappings).
    d.term_and_restart();
    d.wait_running("nat");
    d.wait_num("nat", "in.count", 400);
    d.wait_num("nat", "out.count", 400);
    assert_eq!(d.num("nat", "rw.table_size"), 200);
    assert_eq!(cli_mappings(&d, "nat"), mappings);
    assert!(
        d.num("nat", "t.count") >= ticks,
        "the timer's counter restarted"
    );
    d.wait_running("p");
    d.wait_num("p", "c.count", 7);
    let evs = d.events();
    let rec = evs
        .iter()
        .rev()
        .find(|e| e["kind"] == "recovered" && e["instance"] == "nat")
        .expect("a recovered event");
    assert!(
        rec["message"]
            .as_str()
            .unwrap()
            .contains("element state restored"),
        "{rec}"
    );
    assert!(!dir.join("a/state/parked/nat.snap").exists());

    // kill -9: from the configuration, as before (the counters restart).
    d.kill9_and_restart();
    d.wait_running("nat");
    d.wait_num("nat", "in.count", 200);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(d.num("nat", "in.count"), 200);
    assert_eq!(d.num("nat", "rw.table_size"), 200);

    // A damaged parked snapshot: a fresh boot and an event saying why.
    let stop = |d: &mut Daemon| {
        Command::new("kill")
            .args(["-TERM", &d.child.id().to_string()])
            .status()
            .unwrap();
        d.child.wait().unwrap();
    };
    stop(&mut d);
    let parked = dir.join("a/state/parked/nat.snap");
    let mut bytes = std::fs::read(&parked).unwrap();
    let k = bytes.len() / 2;
    bytes[k] ^= 0x55;
    std::fs::write(&parked, &bytes).unwrap();
    d.child = spawn_daemon(&d.dir, &d.sock);
    d.wait_up();
    d.wait_running("nat");
    d.wait_num("nat", "in.count", 200);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(d.num("nat", "in.count"), 200);
    let evs = d.events();
    let why = evs
        .iter()
        .find(|e| e["kind"] == "snapshot_refused" && e["instance"] == "nat")
        .expect("a snapshot_refused event");
    assert!(
        why["message"].as_str().unwrap().contains("checksum"),
        "{why}"
    );
    assert!(!parked.exists());
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// The benchmark of README's "Suspend, resume, migrate" table: a NAT
/// holding 10,000 mappings, suspended and resumed in this process (the
/// instance layer) and migrated between two daemons: daemon to daemon
/// with pre-copy (`clickos migrate`), and the old way through the CLI
/// (`--through-cli`: the whole snapshot as raw bytes) for comparison.
/// Writes `bench/results/suspend.json` when `CLICKOS_BENCH_OUT` names it.
/// `CLICKOS_BENCH_OUT=bench/results/suspend.json cargo test --release -p clickos --test suspend -- --ignored --nocapture bench_suspend`
#[test]
#[ignore]
fn bench_suspend_resume_and_migrate_10k_mappings() {
    if !common::can_use_kvm() {
        return;
    }
    const FLOWS: u32 = 10_000;
    const RUNS: usize = 7;
    // In process.
    let mut inst = Instance::create(951, NAT, &opts()).unwrap();
    push_flows(&inst.vnic(0).unwrap(), 0, FLOWS);
    assert_eq!(num(&inst, "rw.table_size"), FLOWS as u64);
    let (mut sus, mut res, mut down, mut size) = (vec![], vec![], vec![], 0);
    for k in 0..RUNS {
        let t0 = Instant::now();
        let snap = inst.suspend(b"").unwrap();
        let t1 = Instant::now();
        let (r, _) = Instance::resume(952 + k as u32, &snap, &opts()).unwrap();
        let t2 = Instant::now();
        assert_eq!(num(&r, "rw.table_size"), FLOWS as u64);
        sus.push((t1 - t0).as_secs_f64() * 1e3);
        res.push((t2 - t1).as_secs_f64() * 1e3);
        down.push((t2 - t0).as_secs_f64() * 1e3);
        size = snap.len();
        inst = r;
    }
    println!("in process: suspend {sus:?} resume {res:?} ms, {size} bytes");
    // Two daemons, through the CLI (the snapshot crosses as raw bytes).
    let dir = tmpdir("dbench");
    let a = Daemon::start(&dir.join("a"));
    let b = Daemon::start(&dir.join("b"));
    let cfg = dir.join("nat.click");
    std::fs::write(&cfg, NAT).unwrap();
    let input = pcap(&dir.join("in.pcap"), 0, FLOWS);
    let att = format!("pcap:{input},{}", dir.join("out.pcap").display());
    a.ok(&["create", "nat", cfg.to_str().unwrap(), "--vnic", &att]);
    let t0 = Instant::now();
    while a.num("nat", "rw.table_size") < FLOWS as u64 && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let mappings = a.num("nat", "rw.table_size");
    let out = dir.join("o.pcap").display().to_string();
    // Daemon to daemon with pre-copy (the default), then the old way
    // (the whole snapshot through the CLI) for comparison.
    let (mut mig, mut mig_sus, mut mig_old, mut delta) = (vec![], vec![], vec![], vec![]);
    let (mut from, mut to) = (&a, &b);
    for k in 0..2 * RUNS {
        let old = k >= RUNS;
        let vnic = format!("pcap:,{out}");
        let mut args = vec![
            "--json",
            "migrate",
            "nat",
            "--to",
            to.sock.to_str().unwrap(),
            "--vnic",
            &vnic,
        ];
        if old {
            args.push("--through-cli");
        }
        let o = from.ok(&args);
        let v: serde_json::Value = serde_json::from_str(&o).unwrap();
        let d = v["downtime_ms"].as_f64().unwrap();
        if old {
            mig_old.push(d);
        } else {
            mig.push(d);
            mig_sus.push(v["suspend_ms"].as_f64().unwrap());
            delta.push(v["delta_bytes"].as_u64().unwrap());
        }
        assert_eq!(to.num("nat", "rw.table_size"), mappings);
        std::mem::swap(&mut from, &mut to);
    }
    println!("migrate: downtime {mig:?} ms (suspend part {mig_sus:?}, delta {delta:?} bytes); through the CLI {mig_old:?} ms");
    let doc = serde_json::json!({
        "kind": "suspend",
        "date": String::from_utf8_lossy(&Command::new("date").args(["-u", "+%Y-%m-%d %H:%M:%S UTC"]).output().unwrap().stdout).trim(),
        "kernel": String::from_utf8_lossy(&Command::new("uname").arg("-r").output().unwrap().stdout).trim(),
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "load": std::fs::read_to_string("/proc/loadavg").unwrap_or_default().split_whitespace().next().unwrap_or("").to_string(),
        "profile": if cfg!(debug_assertions) { "dev" } else { "release" },
        "runs": RUNS,
        "mappings": FLOWS,
        "daemon_mappings": mappings,
        "snapshot_bytes": size,
        "suspend_ms": median(sus.clone()),
        "resume_ms": median(res.clone()),
        "downtime_ms": median(down.clone()),
        "migrate_downtime_ms": median(mig.clone()),
        "migrate_suspend_ms": median(mig_sus.clone()),
        "migrate_delta_bytes": median(delta.iter().map(|&d| d as f64).collect()),
        "migrate_through_cli_downtime_ms": median(mig_old.clone()),
        "raw": {"suspend": sus, "resume": res, "downtime": down, "migrate": mig, "migrate_through_cli": mig_old},
        "command": "CLICKOS_BENCH_OUT=bench/results/suspend.json cargo test --release -p clickos --test suspend -- --ignored --nocapture bench_suspend",
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
