//! The nine middleboxes of `middleboxes/`:
//!
//! - every configuration parses and initializes under `clickos run`, with
//!   its devices replaced by pcap files (FromDump/ToDump), and the ones
//!   whose output a capture shows do what they should (wire, mirror,
//!   firewall, IDS, flow monitor, the CGNAT's and router's first ARP);
//! - every configuration boots unchanged in an instance (`clickos vm run
//!   --vnic pcap:IN,OUT`; KVM, else the process isolation level) and the
//!   wire, firewall and IDS forward what they should there too;
//! - real traffic in network namespaces: TCP, UDP, pings and ICMP errors
//!   from two inside hosts through the CGNAT (with its mapping log), HTTP
//!   requests balanced by the load balancer over three back ends, and the
//!   IDS dropping a request its rules name while the rest passes.
//!
//! The namespace tests need root, `ip netns`, python3 (and curl, ping);
//! they skip with a message otherwise (a failure in CI).

mod common;
use common::netns::{ip, sh, spawn_sh, web_server};
use common::*;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

const ALL: [&str; 9] = ["wr", "em", "ir", "fw", "cgnat", "bras", "ids", "lb", "fm"];

fn config(name: &str) -> String {
    std::fs::read_to_string(root().join(format!("middleboxes/{name}.click"))).unwrap()
}

// ---------------------------------------------------------------------
// frames

fn csum(d: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in d.chunks(2) {
        s += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// An Ethernet/IPv4 frame; `l4` is the transport header and payload
/// (checksums left zero: nothing here checks them).
fn frame(src: [u8; 4], dst: [u8; 4], proto: u8, l4: &[u8]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
    let mut ip = vec![0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&((20 + l4.len()) as u16).to_be_bytes());
    ip[8] = 64;
    ip[9] = proto;
    ip[12..16].copy_from_slice(&src);
    ip[16..20].copy_from_slice(&dst);
    let c = csum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(l4);
    f
}

fn tcp(sp: u16, dp: u16, flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut h = vec![0u8; 20];
    h[0..2].copy_from_slice(&sp.to_be_bytes());
    h[2..4].copy_from_slice(&dp.to_be_bytes());
    h[12] = 5 << 4;
    h[13] = flags;
    h.extend_from_slice(payload);
    h
}

fn udp(sp: u16, dp: u16, payload: &[u8]) -> Vec<u8> {
    let mut h = vec![0u8; 8];
    h[0..2].copy_from_slice(&sp.to_be_bytes());
    h[2..4].copy_from_slice(&dp.to_be_bytes());
    h[4..6].copy_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    h.extend_from_slice(payload);
    h
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
    let Ok(mut r) = click_pcap::PcapReader::open(path) else {
        return Vec::new();
    };
    let mut v = Vec::new();
    while let Ok(Some(rec)) = r.next_record() {
        v.push(rec.data);
    }
    v
}

/// Traffic for a two-link middlebox: link 0 gets a web request, a DNS
/// query, a telnet attempt (the firewall's default deny), a request for
/// /etc/passwd and a NOP sled (the IDS's drop rules); link 1 a reply.
fn traffic() -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let c = [10, 1, 1, 5];
    let s = [10, 2, 2, 80];
    let in0 = vec![
        frame(
            c,
            s,
            6,
            &tcp(40001, 80, 0x18, b"GET /index.html HTTP/1.1\r\n\r\n"),
        ),
        frame(c, s, 17, &udp(5353, 123, b"ntp?")),
        frame(c, s, 6, &tcp(40002, 23, 0x02, b"")),
        frame(
            c,
            s,
            6,
            &tcp(40003, 80, 0x18, b"GET /etc/passwd HTTP/1.1\r\n\r\n"),
        ),
        frame(
            c,
            s,
            6,
            &tcp(40004, 80, 0x18, b"AB\x90\x90\x90\x90\x90\x90\x90\x90CD"),
        ),
    ];
    let in1 = vec![frame(
        s,
        c,
        6,
        &tcp(80, 40001, 0x18, b"HTTP/1.1 200 OK\r\n\r\n"),
    )];
    (in0, in1)
}

// ---------------------------------------------------------------------
// clickos run, devices replaced by dumps

/// Runs middlebox `name` under `clickos run` with `FromDevice($DEVn)` read
/// from `inN.pcap` and `ToDevice($DEVn)` written to `outN.pcap`, for one
/// second; returns (outputs per link, the run).
fn run_on_dumps(
    name: &str,
    defines: &[&str],
    in0: &[Vec<u8>],
    in1: &[Vec<u8>],
) -> (Vec<Vec<Vec<u8>>>, Run) {
    let dir = tmpdir(&format!("mbox-run-{name}"));
    let mut cfg = config(name);
    for n in 0..2 {
        let inp = dir.join(format!("in{n}.pcap"));
        let outp = dir.join(format!("out{n}.pcap"));
        let _ = std::fs::remove_file(&outp);
        write_pcap(&inp, if n == 0 { in0 } else { in1 });
        cfg = cfg
            .replace(
                &format!("FromDevice($DEV{n})"),
                &format!("FromDump({}, STOP false, TIMING false)", inp.display()),
            )
            .replace(
                &format!("ToDevice($DEV{n})"),
                &format!("ToDump({})", outp.display()),
            );
    }
    assert!(!cfg.contains("Device("), "{name}: devices left");
    if name == "fm" {
        // export every flow before the end
        cfg.push_str("\nScript(wait 0.7s, write fx0.flush, write fx1.flush, wait 0.3s, stop);\n");
    } else {
        cfg.push_str("\nScript(wait 1s, stop);\n");
    }
    let file = dir.join(format!("{name}.click"));
    std::fs::write(&file, &cfg).unwrap();
    let mut args = vec![file.to_string_lossy().into_owned()];
    args.extend(defines.iter().map(|s| s.to_string()));
    let a: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    let r = run_in(Some(&dir), bin(), &[&["run"], &a[..]].concat());
    assert_eq!(r.code, 0, "{name}: {}", r.err);
    let outs = (0..2)
        .map(|n| read_pcap(&dir.join(format!("out{n}.pcap"))))
        .collect();
    (outs, r)
}

#[test]
fn every_middlebox_runs_on_dumps() {
    let (in0, in1) = traffic();
    for name in ALL {
        let (outs, r) = run_on_dumps(name, &[], &in0, &in1);
        match name {
            "wr" => {
                assert_eq!(outs[1], in0, "{name}");
                assert_eq!(outs[0], in1, "{name}");
            }
            // No PPPoE in this traffic (tests/bras.rs drives real
            // sessions): nothing goes back to the access link and no
            // subscriber packet reaches the uplink.
            "bras" => {
                assert!(
                    outs[0].is_empty(),
                    "bras: {} frames to the access link",
                    outs[0].len()
                );
                assert!(
                    outs[1].iter().all(|f| !in0.contains(f)),
                    "bras forwarded a non-PPPoE frame"
                );
            }
            "em" => {
                assert_eq!(outs[0].len(), in0.len());
                assert_eq!(&outs[0][0][..6], &in0[0][6..12], "mirrored");
                assert_eq!(&outs[0][0][12..], &in0[0][12..]);
            }
            "fw" => {
                // web and NTP allowed, telnet denied; the rest is port 80
                assert_eq!(
                    outs[1],
                    vec![
                        in0[0].clone(),
                        in0[1].clone(),
                        in0[3].clone(),
                        in0[4].clone()
                    ]
                );
                assert_eq!(outs[0], in1);
            }
            "ids" => {
                assert_eq!(
                    outs[1],
                    vec![in0[0].clone(), in0[1].clone(), in0[2].clone()],
                    "{}",
                    r.err
                );
                assert_eq!(outs[0], in1);
                assert!(
                    r.err
                        .contains("[1:1000001:1] HTTP request for /etc/passwd [**]"),
                    "{}",
                    r.err
                );
                assert!(r.err.contains("x86 NOP sled"), "{}", r.err);
            }
            "fm" => {
                // the traffic passes; the flows are exported when idle
                assert_eq!(outs[0], in1);
                assert_eq!(&outs[1][..in0.len()], &in0[..]);
            }
            "cgnat" | "ir" | "lb" => {
                // a router's first frames out are ARP queries
                for o in &outs {
                    assert!(
                        o.iter().all(|f| f[12..14] == [0x08, 0x06]),
                        "{name}: only ARP before replies"
                    );
                }
            }
            _ => unreachable!(),
        }
    }
}

/// The flow monitor exports IPFIX to the collector when flows go idle.
#[test]
fn flow_monitor_exports_ipfix() {
    let (in0, in1) = traffic();
    let (outs, r) = run_on_dumps("fm", &["INACTIVE=100ms"], &in0, &in1);
    let ipfix: Vec<&Vec<u8>> = outs[1]
        .iter()
        .filter(|f| f.len() > 42 && f[23] == 17 && f[36..38] == 4739u16.to_be_bytes())
        .collect();
    assert!(!ipfix.is_empty(), "no IPFIX messages: {}", r.err);
    // IPFIX version 10, from SRC to COLLECTOR
    assert_eq!(&ipfix[0][42..44], &[0, 10]);
    assert_eq!(&ipfix[0][26..30], &[192, 0, 2, 254]);
    assert_eq!(&ipfix[0][30..34], &[192, 0, 2, 1]);
}

// ---------------------------------------------------------------------
// unchanged in an instance

fn level() -> &'static str {
    if clickos_instance::Isolation::Vm.available().is_ok() {
        "vm"
    } else {
        skip::require(
            clickos_instance::Isolation::Vm
                .available()
                .map_err(|w| format!("vm isolation unavailable: {w}")),
        );
        "process"
    }
}

/// Boots middlebox `name` unchanged with `--vnic pcap:in0,out0 --vnic
/// pcap:in1,out1`, lets the captures replay, stops it.
fn run_in_instance(name: &str, in0: &[Vec<u8>], in1: &[Vec<u8>]) -> (Vec<Vec<Vec<u8>>>, String) {
    let dir = tmpdir(&format!("mbox-vm-{name}"));
    let mut vnics = Vec::new();
    for n in 0..2 {
        let inp = dir.join(format!("in{n}.pcap"));
        let outp = dir.join(format!("out{n}.pcap"));
        let _ = std::fs::remove_file(&outp);
        write_pcap(&inp, if n == 0 { in0 } else { in1 });
        vnics.push(format!("pcap:{},{}", inp.display(), outp.display()));
    }
    let file = root().join(format!("middleboxes/{name}.click"));
    let mut c = Command::new(bin());
    c.args(["vm", "run", "-i", level()])
        .arg(&file)
        .args(["--vnic", &vnics[0]]);
    if name != "em" {
        c.args(["--vnic", &vnics[1]]);
    }
    let child = c
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !dir.join("out0.pcap").exists() && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(1500));
    let o = stop(child);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        dir.join("out0.pcap").exists(),
        "{name}: never wired: {text}"
    );
    let outs = (0..2)
        .map(|n| read_pcap(&dir.join(format!("out{n}.pcap"))))
        .collect();
    (outs, text)
}

fn stop(mut child: Child) -> Output {
    // SAFETY: signalling our own child by pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(15) {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    child.wait_with_output().unwrap()
}

#[test]
fn every_middlebox_boots_unchanged_in_an_instance() {
    let (in0, in1) = traffic();
    for name in ALL {
        let (outs, text) = run_in_instance(name, &in0, &in1);
        assert!(
            !text.contains("rror") || text.contains("HTTP request"),
            "{name}: {text}"
        );
        match name {
            "wr" => assert_eq!(outs[1], in0, "{name}: {text}"),
            "bras" => assert!(outs[0].is_empty(), "{name}: {text}"),
            "em" => assert_eq!(outs[0].len(), in0.len(), "{name}: {text}"),
            "fw" => assert_eq!(outs[1].len(), 4, "{name}: {text}"),
            "ids" => {
                assert_eq!(outs[1].len(), 3, "{name}: {text}");
                assert!(text.contains("HTTP request for /etc/passwd"), "{text}");
            }
            "fm" => assert_eq!(&outs[1][..in0.len()], &in0[..], "{name}: {text}"),
            _ => {
                for o in &outs {
                    assert!(o.iter().all(|f| f[12..14] == [0x08, 0x06]), "{name}");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------
// real traffic in namespaces

static SEQ: AtomicU32 = AtomicU32::new(0);

fn can_run() -> bool {
    can_use_netns()
        && skip::have_program("python3", "--version")
        && skip::have_program("curl", "--version")
        && skip::have_program("ping", "-V")
}

/// Namespaces deleted on drop.
struct Nets {
    prefix: String,
    names: Vec<String>,
}

impl Nets {
    fn new(tag: &str, names: &[&str]) -> Nets {
        let k = SEQ.fetch_add(1, Ordering::Relaxed);
        let prefix = format!("mb{}{tag}{k}", std::process::id());
        let n = Nets {
            names: names.iter().map(|s| format!("{prefix}{s}")).collect(),
            prefix,
        };
        for ns in &n.names {
            ip(&["netns", "add", ns]);
            let _ = sh(
                ns,
                "ip link set lo up; sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1",
            );
        }
        n
    }
    fn ns(&self, s: &str) -> String {
        format!("{}{s}", self.prefix)
    }
    /// A veth pair: `a` in namespace `na`, `b` in `nb`, both up, offloads
    /// off (a middlebox copying frames needs complete checksums).
    fn link(&self, na: &str, a: &str, nb: &str, b: &str) {
        let (na, nb) = (self.ns(na), self.ns(nb));
        ip(&[
            "-n", &na, "link", "add", a, "type", "veth", "peer", "name", b, "netns", &nb,
        ]);
        for (ns, d) in [(&na, a), (&nb, b)] {
            let _ = sh(
                ns,
                &format!("ip link set {d} up; ethtool -K {d} tx off tso off gso off gro off >/dev/null 2>&1"),
            );
        }
    }
    fn sh(&self, ns: &str, cmd: &str) -> Output {
        let o = sh(&self.ns(ns), cmd);
        assert!(
            o.status.success(),
            "{ns}: {cmd}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        o
    }
}

impl Drop for Nets {
    fn drop(&mut self) {
        for ns in &self.names {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

/// `clickos run` of a middlebox in a namespace, with a control socket.
struct Clickos {
    child: Option<Child>,
    sock: PathBuf,
}

impl Clickos {
    fn start(ns: &str, name: &str, dir: &Path, defines: &[String]) -> Clickos {
        let sock = dir.join("ctl");
        let _ = std::fs::remove_file(&sock);
        let file = root().join(format!("middleboxes/{name}.click"));
        let child = Command::new("ip")
            .args(["netns", "exec", ns, bin(), "run", "-u"])
            .arg(&sock)
            .arg(&file)
            .args(defines)
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut c = Clickos {
            child: Some(child),
            sock,
        };
        let t0 = Instant::now();
        while !c.sock.exists() {
            if let Some(Ok(Some(_))) = c.child.as_mut().map(|c| c.try_wait()) {
                let (o, e) = c.stop();
                panic!("clickos exited early:\n{o}\n{e}");
            }
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "clickos did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        c
    }
    fn call(&self, cmd: &str) -> String {
        let mut s = std::os::unix::net::UnixStream::connect(&self.sock).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(s, "{cmd}\nQUIT\n").unwrap();
        let mut r = String::new();
        let _ = s.read_to_string(&mut r);
        r
    }
    fn read(&self, h: &str) -> String {
        let r = self.call(&format!("READ {h}"));
        let i = r.find("DATA ").unwrap_or_else(|| panic!("READ {h}: {r}"));
        let rest = &r[i + 5..];
        let nl = rest.find("\r\n").unwrap();
        let n: usize = rest[..nl].parse().unwrap();
        rest[nl + 2..nl + 2 + n].to_string()
    }
    fn stop(&mut self) -> (String, String) {
        let Some(ch) = self.child.take() else {
            return (String::new(), String::new());
        };
        let o = stop(ch);
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
}

impl Drop for Clickos {
    fn drop(&mut self) {
        self.stop();
    }
}

const SERVER: &str = r#"
import socket, sys, threading
log = open(sys.argv[1], "a", buffering=1)
def tcp():
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("203.0.113.1", 8080)); s.listen(16)
    while True:
        c, a = s.accept(); d = c.recv(100)
        log.write("tcp %s:%d %s\n" % (a[0], a[1], d.decode())); c.sendall(b"echo:" + d); c.close()
def udp(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("203.0.113.1", port))
    while True:
        d, a = s.recvfrom(100)
        log.write("udp%d %s:%d %s\n" % (port, a[0], a[1], d.decode())); s.sendto(b"echo:" + d, a)
threading.Thread(target=tcp, daemon=True).start()
threading.Thread(target=udp, args=(5353,), daemon=True).start()
udp(5354)
"#;

const CLIENT: &str = r#"
import socket, sys
src, base, srv = sys.argv[1], int(sys.argv[2]), "203.0.113.1"
t = socket.create_connection((srv, 8080), timeout=5, source_address=(src, base))
t.sendall(("T" + src).encode()); print("tcp", t.recv(100).decode()); t.close()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(5); u.bind((src, base + 1))
for p in (5353, 5354):
    u.sendto(("U" + src).encode(), (srv, p)); print("udp", p, u.recvfrom(100)[0].decode())
c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); c.settimeout(5); c.bind((src, base + 2))
c.connect((srv, 9999)); c.send(b"x")
try:
    c.recv(10); print("closed: answered")
except ConnectionRefusedError:
    print("closed: refused")
except socket.timeout:
    print("closed: timeout")
"#;

/// The source `ADDR:PORT` the server logged for `kind` from inside host
/// `host`.
fn seen(log: &str, kind: &str, host: &str) -> String {
    log.lines()
        .find(|l| l.starts_with(&format!("{kind} ")) && l.ends_with(host))
        .unwrap_or_else(|| panic!("{kind} from {host} not seen: {log}"))
        .split(' ')
        .nth(1)
        .unwrap()
        .to_string()
}

/// Two inside hosts (two addresses on one link) behind the CGNAT, an
/// outside router with a server on it and a network beyond it.
#[test]
fn cgnat_real_traffic_with_icmp_errors_and_its_log() {
    if !can_run() {
        return;
    }
    let n = Nets::new("cn", &["i", "m", "o"]);
    n.link("m", "d0", "i", "eth0");
    n.link("m", "d1", "o", "eth0");
    n.sh(
        "m",
        "ip link set d0 address 02:00:00:00:01:01; ip link set d1 address 02:00:00:00:02:01",
    );
    n.sh(
        "i",
        "ip addr add 10.0.0.11/24 dev eth0; ip addr add 10.0.0.12/24 dev eth0; ip route add default via 10.0.0.1",
    );
    n.sh(
        "o",
        "ip addr add 203.0.113.1/24 dev eth0; ip route add 198.51.100.0/28 via 203.0.113.2; \
         ip link add dummy0 type dummy; ip addr add 198.18.0.1/24 dev dummy0; ip link set dummy0 up; \
         sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.forwarding=1 net.ipv4.conf.eth0.forwarding=1; ip route show >&2",
    );
    let dir = tmpdir(&format!("mbox-cgnat-{}", n.prefix));
    let log = dir.join("cgnat.log");
    let _ = std::fs::remove_file(&log);
    let srvlog = dir.join("server.log");
    let _ = std::fs::remove_file(&srvlog);
    std::fs::write(dir.join("server.py"), SERVER).unwrap();
    std::fs::write(dir.join("client.py"), CLIENT).unwrap();
    let mut server = spawn_sh(
        &n.ns("o"),
        &format!(
            "python3 {} {}",
            dir.join("server.py").display(),
            srvlog.display()
        ),
    );
    let mut click = Clickos::start(
        &n.ns("m"),
        "cgnat",
        &dir,
        &[
            "DEV0=d0".into(),
            "DEV1=d1".into(),
            format!("LOG={}", log.display()),
        ],
    );
    std::thread::sleep(Duration::from_millis(500));
    let mut outputs = Vec::new();
    for (host, base) in [("10.0.0.11", 40000), ("10.0.0.12", 41000)] {
        let o = n.sh(
            "i",
            &format!("python3 {} {host} {base}", dir.join("client.py").display()),
        );
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(out.contains(&format!("tcp echo:T{host}")), "{out}");
        assert!(out.contains(&format!("udp 5353 echo:U{host}")), "{out}");
        assert!(out.contains(&format!("udp 5354 echo:U{host}")), "{out}");
        // the port unreachable came back translated to the inside host
        assert!(out.contains("closed: refused"), "{out}");
        outputs.push(out);
    }
    // pings, and a traceroute-style time exceeded from beyond the NAT
    let o = sh(&n.ns("i"), "ping -c 2 -i 0.2 -W 2 -I 10.0.0.11 203.0.113.1");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "ping: {out}");
    let o = sh(&n.ns("i"), "ping -c 1 -t 2 -W 2 -I 10.0.0.12 198.18.0.99");
    let out = String::from_utf8_lossy(&o.stdout);
    // (an error from the router beyond, about the NATed echo, back to the
    // inside host that sent it)
    assert!(
        out.contains("From 203.0.113.1")
            && (out.contains("Time to live exceeded") || out.contains("Unreachable")),
        "an ICMP error from beyond the NAT: {out}"
    );
    eprintln!("CGNAT: ping -t 2 beyond the NAT: {out}");
    // and TTL 1 expires at the NAT itself
    let o = sh(&n.ns("i"), "ping -c 1 -t 1 -W 2 -I 10.0.0.11 203.0.113.1");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("From 10.0.0.1"), "{out}");

    let slog = std::fs::read_to_string(&srvlog).unwrap();
    for host in ["10.0.0.11", "10.0.0.12"] {
        let t = seen(&slog, "tcp", &format!("T{host}"));
        let u1 = seen(&slog, "udp5353", &format!("U{host}"));
        let u2 = seen(&slog, "udp5354", &format!("U{host}"));
        // endpoint-independent mapping: one external endpoint for both
        // destinations
        assert_eq!(u1, u2, "{slog}");
        // paired pooling: TCP and UDP from the same pool address
        let addr = |s: &str| s.split(':').next().unwrap().to_string();
        assert_eq!(addr(&t), addr(&u1), "{slog}");
        assert!(t.starts_with("198.51.100."), "{slog}");
    }
    let mappings = click.read("cgn.mappings");
    assert!(
        mappings.contains("tcp 10.0.0.11:40000 => 198.51.100."),
        "{mappings}"
    );
    // all mappings go: the log has their deletions
    let r = click.call("WRITE rw.clear\nWRITE pr.clear");
    assert!(r.contains("200"), "{r}");
    std::thread::sleep(Duration::from_millis(400));
    let (_, err) = click.stop();
    let _ = server.kill();
    let _ = server.wait();
    let text = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("{e}: {err}"));
    let lines: Vec<&str> = text.lines().collect();
    for host in ["10.0.0.11", "10.0.0.12"] {
        let base = if host.ends_with("11") { 40000 } else { 41000 };
        for (proto, port) in [("tcp", base), ("udp", base + 1), ("udp", base + 2)] {
            for ev in ["create", "delete"] {
                let want = format!(
                    "{ev} {proto} subscriber {host} internal {host}:{port} external 198.51.100."
                );
                assert!(
                    lines.iter().any(|l| l.contains(&want)),
                    "{want} not in the log:\n{text}"
                );
            }
        }
    }
    // one line per event, each with a time
    for l in &lines {
        let t: f64 = l.split(' ').next().unwrap().parse().unwrap();
        assert!(t > 1.0e9, "{l}");
    }
    assert_eq!(
        lines.iter().filter(|l| l.contains(" create ")).count(),
        lines.iter().filter(|l| l.contains(" delete ")).count(),
        "{text}"
    );
}

/// A client's HTTP requests to the virtual address, balanced over three
/// python3 http.server back ends in namespaces of their own.
#[test]
fn load_balancer_spreads_http_over_three_back_ends() {
    if !can_run() {
        return;
    }
    let n = Nets::new("lb", &["c", "m", "sw", "s1", "s2", "s3"]);
    n.link("m", "d0", "c", "eth0");
    n.link("m", "d1", "sw", "p0");
    n.sh(
        "sw",
        "ip link add br0 type bridge; ip link set br0 up; ip link set p0 master br0",
    );
    n.sh(
        "m",
        "ip link set d0 address 02:00:00:00:01:01; ip link set d1 address 02:00:00:00:02:01",
    );
    n.sh("c", "ip addr add 10.0.1.2/24 dev eth0");
    let dir = tmpdir(&format!("mbox-lb-{}", n.prefix));
    let mut servers = Vec::new();
    for k in 1..=3 {
        let s = format!("s{k}");
        n.link("sw", &format!("p{k}"), &s, "eth0");
        n.sh("sw", &format!("ip link set p{k} master br0"));
        n.sh(
            &s,
            &format!("ip addr add 10.0.2.1{k}/24 dev eth0; ip route add default via 10.0.2.1"),
        );
        let www = dir.join(&s);
        std::fs::create_dir_all(&www).unwrap();
        std::fs::write(www.join("id.txt"), format!("back end {k}\n")).unwrap();
        servers.push(web_server(&n.ns(&s), &format!("10.0.2.1{k}"), 80, &www));
    }
    let click = Clickos::start(
        &n.ns("m"),
        "lb",
        &dir,
        &["DEV0=d0".into(), "DEV1=d1".into()],
    );
    std::thread::sleep(Duration::from_millis(1000));
    let mut served = [0; 3];
    for i in 0..30 {
        let o = sh(
            &n.ns("c"),
            "curl -s -m 5 --retry 2 --retry-connrefused http://10.0.1.100/id.txt",
        );
        let body = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            o.status.success(),
            "request {i}: {body}: table {} arp0 {} arp1 {}",
            click.read("rw.tcp_table"),
            click.read("arpq0.table"),
            click.read("arpq1.table")
        );
        let k: usize = body
            .strip_prefix("back end ")
            .and_then(|r| r.trim().parse().ok())
            .unwrap_or_else(|| panic!("request {i}: bad response {body:?}"));
        assert_eq!(body, format!("back end {k}\n"));
        served[k - 1] += 1;
    }
    let table = click.read("rw.tcp_table");
    drop(click);
    for mut s in servers {
        let _ = s.kill();
        let _ = s.wait();
    }
    assert!(served.iter().all(|&c| c > 0), "served {served:?}\n{table}");
    assert_eq!(served.iter().sum::<i32>(), 30);
    eprintln!("load balancer: back ends served {served:?}");
}

/// The IDS between a client and a web server: a request for /etc/passwd
/// is alerted and dropped (the client never gets an answer), other
/// requests pass.
#[test]
fn ids_drops_a_request_its_rules_name() {
    if !can_run() {
        return;
    }
    let n = Nets::new("id", &["a", "m", "b"]);
    n.link("m", "d0", "a", "eth0");
    n.link("m", "d1", "b", "eth0");
    n.sh("a", "ip addr add 10.77.0.1/24 dev eth0");
    n.sh("b", "ip addr add 10.77.0.2/24 dev eth0");
    let dir = tmpdir(&format!("mbox-ids-{}", n.prefix));
    let www = dir.join("www");
    std::fs::create_dir_all(www.join("etc")).unwrap();
    std::fs::write(www.join("hello.txt"), "hello\n").unwrap();
    std::fs::write(www.join("etc/passwd"), "root:x:0:0\n").unwrap();
    let mut server = web_server(&n.ns("b"), "10.77.0.2", 8000, &www);
    let mut click = Clickos::start(
        &n.ns("m"),
        "ids",
        &dir,
        &["DEV0=d0".into(), "DEV1=d1".into()],
    );
    std::thread::sleep(Duration::from_millis(800));
    let get = |path: &str| {
        sh(
            &n.ns("a"),
            &format!("curl -s -m 3 --retry 2 --retry-connrefused http://10.77.0.2:8000{path}"),
        )
    };
    let o = get("/hello.txt");
    assert!(o.status.success(), "{:?}", o);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "hello\n");
    let o = get("/etc/passwd");
    assert!(!o.status.success(), "the request should be dropped");
    assert!(!String::from_utf8_lossy(&o.stdout).contains("root"));
    let o = get("/hello.txt");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "hello\n");
    let drops: u64 = click.read("ids0/ids.drops").trim().parse().unwrap();
    let (_, err) = click.stop();
    let _ = server.kill();
    let _ = server.wait();
    assert!(drops >= 1, "{err}");
    assert!(
        err.contains("[1:1000001:1] HTTP request for /etc/passwd [**] [Classification: Attempted Information Leak]")
            && err.contains("{TCP} 10.77.0.1:"),
        "{err}"
    );
    assert!(!err.contains("hello.txt"), "{err}");
}
