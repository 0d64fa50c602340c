//! Doorbells: eventfds that wake whoever polls them.

use std::io;
pub use vmm_sys_util::eventfd::EventFd;
use vmm_sys_util::eventfd::{EFD_CLOEXEC, EFD_NONBLOCK};

/// A non-blocking, close-on-exec eventfd (a process that inherits one must
/// be given it explicitly: see `clear_cloexec`).
pub fn eventfd() -> io::Result<EventFd> {
    EventFd::new(EFD_NONBLOCK | EFD_CLOEXEC)
}

/// Adds one to the counter (wakes whoever polls it). Errors (`EAGAIN` at
/// saturation) are harmless: the counter is non-zero either way.
#[inline]
pub fn signal(e: &EventFd) {
    let _ = e.write(1);
}

/// Resets the counter (a non-blocking read; `EAGAIN` when already zero).
#[inline]
pub fn drain(e: &EventFd) {
    let _ = e.read();
}
