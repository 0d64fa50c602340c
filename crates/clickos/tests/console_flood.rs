//! A guest that prints in a tight loop, with terminal escape sequences in
//! every line, under `clickos vm run` at every isolation level:
//!
//! * with the host's standard error a pipe nobody reads, SIGINT still ends
//!   `clickos vm run` (it used to hang: the vCPU thread, or the process
//!   level's reaper, blocked on standard error while holding its lock,
//!   and destroying the instance waited for it);
//! * with standard error read, the output is bounded (a rate limit), says
//!   how much was dropped, and carries no control characters.
//!
//! No timing is asserted: the watchdogs only catch a hang.

mod common;

use clickos_instance::Isolation;
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const FLOOD: &str = r#"InfiniteSource -> Print("\033[31mRED\033]0;pwned\007\033[2J") -> Discard"#;

fn levels() -> Vec<&'static str> {
    let mut v = vec![];
    match Isolation::Vm.available() {
        Ok(()) => v.push("vm"),
        Err(why) => println!("skipped: vm: {why}"),
    }
    v.extend(["process", "none"]);
    v
}

fn flood(level: &str, stderr: Stdio) -> Child {
    Command::new(common::bin())
        .args(["vm", "run", "-i", level, "-e", FLOOD])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("clickos vm run")
}

/// SIGINT, then waits for the exit; a minute without one is a hang.
fn interrupt_and_wait(level: &str, mut child: Child) -> std::process::ExitStatus {
    // SAFETY: signals our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{level}: clickos vm run did not exit after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sigint_ends_a_flooding_instance_whose_stderr_nobody_reads() {
    for level in levels() {
        let mut child = flood(level, Stdio::piped());
        // Held open, never read: the pipe fills within milliseconds.
        let _stderr = child.stderr.take();
        std::thread::sleep(Duration::from_secs(1));
        let st = interrupt_and_wait(level, child);
        println!("{level}: exited with {st}");
        assert!(st.success(), "{level}: {st}");
    }
}

#[test]
fn console_floods_are_rate_limited_reported_and_stripped() {
    /// Bytes of standard error kept for the checks (all are counted).
    const KEEP: usize = 4 << 20;
    for level in levels() {
        let mut child = flood(level, Stdio::piped());
        let mut stderr = child.stderr.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut kept = Vec::new();
            let mut total = 0usize;
            let mut buf = vec![0u8; 64 << 10];
            loop {
                match stderr.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        total += n;
                        let room = KEEP.saturating_sub(kept.len()).min(n);
                        kept.extend_from_slice(&buf[..room]);
                    }
                }
            }
            (total, kept)
        });
        std::thread::sleep(Duration::from_secs(2));
        let st = interrupt_and_wait(level, child);
        let (total, kept) = reader.join().unwrap();
        let text = String::from_utf8_lossy(&kept);
        println!(
            "{level}: {st}; {total} bytes of console output; {} lines; first: {:?}",
            text.lines().count(),
            text.lines().next()
        );
        assert!(st.success(), "{level}: {st}");
        // 256 KiB/s after a 256 KiB burst: a few hundred KiB here; an
        // unlimited flood writes tens to hundreds of MB.
        assert!(total < 16 << 20, "{level}: {total} bytes of console output");
        assert!(
            text.contains("bytes of console output dropped]"),
            "{level}: no drop report in {} bytes",
            kept.len()
        );
        assert!(text.contains("[31mRED]0;pwned[2J"), "{level}: {text:.300}");
        for c in [0x1b_u8, 0x07, b'\r'] {
            assert!(
                !kept.contains(&c),
                "{level}: control character {c:#04x} reached the terminal"
            );
        }
    }
}
