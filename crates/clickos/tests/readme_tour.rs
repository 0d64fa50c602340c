//! The README's quick tour, run as written: every command of its first
//! shell block that needs no root and no network set-up runs with the
//! `clickos` this build produced first on `PATH`, must exit 0 and must
//! print what the README implies. The commands that need root or a Click
//! checkout are named below with the reason (and where a test runs their
//! substance instead); a command the tables do not know fails the test, and
//! so does a table entry the README no longer has, so the two cannot drift.

mod common;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Commands the tour shows but this test does not run, by a fragment of
/// the command, with the reason.
const NOT_RUN: &[(&str, &str)] = &[
    (
        "conf/iprouter.click IF0=eth0",
        "needs root and two real interfaces; tests/devices.rs runs it between namespaces",
    ),
    (
        "KernelTun(10.9.0.1/24)",
        "needs root for a tun device; tests/kerneltun.rs pings through one in a namespace",
    ),
    (
        "ip netns exec m",
        "needs root and a namespace with two links; tests/devices.rs bridges them",
    ),
    (
        "clickos run conf/bras.click ACCESS=eth0",
        "needs root and two real interfaces; tests/bras.rs runs it with the rp-pppoe client in namespaces",
    ),
    (
        "conf/wire.click --vnic veth0",
        "needs root and two interfaces; tests/datapath.rs pings through it between namespaces",
    ),
    (
        "clickos chain conf/firewall-vnic.click",
        "needs root and two interfaces; tests/datapath.rs runs a chain between namespaces",
    ),
    (
        "scripts/clicktest ~/click/test",
        "needs a checkout of Click's sources",
    ),
];

/// What each command that runs must print on standard output (every
/// fragment, in any order; `2>` marks one expected on standard error), by a
/// fragment of the command.
const EXPECT: &[(&str, &[&str])] = &[
    ("-h c.count", &["5\n"]),
    (
        "conf/example.click SUMMARY=/dev/null",
        &["tcp.count:\n14\n", "udp.count:\n17\n", "bad.count:\n6\n"],
    ),
    ("bench/firewall.click N=1000000", &["1000000\n"]),
    ("~/bin/click -e 'Idle -> Discard'", &[]),
    (
        "printf 'READ c.count\\nWRITE stop\\n'",
        &[
            "Click::ControlSocket/1.3\n",
            "200 Read handler 'c.count' OK\n",
            "200 Write handler 'stop' OK\n",
        ],
    ),
    (
        "--allow-socket-reconfigure",
        &[
            "200 Write handler 'hotconfig' OK\n",
            "200 Read handler 'q.length' OK\n",
        ],
    ),
    ("TYPE SIGNAL HUP", &["reloading\n"]),
    (
        "bench/firewall-x2.click -h threads",
        &["thread 0: src0", "thread 1: src1"],
    ),
    ("bench/firewall-split.click -h out.count", &["10000000\n"]),
    ("--replicate bench/firewall.click", &["20000000\n"]),
    (
        "vm run conf/instance.click -h allowed.count -t",
        &["100000\n", "2>boot (create"],
    ),
    ("--isolation process conf/instance.click", &["1000000\n"]),
    ("vm bench --quick", &["| boot: create", "| handler read"]),
    (
        "--vnic pcap:tests/data/mixed.pcap",
        &[
            "allowed.count:\n20\n",
            "denied.count:\n17\n",
            "2>port pcap:tests/data/mixed.pcap rx 52 pkts",
        ],
    ),
    ("clickos elements   ", &["IPFilter ", "Counter "]),
    (
        "clickos elements IPFilter",
        &["IPFilter(ACTION_1 PATTERN_1"],
    ),
];

/// Commands that need `/dev/kvm` (the default isolation level).
const NEEDS_KVM: &[&str] = &[
    "vm run conf/instance.click -h",
    "vm bench",
    "--vnic pcap:tests/data/mixed.pcap",
];

/// The shell commands of the tour's first block: continuation lines and
/// quotes that span lines joined, comment-only and blank lines dropped.
fn tour_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(common::root().join("README.md")).expect("README.md");
    let start = readme
        .find("## A quick tour")
        .expect("the README has a quick tour");
    let block = &readme[start..];
    let open = block.find("```sh\n").expect("the tour has a sh block") + 6;
    let body = &block[open..open + block[open..].find("```").expect("the block ends")];
    let mut cmds = Vec::new();
    let mut cur = String::new();
    for line in body.lines() {
        if cur.is_empty() && (line.trim().is_empty() || line.trim_start().starts_with('#')) {
            continue;
        }
        if !cur.is_empty() {
            cur.push('\n');
        }
        cur.push_str(line);
        if in_quote(&cur) || cur.ends_with('\\') {
            continue;
        }
        cmds.push(std::mem::take(&mut cur));
    }
    assert!(cur.is_empty(), "unterminated command in the tour: {cur}");
    cmds
}

/// Whether `text` ends inside a single- or double-quoted string, as bash
/// reads it (a `#` after a blank, outside quotes, comments out the rest of
/// its line).
fn in_quote(text: &str) -> bool {
    let mut quote = None;
    let mut prev = ' ';
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if prev.is_whitespace() => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            _ => {}
        }
        prev = c;
    }
    quote.is_some()
}

fn lookup<'a, T>(table: &'a [(&str, T)], cmd: &str) -> Option<&'a T> {
    let hits: Vec<&T> = table
        .iter()
        .filter(|(k, _)| cmd.contains(k))
        .map(|(_, v)| v)
        .collect();
    assert!(hits.len() <= 1, "more than one table entry matches `{cmd}`");
    hits.into_iter().next()
}

fn run(cmd: &str, home: &Path) -> (bool, String, String) {
    let bin = Path::new(env!("CARGO_BIN_EXE_clickos"));
    let path = format!(
        "{}:{}:{}",
        home.join("bin").display(),
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // the tour's fixed ControlSocket port, made one that is free now
    let cmd = cmd.replace("7777", &common::cs::free_port().to_string());
    let mut child = Command::new("bash")
        .args(["-c", &format!("{cmd}\nwait")])
        .current_dir(common::root())
        .env("PATH", path)
        .env("HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("bash");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if Instant::now() > deadline {
            // SAFETY: kill(2) on the process group this test created.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            panic!("`{cmd}` did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_tour_command_runs_as_written() {
    let cmds = tour_commands();
    assert!(cmds.len() >= 15, "the tour lost its commands: {cmds:?}");
    let keys = NOT_RUN.iter().map(|(k, _)| *k);
    for k in keys.chain(EXPECT.iter().map(|(k, _)| *k)) {
        assert!(
            cmds.iter().any(|c| c.contains(k)),
            "the README's tour no longer has a command with `{k}`: update this test"
        );
    }
    let home = common::tmpdir("tour");
    // a missing /dev/kvm is recorded as a skip (a failure under CI)
    let kvm = common::can_use_kvm();
    let mut ran = 0;
    for cmd in &cmds {
        if let Some(why) = lookup(NOT_RUN, cmd) {
            eprintln!("not run ({why}): {cmd}");
            continue;
        }
        let expect = lookup(EXPECT, cmd)
            .unwrap_or_else(|| panic!("the tour has a command this test does not know: `{cmd}`"));
        if NEEDS_KVM.iter().any(|k| cmd.contains(k)) && !kvm {
            continue;
        }
        let (ok, out, err) = run(cmd, &home);
        assert!(ok, "`{cmd}` failed\nstdout:\n{out}\nstderr:\n{err}");
        for want in *expect {
            let (stream, name, want) = match want.strip_prefix("2>") {
                Some(w) => (&err, "standard error", w),
                None => (&out, "standard output", *want),
            };
            assert!(
                stream.contains(want),
                "`{cmd}` printed no {want:?} on {name}\nstdout:\n{out}\nstderr:\n{err}"
            );
        }
        ran += 1;
    }
    let _ = std::fs::remove_dir_all(&home);
    assert!(
        ran >= EXPECT.len() - NEEDS_KVM.len(),
        "only {ran} commands ran"
    );
}
