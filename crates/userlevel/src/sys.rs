//! Small Linux helpers the driver, the console and the elements share:
//! error text as Click prints it, and the process's CPU times.

/// An I/O error as Click prints `strerror(errno)`: the message without
/// Rust's ` (os error N)`.
pub fn io_error_text(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// User and system CPU seconds of this process, all threads (Linux /proc).
pub fn cpu_times() -> (f64, f64) {
    let Ok(s) = std::fs::read_to_string("/proc/self/stat") else {
        return (0.0, 0.0);
    };
    let Some(rp) = s.rfind(')') else {
        return (0.0, 0.0);
    };
    let f: Vec<&str> = s[rp + 1..].split_whitespace().collect();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let t = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0) / hz;
    (t(11), t(12))
}
