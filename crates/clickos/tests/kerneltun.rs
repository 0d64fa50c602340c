//! KernelTun / KernelTap: the host's own IP stack on the other side of a
//! tun or tap device, in a network namespace the test makes. A real ping
//! from the host is answered by the configuration. Needs root and
//! `ip netns`; skips (with a message; a failure in CI) otherwise.

mod common;
use common::*;

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

static SEQ: AtomicU32 = AtomicU32::new(0);

fn can_run() -> bool {
    if !can_use_netns() {
        return false;
    }
    let tun = std::path::Path::new("/dev/net/tun").exists();
    if !tun {
        skip::skip("no /dev/net/tun");
    }
    tun
}

/// A network namespace, deleted on drop.
struct Ns(String);

impl Ns {
    fn new() -> Ns {
        let n = format!(
            "ckt{}x{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let o = Command::new("ip")
            .args(["netns", "add", &n])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        Command::new("ip")
            .args(["-n", &n, "link", "set", "lo", "up"])
            .output()
            .unwrap();
        Ns(n)
    }

    fn cmd(&self, prog: &str, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.0, prog]).args(args);
        c
    }

    fn output(&self, prog: &str, args: &[&str]) -> (bool, String) {
        let o = self.cmd(prog, args).output().unwrap();
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr),
        )
    }

    /// `clickos run -e CONFIG` in the namespace, left running.
    fn click(&self, config: &str, extra: &[&str]) -> Child {
        let mut args = vec!["run", "-e", config];
        args.extend_from_slice(extra);
        self.cmd(bin(), &args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Waits until `dev` exists and is up (the configuration made it).
    fn wait_dev(&self, dev: &str, child: &mut Child) {
        let t0 = Instant::now();
        loop {
            let (ok, out) = self.output("ip", &["link", "show", dev]);
            if ok && out.contains(",UP") {
                return;
            }
            if let Ok(Some(st)) = child.try_wait() {
                panic!("clickos exited ({st}) before {dev} came up");
            }
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "{dev} never came up: {out}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Ns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).output();
    }
}

/// Stops a `clickos run` child with SIGINT; returns (status, stdout, stderr).
fn finish(c: Child) -> (i32, String, String) {
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(c.id() as i32, libc::SIGINT) };
    let r = wait_child(c);
    (r.code, r.out, r.err)
}

fn ping(ns: &Ns, addr: &str) -> String {
    let (ok, out) = ns.output("ping", &["-c", "3", "-i", "0.2", "-W", "2", addr]);
    assert!(ok, "ping {addr} failed: {out}");
    assert!(out.contains("3 received"), "{out}");
    out
}

fn have_ping() -> bool {
    skip::have_program("ping", "-V")
}

/// The host pings an address behind a tun device; the configuration
/// answers with ICMPPingResponder, once with a push input, once with a
/// pull input (through a Queue). The device carries the address given, and
/// GATEWAY makes the default route.
#[test]
fn kerneltun_answers_a_real_ping() {
    if !can_run() || !have_ping() {
        return;
    }
    let ns = Ns::new();
    let mut c = ns.click(
        "t :: KernelTun(10.77.0.1/24, 10.77.0.254, DEVNAME ckt0, MTU 1400);
         t -> ICMPPingResponder -> t;
         t[1] -> other :: Counter -> Discard;",
        &[],
    );
    ns.wait_dev("ckt0", &mut c);
    let (_, addr) = ns.output("ip", &["-4", "addr", "show", "ckt0"]);
    assert!(addr.contains("inet 10.77.0.1/24"), "{addr}");
    assert!(addr.contains("mtu 1400"), "{addr}");
    let (_, route) = ns.output("ip", &["route"]);
    assert!(
        route.contains("default via 10.77.0.254 dev ckt0"),
        "{route}"
    );
    ping(&ns, "10.77.0.2");
    let (code, _out, err) = finish(c);
    assert_eq!(code, 0, "{err}");
    // the device and its routes went with the router
    let (ok, _) = ns.output("ip", &["link", "show", "ckt0"]);
    assert!(!ok, "ckt0 outlived the router");

    let mut c = ns.click(
        "t :: KernelTun(10.78.0.1/24, DEVNAME ckt1);
         t -> ICMPPingResponder -> q :: Queue -> t;",
        &["-h", "t.count", "-h", "t.sent", "-h", "q.drops"],
    );
    ns.wait_dev("ckt1", &mut c);
    ping(&ns, "10.78.0.2");
    let (code, out, err) = finish(c);
    assert_eq!(code, 0, "{err}");
    let v: Vec<u64> = out
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.ends_with(':'))
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert!(v[0] >= 3, "{out}");
    assert_eq!(v[1], 3, "{out}");
    assert_eq!(v[2], 0, "{out}");
}

/// KernelTap: Ethernet frames through a tap device with the address given
/// (ETHER); the configuration answers ARP for the peer address and the
/// pings themselves.
#[test]
fn kerneltap_answers_arp_and_ping() {
    if !can_run() || !have_ping() {
        return;
    }
    let ns = Ns::new();
    let mut c = ns.click(
        "t :: KernelTap(10.79.0.1/24, ETHER 2:0:0:0:79:1, DEVNAME ckt2);
         t -> c :: Classifier(12/0806 20/0001, 12/0800, -);
         c[0] -> ARPResponder(10.79.0.2 2:0:0:0:79:2) -> t;
         c[1] -> MarkIPHeader(14) -> ICMPPingResponder -> EtherMirror -> t;
         c[2] -> Discard;",
        &[],
    );
    ns.wait_dev("ckt2", &mut c);
    let (_, link) = ns.output("ip", &["link", "show", "ckt2"]);
    assert!(link.contains("link/ether 02:00:00:00:79:01"), "{link}");
    ping(&ns, "10.79.0.2");
    let (_, neigh) = ns.output("ip", &["neigh", "show", "dev", "ckt2"]);
    assert!(
        neigh.contains("10.79.0.2 lladdr 02:00:00:00:79:02"),
        "{neigh}"
    );
    let (code, _, err) = finish(c);
    assert_eq!(code, 0, "{err}");
}

/// Bad arguments are configuration errors with Click's context; a device
/// name the kernel refuses is reported.
#[test]
fn kerneltun_errors() {
    for (cfg, want) in [
        (
            "KernelTun(10.0.0.1/24, 10.1.0.1) -> Discard",
            "not on the network",
        ),
        (
            "KernelTun(10.0.0.1/24, MTU 20) -> Discard",
            "MTU out of range",
        ),
        ("KernelTun(nonsense) -> Discard", "ADDR"),
        ("KernelTun(10.0.0.1/24, BURST 0) -> Discard", "BURST"),
        (
            "KernelTun(10.0.0.1/24, DEVNAME abcdefghijklmnopqrstuvwxyz) -> Discard",
            "DEVNAME longer",
        ),
    ] {
        let r = click(&["-q", "-e", cfg]);
        assert_eq!(r.code, 1, "{cfg}");
        assert!(r.err.contains(want), "{cfg}: {}", r.err);
        assert!(r.err.contains("While configuring"), "{cfg}: {}", r.err);
    }
    if !can_run() {
        return;
    }
    let ns = Ns::new();
    let (ok, out) = ns.output(
        bin(),
        &[
            "run",
            "-q",
            "-e",
            "KernelTun(10.0.0.1/24, DEVNAME bad/name) -> Discard",
        ],
    );
    assert!(!ok, "{out}");
    assert!(out.contains("bad/name"), "{out}");
}
