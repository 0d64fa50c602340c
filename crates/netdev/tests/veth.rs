//! The device API without any element: a veth pair in a namespace of its
//! own, a [`Tx`] on one end sending a batch and an [`Rx`] on the other
//! receiving it, over AF_PACKET and over AF_XDP. Needs root (namespaces)
//! and `ip`; without them the test is skipped and recorded, and fails when
//! CI=true (tests/support/skip.rs).

#[path = "../../../tests/support/skip.rs"]
mod skip;

#[path = "../../../tests/support/netns.rs"]
mod netns;
use netns::ip;

use clickos_netdev::{DevInfo, Method, Rx, RxConfig, Tx, TxConfig};
use std::os::fd::AsRawFd;
use std::process::Command;
use std::time::{Duration, Instant};

/// A local experimental Ethernet type, so no other frame is counted.
const ETHERTYPE: u16 = 0x88b5;

/// A namespace holding the veth pair `vta`-`vtb`, deleted on drop.
struct Pair {
    ns: String,
}

impl Pair {
    fn new(tag: &str) -> Pair {
        let ns = format!("netdev-{tag}-{}", std::process::id());
        ip(&["netns", "add", &ns]);
        let p = Pair { ns };
        ip(&[
            "-n", &p.ns, "link", "add", "name", "vta", "type", "veth", "peer", "name", "vtb",
        ]);
        ip(&["-n", &p.ns, "link", "set", "vta", "up"]);
        ip(&["-n", &p.ns, "link", "set", "vtb", "up"]);
        p
    }

    /// Runs `f` on a thread inside the namespace.
    fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> T {
        let path = format!("/var/run/netns/{}", self.ns);
        std::thread::spawn(move || {
            let file = std::fs::File::open(&path).expect("open the namespace");
            // SAFETY: setns on a namespace descriptor we hold; it changes
            // only this thread's network namespace.
            let r = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(r, 0, "setns: {}", std::io::Error::last_os_error());
            f()
        })
        .join()
        .expect("thread in the namespace")
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.ns]).output();
    }
}

fn frame(i: u8, len: usize) -> Vec<u8> {
    let mut f = vec![i; len];
    f[..6].copy_from_slice(&[0xff; 6]);
    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0xaa]);
    f[12..14].copy_from_slice(&ETHERTYPE.to_be_bytes());
    f
}

/// Sends 16 frames (and one too short to send) from `vta` and reads them
/// on `vtb` with `method`; returns the notes, or `None` when `method` cannot be
/// had here.
fn batch_across(method: Method) -> Option<Vec<String>> {
    let mut notes = Vec::new();
    let a = DevInfo::lookup("vta").expect("look up vta");
    let b = DevInfo::lookup("vtb").expect("look up vtb");
    assert!(a.is_ether() && a.ifindex != b.ifindex);
    let mut note = |m: &str| notes.push(m.to_string());
    let rx_cfg = RxConfig {
        method,
        sniffer: method != Method::Xdp,
        protocol: if method == Method::Packet {
            ETHERTYPE
        } else {
            0
        },
        ..RxConfig::default()
    };
    let mut rx = match Rx::open(&b, &rx_cfg, &mut note) {
        Ok(rx) => rx,
        Err(e) if method == Method::Xdp => {
            skip::skip(&format!("AF_XDP unavailable here: {e}"));
            return None;
        }
        Err(e) => panic!("Rx::open: {e}"),
    };
    assert_eq!(rx.method(), method);
    let tx_cfg = TxConfig {
        method: Method::Packet,
        ..TxConfig::default()
    };
    let mut tx = Tx::open(&a, &tx_cfg, &mut note).expect("Tx::open");
    assert_eq!(tx.method(), Method::Packet);

    let frames: Vec<Vec<u8>> = (0..16).map(|i| frame(i, 60 + usize::from(i))).collect();
    let mut batch: Vec<&[u8]> = frames.iter().map(|f| f.as_slice()).collect();
    batch.insert(3, &[0u8; 10]);
    let (taken, kicked) = tx.send(&batch);
    kicked.expect("kick");
    assert_eq!(taken, batch.len());
    assert_eq!(tx.stats().sent, 16);
    assert_eq!(tx.stats().refused, 1);

    let mut got: Vec<Vec<u8>> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while got.len() < 16 && Instant::now() < deadline {
        let mut pfd = libc::pollfd {
            fd: rx.fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        unsafe { libc::poll(&mut pfd, 1, 100) };
        rx.recv(32, |f| {
            if f.data.len() >= 14 && f.data[12..14] == ETHERTYPE.to_be_bytes() {
                assert_eq!(f.len, f.data.len());
                assert_eq!(f.pkttype, 1, "broadcast");
                assert_eq!(f.kernel_time.is_some(), method == Method::Packet);
                got.push(f.data.to_vec());
            }
        });
    }
    assert_eq!(got, frames, "the batch arrives whole and in order");
    assert!(rx.stats().received >= 16);
    Some(notes)
}

#[test]
fn af_packet_batch() {
    if !skip::can_use_netns() {
        return;
    }
    let pair = Pair::new("packet");
    let notes = pair.run(|| batch_across(Method::Packet));
    assert_eq!(notes, Some(vec![]));
}

#[test]
fn af_xdp_batch() {
    if !skip::can_use_netns() {
        return;
    }
    let pair = Pair::new("xdp");
    pair.run(|| batch_across(Method::Xdp));
}

#[test]
fn unknown_device() {
    let e = DevInfo::lookup("no-such-dev0").unwrap_err();
    assert_eq!(e, "no-such-dev0: SIOCGIFINDEX: No such device");
}
