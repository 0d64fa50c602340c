//! The middlebox benchmark's driver (bench/middleboxes/run.py) in its quick
//! mode, small, against this build: every one of the nine middleboxes'
//! in-memory configurations passes all of its packets at 64 and 1500 B, the
//! CGNAT's new-flow stress run makes exactly one mapping per flow, and the
//! IDS loads its generated rule sets. Nothing about speed is asserted (the
//! checks are in bench/middleboxes/check_quick.py).

mod common;
use common::skip;
use std::process::Command;

#[test]
fn quick_run_covers_every_middlebox() {
    if !skip::have_program("python3", "--version") {
        return;
    }
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let out = Command::new("python3")
        .arg("bench/middleboxes/check_quick.py")
        .arg(env!("CARGO_BIN_EXE_clickos"))
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "check_quick.py failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
