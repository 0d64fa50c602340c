//! Thin wrappers over the Linux primitives the thread and process levels
//! share: eventfds, memfds, shared mappings and `poll`.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// A non-blocking, close-on-exec eventfd.
pub fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: plain syscall; the result is checked.
    let fd = cvt(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) })?;
    // SAFETY: `fd` is a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A close-on-exec memfd of `size` bytes.
pub fn memfd(name: &str, size: u64) -> io::Result<OwnedFd> {
    let cname = std::ffi::CString::new(name).map_err(|_| io::ErrorKind::InvalidInput)?;
    // SAFETY: `cname` is a valid C string; the result is checked.
    let fd = cvt(unsafe { libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC) })?;
    // SAFETY: fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: plain syscall on our descriptor.
    cvt(unsafe { libc::ftruncate(fd.as_raw_fd(), size as libc::off_t) })?;
    Ok(fd)
}

/// Adds one to an eventfd counter (wakes whoever polls it).
pub fn signal(fd: RawFd) {
    let one: u64 = 1;
    // SAFETY: writes 8 bytes from a local; errors (EAGAIN at saturation,
    // EBADF after close) are harmless here.
    unsafe { libc::write(fd, &one as *const u64 as *const libc::c_void, 8) };
}

/// Resets an eventfd counter (non-blocking read).
pub fn drain(fd: RawFd) {
    let mut v: u64 = 0;
    // SAFETY: reads 8 bytes into a local; EAGAIN when already zero.
    unsafe { libc::read(fd, &mut v as *mut u64 as *mut libc::c_void, 8) };
}

/// Waits until one of `fds` is readable or `timeout` passes (`None` =
/// forever). Returns true when some fd is readable.
pub fn poll_in(fds: &[RawFd], timeout: Option<Duration>) -> bool {
    let mut pfds: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ts = timeout.map(|d| libc::timespec {
        tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    });
    let tsp = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `pfds` and `ts` outlive the call; no signal mask change.
    let r = unsafe {
        libc::ppoll(
            pfds.as_mut_ptr(),
            pfds.len() as libc::nfds_t,
            tsp,
            std::ptr::null(),
        )
    };
    r > 0
}

/// A memory mapping owned by this process (shared memfd or anonymous).
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain memory; all concurrent access goes through
// atomics or bounds-checked copies in the users.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `len` bytes of `fd` shared and read-write.
    pub fn shared(fd: RawFd, len: usize) -> io::Result<Mapping> {
        // SAFETY: a fresh mapping at a kernel-chosen address; checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping {
            ptr: p as *mut u8,
            len,
        })
    }

    /// Page-aligned, zeroed private memory.
    pub fn anonymous(len: usize) -> io::Result<Mapping> {
        // SAFETY: as above.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping {
            ptr: p as *mut u8,
            len,
        })
    }

    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Leaves the memory mapped forever (a thread we cannot stop may still
    /// use it).
    pub fn leak(self) {
        std::mem::forget(self);
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: we own this mapping and nobody uses it any more.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// Clears `FD_CLOEXEC` on `fd` (async-signal-safe: usable in `pre_exec`).
pub fn clear_cloexec(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor number; checked.
    let flags = cvt(unsafe { libc::fcntl(fd, libc::F_GETFD) })?;
    // SAFETY: as above.
    cvt(unsafe { libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) })?;
    Ok(())
}

/// Signal names for messages.
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
