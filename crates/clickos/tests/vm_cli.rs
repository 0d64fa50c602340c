//! `clickos vm run` and `clickos vm bench` from the command line, at every
//! isolation level that works here (vm is skipped, with the reason, where
//! KVM is missing; in CI that fails).

mod common;

use std::process::{Command, Output};

fn clickos(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clickos"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .expect("run clickos")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn levels() -> Vec<&'static str> {
    let mut v = vec!["process", "none"];
    if common::can_use_kvm() {
        v.insert(0, "vm");
    }
    v
}

#[test]
fn runs_a_configuration_and_reads_handlers_after_it_stops() {
    for level in levels() {
        let o = clickos(&[
            "vm",
            "run",
            "--isolation",
            level,
            "conf/instance.click",
            "N=2500",
            "-h",
            "allowed.count",
            "-h",
            "src.count",
        ]);
        assert!(o.status.success(), "{level}: {}", text(&o.stderr));
        assert_eq!(
            text(&o.stdout),
            "allowed.count:\n2500\n\nsrc.count:\n2500\n\n",
            "{level}"
        );
        // One handler: the value alone, as Click prints it.
        let o = clickos(&[
            "vm",
            "run",
            "-i",
            level,
            "-e",
            "InfiniteSource(LIMIT 7, STOP true) -> c :: Counter -> Discard",
            "-h",
            "c.count",
        ]);
        assert!(o.status.success(), "{level}: {}", text(&o.stderr));
        assert_eq!(text(&o.stdout), "7\n", "{level}");
    }
}

#[test]
fn configuration_errors_name_the_file_and_line() {
    let dir = std::env::temp_dir().join(format!("clickos-vmcli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.click");
    std::fs::write(&bad, "Idle -> Discard;\nx :: NoSuchElement;\n").unwrap();
    let syntax = dir.join("syntax.click");
    std::fs::write(&syntax, "Idle -> \n -> ;\n").unwrap();
    for level in levels() {
        // Unknown class: found inside the instance, reported with the file name.
        let o = clickos(&["vm", "run", "-i", level, bad.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{level}");
        let err = text(&o.stderr);
        assert!(
            err.contains("bad.click:2:") && err.contains("NoSuchElement"),
            "{level}: {err}"
        );
        // Syntax errors are caught before booting.
        let o = clickos(&["vm", "run", "-i", level, syntax.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{level}");
        assert!(text(&o.stderr).contains("syntax.click:"), "{level}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_command_lines_are_refused_clearly() {
    for (args, want) in [
        (vec!["vm", "run"], "no configuration given"),
        (
            vec!["vm", "run", "-i", "qemu", "x.click"],
            "unknown isolation level 'qemu'",
        ),
        (
            vec!["vm", "run", "-m", "12potatoes", "x.click"],
            "bad memory size",
        ),
        (
            vec!["vm", "run", "/nonexistent/x.click"],
            "/nonexistent/x.click",
        ),
        (vec!["vm", "frobnicate"], "unknown command 'frobnicate'"),
        (
            vec!["vm", "bench", "--only", "speedy"],
            "unknown benchmark 'speedy'",
        ),
    ] {
        let o = clickos(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(
            text(&o.stderr).contains(want),
            "{args:?}: {}",
            text(&o.stderr)
        );
    }
    let o = clickos(&["vm", "run", "--help"]);
    assert!(o.status.success());
    assert!(text(&o.stdout).contains("--isolation"));
}

#[test]
fn time_option_prints_boot_phases() {
    for level in levels() {
        let o = clickos(&[
            "vm",
            "run",
            "-i",
            level,
            "-t",
            "-q",
            "-e",
            "Idle -> Discard",
        ]);
        assert!(o.status.success(), "{level}: {}", text(&o.stderr));
        let err = text(&o.stderr);
        assert!(err.contains(&format!("isolation: {level}")), "{err}");
        assert!(err.contains("boot (create"), "{err}");
    }
}

#[test]
fn bench_prints_its_table() {
    // A tiny run of the real benchmark code at the process level.
    let o = clickos(&[
        "vm",
        "bench",
        "-i",
        "process",
        "--runs",
        "3",
        "--packets",
        "20000",
        "--only",
        "boot,handlers,speed",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    for row in [
        "| boot:",
        "| handler write on a busy",
        "| handler read on an idle",
        "| firewall, 64 B",
    ] {
        assert!(out.contains(row), "missing {row}: {out}");
    }
}
