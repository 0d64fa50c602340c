//! The runtime [`Platform`] over eventfds, shared by the `process` level
//! (inside the confined child) and the `none` level (a thread).

use crate::backend::ConsoleSink;
use crate::sys;
use click::prelude::Timestamp;
use clickos_guest::Platform;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Where console output goes.
#[derive(Clone)]
pub enum ConsoleOut {
    /// Straight to the host's sink (thread level).
    Sink(u32, ConsoleSink),
    /// To standard error, which the parent forwards line by line (process
    /// level).
    Stderr,
}

/// Unwinding payload used to end an abandoned thread-level instance.
pub(crate) struct KilledToken;

/// Eventfd-based platform. Descriptors are borrowed: their owner keeps them
/// open at least as long as the runtime runs.
#[derive(Clone)]
pub struct EventPlatform {
    pub wake: RawFd,
    pub done: RawFd,
    pub kicks: Arc<[RawFd]>,
    pub console: ConsoleOut,
    pub memory_limited: bool,
    /// Thread level: set by `kill`; the runtime is unwound at its next
    /// clock read or idle.
    pub killed: Option<Arc<AtomicBool>>,
}

impl EventPlatform {
    #[inline]
    fn check_killed(&self) {
        if let Some(k) = &self.killed {
            if k.load(Ordering::Relaxed) {
                std::panic::resume_unwind(Box::new(KilledToken));
            }
        }
    }
}

/// Wall-clock time, ns since the Unix epoch (vDSO `clock_gettime`).
pub fn wall_clock_ns() -> i64 {
    match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_nanos().min(i64::MAX as u128) as i64,
        Err(_) => 0,
    }
}

impl Platform for EventPlatform {
    fn now(&self) -> Timestamp {
        self.check_killed();
        Timestamp::from_nsec(wall_clock_ns())
    }

    fn idle(&self, deadline: Option<Timestamp>) {
        self.check_killed();
        let timeout = deadline.map(|d| {
            let ns = d.0.saturating_sub(wall_clock_ns()).max(0);
            std::time::Duration::from_nanos(ns as u64)
        });
        if timeout != Some(std::time::Duration::ZERO) {
            sys::poll_in(&[self.wake], timeout);
        }
        sys::drain(self.wake);
        self.check_killed();
    }

    fn notify_host(&self) {
        sys::signal(self.done);
    }

    fn kick(&self, vnic: usize) {
        if let Some(&fd) = self.kicks.get(vnic) {
            sys::signal(fd);
        }
    }

    /// Each call is delivered as whole lines: a missing final newline is
    /// added (the engine's `error_line` has none), so that line-based
    /// consumers (the process level's stderr forwarding) see it at once.
    fn console(&self, text: &str) {
        if text.is_empty() {
            return;
        }
        let owned;
        let text = if text.ends_with('\n') {
            text
        } else {
            owned = format!("{text}\n");
            &owned
        };
        match &self.console {
            ConsoleOut::Sink(id, sink) => sink(*id, text),
            ConsoleOut::Stderr => {
                let mut b = text.as_bytes();
                while !b.is_empty() {
                    // SAFETY: writes from a live slice to fd 2.
                    let n = unsafe { libc::write(2, b.as_ptr() as *const libc::c_void, b.len()) };
                    if n <= 0 {
                        break;
                    }
                    b = &b[n as usize..];
                }
            }
        }
    }

    fn memory_limited(&self) -> bool {
        self.memory_limited
    }
}
