//! ControlSocket: Click's line protocol for calling handlers from other
//! programs, over a TCP or UNIX-domain stream socket.
//!
//! The sockets are non-blocking. The element registers them with the
//! driver's [`Selector`](crate::selector::Selector); the driver schedules
//! the element's task when one is ready (or polls them about once a
//! millisecond while the router is busy), and the task accepts clients,
//! reads, runs commands through the router's handler path and writes
//! replies. Every buffer is bounded, per connection and for all of them
//! together, so a client can slow itself down but not the router; an idle
//! client makes room for a new one. Replacing the configuration
//! (`hotconfig`) over a socket is refused unless the socket opts in, and
//! then only a UNIX socket's peer of the router's own user (or root) may.

mod conn;
mod unixsock;

use super::io_error_text;
use click::element_any;
use click::prelude::*;
use click::router::HandlerError;
use click_lang::args::Seconds;
use conn::*;
use std::cell::Cell;
use std::io::ErrorKind;
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixListener;
use std::time::{Duration, Instant};

/// Connections at once; a new one past this closes the longest-idle one.
const MAX_CONNS: usize = 128;
/// Commands run for one connection per task run.
const CMD_BUDGET: usize = 64;
/// Connections accepted per task run.
const ACCEPT_BUDGET: usize = 16;
/// IDLE_TIMEOUT's default, in seconds.
const DEFAULT_IDLE_TIMEOUT: u64 = 300;

const TIMER_RETRY: u32 = 0;
const TIMER_ACCEPT: u32 = 1;

// LLRPC command bits in Click's network format (click/llrpc.h).
const LLRPC_NET_IN: u32 = 0x8000_0000;
const LLRPC_NET_OUT: u32 = 0x4000_0000;
const LLRPC_FLAT: u32 = 0x0000_4000;

pub static SPEC: ClassSpec = ClassSpec {
    name: "ControlSocket",
    port_count: "0/0",
    processing: "a/a",
    group: "userlevel",
    signature: "ControlSocket(TYPE, PORT | FILENAME [, KEYWORDS])",
    summary: "Opens control sockets for other programs.",
    description: "Lets other programs call the router's read and write handlers over a stream \
socket. TYPE is `TCP` (listen on TCP port PORT) or `UNIX` (listen on the UNIX-domain socket \
FILENAME, made with mode 0600 whatever the umask, and removed at cleanup; an existing FILENAME \
is replaced only when it is a socket nobody listens on: any other file, a symbolic link or a \
socket in use is an error and is left alone). A TCP PORT may end in `+` (`41930+`): \
bind PORT or one of the next ten ports; PORT 0 takes any free port. The `port` handler \
tells the port bound. `clickos run -p PORT` and `-u FILE` add a ControlSocket \
named `click_driver@@ControlSocket` (then `...@1`, ...). A router with a ControlSocket keeps \
running while idle, until the global `stop` handler is written or the process gets SIGINT or \
SIGTERM. Only the userlevel driver (`clickos run`) can run it.\n\n\
The protocol is Click's, version 1.3. On connecting, the server sends \
`Click::ControlSocket/1.3`. Each command is one line (ended by CR, LF or CRLF) of \
space-separated words; replies are lines `CODE TEXT` ending in CRLF, with `CODE-TEXT` for all \
but the last line of a multi-line reply. Handler names are `ELEMENT.HANDLER` (compound \
elements by their full `a/b` path, or by 1-based element number), or a global handler name \
(`version`, `list`, `classes`, `config`, `flatconfig`, `requirements`, `handlers`, `stop`, `timewarp`; \
`hotconfig` under `clickos run -R`).\n\n\
Replacing the configuration. Under `clickos run -R` a write to the global `hotconfig` handler \
installs a new configuration, which can then do anything the router's user can (a Script reads \
and writes files). Over a ControlSocket that write is refused with 530, and a message saying \
how to allow it, unless the socket has `RECONFIGURE true`, which needs TYPE UNIX; even then \
only a client whose user (SO_PEERCRED) is the router's own user or root may write it. \
`clickos run -R -u FILE --allow-socket-reconfigure` gives the `-u` sockets `RECONFIGURE true`. \
A configuration that writes `hotconfig` itself (a Script) is not affected. Example: \
`clickos run -R -u /run/click.sock --allow-socket-reconfigure conf.click`, then \
`printf 'WRITE hotconfig Idle -> Discard;\\nQUIT\\n' | nc -U /run/click.sock`.\n\n\
- `READ handler [params...]` (also `GET`): replies `200 Read handler 'H' OK`, then \
`DATA N` and the N bytes of the value.\n\
- `READDATA handler N`: as READ, with the N bytes after the line as parameter.\n\
- `READUNTIL handler [terminator]`: as READ, with the following lines up to one equal to \
terminator (default: an empty line) as parameter; trailing spaces are ignored.\n\
- `WRITE handler [value...]` (also `SET`): `200 Write handler 'H' OK`.\n\
- `WRITEDATA handler N` (also `SETDATA`): writes the N bytes after the line.\n\
- `WRITEUNTIL handler [terminator]`: writes the following lines up to terminator.\n\
- `CHECKREAD handler`, `CHECKWRITE handler`: 200 if the handler exists and is readable \
(writable), else 511 (530 for CHECKWRITE under READONLY, and for `hotconfig` when refused).\n\
- `LLRPC element#hexnumber [N]`: calls the element's low-level RPC numbered hexnumber (Click's \
portable numbering, click/llrpc.h), passing the N bytes of data that follow the line; answers \
200 and `DATA` with the call's output (DATA 0 when it has none), 522 when the element refuses \
it (EINVAL for one it does not implement), 501 when the number is not a flat LLRPC (it cannot \
be called over a socket). Switch and Counter implement Click's flat LLRPCs (see them).\n\
- `QUIT` (also `CLOSE`): `200 Goodbye!`, then the server closes the connection.\n\
- `HELP`: lists the commands.\n\n\
Reply codes: 200 OK; 220 OK with warnings (never sent here: no handler reports warnings); 500 syntax error (also `Line too long`, \
`Not enough data`); 501 unimplemented command; 510 no such element; 511 no such handler; \
520 write handler error; 521 data too large (a payload, a handler value, or the buffers of all \
connections); 522 LLRPC error; 530 permission denied (write to a read-only handler, read of a \
write-only one, READONLY, `hotconfig` without RECONFIGURE); 590 read handler error.\n\n\
Limits (Click has none), so that no client can cost the router more than a bounded share: \
command lines up to 1 MiB (longer: 500 and the line is skipped); payloads up to 8 MiB (larger: \
521 and the payload is skipped; an unterminated READUNTIL / WRITEUNTIL payload past 8 MiB gets \
521 and the connection is closed); input buffered by all connections together up to 32 MiB \
(past it, the connection holding the most gets 521 and is closed); handler values in replies \
up to 8 MiB (larger: 521 instead of the value); a client that does not read its replies stops \
being served once 4 MiB are pending, or once replies pending for all connections together pass \
32 MiB (a value over 64 KiB that would take them past it gets 521); reply lines are cut after 4 KiB \
(`...`) and error replies after 64 KiB (`(N more lines)`); 128 clients at once: one more \
closes the longest-idle connection to make room.\n\n\
Keyword arguments:\n\n\
- `READONLY` (boolean): refuse write handlers (530). Default false.\n\
- `LOCALHOST` (boolean): a TCP socket listens on 127.0.0.1 only. Default **true** here \
(Click: false); `LOCALHOST false` listens on every address.\n\
- `VERBOSE` (boolean): report connections opened and closed on standard error. Default false.\n\
- `RETRIES` (integer): when the socket cannot be opened, retry once a second this many times \
before stopping the router. Default 0 (fail at initialization).\n\
- `RETRY_WARNINGS` (boolean): warn on every failed try, not only the last. Default true.\n\
- `RECONFIGURE` (boolean): let clients of the router's own user (or root) write `hotconfig` \
(see above). TYPE UNIX only. Default false.\n\
- `IDLE_TIMEOUT` (time): close a connection whose client has sent nothing and read nothing \
for this long (a handler that runs long does not count as idle time); 0: never. Default 300 \
seconds: a person typing at `nc` has time to think, and clients that vanished without closing \
(a TCP peer gone) do not linger; a new client never waits for it, since at the limit the \
longest-idle connection makes room.\n\
- `PROXY`: not supported (there is no kernel driver to proxy); an error.",
    ports: "none",
    handlers: &[
        HandlerDoc {
            name: "port",
            mode: HandlerMode::Read,
            text: "The TCP port listened on (TYPE TCP only).",
        },
        HandlerDoc {
            name: "filename",
            mode: HandlerMode::Read,
            text: "The UNIX socket's file name (TYPE UNIX only).",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(ControlSocket::default()),
};

#[derive(Clone, Debug, Default, PartialEq)]
enum Kind {
    #[default]
    Tcp,
    Unix,
}

enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

/// Splits a command line at ASCII whitespace; returns (start, end) pairs.
fn words(line: &[u8]) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    let mut i = 0;
    while i < line.len() {
        while i < line.len() && line[i].is_ascii_whitespace() {
            i += 1;
        }
        let s = i;
        while i < line.len() && !line[i].is_ascii_whitespace() {
            i += 1;
        }
        if s < i {
            v.push((s, i));
        }
    }
    v
}

/// Parses a decimal payload length as Click's IntArg into an `int`.
fn parse_len(w: &[u8]) -> Option<usize> {
    let s = std::str::from_utf8(w).ok()?;
    let v: i64 = click_lang::parse_i64(s).ok()?;
    if (0..=i32::MAX as i64).contains(&v) {
        Some(v as usize)
    } else {
        None
    }
}

/// A handler name resolved against the router.
enum Target {
    Global(String),
    Element { ename: String, hname: String },
}

impl Target {
    fn path(&self) -> String {
        match self {
            Target::Global(h) => h.clone(),
            Target::Element { ename, hname } => format!("{ename}.{hname}"),
        }
    }
}

/// `ControlSocket(TYPE, PORT | FILENAME [, KEYWORDS])`.
#[derive(Default)]
pub struct ControlSocket {
    kind: Kind,
    /// TCP: the port as configured (`41930`, `41930+`); UNIX: the path.
    where_: String,
    read_only: bool,
    verbose: bool,
    localhost: bool,
    retries: i32,
    retry_warnings: bool,
    /// RECONFIGURE: trusted peers may write `hotconfig`.
    reconfigure: bool,
    /// IDLE_TIMEOUT (None: never).
    idle_timeout: Option<Duration>,
    listener: Option<Listener>,
    /// The bound TCP port.
    port: u16,
    /// The UNIX socket file this element made, (st_dev, st_ino).
    bound_path: Option<(u64, u64)>,
    conns: Vec<Conn>,
    /// Output pending for the connections other than the one being
    /// served (for [`TOTAL_OUT`]).
    others_out: Cell<usize>,
    accept_paused: bool,
    name: String,
    me: usize,
    /// Scratch for [`ControlSocket::register`].
    fds: Vec<(RawFd, libc::c_short)>,
    /// A `hotconfig` write succeeded: the rest of the input waits for the
    /// new router's ControlSocket, which takes the connections over.
    swap_pending: Cell<bool>,
}

use crate::selector::selector;

impl ControlSocket {
    /// Opens the listening socket; on failure returns the syscall and error.
    fn open(&mut self) -> Result<(), (String, String)> {
        match self.kind {
            Kind::Tcp => {
                let (base, plus) = match self.where_.strip_suffix('+') {
                    Some(b) => (b, true),
                    None => (self.where_.as_str(), false),
                };
                let mut port: u16 = base.parse().unwrap_or(0);
                let ip = if self.localhost {
                    Ipv4Addr::LOCALHOST
                } else {
                    Ipv4Addr::UNSPECIFIED
                };
                let mut tries = 0;
                let l = loop {
                    match TcpListener::bind(SocketAddrV4::new(ip, port)) {
                        Ok(l) => break l,
                        Err(e) => {
                            if !plus || tries >= 10 || port >= 65534 {
                                return Err(("bind".into(), io_error_text(&e)));
                            }
                            tries += 1;
                            port += 1;
                        }
                    }
                };
                l.set_nonblocking(true)
                    .map_err(|e| ("fcntl".to_string(), io_error_text(&e)))?;
                self.port = l.local_addr().map(|a| a.port()).unwrap_or(port);
                self.listener = Some(Listener::Tcp(l));
            }
            Kind::Unix => {
                let b = unixsock::bind(&self.where_)?;
                if let Err(e) = b.listener.set_nonblocking(true) {
                    unixsock::remove_if_ours(&self.where_, b.id);
                    return Err(("fcntl".to_string(), io_error_text(&e)));
                }
                self.bound_path = Some(b.id);
                self.listener = Some(Listener::Unix(b.listener));
            }
        }
        Ok(())
    }

    /// One open attempt, counting down RETRIES; Err(message) when this was
    /// the last try.
    fn try_open(&mut self, cx: &Ctx) -> Result<bool, String> {
        self.retries -= 1;
        match self.open() {
            Ok(()) => Ok(true),
            Err((call, e)) if self.retries >= 0 => {
                if self.retry_warnings {
                    let left = self.retries + 1;
                    cx.error_line(&format!(
                        "{}: warning: {call}: {e} ({left} {} left)",
                        cx.declaration(),
                        if left == 1 { "try" } else { "tries" }
                    ));
                }
                Ok(false)
            }
            Err((call, e)) => Err(format!("{call}: {e}")),
        }
    }

    /// Tells the driver which descriptors to watch.
    fn register(&mut self, cx: &Ctx) {
        let Some(sel) = selector(cx) else {
            return;
        };
        self.fds.clear();
        if let Some(l) = &self.listener {
            // (at MAX_CONNS too: a new client closes the longest-idle one)
            if !self.accept_paused {
                let fd = match l {
                    Listener::Tcp(l) => l.as_raw_fd(),
                    Listener::Unix(l) => l.as_raw_fd(),
                };
                self.fds.push((fd, libc::POLLIN));
            }
        }
        for c in &self.conns {
            let mut ev = 0;
            if !c.in_closed && c.pending_out() <= OUT_HIGH && c.unprocessed() < IN_CAP {
                ev |= libc::POLLIN;
            }
            if c.pending_out() > 0 {
                ev |= libc::POLLOUT;
            }
            self.fds.push((c.fd, ev));
        }
        sel.set(self.me, &self.fds);
        // wake up when the longest-idle connection times out
        let wake = self.idle_timeout.and_then(|t| {
            let deadlines = self.conns.iter();
            deadlines.filter_map(|c| c.last_active.checked_add(t)).min()
        });
        sel.wake_at(self.me, wake);
    }

    /// Closes connections idle for IDLE_TIMEOUT.
    fn expire_idle(&mut self, cx: &Ctx) {
        let Some(t) = self.idle_timeout else {
            return;
        };
        let now = Instant::now();
        let verbose = self.verbose;
        self.conns.retain(|c| {
            let idle = now.saturating_duration_since(c.last_active) >= t;
            if idle && verbose {
                cx.error_line(&format!(
                    "{}: closed idle connection {}",
                    cx.declaration(),
                    c.fd
                ));
            }
            !idle
        });
    }

    /// At MAX_CONNS, closes the connection idle longest to make room for
    /// a new client: a client that holds a connection without using it
    /// cannot lock out one that would.
    fn make_room(&mut self, cx: &Ctx) {
        let Some((i, _)) = self
            .conns
            .iter()
            .enumerate()
            .min_by_key(|(_, c)| c.last_active)
        else {
            return;
        };
        let c = self.conns.remove(i);
        if self.verbose {
            cx.error_line(&format!(
                "{}: closed connection {} (idle longest, making room)",
                cx.declaration(),
                c.fd
            ));
        }
    }

    fn accept(&mut self, cx: &Ctx) {
        for _ in 0..ACCEPT_BUDGET {
            if self.accept_paused {
                return;
            }
            let Some(l) = &self.listener else {
                return;
            };
            let r = match l {
                Listener::Tcp(l) => l.accept().map(|(s, a)| {
                    let _ = s.set_nodelay(true);
                    (Stream::Tcp(s), Some(a))
                }),
                Listener::Unix(l) => l.accept().map(|(s, _)| (Stream::Unix(s), None)),
            };
            match r {
                Ok((s, addr)) => {
                    let nb = match &s {
                        Stream::Tcp(t) => t.set_nonblocking(true),
                        Stream::Unix(u) => u.set_nonblocking(true),
                    };
                    if nb.is_err() {
                        continue;
                    }
                    let peer = match &s {
                        Stream::Unix(u) => unixsock::peer_uid(u.as_raw_fd()),
                        Stream::Tcp(_) => None,
                    };
                    if self.conns.len() >= MAX_CONNS {
                        self.make_room(cx);
                    }
                    let c = Conn::new(s, peer);
                    if self.verbose {
                        match addr {
                            Some(a) => cx.error_line(&format!(
                                "{}: opened connection {} from {}.{}",
                                cx.declaration(),
                                c.fd,
                                a.ip(),
                                a.port()
                            )),
                            None => cx.error_line(&format!(
                                "{}: opened connection {}",
                                cx.declaration(),
                                c.fd
                            )),
                        }
                    }
                    self.conns.push(c);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    let raw = e.raw_os_error().unwrap_or(0);
                    if [libc::EMFILE, libc::ENFILE, libc::ENOBUFS, libc::ENOMEM].contains(&raw) {
                        // out of descriptors: stop watching the listener
                        // for a while rather than spin on it
                        cx.error_line(&format!(
                            "{}: accept: {}",
                            cx.declaration(),
                            io_error_text(&e)
                        ));
                        self.accept_paused = true;
                        cx.schedule_timer_after(TIMER_ACCEPT, 100_000_000);
                        return;
                    }
                    // ECONNABORTED and the like: that client is gone
                }
            }
        }
    }

    /// Runs the complete commands a connection has; true when commands
    /// remain that the budget did not cover.
    fn process(&self, c: &mut Conn, cx: &Ctx) -> bool {
        let mut n = 0;
        loop {
            if self.swap_pending.get() {
                return false;
            }
            if c.out_closed || c.pending_out() > OUT_HIGH {
                return false;
            }
            // replies unread while all connections' output is over budget:
            // wait for this client to read (one that has read everything
            // is still served)
            if c.pending_out() > 0 && self.others_out.get() + c.pending_out() > TOTAL_OUT {
                return false;
            }
            if n >= CMD_BUDGET {
                return true;
            }
            if let Some(p) = c.pending.take() {
                match self.run_pending(c, p, cx) {
                    Flow::Done => {
                        n += 1;
                        c.last_active = Instant::now();
                        continue;
                    }
                    Flow::Wait => return false,
                }
            }
            if !c.do_skip() {
                return false;
            }
            if c.unprocessed() == 0 {
                return false;
            }
            let start = c.inpos;
            let found = c.inbuf[c.scan..]
                .iter()
                .position(|&b| b == b'\r' || b == b'\n')
                .map(|p| p + c.scan);
            let (line_end, next) = match found {
                Some(e) => {
                    let crlf = c.inbuf[e] == b'\r' && c.inbuf.get(e + 1) == Some(&b'\n');
                    (e, e + if crlf { 2 } else { 1 })
                }
                None if c.in_closed => (c.inbuf.len(), c.inbuf.len()),
                None if c.unprocessed() > MAX_LINE => {
                    c.message(CSERR_SYNTAX, b"Line too long", false);
                    c.inpos = c.inbuf.len();
                    c.scan = c.inpos;
                    c.skip = Skip::Line;
                    n += 1;
                    continue;
                }
                None => {
                    c.scan = c.inbuf.len();
                    return false;
                }
            };
            if line_end - start > MAX_LINE {
                c.message(CSERR_SYNTAX, b"Line too long", false);
                c.inpos = next;
                c.scan = next;
                n += 1;
                continue;
            }
            let line = c.inbuf[start..line_end].to_vec();
            c.inpos = next;
            c.scan = next;
            match self.command(c, &line, cx) {
                Flow::Done => {
                    n += 1;
                    c.last_active = Instant::now();
                }
                // its payload has not all arrived: c.pending resumes it
                Flow::Wait => return false,
            }
        }
    }

    /// Runs a command with a payload now, or once its payload has arrived.
    fn with_payload(
        &self,
        c: &mut Conn,
        cmd: Vec<u8>,
        name: &[u8],
        payload: Payload,
        cx: &Ctx,
    ) -> Flow {
        let p = Pending {
            cmd,
            name: name.to_vec(),
            payload,
        };
        self.run_pending(c, p, cx)
    }

    /// Runs a command whose payload was awaited, or puts it back to wait
    /// for more input.
    fn run_pending(&self, c: &mut Conn, p: Pending, cx: &Ctx) -> Flow {
        let data = match c.payload(&p.payload) {
            Ok(d) => d,
            Err(Flow::Wait) => {
                c.pending = Some(p);
                return Flow::Wait;
            }
            Err(Flow::Done) => return Flow::Done,
        };
        match p.cmd.as_slice() {
            b"LLRPC" => self.llrpc_command(c, &p.name, &data, cx),
            cmd if cmd[0] == b'R' => self.read_command(c, &p.name, &data, cx),
            _ => self.write_command(c, &p.name, &data, cx),
        }
        Flow::Done
    }

    /// Click's `parse_command`.
    fn command(&self, c: &mut Conn, line: &[u8], cx: &Ctx) -> Flow {
        let w = words(line);
        if w.is_empty() {
            return Flow::Done;
        }
        let word = |i: usize| &line[w[i].0..w[i].1];
        let cmd = word(0).to_ascii_uppercase();
        // everything from the third word to the end of the last one
        let rest = || -> Vec<u8> {
            if w.len() > 2 {
                line[w[2].0..w[w.len() - 1].1].to_vec()
            } else {
                Vec::new()
            }
        };
        match cmd.as_slice() {
            b"READ" | b"GET" | b"WRITE" | b"SET" => {
                if w.len() < 2 {
                    c.message(CSERR_SYNTAX, b"Wrong number of arguments", false);
                    return Flow::Done;
                }
                let data = rest();
                if cmd[0] == b'R' || cmd[0] == b'G' {
                    self.read_command(c, word(1), &data, cx);
                } else {
                    self.write_command(c, word(1), &data, cx);
                }
            }
            b"READDATA" | b"WRITEDATA" | b"SETDATA" => {
                if w.len() != 3 {
                    c.message(CSERR_SYNTAX, b"Wrong number of arguments", false);
                    return Flow::Done;
                }
                let Some(n) = parse_len(word(2)) else {
                    c.message(
                        CSERR_SYNTAX,
                        &cat(&[b"Syntax error in '", &cmd, b"'"]),
                        false,
                    );
                    return Flow::Done;
                };
                let read = cmd[0] == b'R';
                if n > MAX_DATA {
                    let kind: &[u8] = if read { b"read" } else { b"write" };
                    c.message(
                        CSERR_DATA_TOO_BIG,
                        &cat(&[b"Data too large for ", kind, b" handler '", word(1), b"'"]),
                        false,
                    );
                    c.skip = Skip::Bytes(n as u64);
                    return Flow::Done;
                }
                return self.with_payload(c, cmd.clone(), word(1), Payload::Bytes(n), cx);
            }
            b"READUNTIL" | b"WRITEUNTIL" => {
                if w.len() < 2 {
                    c.message(CSERR_SYNTAX, b"Wrong number of arguments", false);
                    return Flow::Done;
                }
                let until = Payload::Until(rest());
                return self.with_payload(c, cmd.clone(), word(1), until, cx);
            }
            b"CHECKREAD" | b"CHECKWRITE" => {
                if w.len() != 2 {
                    c.message(CSERR_SYNTAX, b"Wrong number of arguments", false);
                    return Flow::Done;
                }
                self.check_command(c, word(1), cmd[5] == b'W', cx);
            }
            b"LLRPC" => {
                if w.len() != 2 && w.len() != 3 {
                    c.message(CSERR_SYNTAX, b"Wrong number of arguments", false);
                    return Flow::Done;
                }
                let mut n = 0;
                if w.len() == 3 {
                    match parse_len(word(2)) {
                        Some(v) => n = v,
                        None => {
                            c.message(CSERR_SYNTAX, b"Syntax error in 'llrpc'", false);
                            return Flow::Done;
                        }
                    }
                }
                if n > MAX_DATA {
                    c.message(
                        CSERR_DATA_TOO_BIG,
                        &cat(&[b"Data too large for LLRPC '", word(1), b"'"]),
                        false,
                    );
                    c.skip = Skip::Bytes(n as u64);
                    return Flow::Done;
                }
                return self.with_payload(c, cmd.clone(), word(1), Payload::Bytes(n), cx);
            }
            b"CLOSE" | b"QUIT" => {
                if w.len() != 1 {
                    c.message(CSERR_SYNTAX, b"Bad command syntax", false);
                }
                c.message(CSERR_OK, b"Goodbye!", false);
                c.in_closed = true;
                c.inpos = c.inbuf.len();
                c.scan = c.inpos;
                c.skip = Skip::No;
            }
            b"HELP" => {
                for (i, l) in HELP.iter().enumerate() {
                    c.message(CSERR_OK, l.as_bytes(), i + 1 < HELP.len());
                }
            }
            _ => {
                c.message(
                    CSERR_UNIMPLEMENTED,
                    &cat(&[b"Command '", &cmd, b"' unimplemented"]),
                    false,
                );
            }
        }
        Flow::Done
    }

    /// Click's `parse_handler`: `[ELEMENT.]HANDLER`, where ELEMENT may be
    /// a 1-based element number, and `.H` or `0.H` name global handlers.
    /// On failure the error reply has been sent.
    fn resolve(&self, c: &mut Conn, full: &[u8], cx: &Ctx) -> Option<Target> {
        let canon = if full.first() == Some(&b'.') {
            &full[1..]
        } else if full.starts_with(b"0.") {
            &full[2..]
        } else {
            full
        };
        let Ok(canon) = std::str::from_utf8(canon) else {
            // no element or handler name has such bytes
            match canon.iter().position(|&b| b == b'.') {
                Some(d) => c.message(
                    CSERR_NO_SUCH_ELEMENT,
                    &cat(&[b"No element named '", &canon[..d], b"'"]),
                    false,
                ),
                None => c.message(
                    CSERR_NO_SUCH_HANDLER,
                    &cat(&[b"No handler named '", full, b"'"]),
                    false,
                ),
            }
            return None;
        };
        let Some(dot) = canon.find('.') else {
            return Some(Target::Global(canon.to_string()));
        };
        let (ename, hname) = (&canon[..dot], &canon[dot + 1..]);
        let core = cx.core();
        let exists = |n: &str| !n.is_empty() && core.read_handler(&format!("{n}.name")).is_ok();
        let ename = if exists(ename) {
            ename.to_string()
        } else {
            let by_number = click_lang::parse_i64(ename)
                .ok()
                .filter(|&k| k > 0)
                .and_then(|k| {
                    let list = core.read_handler("list").ok()?;
                    list.lines().nth(k as usize).map(|s| s.to_string())
                });
            match by_number {
                Some(n) => n,
                None => {
                    c.message(
                        CSERR_NO_SUCH_ELEMENT,
                        &cat(&[b"No element named '", ename.as_bytes(), b"'"]),
                        false,
                    );
                    return None;
                }
            }
        };
        Some(Target::Element {
            ename,
            hname: hname.to_string(),
        })
    }

    /// Whether this target is one of this element's own handlers, which
    /// the router cannot call while this element runs.
    fn own<'t>(&self, t: &'t Target) -> Option<&'t str> {
        match t {
            Target::Element { ename, hname } if *ename == self.name => match hname.as_str() {
                "name" | "class" | "config" | "ports" | "handlers" => None,
                h => Some(h),
            },
            _ => None,
        }
    }

    fn own_read(&self, h: &str) -> Result<String, HandlerError> {
        match (h, &self.kind) {
            ("port", Kind::Tcp) => Ok(self.port.to_string()),
            ("filename", Kind::Unix) => Ok(self.where_.clone()),
            _ => Err(HandlerError::NoSuchHandler(h.into())),
        }
    }

    /// (readable, writable) as the `handlers` listing says; None when the
    /// handler is not listed.
    fn handler_flags(&self, t: &Target, cx: &Ctx) -> Option<(bool, bool)> {
        if let Some(h) = self.own(t) {
            return self.own_read(h).ok().map(|_| (true, false));
        }
        let (listing, hname) = match t {
            Target::Global(h) => (cx.core().read_handler("handlers"), h.as_str()),
            Target::Element { ename, hname } => (
                cx.core().read_handler(&format!("{ename}.handlers")),
                hname.as_str(),
            ),
        };
        let listing = listing.ok()?;
        listing.lines().find_map(|l| {
            let (n, f) = l.split_once('\t')?;
            (n == hname).then(|| (f.contains('r'), f.contains('w')))
        })
    }

    fn read_command(&self, c: &mut Conn, full: &[u8], param: &[u8], cx: &Ctx) {
        let Some(t) = self.resolve(c, full, cx) else {
            return;
        };
        let core = cx.core();
        let path = t.path();
        let r = if let Some(h) = self.own(&t) {
            self.own_read(h)
        } else if param.is_empty() {
            core.read_handler(&path)
        } else {
            let p = String::from_utf8_lossy(param);
            match core.read_handler_param(&path, &p) {
                // a handler without parameters: Click passes the
                // parameter along and the handler ignores it
                Err(HandlerError::NoSuchHandler(_)) => core.read_handler(&path),
                r => r,
            }
        };
        match r {
            Ok(v) if v.len() > MAX_REPLY => c.message(
                CSERR_DATA_TOO_BIG,
                &cat(&[
                    b"Read handler '",
                    full,
                    format!(
                        "' value too large ({} bytes; a reply carries at most {} MiB)",
                        v.len(),
                        MAX_REPLY >> 20
                    )
                    .as_bytes(),
                ]),
                false,
            ),
            Ok(v)
                if v.len() > SMALL_REPLY
                    && self.others_out.get() + c.pending_out() + v.len() > TOTAL_OUT =>
            {
                c.message(
                    CSERR_DATA_TOO_BIG,
                    &cat(&[
                        b"Read handler '",
                        full,
                        format!(
                            "' value too large for now ({} bytes; replies waiting for all \
                         clients are near their {} MiB limit: try again)",
                            v.len(),
                            TOTAL_OUT >> 20
                        )
                        .as_bytes(),
                    ]),
                    false,
                );
            }
            Ok(v) => {
                c.message(CSERR_OK, &cat(&[b"Read handler '", full, b"' OK"]), false);
                c.data(v.as_bytes());
            }
            Err(e) => self.handler_error(c, full, e, false),
        }
    }

    /// Why this client may not write `t`, when `t` is `hotconfig` (a new
    /// configuration can do anything the router's user can): the socket
    /// must have RECONFIGURE and the peer must be the router's user or
    /// root.
    fn reconfigure_refusal(&self, c: &Conn, t: &Target) -> Option<String> {
        if !matches!(t, Target::Global(h) if h == "hotconfig") {
            return None;
        }
        if !self.reconfigure {
            return Some(
                "replacing the configuration over a control socket is off; allow it on a \
                 UNIX socket with ControlSocket(UNIX, FILE, RECONFIGURE true), or \
                 'clickos run -R -u FILE --allow-socket-reconfigure'"
                    .into(),
            );
        }
        match c.peer_uid {
            Some(uid) if unixsock::trusted(uid) => None,
            Some(uid) => Some(format!(
                "the client's uid {uid} is neither the router's user nor root"
            )),
            None => Some("the client's user is unknown".into()),
        }
    }

    /// Refuses `hotconfig` when [`Self::reconfigure_refusal`] says so;
    /// true when it did (an absent handler is left to the caller's 511).
    fn refuse_reconfigure(&self, c: &mut Conn, full: &[u8], t: &Target, cx: &Ctx) -> bool {
        let Some(why) = self.reconfigure_refusal(c, t) else {
            return false;
        };
        if self.handler_flags(t, cx).is_none() {
            return false;
        }
        c.message(
            CSERR_PERMISSION,
            &cat(&[b"Permission denied for '", full, b"': ", why.as_bytes()]),
            false,
        );
        true
    }

    fn write_command(&self, c: &mut Conn, full: &[u8], data: &[u8], cx: &Ctx) {
        let Some(t) = self.resolve(c, full, cx) else {
            return;
        };
        if !self.read_only && self.refuse_reconfigure(c, full, &t, cx) {
            return;
        }
        if self.read_only || self.own(&t).is_some() {
            // Click checks that the handler exists and is writable first
            match self.handler_flags(&t, cx) {
                None => c.message(
                    CSERR_NO_SUCH_HANDLER,
                    &cat(&[b"No handler named '", full, b"'"]),
                    false,
                ),
                Some((_, false)) => c.message(
                    CSERR_PERMISSION,
                    &cat(&[b"Handler '", full, b"' read-only"]),
                    false,
                ),
                Some((_, true)) => c.message(
                    CSERR_PERMISSION,
                    &cat(&[b"Permission denied for '", full, b"'"]),
                    false,
                ),
            }
            return;
        }
        let value = String::from_utf8_lossy(data);
        match cx.core().write_handler(&t.path(), &value) {
            Ok(()) => {
                if t.path() == "hotconfig" {
                    self.swap_pending.set(true);
                }
                c.message(CSERR_OK, &cat(&[b"Write handler '", full, b"' OK"]), false)
            }
            Err(e) => self.handler_error(c, full, e, true),
        }
    }

    /// Replies for a failed handler call, in Click's words.
    fn handler_error(&self, c: &mut Conn, full: &[u8], e: HandlerError, write: bool) {
        match e {
            HandlerError::NoSuchElement(_) | HandlerError::NoSuchHandler(_) => c.message(
                CSERR_NO_SUCH_HANDLER,
                &cat(&[b"No handler named '", full, b"'"]),
                false,
            ),
            HandlerError::PermissionDenied(_) => {
                let what: &[u8] = if write {
                    b"' read-only"
                } else {
                    b"' write-only"
                };
                c.message(CSERR_PERMISSION, &cat(&[b"Handler '", full, what]), false)
            }
            HandlerError::Failed(m) => {
                let lines: Vec<&str> = m.lines().collect();
                if write {
                    c.messages(
                        CSERR_HANDLER_ERROR,
                        &cat(&[b"Write handler '", full, b"' error"]),
                        &lines,
                    )
                } else {
                    c.messages(
                        CSERR_UNSPECIFIED,
                        &cat(&[b"Read handler '", full, b"' error"]),
                        &lines,
                    )
                }
            }
            HandlerError::Busy(_) => {
                let (code, what): (u16, &[u8]) = if write {
                    (CSERR_HANDLER_ERROR, b"Write handler '")
                } else {
                    (CSERR_UNSPECIFIED, b"Read handler '")
                };
                c.messages(code, &cat(&[what, full, b"' error"]), &["handler is busy"])
            }
        }
    }

    fn check_command(&self, c: &mut Conn, full: &[u8], write: bool, cx: &Ctx) {
        let Some(t) = self.resolve(c, full, cx) else {
            return;
        };
        let Some((r, w)) = self.handler_flags(&t, cx) else {
            c.message(
                CSERR_NO_SUCH_HANDLER,
                &cat(&[b"No handler named '", full, b"'"]),
                false,
            );
            return;
        };
        let ok = if write { w } else { r };
        if write && self.read_only && ok {
            c.message(
                CSERR_PERMISSION,
                &cat(&[b"Permission denied for '", full, b"'"]),
                false,
            );
        } else if write && ok && self.refuse_reconfigure(c, full, &t, cx) {
            // refused, and said why
        } else if ok {
            let what: &[u8] = if write {
                b"Write handler '"
            } else {
                b"Read handler '"
            };
            c.message(CSERR_OK, &cat(&[what, full, b"' OK"]), false);
        } else {
            let what: &[u8] = if write {
                b"' not writable"
            } else {
                b"' not readable"
            };
            c.message(
                CSERR_NO_SUCH_HANDLER,
                &cat(&[b"Handler '", full, what]),
                false,
            );
        }
    }

    /// Click's `llrpc_command`: a flat LLRPC on an element
    /// ([`click::element::Element::llrpc`]), its output returned as DATA.
    fn llrpc_command(&self, c: &mut Conn, name: &[u8], data: &[u8], cx: &Ctx) {
        let (elem, num) = match name.iter().position(|&b| b == b'#') {
            Some(i) => (&name[..i], &name[i + 1..]),
            None => (name, &b""[..]),
        };
        let numtext = std::str::from_utf8(num).unwrap_or("");
        let hex = numtext
            .strip_prefix("0x")
            .or_else(|| numtext.strip_prefix("0X"))
            .unwrap_or(numtext);
        let Ok(cmd) = u32::from_str_radix(hex, 16).map_err(|_| ()).and_then(|v| {
            if hex.is_empty() || hex.starts_with('+') {
                Err(())
            } else {
                Ok(v)
            }
        }) else {
            c.message(
                CSERR_SYNTAX,
                &cat(&[b"Syntax error in LLRPC name '", name, b"'"]),
                false,
            );
            return;
        };
        let Some(Target::Element { ename, .. }) = self.resolve(c, &cat(&[elem, b".name"]), cx)
        else {
            return;
        };
        let size = ((cmd >> 16) & 0xFFF) as usize;
        if size == 0 || cmd & (LLRPC_NET_IN | LLRPC_NET_OUT) == 0 || cmd & LLRPC_FLAT == 0 {
            c.message(
                CSERR_UNIMPLEMENTED,
                &cat(&[b"Cannot call LLRPC '", name, b"' remotely"]),
                false,
            );
            return;
        }
        if self.read_only {
            c.message(
                CSERR_PERMISSION,
                &cat(&[b"Permission denied for '", name, b"'"]),
                false,
            );
            return;
        }
        if cmd & LLRPC_NET_IN != 0 && data.len() != size {
            c.message(
                CSERR_LLRPC_ERROR,
                &cat(&[
                    b"LLRPC '",
                    name,
                    b"' requires ",
                    size.to_string().as_bytes(),
                    b" bytes input data",
                ]),
                false,
            );
            return;
        }
        let mut buf = if cmd & LLRPC_NET_IN != 0 {
            data.to_vec()
        } else {
            vec![0u8; size]
        };
        // the ControlSocket itself (running now) implements none
        let r = cx
            .find_element(&ename)
            .and_then(|i| {
                let lx = LlrpcCtx {
                    noutputs: cx.element_noutputs(i),
                };
                cx.with_element(i, |e| e.llrpc(cmd, &mut buf, &lx))
            })
            .unwrap_or(Err(click::common::llrpc::EINVAL));
        match r {
            Ok(()) => {
                c.message(CSERR_OK, &cat(&[b"LLRPC '", name, b"' OK"]), false);
                if cmd & LLRPC_NET_OUT == 0 {
                    buf.clear();
                }
                c.data(&buf);
            }
            Err(errno) => c.message(
                CSERR_LLRPC_ERROR,
                &cat(&[
                    b"LLRPC '",
                    name,
                    b"' error: ",
                    io_error_text(&std::io::Error::from_raw_os_error(errno)).as_bytes(),
                ]),
                false,
            ),
        }
    }

    /// Services every connection; true when some have commands left.
    fn service(&mut self, cx: &Ctx) -> bool {
        self.expire_idle(cx);
        self.accept(cx);
        let mut more = false;
        let mut conns = std::mem::take(&mut self.conns);
        // what the other connections hold, in and out
        let mut total_in: usize = conns.iter().map(|c| c.inbuf.len()).sum();
        let mut total_out: usize = conns.iter().map(|c| c.pending_out()).sum();
        for i in 0..conns.len() {
            total_in -= conns[i].inbuf.len();
            total_out -= conns[i].pending_out();
            let c = &mut conns[i];
            if !c.in_closed && c.pending_out() <= OUT_HIGH {
                c.fill();
            }
            while total_in + conns[i].inbuf.len() > TOTAL_IN {
                let (j, freed, said) = Self::hang_up_largest(&mut conns, cx, self.verbose);
                if j != i {
                    total_in -= freed;
                    total_out += said;
                }
                if freed == 0 {
                    break;
                }
            }
            let c = &mut conns[i];
            self.others_out.set(total_out);
            more |= self.process(c, cx);
            c.flush();
            c.compact();
            total_in += c.inbuf.len();
            total_out += c.pending_out();
        }
        conns.retain(|c| {
            let done = c.done();
            if done {
                if c.out_closed {
                    // nothing more can be sent
                } else {
                    c.s.shutdown_write();
                }
                if self.verbose {
                    cx.error_line(&format!("{}: closed connection {}", cx.declaration(), c.fd));
                }
            }
            !done
        });
        self.conns = conns;
        more
    }
}

impl ControlSocket {
    /// All connections together hold more input than [`TOTAL_IN`]: the
    /// one holding the most gets 521 and is closed (its client cannot be
    /// resynchronised mid-payload). Returns its index, the input bytes
    /// freed and the output bytes added.
    fn hang_up_largest(conns: &mut [Conn], cx: &Ctx, verbose: bool) -> (usize, usize, usize) {
        let j = (0..conns.len())
            .max_by_key(|&k| conns[k].inbuf.len())
            .unwrap_or(0);
        let c = &mut conns[j];
        let freed = c.inbuf.len();
        let out_before = c.pending_out();
        c.message(
            CSERR_DATA_TOO_BIG,
            format!(
                "Data too large (input waiting from all clients passed {} MiB; \
                 this connection held the most, {} bytes)",
                TOTAL_IN >> 20,
                c.unprocessed()
            )
            .as_bytes(),
            false,
        );
        if verbose {
            cx.error_line(&format!(
                "{}: connection {}: input over budget, closing",
                cx.declaration(),
                c.fd
            ));
        }
        c.hang_up();
        (j, freed, c.pending_out() - out_before)
    }
}

const HELP: &[&str] = &[
    "Commands supported:",
    "READ handler [arg...]   call read handler, return DATA",
    "READDATA handler len    call read handler with len data bytes, return DATA",
    "READUNTIL handler term  call read handler, take data until term, return DATA",
    "WRITE handler [arg...]  call write handler",
    "WRITEDATA handler len   call write handler, pass len data bytes",
    "WRITEUNTIL handler term call write handler, take data until term",
    "CHECKREAD handler       check if read handler is valid",
    "CHECKWRITE handler      check if write handler is valid",
    "LLRPC elt#number [len]  call LLRPC, pass len data bytes, return DATA",
    "QUIT                    close connection",
];

impl Element for ControlSocket {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let ty: String = a.read_mp("TYPE")?;
        let read_only = a.read::<bool>("READONLY")?.unwrap_or(false);
        let proxy = a.read::<String>("PROXY")?;
        let verbose = a.read::<bool>("VERBOSE")?.unwrap_or(false);
        let retries = a.read::<i32>("RETRIES")?.unwrap_or(0);
        let retry_warnings = a.read::<bool>("RETRY_WARNINGS")?.unwrap_or(true);
        let localhost = a.read::<bool>("LOCALHOST")?.unwrap_or(true);
        let reconfigure = a.read::<bool>("RECONFIGURE")?.unwrap_or(false);
        let idle_timeout = match a.read::<Seconds>("IDLE_TIMEOUT")? {
            None => Some(Duration::from_secs(DEFAULT_IDLE_TIMEOUT)),
            Some(Seconds(ns)) if ns < 0 => return Err("IDLE_TIMEOUT must be 0 or more".into()),
            Some(Seconds(0)) => None,
            Some(Seconds(ns)) => Some(Duration::from_nanos(ns as u64)),
        };
        let (kind, where_) = match ty.to_ascii_uppercase().as_str() {
            "TCP" => {
                let p: String = a.read_mp("PORT")?;
                let base = p.strip_suffix('+');
                let ok = match base {
                    Some(b) => b.parse::<u16>().is_ok_and(|v| v > 0),
                    None => p.parse::<u16>().is_ok(),
                };
                if !ok {
                    return Err("PORT requires TCP port".into());
                }
                (Kind::Tcp, p)
            }
            "UNIX" => {
                let f: String = a.read_mp("FILENAME")?;
                if f.is_empty() {
                    return Err("FILENAME: expected filename".into());
                }
                if f.len() >= 108 {
                    return Err("filename too long".into());
                }
                (Kind::Unix, f)
            }
            "SOCKET" => return Err("socket type 'SOCKET' is not supported".into()),
            _ => return Err(format!("unknown socket type '{ty}'")),
        };
        a.complete()?;
        if proxy.is_some() {
            return Err("PROXY is not supported (no kernel driver to proxy)".into());
        }
        if reconfigure && kind != Kind::Unix {
            return Err(
                "RECONFIGURE needs TYPE UNIX (a TCP client's user cannot be checked)".into(),
            );
        }
        self.kind = kind;
        self.where_ = where_;
        self.read_only = read_only;
        self.verbose = verbose;
        self.retries = retries;
        self.retry_warnings = retry_warnings;
        self.localhost = localhost;
        self.reconfigure = reconfigure;
        self.idle_timeout = idle_timeout;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let Some(sel) = selector(cx) else {
            return Err("ControlSocket needs the userlevel driver ('clickos run')".into());
        };
        self.name = cx.name().to_string();
        self.me = cx.index();
        // Hot swap: the running ControlSocket of this name keeps its port
        // (and its connections) until this one takes them in take_state.
        if cx.hotswap_class() != Some("ControlSocket") && !self.try_open(cx)? {
            cx.schedule_timer_after(TIMER_RETRY, 1_000_000_000);
        }
        sel.hold(self.me, true);
        self.register(cx);
        Ok(())
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        let more = self.service(cx);
        self.register(cx);
        more
    }

    fn run_timer(&mut self, id: u32, cx: &Ctx) {
        match id {
            TIMER_RETRY if self.listener.is_none() => match self.try_open(cx) {
                Ok(true) => {}
                Ok(false) => cx.schedule_timer_after(TIMER_RETRY, 1_000_000_000),
                Err(e) => {
                    cx.error_line(&format!("{}: {e}", cx.declaration()));
                    if let Some(sel) = selector(cx) {
                        sel.hold(self.me, false);
                    }
                    cx.please_stop_driver();
                }
            },
            TIMER_ACCEPT => {
                self.accept_paused = false;
                cx.schedule_task();
            }
            _ => {}
        }
        self.register(cx);
    }

    /// Hot swap: the listening socket and the open connections pass to the
    /// new router's ControlSocket of the same name, so clients (the one
    /// that wrote `hotconfig` among them) carry on; one of another type or
    /// port opens its own.
    fn take_state(&mut self, old: &mut dyn Element, cx: &Ctx) {
        let same = old
            .as_any_mut()
            .and_then(|a| a.downcast_mut::<ControlSocket>())
            .filter(|o| o.kind == self.kind && o.where_ == self.where_ && o.listener.is_some());
        match same {
            Some(o) => {
                self.listener = o.listener.take();
                self.port = o.port;
                self.bound_path = core::mem::take(&mut o.bound_path);
                self.conns = core::mem::take(&mut o.conns);
                self.accept_paused = o.accept_paused;
                cx.schedule_task();
            }
            None if self.listener.is_none() => match self.try_open(cx) {
                Ok(true) => {}
                Ok(false) => cx.schedule_timer_after(TIMER_RETRY, 1_000_000_000),
                Err(e) => cx.error_line(&format!("{}: {e}", cx.declaration())),
            },
            None => {}
        }
        self.register(cx);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match self.own_read(name) {
            Err(_) => None,
            Ok(v) => Some(Ok(v)),
        }
    }

    fn cleanup(&mut self, cx: &Ctx) {
        for c in self.conns.iter_mut() {
            // one last try to send what is pending
            c.flush();
        }
        self.conns.clear();
        self.listener = None;
        if let Some(id) = self.bound_path.take() {
            // only the socket this element made, not whatever took its name
            unixsock::remove_if_ours(&self.where_, id);
        }
        if let Some(sel) = selector(cx) {
            sel.set(self.me, &[]);
            sel.wake_at(self.me, None);
            sel.hold(self.me, false);
        }
    }

    element_any!();
}
