//! Socket options as typed values (`setsockopt(2)`, `getsockopt(2)`).

use std::io;
use std::os::fd::RawFd;

/// `setsockopt(fd, level, name, &v, size_of::<T>())`. `T` must be the
/// plain C type the option expects (an `i32`, a kernel struct).
pub fn setsockopt<T>(fd: RawFd, level: i32, name: i32, v: &T) -> io::Result<()> {
    // SAFETY: `v` points to a valid T of the size passed; the kernel only
    // reads it.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            v as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    crate::cvt(r).map(|_| ())
}

/// `getsockopt` into `v` (a plain C type, as for [`setsockopt`]); returns
/// how many bytes the kernel wrote.
pub fn getsockopt<T>(fd: RawFd, level: i32, name: i32, v: &mut T) -> io::Result<usize> {
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `v` is a valid, exclusively borrowed T of `len` bytes; the
    // kernel writes at most `len` bytes and updates `len`.
    let r =
        unsafe { libc::getsockopt(fd, level, name, v as *mut T as *mut libc::c_void, &mut len) };
    crate::cvt(r).map(|_| len as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_round_trip() {
        // SAFETY: a plain socket call; the descriptor is closed below.
        let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_DGRAM, 0) };
        assert!(fd >= 0);
        setsockopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, &65536i32).unwrap();
        let mut v = 0i32;
        let n = getsockopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, &mut v).unwrap();
        assert_eq!(n, 4);
        assert!(v >= 65536, "SO_SNDBUF {v}");
        let e = setsockopt(-1, libc::SOL_SOCKET, libc::SO_SNDBUF, &1i32).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EBADF));
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
    }
}
