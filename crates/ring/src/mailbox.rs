//! The control mailbox: one request at a time, host → guest, with both
//! ends of the protocol: [`HostEnd`] posts a request and collects and
//! validates the reply, [`GuestEnd`] takes a request and writes the reply.
//!
//! Host: waits until `resp_seq == req_seq` (no request outstanding), writes
//! `op`, `name`, the payload into the data area and `data_len`, then
//! `req_seq += 1` (Release), a SeqCst fence, and then wakes the instance
//! **unless `state == RUNNING`** (a sleeping instance shows `IDLE`, or
//! `STOPPED`/`EMPTY` when its router stopped or none is installed). If the
//! host is going to block rather than spin for the reply it sets
//! `host_waiting = 1` (then fences and re-checks `resp_seq`).
//!
//! Guest: once per scheduler loop compares `req_seq` with the last request
//! it served (one cache line). For a new request it runs the operation,
//! writes the reply into the data area, `status` and `resp_len`, then
//! `resp_seq = req_seq` (Release), and if `host_waiting` is set, clears it
//! and notifies the host (`CTRL_DONE`).
//!
//! Everything the guest writes is untrusted: the host clamps `resp_len` to
//! [`DATA_SIZE`], checks `status` against the known codes and treats a reply
//! whose `resp_seq` is not the request's as garbage ([`Corruption`]).
//! Everything the host writes is untrusted by the guest likewise: it takes
//! one snapshot of a request ([`Request`]) and checks its lengths.
//!
//! Status codes carry the engine's names for handler errors
//! (`NoSuchElement`, `NoSuchHandler`, `PermissionDenied`, `Failed`, `Busy`),
//! plus the mailbox's own (`Config`, `BadRequest`, `NoRouter`, `TooLarge`).
//!
//! ```
//! use clickos_ring::layout::{CONTROL_SIZE, MAILBOX_OFF};
//! use clickos_ring::mailbox::{GuestEnd, HostEnd, Mailbox, Op, Status};
//! // A control region (page-aligned in real use: a mapping).
//! #[repr(C, align(4096))]
//! struct Region([u8; CONTROL_SIZE]);
//! let mut region = Box::new(Region([0; CONTROL_SIZE]));
//! let control = region.0.as_mut_ptr();
//! // SAFETY: `control` is a whole control region that outlives both ends.
//! let (mut host, mut guest) = unsafe { (HostEnd::new(control), GuestEnd::new(control)) };
//!
//! host.post(Op::Read, b"c.count", b"").unwrap();
//! assert!(guest.pending());
//! let req = guest.take().unwrap();
//! assert_eq!((Op::from_code(req.op), req.name()), (Some(Op::Read), &b"c.count"[..]));
//! let _notify = guest.reply(req.seq, Status::Ok, b"42");
//!
//! assert!(host.replied().unwrap());
//! let reply = host.reply().unwrap();
//! let mut payload = vec![0; reply.len];
//! host.read_data(&mut payload);
//! assert_eq!((reply.status, &payload[..]), (Status::Ok, &b"42"[..]));
//! ```

use crate::layout::{DATA_OFF, DATA_SIZE, MAILBOX_OFF};
use core::fmt;
use core::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

/// Longest request name (`element.handler`), bytes.
pub const NAME_MAX: usize = 255;

/// Mailbox operations (`Mailbox::op`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Op {
    /// Read handler `name`; a non-empty payload is the handler parameter.
    Read = 1,
    /// Write the payload to handler `name`.
    Write = 2,
    /// List elements, or with `name` = an element, its handlers.
    List = 3,
    /// Install the configuration in the payload (atomically); `name` is the
    /// file name used in error messages (empty: `config`).
    Install = 4,
    /// Stop the router and exit the instance.
    Stop = 5,
    /// Fault injection, only with `FLAG_FAULT_INJECTION`: payload names the
    /// fault (`panic`, `spin`, `oom`, `scribble-mailbox`, `scribble-rings`,
    /// `bad-slot-lengths`).
    Fault = 6,
}

impl Op {
    pub const fn code(self) -> u32 {
        self as u32
    }

    pub const fn from_code(code: u32) -> Option<Op> {
        Some(match code {
            1 => Op::Read,
            2 => Op::Write,
            3 => Op::List,
            4 => Op::Install,
            5 => Op::Stop,
            6 => Op::Fault,
            _ => return None,
        })
    }

    /// The name in messages (`READ`).
    pub const fn name(self) -> &'static str {
        match self {
            Op::Read => "READ",
            Op::Write => "WRITE",
            Op::List => "LIST",
            Op::Install => "INSTALL",
            Op::Stop => "STOP",
            Op::Fault => "FAULT",
        }
    }
}

/// Reply status codes (`Mailbox::status`). The handler errors carry the
/// engine's names (`click::router::HandlerError`); the payload of an error
/// reply is the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Status {
    Ok = 0,
    /// No element of that name.
    NoSuchElement = 1,
    /// The element has no such handler.
    NoSuchHandler = 2,
    /// The handler exists but not in that direction, or the operation is
    /// not enabled (fault injection).
    PermissionDenied = 3,
    /// The handler (or install) failed; the payload says why.
    Failed = 4,
    /// The configuration did not parse or initialise; payload = errors, one
    /// per line.
    Config = 5,
    /// The request was malformed (lengths, UTF-8, unknown operation).
    BadRequest = 6,
    /// No configuration is installed.
    NoRouter = 7,
    /// The reply did not fit the data area.
    TooLarge = 8,
    /// The handler could not run now.
    Busy = 9,
}

impl Status {
    pub const fn code(self) -> u32 {
        self as u32
    }

    /// The status of a known code; `None` for anything else (garbage).
    pub const fn from_code(code: u32) -> Option<Status> {
        Some(match code {
            0 => Status::Ok,
            1 => Status::NoSuchElement,
            2 => Status::NoSuchHandler,
            3 => Status::PermissionDenied,
            4 => Status::Failed,
            5 => Status::Config,
            6 => Status::BadRequest,
            7 => Status::NoRouter,
            8 => Status::TooLarge,
            9 => Status::Busy,
            _ => return None,
        })
    }
}

/// Instance states (guest → host, `Mailbox::state`).
pub mod state {
    pub const BOOTING: u32 = 0;
    /// A router is running.
    pub const RUNNING: u32 = 1;
    /// Waiting in IDLE (no task due): costs no CPU.
    pub const IDLE: u32 = 2;
    /// The router stopped (by `stop`, a source's STOP, or Script); handlers
    /// can still be read.
    pub const STOPPED: u32 = 3;
    /// No configuration installed yet (or the initial one failed).
    pub const EMPTY: u32 = 4;
    /// The instance left its main loop (STOP request).
    pub const EXITED: u32 = 5;
    pub const MAX: u32 = 5;
}

/// The mailbox page. Field groups sit on their own cache lines.
#[repr(C, align(64))]
pub struct Mailbox {
    // line 0: written by the host
    pub req_seq: AtomicU32,
    pub op: AtomicU32,
    pub name_len: AtomicU32,
    pub data_len: AtomicU32,
    /// The host will block for the reply: notify with CTRL_DONE.
    pub host_waiting: AtomicU32,
    _pad0: [u32; 11],
    // line 1: written by the guest
    pub resp_seq: AtomicU32,
    pub status: AtomicU32,
    pub resp_len: AtomicU32,
    pub state: AtomicU32,
    /// Scheduler loop passes while not idle (the watchdog's heartbeat).
    pub heartbeat: AtomicU64,
    /// Deadline for IDLE, in wall-clock ns since the Unix epoch (at every
    /// level); 0 = none.
    pub idle_deadline: AtomicU64,
    /// When the first scheduler pass after an install ran (the instance's
    /// clock, ns since the epoch); 0 = not yet.
    pub first_run: AtomicU64,
    /// Number of configurations installed.
    pub generation: AtomicU32,
    _pad1: [u32; 5],
    // line 2+: request name (host)
    pub name: [u8; 256],
}

const _: () = assert!(core::mem::size_of::<Mailbox>() <= 4096);

impl Mailbox {
    /// Resets the mailbox (host, before the instance starts).
    pub fn reset(&self) {
        for a in [
            &self.req_seq,
            &self.op,
            &self.name_len,
            &self.data_len,
            &self.host_waiting,
            &self.resp_seq,
            &self.status,
            &self.resp_len,
            &self.generation,
        ] {
            a.store(0, Ordering::Relaxed);
        }
        self.state.store(state::BOOTING, Ordering::Relaxed);
        self.heartbeat.store(0, Ordering::Relaxed);
        self.idle_deadline.store(0, Ordering::Relaxed);
        self.first_run.store(0, Ordering::Release);
    }

    /// True when a request is outstanding (guest side: a new one to serve).
    #[inline]
    pub fn pending(&self, last_served: u32) -> bool {
        self.req_seq.load(Ordering::Acquire) != last_served
    }
}

/// Host side: whether the request `posted` (the last one the host posted)
/// is still being served (`Ok(true)`) or answered (`Ok(false)`), given the
/// `resp` the guest published. Load `resp` *before* `posted`: a reply can
/// only catch up with what was posted before it.
pub fn serving(resp: u32, posted: u32) -> Result<bool, Corruption> {
    if resp == posted {
        Ok(false)
    } else if resp == posted.wrapping_sub(1) {
        Ok(true)
    } else {
        Err(Corruption::Seq { resp, posted })
    }
}

impl Mailbox {
    /// Host side: the state the guest published, checked against the known
    /// states.
    pub fn checked_state(&self) -> Result<u32, Corruption> {
        let s = self.state.load(Ordering::Acquire);
        if s > state::MAX {
            return Err(Corruption::State(s));
        }
        Ok(s)
    }
}

/// What the host found impossible in the guest's half of the mailbox. The
/// instance broke the protocol: the host ends it with this message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corruption {
    /// Before request `next` was posted, `resp_seq` was not the previous
    /// request's.
    SeqBeforeRequest { resp: u32, next: u32 },
    /// While request `seq` was outstanding, `resp_seq` was neither it nor
    /// the one before.
    SeqWhileOutstanding { resp: u32, seq: u32 },
    /// `resp_seq` is neither the last request posted nor the one before.
    Seq { resp: u32, posted: u32 },
    /// An unknown status code.
    Status(u32),
    /// A reply length beyond the data area.
    RespLen(u32),
    /// An unknown state.
    State(u32),
}

impl fmt::Display for Corruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("corrupted mailbox: ")?;
        match *self {
            Corruption::SeqBeforeRequest { resp, next } => {
                write!(f, "resp_seq {resp} before request {next}")
            }
            Corruption::SeqWhileOutstanding { resp, seq } => {
                write!(f, "resp_seq {resp} while request {seq} is outstanding")
            }
            Corruption::Seq { resp, posted } => {
                write!(f, "resp_seq {resp} (last request {posted})")
            }
            Corruption::Status(s) => write!(f, "status {s}"),
            Corruption::RespLen(l) => write!(f, "resp_len {l}"),
            Corruption::State(s) => write!(f, "state {s}"),
        }
    }
}

/// Why the host could not post a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PostError {
    /// The name is longer than [`NAME_MAX`] bytes.
    NameTooLong,
    /// The payload is larger than the data area.
    TooLarge,
    /// The previous reply is not where it must be (the instance broke the
    /// protocol).
    Corrupt(Corruption),
}

/// A request just posted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Posted {
    pub seq: u32,
    /// The instance may be asleep: wake it (write its wake eventfd).
    pub wake: bool,
}

/// A reply, validated: its status and the length of its payload in the
/// data area (at most [`DATA_SIZE`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reply {
    pub status: Status,
    pub len: usize,
}

/// The host's end of the mailbox. It keeps its own (trusted) copy of the
/// last request's sequence number and never reads `req_seq` back; it posts
/// one request at a time, and validates everything the guest wrote.
/// Waiting (spinning, blocking on a notification, timing out) is the
/// caller's: see [`replied`](Self::replied) and
/// [`announce_wait`](Self::announce_wait).
pub struct HostEnd {
    control: *mut u8,
    seq: u32,
}

// SAFETY: the end only holds the address of a control region that outlives
// it (the caller of `new` guarantees it); all accesses are atomic or
// bounds-checked copies.
unsafe impl Send for HostEnd {}

impl HostEnd {
    /// The host's end of the mailbox in the control region at `control`,
    /// continuing from the request the mailbox last shows (0 after
    /// [`Mailbox::reset`]): create it before the instance runs.
    ///
    /// # Safety
    /// `control` must map a whole control region (`CONTROL_SIZE` bytes,
    /// page-aligned), valid for the life of the end.
    pub unsafe fn new(control: *mut u8) -> HostEnd {
        // SAFETY: the mailbox page lies inside the region.
        let mb = unsafe { &*(control.add(MAILBOX_OFF as usize) as *const Mailbox) };
        HostEnd {
            control,
            seq: mb.req_seq.load(Ordering::Acquire),
        }
    }

    #[inline]
    pub fn mailbox(&self) -> &Mailbox {
        // SAFETY: see `new`.
        unsafe { &*(self.control.add(MAILBOX_OFF as usize) as *const Mailbox) }
    }

    /// The last request posted.
    pub fn seq(&self) -> u32 {
        self.seq
    }

    /// Whether a request with this name and payload fits the mailbox.
    pub fn check(name: &[u8], data: &[u8]) -> Result<(), PostError> {
        if name.len() > NAME_MAX {
            return Err(PostError::NameTooLong);
        }
        if data.len() > DATA_SIZE {
            return Err(PostError::TooLarge);
        }
        Ok(())
    }

    /// The sequence number the next request will have, once the last one
    /// was answered as it must be.
    pub fn next_seq(&self) -> Result<u32, Corruption> {
        let next = self.seq.wrapping_add(1);
        let resp = self.mailbox().resp_seq.load(Ordering::Acquire);
        if resp != self.seq {
            return Err(Corruption::SeqBeforeRequest { resp, next });
        }
        Ok(next)
    }

    /// Posts a request, once the previous one was answered: writes the
    /// name, payload, operation and lengths, clears `host_waiting`,
    /// publishes `req_seq`, and fences. The caller wakes the instance when
    /// [`Posted::wake`] says so.
    pub fn post(&mut self, op: Op, name: &[u8], data: &[u8]) -> Result<Posted, PostError> {
        Self::check(name, data)?;
        let next = self.next_seq().map_err(PostError::Corrupt)?;
        let mb = self.mailbox();
        // SAFETY: the name field is NAME_MAX + 1 bytes and the data area
        // DATA_SIZE bytes of the region (lengths checked above); the guest
        // does not read them until `req_seq` is published.
        unsafe {
            let name_dst = core::ptr::addr_of!(mb.name) as *mut u8;
            core::ptr::copy_nonoverlapping(name.as_ptr(), name_dst, name.len());
            let data_dst = self.control.add(DATA_OFF as usize);
            core::ptr::copy_nonoverlapping(data.as_ptr(), data_dst, data.len());
        }
        mb.op.store(op.code(), Ordering::Relaxed);
        mb.name_len.store(name.len() as u32, Ordering::Relaxed);
        mb.data_len.store(data.len() as u32, Ordering::Relaxed);
        mb.host_waiting.store(0, Ordering::Relaxed);
        mb.req_seq.store(next, Ordering::Release);
        fence(Ordering::SeqCst);
        let wake = mb.state.load(Ordering::Relaxed) != state::RUNNING;
        self.seq = next;
        Ok(Posted { seq: next, wake })
    }

    /// Whether the reply to the last request has come (`Ok(false)`: not
    /// yet).
    #[inline]
    pub fn replied(&self) -> Result<bool, Corruption> {
        let resp = self.mailbox().resp_seq.load(Ordering::Acquire);
        if resp == self.seq {
            Ok(true)
        } else if resp == self.seq.wrapping_sub(1) {
            Ok(false)
        } else {
            Err(Corruption::SeqWhileOutstanding {
                resp,
                seq: self.seq,
            })
        }
    }

    /// Asks the guest to notify (CTRL_DONE) when it replies, because the
    /// host is about to block. Check [`replied`](Self::replied) again
    /// afterwards, before blocking.
    pub fn announce_wait(&self) {
        self.mailbox().host_waiting.store(1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
    }

    /// The reply now in the mailbox (once [`replied`](Self::replied)),
    /// validated: a known status, a length within the data area, a known
    /// state.
    pub fn reply(&self) -> Result<Reply, Corruption> {
        let mb = self.mailbox();
        let st = mb.status.load(Ordering::Relaxed);
        let len = mb.resp_len.load(Ordering::Relaxed);
        let status = Status::from_code(st).ok_or(Corruption::Status(st))?;
        if len as usize > DATA_SIZE {
            return Err(Corruption::RespLen(len));
        }
        mb.checked_state()?;
        Ok(Reply {
            status,
            len: len as usize,
        })
    }

    /// Copies the start of the data area into `dst` (at most
    /// [`DATA_SIZE`] bytes). The guest may still scribble over it: that
    /// only changes the bytes.
    pub fn read_data(&self, dst: &mut [u8]) {
        let n = dst.len().min(DATA_SIZE);
        // SAFETY: n <= DATA_SIZE, so the copy stays in the data area.
        unsafe {
            core::ptr::copy_nonoverlapping(self.control.add(DATA_OFF as usize), dst.as_mut_ptr(), n)
        };
    }
}

/// A snapshot of a request, taken once by the guest so that a host
/// rewriting the mailbox mid-request cannot make it read out of bounds.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    pub seq: u32,
    /// The operation's code ([`Op::from_code`]; unknown codes are the
    /// host's mistake, answered with [`Status::BadRequest`]).
    pub op: u32,
    pub name_len: usize,
    pub data_len: usize,
    name: [u8; NAME_MAX],
}

/// A request whose lengths do not fit the mailbox: the host's mistake, to
/// be answered with [`Status::BadRequest`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Malformed {
    pub seq: u32,
}

impl Request {
    /// Snapshot and validate (lengths checked, never trusted).
    pub fn take(m: &Mailbox) -> Result<Request, Malformed> {
        let seq = m.req_seq.load(Ordering::Acquire);
        let mut r = Request {
            seq,
            op: m.op.load(Ordering::Relaxed),
            name_len: m.name_len.load(Ordering::Relaxed) as usize,
            data_len: m.data_len.load(Ordering::Relaxed) as usize,
            name: [0; NAME_MAX],
        };
        if r.name_len > NAME_MAX || r.data_len > DATA_SIZE {
            return Err(Malformed { seq });
        }
        r.name[..r.name_len].copy_from_slice(&m.name[..r.name_len]);
        Ok(r)
    }

    /// The handler or element name (or file name, for INSTALL), as the
    /// host wrote it when the request was taken.
    pub fn name(&self) -> &[u8] {
        &self.name[..self.name_len]
    }
}

/// The guest's end of the mailbox: notices a new request, takes a snapshot
/// of it, and publishes the reply. Notifying the host (`CTRL_DONE`) is the
/// caller's, when [`reply`](Self::reply) says the host waits.
pub struct GuestEnd {
    control: *mut u8,
    last_served: u32,
}

impl GuestEnd {
    /// The guest's end of the mailbox in the control region at `control`,
    /// before any request was served.
    ///
    /// # Safety
    /// `control` must map a whole control region (`CONTROL_SIZE` bytes,
    /// page-aligned), valid for the life of the end.
    pub unsafe fn new(control: *mut u8) -> GuestEnd {
        GuestEnd {
            control,
            last_served: 0,
        }
    }

    #[inline]
    pub fn mailbox(&self) -> &Mailbox {
        // SAFETY: the mailbox page lies inside the region (see `new`).
        unsafe { &*(self.control.add(MAILBOX_OFF as usize) as *const Mailbox) }
    }

    /// True when the host posted a request not served yet (one cache-line
    /// read).
    #[inline]
    pub fn pending(&self) -> bool {
        self.mailbox().pending(self.last_served)
    }

    /// Takes a snapshot of the pending request; see [`Request::take`].
    pub fn take(&self) -> Result<Request, Malformed> {
        Request::take(self.mailbox())
    }

    /// Copies the request's payload into `dst` (at most `req.data_len`
    /// bytes, which `take` checked against the data area).
    pub fn read_payload(&self, req: &Request, dst: &mut [u8]) {
        let n = dst.len().min(req.data_len).min(DATA_SIZE);
        // SAFETY: n <= DATA_SIZE, so the copy stays in the data area.
        unsafe {
            core::ptr::copy_nonoverlapping(self.control.add(DATA_OFF as usize), dst.as_mut_ptr(), n)
        };
    }

    /// Publishes the reply to request `seq`: the payload into the data area
    /// (one larger than the area becomes [`Status::TooLarge`]), `status`,
    /// `resp_len`, then `resp_seq`. True when the host waits to be notified
    /// (`CTRL_DONE`).
    #[must_use = "notify the host when it waits"]
    pub fn reply(&mut self, seq: u32, status: Status, payload: &[u8]) -> bool {
        let (status, bytes) = if payload.len() > DATA_SIZE {
            (
                Status::TooLarge,
                &b"reply larger than the mailbox data area"[..],
            )
        } else {
            (status, payload)
        };
        let mb = self.mailbox();
        // SAFETY: bytes.len() <= DATA_SIZE, the size of the data area; the
        // host does not read it before `resp_seq` is published.
        unsafe {
            core::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                self.control.add(DATA_OFF as usize),
                bytes.len(),
            )
        };
        mb.status.store(status.code(), Ordering::Relaxed);
        mb.resp_len.store(bytes.len() as u32, Ordering::Relaxed);
        mb.resp_seq.store(seq, Ordering::Release);
        fence(Ordering::SeqCst);
        let waiting = mb.host_waiting.swap(0, Ordering::AcqRel) != 0;
        self.last_served = seq;
        waiting
    }

    /// Counts request `seq` as served without a proper reply (the
    /// `scribble-mailbox` fault writes garbage instead).
    pub fn mark_served(&mut self, seq: u32) {
        self.last_served = seq;
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::layout::CONTROL_SIZE;
    use std::boxed::Box;
    use std::vec;

    #[repr(C, align(4096))]
    struct Region([u8; CONTROL_SIZE]);

    /// A zeroed control region and both ends on it.
    fn ends() -> (Box<Region>, HostEnd, GuestEnd) {
        // SAFETY: Region is plain bytes; zero is a valid value.
        let mut r: Box<Region> = unsafe { Box::new_zeroed().assume_init() };
        let c = r.0.as_mut_ptr();
        // SAFETY: the region outlives the ends in every test.
        let (h, g) = unsafe { (HostEnd::new(c), GuestEnd::new(c)) };
        (r, h, g)
    }

    #[test]
    fn codes_round_trip() {
        for c in 0..=20 {
            if let Some(s) = Status::from_code(c) {
                assert_eq!(s.code(), c);
            }
            if let Some(o) = Op::from_code(c) {
                assert_eq!(o.code(), c);
            }
        }
        assert_eq!(Status::from_code(10), None);
        assert_eq!(Op::from_code(0), None);
    }

    #[test]
    fn a_request_and_its_reply() {
        let (_r, mut h, mut g) = ends();
        assert!(!g.pending());
        let p = h.post(Op::Write, b"c.reset", b"1").unwrap();
        assert_eq!(p, Posted { seq: 1, wake: true });
        assert_eq!(h.replied(), Ok(false));
        let req = g.take().unwrap();
        assert_eq!((req.seq, req.op, req.name()), (1, 2, &b"c.reset"[..]));
        let mut payload = vec![0; req.data_len];
        g.read_payload(&req, &mut payload);
        assert_eq!(payload, b"1");
        h.announce_wait();
        assert!(g.reply(req.seq, Status::NoSuchHandler, b"no handler"));
        assert!(!g.pending());
        assert_eq!(h.replied(), Ok(true));
        let r = h.reply().unwrap();
        assert_eq!(r.status, Status::NoSuchHandler);
        let mut buf = vec![0; r.len];
        h.read_data(&mut buf);
        assert_eq!(buf, b"no handler");
        // The next one follows.
        assert_eq!(h.post(Op::Read, b"c.count", b"").unwrap().seq, 2);
    }

    #[test]
    fn the_host_refuses_what_does_not_fit() {
        let (_r, mut h, _g) = ends();
        let long = [b'n'; NAME_MAX + 1];
        assert_eq!(h.post(Op::Read, &long, b""), Err(PostError::NameTooLong));
        let big = vec![0u8; DATA_SIZE + 1];
        assert_eq!(h.post(Op::Write, b"a.b", &big), Err(PostError::TooLarge));
        assert_eq!(h.seq(), 0);
    }

    #[test]
    fn the_host_catches_garbage() {
        let (_r, mut h, g) = ends();
        h.post(Op::Read, b"a.b", b"").unwrap();
        let mb = g.mailbox();
        mb.resp_seq.store(7, Ordering::Relaxed);
        assert_eq!(
            h.replied(),
            Err(Corruption::SeqWhileOutstanding { resp: 7, seq: 1 })
        );
        assert_eq!(
            std::format!("{}", h.replied().unwrap_err()),
            "corrupted mailbox: resp_seq 7 while request 1 is outstanding"
        );
        assert!(matches!(
            h.post(Op::Read, b"a.b", b""),
            Err(PostError::Corrupt(Corruption::SeqBeforeRequest {
                resp: 7,
                next: 2
            }))
        ));
        mb.resp_seq.store(1, Ordering::Relaxed);
        mb.status.store(1000, Ordering::Relaxed);
        assert_eq!(h.reply(), Err(Corruption::Status(1000)));
        mb.status.store(0, Ordering::Relaxed);
        mb.resp_len.store(u32::MAX, Ordering::Relaxed);
        assert_eq!(h.reply(), Err(Corruption::RespLen(u32::MAX)));
        mb.resp_len.store(0, Ordering::Relaxed);
        mb.state.store(0x7777, Ordering::Relaxed);
        assert_eq!(h.reply(), Err(Corruption::State(0x7777)));
        assert_eq!(serving(3, 5), Err(Corruption::Seq { resp: 3, posted: 5 }));
        assert_eq!(serving(4, 5), Ok(true));
        assert_eq!(serving(5, 5), Ok(false));
    }

    #[test]
    fn the_guest_clamps_what_the_host_wrote() {
        let (_r, _h, mut g) = ends();
        let mb = g.mailbox();
        mb.name_len.store(10_000, Ordering::Relaxed);
        mb.data_len.store(u32::MAX, Ordering::Relaxed);
        mb.req_seq.store(1, Ordering::Release);
        let bad = g.take().unwrap_err();
        assert_eq!(bad, Malformed { seq: 1 });
        let _ = g.reply(bad.seq, Status::BadRequest, b"too long");
        // A reply larger than the data area is replaced by TooLarge.
        let big = vec![b'x'; DATA_SIZE + 1];
        let _ = g.reply(2, Status::Ok, &big);
        assert_eq!(g.mailbox().status.load(Ordering::Relaxed), 8);
    }
}
