//! `clickos __instance ID CONTROL WAKE DONE [VNICMEM:KICK]...`: the body of
//! a process-level instance (hidden; started by `clickos-instance`).
//!
//! The parent passes a memfd holding the control region (boot information
//! already written, the initial INSTALL request posted), eventfds for
//! wake-ups, replies and vNIC kicks, and one memfd per vNIC. The child maps
//! them, patches its own mapping addresses into the boot information, and
//! confines itself *before* the engine sees any input:
//!
//! 1. new network, mount, IPC and UTS namespaces (reported once on stderr
//!    and skipped if not permitted),
//! 2. `RLIMIT_AS` = what is mapped now + the instance's memory + a margin,
//! 3. `PR_SET_NO_NEW_PRIVS`,
//! 4. a seccomp allow-list: reads on the wake eventfd, writes on stderr and
//!    the notification eventfds, `ppoll`, `futex`, memory management, and
//!    what `exit`/`abort` need; anything else kills the process (SIGSYS).
//!
//! A panic writes `panicked: <message>` to the console page and stderr and
//! exits with code 101 (except in a handler call, where the router's call
//! guard makes it a handler error and the instance runs on); running out
//! of memory aborts with Rust's "memory allocation of N bytes failed"
//! (SIGABRT). The parent turns both into `Ended`.

use clickos_instance::platform::{ConsoleOut, EventPlatform};
use clickos_instance::process::{EXIT_PANIC, EXIT_SETUP};
use clickos_instance::sys::Mapping;
use clickos_ring::layout::{self, BootInfo};
use std::collections::BTreeMap;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicPtr, Ordering};

/// Extra address space on top of the instance's memory: the stack, the
/// allocator's bookkeeping, guard pages.
const AS_MARGIN: u64 = 16 << 20;

static CONTROL: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());

fn write_stderr(b: &[u8]) {
    let mut b = b;
    while !b.is_empty() {
        // SAFETY: writes from a live slice to fd 2.
        let n = unsafe { libc::write(2, b.as_ptr() as *const libc::c_void, b.len()) };
        if n <= 0 {
            break;
        }
        b = &b[n as usize..];
    }
}

fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            "panic with a non-string payload".to_string()
        };
        if clickos_instance::platform::in_guarded_call() {
            // a handler panicked: the router's call guard turns it into a
            // handler error, and the instance runs on
            write_stderr(format!("handler panicked: {}\n", msg.replace('\n', " ")).as_bytes());
            return;
        }
        let line = format!("panicked: {}\n", msg.replace('\n', " "));
        let control = CONTROL.load(Ordering::Relaxed);
        if !control.is_null() {
            let n = line.len().min(layout::CONSOLE_SIZE);
            // SAFETY: the console page is CONSOLE_SIZE bytes inside the
            // mapped control region; n <= CONSOLE_SIZE.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    line.as_ptr(),
                    control.add(layout::CONSOLE_OFF as usize),
                    n,
                )
            };
        }
        write_stderr(line.as_bytes());
        // SAFETY: ends the process at once, without unwinding through the
        // engine.
        unsafe { libc::_exit(EXIT_PANIC) };
    }));
}

fn fail(msg: &str) -> i32 {
    write_stderr(format!("clickos instance: {msg}\n").as_bytes());
    EXIT_SETUP
}

fn parse_fd(s: &str) -> Result<RawFd, String> {
    s.parse::<RawFd>()
        .ok()
        .filter(|&f| f > 2)
        .ok_or_else(|| format!("bad descriptor '{s}'"))
}

struct Args {
    control: RawFd,
    wake: RawFd,
    done: RawFd,
    vnics: Vec<(RawFd, RawFd)>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    if args.len() < 4 {
        return Err("usage: clickos __instance ID CONTROL WAKE DONE [VNICMEM:KICK]...".into());
    }
    let _id: u32 = args[0].parse().map_err(|_| "bad instance id")?;
    let mut vnics = vec![];
    for v in &args[4..] {
        let (m, k) = v.split_once(':').ok_or_else(|| format!("bad vNIC '{v}'"))?;
        vnics.push((parse_fd(m)?, parse_fd(k)?));
    }
    Ok(Args {
        control: parse_fd(&args[1])?,
        wake: parse_fd(&args[2])?,
        done: parse_fd(&args[3])?,
        vnics,
    })
}

/// Closes every descriptor but stdio and ours (anything the parent leaked
/// without close-on-exec).
fn close_other_fds(a: &Args) {
    let mut keep = vec![0, 1, 2, a.wake, a.done];
    keep.extend(a.vnics.iter().map(|&(_, k)| k));
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

fn confine(a: &Args, mem: u64) -> Result<(), String> {
    // SAFETY: plain syscall; failure is reported and tolerated.
    let r = unsafe {
        libc::unshare(
            libc::CLONE_NEWNET | libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS,
        )
    };
    if r != 0 {
        write_stderr(
            format!(
                "clickos instance: note: no namespaces ({}); continuing without them\n",
                std::io::Error::last_os_error()
            )
            .as_bytes(),
        );
    }
    if mem > 0 {
        let now = vm_size().ok_or("cannot read /proc/self/status")?;
        let lim = now + mem + AS_MARGIN;
        let rl = libc::rlimit {
            rlim_cur: lim,
            rlim_max: lim,
        };
        // SAFETY: passes a local rlimit.
        if unsafe { libc::setrlimit(libc::RLIMIT_AS, &rl) } != 0 {
            return Err(format!("setrlimit: {}", std::io::Error::last_os_error()));
        }
    }
    // SAFETY: plain prctl.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(format!("no_new_privs: {}", std::io::Error::last_os_error()));
    }
    seccomp(a)
}

fn seccomp(a: &Args) -> Result<(), String> {
    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };
    let e = |e: seccompiler::BackendError| format!("seccomp: {e}");
    let fd_is = |fd: RawFd| -> Result<SeccompRule, String> {
        SeccompRule::new(vec![SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            fd as u64,
        )
        .map_err(e)?])
        .map_err(e)
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(libc::SYS_read, vec![fd_is(a.wake)?]);
    let mut w = vec![fd_is(2)?, fd_is(a.done)?];
    for &(_, k) in &a.vnics {
        w.push(fd_is(k)?);
    }
    rules.insert(libc::SYS_write, w);
    // Measured with `strace -f` over the scenario suite (boot, handlers,
    // installs, vNIC echo, timers, panic, oom): ppoll, read, write, mmap,
    // brk, exit_group, and getpid/gettid/tgkill/rt_sigprocmask for abort().
    // munmap/mremap/madvise/futex are the allocator's and std's other paths;
    // clock_gettime is the vDSO's fallback; rt_sigaction is abort()'s
    // fallback when raise() returns. No mprotect (no new executable memory),
    // no open, no socket, no exec.
    for sc in [
        libc::SYS_ppoll,
        libc::SYS_futex,
        libc::SYS_mmap,
        libc::SYS_munmap,
        libc::SYS_mremap,
        libc::SYS_brk,
        libc::SYS_madvise,
        libc::SYS_clock_gettime,
        libc::SYS_exit,
        libc::SYS_exit_group,
        libc::SYS_rt_sigreturn,
        libc::SYS_rt_sigprocmask,
        libc::SYS_rt_sigaction,
        libc::SYS_getpid,
        libc::SYS_gettid,
        libc::SYS_tgkill,
    ] {
        rules.insert(sc, vec![]);
    }
    let arch = if cfg!(target_arch = "x86_64") {
        TargetArch::x86_64
    } else if cfg!(target_arch = "aarch64") {
        TargetArch::aarch64
    } else {
        return Err("seccomp: unsupported architecture".into());
    };
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::KillProcess,
        SeccompAction::Allow,
        arch,
    )
    .map_err(e)?;
    let prog: BpfProgram = filter.try_into().map_err(e)?;
    seccompiler::apply_filter(&prog).map_err(|e| format!("seccomp: {e}"))
}

/// Runs one process-level instance; returns the exit code.
pub fn main(args: &[String]) -> i32 {
    install_panic_hook();
    let a = match parse(args) {
        Ok(a) => a,
        Err(m) => return fail(&m),
    };
    let control = match Mapping::shared(a.control, layout::CONTROL_SIZE) {
        Ok(m) => m,
        Err(e) => return fail(&format!("mapping the control region: {e}")),
    };
    CONTROL.store(control.ptr(), Ordering::Relaxed);
    let bi_ptr = control.ptr().wrapping_add(layout::BOOTINFO_OFF as usize) as *mut BootInfo;
    // SAFETY: the boot information page is inside the mapping, page-aligned.
    let mut bi: BootInfo = unsafe { std::ptr::read_volatile(bi_ptr) };
    if let Err(e) = bi.validate() {
        return fail(e);
    }
    if bi.nvnics as usize != a.vnics.len() {
        return fail("vNIC count does not match the boot information");
    }
    let mut maps = vec![];
    for (k, &(memfd, _)) in a.vnics.iter().enumerate() {
        let size = bi.vnics[k].size as usize;
        match Mapping::shared(memfd, size) {
            Ok(m) => {
                bi.vnics[k].base = m.ptr() as u64;
                maps.push(m);
            }
            Err(e) => return fail(&format!("mapping vNIC {k}: {e}")),
        }
        // SAFETY: the memfd is ours and no longer needed once mapped.
        unsafe { libc::close(memfd) };
    }
    // SAFETY: as above; the descriptor is not used again.
    unsafe { libc::close(a.control) };
    bi.control_base = control.ptr() as u64;
    // SAFETY: as above; the parent does not read our addresses back.
    unsafe { std::ptr::write_volatile(bi_ptr, bi) };
    close_other_fds(&a);
    if let Err(m) = confine(&a, bi.mem_size) {
        return fail(&m);
    }
    let platform = EventPlatform {
        wake: a.wake,
        done: a.done,
        kicks: a.vnics.iter().map(|&(_, k)| k).collect::<Vec<_>>().into(),
        console: ConsoleOut::Stderr,
        memory_limited: bi.mem_size > 0,
        killed: None,
    };
    // SAFETY: the control region and every vNIC region are mapped (and stay
    // mapped: `control` and `maps` live until we exit) at the addresses the
    // boot information now gives.
    let code = unsafe { clickos_guest::run(control.ptr(), platform) };
    std::mem::forget(maps);
    std::mem::forget(control);
    // SAFETY: leave at once: nothing to flush, and exit handlers might make
    // system calls the filter forbids.
    unsafe { libc::_exit(code as i32) }
}
