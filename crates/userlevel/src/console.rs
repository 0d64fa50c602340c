//! The process console: standard error line by line (flushed per line),
//! standard output buffered and flushed at exit. Clones share one buffer,
//! so the routers of several threads never split each other's lines.

use click::router::Console;
use std::io::{BufWriter, Read, Stdout, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Signals Script elements wait for (their handler is installed) ...
static CAUGHT: AtomicU64 = AtomicU64::new(0);
/// ... and those that arrived since the driver last looked.
static PENDING: AtomicU64 = AtomicU64::new(0);
/// The console to flush before a signal's default action ends the process.
static LAST_WORDS: OnceLock<StdConsole> = OnceLock::new();

extern "C" fn on_script_signal(sig: libc::c_int) {
    if (1..64).contains(&sig) {
        PENDING.fetch_or(1 << sig, Ordering::SeqCst);
    }
}

/// The signals that arrived for Script elements since the last call.
pub fn take_pending_signals() -> u64 {
    PENDING.swap(0, Ordering::SeqCst)
}

/// Whether a Script's handler is installed for `sig` (the driver then
/// leaves it alone).
pub fn script_catches(sig: i32) -> bool {
    (1..64).contains(&sig) && CAUGHT.load(Ordering::SeqCst) & (1 << sig) != 0
}

/// A signal arrived that no Script waits for any more: its default
/// action, as if it had not been caught (standard output flushed first).
pub fn default_action(sig: i32) {
    if let Some(c) = LAST_WORDS.get() {
        c.flush();
    }
    // SAFETY: restoring the default disposition and raising the signal
    // for this process; plain libc calls with valid arguments.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(sig);
    }
    CAUGHT.fetch_and(!(1u64 << sig), Ordering::SeqCst);
}

/// A [`Console`] on the process's standard streams.
#[derive(Clone)]
pub struct StdConsole {
    out: Arc<Mutex<BufWriter<Stdout>>>,
}

impl Default for StdConsole {
    fn default() -> Self {
        StdConsole {
            out: Arc::new(Mutex::new(BufWriter::with_capacity(
                1 << 16,
                std::io::stdout(),
            ))),
        }
    }
}

impl StdConsole {
    /// Flushes buffered standard output.
    pub fn flush(&self) {
        if let Ok(mut o) = self.out.lock() {
            let _ = o.flush();
        }
    }

    /// Writes raw bytes to standard output (through the same buffer).
    pub fn write_bytes(&self, b: &[u8]) {
        if let Ok(mut o) = self.out.lock() {
            let _ = o.write_all(b);
        }
    }
}

impl Console for StdConsole {
    fn error_line(&self, line: &str) {
        // Keep stdout and stderr in order when both go to one terminal.
        let o = self.out.lock();
        if let Ok(mut o) = o {
            let _ = o.flush();
        }
        // one write per line, so lines of processes sharing the stream
        // (a pipe) do not interleave mid-line
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        let mut e = std::io::stderr().lock();
        let _ = e.write_all(&buf);
        let _ = e.flush();
    }

    fn stdout(&self, text: &str) {
        self.write_bytes(text.as_bytes());
    }

    fn write_file(&self, path: &str, append: bool, text: &str) -> Result<(), String> {
        self.write_file_bytes(path, append, text.as_bytes())
    }

    fn stdout_bytes(&self, bytes: &[u8]) {
        self.write_bytes(bytes);
    }

    fn write_file_bytes(&self, path: &str, append: bool, bytes: &[u8]) -> Result<(), String> {
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create(true);
        if append {
            o.append(true);
        } else {
            o.truncate(true);
        }
        o.open(path)
            .and_then(|mut f| f.write_all(bytes))
            .map_err(|e| format!("{}: {}", path, crate::sys::io_error_text(&e)))
    }

    fn read_file(&self, path: &str, max: usize) -> Result<String, String> {
        let err = |e: std::io::Error| format!("{}: {}", path, crate::sys::io_error_text(&e));
        let mut b = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(max as u64 + 1).read_to_end(&mut b))
            .map_err(err)?;
        if b.len() > max {
            return Err(format!("{path}: file too large (over {max} bytes)"));
        }
        Ok(String::from_utf8_lossy(&b).into_owned())
    }

    fn catch_signal(&self, signo: i32) -> bool {
        if !(1..64).contains(&signo) || signo == libc::SIGKILL || signo == libc::SIGSTOP {
            return false;
        }
        LAST_WORDS.get_or_init(|| self.clone());
        if CAUGHT.fetch_or(1 << signo, Ordering::SeqCst) & (1 << signo) == 0 {
            // SAFETY: a zeroed sigaction is a valid starting value; the
            // handler only does an atomic or, which is async-signal-safe.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_script_signal as *const () as libc::sighandler_t;
                sa.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(signo, &sa, std::ptr::null_mut());
            }
        }
        true
    }

    fn kill(&self, signo: i32, pid: i64) -> Result<(), String> {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return Err("bad PID".into());
        };
        // SAFETY: kill(2) with plain integer arguments.
        if unsafe { libc::kill(pid, signo) } < 0 {
            return Err(format!(
                "kill: {}",
                crate::sys::io_error_text(&std::io::Error::last_os_error())
            ));
        }
        Ok(())
    }

    fn pid(&self) -> Option<u32> {
        Some(std::process::id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_file_stops_at_the_limit() {
        let c = StdConsole::default();
        // a file that never ends is refused after `max + 1` bytes
        let e = c.read_file("/dev/zero", 1 << 20).unwrap_err();
        assert!(e.contains("too large"), "{e}");
        let p = std::env::temp_dir().join(format!("clickos-read-file-{}", std::process::id()));
        std::fs::write(&p, "0123456789").unwrap();
        let f = p.to_str().unwrap();
        assert_eq!(c.read_file(f, 10).unwrap(), "0123456789");
        assert!(c.read_file(f, 9).unwrap_err().contains("too large"));
        let _ = std::fs::remove_file(&p);
    }
}
