//! The vCPU thread's seccomp filter, applied by the thread itself right
//! before its first KVM_RUN. Everything else (the VM, its memory, the
//! eventfds) was set up by the creating thread; the vCPU thread only runs
//! the guest, serves its hypercalls and tears the VM down when it ends.
//!
//! [`VCPU_FILTER`] is the one place to review: one entry per allowed system
//! call, with the arguments it may take and why it is needed. Anything
//! else takes the mismatch action: `KillProcess` in release builds; in
//! debug builds a SIGSYS trap that names the forbidden system call on
//! stderr, then exits the process with status 159. `CLICKOS_SECCOMP=log`
//! logs violations instead (SECCOMP_RET_LOG, for finding what a change
//! needs), `=off` disables the filter.

use clickos_sys::seccomp::{self, allow_call, arg_eq, arg_masked_eq, Action, Allow, BpfProgram};
use std::sync::OnceLock;
use vmm_sys_util::ioctl::{ioctl_expr, _IOC_NONE, _IOC_READ};

// Request numbers from the kernel ABI as kvm-bindings describes it (the
// same expression kvm-ioctls' macros expand to).
const KVM_RUN: u64 = ioctl_expr(_IOC_NONE, kvm_bindings::KVMIO, 0x80, 0) as u64;
const KVM_GET_REGS: u64 = ioctl_expr(
    _IOC_READ,
    kvm_bindings::KVMIO,
    0x81,
    std::mem::size_of::<kvm_bindings::kvm_regs>() as u32,
) as u64;
const KVM_GET_SREGS: u64 = ioctl_expr(
    _IOC_READ,
    kvm_bindings::KVMIO,
    0x83,
    std::mem::size_of::<kvm_bindings::kvm_sregs>() as u32,
) as u64;

const PROT_EXEC: u64 = libc::PROT_EXEC as u64;

/// What a vCPU thread may do once the guest runs.
pub static VCPU_FILTER: &[Allow] = &[
    allow_call!(
        SYS_ioctl,
        "KVM_RUN runs the guest; KVM_GET_REGS and KVM_GET_SREGS read RIP, RSP, \
         RFLAGS and CR2 for crash reports. No other KVM request: the VM is \
         fully set up before the thread starts",
        [arg_eq(1, KVM_RUN)],
        [arg_eq(1, KVM_GET_REGS)],
        [arg_eq(1, KVM_GET_SREGS)],
    ),
    allow_call!(SYS_read, "draining the wake eventfd (IDLE)"),
    allow_call!(
        SYS_write,
        "the console sink (a direct user's; the instance layer's only \
         queues) and, when the VM ends, the notify and kick eventfds that \
         wake the host's waiters"
    ),
    allow_call!(
        SYS_ppoll,
        "IDLE: sleeping on the wake eventfd until the guest's deadline"
    ),
    allow_call!(
        SYS_futex,
        "the locks shared with the host's threads (exit and run state) and \
         the console sink's"
    ),
    allow_call!(
        SYS_close,
        "teardown on this thread: the vCPU and VM descriptors when it ends"
    ),
    allow_call!(
        SYS_munmap,
        "teardown (the kvm_run mapping) and the allocator returning memory"
    ),
    allow_call!(
        SYS_madvise,
        "the allocator returning memory; glibc's thread exit"
    ),
    allow_call!(
        SYS_mmap,
        "the console sink's allocations; never executable",
        [arg_masked_eq(2, PROT_EXEC, 0)],
    ),
    allow_call!(
        SYS_mprotect,
        "the allocator's arenas; never executable",
        [arg_masked_eq(2, PROT_EXEC, 0)],
    ),
    allow_call!(SYS_brk, "the allocator"),
    allow_call!(
        SYS_openat,
        "read-only, close-on-exec only: glibc's allocator opens \
         /proc/sys/vm/overcommit_memory once, the first time a thread \
         shrinks a non-main arena's heap (seen once in CI on a vCPU thread); \
         nothing can be written through it",
        [arg_eq(2, (libc::O_RDONLY | libc::O_CLOEXEC) as u64)],
    ),
    allow_call!(
        SYS_clock_gettime,
        "IDLE's deadline and the console's rate limit read the clock, when \
         the vDSO falls back to the system call"
    ),
    allow_call!(
        SYS_fcntl,
        "F_GETFD only: std's debug-build check that a descriptor is open \
         before closing it",
        [arg_eq(1, libc::F_GETFD as u64)],
    ),
    allow_call!(
        SYS_sigaltstack,
        "std's thread exit (the stack-overflow handler's alternate stack)"
    ),
    allow_call!(SYS_rt_sigprocmask, "glibc's thread exit blocks signals"),
    allow_call!(
        SYS_rt_sigreturn,
        "returning from the kick signal's handler (how `kill` interrupts \
         KVM_RUN)"
    ),
    allow_call!(SYS_sched_yield, "lock back-off in the allocator and std"),
    allow_call!(SYS_exit, "the thread's end"),
    allow_call!(
        SYS_exit_group,
        "the SIGSYS reporter (debug builds) ends the process; so does an \
         abort"
    ),
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Enforce,
    Log,
    Off,
}

fn mode() -> Mode {
    static M: OnceLock<Mode> = OnceLock::new();
    *M.get_or_init(|| match std::env::var("CLICKOS_SECCOMP").as_deref() {
        Ok("log") => Mode::Log,
        Ok("off") => Mode::Off,
        _ => Mode::Enforce,
    })
}

fn build() -> Result<BpfProgram, String> {
    let mismatch = match mode() {
        Mode::Log => Action::Log,
        _ if cfg!(debug_assertions) => Action::Trap,
        _ => Action::KillProcess,
    };
    seccomp::compile(VCPU_FILTER, &[], mismatch)
}

pub fn apply_vcpu_filter() -> Result<(), String> {
    if mode() == Mode::Off {
        return Ok(());
    }
    static PROG: OnceLock<Result<BpfProgram, String>> = OnceLock::new();
    let prog = PROG.get_or_init(build).as_ref().map_err(|e| e.clone())?;
    seccomp::apply(prog)
}

/// Debug builds: report a forbidden system call by number, then exit.
pub fn install_sigsys_reporter() {
    if !cfg!(debug_assertions) {
        return;
    }
    extern "C" fn on_sigsys(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
        // siginfo for SIGSYS: si_syscall is the int at offset 24 (after
        // si_call_addr) on x86-64.
        // SAFETY: the kernel passes a valid siginfo.
        let nr = unsafe { *((info as *const u8).add(24) as *const i32) };
        let mut buf = *b"clickos-vmm: vCPU thread made a forbidden system call: 0000\n";
        let mut n = nr.clamp(0, 9999) as usize;
        for i in (0..4).rev() {
            buf[buf.len() - 5 + i] = b'0' + (n % 10) as u8;
            n /= 10;
        }
        // SAFETY: async-signal-safe write and exit (both allowed).
        unsafe {
            libc::write(2, buf.as_ptr() as *const libc::c_void, buf.len());
            libc::syscall(libc::SYS_exit_group, 159);
        }
    }
    // SAFETY: installs a handler that only does async-signal-safe calls.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigsys as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGSYS, &sa, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clickos_sys::seccomp::Probe;
    use vmm_sys_util::{ioctl_io_nr, ioctl_ior_nr};

    ioctl_io_nr!(KVM_CREATE_VM, kvm_bindings::KVMIO, 0x01);
    ioctl_io_nr!(RUN, kvm_bindings::KVMIO, 0x80);
    ioctl_ior_nr!(GET_REGS, kvm_bindings::KVMIO, 0x81, kvm_bindings::kvm_regs);
    ioctl_ior_nr!(
        GET_SREGS,
        kvm_bindings::KVMIO,
        0x83,
        kvm_bindings::kvm_sregs
    );

    #[test]
    fn the_request_numbers_are_kvms() {
        assert_eq!(KVM_RUN, 0xAE80);
        assert_eq!(KVM_RUN, RUN() as u64);
        assert_eq!(KVM_GET_REGS, GET_REGS() as u64);
        assert_eq!(KVM_GET_SREGS, GET_SREGS() as u64);
    }

    fn prog() -> BpfProgram {
        seccomp::compile(VCPU_FILTER, &[], Action::KillProcess).unwrap()
    }

    /// Each call runs in a child under the filter; the descriptors do not
    /// exist there, so an allowed call fails with EBADF and goes on.
    fn run(call: impl FnOnce()) -> Probe {
        // SAFETY: the calls below are raw system calls only.
        unsafe { seccomp::probe(&prog(), call) }
    }

    fn ioctl(req: u64) -> impl FnOnce() {
        move || {
            // SAFETY: an ioctl on a descriptor that does not exist.
            unsafe { libc::ioctl(999, req as libc::c_ulong, 0) };
        }
    }

    fn mmap(prot: i32) -> impl FnOnce() {
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
    }

    #[test]
    fn the_vcpu_filter_allows_what_the_thread_does() {
        for req in [KVM_RUN, KVM_GET_REGS, KVM_GET_SREGS] {
            assert_eq!(run(ioctl(req)), Probe::Allowed, "ioctl {req:#x}");
        }
        let rw = || {
            let mut v = 0u64;
            let ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: reads and writes of a local on a missing descriptor,
            // and a ppoll of nothing for no time.
            unsafe {
                libc::read(999, &mut v as *mut u64 as *mut libc::c_void, 8);
                libc::write(999, &v as *const u64 as *const libc::c_void, 8);
                libc::ppoll(std::ptr::null_mut(), 0, &ts, std::ptr::null());
                libc::close(999);
                libc::fcntl(999, libc::F_GETFD);
            }
        };
        assert_eq!(run(rw), Probe::Allowed);
        assert_eq!(
            run(mmap(libc::PROT_READ | libc::PROT_WRITE)),
            Probe::Allowed
        );
    }

    #[test]
    fn the_vcpu_filter_denies_the_rest() {
        let sigsys = Probe::Killed(libc::SIGSYS);
        // Creating VMs, opening files, executable memory, sockets.
        assert_eq!(run(ioctl(KVM_CREATE_VM() as u64)), sigsys);
        let open = || {
            // SAFETY: opening a file by a NUL-terminated path.
            unsafe { libc::open(c"/etc/passwd".as_ptr(), libc::O_RDONLY) };
        };
        assert_eq!(run(open), sigsys);
        assert_eq!(run(mmap(libc::PROT_READ | libc::PROT_EXEC)), sigsys);
        let socket = || {
            // SAFETY: a plain socket call.
            unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
        };
        assert_eq!(run(socket), sigsys);
        let setfl = || {
            // SAFETY: fcntl on a missing descriptor.
            unsafe { libc::fcntl(999, libc::F_SETFL, 0) };
        };
        assert_eq!(run(setfl), sigsys);
    }
}
