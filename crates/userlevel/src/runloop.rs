//! The run loop: the scheduler loop over a router (tasks, timers, waiting
//! on the selector or moving a virtual clock), the hooks a multi-threaded
//! run adds to it, and SIGINT/SIGTERM handling.

use crate::clock::{real_wait, SystemClock};
use crate::selector::Selector;
use click::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Set by SIGINT/SIGTERM: the driver stops the router (cleanup and `-h`
/// handlers still run); a second signal kills the process, as in Click.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: libc::c_int) {
    INTERRUPTED.store(true, Ordering::Relaxed);
}

/// Installs the driver's SIGINT and SIGTERM handlers (where no Script
/// element waits for them): the first stops the run loop, the second
/// ends the process.
pub fn catch_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        if crate::console::script_catches(sig) {
            // a Script runs on it instead (and stops the driver or not)
            continue;
        }
        // SAFETY: a zeroed sigaction is a valid starting value; the handler
        // only stores to an atomic, which is async-signal-safe. SA_RESETHAND
        // restores the default action, so a second signal terminates.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESETHAND;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Whether SIGINT or SIGTERM arrived.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// What a multi-threaded run adds to the scheduler loop.
pub trait LoopHooks {
    /// Called before every pass (cheap unless another thread rang); false
    /// ends the loop.
    fn check(&self, router: &Router) -> bool;
    /// The router is idle with no timers and nothing holding it. True:
    /// wait for another thread to bring work (the doorbell is among the
    /// selector's descriptors); false: end the loop.
    fn idle(&self, router: &Router) -> bool;
    /// The router stopped by itself (the `stop` handler, a stop request).
    fn stopped(&self, router: &Router);
    /// About to block on the selector: false if work is already waiting
    /// (then the loop does not block).
    fn before_wait(&self) -> bool;
    /// Back from blocking.
    fn after_wait(&self);
    /// Whether this loop delivers signals to its router's Scripts (only
    /// one thread's loop does).
    fn takes_signals(&self) -> bool {
        true
    }
}

/// The scheduler loop without watched descriptors (see [`drive_with`]).
pub fn drive(router: &Router, vclock: Option<&VirtualClock>) {
    drive_with(router, vclock, None, None)
}

/// How many busy passes between looks at the clock for socket polling (a
/// pass is up to 128 task runs, so the clock is read every pass).
const POLL_PASSES: u32 = 1;
/// How often watched descriptors are polled while the router is busy. A
/// FromDevice whose ring ran dry keeps its task running for a while
/// (`BUSY_POLL`, 200 µs by default) so the router counts as busy meanwhile;
/// the other descriptors (a second interface waiting for the reply to what
/// the first one just forwarded) must still be seen at once, or every
/// round trip through a forwarder waits out that spin. A zero-timeout
/// `ppoll` costs about a microsecond; under full load a pass lasts far
/// longer than this interval, so it is about one call per pass.
const BUSY_POLL: Duration = Duration::from_micros(10);

/// The scheduler loop: run tasks; when only timers remain, wait on the
/// selector's descriptors (or sleep, or move the virtual clock) until the
/// next one; stop when the router stops, a signal arrives, or nothing is
/// left to do (no tasks, timers, or elements holding the driver).
pub fn drive_with(
    router: &Router,
    vclock: Option<&VirtualClock>,
    sel: Option<&Selector>,
    hooks: Option<&dyn LoopHooks>,
) {
    let mut passes = 0u32;
    let mut last_poll = Instant::now();
    let mut schedule = |i: usize| router.schedule_task_of(i);
    // blocks on the selector, telling the hooks (another thread's doorbell
    // must know to wake us)
    let mut block = |s: &Selector, timeout: Option<Duration>| {
        if hooks.is_none_or(|h| h.before_wait()) {
            s.wait(timeout, &mut schedule);
            if let Some(h) = hooks {
                h.after_wait();
            }
        }
    };
    loop {
        // Signals for Script elements (TYPE SIGNAL): each waiting Script
        // runs; with none waiting, INT and TERM stop the driver and any
        // other signal has its default effect. Thread 0 takes them.
        if hooks.is_none_or(|h| h.takes_signals()) {
            let mut pending = crate::console::take_pending_signals();
            while pending != 0 {
                let sig = pending.trailing_zeros() as i32;
                pending &= pending - 1;
                if !router.deliver_signal(sig) {
                    if sig == libc::SIGINT || sig == libc::SIGTERM {
                        INTERRUPTED.store(true, Ordering::Relaxed);
                    } else {
                        crate::console::default_action(sig);
                    }
                }
            }
        }
        if INTERRUPTED.load(Ordering::Relaxed) {
            router.stop();
            break;
        }
        if hooks.is_some_and(|h| !h.check(router)) {
            break;
        }
        let rs = match sel.filter(|s| s.has_fds()) {
            // A pass ends early once an element spins on an empty source
            // (a FromDevice's busy poll) and the descriptors are due for a
            // look: the reply waiting on another interface must not wait
            // out up to 128 runs of that spin.
            Some(s) => {
                let due = last_poll + BUSY_POLL;
                s.take_spinning();
                router.run_pass_until(|| s.spinning() && Instant::now() >= due)
            }
            None => router.run_pass(),
        };
        match rs {
            RunState::Busy => {
                let Some(s) = sel else { continue };
                passes += 1;
                if passes < POLL_PASSES {
                    continue;
                }
                passes = 0;
                if s.has_fds() && last_poll.elapsed() >= BUSY_POLL {
                    s.wait(Some(Duration::ZERO), &mut |i| router.schedule_task_of(i));
                    last_poll = Instant::now();
                }
            }
            RunState::Idle(t) => {
                let held = sel.is_some_and(|s| s.keeps_running());
                match (t, vclock) {
                    (None, _) if !held && !hooks.is_some_and(|h| h.idle(router)) => break,
                    (None, _) => {
                        if let Some(s) = sel {
                            block(s, None);
                        }
                    }
                    (Some(t), Some(v)) => {
                        if let Some(s) = sel.filter(|s| s.has_fds()) {
                            s.wait(Some(Duration::ZERO), &mut |i| router.schedule_task_of(i));
                        }
                        v.set(t);
                    }
                    (Some(t), None) => {
                        let now = SystemClock.now();
                        if t > now {
                            let d = real_wait((t - now).nsec());
                            match sel {
                                Some(s) => block(s, Some(d)),
                                None => {
                                    // A sleep a signal cuts short.
                                    let _ = clickos_sys::ppoll(&mut [], Some(d));
                                }
                            }
                        } else if let Some(s) = sel.filter(|s| s.has_fds()) {
                            s.wait(Some(Duration::ZERO), &mut |i| router.schedule_task_of(i));
                        }
                    }
                }
                passes = 0;
                last_poll = Instant::now();
            }
            RunState::Stopped => {
                if let Some(h) = hooks {
                    h.stopped(router);
                }
                break;
            }
        }
    }
}

/// The router's call guard in this driver
/// ([`RouterOptions::call_guard`](click::router::RouterOptions::call_guard)):
/// a handler that panics is a handler error ("handler panicked: MESSAGE")
/// and the router runs on. The default panic hook still prints the panic
/// on standard error: it is a bug, and a report should be made.
pub fn catch_handler_panic(call: &mut dyn FnMut()) -> Result<(), String> {
    // AssertUnwindSafe: what the unwind leaves behind stays memory-safe.
    // The router clears the busy flags of the elements it unwinds through
    // and its RefCell borrows end with their guards; the element whose
    // handler panicked may be left half-updated, which is what the error
    // reports.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(call))
        .map_err(|p| clickos_sys::panic_message(&*p))
}
