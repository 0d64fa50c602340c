//! Network-namespace helpers for the tests that build real Linux networks
//! (included with `#[path]` by each crate's tests, as `skip.rs` is).
#![allow(dead_code)]

use std::os::fd::AsRawFd;
use std::process::{Child, Command, Output, Stdio};

/// Runs `ip ARGS...`; panics with its error output if it fails.
pub fn ip(args: &[&str]) {
    let o = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        o.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Runs `sh -c cmd` in namespace `ns`.
pub fn sh(ns: &str, cmd: &str) -> Output {
    Command::new("ip")
        .args(["netns", "exec", ns, "sh", "-c", cmd])
        .output()
        .expect("ip netns exec")
}

/// Starts `cmd` in namespace `ns` (exec'd by the shell, so killing the
/// child kills the command), its output piped.
pub fn spawn_sh(ns: &str, cmd: &str) -> Child {
    Command::new("ip")
        .args(["netns", "exec", ns, "sh", "-c", &format!("exec {cmd}")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn")
}

/// Runs `f` on a thread that has entered namespace `ns`.
pub fn in_netns<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let path = format!("/var/run/netns/{ns}");
    std::thread::spawn(move || {
        let file = std::fs::File::open(&path).expect("open netns");
        // SAFETY: setns on this thread only, with a valid netns descriptor.
        let r = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(r, 0, "setns {path}: {}", std::io::Error::last_os_error());
        f()
    })
    .join()
    .expect("netns thread")
}
