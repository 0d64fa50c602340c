//! The Linux system calls the ClickOS host side shares, written once.
//!
//! * [`memfd`], [`Mapping`]: anonymous files and the mappings of guest
//!   memory, control regions and vNIC regions;
//! * [`ppoll`], [`wait_readable`]: waiting on descriptors with a timeout;
//! * [`eventfd`], [`signal`], [`drain`]: doorbells (`vmm-sys-util`'s
//!   [`EventFd`], always non-blocking and close-on-exec);
//! * [`setsockopt`], [`getsockopt`]: socket options as typed values;
//! * `seccomp` (feature `seccomp`, on by default): seccomp filters written
//!   as tables (one entry per allowed system call, with the argument
//!   conditions and why), compiled with `seccompiler`, and a probe that
//!   runs a system call under a filter in a child process.
//!
//! ```
//! use clickos_sys::{eventfd, signal, drain, wait_readable};
//! use std::time::Duration;
//! let bell = eventfd().unwrap();
//! signal(&bell);
//! assert!(wait_readable(&bell, Some(Duration::ZERO)));
//! drain(&bell);
//! assert!(!wait_readable(&bell, Some(Duration::ZERO)));
//! ```

mod event;
mod mapping;
mod poll;
mod process;
#[cfg(feature = "seccomp")]
pub mod seccomp;
mod socket;

pub use event::{drain, eventfd, signal, EventFd};
pub use mapping::{memfd, memfd_bytes, Mapping};
pub use poll::{ppoll, wait_readable};
pub use process::{clear_cloexec, panic_message, raise_nofile, realtime_ns, signal_name};
pub use socket::{getsockopt, setsockopt};

use std::io;

/// A libc return value as an `io::Result` (negative = errno).
fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}
