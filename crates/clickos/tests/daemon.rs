//! `clickos daemon` and the fleet verbs, end to end: a real daemon, the
//! real CLI, instances at isolation `process` (one test at `vm`).

mod common;

use common::{bin, skip, tmpdir};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Daemon {
    child: Child,
    dir: PathBuf,
    sock: PathBuf,
    args: Vec<String>,
}

impl Daemon {
    fn start(dir: &Path, extra: &[&str]) -> Daemon {
        let sock = dir.join("d.sock");
        let args: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        let mut d = Daemon {
            child: spawn_daemon(dir, &sock, &args),
            dir: dir.to_path_buf(),
            sock,
            args,
        };
        d.wait_up();
        d
    }

    fn wait_up(&mut self) {
        let t0 = Instant::now();
        while UnixStream::connect(&self.sock).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "daemon did not come up"
            );
            if let Ok(Some(st)) = self.child.try_wait() {
                panic!("daemon exited: {st}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// kill -9 and start again on the same state.
    fn kill9_and_restart(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        self.child = spawn_daemon(&self.dir, &self.sock, &self.args);
        self.wait_up();
    }

    fn cli(&self, args: &[&str]) -> Out {
        self.cli_token(None, args)
    }

    fn cli_token(&self, token: Option<&str>, args: &[&str]) -> Out {
        let mut c = Command::new(bin());
        c.args(args)
            .env("CLICKOS_SOCKET", &self.sock)
            .env_remove("CLICKOS_TOKEN");
        if let Some(t) = token {
            c.env("CLICKOS_TOKEN", t);
        }
        let o = c.output().unwrap();
        Out {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut a = vec!["--json"];
        a.extend_from_slice(args);
        let o = self.cli(&a);
        assert_eq!(o.code, 0, "{args:?}: {}", o.stderr);
        serde_json::from_str(&o.stdout).unwrap()
    }

    fn wait_state(&self, name: &str, state: &str) -> serde_json::Value {
        let t0 = Instant::now();
        loop {
            let v = self.json(&["show", name]);
            if v["state"] == state {
                return v;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(15),
                "{name} still {} (wanted {state})",
                v["state"]
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// One raw HTTP exchange: (status, body).
    fn raw(&self, request: &[u8]) -> (u16, String) {
        let mut s = UnixStream::connect(&self.sock).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let _ = s.write_all(request);
        // a request cut short ends here, not at the daemon's read timeout
        let _ = s.shutdown(std::net::Shutdown::Write);
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        let text = String::from_utf8_lossy(&out).into_owned();
        let status = text
            .split(' ')
            .nth(1)
            .and_then(|x| x.parse().ok())
            .unwrap_or(0);
        let body = text
            .split_once("\r\n\r\n")
            .map(|x| x.1.to_string())
            .unwrap_or_default();
        (status, body)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn_daemon(dir: &Path, sock: &Path, extra: &[String]) -> Child {
    Command::new(bin())
        .arg("daemon")
        .arg("--state")
        .arg(dir.join("state"))
        .arg("--socket")
        .arg(sock)
        .args(["--isolation", "process", "--allow-fault-injection"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[derive(Debug)]
struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

const COUNTER: &str = "c :: Counter;\nIdle -> c -> Discard;\n";

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn the_whole_lifecycle_through_the_cli() {
    let dir = tmpdir("dlife");
    let d = Daemon::start(&dir, &[]);
    let good = write(&dir, "good.click", COUNTER);
    let bad = write(
        &dir,
        "bad.click",
        "c :: Counter;\nIdle -> c -> Discard;\nx :: NoSuchClass;\n",
    );
    let o = d.cli(&["create", "fw", &good]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.contains("fw (id 1) running"), "{o:?}");
    // duplicate name
    assert_eq!(d.cli(&["create", "fw", &good]).code, 1);
    // list / show by name and by id
    let o = d.cli(&["list"]);
    assert!(
        o.stdout.contains("fw") && o.stdout.contains("running"),
        "{o:?}"
    );
    assert_eq!(d.json(&["show", "1"])["name"], "fw");
    // handlers
    assert_eq!(d.cli(&["read", "fw", "c.count"]).stdout, "0\n");
    let o = d.cli(&["handlers", "fw"]);
    assert!(o.stdout.contains("c.count\tr"), "{o:?}");
    assert!(o.stdout.contains("c.reset\tw"), "{o:?}");
    assert_eq!(d.cli(&["write", "fw", "c.reset"]).code, 0);
    // bad handler, unknown instance
    let o = d.cli(&["read", "fw", "c.nosuch"]);
    assert_eq!(o.code, 4, "{o:?}");
    assert!(o.stderr.contains("c.nosuch"), "{o:?}");
    let o = d.cli(&["read", "fw", "nosuch.count"]);
    assert_eq!(o.code, 4, "{o:?}");
    let o = d.cli(&["write", "fw", "c.count", "3"]);
    assert_eq!(o.code, 5, "a read-only handler: {o:?}");
    let o = d.cli(&["show", "ghost"]);
    assert_eq!(o.code, 4);
    assert!(o.stderr.contains("no instance 'ghost'"), "{o:?}");
    // a refused configuration: Click-style lines, exit 1, the old one runs
    let o = d.cli(&["install", "fw", &bad]);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(
        o.stderr.contains(&format!("{bad}:3:")) && o.stderr.contains("NoSuchClass"),
        "{o:?}"
    );
    assert_eq!(d.cli(&["read", "fw", "c.count"]).code, 0);
    assert_eq!(d.json(&["show", "fw"])["config_file"], good.as_str());
    // a good one
    let good2 = write(
        &dir,
        "good2.click",
        "d :: Counter;\nIdle -> d -> Discard;\n",
    );
    let o = d.cli(&["install", "fw", &good2]);
    assert_eq!(o.code, 0, "{o:?}");
    assert_eq!(d.cli(&["read", "fw", "d.count"]).stdout, "0\n");
    // a bad create is refused with its lines and leaves nothing behind
    let o = d.cli(&["create", "broken", &bad]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains(&format!("{bad}:3:")), "{o:?}");
    assert_eq!(d.cli(&["show", "broken"]).code, 4);
    // console
    assert_eq!(d.cli(&["console", "fw"]).code, 0);
    // stop / start
    assert!(d.cli(&["stop", "fw"]).stdout.contains("stopped"));
    assert_eq!(d.cli(&["read", "fw", "d.count"]).code, 1);
    assert!(d.cli(&["start", "fw"]).stdout.contains("running"));
    assert_eq!(d.cli(&["read", "fw", "d.count"]).stdout, "0\n");
    // top: one refresh
    let o = d.cli(&["top", "--interval", "0.2", "--count", "1"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.contains("fw"), "{o:?}");
    // events
    let o = d.cli(&["events"]);
    for k in [
        "created",
        "config_refused",
        "installed",
        "stopped",
        "started",
    ] {
        assert!(o.stdout.contains(k), "{k} missing: {}", o.stdout);
    }
    assert!(o.stdout.contains("NoSuchClass"), "{}", o.stdout);
    // destroy
    assert_eq!(d.cli(&["destroy", "fw"]).code, 0);
    assert_eq!(d.cli(&["show", "fw"]).code, 4);
    assert!(d.cli(&["events"]).stdout.contains("destroyed"));
    // usage
    assert_eq!(d.cli(&["read", "fw"]).code, 2);
    assert_eq!(d.cli(&["create", "x"]).code, 2);
}

#[test]
fn exit_codes_without_a_daemon_and_completions() {
    let dir = tmpdir("dnone");
    let o = Command::new(bin())
        .args(["list"])
        .env("CLICKOS_SOCKET", dir.join("nothing.sock"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot reach the daemon"));
    let o = Command::new(bin())
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("complete -F _clickos clickos"));
}

#[test]
fn a_one_megabyte_configuration() {
    let dir = tmpdir("dbig");
    let d = Daemon::start(&dir, &[]);
    // 1 MiB: a few hundred elements and the long comments real
    // configurations carry (rule documentation, generated tables).
    let mut text = String::new();
    let i = 400;
    for k in 0..i {
        text.push_str(&format!(
            "// element {k}: {}\nc{k} :: Counter;\n",
            "x".repeat(2700)
        ));
    }
    text.push_str("Idle -> c0");
    for k in 1..i {
        text.push_str(&format!(" -> c{k}"));
    }
    text.push_str(" -> Discard;\n");
    assert!(text.len() > 1 << 20);
    let f = write(&dir, "big.click", &text);
    let o = d.cli(&["create", "big", &f]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        d.cli(&["read", "big", &format!("c{}.count", i - 1)]).stdout,
        "0\n"
    );
    let v = d.json(&["show", "big"]);
    assert_eq!(v["config_bytes"].as_u64(), Some(text.len() as u64));
    // and installs of that size too
    assert_eq!(d.cli(&["install", "big", &f]).code, 0);
}

#[test]
fn instances_come_back_after_kill_9_with_config_and_wiring() {
    let dir = tmpdir("dkill");
    let mut d = Daemon::start(&dir, &[]);
    let cfg = write(
        &dir,
        "tick.click",
        "src :: TimedSource(0.01) -> c :: Counter -> ToVNIC(0);\nFromVNIC(0) -> Discard;\n",
    );
    let out = dir.join("out.pcap");
    let attach = format!("pcap:,{}", out.display());
    let o = d.cli(&[
        "create",
        "wired",
        &cfg,
        "--vnic",
        &attach,
        "--restart",
        "on-failure",
    ]);
    assert_eq!(o.code, 0, "{o:?}");
    let plain = write(&dir, "plain.click", COUNTER);
    assert_eq!(d.cli(&["create", "plain", &plain]).code, 0);
    assert_eq!(d.cli(&["create", "off", &plain]).code, 0);
    assert_eq!(d.cli(&["stop", "off"]).code, 0);
    // a new configuration installed before the kill is the one that comes back
    let cfg2 = write(
        &dir,
        "tick2.click",
        "src :: TimedSource(0.01) -> k :: Counter -> ToVNIC(0);\nFromVNIC(0) -> Discard;\n",
    );
    assert_eq!(d.cli(&["install", "wired", &cfg2]).code, 0);
    std::thread::sleep(Duration::from_millis(200));
    let before = d.json(&["show", "wired"]);
    assert!(
        before["vnics"][0]["from_instance_packets"]
            .as_u64()
            .unwrap()
            > 0
    );
    d.kill9_and_restart();
    let v = d.wait_state("wired", "running");
    assert_eq!(v["id"], before["id"]);
    assert_eq!(v["restart"], "on-failure");
    assert_eq!(v["vnics"][0]["attach"], attach.as_str());
    assert_eq!(d.cli(&["read", "wired", "k.count"]).code, 0, "config kept");
    // the wiring is back: frames reach the capture again
    let t0 = Instant::now();
    loop {
        let v = d.json(&["show", "wired"]);
        if v["vnics"][0]["from_instance_packets"].as_u64().unwrap_or(0) > 0 {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "no frames after restart: {v}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    d.wait_state("plain", "running");
    assert_eq!(d.json(&["show", "off"])["state"], "stopped");
    assert!(d.cli(&["events"]).stdout.contains("recovered"));
}

#[test]
fn a_crashed_instance_is_restarted_by_its_policy() {
    let dir = tmpdir("dcrash");
    let d = Daemon::start(&dir, &[]);
    let cfg = write(&dir, "c.click", COUNTER);
    for (name, policy) in [("again", "on-failure"), ("once", "never")] {
        let o = d.cli(&[
            "create",
            name,
            &cfg,
            "--restart",
            policy,
            "--fault-injection",
        ]);
        assert_eq!(o.code, 0, "{o:?}");
        assert_eq!(d.cli(&["fault", name, "panic"]).code, 0);
    }
    let v = d.wait_state("again", "running");
    let t0 = Instant::now();
    let mut v = v;
    while v["restarts"] != 1 {
        assert!(t0.elapsed() < Duration::from_secs(5), "{v}");
        std::thread::sleep(Duration::from_millis(50));
        v = d.json(&["show", "again"]);
    }
    assert!(v["last_end"].as_str().unwrap().contains("panic"), "{v}");
    assert_eq!(d.cli(&["read", "again", "c.count"]).stdout, "0\n");
    let v = d.wait_state("once", "crashed");
    assert_eq!(v["restarts"], 0);
    let ev = d.cli(&["events"]).stdout;
    assert!(ev.contains("crashed") && ev.contains("restarted"), "{ev}");
    // fault injection needs the instance's consent
    assert_eq!(d.cli(&["create", "plain", &cfg]).code, 0);
    assert_eq!(d.cli(&["fault", "plain", "panic"]).code, 5);
}

#[test]
fn two_tenants_are_kept_apart() {
    let dir = tmpdir("dten");
    let tokens = write(
        &dir,
        "tokens.json",
        r#"{"tokens": [
            {"token": "admin-token", "admin": true},
            {"token": "tenant-a-token", "tenant": "a", "max_instances": 1},
            {"token": "tenant-b-token", "tenant": "b", "max_memory": 16777216}
        ]}"#,
    );
    let d = Daemon::start(&dir, &["--tokens", &tokens]);
    let cfg = write(&dir, "c.click", COUNTER);
    let (a, b) = (Some("tenant-a-token"), Some("tenant-b-token"));
    assert_eq!(d.cli_token(a, &["create", "xa", &cfg]).code, 0);
    assert_eq!(d.cli_token(b, &["create", "xb", &cfg]).code, 0);
    // quotas
    let o = d.cli_token(a, &["create", "xa2", &cfg]);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(o.stderr.contains("quota"), "{o:?}");
    let o = d.cli_token(b, &["create", "xb2", &cfg, "--memory", "16M"]);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(o.stderr.contains("quota"), "{o:?}");
    // b cannot see or touch a's instance, by name or id
    let id_a = d.json(&["show", "xa"])["id"].to_string();
    for args in [
        vec!["show", "xa"],
        vec!["show", id_a.as_str()],
        vec!["read", "xa", "c.count"],
        vec!["write", "xa", "c.reset"],
        vec!["handlers", "xa"],
        vec!["console", "xa"],
        vec!["install", "xa", &cfg],
        vec!["stop", "xa"],
        vec!["destroy", "xa"],
    ] {
        let o = d.cli_token(b, &args);
        assert_eq!(o.code, 4, "{args:?}: {o:?}");
    }
    let lb = d.cli_token(b, &["list"]).stdout;
    assert!(lb.contains("xb") && !lb.contains("xa"), "{lb}");
    let eb = d.cli_token(b, &["events"]).stdout;
    assert!(!eb.contains("xa"), "{eb}");
    // a is fine
    assert_eq!(d.cli_token(a, &["read", "xa", "c.count"]).stdout, "0\n");
    // the admin (token, or root on the socket) sees both
    for t in [Some("admin-token"), None] {
        let l = d.cli_token(t, &["list"]).stdout;
        assert!(l.contains("xa") && l.contains("xb"), "{l}");
    }
    // a bad token
    assert_eq!(d.cli_token(Some("not-a-token"), &["list"]).code, 5);
    // tenants' metrics are theirs only
    let (st, m) = d.raw(b"GET /metrics HTTP/1.1\r\nAuthorization: Bearer tenant-b-token\r\n\r\n");
    assert_eq!(st, 200);
    assert!(m.contains("instance=\"xb\"") && !m.contains("instance=\"xa\""));
}

#[test]
fn metrics_pass_promtool() {
    let dir = tmpdir("dprom");
    let d = Daemon::start(&dir, &[]);
    let cfg = write(
        &dir,
        "tick.click",
        "TimedSource(0.01) -> c :: Counter -> ToVNIC(0);\nFromVNIC(0) -> Discard;\n",
    );
    let attach = format!("pcap:,{}", dir.join("o.pcap").display());
    // a handler named for export must look like one
    let r = d.cli(&["create", "m0", &cfg, "--metric", "count"]);
    assert!(
        r.code == 1 && r.stderr.contains("ELEMENT.HANDLER"),
        "{}",
        r.stderr
    );
    let r = d.cli(&[
        "create", "m1", &cfg, "--vnic", &attach, "--metric", "c.count", "--metric", "c.nosuch",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    std::thread::sleep(Duration::from_millis(100));
    let (st, text) = d.raw(b"GET /metrics HTTP/1.1\r\n\r\n");
    assert_eq!(st, 200);
    for m in [
        "clickos_instance_up{instance=\"m1\"",
        "clickos_instance_uptime_seconds",
        "clickos_instance_restarts_total",
        "clickos_instance_boot_seconds",
        "clickos_vnic_packets_total{instance=\"m1\"",
        "clickos_vnic_drops_total",
        "clickos_handler_errors{instance=\"m1\",id=\"1\",tenant=\"\",handler=\"c.count\"} 0",
        "clickos_handler_errors{instance=\"m1\",id=\"1\",tenant=\"\",handler=\"c.nosuch\"} 1",
    ] {
        assert!(text.contains(m), "{m} missing:\n{text}");
    }
    // the Counter's count, read when /metrics was asked: packets went by
    let count: f64 = text
        .lines()
        .find(|l| l.starts_with("clickos_handler_value{instance=\"m1\"") && l.contains("c.count"))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no c.count value:\n{text}"));
    assert!(count >= 1.0, "c.count {count}");
    assert!(!text.contains(
        "clickos_handler_value{instance=\"m1\",id=\"1\",tenant=\"\",handler=\"c.nosuch\"}"
    ));
    if !skip::have_program("promtool", "--version") {
        return;
    }
    let mut p = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    p.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let o = p.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "promtool: {}{}\n{text}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn bad_input_gets_clear_errors_and_changes_nothing() {
    let dir = tmpdir("dbad");
    let d = Daemon::start(&dir, &["--max-connections", "64"]);
    let post = |body: &str| {
        d.raw(
            format!(
                "POST /v1/instances HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
    };
    let (st, b) = post("{not json");
    assert_eq!(st, 400, "{b}");
    assert!(b.contains("bad JSON body"), "{b}");
    let (st, b) = post(r#"{"name":"x","config":"Idle->Discard;","colour":"red"}"#);
    assert_eq!(st, 400);
    assert!(b.contains("unknown field `colour`"), "{b}");
    let (st, b) = post(r#"{"name":"x/y","config":""}"#);
    assert_eq!(st, 400, "{b}");
    let (st, _) = d.raw(b"POST /v1/instances HTTP/1.1\r\nContent-Length: 999999999999\r\n\r\n");
    assert_eq!(st, 413);
    let (st, _) = d.raw(b"GET /v1/nothing HTTP/1.1\r\n\r\n");
    assert_eq!(st, 404);
    let (st, _) = d.raw(b"PATCH /v1/instances HTTP/1.1\r\n\r\n");
    assert_eq!(st, 405);
    let (st, _) = d.raw(b"garbage\r\n\r\n");
    assert_eq!(st, 400);
    // a slow client gets 408 and does not hold anything up
    let mut slow = UnixStream::connect(&d.sock).unwrap();
    slow.write_all(b"GET /v1/instances HTTP/1.1\r\n").unwrap();
    // many connections at once: every one answered, 200 or 503
    let mut handles = Vec::new();
    for _ in 0..200 {
        let sock = d.sock.clone();
        handles.push(std::thread::spawn(move || {
            let mut s = UnixStream::connect(&sock).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            s.write_all(b"GET /v1/health HTTP/1.1\r\n\r\n").unwrap();
            let mut out = String::new();
            let _ = s.read_to_string(&mut out);
            out.split(' ').nth(1).unwrap_or("").to_string()
        }));
    }
    for h in handles {
        let st = h.join().unwrap();
        assert!(st == "200" || st == "503", "{st}");
    }
    // random bytes and random JSON: answered, never a crash
    let mut x: u64 = 12345;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let pieces = [
        "{",
        "}",
        "[",
        "]",
        "\"name\"",
        "\"config\"",
        ":",
        ",",
        "\"a\"",
        "1e999",
        "null",
        "\"\\u0000\"",
        "true",
        "\"vnics\"",
        "\"memory\"",
        "-1",
        "\"restart\"",
        "\"always\"",
    ];
    for i in 0..150 {
        let body: String = (0..rnd() % 12)
            .map(|_| pieces[(rnd() % pieces.len() as u64) as usize])
            .collect();
        let path = [
            "/v1/instances",
            "/v1/instances/x/config",
            "/v1/instances/x/handlers/c.count",
        ][i % 3];
        let method = ["POST", "PUT", "PUT"][i % 3];
        let (st, _) = d.raw(
            format!(
                "{method} {path} HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
        assert!((400..500).contains(&st) || st == 201, "{st} for {body}");
        if st == 201 {
            let _ = d.cli(&["destroy", "a"]);
        }
        let junk: Vec<u8> = (0..rnd() % 300).map(|_| rnd() as u8).collect();
        let _ = d.raw(&junk);
    }
    // the slow one timed out by now (5 s read timeout)
    slow.set_read_timeout(Some(Duration::from_secs(40)))
        .unwrap();
    let mut out = String::new();
    let _ = slow.read_to_string(&mut out);
    assert!(out.starts_with("HTTP/1.1 408"), "{out}");
    // nothing changed, the daemon still answers
    let v = d.json(&["list"]);
    assert_eq!(v["instances"].as_array().unwrap().len(), 0, "{v}");
}

#[test]
fn the_openapi_document_lists_every_route() {
    let dir = tmpdir("doapi");
    let d = Daemon::start(&dir, &[]);
    let (st, body) = d.raw(b"GET /v1/openapi.json HTTP/1.1\r\n\r\n");
    assert_eq!(st, 200);
    let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(doc["openapi"], "3.0.3");
    for (m, p) in [
        ("post", "/v1/instances"),
        ("put", "/v1/instances/{instance}/config"),
        ("get", "/v1/instances/{instance}/handlers/{handler}"),
        ("get", "/v1/events"),
        ("get", "/metrics"),
    ] {
        assert!(doc["paths"][p][m].is_object(), "{m} {p}");
    }
}

#[test]
fn events_stream_with_follow() {
    let dir = tmpdir("dfollow");
    let d = Daemon::start(&dir, &[]);
    let mut f = Command::new(bin())
        .args(["events", "--follow"])
        .env("CLICKOS_SOCKET", &d.sock)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let cfg = write(&dir, "c.click", COUNTER);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(d.cli(&["create", "s1", &cfg]).code, 0);
    assert_eq!(d.cli(&["destroy", "s1"]).code, 0);
    let mut out = f.stdout.take().unwrap();
    let mut got = String::new();
    let mut buf = [0u8; 4096];
    let t0 = Instant::now();
    while !got.contains("destroyed") && t0.elapsed() < Duration::from_secs(10) {
        let n = out.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        got.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let _ = f.kill();
    let _ = f.wait();
    assert!(
        got.contains("created") && got.contains("destroyed"),
        "{got}"
    );
}

#[test]
fn one_instance_at_vm_isolation() {
    if !common::can_use_kvm() {
        return;
    }
    let dir = tmpdir("dvm");
    let d = Daemon::start(&dir, &[]);
    let cfg = write(&dir, "c.click", COUNTER);
    let o = d.cli(&["create", "v", &cfg, "--isolation", "vm"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert_eq!(d.json(&["show", "v"])["isolation"], "vm");
    assert_eq!(d.cli(&["read", "v", "c.count"]).stdout, "0\n");
    let bad = write(&dir, "bad.click", "x :: Nope;\n");
    let o = d.cli(&["install", "v", &bad]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains(&format!("{bad}:1:")), "{o:?}");
    assert_eq!(d.cli(&["destroy", "v"]).code, 0);
}
