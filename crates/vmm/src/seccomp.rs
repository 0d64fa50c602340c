//! The vCPU thread's seccomp filter, applied by the thread itself right
//! before its first KVM_RUN.
//!
//! Allowed: `ioctl` only with KVM_RUN, KVM_GET_REGS and KVM_GET_SREGS (crash
//! reports); read/write (eventfds, console), ppoll (IDLE), futex (locks),
//! close/munmap/madvise (teardown of the vCPU and VM fds, thread exit),
//! sigaltstack, rt_sigprocmask, rt_sigreturn, exit/exit_group, fcntl(F_GETFD)
//! (std's debug check before close); and, for the
//! console sink's allocations, mmap/mprotect without PROT_EXEC, brk and
//! sched_yield.
//!
//! Default action: KillProcess in release builds; in debug builds a SIGSYS
//! trap that names the forbidden system call on stderr, then exits the
//! process with status 159. `CLICKOS_SECCOMP=log` logs violations instead
//! (SECCOMP_RET_LOG, for finding what a change needs), `=off` disables the
//! filter.

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};
use std::collections::BTreeMap;
use std::sync::OnceLock;
use vmm_sys_util::{ioctl_io_nr, ioctl_ior_nr};

// Request numbers from the kernel ABI as kvm-bindings describes it (the
// same macros kvm-ioctls uses).
ioctl_io_nr!(KVM_RUN, kvm_bindings::KVMIO, 0x80);
ioctl_ior_nr!(
    KVM_GET_REGS,
    kvm_bindings::KVMIO,
    0x81,
    kvm_bindings::kvm_regs
);
ioctl_ior_nr!(
    KVM_GET_SREGS,
    kvm_bindings::KVMIO,
    0x83,
    kvm_bindings::kvm_sregs
);

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
    let e = |e: seccompiler::BackendError| e.to_string();
    let arg_eq =
        |i: u8, v: u64| SeccompCondition::new(i, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, v);
    let ioctl_ok = |req: u64| -> Result<SeccompRule, String> {
        SeccompRule::new(vec![arg_eq(1, req).map_err(e)?]).map_err(e)
    };
    let no_exec = || -> Result<SeccompRule, String> {
        SeccompRule::new(vec![SeccompCondition::new(
            2,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq(libc::PROT_EXEC as u64),
            0,
        )
        .map_err(e)?])
        .map_err(e)
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(
        libc::SYS_ioctl,
        vec![
            ioctl_ok(KVM_RUN() as u64)?,
            ioctl_ok(KVM_GET_REGS() as u64)?,
            ioctl_ok(KVM_GET_SREGS() as u64)?,
        ],
    );
    // std's debug-build check that an fd is open before closing it.
    rules.insert(
        libc::SYS_fcntl,
        vec![SeccompRule::new(vec![arg_eq(1, libc::F_GETFD as u64).map_err(e)?]).map_err(e)?],
    );
    rules.insert(libc::SYS_mmap, vec![no_exec()?]);
    rules.insert(libc::SYS_mprotect, vec![no_exec()?]);
    for sc in [
        libc::SYS_read,
        libc::SYS_write,
        libc::SYS_ppoll,
        libc::SYS_futex,
        libc::SYS_close,
        libc::SYS_munmap,
        libc::SYS_madvise,
        libc::SYS_sigaltstack,
        libc::SYS_rt_sigprocmask,
        libc::SYS_rt_sigreturn,
        libc::SYS_exit,
        libc::SYS_exit_group,
        libc::SYS_brk,
        libc::SYS_sched_yield,
    ] {
        rules.insert(sc, vec![]);
    }
    let mismatch = match mode() {
        Mode::Log => SeccompAction::Log,
        _ if cfg!(debug_assertions) => SeccompAction::Trap,
        _ => SeccompAction::KillProcess,
    };
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    let f = SeccompFilter::new(rules, mismatch, SeccompAction::Allow, arch).map_err(e)?;
    f.try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())
}

pub fn apply_vcpu_filter() -> Result<(), String> {
    if mode() == Mode::Off {
        return Ok(());
    }
    static PROG: OnceLock<Result<BpfProgram, String>> = OnceLock::new();
    let prog = PROG.get_or_init(build).as_ref().map_err(|e| e.clone())?;
    seccompiler::apply_filter(prog).map_err(|e| e.to_string())
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
