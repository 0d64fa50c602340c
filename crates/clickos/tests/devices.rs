//! FromDevice / ToDevice on real interfaces: three network namespaces
//! a - m - b joined by veth pairs; `clickos run` in m bridges the two
//! links at layer 2 (FromDevice(ma) -> Queue -> ToDevice(mb) and back),
//! and real programs in a and b talk through it: ping, a TCP transfer
//! checked end to end, a UDP flood whose delivered rate is reported.
//! Needs root and `ip netns`; skips (with a message; a failure in CI)
//! otherwise.

mod common;
use common::netns::{in_netns, ip};
use common::nsclick::NsClick;

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

static SEQ: AtomicU32 = AtomicU32::new(0);

fn can_run() -> bool {
    common::can_use_netns()
}

/// Three namespaces and two veth pairs, deleted on drop.
struct Net {
    a: String,
    m: String,
    b: String,
    /// 10.SUBNET.0.0/24
    subnet: u8,
    /// After [`Net::route`]: a and b on subnets of their own.
    routed: bool,
}

impl Net {
    fn new() -> Net {
        let k = SEQ.fetch_add(1, Ordering::Relaxed);
        let p = format!("ck{}x{k}", std::process::id());
        let n = Net {
            a: format!("{p}a"),
            m: format!("{p}m"),
            b: format!("{p}b"),
            subnet: 60 + k as u8,
            routed: false,
        };
        for ns in [&n.a, &n.m, &n.b] {
            ip(&["netns", "add", ns]);
        }
        // created from inside m so the names never meet the root namespace
        for (dev, peer) in [("ma", &n.a), ("mb", &n.b)] {
            ip(&[
                "netns", "exec", &n.m, "ip", "link", "add", "name", dev, "type", "veth", "peer",
                "name", "eth0", "netns", peer,
            ]);
            ip(&["-n", &n.m, "link", "set", "dev", dev, "up"]);
        }
        ip(&[
            "-n",
            &n.a,
            "addr",
            "add",
            &format!("10.{}.0.1/24", n.subnet),
            "dev",
            "eth0",
        ]);
        ip(&[
            "-n",
            &n.b,
            "addr",
            "add",
            &format!("10.{}.0.2/24", n.subnet),
            "dev",
            "eth0",
        ]);
        for ns in [&n.a, &n.b] {
            ip(&["-n", ns, "link", "set", "dev", "eth0", "up"]);
            ip(&["-n", ns, "link", "set", "dev", "lo", "up"]);
            // The kernel leaves TCP/UDP checksums of locally sent frames
            // to the "hardware" on veth (and merges segments); a bridge
            // that copies frames needs complete frames, as with a real NIC
            // under ethtool -K tx off tso off gso off.
            in_netns(ns, || offloads_off("eth0"));
        }
        n
    }

    fn b_addr(&self) -> Ipv4Addr {
        if self.routed {
            Ipv4Addr::new(10, self.subnet, 2, 2)
        } else {
            Ipv4Addr::new(10, self.subnet, 0, 2)
        }
    }

    /// Puts a on 10.S.1.1/24 and b on 10.S.2.2/24, each with a default
    /// route through the router's address .254 on its side, and gives m's
    /// links the Ethernet addresses 02:00:00:00:0N:fe.
    fn route(&mut self) {
        let s = self.subnet;
        // (namespace, host number, new subnet)
        for (ns, h, net) in [(&self.a, 1, 1), (&self.b, 2, 2)] {
            ip(&[
                "-n",
                ns,
                "addr",
                "del",
                &format!("10.{s}.0.{h}/24"),
                "dev",
                "eth0",
            ]);
            ip(&[
                "-n",
                ns,
                "addr",
                "add",
                &format!("10.{s}.{net}.{h}/24"),
                "dev",
                "eth0",
            ]);
            ip(&[
                "-n",
                ns,
                "route",
                "add",
                "default",
                "via",
                &format!("10.{s}.{net}.254"),
            ]);
        }
        for (dev, n) in [("ma", 1), ("mb", 2)] {
            let mac = format!("02:00:00:00:0{n}:fe");
            ip(&["-n", &self.m, "link", "set", "dev", dev, "address", &mac]);
        }
        self.routed = true;
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for ns in [&self.a, &self.m, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

/// Turns TX checksum offload, TSO and GSO off (legacy ethtool ioctls).
fn offloads_off(dev: &str) {
    // SAFETY: plain socket(2) call; the result is checked.
    let s = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
    assert!(s >= 0);
    for cmd in [0x17u32, 0x1f, 0x24] {
        // ETHTOOL_STXCSUM, ETHTOOL_STSO, ETHTOOL_SGSO
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

/// `clickos run` inside m, with a UNIX control socket to read handlers.
fn start_click(net: &Net, config: &str, handlers: &[&str]) -> NsClick {
    NsClick::start(&net.m, &format!("devices-{}", net.subnet), config, handlers)
}

fn bridge(method: &str) -> String {
    format!(
        "fa :: FromDevice(ma, PROMISC true, SNIFFER false, METHOD {method}) -> Queue -> ta :: ToDevice(mb, METHOD {method});\n\
         fb :: FromDevice(mb, PROMISC true, SNIFFER false, METHOD {method}) -> Queue -> tb :: ToDevice(ma, METHOD {method});"
    )
}

fn ping(net: &Net, n: u32, interval: &str) -> bool {
    let o = Command::new("ip")
        .args([
            "netns",
            "exec",
            &net.a,
            "ping",
            "-c",
            &n.to_string(),
            "-i",
            interval,
            "-W",
            "2",
            "-q",
        ])
        .arg(net.b_addr().to_string())
        .output()
        .expect("ping");
    if !o.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&o.stdout));
    }
    o.status.success()
}

fn fnv(data: &[u8], mut h: u64) -> u64 {
    for &b in data {
        h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
    }
    h
}

/// Sends `len` pseudo-random bytes a -> b over TCP; returns (sent hash,
/// received hash, received length, MB/s).
fn tcp_transfer(net: &Net, len: usize) -> (u64, u64, usize, f64) {
    let b = net.b_addr();
    let (tx, rx) = std::sync::mpsc::channel();
    let bns = net.b.clone();
    let server = std::thread::spawn(move || {
        in_netns(&bns, move || {
            let l = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 5001)).unwrap();
            tx.send(()).unwrap();
            let (mut c, _) = l.accept().unwrap();
            c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            let mut h = 0xcbf29ce484222325u64;
            let mut n = 0usize;
            let mut buf = vec![0u8; 1 << 16];
            loop {
                match c.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => {
                        h = fnv(&buf[..k], h);
                        n += k;
                    }
                }
            }
            (h, n)
        })
    });
    rx.recv().unwrap();
    let (sent_hash, secs) = in_netns(&net.a, move || {
        let mut data = vec![0u8; len];
        let mut x = 0x1234_5678_9abc_def0u64;
        for b in data.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        let h = fnv(&data, 0xcbf29ce484222325);
        let t0 = Instant::now();
        let mut s =
            TcpStream::connect_timeout(&SocketAddrV4::new(b, 5001).into(), Duration::from_secs(5))
                .expect("connect through the bridge");
        s.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
        s.write_all(&data).expect("send");
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut one = [0u8; 1];
        let _ = s.read(&mut one); // the server's close
        (h, t0.elapsed().as_secs_f64())
    });
    let (got_hash, got_len) = server.join().unwrap();
    (sent_hash, got_hash, got_len, len as f64 / secs / 1e6)
}

/// Floods `count` 64-byte UDP datagrams a -> b; returns (received, pps
/// delivered).
fn udp_flood(net: &Net, count: u32) -> (u32, f64) {
    let b = net.b_addr();
    let (tx, rx) = std::sync::mpsc::channel();
    let bns = net.b.clone();
    let recv = std::thread::spawn(move || {
        in_netns(&bns, move || {
            let s = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 5002)).unwrap();
            s.set_read_timeout(Some(Duration::from_millis(500)))
                .unwrap();
            tx.send(()).unwrap();
            let mut buf = [0u8; 2048];
            let mut n = 0u32;
            let mut first: Option<Instant> = None;
            let mut last = Instant::now();
            while s.recv(&mut buf).is_ok() {
                n += 1;
                last = Instant::now();
                first.get_or_insert(last);
            }
            let secs = first.map_or(1.0, |f| (last - f).as_secs_f64().max(1e-6));
            (n, n as f64 / secs)
        })
    });
    rx.recv().unwrap();
    in_netns(&net.a, move || {
        let s = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0)).unwrap();
        s.connect(SocketAddrV4::new(b, 5002)).unwrap();
        let payload = [0x5au8; 18]; // 64-byte frames
        for _ in 0..count {
            let _ = s.send(&payload);
        }
    });
    recv.join().unwrap()
}

fn handler_value(out: &str, name: &str) -> String {
    let key = format!("{name}:\n");
    let i = out
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in:\n{out}"));
    out[i + key.len()..]
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

fn forward_test(method: &str, want: &str) {
    if !can_run() {
        return;
    }
    let net = Net::new();
    let mut click = start_click(
        &net,
        &bridge(method),
        &[
            "fa.method",
            "ta.method",
            "fb.method",
            "tb.method",
            "fa.count",
            "ta.count",
            "fb.count",
            "tb.count",
        ],
    );
    let m = click.read("fa.method");
    if method == "XDP" && m != "AF_XDP" {
        common::skip::skip(&format!("AF_XDP unavailable here (method {m})"));
        return;
    }
    assert!(
        ping(&net, 5, "0.2"),
        "ping through the {method} bridge failed"
    );
    let fa = click.read("fa.count").parse::<u64>().unwrap();
    assert!(fa >= 5, "fa.count {fa} after 5 pings");

    let (hs, hr, n, mbs) = tcp_transfer(&net, 8 << 20);
    assert_eq!(n, 8 << 20, "TCP bytes received");
    assert_eq!(hs, hr, "TCP data corrupted");
    let (got, pps) = udp_flood(&net, 200_000);
    eprintln!(
        "{method}: TCP 8 MiB a->b at {mbs:.1} MB/s; UDP 64-byte flood: {got} of 200000 delivered, {:.0} packets/s",
        pps
    );
    assert!(got > 0, "no UDP datagram got through");

    let (out, err) = click.stop();
    for h in ["fa.method", "ta.method", "fb.method", "tb.method"] {
        assert_eq!(handler_value(&out, h), want, "{h}; stderr: {err}");
    }
    let count = |h| handler_value(&out, h).parse::<u64>().unwrap();
    // 8 MiB of TCP is at least 5,700 full segments, plus pings and UDP
    assert!(count("fa.count") >= 5 + 5700 + u64::from(got), "{out}");
    assert!(count("ta.count") >= count("fa.count") - 64, "{out}");
    assert!(count("fb.count") >= 5, "{out}");
    assert!(count("tb.count") >= 5, "{out}");
    if method != "AUTO" {
        assert!(!err.contains("unavailable"), "{err}");
    }
}

/// Times the process gave up its CPU (slept) so far.
fn voluntary_switches(pid: u32) -> u64 {
    common::status_field(pid, "voluntary_ctxt_switches:")
        .parse()
        .expect("voluntary_ctxt_switches")
}

/// `clickos run --poll`: the forwarder runs at SCHED_IDLE and does not
/// sleep between pings (a plain run sleeps at least once a ping), and
/// every ping still crosses.
#[test]
fn poll_mode_never_sleeps() {
    if !can_run() {
        return;
    }
    let net = Net::new();
    for poll in [false, true] {
        let opts: &[&str] = if poll { &["--poll"] } else { &[] };
        let tmp = format!("devices-poll-{}-{poll}", net.subnet);
        let mut click = NsClick::start_with(
            &net.m,
            &tmp,
            opts,
            &bridge("AUTO"),
            &["fa.count", "fb.count"],
        );
        let pid = click.pid();
        // SAFETY: a query of another process's policy; no memory is passed.
        let policy = unsafe { libc::sched_getscheduler(pid as i32) };
        assert_eq!(
            policy == libc::SCHED_IDLE,
            poll,
            "policy {policy}, --poll {poll}"
        );
        assert!(ping(&net, 2, "0.1"), "warm-up pings, --poll {poll}");
        let before = voluntary_switches(pid);
        assert!(ping(&net, 20, "0.05"), "20 pings, --poll {poll}");
        let slept = voluntary_switches(pid) - before;
        let (out, err) = click.stop();
        let fa: u64 = handler_value(&out, "fa.count").parse().unwrap();
        assert!(fa >= 22, "fa.count {fa}: {err}");
        eprintln!("--poll {poll}: slept {slept} times over 20 pings");
        if poll {
            assert!(slept < 5, "--poll slept {slept} times over 20 pings");
        } else {
            assert!(
                slept >= 20,
                "a plain run slept only {slept} times over 20 pings"
            );
        }
    }
}

#[test]
fn forward_af_packet() {
    forward_test("PACKET", "AF_PACKET");
}

#[test]
fn forward_af_xdp() {
    forward_test("XDP", "AF_XDP");
}

/// AUTO picks AF_XDP when SNIFFER is false (and it works), AF_PACKET for
/// a sniffer.
#[test]
fn auto_method() {
    if !can_run() {
        return;
    }
    let net = Net::new();
    let conf =
        "fa :: FromDevice(ma, PROMISC true, SNIFFER false) -> Queue -> ta :: ToDevice(mb);\n\
                fb :: FromDevice(mb, PROMISC true) -> Queue -> tb :: ToDevice(ma);";
    let click = start_click(&net, conf, &[]);
    let fa = click.read("fa.method");
    assert!(fa == "AF_XDP" || fa == "AF_PACKET", "{fa}");
    assert_eq!(
        click.read("fb.method"),
        "AF_PACKET",
        "a sniffer needs AF_PACKET"
    );
    assert!(ping(&net, 3, "0.2"));
    drop(click);
}

/// The paper's firewall in the path: ICMP and TCP pass, UDP is dropped.
#[test]
fn firewall_in_the_path() {
    if !can_run() {
        return;
    }
    let net = Net::new();
    let conf = "fa :: FromDevice(ma, PROMISC true, SNIFFER false, METHOD PACKET) -> cl :: Classifier(12/0800, -);\n\
                q :: Queue -> ToDevice(mb, METHOD PACKET);\n\
                cl[1] -> q;\n\
                cl[0] -> Strip(14) -> CheckIPHeader -> fw :: IPFilter(allow icmp, allow tcp, deny all) -> Unstrip(14) -> q;\n\
                FromDevice(mb, PROMISC true, SNIFFER false, METHOD PACKET) -> Queue -> ToDevice(ma, METHOD PACKET);";
    let click = start_click(&net, conf, &[]);
    assert!(ping(&net, 3, "0.2"), "ICMP through the firewall");
    let (hs, hr, n, _) = tcp_transfer(&net, 1 << 20);
    assert_eq!((n, hs), (1 << 20, hr), "TCP through the firewall");
    let (got, _) = udp_flood(&net, 1000);
    assert_eq!(got, 0, "UDP should be filtered");
    drop(click);
}

#[test]
fn bad_device() {
    let r = common::run_in(
        None,
        common::bin(),
        &["run", "-q", "-e", "FromDevice(nosuchdev0) -> Discard"],
    );
    assert_eq!(r.code, 1, "{}", r.err);
    assert!(
        r.err.contains("nosuchdev0: SIOCGIFINDEX: No such device"),
        "{}",
        r.err
    );
    assert!(
        r.err.contains("Router could not be initialized!"),
        "{}",
        r.err
    );
    let r = common::run_in(
        None,
        common::bin(),
        &["run", "-q", "-e", "Idle -> ToDevice(nosuchdev0)"],
    );
    assert_eq!(r.code, 1, "{}", r.err);
    assert!(
        r.err.contains("nosuchdev0: SIOCGIFINDEX: No such device"),
        "{}",
        r.err
    );
    let r = common::run_in(
        None,
        common::bin(),
        &["run", "-q", "-e", "FromDevice(eth0, METHOD FOO) -> Discard"],
    );
    assert_eq!(r.code, 1);
    assert!(r.err.contains("bad METHOD"), "{}", r.err);
    let r = common::run_in(
        None,
        common::bin(),
        &["run", "-q", "-e", "FromDevice(eth0, NOSUCH 1) -> Discard"],
    );
    assert_eq!(r.code, 1);
    assert!(r.err.contains("NOSUCH"), "{}", r.err);
}

/// Click's classic two-interface IP router (conf/iprouter.click, unchanged
/// but for its parameters) between two subnets: ARP both ways, pings and a
/// TCP transfer from a to b with the TTL decremented once, the router's own
/// address answering pings, and an ICMP time-exceeded for a ping with
/// TTL 1.
#[test]
fn classic_ip_router_on_real_interfaces() {
    if !can_run() {
        return;
    }
    let mut net = Net::new();
    net.route();
    let s = net.subnet;
    let conf = std::fs::read_to_string(common::root().join("conf/iprouter.click"))
        .unwrap()
        .replace("$IF0 eth0", "$IF0 ma")
        .replace("$IF1 eth1", "$IF1 mb")
        .replace("$IP0 10.1.0.254", &format!("$IP0 10.{s}.1.254"))
        .replace("$IP1 10.2.0.254", &format!("$IP1 10.{s}.2.254"));
    let mut click = start_click(&net, &conf, &["arpq0.table", "arpq1.table", "dt1.drops"]);
    let ping_a = |args: &[&str]| {
        let o = Command::new("ip")
            .args(["netns", "exec", &net.a, "ping"])
            .args(args)
            .output()
            .expect("ping");
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    let b = net.b_addr().to_string();
    let (ok, out) = ping_a(&["-c", "3", "-i", "0.2", "-W", "2", &b]);
    assert!(ok, "ping through the router: {out}");
    assert!(
        out.contains("ttl=63"),
        "the router should decrement the TTL once: {out}"
    );
    let (ok, out) = ping_a(&["-c", "2", "-i", "0.2", "-W", "2", &format!("10.{s}.1.254")]);
    assert!(ok, "ping the router itself: {out}");
    let (ok, out) = ping_a(&["-c", "1", "-t", "1", "-W", "2", &b]);
    assert!(!ok, "{out}");
    assert!(
        out.contains(&format!("From 10.{s}.1.254")) && out.contains("Time to live exceeded"),
        "{out}"
    );
    let (hs, hr, n, mbs) = tcp_transfer(&net, 2 << 20);
    assert_eq!(n, 2 << 20, "TCP bytes received");
    assert_eq!(hs, hr, "TCP data corrupted");
    eprintln!("classic IP router: TCP 2 MiB a->b at {mbs:.1} MB/s");
    let (out, err) = click.stop();
    assert!(
        out.contains(&format!("10.{s}.1.1 1 ")),
        "a learned by ARP: {out}\n{err}"
    );
    assert!(
        out.contains(&format!("10.{s}.2.2 1 ")),
        "b learned by ARP: {out}\n{err}"
    );
}
