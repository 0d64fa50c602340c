//! Memfds and the mappings of shared memory (guest RAM, control regions,
//! vNIC regions).

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// A close-on-exec memfd of `size` bytes (`name` shows in
/// `/proc/PID/fd` and `/proc/PID/maps`).
pub fn memfd(name: &CStr, size: u64) -> io::Result<OwnedFd> {
    // SAFETY: `name` is a valid NUL-terminated string; the result is checked.
    let fd = crate::cvt(unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) })?;
    // SAFETY: `fd` was just returned to us and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: plain syscall on our descriptor.
    crate::cvt(unsafe { libc::ftruncate(fd.as_raw_fd(), size as libc::off_t) })?;
    Ok(fd)
}

/// Allocated bytes of a memfd (its resident pages).
pub fn memfd_bytes(fd: BorrowedFd<'_>) -> u64 {
    // SAFETY: `stat` is plain data; fstat fills it in or fails.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat on a descriptor we borrow, into a local.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } == 0 {
        st.st_blocks as u64 * 512
    } else {
        0
    }
}

/// A read-write memory mapping owned by this process, unmapped on drop.
///
/// The memory is shared with other threads, processes or a guest, so it is
/// only ever handed out as a raw pointer: users reach it through atomics
/// or bounds-checked copies.
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain memory; all concurrent access goes through
// atomics or bounds-checked copies in the users.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

/// `mmap(addr, len, PROT_READ | PROT_WRITE, flags, fd, offset)`.
///
/// # Safety
/// With `MAP_FIXED`, `addr..addr + len` must lie in a mapping the caller
/// owns and nobody uses (it is replaced); otherwise `addr` is null.
unsafe fn mmap_rw(
    addr: *mut u8,
    len: usize,
    flags: libc::c_int,
    fd: libc::c_int,
    offset: libc::off_t,
) -> io::Result<*mut u8> {
    // SAFETY: the caller's contract for MAP_FIXED; otherwise the kernel
    // picks a fresh range.
    let p = unsafe {
        libc::mmap(
            addr as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            fd,
            offset,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(p as *mut u8)
}

impl Mapping {
    /// Maps the first `len` bytes of `fd`, shared and read-write.
    pub fn shared(fd: BorrowedFd<'_>, len: usize) -> io::Result<Mapping> {
        // SAFETY: no MAP_FIXED: a fresh range.
        let ptr = unsafe {
            mmap_rw(
                std::ptr::null_mut(),
                len,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )?
        };
        Ok(Mapping { ptr, len })
    }

    /// Maps `len` bytes of `fd` from `offset`, shared, read-write and
    /// prefaulted (`MAP_POPULATE`): the rings a socket shares with the
    /// kernel (AF_PACKET, AF_XDP), where `offset` selects the ring.
    pub fn shared_populated(fd: BorrowedFd<'_>, len: usize, offset: u64) -> io::Result<Mapping> {
        let offset = libc::off_t::try_from(offset).map_err(|_| io::ErrorKind::InvalidInput)?;
        // SAFETY: no MAP_FIXED: a fresh range.
        let ptr = unsafe {
            mmap_rw(
                std::ptr::null_mut(),
                len,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd.as_raw_fd(),
                offset,
            )?
        };
        Ok(Mapping { ptr, len })
    }

    /// Page-aligned, zeroed private memory, prefaulted (`MAP_POPULATE`):
    /// packet buffers that must not fault in the data path (an AF_XDP
    /// UMEM).
    pub fn anonymous_populated(len: usize) -> io::Result<Mapping> {
        // SAFETY: no MAP_FIXED: a fresh range.
        let ptr = unsafe {
            mmap_rw(
                std::ptr::null_mut(),
                len,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )?
        };
        Ok(Mapping { ptr, len })
    }

    /// Page-aligned, zeroed private memory.
    pub fn anonymous(len: usize) -> io::Result<Mapping> {
        // SAFETY: no MAP_FIXED: a fresh range.
        let ptr = unsafe {
            mmap_rw(
                std::ptr::null_mut(),
                len,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )?
        };
        Ok(Mapping { ptr, len })
    }

    /// Replaces `len` bytes at `offset` with a private (copy-on-write)
    /// mapping of the start of `fd`: reads see the file, writes stay in
    /// this mapping.
    ///
    /// # Safety
    /// Nobody may be using that range (its old contents are gone).
    pub unsafe fn overlay_private(
        &self,
        offset: usize,
        len: usize,
        fd: BorrowedFd<'_>,
    ) -> io::Result<()> {
        if offset.checked_add(len).is_none_or(|end| end > self.len) {
            return Err(io::ErrorKind::InvalidInput.into());
        }
        // SAFETY: the range lies inside our mapping (checked above) and is
        // unused (the caller's guarantee).
        unsafe {
            mmap_rw(
                self.ptr.add(offset),
                len,
                libc::MAP_PRIVATE | libc::MAP_FIXED,
                fd.as_raw_fd(),
                0,
            )?
        };
        Ok(())
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

    /// Leaves the memory mapped for the rest of the process (a thread that
    /// cannot be stopped may still use it).
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
