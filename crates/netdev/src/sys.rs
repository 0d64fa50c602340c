//! The system-call helpers the sockets share: a memory mapping unmapped on
//! drop (rings and the AF_XDP UMEM) and typed `setsockopt`/`getsockopt`.

use crate::last_err;
use std::io;
use std::os::fd::RawFd;

/// A shared memory mapping, unmapped on drop.
pub struct Mmap {
    ptr: *mut u8,
    len: usize,
}

impl Mmap {
    /// Maps `len` bytes of `fd` at `offset` (a ring), or anonymous memory
    /// when `fd` is `None` (an AF_XDP UMEM).
    pub fn new(fd: Option<RawFd>, len: usize, offset: i64) -> io::Result<Mmap> {
        let (flags, fd) = match fd {
            Some(fd) => (libc::MAP_SHARED | libc::MAP_POPULATE, fd),
            None => (
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
            ),
        };
        // SAFETY: a fresh mapping chosen by the kernel (null hint); the
        // result is checked before use.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                fd,
                offset as libc::off_t,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(last_err());
        }
        Ok(Mmap {
            ptr: ptr as *mut u8,
            len,
        })
    }

    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` describe a mapping this value created and
        // nothing else unmaps.
        unsafe {
            libc::munmap(self.ptr as *mut libc::c_void, self.len);
        }
    }
}

/// setsockopt with a plain value.
pub fn setsockopt<T>(fd: RawFd, level: i32, name: i32, v: &T) -> io::Result<()> {
    // SAFETY: `v` points to a valid T of the given size for the call.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            v as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if r < 0 {
        Err(last_err())
    } else {
        Ok(())
    }
}

/// getsockopt into a plain value; returns the length the kernel wrote.
pub fn getsockopt<T>(fd: RawFd, level: i32, name: i32, v: &mut T) -> io::Result<usize> {
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `v` is a valid, exclusively borrowed T of `len` bytes.
    let r =
        unsafe { libc::getsockopt(fd, level, name, v as *mut T as *mut libc::c_void, &mut len) };
    if r < 0 {
        Err(last_err())
    } else {
        Ok(len as usize)
    }
}
