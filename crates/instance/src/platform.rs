//! The runtime [`Platform`] over eventfds, shared by the `process` level
//! (inside the confined child) and the `none` level (a thread).

use crate::backend::ConsoleSink;
use click::prelude::Timestamp;
use clickos_guest::Platform;
use clickos_sys::{drain, signal, wait_readable, EventFd};
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

/// The eventfds between the host and an instance.
pub struct Doorbells {
    /// Host → instance: a request, a frame or a kill is waiting.
    pub wake: EventFd,
    /// Instance → host: a reply or a state change is ready (CTRL_DONE).
    pub done: EventFd,
    /// Instance → host, one per vNIC: frames the host asked for (KICK).
    pub kicks: Vec<EventFd>,
}

impl Doorbells {
    /// Fresh eventfds for an instance with `vnics` vNICs.
    pub fn new(vnics: usize) -> std::io::Result<Doorbells> {
        Ok(Doorbells {
            wake: clickos_sys::eventfd()?,
            done: clickos_sys::eventfd()?,
            kicks: (0..vnics)
                .map(|_| clickos_sys::eventfd())
                .collect::<Result<_, _>>()?,
        })
    }

    /// Rings `done` and every kick: the instance has ended, so whoever
    /// waits for a reply or a frame looks again.
    pub fn ring_all(&self) {
        signal(&self.done);
        for k in &self.kicks {
            signal(k);
        }
    }
}

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
        Err(p) => Err(clickos_sys::panic_message(&*p)),
    }
}

/// Eventfd-based platform.
#[derive(Clone)]
pub struct EventPlatform {
    pub bells: Arc<Doorbells>,
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

impl Platform for EventPlatform {
    fn now(&self) -> Timestamp {
        self.check_killed();
        Timestamp::from_nsec(clickos_sys::realtime_ns())
    }

    fn idle(&self, deadline: Option<Timestamp>) {
        self.check_killed();
        let timeout = deadline.map(|d| {
            let ns = d.0.saturating_sub(clickos_sys::realtime_ns()).max(0);
            std::time::Duration::from_nanos(ns as u64)
        });
        if timeout != Some(std::time::Duration::ZERO) {
            wait_readable(&self.bells.wake, timeout);
        }
        drain(&self.bells.wake);
        self.check_killed();
    }

    fn notify_host(&self) {
        signal(&self.bells.done);
    }

    fn kick(&self, vnic: usize) {
        if let Some(k) = self.bells.kicks.get(vnic) {
            signal(k);
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
