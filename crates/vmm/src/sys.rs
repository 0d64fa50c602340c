//! Small wrappers over the system calls the monitor uses.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub fn memfd(name: &CStr, size: u64) -> io::Result<OwnedFd> {
    // SAFETY: plain syscall with a valid NUL-terminated name.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just returned to us and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: plain syscall on our fd.
    if unsafe { libc::ftruncate(fd.as_raw_fd(), size as libc::off_t) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

/// A host mapping, unmapped on drop.
pub struct Mapping {
    pub ptr: *mut u8,
    pub len: usize,
}

// SAFETY: the mapping is plain shared memory; users synchronise access.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// `mmap(addr, len, RW, flags, fd, 0)`.
    ///
    /// # Safety
    /// With `MAP_FIXED`, `addr..addr+len` must lie within a mapping the
    /// caller owns (it is replaced).
    pub unsafe fn map(
        addr: *mut u8,
        len: usize,
        flags: libc::c_int,
        fd: &OwnedFd,
    ) -> io::Result<*mut u8> {
        // SAFETY: the caller's contract for MAP_FIXED; otherwise the kernel
        // picks a fresh range.
        let p = unsafe {
            libc::mmap(
                addr as *mut libc::c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(p as *mut u8)
    }

    pub fn shared(fd: &OwnedFd, len: usize) -> io::Result<Mapping> {
        // SAFETY: no MAP_FIXED, a fresh range.
        let ptr = unsafe { Self::map(std::ptr::null_mut(), len, libc::MAP_SHARED, fd)? };
        Ok(Mapping { ptr, len })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: we own this range.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// Allocated bytes of a memfd (its resident pages).
pub fn memfd_bytes(fd: &OwnedFd) -> u64 {
    // SAFETY: fstat on our fd into a zeroed struct.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd.as_raw_fd(), &mut st) == 0 {
            st.st_blocks as u64 * 512
        } else {
            0
        }
    }
}

/// Raises RLIMIT_NOFILE to its hard limit (once per process).
pub fn raise_nofile() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: get/setrlimit with a valid struct.
        unsafe {
            let mut r: libc::rlimit = std::mem::zeroed();
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
                r.rlim_cur = r.rlim_max;
                libc::setrlimit(libc::RLIMIT_NOFILE, &r);
            }
        }
    });
}

/// Wall-clock time, ns since the Unix epoch.
pub fn realtime_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}
