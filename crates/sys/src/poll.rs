//! `ppoll(2)`.

use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

fn timespec(d: Duration) -> libc::timespec {
    libc::timespec {
        // Clamped: 68 years is forever here.
        tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    }
}

/// `ppoll(fds, timeout)` (`None` = no timeout) without changing the signal
/// mask; returns how many descriptors have events. `EINTR` is an error
/// (`ErrorKind::Interrupted`), for the caller to retry or not.
pub fn ppoll(fds: &mut [libc::pollfd], timeout: Option<Duration>) -> io::Result<usize> {
    let ts = timeout.map(timespec);
    let tsp = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `fds` is an exclusively borrowed array of `fds.len()` pollfds;
    // `tsp` is null or points to a timespec that outlives the call; a null
    // signal mask leaves the mask unchanged.
    let r = unsafe {
        libc::ppoll(
            fds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            tsp,
            std::ptr::null(),
        )
    };
    crate::cvt(r).map(|n| n as usize)
}

/// Waits until `fd` is readable or `timeout` passes (`None` = forever).
/// True when it is readable; false on timeout, signal or error.
pub fn wait_readable(fd: &impl AsRawFd, timeout: Option<Duration>) -> bool {
    let mut pfd = [libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    }];
    matches!(ppoll(&mut pfd, timeout), Ok(n) if n > 0)
}
