//! The vCPU thread: runs the guest, serves its hypercalls, and leaves when
//! the guest ends or the host kills it.

use crate::{CpuState, Exit, Pause, Shared};
use clickos_ring::layout::{port, CONSOLE_OFF, CONSOLE_SIZE, MAILBOX_OFF};
use clickos_ring::Mailbox;
use kvm_ioctls::{VcpuExit, VcpuFd, VmFd};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The signal that kicks a vCPU thread out of KVM_RUN (no-op handler,
/// no SA_RESTART).
pub fn kick_signal() -> libc::c_int {
    libc::SIGRTMIN()
}

pub fn install_signal_handlers() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        extern "C" fn noop(_: libc::c_int) {}
        // SAFETY: installs an async-signal-safe no-op handler.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = noop as *const () as usize;
            sa.sa_flags = 0;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(kick_signal(), &sa, std::ptr::null_mut());
        }
        crate::seccomp::install_sigsys_reporter();
    });
}

/// Everything the thread owns. Dropped on the thread, so the slow parts of
/// VM teardown (closing the vCPU and VM fds) stay off the caller's path.
pub struct VcpuThread {
    pub vcpu: VcpuFd,
    pub _vm: VmFd,
    pub shared: Arc<Shared>,
    pub started: Instant,
}

impl VcpuThread {
    pub fn run(mut self) {
        let end = self.serve();
        let sh = self.shared.clone();
        {
            let mut rs = sh.run.lock().unwrap();
            rs.running = false;
            rs.immediate_exit = std::ptr::null_mut();
        }
        sh.run_cv.notify_all();
        sh.finish(end);
        // Teardown (vCPU, then VM: KVM destroys the VM on the last close).
        drop(self);
    }

    fn serve(&mut self) -> Exit {
        if let Err(e) = crate::seccomp::apply_vcpu_filter() {
            return Exit::Crashed(format!("cannot confine the vCPU thread: {e}"));
        }
        let sh = self.shared.clone();
        let ram = sh.ram as *const u8;
        let mut first = true;
        loop {
            if sh.killed.load(Ordering::Acquire) {
                return Exit::Killed(String::new());
            }
            if sh.pause_req.load(Ordering::Acquire) {
                if let Some(e) = self.park() {
                    return e;
                }
                continue;
            }
            let r = self.vcpu.run();
            if first {
                first = false;
                *sh.first_exit.lock().unwrap() = Some(self.started.elapsed());
            }
            let (port, data) = match r {
                Ok(VcpuExit::IoOut(port, data)) => {
                    if data.len() != 4 {
                        return Exit::Crashed(format!(
                            "bad hypercall: {}-byte write to port {port:#x}",
                            data.len()
                        ));
                    }
                    (
                        port,
                        u32::from_le_bytes([data[0], data[1], data[2], data[3]]),
                    )
                }
                Ok(VcpuExit::Shutdown) => return self.triple_fault(),
                Ok(VcpuExit::IoIn(port, _)) => {
                    return Exit::Crashed(format!("bad hypercall: read from port {port:#x}"));
                }
                Ok(VcpuExit::MmioRead(a, _)) | Ok(VcpuExit::MmioWrite(a, _)) => {
                    return Exit::Crashed(format!(
                        "access to unbacked guest address {a:#x}{}",
                        self.where_()
                    ));
                }
                Ok(VcpuExit::Intr) => {
                    // A kick (pause): `kill` and `pause` set their flag
                    // before `immediate_exit`, and the loop's top looks.
                    self.vcpu.set_kvm_immediate_exit(0);
                    continue;
                }
                Ok(other) => {
                    let what = format!("{other:?}");
                    return Exit::Crashed(format!("unexpected exit {what}{}", self.where_()));
                }
                Err(e) if e.errno() == libc::EINTR || e.errno() == libc::EAGAIN => {
                    self.vcpu.set_kvm_immediate_exit(0);
                    continue;
                }
                Err(e) => return Exit::Crashed(format!("KVM_RUN failed: {e}")),
            };
            match port {
                port::CONSOLE => {
                    let Some(text) = read_console(ram, data) else {
                        return Exit::Crashed(format!("bad hypercall: console length {data}"));
                    };
                    let text = text.strip_suffix('\n').unwrap_or(&text);
                    (sh.console)(sh.id, text);
                }
                port::IDLE => {
                    // SAFETY: the mailbox page is in the RAM mapping, which
                    // outlives this thread's use of it; the field is atomic.
                    let mb = unsafe { &*(ram.add(MAILBOX_OFF as usize) as *const Mailbox) };
                    let deadline = mb.idle_deadline.load(Ordering::Relaxed);
                    sh.idle(deadline);
                }
                port::EXIT => return Exit::Exited(data),
                port::PANIC => {
                    let Some(text) = read_console(ram, data.min(CONSOLE_SIZE as u32)) else {
                        return Exit::Panicked("(unreadable message)".into());
                    };
                    return Exit::Panicked(text);
                }
                port::KICK => {
                    return Exit::Crashed(format!("bad hypercall: kick of unknown vNIC {data}"));
                }
                port::CTRL_DONE => {
                    return Exit::Crashed(format!("bad hypercall: CTRL_DONE with {data}"));
                }
                p => return Exit::Crashed(format!("bad hypercall: port {p:#x} ({data:#x})")),
            }
        }
    }

    /// Parks at a safe point for a pause: completes the instruction that
    /// last exited (KVM finishes a pending port write on the next KVM_RUN
    /// before it honours `immediate_exit`), reads the registers, reports
    /// them and waits for `Resume` (`None`) or a kill.
    fn park(&mut self) -> Option<Exit> {
        let sh = self.shared.clone();
        self.vcpu.set_kvm_immediate_exit(1);
        let ran = match self.vcpu.run() {
            Err(e) if e.errno() == libc::EINTR || e.errno() == libc::EAGAIN => Ok(()),
            Ok(VcpuExit::Intr) => Ok(()),
            Ok(other) => Err(format!("the vCPU did not stop cleanly: {other:?}")),
            Err(e) => Err(format!("KVM_RUN failed: {e}")),
        };
        self.vcpu.set_kvm_immediate_exit(0);
        let state = ran.and_then(|()| {
            Ok(Box::new(CpuState {
                regs: self
                    .vcpu
                    .get_regs()
                    .map_err(|e| format!("KVM_GET_REGS: {e}"))?,
                sregs: self
                    .vcpu
                    .get_sregs()
                    .map_err(|e| format!("KVM_GET_SREGS: {e}"))?,
            }))
        });
        let mut p = sh.pause.lock().unwrap();
        *p = Pause::Parked(state);
        sh.pause_cv.notify_all();
        loop {
            if sh.killed.load(Ordering::Acquire) {
                return Some(Exit::Killed(String::new()));
            }
            if matches!(&*p, Pause::Resume) {
                *p = Pause::Running;
                sh.pause_req.store(false, Ordering::Release);
                return None;
            }
            p = sh
                .pause_cv
                .wait_timeout(p, Duration::from_millis(5))
                .unwrap()
                .0;
        }
    }

    fn where_(&self) -> String {
        match self.vcpu.get_regs() {
            Ok(r) => format!(" at RIP={:#x}", r.rip),
            Err(_) => String::new(),
        }
    }

    fn triple_fault(&self) -> Exit {
        let (rip, rsp, rflags) = match self.vcpu.get_regs() {
            Ok(r) => (r.rip, r.rsp, r.rflags),
            Err(_) => (0, 0, 0),
        };
        let cr2 = self.vcpu.get_sregs().map(|s| s.cr2).unwrap_or(0);
        let guard = self.shared.guard_page;
        let what = if (guard..guard + 4096).contains(&cr2) {
            "stack overflow (triple fault)"
        } else {
            "triple fault"
        };
        Exit::Crashed(format!(
            "{what} at RIP={rip:#x}, CR2={cr2:#x}, RSP={rsp:#x}, RFLAGS={rflags:#x}"
        ))
    }
}

/// Copies the console page's first `len` bytes (validated) as text.
fn read_console(ram: *const u8, len: u32) -> Option<String> {
    let len = len as usize;
    if len > CONSOLE_SIZE {
        return None;
    }
    let mut buf = vec![0u8; len];
    // SAFETY: the console page is in the RAM mapping; the guest may change
    // it concurrently only if it runs, and it does not while it is exited.
    unsafe { std::ptr::copy_nonoverlapping(ram.add(CONSOLE_OFF as usize), buf.as_mut_ptr(), len) };
    Some(String::from_utf8_lossy(&buf).into_owned())
}

impl Shared {
    /// IDLE: sleep on the wake eventfd until woken or the deadline (ns since
    /// the epoch, 0 = none) passes.
    fn idle(&self, deadline: u64) {
        let timeout = if deadline == 0 {
            None
        } else {
            let left = deadline as i128 - clickos_sys::realtime_ns() as i128;
            if left <= 0 {
                // Already due: just drain a pending wake-up.
                clickos_sys::drain(&self.wake);
                return;
            }
            Some(Duration::from_nanos(left.min(3600 * 1_000_000_000) as u64))
        };
        self.asleep.store(true, Ordering::Release);
        let woken = clickos_sys::wait_readable(&self.wake, timeout);
        self.asleep.store(false, Ordering::Release);
        if woken {
            clickos_sys::drain(&self.wake);
        }
    }
}
