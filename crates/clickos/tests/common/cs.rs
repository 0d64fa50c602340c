//! A ControlSocket test client: a `clickos run` child ([`Server`]) and a
//! plain socket client ([`Client`]) that speaks Click's protocol exactly
//! as its documentation describes, over TCP or a UNIX socket.

use super::{bin, wait_child};

use std::ffi::OsStr;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The line a ControlSocket greets every connection with.
pub const GREETING: &str = "Click::ControlSocket/1.3\r\n";

/// How long a client waits for a reply before the read fails.
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// A `clickos run` child, killed if the test fails before it exits (and
/// its directory removed, if it was given one with
/// [`Server::remove_on_drop`]).
pub struct Server {
    child: Option<Child>,
    dir: Option<PathBuf>,
}

impl Server {
    /// `clickos run ARGS...`, stdout and stderr piped.
    pub fn start<S: AsRef<OsStr>>(args: &[S]) -> Server {
        Server::start_with(args, |_| {})
    }

    /// As [`Server::start`]; `tweak` may change the command before it is
    /// spawned.
    pub fn start_with<S: AsRef<OsStr>>(args: &[S], tweak: impl FnOnce(&mut Command)) -> Server {
        let mut c = Command::new(bin());
        c.arg("run")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        tweak(&mut c);
        Server {
            child: Some(c.spawn().expect("spawn clickos")),
            dir: None,
        }
    }

    /// Removes `dir` (and what is in it) when the server is dropped, after
    /// the child is gone.
    pub fn remove_on_drop(mut self, dir: PathBuf) -> Server {
        self.dir = Some(dir);
        self
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    pub fn alive(&mut self) -> bool {
        matches!(self.child.as_mut().unwrap().try_wait(), Ok(None))
    }

    /// Waits for exit (at most 10 s); returns (status, stdout, stderr).
    pub fn wait(mut self) -> (i32, String, String) {
        let r = wait_child(self.child.take().unwrap());
        (r.code, r.out, r.err)
    }

    /// The router's peak resident memory (VmHWM), in KiB.
    pub fn peak_kib(&self) -> u64 {
        let v = super::status_field(self.pid(), "VmHWM:");
        v.split_whitespace().next().unwrap().parse().unwrap()
    }

    /// The router's CPU time so far (user + system), in clock ticks.
    pub fn cpu_ticks(&self) -> u64 {
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
        if let Some(d) = &self.dir {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts a server on a free TCP port and connects to it. `make(port,
/// token)` gives the command line; its configuration must declare
/// `TOKEN :: Idle;`, which proves the client reached this server and not
/// whatever else took the port meanwhile (then another port is tried).
pub fn start_tcp(make: impl Fn(u16, &str) -> Vec<String>) -> (Server, u16, Client) {
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
            s.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
            let mut r = BufReader::new(Box::new(s) as Box<dyn Conn>);
            let mut greeting = Vec::new();
            let _ = r.read_until(b'\n', &mut greeting);
            if greeting != GREETING.as_bytes() {
                break;
            }
            let mut c = Client { r };
            if c.cmd(&format!("READ {token}.class")).code != 200 {
                break;
            }
            assert_eq!(c.data(), b"Idle");
            return (server, port, c);
        }
        // the port was taken (bind failed, or someone else answered)
        drop(server);
    }
    panic!("could not start a ControlSocket server");
}

/// `clickos run -p PORT -e CONFIG [EXTRA...]`, connected.
pub fn start_cfg(cfg: &str, extra: &[&str]) -> (Server, u16, Client) {
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

/// `WRITE stop`, which must succeed; then waits for the exit (at most
/// 10 s) and returns (status, stdout, stderr).
pub fn stop_and_wait(c: &mut Client, server: Server) -> (i32, String, String) {
    let r = c.cmd("WRITE stop");
    assert_eq!((r.code, r.text()), (200, "Write handler 'stop' OK".into()));
    server.wait()
}

/// [`stop_and_wait`], and the router must exit 0; its stderr.
pub fn stop(c: &mut Client, server: Server) -> String {
    let (code, _, err) = stop_and_wait(c, server);
    assert_eq!(code, 0, "stderr: {err}");
    err
}

/// A stream a [`Client`] speaks over.
pub trait Conn: Read + Write + Send {
    fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()>;
}

impl Conn for TcpStream {
    fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        TcpStream::set_read_timeout(self, t)
    }
}

impl Conn for UnixStream {
    fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        UnixStream::set_read_timeout(self, t)
    }
}

/// A protocol client over any stream.
pub struct Client {
    r: BufReader<Box<dyn Conn>>,
}

/// One reply: (code, lines of text).
#[derive(Debug)]
pub struct Reply {
    pub code: u16,
    pub lines: Vec<String>,
}

impl Reply {
    /// The lines, joined by `\n`.
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }
}

impl Client {
    /// Connects to `127.0.0.1:PORT` (retrying for at most 20 s while
    /// `server` runs) and reads the greeting; replies time out after 10 s.
    pub fn tcp(port: u16, server: &mut Server) -> Client {
        let t0 = Instant::now();
        loop {
            match TcpStream::connect(("127.0.0.1", port)) {
                Ok(s) => {
                    s.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
                    return Client::new(Box::new(s));
                }
                Err(e) => {
                    assert!(server.alive(), "server exited before listening: {e}");
                    assert!(t0.elapsed() < Duration::from_secs(20), "connect: {e}");
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
    }

    /// As [`Client::tcp`], to the UNIX socket at `path`.
    pub fn unix(path: &Path, server: &mut Server) -> Client {
        let t0 = Instant::now();
        loop {
            match UnixStream::connect(path) {
                Ok(s) => {
                    s.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
                    return Client::new(Box::new(s));
                }
                Err(e) => {
                    assert!(server.alive(), "server exited before listening: {e}");
                    assert!(t0.elapsed() < Duration::from_secs(20), "connect: {e}");
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
    }

    /// A client over `s`, which must greet first (its read timeout is the
    /// caller's).
    pub fn new(s: Box<dyn Conn>) -> Client {
        let mut c = Client::greeted(s);
        assert_eq!(c.line(), GREETING);
        c
    }

    /// A client over `s`, whose greeting has been read already.
    pub fn greeted(s: Box<dyn Conn>) -> Client {
        Client {
            r: BufReader::new(s),
        }
    }

    /// Replies now time out after `t` instead.
    pub fn read_timeout(self, t: Duration) -> Client {
        self.r.get_ref().set_read_timeout(Some(t)).unwrap();
        self
    }

    /// One line, CRLF included; the connection must not have ended.
    pub fn line(&mut self) -> String {
        let mut l = Vec::new();
        self.r.read_until(b'\n', &mut l).expect("read reply line");
        assert!(!l.is_empty(), "the router closed the connection");
        String::from_utf8(l).expect("reply lines are ASCII")
    }

    pub fn send(&mut self, b: &[u8]) {
        self.r.get_mut().write_all(b).unwrap();
    }

    /// Reads one (possibly multi-line) reply.
    pub fn reply(&mut self) -> Reply {
        let mut lines = Vec::new();
        loop {
            let l = self.line();
            assert!(l.ends_with("\r\n"), "reply line without CRLF: {l:?}");
            assert!(l.len() >= 5, "short reply line {l:?}");
            let code: u16 = l[..3]
                .parse()
                .unwrap_or_else(|_| panic!("bad code in {l:?}"));
            let sep = l.as_bytes()[3];
            lines.push(l[4..l.len() - 2].to_string());
            match sep {
                b' ' => return Reply { code, lines },
                b'-' => {}
                _ => panic!("bad separator in {l:?}"),
            }
        }
    }

    /// Reads `DATA N` and the N bytes after it.
    pub fn data(&mut self) -> Vec<u8> {
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

    /// Sends `LINE` and CRLF; the reply.
    pub fn cmd(&mut self, line: &str) -> Reply {
        self.send(format!("{line}\r\n").as_bytes());
        self.reply()
    }

    /// READ, expecting success; the value. `h` may carry parameters after
    /// a space (the reply names the handler only).
    pub fn read(&mut self, h: &str) -> String {
        let r = self.cmd(&format!("READ {h}"));
        assert_eq!(r.code, 200, "READ {h}: {r:?}");
        let name = h.split(' ').next().unwrap();
        assert_eq!(r.text(), format!("Read handler '{name}' OK"));
        String::from_utf8(self.data()).unwrap()
    }

    /// READ of a number, expecting success.
    pub fn count(&mut self, h: &str) -> u64 {
        self.read(h).trim().parse().unwrap()
    }

    /// Whether the server has closed the connection (a clean end of
    /// stream only).
    pub fn at_eof(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.r.read(&mut b), Ok(0))
    }

    /// Whether the server has closed the connection, where a reset counts
    /// (so does any other read error, a read timeout included).
    pub fn at_eof_or_reset(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.r.read(&mut b), Ok(0) | Err(_))
    }
}
