//! The confined process's seccomp filter: what a process-level instance
//! may do once the engine runs (applied by the child itself, last, after
//! it mapped its regions and closed every other descriptor).
//!
//! [`PROCESS_FILTER`] is the one place to review. It was measured with
//! `strace -f` over the scenario suite (boot, handlers, installs, vNIC
//! echo, timers, panic, oom); anything else kills the process (SIGSYS),
//! which the parent reports as "a system call the seccomp filter forbids".
//! No open, no socket, no exec, no ioctl, no mprotect, no executable
//! mappings, no signals to any other process.
//!
//! Its parameters are the child's descriptors, `wake` (the wake eventfd,
//! the only one it reads) and `notify` (the done eventfd and the vNIC
//! kicks, which it writes, like standard error), and `self`, its own pid
//! as it sees it (1, in its own PID namespace).

use clickos_sys::seccomp::{
    self, allow_call, arg_eq, arg_is, arg_masked_eq, Action, Allow, BpfProgram,
};
use std::os::fd::RawFd;

/// What a confined instance process may do.
pub static PROCESS_FILTER: &[Allow] = &[
    allow_call!(
        SYS_read,
        "draining the wake eventfd after IDLE; nothing else is read",
        [arg_is(0, "wake")],
    ),
    allow_call!(
        SYS_write,
        "console lines and panic messages on standard error (the parent \
         forwards them), and notifications to the host: the done eventfd \
         and the vNIC kicks",
        [arg_eq(0, 2)],
        [arg_is(0, "notify")],
    ),
    allow_call!(
        SYS_ppoll,
        "IDLE: sleeping on the wake eventfd until the next timer"
    ),
    allow_call!(SYS_futex, "std's locks and once-cells"),
    allow_call!(
        SYS_mmap,
        "the allocator: large allocations and new arenas; never executable",
        [arg_masked_eq(2, libc::PROT_EXEC as u64, 0)],
    ),
    allow_call!(SYS_munmap, "the allocator returning memory"),
    allow_call!(SYS_mremap, "the allocator growing a large allocation"),
    allow_call!(SYS_brk, "the allocator's heap"),
    allow_call!(SYS_madvise, "the allocator returning memory"),
    allow_call!(
        SYS_clock_gettime,
        "the clock, when the vDSO falls back to the system call"
    ),
    allow_call!(SYS_exit, "leaving (a thread's end)"),
    allow_call!(SYS_exit_group, "leaving: STOP, a panic, a setup failure"),
    allow_call!(SYS_rt_sigreturn, "returning from a signal handler"),
    allow_call!(
        SYS_rt_sigprocmask,
        "abort() (out of memory) blocks signals before raising SIGABRT"
    ),
    allow_call!(
        SYS_rt_sigaction,
        "abort()'s fallback when raise() returns: reset SIGABRT's handler"
    ),
    allow_call!(SYS_getpid, "abort() raises SIGABRT at its own process"),
    allow_call!(SYS_gettid, "abort() raises SIGABRT at its own thread"),
    allow_call!(
        SYS_tgkill,
        "abort() raises SIGABRT at its own process, and only there",
        [arg_is(0, "self")],
    ),
];

/// Compiles [`PROCESS_FILTER`] for the child's descriptors and its own
/// pid (`me`, as `getpid` gives it); anything else kills the process.
pub fn compile(wake: RawFd, notify: &[RawFd], me: libc::pid_t) -> Result<BpfProgram, String> {
    let notify: Vec<u64> = notify.iter().map(|&fd| fd as u64).collect();
    seccomp::compile(
        PROCESS_FILTER,
        &[
            ("wake", &[wake as u64]),
            ("notify", &notify),
            ("self", &[me as u64]),
        ],
        Action::KillProcess,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clickos_sys::seccomp::Probe;

    const WAKE: RawFd = 900;
    const DONE: RawFd = 901;
    const KICK: RawFd = 902;

    /// Each call runs in a child under the filter for descriptors that do
    /// not exist there: an allowed call fails with EBADF and goes on.
    fn run(call: impl FnOnce()) -> Probe {
        let prog = compile(WAKE, &[DONE, KICK], 1).unwrap();
        // SAFETY: the calls below are raw system calls only.
        unsafe { seccomp::probe(&prog, call) }
    }

    fn read(fd: RawFd) -> impl FnOnce() {
        move || {
            let mut v = 0u64;
            // SAFETY: reads into a local.
            unsafe { libc::read(fd, &mut v as *mut u64 as *mut libc::c_void, 8) };
        }
    }

    fn write(fd: RawFd) -> impl FnOnce() {
        move || {
            // SAFETY: a zero-length write.
            unsafe { libc::write(fd, std::ptr::null(), 0) };
        }
    }

    #[test]
    fn the_process_filter_allows_what_the_instance_does() {
        assert_eq!(run(read(WAKE)), Probe::Allowed);
        for fd in [2, DONE, KICK] {
            assert_eq!(run(write(fd)), Probe::Allowed, "write to {fd}");
        }
        let idle_and_memory = || {
            let ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: a ppoll of nothing for no time; a fresh anonymous
            // mapping unmapped again.
            unsafe {
                libc::ppoll(std::ptr::null_mut(), 0, &ts, std::ptr::null());
                let p = libc::mmap(
                    std::ptr::null_mut(),
                    4096,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                );
                libc::munmap(p, 4096);
                libc::getpid();
                // abort()'s signal at itself (pid 1 in its namespace).
                libc::syscall(libc::SYS_tgkill, 1, 1, 0);
            }
        };
        assert_eq!(run(idle_and_memory), Probe::Allowed);
    }

    /// The filter for a process whose own pid is `me` (the probe child's
    /// real pid does not matter: the filter only compares arguments).
    fn run_as(me: libc::pid_t, call: impl FnOnce()) -> Probe {
        let prog = seccomp::compile(
            PROCESS_FILTER,
            &[
                ("wake", &[WAKE as u64]),
                ("notify", &[DONE as u64, KICK as u64]),
                ("self", &[me as u64]),
            ],
            Action::KillProcess,
        )
        .unwrap();
        // SAFETY: the calls below are raw system calls only.
        unsafe { seccomp::probe(&prog, call) }
    }

    fn tgkill(pid: libc::pid_t) -> impl FnOnce() {
        move || {
            // SAFETY: signal 0 only checks that the target exists.
            unsafe { libc::syscall(libc::SYS_tgkill, pid, pid, 0) };
        }
    }

    /// `abort()` signals its own process; any other pid is refused.
    #[test]
    fn tgkill_reaches_only_the_process_itself() {
        const ME: libc::pid_t = 7_777_777;
        assert_eq!(run_as(ME, tgkill(ME)), Probe::Allowed);
        assert_eq!(run_as(ME, tgkill(1)), Probe::Killed(libc::SIGSYS));
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        assert_eq!(run_as(ME, tgkill(parent)), Probe::Killed(libc::SIGSYS));
    }

    /// No executable memory: not through mmap, not through mprotect.
    #[test]
    fn no_executable_mappings() {
        let map = |prot: i32| {
            move || {
                // SAFETY: a fresh anonymous mapping, left to the child's exit.
                unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        4096,
                        prot,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                        -1,
                        0,
                    )
                };
            }
        };
        assert_eq!(
            run_as(1, map(libc::PROT_READ | libc::PROT_WRITE)),
            Probe::Allowed
        );
        for prot in [
            libc::PROT_READ | libc::PROT_EXEC,
            libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC,
            libc::PROT_EXEC,
        ] {
            assert_eq!(
                run_as(1, map(prot)),
                Probe::Killed(libc::SIGSYS),
                "mmap prot {prot:#x}"
            );
        }
        let mprotect_exec = || {
            // SAFETY: on a null range: fails, if it were allowed.
            unsafe { libc::mprotect(std::ptr::null_mut(), 0, libc::PROT_READ | libc::PROT_EXEC) };
        };
        assert_eq!(run_as(1, mprotect_exec), Probe::Killed(libc::SIGSYS));
    }

    #[test]
    fn the_process_filter_denies_the_rest() {
        let sigsys = Probe::Killed(libc::SIGSYS);
        // Reading a notification descriptor, writing any other one.
        assert_eq!(run(read(DONE)), sigsys);
        assert_eq!(run(read(0)), sigsys);
        assert_eq!(run(write(1)), sigsys);
        assert_eq!(run(write(903)), sigsys);
        // Files, sockets, programs, descriptors, signals to others.
        let open = || {
            // SAFETY: opening a file by a NUL-terminated path.
            unsafe { libc::open(c"/etc/passwd".as_ptr(), libc::O_RDONLY) };
        };
        assert_eq!(run(open), sigsys);
        let socket = || {
            // SAFETY: a plain socket call.
            unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
        };
        assert_eq!(run(socket), sigsys);
        let close = || {
            // SAFETY: closing a descriptor that does not exist.
            unsafe { libc::close(WAKE) };
        };
        assert_eq!(run(close), sigsys);
        let kill = || {
            // SAFETY: signal 0 to init only checks permission.
            unsafe { libc::kill(1, 0) };
        };
        assert_eq!(run(kill), sigsys);
        let mprotect = || {
            // SAFETY: on a null range: fails, if it were allowed.
            unsafe { libc::mprotect(std::ptr::null_mut(), 0, libc::PROT_READ) };
        };
        assert_eq!(run(mprotect), sigsys);
    }
}
