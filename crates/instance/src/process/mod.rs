//! The `process` isolation level: the runtime in a confined child process.
//!
//! The parent creates a memfd for the control region and one per vNIC,
//! eventfds for wake-ups (host → instance), replies (`done`) and vNIC kicks,
//! and re-executes the `clickos` binary as `clickos __instance ID CONTROL
//! WAKE DONE [VNIC:KICK]...` in new user, PID, network, mount, IPC and UTS
//! namespaces ([`spawn`]) with exactly those descriptors inherited; the
//! binary hands those arguments to [`child_main`] ([`child`]), which maps
//! them, confines itself (`RLIMIT_AS`, no core dumps, not dumpable,
//! no-new-privs, a seccomp allow-list) and runs the runtime.
//!
//! One reaper thread per child forwards its standard error to the console
//! sink line by line and, at end of file, reaps it and turns the exit status
//! (plus the last lines it printed) into an [`Ended`].
//!
//! Children are spawned from one long-lived thread, so that their
//! `PR_SET_PDEATHSIG` (tied to the spawning *thread*) fires only when this
//! process dies.

mod child;
mod confine;
pub mod seccomp;
pub mod spawn;

pub use child::child_main;

use crate::backend::{Backend, ConsoleSink, Ended, LaunchSpec, Prepare};
use crate::platform::Doorbells;
use crate::thread::{vnic_infos, write_boot_info};
use clickos_ring::layout::{self, BootInfo, VnicInfo};
use clickos_sys::{drain, signal, wait_readable, Mapping};
use std::ffi::CString;
use std::io::{BufRead, BufReader};
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The longest line of an instance's standard error forwarded as it is;
/// the rest of a longer line is dropped (and counted in a marker), so that
/// one endless line cannot grow the parent.
pub const MAX_LINE: usize = 16 << 10;

/// How long `kill` waits for the killed process to be reaped.
const KILL_DEADLINE: Duration = Duration::from_secs(5);

/// Exit code of a child whose engine panicked.
pub const EXIT_PANIC: i32 = 101;
/// Exit code of a child that could not set itself up.
pub const EXIT_SETUP: i32 = 125;
/// Exit code of a child that called `abort()` (out of memory): it handles
/// `SIGABRT` by exiting with this code, because as PID 1 of its own PID
/// namespace it cannot be killed by a signal it sends itself.
pub const EXIT_ABORT: i32 = 134;

#[derive(Default)]
struct ReapState {
    ended: Option<Ended>,
    kill_reason: Option<String>,
    reaped: bool,
}

struct Reap {
    state: Mutex<ReapState>,
    cond: Condvar,
}

pub struct ProcessBackend {
    pid: libc::pid_t,
    control: Mapping,
    vnics: Vec<(Mapping, VnicInfo)>,
    _memfds: Vec<OwnedFd>,
    bells: Arc<Doorbells>,
    reap: Arc<Reap>,
    reaper: Mutex<Option<std::thread::JoinHandle<()>>>,
    phases: Vec<(&'static str, Duration)>,
}

type Job = Box<dyn FnOnce() + Send>;

/// Runs `f` on the long-lived spawner thread.
fn on_spawner<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<Job>>> = OnceLock::new();
    let tx = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("clickos-spawner".into())
            .spawn(move || {
                for job in rx {
                    job();
                }
            })
            .expect("spawning the clickos-spawner thread");
        Mutex::new(tx)
    });
    let (rtx, rrx) = mpsc::channel();
    let job: Job = Box::new(move || {
        let _ = rtx.send(f());
    });
    tx.lock()
        .unwrap_or_else(|e| e.into_inner())
        .send(job)
        .map_err(|_| "the spawner thread is gone".to_string())?;
    rrx.recv()
        .map_err(|_| "the spawner thread failed".to_string())
}

pub fn launch(spec: &LaunchSpec, prepare: Prepare) -> Result<Box<dyn Backend>, String> {
    let t0 = Instant::now();
    let infos = vnic_infos(spec)?;
    let err = |what: &str, e: std::io::Error| format!("{what}: {e}");
    let control_fd = clickos_sys::memfd(c"clickos-control", layout::CONTROL_SIZE as u64)
        .map_err(|e| err("memfd", e))?;
    let control = Mapping::shared(control_fd.as_fd(), layout::CONTROL_SIZE)
        .map_err(|e| err("mapping the control region", e))?;
    let mut bi = BootInfo::empty();
    bi.instance_id = spec.id;
    bi.mem_size = spec.memory;
    bi.flags = if spec.fault_injection {
        layout::FLAG_FAULT_INJECTION
    } else {
        0
    };
    bi.nvnics = infos.len() as u32;
    let mut memfds = vec![];
    let mut vnics = vec![];
    for (k, info) in infos.into_iter().enumerate() {
        let name = CString::new(format!("clickos-vnic{k}")).expect("no NUL in the name");
        let fd = clickos_sys::memfd(&name, info.size).map_err(|e| err("memfd", e))?;
        let m = Mapping::shared(fd.as_fd(), info.size as usize)
            .map_err(|e| err("mapping a vNIC region", e))?;
        // SAFETY: `m` maps info.size zeroed bytes used by nobody yet.
        unsafe { clickos_ring::ring::init_region(m.ptr(), &info) };
        // `base` stays 0: the child patches in its own mapping address.
        bi.vnics[k] = info;
        memfds.push(fd);
        vnics.push((m, info));
    }
    // SAFETY: the region is ours and no instance runs yet.
    unsafe { write_boot_info(control.ptr(), spec, &bi) };
    let bells = Arc::new(Doorbells::new(vnics.len()).map_err(|e| err("eventfd", e))?);
    prepare(control.ptr());
    let t_prep = t0.elapsed();

    let exe = match &spec.helper_exe {
        Some(p) => p.clone(),
        None => match std::env::var_os("CLICKOS_EXE") {
            Some(p) => p.into(),
            None => std::env::current_exe().map_err(|e| err("locating the clickos binary", e))?,
        },
    };
    let (wake, done) = (bells.wake.as_raw_fd(), bells.done.as_raw_fd());
    let mut inherit: Vec<RawFd> = vec![control_fd.as_raw_fd(), wake, done];
    let mut args = vec![
        "__instance".to_string(),
        spec.id.to_string(),
        control_fd.as_raw_fd().to_string(),
        wake.to_string(),
        done.to_string(),
    ];
    for (m, k) in memfds.iter().zip(bells.kicks.iter()) {
        inherit.push(m.as_raw_fd());
        inherit.push(k.as_raw_fd());
        args.push(format!("{}:{}", m.as_raw_fd(), k.as_raw_fd()));
    }
    let spawned = on_spawner(move || spawn::spawn(&exe, &args, &inherit))??;
    if let Some(why) = &spawned.fallback {
        report_fallback(spec, why);
    }
    let pid = spawned.pid;
    let reap = Arc::new(Reap {
        state: Mutex::new(ReapState::default()),
        cond: Condvar::new(),
    });
    let stderr = std::fs::File::from(spawned.stderr);
    let reaper = {
        let reap = reap.clone();
        let console = spec.console.clone();
        let (id, bells) = (spec.id, bells.clone());
        std::thread::Builder::new()
            .name(format!("clickos-reap-{id}"))
            .spawn(move || {
                reaper(pid, id, stderr, console, &reap);
                bells.ring_all();
            })
            .map_err(|e| format!("spawning the reaper thread: {e}"))?
    };
    Ok(Box::new(ProcessBackend {
        pid,
        control,
        vnics,
        _memfds: {
            let mut v = memfds;
            v.push(control_fd);
            v
        },
        bells,
        reap,
        reaper: Mutex::new(Some(reaper)),
        phases: vec![("prepare", t_prep), ("spawn", t0.elapsed() - t_prep)],
    }))
}

/// Says once per process (on the console of the instance that met it) that
/// process instances run with fewer namespaces than they should.
fn report_fallback(spec: &LaunchSpec, why: &str) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        (spec.console)(
            spec.id,
            &format!("clickos: note: process-level instances run with {why}\n"),
        )
    });
}

fn reaper(pid: libc::pid_t, id: u32, stderr: std::fs::File, console: ConsoleSink, reap: &Reap) {
    let mut last = String::new();
    let mut panic_msg: Option<String> = None;
    {
        let mut r = BufReader::with_capacity(64 << 10, stderr);
        let mut buf = Vec::with_capacity(MAX_LINE);
        loop {
            buf.clear();
            match read_line_capped(&mut r, &mut buf, MAX_LINE) {
                Ok(None) | Err(_) => break,
                Ok(Some(dropped)) => {
                    let mut line = String::from_utf8_lossy(&buf).into_owned();
                    if dropped > 0 {
                        let end = line.trim_end_matches('\n').len();
                        line.truncate(end);
                        line.push_str(&format!(" [line truncated: {dropped} bytes dropped]\n"));
                    }
                    console(id, &line);
                    let t = line.trim_end();
                    if let Some(m) = t.strip_prefix("panicked: ") {
                        panic_msg = Some(m.to_string());
                    }
                    // The line that says why (not Rust's backtrace hint).
                    if !t.is_empty()
                        && !t.starts_with("note: ")
                        && !t.starts_with("stack backtrace")
                    {
                        last = t.to_string();
                    }
                }
            }
        }
    }
    // Wait for the exit without reaping, so that `kill` never signals a
    // recycled pid: the pid stays ours until the waitpid below, done under
    // the lock.
    loop {
        // SAFETY: siginfo is plain data filled in by the kernel.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waits for our own child; `info` outlives the call.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break;
        }
    }
    let mut st = reap.state.lock().unwrap_or_else(|e| e.into_inner());
    let mut status = 0;
    // SAFETY: reaps our own child; `status` is a local.
    let r = unsafe { libc::waitpid(pid, &mut status, 0) };
    st.reaped = true;
    let end = if let Some(why) = st.kill_reason.clone() {
        Ended::Killed(why)
    } else if r != pid {
        Ended::Crashed(format!("lost track of the instance process: {last}"))
    } else if libc::WIFEXITED(status) {
        match libc::WEXITSTATUS(status) {
            EXIT_PANIC => Ended::Panicked(panic_msg.unwrap_or(last)),
            EXIT_SETUP => Ended::Crashed(format!("instance setup failed: {last}")),
            EXIT_ABORT => Ended::Crashed(format!("aborted (SIGABRT): {last}")),
            c => Ended::Exited(c as u32),
        }
    } else if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        let mut m = format!("killed by signal {sig} ({})", clickos_sys::signal_name(sig));
        if sig == libc::SIGSYS {
            m.push_str(": a system call the seccomp filter forbids");
        } else if !last.is_empty() {
            m.push_str(": ");
            m.push_str(&last);
        }
        Ended::Crashed(m)
    } else {
        Ended::Crashed(format!("ended with wait status {status:#x}"))
    };
    if st.ended.is_none() {
        st.ended = Some(end);
    }
    reap.cond.notify_all();
}

/// Reads one line (up to and including `\n`) into `line`, keeping at most
/// `max` bytes of it and consuming the rest. `Ok(None)` at the end of the
/// stream; otherwise how many bytes of the line were dropped.
fn read_line_capped(
    r: &mut impl BufRead,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Option<u64>> {
    let mut dropped = 0u64;
    loop {
        let avail = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            let nothing = line.is_empty() && dropped == 0;
            return Ok((!nothing).then_some(dropped));
        }
        let (n, done) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (avail.len(), false),
        };
        let take = n.min(max.saturating_sub(line.len()));
        line.extend_from_slice(&avail[..take]);
        dropped += (n - take) as u64;
        r.consume(n);
        if done {
            return Ok(Some(dropped));
        }
    }
}

impl ProcessBackend {
    fn state(&self) -> std::sync::MutexGuard<'_, ReapState> {
        self.reap.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Backend for ProcessBackend {
    fn control(&self) -> *mut u8 {
        self.control.ptr()
    }
    fn vnic(&self, k: usize) -> Option<(*mut u8, VnicInfo)> {
        self.vnics.get(k).map(|(m, info)| (m.ptr(), *info))
    }
    fn wake(&self) {
        signal(&self.bells.wake);
    }
    fn wait_notify(&self, timeout: Duration) {
        if self.ended().is_none() {
            wait_readable(&self.bells.done, Some(timeout));
        }
        drain(&self.bells.done);
    }
    fn kick_fd(&self, k: usize) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        self.bells.kicks.get(k).map(|e| e.as_raw_fd())
    }
    fn wait_vnic(&self, k: usize, timeout: Duration) {
        if let Some(kick) = self.bells.kicks.get(k) {
            if self.ended().is_none() {
                wait_readable(kick, Some(timeout));
            }
            drain(kick);
        }
    }
    fn ended(&self) -> Option<Ended> {
        self.state().ended.clone()
    }
    fn kill(&self, why: &str) {
        let mut st = self.state();
        if st.ended.is_some() {
            return;
        }
        if st.kill_reason.is_none() {
            st.kill_reason = Some(why.to_string());
        }
        if !st.reaped {
            // SAFETY: the pid is our unreaped child (checked under the lock
            // the reaper takes before reaping), so it cannot be recycled.
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
        }
        let deadline = Instant::now() + KILL_DEADLINE;
        while st.ended.is_none() {
            let now = Instant::now();
            if now >= deadline {
                // Torn down anyway: the instance counts as ended; the
                // reaper finishes (and is detached) whenever it can.
                st.ended = Some(Ended::Killed(format!(
                    "{why}; the process was not reaped within {} s of SIGKILL",
                    KILL_DEADLINE.as_secs()
                )));
                self.bells.ring_all();
                break;
            }
            st = self
                .reap
                .cond
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
    fn phases(&self) -> Vec<(&'static str, Duration)> {
        self.phases.clone()
    }
    fn memory_footprint(&self) -> Option<u64> {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).ok()?;
        let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    }
}

impl Drop for ProcessBackend {
    fn drop(&mut self) {
        self.kill("destroyed");
        let h = self.reaper.lock().unwrap_or_else(|e| e.into_inner()).take();
        // Joined only once it has reaped the child (bounded by `kill`);
        // otherwise detached.
        if let Some(h) = h {
            if self.state().reaped {
                let _ = h.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::read_line_capped;

    #[test]
    fn lines_are_capped_and_the_rest_is_consumed() {
        let input = b"short\n0123456789abcdef\nend";
        // A tiny BufReader capacity: lines span several reads.
        let mut r = std::io::BufReader::with_capacity(3, &input[..]);
        let mut line = vec![];
        let mut next = |max| {
            line.clear();
            read_line_capped(&mut r, &mut line, max)
                .unwrap()
                .map(|d| (String::from_utf8(line.clone()).unwrap(), d))
        };
        assert_eq!(next(8), Some(("short\n".into(), 0)));
        assert_eq!(next(8), Some(("01234567".into(), 9)));
        assert_eq!(next(8), Some(("end".into(), 0)));
        assert_eq!(next(8), None);
    }
}
