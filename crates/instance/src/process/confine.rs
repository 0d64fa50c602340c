//! How a process-level instance confines itself, *before* the engine sees
//! any input (the child calls [`confine`] once its regions are mapped; it
//! was started in its own namespaces, see [`spawn`](super::spawn)):
//!
//! 1. every descriptor but standard I/O and its eventfds is closed;
//! 2. `RLIMIT_AS` = what is mapped now + the instance's memory + a margin;
//! 3. `RLIMIT_CORE` = 0: a crash dumps no core (no copy of the instance's
//!    memory on disk);
//! 4. `PR_SET_DUMPABLE` 0: no core either way, and its `/proc` files
//!    belong to root, not to the user it runs as;
//! 5. `PR_SET_NO_NEW_PRIVS`;
//! 6. the seccomp filter [`PROCESS_FILTER`](super::seccomp::PROCESS_FILTER):
//!    reads on the wake eventfd, writes on stderr and the notification
//!    eventfds, `ppoll`, `futex`, memory management without `PROT_EXEC`,
//!    and what `exit` and `abort` need (`tgkill` at itself only); anything
//!    else kills the process (SIGSYS).

use std::os::fd::RawFd;

/// Extra address space on top of the instance's memory: the stack, the
/// allocator's bookkeeping, guard pages.
const AS_MARGIN: u64 = 16 << 20;

/// What the child keeps and how much memory it may use.
pub(super) struct Confinement<'a> {
    /// The wake eventfd (read).
    pub wake: RawFd,
    /// The done eventfd and the vNIC kicks (written).
    pub notify: &'a [RawFd],
    /// The instance's memory limit, bytes; 0 = none.
    pub memory: u64,
}

/// Confines the calling process (see the module documentation).
pub(super) fn confine(c: &Confinement<'_>) -> Result<(), String> {
    let mut keep = vec![0, 1, 2, c.wake];
    keep.extend_from_slice(c.notify);
    close_other_fds(&keep);
    if c.memory > 0 {
        let now = vm_size().ok_or("cannot read /proc/self/status")?;
        let lim = now + c.memory + AS_MARGIN;
        let rl = libc::rlimit {
            rlim_cur: lim,
            rlim_max: lim,
        };
        // SAFETY: passes a local rlimit.
        if unsafe { libc::setrlimit(libc::RLIMIT_AS, &rl) } != 0 {
            return Err(format!("setrlimit: {}", std::io::Error::last_os_error()));
        }
    }
    let no_core = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: passes a local rlimit.
    if unsafe { libc::setrlimit(libc::RLIMIT_CORE, &no_core) } != 0 {
        return Err(format!(
            "setrlimit (core): {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: plain prctls.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        return Err(format!("not dumpable: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: as above.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(format!("no_new_privs: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    let prog = super::seccomp::compile(c.wake, c.notify, me)?;
    clickos_sys::seccomp::apply(&prog)
}

/// Closes every descriptor but `keep` (anything the parent leaked without
/// close-on-exec).
fn close_other_fds(keep: &[RawFd]) {
    let fds: Vec<RawFd> = match std::fs::read_dir("/proc/self/fd") {
        Ok(d) => d
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse().ok())
            .collect(),
        Err(_) => return,
    };
    for fd in fds {
        if !keep.contains(&fd) {
            // SAFETY: closes a descriptor nothing in this process uses (the
            // directory iterator's own one is gone by now; closing it again
            // fails harmlessly).
            unsafe { libc::close(fd) };
        }
    }
}

/// Current address-space size (VmSize), bytes.
fn vm_size() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let l = s.lines().find(|l| l.starts_with("VmSize:"))?;
    Some(l.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}
