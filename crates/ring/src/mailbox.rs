//! The control mailbox: one request at a time, host → guest.
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
//! [`DATA_SIZE`](crate::layout::DATA_SIZE), checks `status` against the known
//! codes and treats a reply whose `resp_seq` is not the request's as garbage.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

pub const NAME_MAX: usize = 255;

/// Operations.
pub mod op {
    /// Read handler `name`; a non-empty payload is the handler parameter.
    pub const READ: u32 = 1;
    /// Write the payload to handler `name`.
    pub const WRITE: u32 = 2;
    /// List elements, or with `name` = an element, its handlers.
    pub const LIST: u32 = 3;
    /// Install the configuration in the payload (atomically); `name` is the
    /// file name used in error messages (empty: `config`).
    pub const INSTALL: u32 = 4;
    /// Stop the router and exit the instance.
    pub const STOP: u32 = 5;
    /// Fault injection, only with `FLAG_FAULT_INJECTION`: payload names the
    /// fault (`panic`, `spin`, `oom`, `scribble-mailbox`, `scribble-rings`).
    pub const FAULT: u32 = 6;
}

/// Reply status codes.
pub mod status {
    pub const OK: u32 = 0;
    pub const NO_ELEMENT: u32 = 1;
    pub const NO_HANDLER: u32 = 2;
    pub const PERMISSION: u32 = 3;
    /// The handler (or install) failed; the payload says why.
    pub const FAILED: u32 = 4;
    /// The configuration did not parse or initialise; payload = errors, one per line.
    pub const CONFIG: u32 = 5;
    pub const BAD_REQUEST: u32 = 6;
    /// No configuration is installed.
    pub const NO_ROUTER: u32 = 7;
    /// The reply did not fit the data area.
    pub const TOO_LARGE: u32 = 8;
    pub const BUSY: u32 = 9;
    pub const MAX: u32 = 9;
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

/// Copies of the request fields, taken once by the guest so that a host
/// rewriting them mid-request cannot make it read out of bounds.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    pub seq: u32,
    pub op: u32,
    pub name_len: usize,
    pub data_len: usize,
}

impl Request {
    /// Snapshot and validate (lengths clamped, never trusted).
    pub fn take(m: &Mailbox) -> Result<Request, Request> {
        let seq = m.req_seq.load(Ordering::Acquire);
        let r = Request {
            seq,
            op: m.op.load(Ordering::Relaxed),
            name_len: m.name_len.load(Ordering::Relaxed) as usize,
            data_len: m.data_len.load(Ordering::Relaxed) as usize,
        };
        if r.name_len > NAME_MAX || r.data_len > crate::layout::DATA_SIZE {
            return Err(Request {
                name_len: r.name_len.min(NAME_MAX),
                data_len: 0,
                ..r
            });
        }
        Ok(r)
    }
}
