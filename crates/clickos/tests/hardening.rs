//! The ControlSocket's boundaries, tried as an attacker would (issue 11,
//! item 6): idle connections, unterminated uploads and enormous replies. Each test
//! runs the attack against `clickos run` and checks that the router
//! refuses it or bounds it, reports it, and keeps answering.

mod common;
use common::*;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// A `clickos run` child, killed if the test fails before it exits.
struct Server {
    child: Option<Child>,
}

impl Server {
    fn start(args: &[String]) -> Server {
        let child = Command::new(bin())
            .arg("run")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn clickos");
        Server { child: Some(child) }
    }

    fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    fn alive(&mut self) -> bool {
        matches!(self.child.as_mut().unwrap().try_wait(), Ok(None))
    }

    /// Waits for exit (at most 10 s); returns (status, stdout, stderr).
    fn wait(mut self) -> (i32, String, String) {
        let r = wait_child(self.child.take().unwrap());
        (r.code, r.out, r.err)
    }

    /// The router's peak resident memory (VmHWM), in KiB.
    fn peak_kib(&self) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        let l = s.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        l.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// The router's CPU time so far (user + system), in clock ticks.
    fn cpu_ticks(&self) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        let rest = &s[s.rfind(')').unwrap() + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(c) = self.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

trait Conn: Read + Write + Send {}
impl Conn for TcpStream {}
impl Conn for UnixStream {}

/// A protocol client.
struct Client {
    r: BufReader<Box<dyn Conn>>,
}

#[derive(Debug)]
struct Reply {
    code: u16,
    lines: Vec<String>,
}

impl Reply {
    fn text(&self) -> String {
        self.lines.join("\n")
    }
}

impl Client {
    fn new(s: Box<dyn Conn>) -> Client {
        let mut c = Client {
            r: BufReader::new(s),
        };
        assert_eq!(c.line(), "Click::ControlSocket/1.3\r\n");
        c
    }

    fn tcp(port: u16) -> Client {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        Client::new(Box::new(s))
    }

    fn line(&mut self) -> String {
        let mut l = Vec::new();
        self.r.read_until(b'\n', &mut l).expect("read reply line");
        String::from_utf8(l).expect("reply lines are ASCII")
    }

    fn send(&mut self, b: &[u8]) {
        self.r.get_mut().write_all(b).unwrap();
    }

    fn reply(&mut self) -> Reply {
        let mut lines = Vec::new();
        loop {
            let l = self.line();
            assert!(l.ends_with("\r\n") && l.len() >= 5, "bad reply line {l:?}");
            let code: u16 = l[..3].parse().expect("reply code");
            lines.push(l[4..l.len() - 2].to_string());
            if l.as_bytes()[3] == b' ' {
                return Reply { code, lines };
            }
        }
    }

    fn data(&mut self) -> Vec<u8> {
        let l = self.line();
        let n: usize = l
            .strip_prefix("DATA ")
            .and_then(|x| x.strip_suffix("\r\n"))
            .unwrap_or_else(|| panic!("expected DATA line, got {l:?}"))
            .parse()
            .unwrap();
        let mut d = vec![0; n];
        self.r.read_exact(&mut d).unwrap();
        d
    }

    fn cmd(&mut self, line: &str) -> Reply {
        self.send(format!("{line}\r\n").as_bytes());
        self.reply()
    }

    fn read(&mut self, h: &str) -> String {
        let r = self.cmd(&format!("READ {h}"));
        assert_eq!(r.code, 200, "READ {h}: {r:?}");
        String::from_utf8(self.data()).unwrap()
    }

    /// Whether the server has closed the connection (a reset counts).
    fn at_eof(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.r.read(&mut b), Ok(0) | Err(_))
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `clickos run` with a ControlSocket on a free TCP port and
/// connects. `make(port, token)` gives the arguments; its configuration
/// must declare `TOKEN :: Idle;`, which proves the client reached this
/// server (another port is tried otherwise).
fn start_tcp(make: impl Fn(u16, &str) -> Vec<String>) -> (Server, u16, Client) {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    for _ in 0..8 {
        let token = format!(
            "tok_{}_{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let port = free_port();
        let mut server = Server::start(&make(port, &token));
        let t0 = Instant::now();
        while server.alive() && t0.elapsed() < Duration::from_secs(20) {
            let Ok(s) = TcpStream::connect(("127.0.0.1", port)) else {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            };
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut r = BufReader::new(Box::new(s) as Box<dyn Conn>);
            let mut greeting = Vec::new();
            let _ = r.read_until(b'\n', &mut greeting);
            if greeting != b"Click::ControlSocket/1.3\r\n" {
                break;
            }
            let mut c = Client { r };
            if c.cmd(&format!("READ {token}.class")).code != 200 {
                break;
            }
            assert_eq!(c.data(), b"Idle");
            return (server, port, c);
        }
        drop(server);
    }
    panic!("could not start a ControlSocket server");
}

/// `clickos run -p PORT -e CONFIG [EXTRA...]`, connected.
fn start_cfg(cfg: &str, extra: &[&str]) -> (Server, u16, Client) {
    start_tcp(|port, token| {
        let mut v = vec![
            "-p".to_string(),
            port.to_string(),
            "-e".to_string(),
            format!("{cfg} {token} :: Idle;"),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    })
}

fn stop(c: &mut Client, server: Server) -> String {
    assert_eq!(c.cmd("WRITE stop").code, 200);
    let (code, _, err) = server.wait();
    assert_eq!(code, 0, "stderr: {err}");
    err
}

/// Attack: 128 idle connections locked out the 129th. Now the longest-idle
/// connection makes room for the new one.
#[test]
fn idle_connections_do_not_lock_out_a_new_client() {
    let (server, port, mut first) = start_cfg("c :: Counter; Idle -> c -> Discard;", &[]);
    // with `first`, 128 connections: the limit
    let mut idle: Vec<Client> = (0..127).map(|_| Client::tcp(port)).collect();
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut r = BufReader::new(s);
    let mut greeting = String::new();
    let got = r.read_line(&mut greeting);
    assert!(
        matches!(got, Ok(n) if n > 0) && greeting == "Click::ControlSocket/1.3\r\n",
        "the 129th client was locked out: {got:?}"
    );
    let mut late = Client {
        r: BufReader::new(Box::new(r.into_inner())),
    };
    assert_eq!(late.read("c.class"), "Counter");
    // the first, longest-idle connection made room
    assert!(first.at_eof(), "the longest-idle connection is still open");
    // the others are served
    assert_eq!(idle[126].read("c.class"), "Counter");
    assert_eq!(idle[1].read("c.class"), "Counter");
    stop(&mut late, server);
}

/// IDLE_TIMEOUT closes a connection that has been idle that long; one
/// that keeps asking stays open.
#[test]
fn idle_timeout_closes_idle_connections() {
    let (server, port, mut c) = start_tcp(|port, token| {
        vec![
            "-e".into(),
            format!("c :: Counter; Idle -> c -> Discard; {token} :: Idle; ControlSocket(TCP, {port}, IDLE_TIMEOUT 2)"),
        ]
    });
    let mut quiet = Client::tcp(port);
    // the busy client asks every 50 ms for 3 s; the quiet one says nothing
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(3) {
        assert_eq!(c.read("c.class"), "Counter");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(quiet.at_eof(), "the idle connection is still open");
    stop(&mut c, server);
}

/// Attack: 32 unterminated 8 MiB READUNTIL uploads took the router from
/// 4.5 MB to 270 MB and 34 s of CPU (the terminator was searched from the
/// start on every read). Now the search resumes and all connections
/// together may buffer a bounded amount: the largest is refused (521) and
/// closed. The router's peak memory stays bounded and it still answers.
#[test]
fn unterminated_uploads_stay_within_a_memory_budget() {
    let (server, port, mut c) = start_cfg("c :: Counter; Idle -> c -> Discard;", &[]);
    let before = server.peak_kib();
    let cpu0 = server.cpu_ticks();
    let line = {
        let mut l = vec![b'x'; 63];
        l.push(b'\n');
        l
    };
    let handles: Vec<_> = (0..32)
        .map(|_| {
            let line = line.clone();
            std::thread::spawn(move || {
                let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
                    return;
                };
                let _ = s.write_all(b"READUNTIL c.class END\r\n");
                let chunk: Vec<u8> = line.iter().copied().cycle().take(64 << 10).collect();
                for _ in 0..128 {
                    if s.write_all(&chunk).is_err() {
                        return; // refused and closed
                    }
                }
                let _ = s.shutdown(Shutdown::Write);
                let mut sink = Vec::new();
                let _ = s.read_to_end(&mut sink);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(c.read("c.class"), "Counter");
    let peak = server.peak_kib();
    let cpu = server.cpu_ticks() - cpu0;
    eprintln!("peak memory {before} KiB -> {peak} KiB; CPU {cpu} ticks");
    // (before the budget: +225 MB; with it about +35 MB)
    assert!(
        peak < before + 100 * 1024,
        "peak memory {before} KiB -> {peak} KiB"
    );
    let mut d = Client::tcp(port);
    assert_eq!(d.read("c.class"), "Counter");
    stop(&mut c, server);
}

/// `clickos run -p PORT FILE`, where FILE declares `s`, whose `config`
/// handler is about `n` bytes long, connected.
fn start_big(dir: &Path, n: usize) -> (Server, u16, Client) {
    let f = dir.join("big.click");
    start_tcp(|port, token| {
        let text = format!(
            "s :: Script(TYPE PASSIVE, return \"{}\"); c :: Counter; Idle -> c -> Discard; {token} :: Idle;",
            "A".repeat(n)
        );
        std::fs::write(&f, text).unwrap();
        vec!["-p".into(), port.to_string(), f.display().to_string()]
    })
}

/// A read handler whose value is larger than a reply may be is answered
/// with 521 instead of being copied into the connection's output; the
/// connection goes on.
#[test]
fn an_enormous_handler_value_gets_an_error_reply() {
    let dir = tmpdir("hard-big");
    let (server, _port, mut c) = start_big(&dir, 12 << 20);
    let r = c.cmd("READ s.config");
    assert_eq!(r.code, 521, "{r:?}");
    assert!(r.text().contains("too large"), "{r:?}");
    assert_eq!(c.read("c.class"), "Counter");
    stop(&mut c, server);
}

/// Many clients asking for large values without reading the replies: the
/// output all connections buffer together is bounded (those over it wait
/// for their clients to read), and a reading client is still served.
#[test]
fn unread_replies_stay_within_a_memory_budget() {
    let dir = tmpdir("hard-unread");
    let (server, port, mut c) = start_big(&dir, 6 << 20);
    let before = server.peak_kib();
    let mut hogs: Vec<TcpStream> = Vec::new();
    for _ in 0..32 {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(&b"READ s.config\r\n".repeat(8)).unwrap();
        hogs.push(s);
    }
    // let the router work through what it can
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(c.read("c.class"), "Counter");
    let peak = server.peak_kib();
    eprintln!("peak memory {before} KiB -> {peak} KiB");
    // (before the budget: +270 MB; with it about +90 MB, the 32 MiB of
    // replies plus the handler's values and the allocator's slack)
    assert!(
        peak < before + 150 * 1024,
        "peak memory {before} KiB -> {peak} KiB"
    );
    drop(hogs);
    stop(&mut c, server);
}
