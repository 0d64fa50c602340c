//! Real traffic through instances on the software switch, at every
//! isolation level (vm, process, none): `clickos vm run --vnic` and
//! `clickos chain` between network namespaces (ping through a wire and
//! through an IP router, a TCP transfer through a firewall, a chain of
//! three), pcap replay and capture, and what happens with bad input (a
//! missing interface, a vNIC the instance lacks, an interface deleted
//! while forwarding, oversize frames, an instance that corrupts its
//! rings).
//!
//! The CLI runs in a namespace `M` of its own; host namespace `i` has an
//! `eth0` whose veth peer in `M` is `m{i}`. Everything is deleted on drop.
//! Needs root, `ip netns` and `ping` (and `python3` for the TCP test);
//! skips (with a message; a failure in CI) otherwise. vm is skipped with
//! the reason where KVM is missing (a failure in CI).

mod common;
use common::netns::{in_netns, ip};
use common::*;

use clickos_instance::{Ended, Instance, InstanceOptions, Isolation, VnicSpec};
use clickos_switch::ports::mem::{MemSink, MemSource};
use clickos_switch::{Drop as Why, Health, SwitchHandle, SwitchOptions};
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

static SEQ: AtomicU32 = AtomicU32::new(0);

const LEVELS: [&str; 3] = ["vm", "process", "none"];

/// The levels that can run here; an unavailable one is skipped with the
/// reason (a failure in CI).
fn levels() -> Vec<&'static str> {
    LEVELS
        .into_iter()
        .filter(|l| {
            let level: Isolation = l.parse().unwrap();
            skip::require(
                level
                    .available()
                    .map_err(|why| format!("{l} isolation unavailable: {why}")),
            )
        })
        .collect()
}

fn can_run() -> bool {
    can_use_netns() && skip::have_program("ping", "-V")
}

/// Turns TX checksum offload, TSO, GSO and GRO off (legacy ethtool
/// ioctls): a switch that copies frames needs complete ones, as with a
/// real NIC under `ethtool -K tx off tso off gso off gro off`.
fn offloads_off(dev: &str) {
    // SAFETY: plain socket(2) call; the result is checked.
    let s = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
    assert!(s >= 0);
    for cmd in [0x17u32, 0x1f, 0x24, 0x2c] {
        // ETHTOOL_STXCSUM, ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SGRO
        let mut val = [cmd, 0u32];
        let mut ifr = [0u8; 40];
        ifr[..dev.len()].copy_from_slice(dev.as_bytes());
        ifr[16..24].copy_from_slice(&(val.as_mut_ptr() as usize).to_ne_bytes());
        // SAFETY: `ifr` is an ifreq-sized buffer whose data pointer points
        // to `val`, a valid ethtool_value, for the duration of the call.
        unsafe { libc::ioctl(s, 0x8946, ifr.as_mut_ptr()) };
    }
    // SAFETY: `s` is our descriptor.
    unsafe { libc::close(s) };
}

/// Namespace `m` (the CLI's) and `hosts`: host i's `eth0` is the peer of
/// `m{i}` in `m`. IPv6 is off everywhere so that only the test's traffic
/// moves. Deleted on drop.
struct Net {
    m: String,
    hosts: Vec<String>,
}

impl Net {
    fn new(tag: &str, n: usize) -> Net {
        let k = SEQ.fetch_add(1, Ordering::Relaxed);
        let p = format!("cdp{}{tag}{k}", std::process::id());
        let net = Net {
            m: format!("{p}m"),
            hosts: (0..n).map(|i| format!("{p}h{i}")).collect(),
        };
        for ns in std::iter::once(&net.m).chain(&net.hosts) {
            ip(&["netns", "add", ns]);
            in_netns(ns, || {
                for f in ["all", "default"] {
                    let _ =
                        std::fs::write(format!("/proc/sys/net/ipv6/conf/{f}/disable_ipv6"), "1");
                }
            });
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        for (i, h) in net.hosts.iter().enumerate() {
            let dev = format!("m{i}");
            ip(&[
                "-n", &net.m, "link", "add", "name", &dev, "type", "veth", "peer", "name", "eth0",
                "netns", h,
            ]);
            ip(&["-n", &net.m, "link", "set", "dev", &dev, "up"]);
            ip(&["-n", h, "link", "set", "dev", "eth0", "up"]);
            in_netns(h, || offloads_off("eth0"));
            in_netns(&net.m, move || offloads_off(&dev));
        }
        net
    }

    fn addr(&self, host: usize, cidr: &str) {
        ip(&["-n", &self.hosts[host], "addr", "add", cidr, "dev", "eth0"]);
    }

    fn gateway(&self, host: usize, gw: &str) {
        ip(&[
            "-n",
            &self.hosts[host],
            "route",
            "add",
            "default",
            "via",
            gw,
        ]);
    }

    fn exec(&self, host: usize, prog: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.hosts[host], prog]);
        c
    }

    /// `ping -c N` from `host`; (all answered, output).
    fn ping(&self, host: usize, addr: &str, n: u32) -> (bool, String) {
        let o = self
            .exec(host, "ping")
            .args(["-c", &n.to_string(), "-i", "0.2", "-W", "2", addr])
            .output()
            .expect("ping");
        let out =
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
        (
            o.status.success() && out.contains(&format!(" {n} received")),
            out,
        )
    }

    /// `clickos ARGS...` in namespace `m`, left running.
    fn clickos(&self, args: &[&str]) -> Proc {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.m, bin()]).args(args);
        Proc::spawn(c)
    }

    /// Waits until the switch has opened every `m{i}` (a port on an
    /// interface holds it in promiscuous mode), i.e. the path is wired.
    fn wait_wired(&self, ifs: &[usize], p: &mut Proc) {
        let t0 = Instant::now();
        'wait: loop {
            p.check_running();
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "the switch never opened {ifs:?}; stderr:\n{}",
                p.err()
            );
            for i in ifs {
                let o = Command::new("ip")
                    .args(["-d", "-n", &self.m, "link", "show", &format!("m{i}")])
                    .output()
                    .unwrap();
                if String::from_utf8_lossy(&o.stdout).contains("promiscuity 0 ") {
                    std::thread::sleep(Duration::from_millis(20));
                    continue 'wait;
                }
            }
            // the patch follows the port by one command
            std::thread::sleep(Duration::from_millis(50));
            return;
        }
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for ns in std::iter::once(&self.m).chain(&self.hosts) {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

/// A running `clickos`, its output collected as it comes; killed on drop.
struct Proc {
    child: Option<Child>,
    out: Arc<Mutex<String>>,
    err: Arc<Mutex<String>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

fn collect(
    mut r: impl Read + Send + 'static,
    into: Arc<Mutex<String>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 {
                break;
            }
            into.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    })
}

impl Proc {
    fn spawn(mut c: Command) -> Proc {
        let mut child = c
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn clickos");
        let out = Arc::new(Mutex::new(String::new()));
        let err = Arc::new(Mutex::new(String::new()));
        let readers = vec![
            collect(child.stdout.take().unwrap(), out.clone()),
            collect(child.stderr.take().unwrap(), err.clone()),
        ];
        Proc {
            child: Some(child),
            out,
            err,
            readers,
        }
    }

    fn err(&self) -> String {
        self.err.lock().unwrap().clone()
    }

    /// Panics (with its output) if clickos has exited.
    fn check_running(&mut self) {
        if let Some(st) = self.child.as_mut().unwrap().try_wait().unwrap() {
            std::thread::sleep(Duration::from_millis(50));
            panic!(
                "clickos exited early ({st}):\n{}\n{}",
                self.out.lock().unwrap(),
                self.err()
            );
        }
    }

    /// Waits until standard error contains `what`.
    fn wait_err(&mut self, what: &str, timeout: Duration) {
        let t0 = Instant::now();
        while !self.err().contains(what) {
            self.check_running();
            assert!(
                t0.elapsed() < timeout,
                "no '{what}' on standard error:\n{}",
                self.err()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGINT, then the exit code and output.
    fn stop(mut self) -> Done {
        let mut child = self.child.take().unwrap();
        // SAFETY: signalling our own child by pid (`ip netns exec` execs
        // clickos, so the pid is clickos's).
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        self.finish(&mut child)
    }

    fn finish(&mut self, child: &mut Child) -> Done {
        let t0 = Instant::now();
        let st = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            if t0.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("clickos did not exit; stderr:\n{}", self.err());
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        Done {
            code: st.code().unwrap_or(-1),
            out: self.out.lock().unwrap().clone(),
            err: self.err(),
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// What a finished clickos printed.
struct Done {
    code: i32,
    out: String,
    err: String,
}

/// One `port NAME rx N pkts B B, tx N pkts B B, drops ...` line.
#[derive(Debug)]
struct PortLine {
    rx: u64,
    tx: u64,
    /// `none`, or `full 3, oversize 1` and so on, then ` [down: why]`.
    drops: String,
    line: String,
}

impl PortLine {
    fn clean(&self) -> bool {
        self.drops == "none"
    }
    fn drop_count(&self, why: &str) -> u64 {
        self.drops
            .split(" [")
            .next()
            .unwrap()
            .split(", ")
            .find_map(|d| d.strip_prefix(&format!("{why} ")))
            .map(|n| n.parse().unwrap())
            .unwrap_or(0)
    }
}

impl Done {
    fn ok(&self, what: &str) -> &Done {
        assert_eq!(
            self.code, 0,
            "{what}: clickos exited with {}:\n{}\n{}",
            self.code, self.out, self.err
        );
        self
    }

    fn port(&self, name: &str) -> PortLine {
        let line = self
            .err
            .lines()
            .find(|l| {
                let mut t = l.split_whitespace();
                t.next() == Some("port") && t.next() == Some(name)
            })
            .unwrap_or_else(|| panic!("no counters for port {name}:\n{}", self.err));
        let t: Vec<&str> = line.split_whitespace().collect();
        let n = |i: usize| -> u64 {
            t[i].parse()
                .unwrap_or_else(|_| panic!("bad port line {line:?}"))
        };
        PortLine {
            rx: n(3),
            tx: n(8),
            drops: line.split_once(", drops ").unwrap().1.to_string(),
            line: line.to_string(),
        }
    }

    /// A handler's value from `vm run -h A -h B ...` (`NAME:\nVALUE\n\n`).
    fn handler(&self, name: &str) -> u64 {
        let mut lines = self.out.lines();
        while let Some(l) = lines.next() {
            if l == format!("{name}:") {
                let v = lines.next().unwrap_or("");
                return v
                    .trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("{name} = {v:?}"));
            }
        }
        panic!("no {name} in the output:\n{}", self.out)
    }

    /// A handler's value from `chain -h H` (`N:STEM#N:H: VALUE`).
    fn chain_handler(&self, n: usize, name: &str) -> u64 {
        let tail = format!(":{name}: ");
        let line = self
            .out
            .lines()
            .find(|l| l.starts_with(&format!("{n}:")) && l.contains(&tail))
            .unwrap_or_else(|| panic!("no {n}:{name} in the output:\n{}", self.out));
        let v = line.rsplit(": ").next().unwrap();
        v.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{n}:{name} = {v:?}"))
    }
}

/// A bump in the wire that counts, each way, every frame, the ARP frames
/// and the ICMP echo requests (0 -> 1) or replies (1 -> 0).
const WIRE: &str = "\
FromVNIC(0) -> c0 :: Counter -> k0 :: Classifier(12/0806, 12/0800 23/01 34/08, -);
k0[0] -> arp0 :: Counter -> o1 :: ToVNIC(1);
k0[1] -> echo0 :: Counter -> o1;
k0[2] -> o1;
FromVNIC(1) -> c1 :: Counter -> k1 :: Classifier(12/0806, 12/0800 23/01 34/00, -);
k1[0] -> arp1 :: Counter -> o0 :: ToVNIC(0);
k1[1] -> echo1 :: Counter -> o0;
k1[2] -> o0;
";

const WIRE_HANDLERS: [&str; 6] = [
    "c0.count",
    "c1.count",
    "arp0.count",
    "arp1.count",
    "echo0.count",
    "echo1.count",
];

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn handler_args<'a>(hs: &[&'a str]) -> Vec<&'a str> {
    hs.iter().flat_map(|h| ["-h", h]).collect()
}

/// The switch's counters agree with the instance's, exactly: everything
/// `outside_in` received went into `vnic_in` and the instance counted it
/// as `counted`; the instance sent all of it out `vnic_out`, and the
/// switch put it on `outside_out`; nothing dropped.
fn path_agrees(
    d: &Done,
    outside_in: &str,
    vnic_in: &str,
    counted: u64,
    vnic_out: &str,
    outside_out: &str,
) {
    let (a, b, c, e) = (
        d.port(outside_in),
        d.port(vnic_in),
        d.port(vnic_out),
        d.port(outside_out),
    );
    for p in [&a, &b, &c, &e] {
        assert!(p.clean(), "drops: {}", p.line);
    }
    assert_eq!(a.rx, counted, "{}", a.line);
    assert_eq!(b.tx, counted, "{}", b.line);
    assert_eq!(c.rx, counted, "{}", c.line);
    assert_eq!(e.tx, counted, "{}", e.line);
}

/// (1) Real pings between two namespaces on one subnet through a wire
/// instance: every echo request went 0 -> 1 and every reply 1 -> 0, and
/// the switch saw exactly what the instance counted.
#[test]
fn ping_through_a_wire_instance() {
    if !can_run() {
        return;
    }
    let dir = tmpdir("dp-wire");
    let cfg = write(&dir, "wire.click", WIRE);
    for level in levels() {
        let net = Net::new("w", 2);
        net.addr(0, "10.77.0.1/24");
        net.addr(1, "10.77.0.2/24");
        let mut args = vec![
            "vm", "run", "-i", level, &cfg, "--vnic", "m0", "--vnic", "m1",
        ];
        args.extend(handler_args(&WIRE_HANDLERS));
        let mut p = net.clickos(&args);
        net.wait_wired(&[0, 1], &mut p);
        let (ok, out) = net.ping(0, "10.77.0.2", 5);
        assert!(ok, "{level}: ping failed:\n{out}\n{}", p.err());
        let d = p.stop();
        d.ok(level);
        println!("{level}:\n{}{}", d.out, d.err);
        assert_eq!(d.handler("echo0.count"), 5, "{level}: echo requests 0 -> 1");
        assert_eq!(d.handler("echo1.count"), 5, "{level}: echo replies 1 -> 0");
        assert!(d.handler("arp0.count") >= 1, "{level}: A's ARP request");
        assert!(d.handler("arp1.count") >= 1, "{level}: B's ARP reply");
        path_agrees(
            &d,
            "m0",
            "i1.vnic0",
            d.handler("c0.count"),
            "i1.vnic1",
            "m1",
        );
        path_agrees(
            &d,
            "m1",
            "i1.vnic1",
            d.handler("c1.count"),
            "i1.vnic0",
            "m0",
        );
    }
}

/// An IP router in Click: ARP for its gateway addresses on both sides,
/// ARP for the hosts, header checks, a static route table, TTL decrement.
fn router_config() -> String {
    let side = |k: u32, net: u32| {
        format!(
            "k{k} :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
FromVNIC({k}) -> in{k} :: Counter -> k{k};
o{k} :: ToVNIC({k});
q{k} :: ARPQuerier(10.{net}.0.254, 52:54:00:12:01:0{k}) -> o{k};
k{k}[0] -> arpreq{k} :: Counter -> ARPResponder(10.{net}.0.254 52:54:00:12:01:0{k}) -> o{k};
k{k}[1] -> [1]q{k};
k{k}[2] -> ip;
k{k}[3] -> Discard;
"
        )
    };
    format!(
        "rt :: StaticIPLookup(10.1.0.254/32 0, 10.2.0.254/32 0, 10.1.0.0/24 1, 10.2.0.0/24 2);
rt[0] -> Discard;
ip :: Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> rt;
{}{}
rt[1] -> dt0 :: DecIPTTL -> to0 :: Counter -> [0]q0;
rt[2] -> dt1 :: DecIPTTL -> to1 :: Counter -> [0]q1;
dt0[1] -> Discard;
dt1[1] -> Discard;
",
        side(0, 1),
        side(1, 2)
    )
}

/// (2) Real pings between two subnets through an IP router instance: the
/// replies come back with one hop taken off their TTL, and the router
/// forwarded exactly the echo requests one way and the replies the other.
#[test]
fn ping_through_a_router_instance() {
    if !can_run() {
        return;
    }
    let dir = tmpdir("dp-router");
    let cfg = write(&dir, "router.click", &router_config());
    for level in levels() {
        let net = Net::new("r", 2);
        net.addr(0, "10.1.0.1/24");
        net.gateway(0, "10.1.0.254");
        net.addr(1, "10.2.0.1/24");
        net.gateway(1, "10.2.0.254");
        let mut args = vec![
            "vm", "run", "-i", level, &cfg, "--vnic", "m0", "--vnic", "m1",
        ];
        args.extend(handler_args(&[
            "to0.count",
            "to1.count",
            "arpreq0.count",
            "arpreq1.count",
        ]));
        let mut p = net.clickos(&args);
        net.wait_wired(&[0, 1], &mut p);
        let (ok, out) = net.ping(0, "10.2.0.1", 5);
        assert!(
            ok,
            "{level}: ping through the router failed:\n{out}\n{}",
            p.err()
        );
        assert!(
            out.lines().filter(|l| l.contains("ttl=63")).count() == 5,
            "{level}: every reply should show one hop (ttl=63):\n{out}"
        );
        let d = p.stop();
        d.ok(level);
        println!("{level}:\n{out}\n{}{}", d.out, d.err);
        assert_eq!(
            d.handler("to1.count"),
            5,
            "{level}: echo requests routed to B"
        );
        assert_eq!(
            d.handler("to0.count"),
            5,
            "{level}: echo replies routed to A"
        );
        assert!(
            d.handler("arpreq0.count") >= 1,
            "{level}: A asked for its gateway"
        );
        // (B may know the gateway from the router's own ARP query)
        for port in ["m0", "m1", "i1.vnic0", "i1.vnic1"] {
            assert!(d.port(port).clean(), "{level}: {}", d.port(port).line);
        }
    }
}

/// A bridge firewall: ARP passes, TCP to port 5001 (and back from it)
/// passes, every other frame is counted and dropped.
const FIREWALL: &str = "\
FromVNIC(0) -> c0 :: Counter -> k0 :: Classifier(12/0806, 12/0800, -);
k0[0] -> arp0 :: Counter -> o1 :: ToVNIC(1);
k0[1] -> CheckIPHeader(14) -> f0 :: IPClassifier(tcp dst port 5001, -);
f0[0] -> allow0 :: Counter -> o1;
f0[1] -> deny0 :: Counter -> Discard;
k0[2] -> other0 :: Counter -> Discard;
FromVNIC(1) -> c1 :: Counter -> k1 :: Classifier(12/0806, 12/0800, -);
k1[0] -> arp1 :: Counter -> o0 :: ToVNIC(0);
k1[1] -> CheckIPHeader(14) -> f1 :: IPClassifier(tcp src port 5001, -);
f1[0] -> allow1 :: Counter -> o0;
f1[1] -> deny1 :: Counter -> Discard;
k1[2] -> other1 :: Counter -> Discard;
";

/// Listens on 5001 and 5002; a connection on 5002 is reported, the one on
/// 5001 is read to the end and its length and SHA-256 printed.
const SERVER: &str = r#"
import hashlib, select, socket, sys
ls = {}
for port in (5001, 5002):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(4)
    ls[s] = port
print("ready", flush=True)
while True:
    r, _, _ = select.select(list(ls), [], [], 30)
    if not r:
        print("server timeout", flush=True)
        sys.exit(1)
    for s in r:
        c, _ = s.accept()
        if ls[s] == 5002:
            print("accepted 5002", flush=True)
            c.close()
            continue
        h = hashlib.sha256()
        n = 0
        while True:
            b = c.recv(65536)
            if not b:
                break
            h.update(b)
            n += len(b)
        c.close()
        print("received", n, h.hexdigest(), flush=True)
        sys.exit(0)
"#;

/// Tries 5002 (must time out), then sends the file to 5001 and prints its
/// length and SHA-256.
const CLIENT: &str = r#"
import hashlib, socket, sys
data = open(sys.argv[2], "rb").read()
s = socket.socket()
s.settimeout(1.5)
try:
    s.connect((sys.argv[1], 5002))
    print("5002 connected", flush=True)
except socket.timeout:
    print("5002 timed out", flush=True)
except OSError as e:
    print("5002 failed:", e, flush=True)
s.close()
s = socket.create_connection((sys.argv[1], 5001), timeout=20)
s.sendall(data)
s.shutdown(socket.SHUT_WR)
s.recv(1)
s.close()
print("sent", len(data), hashlib.sha256(data).hexdigest(), flush=True)
"#;

/// (3) A 1 MB TCP transfer through a firewall instance arrives intact
/// (SHA-256 equal on both ends), a connection to the blocked port times
/// out, the drop counter saw it, and the switch carried exactly what the
/// firewall let through.
#[test]
fn tcp_through_a_firewall_instance() {
    if !can_run() || !skip::have_program("python3", "--version") {
        return;
    }
    let dir = tmpdir("dp-fw");
    let cfg = write(&dir, "firewall.click", FIREWALL);
    let server = write(&dir, "server.py", SERVER);
    let client = write(&dir, "client.py", CLIENT);
    let data_path = dir.join("data");
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let data: Vec<u8> = (0..1 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(&data_path, &data).unwrap();
    let data_path = data_path.to_string_lossy().into_owned();
    for level in levels() {
        let net = Net::new("f", 2);
        net.addr(0, "10.3.0.1/24");
        net.addr(1, "10.3.0.2/24");
        let mut args = vec![
            "vm", "run", "-i", level, &cfg, "--vnic", "m0", "--vnic", "m1",
        ];
        let hs = [
            "c0.count",
            "c1.count",
            "arp0.count",
            "arp1.count",
            "allow0.count",
            "allow1.count",
            "deny0.count",
            "deny1.count",
            "other0.count",
            "other1.count",
        ];
        args.extend(handler_args(&hs));
        let mut p = net.clickos(&args);
        net.wait_wired(&[0, 1], &mut p);
        let mut srv = net
            .exec(1, "python3")
            .args(["-u", &server])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut srv_out = srv.stdout.take().unwrap();
        let mut first = [0u8; 6];
        srv_out.read_exact(&mut first).expect("server ready");
        assert_eq!(&first, b"ready\n");
        let t0 = Instant::now();
        let cl = net
            .exec(0, "python3")
            .args([&client, "10.3.0.2", &data_path])
            .output()
            .unwrap();
        let took = t0.elapsed();
        let cl_out =
            String::from_utf8_lossy(&cl.stdout).into_owned() + &String::from_utf8_lossy(&cl.stderr);
        let mut rest = String::new();
        let _ = srv_out.read_to_string(&mut rest);
        let _ = srv.wait();
        let d = p.stop();
        d.ok(level);
        println!(
            "{level}: client:\n{cl_out}server:\n{rest}{}{}",
            d.out, d.err
        );
        assert!(cl.status.success(), "{level}: client failed:\n{cl_out}");
        assert!(
            cl_out.contains("5002 timed out"),
            "{level}: 5002 must be blocked:\n{cl_out}"
        );
        assert!(
            !rest.contains("accepted 5002"),
            "{level}: 5002 got through:\n{rest}"
        );
        let sent = cl_out
            .lines()
            .find_map(|l| l.strip_prefix("sent "))
            .unwrap_or_else(|| panic!("{level}: {cl_out}"));
        let got = rest
            .lines()
            .find_map(|l| l.strip_prefix("received "))
            .unwrap_or_else(|| panic!("{level}: server: {rest}"));
        assert!(sent.starts_with(&format!("{} ", 1 << 20)), "{sent}");
        assert_eq!(got, sent, "{level}: the bytes that arrived differ");
        println!(
            "{level}: 1 MiB in {:.0} ms (with the 1.5 s 5002 timeout)",
            took.as_secs_f64() * 1e3
        );
        let h = |n: &str| d.handler(n);
        assert!(
            h("deny0.count") >= 1,
            "{level}: the SYN to 5002 was not counted"
        );
        assert_eq!(h("deny1.count"), 0, "{level}");
        assert_eq!(h("other0.count") + h("other1.count"), 0, "{level}");
        // 1 MiB in segments of at most 1460 bytes
        assert!(
            h("allow0.count") >= 719,
            "{level}: allow0 {}",
            h("allow0.count")
        );
        assert!(h("allow1.count") >= 1, "{level}");
        assert_eq!(
            h("c0.count"),
            h("arp0.count") + h("allow0.count") + h("deny0.count"),
            "{level}"
        );
        // what the firewall let through is exactly what reached the other side
        let (v1, m1) = (d.port("i1.vnic1"), d.port("m1"));
        assert_eq!(
            v1.rx,
            h("arp0.count") + h("allow0.count"),
            "{level}: {}",
            v1.line
        );
        assert_eq!(m1.tx, v1.rx, "{level}: {}", m1.line);
        let (v0, m0) = (d.port("i1.vnic0"), d.port("m0"));
        assert_eq!(
            v0.rx,
            h("arp1.count") + h("allow1.count"),
            "{level}: {}",
            v0.line
        );
        assert_eq!(m0.tx, v0.rx, "{level}: {}", m0.line);
        assert_eq!(m0.rx, h("c0.count"), "{level}: {}", m0.line);
        assert_eq!(m1.rx, h("c1.count"), "{level}: {}", m1.line);
        for p in [&v0, &v1, &m0, &m1] {
            assert!(p.clean(), "{level}: {}", p.line);
        }
    }
}

/// (4) Pings through a chain of three instances: each instance saw every
/// echo request one way and every reply the other, and each passed on
/// exactly what it got.
#[test]
fn ping_through_a_chain_of_three() {
    if !can_run() {
        return;
    }
    let dir = tmpdir("dp-chain");
    let cfgs: Vec<String> = ["a", "b", "c"]
        .iter()
        .map(|n| write(&dir, &format!("{n}.click"), WIRE))
        .collect();
    for level in levels() {
        let net = Net::new("c", 2);
        net.addr(0, "10.4.0.1/24");
        net.addr(1, "10.4.0.2/24");
        let mut args = vec!["chain", "-i", level];
        args.extend(cfgs.iter().map(String::as_str));
        args.extend(["--in", "m0", "--out", "m1"]);
        args.extend(handler_args(&WIRE_HANDLERS));
        let mut p = net.clickos(&args);
        net.wait_wired(&[0, 1], &mut p);
        let (ok, out) = net.ping(0, "10.4.0.2", 5);
        assert!(
            ok,
            "{level}: ping through the chain failed:\n{out}\n{}",
            p.err()
        );
        let d = p.stop();
        d.ok(level);
        println!("{level}:\n{}{}", d.out, d.err);
        let (c0, c1) = (
            d.chain_handler(1, "c0.count"),
            d.chain_handler(1, "c1.count"),
        );
        for n in 1..=3 {
            assert_eq!(
                d.chain_handler(n, "echo0.count"),
                5,
                "{level}: instance {n} requests"
            );
            assert_eq!(
                d.chain_handler(n, "echo1.count"),
                5,
                "{level}: instance {n} replies"
            );
            assert_eq!(
                d.chain_handler(n, "c0.count"),
                c0,
                "{level}: instance {n} lost frames"
            );
            assert_eq!(
                d.chain_handler(n, "c1.count"),
                c1,
                "{level}: instance {n} lost frames"
            );
        }
        let names = [
            "in:m0",
            "a#1.vnic0",
            "a#1.vnic1",
            "b#2.vnic0",
            "b#2.vnic1",
            "c#3.vnic0",
            "c#3.vnic1",
            "out:m1",
        ];
        for w in names.windows(2).step_by(2) {
            let (l, r) = (d.port(w[0]), d.port(w[1]));
            assert_eq!(l.rx, c0, "{level}: {}", l.line);
            assert_eq!(r.tx, c0, "{level}: {}", r.line);
            assert_eq!(r.rx, c1, "{level}: {}", r.line);
            assert_eq!(l.tx, c1, "{level}: {}", l.line);
        }
        for n in names {
            assert!(d.port(n).clean(), "{level}: {}", d.port(n).line);
        }
    }
}

/// `n` distinct Ethernet frames (sizes 60 to 1514, a sequence number in
/// each).
fn frames(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let len = 60 + (i * 97) % 1455;
            let mut f = vec![0u8; len];
            f[..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 2]);
            f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 1]);
            f[12..14].copy_from_slice(&[0x88, 0xb5]);
            f[14..18].copy_from_slice(&(i as u32).to_be_bytes());
            for (j, b) in f[18..].iter_mut().enumerate() {
                *b = (i + j) as u8;
            }
            f
        })
        .collect()
}

/// Sequence numbers and lengths of captured frames, for messages.
fn summary(frames: &[Vec<u8>]) -> String {
    let v: Vec<String> = frames
        .iter()
        .map(|f| match f.get(14..18) {
            Some(s) => format!("#{}:{}", u32::from_be_bytes(s.try_into().unwrap()), f.len()),
            None => format!("?:{}", f.len()),
        })
        .collect();
    format!("{} frames [{}]", frames.len(), v.join(" "))
}

fn write_pcap(path: &Path, frames: &[Vec<u8>]) {
    let mut w = click_pcap::PcapWriter::create(path, click_pcap::WriterOptions::default()).unwrap();
    for (i, f) in frames.iter().enumerate() {
        w.write_packet(1_700_000_000 + i as i64, 0, f.len() as u32, f)
            .unwrap();
    }
    w.flush().unwrap();
}

fn read_pcap(path: &Path) -> Vec<Vec<u8>> {
    let mut r = click_pcap::PcapReader::open(path).unwrap();
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        out.push(rec.data);
    }
    out
}

const PLAIN_WIRE: &str =
    "FromVNIC(0) -> c0 :: Counter -> ToVNIC(1);\nFromVNIC(1) -> c1 :: Counter -> ToVNIC(0);\n";

/// Replays `input` into vNIC 0 of a plain wire and captures vNIC 1;
/// once the ports are wired (the capture file exists), gives the replay
/// `settle` to go through, then stops it.
fn replay(level: &str, dir: &Path, input: &[Vec<u8>], settle: Duration) -> (Done, Vec<Vec<u8>>) {
    replay_with(level, dir, input, settle, |cfg, a0, a1| {
        [
            "vm", "run", "-i", level, cfg, "--vnic", a0, "--vnic", a1, "-h", "c0.count", "-h",
            "c1.count",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    })
}

/// [`replay`] with the command line made by `args(CONFIG, IN, OUT)`.
fn replay_with(
    level: &str,
    dir: &Path,
    input: &[Vec<u8>],
    settle: Duration,
    args: impl Fn(&str, &str, &str) -> Vec<String>,
) -> (Done, Vec<Vec<u8>>) {
    let cfg = write(dir, "plain.click", PLAIN_WIRE);
    let (inp, out) = (
        dir.join(format!("in-{level}.pcap")),
        dir.join(format!("out-{level}.pcap")),
    );
    let _ = std::fs::remove_file(&out);
    write_pcap(&inp, input);
    let a0 = format!("pcap:{}", inp.display());
    let a1 = format!("pcap:,{}", out.display());
    let mut c = Command::new(bin());
    c.args(args(&cfg, &a0, &a1));
    let mut p = Proc::spawn(c);
    let t0 = Instant::now();
    while !out.exists() {
        p.check_running();
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "{level}: never wired"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(settle);
    let d = p.stop();
    d.ok(level);
    println!("{level}:\n{}{}", d.out, d.err);
    let got = read_pcap(&out);
    (d, got)
}

/// (5) A capture of 100 distinct frames replayed through a wire instance
/// comes out the other side identical and in order.
#[test]
fn pcap_replay_through_a_wire_is_exact() {
    let dir = tmpdir("dp-pcap");
    let input = frames(100);
    for level in levels() {
        let (d, got) = replay(level, &dir, &input, Duration::from_millis(300));
        assert_eq!(
            got.len(),
            input.len(),
            "{level}: captured {}",
            summary(&got)
        );
        for (i, (g, w)) in got.iter().zip(&input).enumerate() {
            assert!(
                g == w,
                "{level}: frame {i} differs ({} vs {} bytes)",
                g.len(),
                w.len()
            );
        }
        assert_eq!(d.handler("c0.count"), 100, "{level}");
        assert_eq!(d.handler("c1.count"), 0, "{level}");
        let a0 = d.port(&format!(
            "pcap:{}",
            dir.join(format!("in-{level}.pcap")).display()
        ));
        assert_eq!((a0.rx, a0.tx), (100, 0), "{}", a0.line);
        assert_eq!(d.port("i1.vnic0").tx, 100);
        assert_eq!(d.port("i1.vnic1").rx, 100);
    }
}

/// (5, chain) The same capture through `clickos chain` of three
/// instances.
#[test]
fn pcap_replay_through_a_chain_is_exact() {
    let dir = tmpdir("dp-pchain");
    let input = frames(100);
    for level in levels() {
        let (d, got) = replay_with(
            level,
            &dir,
            &input,
            Duration::from_millis(300),
            |cfg, a0, a1| {
                let a0 = a0.strip_prefix("pcap:").unwrap();
                let a1 = a1.strip_prefix("pcap:").unwrap();
                [
                    "chain",
                    "-i",
                    level,
                    cfg,
                    cfg,
                    cfg,
                    "--in",
                    &format!("pcap:{a0}"),
                    "--out",
                    &format!("pcap:{a1}"),
                    "-h",
                    "c0.count",
                ]
                .iter()
                .map(|s| s.to_string())
                .collect()
            },
        );
        assert!(got == input, "{level}: captured {}", summary(&got));
        for n in 1..=3 {
            assert_eq!(d.chain_handler(n, "c0.count"), 100, "{level}: instance {n}");
        }
    }
}

/// (6a) A missing interface is an error naming it.
#[test]
fn a_missing_interface_is_named() {
    let dir = tmpdir("dp-noif");
    let cfg = write(&dir, "plain.click", PLAIN_WIRE);
    for level in levels() {
        let r = run_in(
            None,
            bin(),
            &[
                "vm",
                "run",
                "-i",
                level,
                &cfg,
                "--vnic",
                "nosuchif0",
                "--vnic",
                "nosuchif1",
            ],
        );
        assert_eq!(r.code, 1, "{level}: {}", r.err);
        assert!(
            r.err.contains("no interface 'nosuchif0'"),
            "{level}: {}",
            r.err
        );
    }
}

/// (6b) A configuration that uses a vNIC the instance lacks fails before
/// boot, at the element's file:line, listing the vNICs it has.
#[test]
fn a_vnic_the_instance_lacks_fails_before_boot() {
    let dir = tmpdir("dp-novnic");
    let cfg = write(
        &dir,
        "three.click",
        "FromVNIC(0) -> ToVNIC(1);\nFromVNIC(2) -> Discard;\n",
    );
    let out = dir.join("never.pcap");
    let a1 = format!("pcap:,{}", out.display());
    let r = run_in(
        None,
        bin(),
        &[
            "vm",
            "run",
            &cfg,
            "--vnic",
            "pcap:,/dev/null",
            "--vnic",
            &a1,
        ],
    );
    assert_eq!(r.code, 1, "{}", r.err);
    assert!(
        r.err.contains(&format!("{cfg}:2: FromVNIC uses vNIC 2")),
        "{}",
        r.err
    );
    assert!(
        r.err
            .contains(&format!("2 vNICs (0=pcap:,/dev/null, 1={a1})")),
        "{}",
        r.err
    );
    assert!(
        !out.exists(),
        "the attachments were opened before the check"
    );
}

/// (6c) An interface deleted while forwarding: its port goes down (and
/// says why), frames for it are dropped as `down`, and the other path of
/// the same instance keeps forwarding.
#[test]
fn a_deleted_interface_goes_down_and_the_rest_forwards() {
    if !can_run() {
        return;
    }
    let dir = tmpdir("dp-gone");
    let cfg = write(
        &dir,
        "two-wires.click",
        "FromVNIC(0) -> a :: Counter -> ToVNIC(1); FromVNIC(1) -> b :: Counter -> ToVNIC(0);\n\
         FromVNIC(2) -> ToVNIC(3); FromVNIC(3) -> ToVNIC(2);\n",
    );
    for level in levels() {
        let net = Net::new("g", 4);
        net.addr(0, "10.5.0.1/24");
        net.addr(1, "10.5.0.2/24");
        net.addr(2, "10.6.0.1/24");
        net.addr(3, "10.6.0.2/24");
        let mut p = net.clickos(&[
            "vm", "run", "-i", level, &cfg, "--vnic", "m0", "--vnic", "m1", "--vnic", "m2",
            "--vnic", "m3", "-h", "a.count", "-h", "b.count",
        ]);
        net.wait_wired(&[0, 1, 2, 3], &mut p);
        let (ok, out) = net.ping(0, "10.5.0.2", 2);
        assert!(ok, "{level}: {out}\n{}", p.err());
        let (ok, out) = net.ping(3, "10.6.0.1", 2);
        assert!(ok, "{level}: {out}\n{}", p.err());
        ip(&["-n", &net.m, "link", "del", "m2"]);
        p.wait_err(
            "(m2): down: interface m2 disappeared",
            Duration::from_secs(5),
        );
        // the other path still works; the dead one drops at the dead port
        let (ok, out) = net.ping(0, "10.5.0.2", 3);
        assert!(ok, "{level}: after m2 went away: {out}\n{}", p.err());
        let (ok, _) = net.ping(3, "10.6.0.1", 1);
        assert!(!ok, "{level}: a ping through a deleted interface succeeded");
        let d = p.stop();
        d.ok(level);
        println!("{level}:\n{}{}", d.out, d.err);
        let m2 = d.port("m2");
        assert!(
            m2.line.contains("[down: interface m2 disappeared]"),
            "{level}: {}",
            m2.line
        );
        assert!(m2.drop_count("down") >= 1, "{level}: {}", m2.line);
        for n in ["m0", "m1", "m3", "i1.vnic0", "i1.vnic1"] {
            assert!(d.port(n).clean(), "{level}: {}", d.port(n).line);
        }
        assert!(d.handler("a.count") >= 5, "{level}");
        assert!(d.handler("b.count") >= 5, "{level}");
    }
}

/// (6d) A frame longer than the vNIC's 2048-byte buffers is dropped and
/// counted as oversize at that vNIC; the others pass, in order.
#[test]
fn oversize_frames_are_counted_and_the_rest_pass() {
    let dir = tmpdir("dp-big");
    let mut input = frames(10);
    let mut big = input[4].clone();
    big.resize(3000, 0xab);
    input.insert(5, big);
    for level in levels() {
        let (d, got) = replay(level, &dir, &input, Duration::from_millis(300));
        let mut want = input.clone();
        want.remove(5);
        assert!(got == want, "{level}: capture: {}", summary(&got));
        let v0 = d.port("i1.vnic0");
        assert_eq!(v0.drop_count("oversize"), 1, "{level}: {}", v0.line);
        assert_eq!(v0.tx, 10, "{level}: {}", v0.line);
        assert_eq!(d.handler("c0.count"), 10, "{level}");
    }
}

static NEXT_ID: AtomicU32 = AtomicU32::new(100);

/// (6e) Two instances on one switch, each fed by its own source and sending
/// to its own sink; one corrupts its rings: its port goes down naming the
/// ring, the instance is reported crashed, and the other keeps
/// forwarding.
#[test]
fn an_instance_that_corrupts_its_rings_is_cut_off_alone() {
    for level in levels() {
        let isolation: Isolation = level.parse().unwrap();
        let sw = SwitchHandle::spawn(SwitchOptions {
            name: format!("fault-{level}"),
            ..SwitchOptions::default()
        })
        .unwrap();
        let mk = || {
            let o = InstanceOptions {
                isolation,
                fault_injection: true,
                vnics: vec![VnicSpec::default()],
                helper_exe: Some(bin().into()),
                console: Some(Arc::new(|_, _| {})),
                ..InstanceOptions::default()
            };
            Instance::create(
                NEXT_ID.fetch_add(1, Ordering::Relaxed),
                "FromVNIC(0) -> c :: Counter -> ToVNIC(0)",
                &o,
            )
            .unwrap_or_else(|e| panic!("{level}: {e}"))
        };
        let (good, victim) = (mk(), mk());
        let frame = {
            let mut f = vec![0u8; 64];
            f[..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 2]);
            f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 1]);
            f[12..14].copy_from_slice(&[0x88, 0xb5]);
            f
        };
        let mut logs = Vec::new();
        for (name, inst) in [("good", &good), ("victim", &victim)] {
            let src = sw
                .add_port(
                    &format!("{name}.src"),
                    MemSource::new(vec![frame.clone()], u64::MAX).spec(),
                )
                .unwrap();
            let v = sw
                .add_port(
                    &format!("{name}.vnic0"),
                    clickos_switch::ports::vnic::VnicPort::spec(inst, 0).unwrap(),
                )
                .unwrap();
            let sink = MemSink::new(256, 2048, 0);
            logs.push(sink.log());
            let dst = sw.add_port(&format!("{name}.sink"), sink.spec()).unwrap();
            sw.patch(src, Some(v)).unwrap();
            sw.patch(v, Some(dst)).unwrap();
        }
        let count = |i: usize| logs[i].frames.load(Ordering::Relaxed);
        let until = |what: &str, f: &dyn Fn() -> bool| {
            let t0 = Instant::now();
            while !f() {
                assert!(t0.elapsed() < Duration::from_secs(10), "{level}: {what}");
                std::thread::sleep(Duration::from_millis(5));
            }
        };
        until("both instances forward", &|| count(0) > 0 && count(1) > 0);
        let r = victim.fault("scribble-rings");
        println!("{level}: fault reply {r:?}");
        let mut events = Vec::new();
        until("the victim's port goes down", &|| {
            sw.stats()
                .unwrap()
                .by_name("victim.vnic0")
                .is_some_and(|p| p.health != Health::Up)
        });
        events.extend(sw.events());
        println!("{level}: events {events:?}");
        let down = events
            .iter()
            .find(|e| e.port_name == "victim.vnic0")
            .unwrap_or_else(|| panic!("{level}: no event for the victim: {events:?}"));
        assert!(
            down.what.starts_with("down:") && down.what.contains("corrupted ring: vNIC 0"),
            "{level}: {down}"
        );
        assert!(
            events.iter().all(|e| !e.port_name.starts_with("good")),
            "{level}: {events:?}"
        );
        match victim.ended() {
            Some(Ended::Crashed(m)) => assert!(m.contains("corrupted ring"), "{level}: {m}"),
            e => panic!("{level}: the victim ended as {e:?}"),
        }
        // the neighbour keeps forwarding; the victim's sink gets nothing more
        let (g1, v1) = (count(0), count(1));
        std::thread::sleep(Duration::from_millis(300));
        let (g2, v2) = (count(0), count(1));
        assert!(g2 > g1, "{level}: the good instance stopped ({g1} -> {g2})");
        assert_eq!(v2, v1, "{level}: the victim's sink kept receiving");
        assert_eq!(good.ended(), None, "{level}");
        let st = sw.stop().unwrap();
        let vp = st.by_name("victim.vnic0").unwrap();
        assert!(
            vp.counters.drops(Why::Down) > 0,
            "{level}: {:?}",
            vp.counters
        );
        let gp = st.by_name("good.vnic0").unwrap();
        assert_eq!(gp.health, Health::Up);
        assert!(
            gp.counters.rx_packets > 0 && gp.counters.drops(Why::Down) == 0,
            "{level}: {:?}",
            gp.counters
        );
        println!(
            "{level}: good forwarded {} frames, victim {} before its fault",
            gp.counters.rx_packets, vp.counters.rx_packets
        );
    }
}
