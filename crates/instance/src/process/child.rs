//! `clickos __instance ID CONTROL WAKE DONE [VNICMEM:KICK]...`: the body of
//! a process-level instance (hidden; started by `clickos-instance`).
//!
//! The parent passes a memfd holding the control region (boot information
//! already written, the initial INSTALL request posted), eventfds for
//! wake-ups, replies and vNIC kicks, and one memfd per vNIC. The child maps
//! them, patches its own mapping addresses into the boot information, and
//! confines itself ([`confine`](super::confine)) *before* the engine sees
//! any input.
//!
//! A panic writes `panicked: <message>` to the console page and stderr and
//! exits with code 101 (except in a handler call, where the router's call
//! guard makes it a handler error and the instance runs on); running out
//! of memory prints Rust's "memory allocation of N bytes failed" and
//! aborts, which the `SIGABRT` handler turns into exit code 134 (as PID 1
//! of its own PID namespace the process ignores a `SIGABRT` it sends
//! itself). The parent turns all of these into `Ended`.

use super::confine::{confine, Confinement};
use super::{EXIT_ABORT, EXIT_PANIC, EXIT_SETUP};
use crate::platform::{ConsoleOut, Doorbells, EventPlatform};
use clickos_ring::layout::{self, BootInfo};
use clickos_sys::{EventFd, Mapping};
use std::os::fd::{BorrowedFd, FromRawFd, RawFd};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

static CONTROL: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());

/// Writes all of `b` to standard error with plain `write`s (allowed by the
/// filter; no locks, usable from the panic hook).
pub(super) fn write_stderr(b: &[u8]) {
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
        let msg = clickos_sys::panic_message(info.payload());
        if crate::platform::in_guarded_call() {
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

/// `abort()` exits with [`EXIT_ABORT`] (see the module documentation).
fn install_abort_handler() {
    extern "C" fn on_abort(_: libc::c_int) {
        // SAFETY: async-signal-safe exit (allowed by the filter).
        unsafe { libc::_exit(EXIT_ABORT) };
    }
    // SAFETY: installs a handler that only calls `_exit`.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_abort as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGABRT, &sa, std::ptr::null_mut());
    }
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

/// Runs one process-level instance; returns the exit code.
pub fn child_main(args: &[String]) -> i32 {
    install_panic_hook();
    install_abort_handler();
    let a = match parse(args) {
        Ok(a) => a,
        Err(m) => return fail(&m),
    };
    // SAFETY: the parent passed us this descriptor; it stays open until
    // closed below.
    let control_fd = unsafe { BorrowedFd::borrow_raw(a.control) };
    let control = match Mapping::shared(control_fd, layout::CONTROL_SIZE) {
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
        // SAFETY: as for the control region's descriptor.
        match Mapping::shared(unsafe { BorrowedFd::borrow_raw(memfd) }, size) {
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
    let notify: Vec<RawFd> = [a.done]
        .into_iter()
        .chain(a.vnics.iter().map(|&(_, k)| k))
        .collect();
    let confinement = Confinement {
        wake: a.wake,
        notify: &notify,
        memory: bi.mem_size,
    };
    if let Err(m) = confine(&confinement) {
        return fail(&m);
    }
    // SAFETY: the parent passed us these eventfds; nothing else in this
    // process owns them.
    let bells = unsafe {
        Doorbells {
            wake: EventFd::from_raw_fd(a.wake),
            done: EventFd::from_raw_fd(a.done),
            kicks: a
                .vnics
                .iter()
                .map(|&(_, k)| EventFd::from_raw_fd(k))
                .collect(),
        }
    };
    // Never dropped: closing them would be a system call the filter forbids.
    let bells = Arc::new(bells);
    let platform = EventPlatform {
        bells: bells.clone(),
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
    std::mem::forget(bells);
    // SAFETY: leave at once: nothing to flush, and exit handlers might make
    // system calls the filter forbids.
    unsafe { libc::_exit(code as i32) }
}
