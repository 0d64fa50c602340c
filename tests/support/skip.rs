//! A test that cannot run here (no `/dev/kvm`, no root for network
//! namespaces, a missing tool) calls [`skip`] and returns. Locally the
//! skip is printed and recorded, so `scripts/test` lists it in its summary;
//! in CI (`CI` is `true` or `1`) a missing capability fails the test, so a
//! skipped suite cannot pass for a green one.
//!
//! The record is one line `TEST: REASON` appended to `$CLICKOS_SKIP_LOG`,
//! or by default to `target/skipped-tests.txt`. Test crates include this
//! file with `#[path = ".../tests/support/skip.rs"] mod skip;`.
#![allow(dead_code)]

use std::io::Write;

/// Whether this run is CI's, where nothing may be skipped.
pub fn in_ci() -> bool {
    matches!(
        std::env::var("CI")
            .as_deref()
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Ok("true") | Ok("1")
    )
}

/// The file skips are appended to.
pub fn log_path() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("CLICKOS_SKIP_LOG") {
        return Some(p.into());
    }
    // target/tmp/../skipped-tests.txt for integration tests
    option_env!("CARGO_TARGET_TMPDIR").map(|d| std::path::Path::new(d).join("../skipped-tests.txt"))
}

/// The running test's name, `binary::test` (libtest names each test's
/// thread after the test).
fn test_name() -> String {
    let t = std::thread::current();
    let name = t.name().unwrap_or("?");
    format!("{}::{}", env!("CARGO_CRATE_NAME"), name)
}

/// Says that the running test cannot run here because of `reason`. In CI
/// this panics; elsewhere it prints and records the skip, and the caller
/// returns.
#[track_caller]
pub fn skip(reason: &str) {
    let test = test_name();
    if in_ci() {
        panic!(
            "{test} cannot run: {reason} (CI={}: a missing capability fails in CI)",
            std::env::var("CI").unwrap_or_default()
        );
    }
    eprintln!("skipped: {test}: {reason}");
    if let Some(p) = log_path() {
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
        {
            // one write per line, so parallel tests do not interleave
            let _ = f.write_all(format!("{test}: {reason}\n").as_bytes());
        }
    }
}

/// `Ok` runs on; `Err(reason)` is [`skip`]ped and gives `false`.
#[track_caller]
pub fn require(check: Result<(), String>) -> bool {
    match check {
        Ok(()) => true,
        Err(reason) => {
            skip(&reason);
            false
        }
    }
}

/// Whether `program` can be started (`program ARG` runs at all); a
/// missing program is skipped with a reason.
#[track_caller]
pub fn have_program(program: &str, arg: &str) -> bool {
    let ok = std::process::Command::new(program)
        .arg(arg)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok();
    if !ok {
        skip(&format!(
            "no `{program}` on this machine (scripts/setup installs it)"
        ));
    }
    ok
}

/// Whether this process may make network namespaces (root, and `ip netns`
/// works); if not, the test is skipped (and fails in CI) with the reason.
#[track_caller]
pub fn can_use_netns() -> bool {
    use std::os::unix::fs::MetadataExt;
    // /proc/self belongs to the process's effective user
    if std::fs::metadata("/proc/self").map(|m| m.uid()).ok() != Some(0) {
        skip("needs root for network namespaces");
        return false;
    }
    match std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
    {
        Ok(o) if o.status.success() => true,
        _ => {
            skip("`ip netns` unavailable");
            false
        }
    }
}
