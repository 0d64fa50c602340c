//! Helpers: run the built binary, find test data, make temp dirs; `cs`, a
//! ControlSocket test client.
#![allow(dead_code)]

pub mod cs;
pub mod nsclick;

#[path = "../../../../tests/support/skip.rs"]
pub mod skip;

#[path = "../../../../tests/support/netns.rs"]
pub mod netns;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The value of `field` (with its colon, e.g. `"VmHWM:"`) in
/// `/proc/PID/status`, trimmed; empty if the process has no such line.
/// Panics if the file cannot be read.
pub fn status_field(pid: u32, field: &str) -> String {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix(field))
        .unwrap_or("")
        .trim()
        .to_string()
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_clickos")
}

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

pub fn data(name: &str) -> String {
    root()
        .join("tests/data")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// A fresh temporary directory for one test: `clickos-test-NAME-PID` in the
/// system's temporary directory (short, so UNIX socket paths inside fit).
/// Directories left by test processes that have ended are removed first,
/// so runs do not pile them up.
pub fn tmpdir(name: &str) -> PathBuf {
    sweep_stale_tmpdirs();
    let d = std::env::temp_dir().join(format!("clickos-test-{}-{}", name, std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Removes `clickos-test-*-PID` directories whose process is gone (once per
/// test process).
fn sweep_stale_tmpdirs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("clickos-test-")) else {
                continue;
            };
            let Some(pid) = rest.rsplit('-').next().and_then(|p| p.parse::<u32>().ok()) else {
                continue;
            };
            if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    });
}

pub struct Run {
    pub code: i32,
    pub out: String,
    pub err: String,
    pub raw: Output,
}

pub fn run_in(dir: Option<&Path>, program: &str, args: &[&str]) -> Run {
    let mut c = Command::new(program);
    c.args(args).stdin(Stdio::null());
    if let Some(d) = dir {
        c.current_dir(d);
    }
    let o = c.output().expect("run binary");
    Run {
        code: o.status.code().unwrap_or(-1),
        out: String::from_utf8_lossy(&o.stdout).into_owned(),
        err: String::from_utf8_lossy(&o.stderr).into_owned(),
        raw: o,
    }
}

/// `clickos run ARGS...`
pub fn click(args: &[&str]) -> Run {
    let mut v = vec!["run"];
    v.extend_from_slice(args);
    run_in(None, bin(), &v)
}

/// Waits for `child` to exit — at most 10 s, after which it is killed and
/// the test fails — and collects its output.
pub fn wait_child(mut child: Child) -> Run {
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("clickos did not exit");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let o = child.wait_with_output().unwrap();
    Run {
        code: o.status.code().unwrap_or(-1),
        out: String::from_utf8_lossy(&o.stdout).into_owned(),
        err: String::from_utf8_lossy(&o.stderr).into_owned(),
        raw: o,
    }
}

// not every test binary that includes this module uses it
#[allow(unused_imports)]
pub use skip::can_use_netns;

/// Whether `/dev/kvm` works here; if not, the skip is recorded (and fails
/// in CI) with the reason.
pub fn can_use_kvm() -> bool {
    skip::require(
        clickos_instance::Isolation::Vm
            .available()
            .map_err(|why| format!("vm isolation unavailable: {why}")),
    )
}
