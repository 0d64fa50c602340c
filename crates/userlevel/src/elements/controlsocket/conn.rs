//! One ControlSocket connection: its stream, its input and output buffers,
//! and the limits that keep a client from costing the router more than a
//! bounded share of memory and time.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::Instant;

/// The greeting's protocol version.
pub(super) const PROTOCOL_VERSION: &str = "1.3";

// Click's CSERR_* reply codes (controlsocket.hh).
pub(super) const CSERR_OK: u16 = 200;
#[allow(dead_code)] // no handler here reports warnings
pub(super) const CSERR_OK_HANDLER_WARNING: u16 = 220;
pub(super) const CSERR_SYNTAX: u16 = 500;
pub(super) const CSERR_UNIMPLEMENTED: u16 = 501;
pub(super) const CSERR_NO_SUCH_ELEMENT: u16 = 510;
pub(super) const CSERR_NO_SUCH_HANDLER: u16 = 511;
pub(super) const CSERR_HANDLER_ERROR: u16 = 520;
pub(super) const CSERR_DATA_TOO_BIG: u16 = 521;
pub(super) const CSERR_LLRPC_ERROR: u16 = 522;
pub(super) const CSERR_PERMISSION: u16 = 530;
pub(super) const CSERR_UNSPECIFIED: u16 = 590;

/// Longest command line; longer ones get `500 Line too long` and are
/// skipped up to their end.
pub(super) const MAX_LINE: usize = 1 << 20;
/// Largest READDATA / WRITEDATA / WRITEUNTIL / LLRPC payload.
pub(super) const MAX_DATA: usize = 8 << 20;
/// Unprocessed input a connection may buffer.
pub(super) const IN_CAP: usize = MAX_LINE + MAX_DATA + (64 << 10);
/// Input all connections together may buffer. Past it, the connection
/// that holds the most is refused (521) and closed: 32 MiB lets four
/// largest payloads arrive at once, and keeps 128 clients that each send
/// an unterminated payload from taking 128 × 9 MiB.
pub(super) const TOTAL_IN: usize = 32 << 20;
/// Unsent output above which a connection's commands wait.
pub(super) const OUT_HIGH: usize = 4 << 20;
/// Largest handler value a reply may carry; a larger one is answered
/// with 521 instead of being copied into the connection's output.
pub(super) const MAX_REPLY: usize = 8 << 20;
/// Output all connections together may buffer: while it is used up, a
/// connection with replies unread waits, and a reply larger than
/// [`SMALL_REPLY`] that would pass it is answered with 521 (clients that
/// do not read cannot pile up 128 × 12 MiB of replies).
pub(super) const TOTAL_OUT: usize = 32 << 20;
/// A handler value this small is sent even when [`TOTAL_OUT`] is used
/// up, so that clients that do not read cannot starve the others of
/// small replies (each connection adds at most one before it waits).
pub(super) const SMALL_REPLY: usize = 64 << 10;
/// Longest text of one reply line (a handler name echoed back, one line
/// of an error), and longest error reply; the rest is cut.
const MAX_MESSAGE: usize = 4 << 10;
const MAX_MESSAGES: usize = 64 << 10;
/// Bytes read from one connection per task run.
const READ_BUDGET: usize = 256 << 10;

pub(super) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(b),
            Stream::Unix(s) => s.read(b),
        }
    }
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(b),
            Stream::Unix(s) => s.write(b),
        }
    }
    pub(super) fn fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        }
    }
    pub(super) fn shutdown_write(&self) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(Shutdown::Write),
            Stream::Unix(s) => s.shutdown(Shutdown::Write),
        };
    }
}

/// Input to throw away before the next command.
pub(super) enum Skip {
    No,
    /// The rest of an over-long line.
    Line,
    /// A refused payload.
    Bytes(u64),
}

/// What running one command did.
pub(super) enum Flow {
    Done,
    /// The command needs input that has not arrived yet.
    Wait,
}

/// The payload a command waits for.
pub(super) enum Payload {
    /// READDATA / WRITEDATA / LLRPC: this many bytes.
    Bytes(usize),
    /// READUNTIL / WRITEUNTIL: the lines up to one equal to this.
    Until(Vec<u8>),
}

/// A command whose line has been read and whose payload has not all
/// arrived: it resumes when more input comes, without reading its line
/// again.
pub(super) struct Pending {
    /// The command word, upper case.
    pub(super) cmd: Vec<u8>,
    /// The handler (or LLRPC) name.
    pub(super) name: Vec<u8>,
    pub(super) payload: Payload,
}

pub(super) struct Conn {
    pub(super) s: Stream,
    pub(super) fd: RawFd,
    pub(super) inbuf: Vec<u8>,
    /// Start of unprocessed input.
    pub(super) inpos: usize,
    /// Where the search for a line end resumes.
    pub(super) scan: usize,
    /// A command waiting for its payload (which starts at `inpos`).
    pub(super) pending: Option<Pending>,
    /// Where, after `inpos`, the search for an UNTIL terminator resumes
    /// (the start of the first line not yet compared).
    until_off: usize,
    pub(super) out: Vec<u8>,
    pub(super) outpos: usize,
    pub(super) in_closed: bool,
    pub(super) out_closed: bool,
    pub(super) skip: Skip,
    /// The peer's user id (UNIX sockets, from SO_PEERCRED at accept).
    pub(super) peer_uid: Option<u32>,
    /// The last time the client sent or took bytes, or a command finished.
    pub(super) last_active: Instant,
}

impl Conn {
    pub(super) fn new(s: Stream, peer_uid: Option<u32>) -> Conn {
        let fd = s.fd();
        let mut c = Conn {
            s,
            fd,
            inbuf: Vec::new(),
            inpos: 0,
            scan: 0,
            pending: None,
            until_off: 0,
            out: Vec::new(),
            outpos: 0,
            in_closed: false,
            out_closed: false,
            skip: Skip::No,
            peer_uid,
            last_active: Instant::now(),
        };
        c.out
            .extend_from_slice(format!("Click::ControlSocket/{PROTOCOL_VERSION}\r\n").as_bytes());
        c
    }

    pub(super) fn pending_out(&self) -> usize {
        self.out.len() - self.outpos
    }

    pub(super) fn unprocessed(&self) -> usize {
        self.inbuf.len() - self.inpos
    }

    /// One reply line; the text is made printable as Click's
    /// `String::printable` does (and cut after [`MAX_MESSAGE`] bytes).
    pub(super) fn message(&mut self, code: u16, text: &[u8], more: bool) {
        if self.out_closed {
            return;
        }
        let _ = write!(self.out, "{}{}", code, if more { '-' } else { ' ' });
        if text.len() > MAX_MESSAGE {
            printable_into(&text[..MAX_MESSAGE], &mut self.out);
            self.out.extend_from_slice(b"...");
        } else {
            printable_into(text, &mut self.out);
        }
        self.out.extend_from_slice(b"\r\n");
    }

    /// A reply headed by `head` followed by handler error lines (Click's
    /// `transfer_messages`); past [`MAX_MESSAGES`] bytes the rest of the
    /// lines are counted instead of sent.
    pub(super) fn messages(&mut self, code: u16, head: &[u8], lines: &[&str]) {
        if lines.is_empty() {
            self.message(code, head, false);
            return;
        }
        let mut h = head.to_vec();
        h.push(b':');
        self.message(code, &h, true);
        let start = self.out.len();
        for (i, l) in lines.iter().enumerate() {
            let last = i + 1 == lines.len();
            if !last && self.out.len() - start > MAX_MESSAGES {
                let more = format!("({} more lines)", lines.len() - i);
                self.message(code, more.as_bytes(), false);
                return;
            }
            self.message(code, l.as_bytes(), !last);
        }
    }

    pub(super) fn data(&mut self, d: &[u8]) {
        if self.out_closed {
            return;
        }
        let _ = write!(self.out, "DATA {}\r\n", d.len());
        self.out.extend_from_slice(d);
    }

    /// Reads what the socket has, within budget; notes EOF and errors.
    pub(super) fn fill(&mut self) {
        let mut got = 0;
        while !self.in_closed && got < READ_BUDGET && self.unprocessed() < IN_CAP {
            let old = self.inbuf.len();
            let want = (64 << 10).min(IN_CAP - self.unprocessed());
            self.inbuf.resize(old + want, 0);
            let r = self.s.read(&mut self.inbuf[old..]);
            let n = match r {
                Ok(n) => n,
                Err(_) => 0,
            };
            self.inbuf.truncate(old + n);
            match r {
                Ok(0) => self.in_closed = true,
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    // reset or worse: nothing more can be said either
                    self.in_closed = true;
                    self.out_closed = true;
                }
            }
            if n < want {
                break;
            }
        }
        if got > 0 {
            self.last_active = Instant::now();
        }
    }

    /// Writes pending output until the socket would block.
    pub(super) fn flush(&mut self) {
        let before = self.outpos;
        while !self.out_closed && self.outpos < self.out.len() {
            match self.s.write(&self.out[self.outpos..]) {
                Ok(0) => self.out_closed = true,
                Ok(n) => self.outpos += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => self.out_closed = true,
            }
        }
        if self.outpos > before {
            self.last_active = Instant::now();
        }
        if self.outpos == self.out.len() || self.out_closed {
            self.out.clear();
            self.outpos = 0;
        } else if self.outpos > (64 << 10) {
            self.out.drain(..self.outpos);
            self.outpos = 0;
        }
    }

    /// Drops consumed input.
    pub(super) fn compact(&mut self) {
        if self.inpos == self.inbuf.len() {
            self.inbuf.clear();
            self.inpos = 0;
            self.scan = 0;
        } else if self.inpos > (64 << 10) {
            self.inbuf.drain(..self.inpos);
            self.scan -= self.inpos;
            self.inpos = 0;
        }
        if self.inbuf.capacity() > (256 << 10) && self.inbuf.len() < (16 << 10) {
            self.inbuf.shrink_to(16 << 10);
        }
        if self.out.capacity() > (256 << 10) && self.out.len() < (16 << 10) {
            self.out.shrink_to(16 << 10);
        }
    }

    /// Throws away all input and reads no more (the client is being
    /// hung up on); what is pending out is still sent.
    pub(super) fn hang_up(&mut self) {
        self.in_closed = true;
        self.pending = None;
        self.until_off = 0;
        self.skip = Skip::No;
        self.inbuf = Vec::new();
        self.inpos = 0;
        self.scan = 0;
    }

    /// Throws away skipped input; false while more must be skipped.
    pub(super) fn do_skip(&mut self) -> bool {
        match self.skip {
            Skip::No => true,
            Skip::Bytes(n) => {
                let take = (self.unprocessed() as u64).min(n);
                self.inpos += take as usize;
                self.scan = self.inpos;
                if take == n {
                    self.skip = Skip::No;
                    true
                } else {
                    self.skip = Skip::Bytes(n - take);
                    false
                }
            }
            Skip::Line => {
                let rest = &self.inbuf[self.inpos..];
                match rest.iter().position(|&c| c == b'\r' || c == b'\n') {
                    Some(e) => {
                        let mut end = self.inpos + e + 1;
                        if rest[e] == b'\r' && rest.get(e + 1) == Some(&b'\n') {
                            end += 1;
                        }
                        self.inpos = end;
                        self.scan = end;
                        self.skip = Skip::No;
                        true
                    }
                    None => {
                        self.inpos = self.inbuf.len();
                        self.scan = self.inpos;
                        false
                    }
                }
            }
        }
    }

    /// The payload a pending command waits for, or Err: wait for more
    /// input, or the command is over (the error reply has been sent).
    pub(super) fn payload(&mut self, p: &Payload) -> Result<Vec<u8>, Flow> {
        match p {
            Payload::Bytes(n) => self.take(*n),
            Payload::Until(u) => self.until_data(u),
        }
    }

    /// Takes `n` payload bytes, or says to wait.
    fn take(&mut self, n: usize) -> Result<Vec<u8>, Flow> {
        if self.unprocessed() >= n {
            let d = self.inbuf[self.inpos..self.inpos + n].to_vec();
            self.inpos += n;
            self.scan = self.inpos;
            Ok(d)
        } else if self.in_closed {
            self.not_enough_data()
        } else {
            Err(Flow::Wait)
        }
    }

    fn not_enough_data(&mut self) -> Result<Vec<u8>, Flow> {
        self.message(CSERR_SYNTAX, b"Not enough data", false);
        self.inpos = self.inbuf.len();
        self.scan = self.inpos;
        self.until_off = 0;
        Err(Flow::Done)
    }

    /// The payload of READUNTIL / WRITEUNTIL: the lines after the command
    /// up to one equal to `until` (trailing whitespace ignored on both).
    /// Lines already compared are not compared again when more input
    /// arrives, so an upload costs time in proportion to its size.
    fn until_data(&mut self, until: &[u8]) -> Result<Vec<u8>, Flow> {
        let until = until.trim_ascii_end();
        let buf = &self.inbuf;
        let mut s = self.inpos + self.until_off;
        loop {
            let begin = s;
            let mut end = s;
            while s < buf.len() && buf[s] != b'\n' && buf[s] != b'\r' {
                if !buf[s].is_ascii_whitespace() {
                    end = s + 1;
                }
                s += 1;
            }
            if s == buf.len() {
                self.until_off = begin - self.inpos;
                break;
            }
            // a CR last in the buffer may be the first half of a CRLF: if
            // this line is not the terminator, compare it again later
            let cr_last = buf[s] == b'\r' && s + 1 == buf.len();
            if buf[s] == b'\r' && buf.get(s + 1) == Some(&b'\n') {
                s += 2;
            } else {
                s += 1;
            }
            let found = &buf[begin..end] == until;
            if !found && cr_last {
                self.until_off = begin - self.inpos;
                break;
            }
            if found {
                let d = buf[self.inpos..begin].to_vec();
                self.inpos = s;
                self.scan = s;
                self.until_off = 0;
                return Ok(d);
            }
        }
        if self.in_closed {
            self.not_enough_data()
        } else if self.unprocessed() > MAX_DATA {
            // cannot resynchronise: refuse and hang up
            self.message(CSERR_DATA_TOO_BIG, b"Data too large", false);
            self.hang_up();
            Err(Flow::Done)
        } else {
            Err(Flow::Wait)
        }
    }

    pub(super) fn done(&self) -> bool {
        self.out_closed || (self.in_closed && self.unprocessed() == 0 && self.pending_out() == 0)
    }
}

/// Click's `String::printable`: control characters as `^X`, DEL as `^?`,
/// bytes above 127 as `\ooo`.
pub(super) fn printable_into(s: &[u8], out: &mut Vec<u8>) {
    for &c in s {
        match c {
            32..=126 => out.push(c),
            0..=31 => out.extend_from_slice(&[b'^', c + 64]),
            127 => out.extend_from_slice(b"^?"),
            _ => {
                let _ = write!(out, "\\{:03o}", c);
            }
        }
    }
}
