//! McastSocket over the loopback interface: its datagrams reach a member
//! of the group, a member's datagrams come out of its output, and its own,
//! looped back, do not (SOURCEIP given).

mod common;
use common::*;
use std::net::{Ipv4Addr, UdpSocket};
use std::os::fd::AsRawFd;
use std::process::{Command, Stdio};
use std::time::Duration;

const GROUP: Ipv4Addr = Ipv4Addr::new(233, 252, 0, 77);

fn reusable_socket(port: u16) -> UdpSocket {
    use std::os::fd::FromRawFd;
    // SAFETY: plain socket calls on a new descriptor, valid arguments.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0);
        assert!(fd >= 0);
        let one: libc::c_int = 1;
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_REUSEADDR,
            &one as *const libc::c_int as *const libc::c_void,
            4,
        );
        let sa = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(GROUP).to_be(),
            },
            sin_zero: [0; 8],
        };
        let r = libc::bind(
            fd,
            &sa as *const libc::sockaddr_in as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
        assert_eq!(r, 0);
        UdpSocket::from_raw_fd(fd)
    }
}

#[test]
fn mcastsocket_sends_receives_and_filters_its_own() {
    let port = 42000 + (std::process::id() % 2000) as u16;
    // a member of the group on the loopback interface, sharing the port
    // with McastSocket's receiving socket (SO_REUSEADDR on both)
    let member = reusable_socket(port);
    member
        .join_multicast_v4(&GROUP, &Ipv4Addr::LOCALHOST)
        .unwrap();
    member
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let config = format!(
        "InfiniteSource(\"ping\", LIMIT 3, STOP false)
         -> m :: McastSocket({GROUP}, {port}, 127.0.0.1)
         -> Print(got, CONTENTS ASCII) -> Discard;
         DriverManager(wait 1.5s, print m.sent, print m.received, stop);"
    );
    let child = Command::new(bin())
        .args(["run", "-e", &config])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut buf = [0u8; 100];
    let mut from = Vec::new();
    for _ in 0..3 {
        let (n, f) = member.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"ping");
        assert_eq!(f.ip(), std::net::IpAddr::V4(Ipv4Addr::LOCALHOST));
        from.push(f);
    }
    // one sending socket, bound to 127.0.0.1 and a port the system chose
    assert!(from.iter().all(|f| *f == from[0]) && from[0].port() != port);
    // a datagram to the group, out the loopback interface
    let tx = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let ifaddr = libc::in_addr {
        s_addr: u32::from(Ipv4Addr::LOCALHOST).to_be(),
    };
    // SAFETY: a valid in_addr of the size passed.
    let r = unsafe {
        libc::setsockopt(
            tx.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_MULTICAST_IF,
            &ifaddr as *const libc::in_addr as *const libc::c_void,
            std::mem::size_of::<libc::in_addr>() as libc::socklen_t,
        )
    };
    assert_eq!(r, 0);
    tx.send_to(b"pong!", (GROUP, port)).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // three sent; one received: the test's, not its own three
    assert_eq!(stdout.lines().collect::<Vec<_>>(), ["3", "1"], "{stderr}");
    assert_eq!(stderr.trim_end(), "got:    5 |  pong!");
}
