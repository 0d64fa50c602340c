//! Process-wide odds and ends: descriptor inheritance, limits, the clock,
//! signal names.

use std::io;
use std::os::fd::RawFd;

/// Clears `FD_CLOEXEC` on `fd`, so that a child inherits it
/// (async-signal-safe: usable in `pre_exec`).
pub fn clear_cloexec(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor number; checked.
    let flags = crate::cvt(unsafe { libc::fcntl(fd, libc::F_GETFD) })?;
    // SAFETY: as above.
    crate::cvt(unsafe { libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) })?;
    Ok(())
}

/// Raises `RLIMIT_NOFILE` to its hard limit (once per process): a VM holds
/// several descriptors, and a thousand of them are a benchmark.
pub fn raise_nofile() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: `rlimit` is plain data.
        let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
        // SAFETY: get/setrlimit with a valid local struct.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
                r.rlim_cur = r.rlim_max;
                libc::setrlimit(libc::RLIMIT_NOFILE, &r);
            }
        }
    });
}

/// Wall-clock time, ns since the Unix epoch (`CLOCK_REALTIME`, from the
/// vDSO: no system call).
pub fn realtime_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes a local timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// The text of a panic's payload (a `&str` or `String` message; anything
/// else is named as such).
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

/// A signal's name, for messages (`"signal"` when not one of the usual).
pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGSYS => "SIGSYS",
        _ => "signal",
    }
}
