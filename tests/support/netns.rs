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

/// Starts a static web server for `dir` on `addr:port` in namespace `ns`
/// (Python's, as `python3 -m http.server` would, but without the reverse
/// DNS lookup `http.server` makes between bind and listen: in a namespace
/// without a resolver that lookup leaves the port bound but refusing
/// connections for many seconds). Returns once it accepts connections.
pub fn web_server(ns: &str, addr: &str, port: u16, dir: &std::path::Path) -> Child {
    let code = format!(
        "import functools, http.server as h, socketserver as s\n\
         s.ThreadingTCPServer.allow_reuse_address = True\n\
         s.ThreadingTCPServer(('{addr}', {port}), functools.partial(\
         h.SimpleHTTPRequestHandler, directory={dir:?})).serve_forever()",
        dir = dir.display().to_string()
    );
    let mut child = Command::new("ip")
        .args(["netns", "exec", ns, "python3", "-c", &code])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn python3");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let o = sh(ns, &format!("ss -Hltn 'sport = :{port}'"));
        if String::from_utf8_lossy(&o.stdout).contains("LISTEN") {
            return child;
        }
        if let Ok(Some(st)) = child.try_wait() {
            panic!("the web server in {ns} on {addr}:{port} exited: {st}");
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the web server in {ns} on {addr}:{port} did not listen within 30 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
