//! `clickos daemon` and the fleet verbs that talk to it: `create`, `list`,
//! `show`, `install`, `read`, `write`, `handlers`, `console`, `stop`,
//! `start`, `destroy`, `top`, `events`, `completions`.

use crate::vmcmd::{parse_isolation, parse_size};
use clickos_daemon::http::percent_encode;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Exit codes (documented in `clickos help`).
pub const EXIT_OK: i32 = 0;
pub const EXIT_ERROR: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_UNREACHABLE: i32 = 3;
pub const EXIT_NOT_FOUND: i32 = 4;
pub const EXIT_DENIED: i32 = 5;

pub const VERBS: &[&str] = &[
    "create",
    "list",
    "show",
    "install",
    "read",
    "write",
    "handlers",
    "console",
    "stop",
    "start",
    "destroy",
    "suspend",
    "resume",
    "migrate",
    "top",
    "events",
    "completions",
];

pub fn usage() -> &'static str {
    "Usage: clickos daemon [--state DIR] [--socket PATH] [--listen ADDR:PORT] [--tokens FILE]
                      [--isolation LEVEL] [--max-connections N]
       clickos [GLOBAL OPTIONS] VERB ARGS...

The daemon owns a fleet of instances, their vNIC wiring and their desired state
(kept in DIR/clickos.redb: after the daemon is killed and started again every
instance comes back with its configuration and wiring). The verbs talk to it
over its UNIX socket.

Verbs (INSTANCE is a name or an id):
  create NAME CONFIG [--vnic ATTACH]... [--memory SIZE] [--isolation LEVEL]
                     [--restart never|on-failure|always]
                     [--metric ELEMENT.HANDLER]...   (exported by /metrics)
                              Boot an instance; CONFIG is a file, '-' for standard
                              input, or -e EXPR.
  list                        The instances and their state.
  show INSTANCE               One instance, with its vNIC counters.
  install INSTANCE CONFIG     Replace the configuration atomically; a refused one
                              leaves the old one running (errors as file:line).
  read INSTANCE ELEMENT.HANDLER
  write INSTANCE ELEMENT.HANDLER [VALUE...]
  handlers INSTANCE           Every handler with its mode (r, w, rw).
  console INSTANCE            Recent console output.
  stop INSTANCE | start INSTANCE | destroy INSTANCE
  suspend INSTANCE [FILE]     (vm instances) Snapshot its whole state (configuration,
                              counters, queues, NAT mappings) and end it; the daemon
                              keeps the snapshot (state 'suspended', across daemon
                              restarts) and FILE gets a copy.
  resume INSTANCE             Resume a suspended instance (vNICs rewired).
  resume FILE [--name NAME] [--vnic ATTACH]...
                              Resume a snapshot file as a new instance here.
  migrate INSTANCE --to SOCKET [--name NAME] [--vnic ATTACH]... [--through-cli]
                              Move it live to the daemon at SOCKET: this daemon
                              sends its memory there while it runs, pauses it,
                              sends the pages changed since; once it runs there
                              it is destroyed here (vNICs attached there); if the
                              other daemon refuses, it runs on here.
                              --through-cli: the old way (suspend here, the whole
                              snapshot through this process, resume there).
  top [--interval SECS] [--count N]
                              Live per-instance packet rates from the vNIC counters.
  events [--follow] [--since N]
                              Lifecycle events (created, installed, config_refused,
                              crashed, restarted, recovered, stopped, destroyed).
  completions bash            A bash completion script.

Global options:
  --socket PATH     The daemon's socket (default: $CLICKOS_SOCKET, else
                    /run/clickos.sock for root, $XDG_RUNTIME_DIR/clickos.sock
                    otherwise). tcp:HOST:PORT reaches a daemon run with --listen.
  --token TOKEN     Act as the tenant of TOKEN (default: $CLICKOS_TOKEN). Without
                    a token, root and the daemon's own user are the admin.
  --json            Print the daemon's JSON answer.

Exit codes: 0 ok; 1 the daemon refused (bad configuration, bad value, quota
exceeded, conflict); 2 usage; 3 the daemon cannot be reached; 4 no such
instance or handler; 5 not allowed (bad token, permission denied).
"
}

struct Global {
    socket: String,
    token: Option<String>,
    json: bool,
}

/// An HTTP exchange's outcome.
struct Answer {
    status: u16,
    body: Vec<u8>,
    head: String,
}

impl Answer {
    /// A header's value (name in any case).
    fn header(&self, name: &str) -> Option<&str> {
        self.head.split("\r\n").skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

enum Conn {
    Unix(std::os::unix::net::UnixStream),
    Tcp(std::net::TcpStream),
}

impl Read for Conn {
    fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Conn::Unix(s) => s.read(b),
            Conn::Tcp(s) => s.read(b),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        match self {
            Conn::Unix(s) => s.write(b),
            Conn::Tcp(s) => s.write(b),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Conn::Unix(s) => s.flush(),
            Conn::Tcp(s) => s.flush(),
        }
    }
}

/// Failure to talk: (exit code, message).
type Fail = (i32, String);

impl Global {
    fn connect(&self) -> Result<Conn, Fail> {
        let r = match self.socket.strip_prefix("tcp:") {
            Some(addr) => std::net::TcpStream::connect(addr).map(Conn::Tcp),
            None => std::os::unix::net::UnixStream::connect(&self.socket).map(Conn::Unix),
        };
        r.map_err(|e| {
            (
                EXIT_UNREACHABLE,
                format!(
                    "cannot reach the daemon at {}: {e} (is 'clickos daemon' running? --socket or CLICKOS_SOCKET)",
                    self.socket
                ),
            )
        })
    }

    fn send(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Conn, Fail> {
        let data = body.map(|b| serde_json::to_vec(b).unwrap_or_default());
        self.send_raw(
            method,
            path,
            &[],
            data.as_deref().map(|d| ("application/json", d)),
        )
    }

    /// A request with extra header lines and a body of a given type.
    fn send_raw(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        data: Option<(&str, &[u8])>,
    ) -> Result<Conn, Fail> {
        let mut c = self.connect()?;
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: clickos\r\n");
        if let Some(t) = &self.token {
            head.push_str(&format!("Authorization: Bearer {t}\r\n"));
        }
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        if let Some((ct, d)) = &data {
            head.push_str(&format!(
                "Content-Type: {ct}\r\nContent-Length: {}\r\n",
                d.len()
            ));
        }
        head.push_str("Connection: close\r\n\r\n");
        let data = data.map(|(_, d)| d);
        let lost = |e: std::io::Error| (EXIT_UNREACHABLE, format!("daemon connection: {e}"));
        c.write_all(head.as_bytes()).map_err(lost)?;
        if let Some(d) = &data {
            c.write_all(d).map_err(lost)?;
        }
        c.flush().map_err(lost)?;
        Ok(c)
    }

    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Answer, Fail> {
        let c = self.send(method, path, body)?;
        Self::answer(c)
    }

    fn answer(mut c: Conn) -> Result<Answer, Fail> {
        let mut buf = Vec::new();
        c.read_to_end(&mut buf)
            .map_err(|e| (EXIT_UNREACHABLE, format!("daemon connection: {e}")))?;
        let end = buf
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or((EXIT_UNREACHABLE, "bad answer from the daemon".to_string()))?;
        let head = String::from_utf8_lossy(&buf[..end]).to_string();
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or((EXIT_UNREACHABLE, "bad answer from the daemon".to_string()))?;
        Ok(Answer {
            status,
            body: buf[end + 4..].to_vec(),
            head,
        })
    }

    /// Calls and returns the JSON on success; prints the error otherwise.
    fn json_call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, i32> {
        let a = self.call(method, path, body).map_err(|(code, msg)| {
            eprintln!("clickos: {msg}");
            code
        })?;
        self.json_answer(a)
    }

    /// A request with a raw body and header lines; the answer on success
    /// (whatever its type), else the error printed.
    fn raw_call(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        data: Option<(&str, &[u8])>,
    ) -> Result<Answer, i32> {
        let a = self
            .send_raw(method, path, headers, data)
            .and_then(Self::answer)
            .map_err(|(code, msg)| {
                eprintln!("clickos: {msg}");
                code
            })?;
        if (200..300).contains(&a.status) {
            return Ok(a);
        }
        self.json_answer(a).map(|_| unreachable!())
    }

    fn json_answer(&self, a: Answer) -> Result<Value, i32> {
        let v: Value = serde_json::from_slice(&a.body).unwrap_or(Value::Null);
        if (200..300).contains(&a.status) {
            return Ok(v);
        }
        if self.json {
            println!("{v}");
        } else {
            for l in v["lines"].as_array().into_iter().flatten() {
                eprintln!("{}", l.as_str().unwrap_or(""));
            }
            let msg = v["error"].as_str().unwrap_or("error");
            eprintln!("clickos: {msg}");
        }
        Err(match (a.status, v["code"].as_str()) {
            (404, _) => EXIT_NOT_FOUND,
            (_, Some("quota_exceeded")) => EXIT_ERROR,
            (401 | 403, _) => EXIT_DENIED,
            _ => EXIT_ERROR,
        })
    }
}

fn inst_path(name: &str) -> String {
    format!("/v1/instances/{}", percent_encode(name))
}

fn read_config(arg: &str) -> Result<(String, String), String> {
    if arg == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("standard input: {e}"))?;
        return Ok(("<stdin>".into(), s));
    }
    std::fs::read_to_string(arg)
        .map(|t| (arg.to_string(), t))
        .map_err(|e| format!("{arg}: {e}"))
}

fn fmt_uptime(s: f64) -> String {
    let s = s as u64;
    if s >= 86400 {
        format!("{}d{}h", s / 86400, s % 86400 / 3600)
    } else if s >= 3600 {
        format!("{}h{}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

fn print_instance(v: &Value) {
    let s = |k: &str| match &v[k] {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        x => x.to_string(),
    };
    println!("id:          {}", s("id"));
    println!("name:        {}", s("name"));
    if !s("tenant").is_empty() {
        println!("tenant:      {}", s("tenant"));
    }
    println!("state:       {}", s("state"));
    println!("isolation:   {}", s("isolation"));
    println!("memory:      {}", s("memory"));
    println!("restart:     {} ({} restarts)", s("restart"), s("restarts"));
    println!(
        "uptime:      {}",
        fmt_uptime(v["uptime_seconds"].as_f64().unwrap_or(0.0))
    );
    println!(
        "boot:        {:.3} ms",
        v["boot_seconds"].as_f64().unwrap_or(0.0) * 1e3
    );
    println!(
        "config:      {} ({} bytes)",
        s("config_file"),
        s("config_bytes")
    );
    if !v["last_end"].is_null() {
        println!("last end:    {}", s("last_end"));
    }
    for n in v["vnics"].as_array().into_iter().flatten() {
        let g = |k: &str| n[k].as_u64().unwrap_or(0);
        println!(
            "vnic {}:      {}  in {} pkts {} B, out {} pkts {} B, drops {}",
            g("index"),
            n["attach"].as_str().unwrap_or(""),
            g("to_instance_packets"),
            g("to_instance_bytes"),
            g("from_instance_packets"),
            g("from_instance_bytes"),
            g("drops")
        );
    }
}

fn print_list(v: &Value) {
    println!(
        "{:>5}  {:<20} {:<10} {:<9} {:>8} {:>8}  TENANT",
        "ID", "NAME", "STATE", "ISOLATION", "RESTARTS", "UPTIME"
    );
    for i in v["instances"].as_array().into_iter().flatten() {
        println!(
            "{:>5}  {:<20} {:<10} {:<9} {:>8} {:>8}  {}",
            i["id"].as_u64().unwrap_or(0),
            i["name"].as_str().unwrap_or(""),
            i["state"].as_str().unwrap_or(""),
            i["isolation"].as_str().unwrap_or(""),
            i["restarts"].as_u64().unwrap_or(0),
            fmt_uptime(i["uptime_seconds"].as_f64().unwrap_or(0.0)),
            i["tenant"].as_str().unwrap_or("")
        );
    }
}

fn need(args: &[String], n: usize, what: &str) -> Result<(), i32> {
    if args.len() < n {
        eprintln!("clickos: usage: clickos {what}");
        return Err(EXIT_USAGE);
    }
    Ok(())
}

fn create(g: &Global, args: &[String]) -> Result<Value, i32> {
    let usage = "create NAME CONFIG|-e EXPR [--vnic ATTACH]... [--memory SIZE] [--isolation LEVEL] [--restart POLICY] [--metric ELEMENT.HANDLER]...";
    let mut pos = Vec::new();
    let mut body = json!({});
    let mut vnics = Vec::new();
    let mut metrics = Vec::new();
    let mut expr = None;
    let mut i = 0;
    let bad = |m: String| {
        eprintln!("clickos create: {m}");
        EXIT_USAGE
    };
    while i < args.len() {
        let a = args[i].as_str();
        let (opt, inline) = match a.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v.to_string())),
            _ => (a, None),
        };
        let mut val = || -> Result<String, i32> {
            if let Some(v) = &inline {
                return Ok(v.clone());
            }
            i += 1;
            args.get(i)
                .cloned()
                .ok_or_else(|| bad(format!("option '{opt}' requires an argument")))
        };
        match opt {
            "--vnic" => vnics.push(val()?),
            "--metric" => metrics.push(val()?),
            "-m" | "--memory" => {
                let v = val()?;
                let m = parse_size(&v)
                    .filter(|&n| n >= 1 << 20)
                    .ok_or_else(|| bad(format!("bad memory size '{v}' (e.g. 8M; at least 1M)")))?;
                body["memory"] = json!(m);
            }
            "-i" | "--isolation" => {
                let v = val()?;
                parse_isolation(&v).map_err(bad)?;
                body["isolation"] = json!(v);
            }
            "--restart" => {
                let v = val()?;
                clickos_daemon::store::Restart::parse(&v).map_err(bad)?;
                body["restart"] = json!(v);
            }
            "-e" | "--expression" => expr = Some(val()?),
            "--fault-injection" => body["fault_injection"] = json!(true),
            _ if a.starts_with('-') && a.len() > 1 => {
                return Err(bad(format!("unknown option '{a}'")))
            }
            _ => pos.push(a.to_string()),
        }
        i += 1;
    }
    let (name, file, text) = match (pos.as_slice(), expr) {
        ([name], Some(e)) => (name.clone(), "<expr>".to_string(), e),
        ([name, cfg], None) => {
            let (f, t) = read_config(cfg).map_err(|e| {
                eprintln!("clickos: {e}");
                EXIT_ERROR
            })?;
            (name.clone(), f, t)
        }
        _ => {
            eprintln!("clickos: usage: clickos {usage}");
            return Err(EXIT_USAGE);
        }
    };
    body["name"] = json!(name);
    body["config"] = json!(text);
    body["config_file"] = json!(file);
    body["vnics"] = json!(vnics);
    if !metrics.is_empty() {
        body["metrics"] = json!(metrics);
    }
    g.json_call("POST", "/v1/instances", Some(&body))
}

/// `--name`, `--vnic`s and `--to` of `resume` and `migrate`.
type ResumeOpts = (Option<String>, Option<Vec<String>>, Option<String>);

/// `--name NAME` and `--vnic ATTACH`... after the positional arguments.
fn resume_opts(args: &[String]) -> Result<ResumeOpts, i32> {
    let (mut name, mut vnics, mut to) = (None, None::<Vec<String>>, None);
    let mut i = 0;
    while i < args.len() {
        let val = || {
            args.get(i + 1).cloned().ok_or_else(|| {
                eprintln!("clickos: option '{}' requires an argument", args[i]);
                EXIT_USAGE
            })
        };
        match args[i].as_str() {
            "--name" => name = Some(val()?),
            "--vnic" => vnics.get_or_insert_with(Vec::new).push(val()?),
            "--to" => to = Some(val()?),
            o => {
                eprintln!("clickos: unexpected argument '{o}'");
                return Err(EXIT_USAGE);
            }
        }
        i += 2;
    }
    Ok((name, vnics, to))
}

fn suspend(g: &Global, a: &[String]) -> Result<Value, i32> {
    if a.is_empty() || a.len() > 2 {
        eprintln!("clickos: usage: clickos suspend INSTANCE [FILE]");
        return Err(EXIT_USAGE);
    }
    let body = json!({"inline": a.len() == 2});
    let mut v = g.json_call(
        "POST",
        &format!("{}/suspend", inst_path(&a[0])),
        Some(&body),
    )?;
    if let Some(file) = a.get(1) {
        let snap = v["snapshot"].as_str().unwrap_or("");
        let bytes = clickos_daemon::b64::decode(snap).map_err(|e| {
            eprintln!("clickos: bad snapshot from the daemon: {e}");
            EXIT_ERROR
        })?;
        std::fs::write(file, bytes).map_err(|e| {
            eprintln!(
                "clickos: {file}: {e} (the daemon keeps its own copy: clickos resume {})",
                a[0]
            );
            EXIT_ERROR
        })?;
        if let Some(o) = v.as_object_mut() {
            o.remove("snapshot");
        }
    }
    Ok(v)
}

fn resume(g: &Global, a: &[String]) -> Result<Value, i32> {
    let Some(what) = a.first() else {
        eprintln!(
            "clickos: usage: clickos resume INSTANCE | FILE [--name NAME] [--vnic ATTACH]..."
        );
        return Err(EXIT_USAGE);
    };
    let (name, vnics, _) = resume_opts(&a[1..])?;
    if !std::path::Path::new(what).is_file() {
        if name.is_some() || vnics.is_some() {
            eprintln!("clickos: {what}: no such file (--name and --vnic go with a snapshot file)");
            return Err(EXIT_USAGE);
        }
        return g.json_call("POST", &format!("{}/resume", inst_path(what)), None);
    }
    let bytes = std::fs::read(what).map_err(|e| {
        eprintln!("clickos: {what}: {e}");
        EXIT_ERROR
    })?;
    let mut body = json!({"snapshot": clickos_daemon::b64::encode(&bytes)});
    if let Some(n) = name {
        body["name"] = json!(n);
    }
    if let Some(v) = vnics {
        body["vnics"] = json!(v);
    }
    g.json_call("POST", "/v1/instances/resume", Some(&body))
}

fn migrate(g: &Global, a: &[String]) -> Result<Value, i32> {
    let usage = "clickos: usage: clickos migrate INSTANCE --to SOCKET [--name NAME] [--vnic ATTACH]... [--through-cli]";
    let Some(inst) = a.first() else {
        eprintln!("{usage}");
        return Err(EXIT_USAGE);
    };
    let rest: Vec<String> = a[1..]
        .iter()
        .filter(|x| *x != "--through-cli")
        .cloned()
        .collect();
    if rest.len() != a.len() - 1 {
        return migrate_through_cli(g, inst, &rest);
    }
    let (name, vnics, to) = resume_opts(&rest)?;
    let Some(to) = to else {
        eprintln!("clickos: migrate needs --to SOCKET (the other daemon)");
        return Err(EXIT_USAGE);
    };
    // The source daemon connects to the other one itself: a relative path
    // is made absolute here, where it was meant.
    let to = if to.starts_with("tcp:") {
        to
    } else {
        std::path::absolute(&to)
            .map(|p| p.display().to_string())
            .unwrap_or(to)
    };
    let mut body = json!({"to": to});
    if let Some(n) = name {
        body["name"] = json!(n);
    }
    if let Some(v) = vnics {
        body["vnics"] = json!(v);
    }
    if let Some(t) = &g.token {
        body["token"] = json!(t);
    }
    g.json_call("POST", &format!("{}/migrate", inst_path(inst)), Some(&body))
}

/// The migration before the daemons talked to each other: suspend here
/// (the snapshot through this process), resume there, destroy here.
fn migrate_through_cli(g: &Global, inst: &str, a: &[String]) -> Result<Value, i32> {
    let (name, vnics, to) = resume_opts(a)?;
    let Some(to) = to else {
        eprintln!("clickos: migrate needs --to SOCKET (the other daemon)");
        return Err(EXIT_USAGE);
    };
    let there = Global {
        socket: to.clone(),
        token: g.token.clone(),
        json: g.json,
    };
    // Reachable before anything happens here.
    there.json_call("GET", "/v1/health", None)?;
    // The snapshot travels as raw bytes (application/octet-stream both
    // ways), not base64 in JSON.
    let t0 = Instant::now();
    let snap = g.raw_call(
        "POST",
        &format!("{}/suspend", inst_path(inst)),
        &[("Accept", "application/octet-stream")],
        None,
    )?;
    let v: Value = snap
        .header("x-clickos-instance")
        .and_then(|h| serde_json::from_str(h).ok())
        .unwrap_or(Value::Null);
    let here_name = v["name"].as_str().unwrap_or(inst).to_string();
    let mut q = format!(
        "?name={}",
        percent_encode(name.as_deref().unwrap_or(&here_name))
    );
    match &vnics {
        Some(vn) if vn.is_empty() => q.push_str("&novnics=1"),
        Some(vn) => {
            for a in vn {
                q.push_str(&format!("&vnic={}", percent_encode(a)));
            }
        }
        None => {}
    }
    let resumed = there
        .raw_call(
            "POST",
            &format!("/v1/instances/resume{q}"),
            &[],
            Some(("application/octet-stream", &snap.body)),
        )
        .and_then(|a| there.json_answer(a));
    match resumed {
        Ok(mut r) => {
            let downtime = t0.elapsed();
            g.json_call("DELETE", &inst_path(&here_name), None)?;
            r["to"] = json!(to);
            r["downtime_ms"] = json!(downtime.as_secs_f64() * 1e3);
            r["suspend_ms"] = v["suspend_ms"].clone();
            Ok(r)
        }
        Err(code) => {
            eprintln!("clickos: the other daemon refused; resuming {here_name} here");
            g.json_call("POST", &format!("{}/resume", inst_path(&here_name)), None)?;
            Err(code)
        }
    }
}

fn top(g: &Global, args: &[String]) -> Result<(), i32> {
    let mut interval = 1.0f64;
    let mut count: Option<u64> = None;
    let mut i = 0;
    while i < args.len() {
        let v = args.get(i + 1);
        match (args[i].as_str(), v) {
            ("--interval", Some(v)) => {
                interval = v.parse().ok().filter(|x: &f64| *x > 0.0).ok_or_else(|| {
                    eprintln!("clickos top: bad interval '{v}'");
                    EXIT_USAGE
                })?
            }
            ("--count" | "-n", Some(v)) => {
                count = Some(v.parse().map_err(|_| {
                    eprintln!("clickos top: bad count '{v}'");
                    EXIT_USAGE
                })?)
            }
            (a, _) => {
                eprintln!("clickos top: unknown argument '{a}' (--interval SECS, --count N)");
                return Err(EXIT_USAGE);
            }
        }
        i += 2;
    }
    let totals = |v: &Value| -> Vec<(String, String, u64, u64, u64, u64, u64)> {
        v["instances"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| {
                let mut t = [0u64; 5];
                for n in i["vnics"].as_array().into_iter().flatten() {
                    for (k, f) in [
                        "to_instance_packets",
                        "from_instance_packets",
                        "to_instance_bytes",
                        "from_instance_bytes",
                        "drops",
                    ]
                    .iter()
                    .enumerate()
                    {
                        t[k] += n[*f].as_u64().unwrap_or(0);
                    }
                }
                (
                    i["name"].as_str().unwrap_or("").to_string(),
                    i["state"].as_str().unwrap_or("").to_string(),
                    t[0],
                    t[1],
                    t[2],
                    t[3],
                    t[4],
                )
            })
            .collect()
    };
    let tty = unsafe { libc::isatty(1) } == 1;
    let mut prev = totals(&g.json_call("GET", "/v1/instances", None)?);
    let mut t_prev = Instant::now();
    let mut n = 0;
    loop {
        std::thread::sleep(Duration::from_secs_f64(interval));
        let now = totals(&g.json_call("GET", "/v1/instances", None)?);
        let dt = t_prev.elapsed().as_secs_f64().max(1e-6);
        t_prev = Instant::now();
        if g.json {
            let rows: Vec<Value> = now
                .iter()
                .map(|r| {
                    let p = prev.iter().find(|p| p.0 == r.0);
                    let d = |a: u64, b: Option<u64>| (a.saturating_sub(b.unwrap_or(a))) as f64 / dt;
                    json!({"name": r.0, "state": r.1,
                        "in_pps": d(r.2, p.map(|p| p.2)), "out_pps": d(r.3, p.map(|p| p.3)),
                        "in_bps": d(r.4, p.map(|p| p.4)) * 8.0, "out_bps": d(r.5, p.map(|p| p.5)) * 8.0,
                        "drops_per_s": d(r.6, p.map(|p| p.6))})
                })
                .collect();
            println!("{}", json!({ "instances": rows }));
        } else {
            if tty {
                print!("\x1b[H\x1b[2J");
            }
            println!(
                "{:<20} {:<10} {:>12} {:>12} {:>12} {:>12} {:>10}",
                "NAME", "STATE", "IN pkt/s", "OUT pkt/s", "IN Mbit/s", "OUT Mbit/s", "drops/s"
            );
            for r in &now {
                let p = prev.iter().find(|p| p.0 == r.0);
                let d = |a: u64, b: Option<u64>| (a.saturating_sub(b.unwrap_or(a))) as f64 / dt;
                println!(
                    "{:<20} {:<10} {:>12.0} {:>12.0} {:>12.3} {:>12.3} {:>10.0}",
                    r.0,
                    r.1,
                    d(r.2, p.map(|p| p.2)),
                    d(r.3, p.map(|p| p.3)),
                    d(r.4, p.map(|p| p.4)) * 8e-6,
                    d(r.5, p.map(|p| p.5)) * 8e-6,
                    d(r.6, p.map(|p| p.6))
                );
            }
        }
        let _ = std::io::stdout().flush();
        prev = now;
        n += 1;
        if count.is_some_and(|c| n >= c) {
            return Ok(());
        }
    }
}

fn events(g: &Global, args: &[String]) -> Result<(), i32> {
    let mut follow = false;
    let mut since = 0u64;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "-f" | "--follow" => follow = true,
            "--since" => {
                i += 1;
                since = args.get(i).and_then(|s| s.parse().ok()).ok_or_else(|| {
                    eprintln!("clickos events: --since needs a number");
                    EXIT_USAGE
                })?;
            }
            a => {
                eprintln!("clickos events: unknown argument '{a}' (--follow, --since N)");
                return Err(EXIT_USAGE);
            }
        }
        i += 1;
    }
    let show = |e: &Value| {
        if g.json {
            println!("{e}");
        } else {
            println!(
                "{:>6} {:<15} {} (id {}): {}",
                e["seq"].as_u64().unwrap_or(0),
                e["kind"].as_str().unwrap_or(""),
                e["instance"].as_str().unwrap_or(""),
                e["id"],
                e["message"].as_str().unwrap_or("")
            );
            for l in e["lines"].as_array().into_iter().flatten() {
                println!("         {}", l.as_str().unwrap_or(""));
            }
        }
        let _ = std::io::stdout().flush();
    };
    if !follow {
        let v = g.json_call("GET", &format!("/v1/events?since={since}"), None)?;
        for e in v["events"].as_array().into_iter().flatten() {
            show(e);
        }
        return Ok(());
    }
    let c = g
        .send("GET", &format!("/v1/events?since={since}&follow=1"), None)
        .map_err(|(code, m)| {
            eprintln!("clickos: {m}");
            code
        })?;
    let mut r = BufReader::new(c);
    let mut line = String::new();
    // head
    loop {
        line.clear();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            eprintln!("clickos: the daemon closed the stream");
            return Err(EXIT_UNREACHABLE);
        }
        if line == "\r\n" {
            break;
        }
    }
    loop {
        line.clear();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return Ok(());
        }
        let Ok(n) = usize::from_str_radix(line.trim(), 16) else {
            return Err(EXIT_UNREACHABLE);
        };
        if n == 0 {
            return Ok(());
        }
        let mut data = vec![0u8; n + 2];
        if r.read_exact(&mut data).is_err() {
            return Ok(());
        }
        for l in String::from_utf8_lossy(&data[..n]).lines() {
            if let Ok(e) = serde_json::from_str::<Value>(l) {
                show(&e);
            }
        }
    }
}

fn completions(args: &[String]) -> i32 {
    if args.first().map(String::as_str) != Some("bash") {
        eprintln!("clickos: usage: clickos completions bash");
        return EXIT_USAGE;
    }
    let verbs = VERBS.join(" ");
    print!(
        r#"# bash completion for clickos; load with: source <(clickos completions bash)
_clickos() {{
    local cur prev words cword
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    local verbs="run elements vm chain daemon {verbs}"
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=( $(compgen -W "$verbs --help --version" -- "$cur") )
        return
    fi
    case "$prev" in
        --isolation|-i) COMPREPLY=( $(compgen -W "vm process none" -- "$cur") ); return ;;
        --restart) COMPREPLY=( $(compgen -W "never on-failure always" -- "$cur") ); return ;;
        --socket|--state|--tokens) COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
    esac
    case "${{COMP_WORDS[1]}}" in
        show|install|read|write|handlers|console|stop|start|destroy|suspend|resume|migrate)
            if [ "$COMP_CWORD" -eq 2 ]; then
                local names
                names=$(clickos list --json 2>/dev/null | python3 -c 'import json,sys; print(" ".join(i["name"] for i in json.load(sys.stdin)["instances"]))' 2>/dev/null)
                COMPREPLY=( $(compgen -W "$names" -- "$cur") )
            elif [ "${{COMP_WORDS[1]}}" = install ]; then
                COMPREPLY=( $(compgen -f -- "$cur") )
            fi ;;
        create) COMPREPLY=( $(compgen -f -W "--vnic --memory --isolation --restart --metric -e" -- "$cur") ) ;;
        events) COMPREPLY=( $(compgen -W "--follow --since" -- "$cur") ) ;;
        top) COMPREPLY=( $(compgen -W "--interval --count" -- "$cur") ) ;;
        daemon) COMPREPLY=( $(compgen -W "--state --socket --listen --tokens --isolation --max-connections" -- "$cur") ) ;;
        completions) COMPREPLY=( $(compgen -W "bash" -- "$cur") ) ;;
    esac
}}
complete -F _clickos clickos
"#
    );
    EXIT_OK
}

/// `clickos VERB …` for the fleet verbs.
pub fn main(verb: &str, args: &[String]) -> i32 {
    // SAFETY: restores the default action (die quietly on a closed pipe,
    // as `clickos list | head` expects).
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    if verb == "completions" {
        return completions(args);
    }
    let mut g = Global {
        socket: std::env::var("CLICKOS_SOCKET")
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| clickos_daemon::default_socket().display().to_string()),
        token: std::env::var("CLICKOS_TOKEN")
            .ok()
            .filter(|s| !s.is_empty()),
        json: false,
    };
    let mut rest = Vec::new();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--json" => g.json = true,
            "--socket" | "--token" => {
                let Some(v) = args.get(i + 1) else {
                    eprintln!("clickos: option '{}' requires an argument", args[i]);
                    return EXIT_USAGE;
                };
                if args[i] == "--socket" {
                    g.socket = v.clone();
                } else {
                    g.token = Some(v.clone());
                }
                i += 1;
            }
            "--help" | "-h" if verb != "create" && verb != "read" => {
                print!("{}", usage());
                return EXIT_OK;
            }
            _ => rest.push(args[i].clone()),
        }
        i += 1;
    }
    let a = &rest;
    let r: Result<(), i32> = (|| {
        let out = |v: Value, pretty: &dyn Fn(&Value)| {
            if g.json {
                println!("{v}");
            } else {
                pretty(&v);
            }
        };
        match verb {
            "create" => out(create(&g, a)?, &|v| {
                println!(
                    "{} (id {}) {}",
                    v["name"].as_str().unwrap_or(""),
                    v["id"],
                    v["state"].as_str().unwrap_or("")
                )
            }),
            "list" => out(g.json_call("GET", "/v1/instances", None)?, &print_list),
            "show" => {
                need(a, 1, "show INSTANCE")?;
                out(
                    g.json_call("GET", &inst_path(&a[0]), None)?,
                    &print_instance,
                )
            }
            "install" => {
                need(a, 2, "install INSTANCE CONFIG")?;
                let (file, text) = read_config(&a[1]).map_err(|e| {
                    eprintln!("clickos: {e}");
                    EXIT_ERROR
                })?;
                let body = json!({"config": text, "config_file": file});
                out(
                    g.json_call("PUT", &format!("{}/config", inst_path(&a[0])), Some(&body))?,
                    &|v| {
                        println!(
                            "{}: installed {} ({} bytes)",
                            v["name"].as_str().unwrap_or(""),
                            v["config_file"].as_str().unwrap_or(""),
                            v["config_bytes"]
                        )
                    },
                )
            }
            "read" => {
                need(a, 2, "read INSTANCE ELEMENT.HANDLER")?;
                let p = format!("{}/handlers/{}", inst_path(&a[0]), percent_encode(&a[1]));
                out(g.json_call("GET", &p, None)?, &|v| {
                    let s = v["value"].as_str().unwrap_or("");
                    print!("{s}");
                    if !s.is_empty() && !s.ends_with('\n') {
                        println!();
                    }
                })
            }
            "write" => {
                need(a, 2, "write INSTANCE ELEMENT.HANDLER [VALUE...]")?;
                let p = format!("{}/handlers/{}", inst_path(&a[0]), percent_encode(&a[1]));
                let body = json!({"value": a[2..].join(" ")});
                out(g.json_call("PUT", &p, Some(&body))?, &|_| {})
            }
            "handlers" => {
                need(a, 1, "handlers INSTANCE")?;
                out(
                    g.json_call("GET", &format!("{}/handlers", inst_path(&a[0])), None)?,
                    &|v| {
                        for h in v["handlers"].as_array().into_iter().flatten() {
                            println!(
                                "{}\t{}",
                                h["name"].as_str().unwrap_or(""),
                                h["mode"].as_str().unwrap_or("")
                            );
                        }
                    },
                )
            }
            "console" => {
                need(a, 1, "console INSTANCE")?;
                out(
                    g.json_call("GET", &format!("{}/console", inst_path(&a[0])), None)?,
                    &|v| print!("{}", v["text"].as_str().unwrap_or("")),
                )
            }
            "stop" | "start" => {
                need(a, 1, &format!("{verb} INSTANCE"))?;
                out(
                    g.json_call("POST", &format!("{}/{verb}", inst_path(&a[0])), None)?,
                    &|v| {
                        println!(
                            "{}: {}",
                            v["name"].as_str().unwrap_or(""),
                            v["state"].as_str().unwrap_or("")
                        )
                    },
                )
            }
            "destroy" => {
                need(a, 1, "destroy INSTANCE")?;
                out(g.json_call("DELETE", &inst_path(&a[0]), None)?, &|v| {
                    println!("{}: destroyed", v["name"].as_str().unwrap_or(""))
                })
            }
            "fault" => {
                need(a, 2, "fault INSTANCE KIND")?;
                let body = json!({"kind": a[1]});
                out(
                    g.json_call("POST", &format!("{}/fault", inst_path(&a[0])), Some(&body))?,
                    &|v| println!("{}", v["value"].as_str().unwrap_or("")),
                )
            }
            "suspend" => out(suspend(&g, a)?, &|v| {
                println!(
                    "{}: suspended ({} bytes, {:.2} ms)",
                    v["name"].as_str().unwrap_or(""),
                    v["snapshot_bytes"],
                    v["suspend_ms"].as_f64().unwrap_or(0.0)
                )
            }),
            "resume" => out(resume(&g, a)?, &|v| {
                println!(
                    "{} (id {}) {} (resumed in {:.2} ms)",
                    v["name"].as_str().unwrap_or(""),
                    v["id"],
                    v["state"].as_str().unwrap_or(""),
                    v["resume_ms"].as_f64().unwrap_or(0.0)
                )
            }),
            "migrate" => out(migrate(&g, a)?, &|v| {
                println!(
                    "{}: migrated to {} (id {} there), downtime {:.2} ms",
                    v["name"].as_str().unwrap_or(""),
                    v["to"].as_str().unwrap_or(""),
                    v["id"],
                    v["downtime_ms"].as_f64().unwrap_or(0.0)
                )
            }),
            "top" => top(&g, a)?,
            "events" => events(&g, a)?,
            _ => {
                eprintln!("clickos: unknown verb '{verb}'");
                return Err(EXIT_USAGE);
            }
        }
        Ok(())
    })();
    match r {
        Ok(()) => EXIT_OK,
        Err(c) => c,
    }
}

/// `clickos --socket S --json VERB …`: the verb after leading global
/// options, and every other argument.
pub fn split_global(args: &[String]) -> Option<(String, Vec<String>)> {
    let mut i = 0;
    let mut globals = Vec::new();
    while i < args.len() {
        match args[i].as_str() {
            "--json" => globals.push(args[i].clone()),
            "--socket" | "--token" => {
                globals.extend(args.get(i..i + 2)?.iter().cloned());
                i += 1;
            }
            v if VERBS.contains(&v) || v == "fault" => {
                let mut rest = args[i + 1..].to_vec();
                rest.extend(globals);
                return Some((v.to_string(), rest));
            }
            _ => return None,
        }
        i += 1;
    }
    None
}

/// `clickos daemon …`
pub fn daemon_main(args: &[String]) -> i32 {
    let mut state: Option<PathBuf> = None;
    let mut socket: Option<PathBuf> = std::env::var_os("CLICKOS_SOCKET").map(PathBuf::from);
    let mut listen = None;
    let mut tokens = None;
    let mut isolation = None;
    let mut faults = false;
    let mut max_conn = 512usize;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let val = |i: &mut usize| -> Result<String, String> {
            *i += 1;
            args.get(*i)
                .cloned()
                .ok_or_else(|| format!("option '{a}' requires an argument"))
        };
        let r: Result<(), String> = (|| {
            match a {
                "--state" => state = Some(val(&mut i)?.into()),
                "--socket" => socket = Some(val(&mut i)?.into()),
                "--listen" => listen = Some(val(&mut i)?),
                "--tokens" => tokens = Some(val(&mut i)?.into()),
                "-i" | "--isolation" => isolation = Some(parse_isolation(&val(&mut i)?)?),
                "--allow-fault-injection" => faults = true,
                "--max-connections" => {
                    let v = val(&mut i)?;
                    max_conn = v
                        .parse()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or_else(|| format!("bad connection count '{v}'"))?;
                }
                "--help" | "-h" => return Err(String::new()),
                _ => return Err(format!("unknown argument '{a}'")),
            }
            Ok(())
        })();
        match r {
            Ok(()) => {}
            Err(e) if e.is_empty() => {
                print!("{}", usage());
                return EXIT_OK;
            }
            Err(e) => {
                eprintln!("clickos daemon: {e}");
                return EXIT_USAGE;
            }
        }
        i += 1;
    }
    let isolation = isolation.unwrap_or_else(crate::vmcmd::default_isolation);
    let opts = clickos_daemon::DaemonOptions {
        state_dir: state.unwrap_or_else(clickos_daemon::default_state_dir),
        socket: socket.unwrap_or_else(clickos_daemon::default_socket),
        listen,
        tokens,
        fleet: clickos_daemon::FleetOptions {
            helper_exe: std::env::current_exe().ok(),
            default_isolation: isolation,
            allow_fault_injection: faults,
            boot_timeout: Duration::from_secs(5),
        },
        max_connections: max_conn,
        limits: clickos_daemon::http::Limits::default(),
    };
    let d = match clickos_daemon::Daemon::start(opts.clone()) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("clickos daemon: {e}");
            return EXIT_ERROR;
        }
    };
    eprintln!(
        "clickos daemon: listening on {}{}; state in {}; default isolation {isolation}",
        opts.socket.display(),
        opts.listen
            .as_ref()
            .map(|l| format!(" and tcp:{l}"))
            .unwrap_or_default(),
        opts.state_dir.display()
    );
    d.run();
    eprintln!("clickos daemon: stopped");
    EXIT_OK
}
