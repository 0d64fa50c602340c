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

thread_local! {
    /// Handler calls in progress under [`handler_guard`] on this thread.
    static GUARDED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Whether this thread is inside a handler call that [`handler_guard`]
/// catches panics of: the process level's panic hook then lets the panic
/// unwind to it instead of ending the process.
pub fn in_guarded_call() -> bool {
    GUARDED.with(|g| g.get() > 0)
}

/// The router's call guard at the process and thread levels: a handler
/// that panics is a handler error ("handler panicked: MESSAGE"). The
/// thread level's own unwinding, which ends a killed instance, goes on
/// through it.
fn handler_guard(call: &mut dyn FnMut()) -> Result<(), String> {
    GUARDED.with(|g| g.set(g.get() + 1));
    // AssertUnwindSafe: the router clears the busy flags of the elements
    // the panic unwinds through, its RefCell borrows end with their
    // guards; the element that panicked may be half-updated, as the error
    // says.
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(call));
    GUARDED.with(|g| g.set(g.get() - 1));
    match r {
        Ok(()) => Ok(()),
        Err(p) if p.is::<KilledToken>() => std::panic::resume_unwind(p),
        Err(p) => Err(crate::thread::panic_message(&*p)),
    }
}

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

    fn call_guard(&self) -> Option<click::router::CallGuard> {
        Some(handler_guard)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_call_guard_catches_handler_panics_but_not_a_kill() {
        assert_eq!(handler_guard(&mut || assert!(in_guarded_call())), Ok(()));
        assert_eq!(
            handler_guard(&mut || panic!("boom")),
            Err("boom".to_string())
        );
        assert!(!in_guarded_call());
        // the thread level's kill unwinds through it to the thread's top
        let r = std::panic::catch_unwind(|| {
            handler_guard(&mut || std::panic::resume_unwind(Box::new(KilledToken)))
        });
        assert!(r.is_err_and(|p| p.is::<KilledToken>()));
        assert!(!in_guarded_call());
    }
}
