//! McastSocket: sends and receives UDP multicast datagrams (Click's
//! elements/userlevel/mcastsocket).

use crate::selector::selector;
use click::element_any;
use click::prelude::*;
use click_lang::args::UdpPort;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// `McastSocket(MCASTIP, MCASTPORT [, SOURCEIP, SOURCEPORT, KEYWORDS])`.
pub struct McastSocket {
    mcast: SocketAddrV4,
    /// SOURCEIP:SOURCEPORT (unspecified address: none given); the port is
    /// the one the system chose once bound.
    source: SocketAddrV4,
    snaplen: usize,
    headroom: usize,
    timestamp: bool,
    rcvbuf: Option<i32>,
    sndbuf: Option<i32>,
    looped: bool,
    recv: Option<OwnedFd>,
    send: Option<OwnedFd>,
    buf: Vec<u8>,
    me: usize,
    pull_input: bool,
    signal: Option<UpstreamSignal>,
    received: u64,
    sent: u64,
    drops: u64,
}

impl Default for McastSocket {
    fn default() -> Self {
        McastSocket {
            mcast: SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0),
            source: SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0),
            snaplen: 2048,
            headroom: DEFAULT_HEADROOM,
            timestamp: true,
            rcvbuf: None,
            sndbuf: None,
            looped: true,
            recv: None,
            send: None,
            buf: Vec::new(),
            me: 0,
            pull_input: false,
            signal: None,
            received: 0,
            sent: 0,
            drops: 0,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "McastSocket",
    port_count: "0-1/0-1",
    processing: "a/h",
    group: "userlevel",
    signature: "McastSocket(MCASTIP, MCASTPORT [, SOURCEIP] [, SOURCEPORT] [, KEYWORDS])",
    summary: "A UDP multicast transport.",
    description: "Sends the data of every packet arriving on its input as one UDP datagram to the \
multicast group MCASTIP, port MCASTPORT, and pushes every datagram received on that group and \
port out its output (data only, the UDP payload). Two sockets: one bound to MCASTIP:MCASTPORT \
(SO_REUSEADDR, so several routers on a host can listen) that joins the group, and one that \
sends. With SOURCEIP, the sending socket is bound to SOURCEIP:SOURCEPORT (SOURCEPORT 0 or \
absent: one the system chooses), multicasts leave through SOURCEIP's interface, the group is \
joined on that interface, and datagrams from that very address and port (this element's own, \
looped back) are not passed on. Without it the group is joined on any interface.\n\n\
Sending blocks until the socket takes the datagram, as in Click; a datagram the system rejects \
otherwise is dropped (`drops`). With a pull input, the element pulls while the socket can \
send.\n\nKeyword arguments:\n\n\
- `LOOP` (boolean): loop multicasts back to this host's listeners (default true).\n\
- `SNAPLEN` (unsigned): the longest datagram received whole (default 2048); longer ones are \
truncated, the rest counted in the extra length annotation.\n\
- `HEADROOM` (unsigned): headroom of received packets.\n\
- `TIMESTAMP` (boolean): stamp received packets with the current time (default true).\n\
- `RCVBUF`, `SNDBUF` (unsigned): the sockets' buffer sizes.",
    ports: "optional input (push or pull): datagrams to send; optional push output: datagrams \
received",
    handlers: &[
        HandlerDoc {
            name: "received",
            mode: HandlerMode::Read,
            text: "Datagrams received and pushed out (one's own, filtered, excluded).",
        },
        HandlerDoc {
            name: "sent",
            mode: HandlerMode::Read,
            text: "Datagrams sent.",
        },
        HandlerDoc {
            name: "drops",
            mode: HandlerMode::Read,
            text: "Datagrams the system refused to send.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(McastSocket::default()),
};

fn last_error(what: &str) -> String {
    format!(
        "{what}: {}",
        super::io_error_text(&std::io::Error::last_os_error())
    )
}

fn sockaddr(a: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*a.ip()).to_be(),
        },
        sin_zero: [0; 8],
    }
}

fn setsockopt<T>(fd: RawFd, level: i32, opt: i32, v: &T, name: &str) -> Result<(), String> {
    // SAFETY: `v` points to a live T of the size passed.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            v as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if r < 0 {
        Err(last_error(&format!("setsockopt({name})")))
    } else {
        Ok(())
    }
}

fn udp_socket() -> Result<OwnedFd, String> {
    // SAFETY: socket(2) has no memory preconditions.
    let fd = unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_DGRAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            libc::IPPROTO_UDP,
        )
    };
    if fd < 0 {
        return Err(last_error("socket"));
    }
    // SAFETY: fd is a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn bind(fd: RawFd, a: SocketAddrV4) -> Result<(), String> {
    let sa = sockaddr(a);
    // SAFETY: `sa` is a valid sockaddr_in of the size passed.
    let r = unsafe {
        libc::bind(
            fd,
            &sa as *const libc::sockaddr_in as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if r < 0 {
        Err(last_error("bind"))
    } else {
        Ok(())
    }
}

impl McastSocket {
    fn open(&mut self) -> Result<(), String> {
        let recv = udp_socket()?;
        let send = udp_socket()?;
        let (rfd, sfd) = (recv.as_raw_fd(), send.as_raw_fd());
        if let Some(n) = self.sndbuf {
            setsockopt(sfd, libc::SOL_SOCKET, libc::SO_SNDBUF, &n, "SO_SNDBUF")?;
        }
        if let Some(n) = self.rcvbuf {
            setsockopt(rfd, libc::SOL_SOCKET, libc::SO_RCVBUF, &n, "SO_RCVBUF")?;
        }
        let one: libc::c_int = 1;
        setsockopt(
            rfd,
            libc::SOL_SOCKET,
            libc::SO_REUSEADDR,
            &one,
            "SO_REUSEADDR",
        )?;
        bind(rfd, self.mcast)?;
        let src_ip = libc::in_addr {
            s_addr: u32::from(*self.source.ip()).to_be(),
        };
        if !self.source.ip().is_unspecified() {
            bind(sfd, self.source)?;
            if self.source.port() == 0 {
                let mut sa: libc::sockaddr_in = sockaddr(self.source);
                let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
                // SAFETY: `sa` and `len` are valid for getsockname to fill.
                let r = unsafe {
                    libc::getsockname(
                        sfd,
                        &mut sa as *mut libc::sockaddr_in as *mut libc::sockaddr,
                        &mut len,
                    )
                };
                if r < 0 {
                    return Err(last_error("getsockname"));
                }
                self.source = SocketAddrV4::new(*self.source.ip(), u16::from_be(sa.sin_port));
            }
            setsockopt(
                sfd,
                libc::IPPROTO_IP,
                libc::IP_MULTICAST_IF,
                &src_ip,
                "IP_MULTICAST_IF",
            )?;
        }
        let mreq = libc::ip_mreq {
            imr_multiaddr: libc::in_addr {
                s_addr: u32::from(*self.mcast.ip()).to_be(),
            },
            imr_interface: src_ip,
        };
        setsockopt(
            rfd,
            libc::IPPROTO_IP,
            libc::IP_ADD_MEMBERSHIP,
            &mreq,
            "IP_ADD_MEMBERSHIP",
        )?;
        let lp: libc::c_int = self.looped.into();
        setsockopt(
            sfd,
            libc::IPPROTO_IP,
            libc::IP_MULTICAST_LOOP,
            &lp,
            "IP_MULTICAST_LOOP",
        )?;
        self.recv = Some(recv);
        self.send = Some(send);
        Ok(())
    }

    /// Receives what is waiting; how many datagrams.
    fn receive(&mut self, cx: &Ctx) -> usize {
        let Some(fd) = self.recv.as_ref().map(|f| f.as_raw_fd()) else {
            return 0;
        };
        let mut n = 0;
        while n < 64 {
            // SAFETY: zeroed sockaddr_in is a valid value.
            let mut from: libc::sockaddr_in = unsafe { std::mem::zeroed() };
            let mut flen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            // SAFETY: `buf` and `from` are valid for recvfrom to fill.
            let len = unsafe {
                libc::recvfrom(
                    fd,
                    self.buf.as_mut_ptr() as *mut libc::c_void,
                    self.buf.len(),
                    libc::MSG_TRUNC,
                    &mut from as *mut libc::sockaddr_in as *mut libc::sockaddr,
                    &mut flen,
                )
            };
            if len < 0 {
                break;
            }
            n += 1;
            let from = SocketAddrV4::new(
                Ipv4Addr::from(u32::from_be(from.sin_addr.s_addr)),
                u16::from_be(from.sin_port),
            );
            if !self.source.ip().is_unspecified() && from == self.source {
                // our own traffic, looped back
                continue;
            }
            let len = len as usize;
            let take = len.min(self.snaplen);
            let mut p = cx.pool().make(self.headroom, &self.buf[..take], 0);
            if len > take {
                super::set_extra_length(&mut p, (len - take) as u32);
            }
            if self.timestamp {
                p.set_timestamp(cx.now());
            }
            self.received += 1;
            cx.push(0, p);
        }
        n
    }

    /// Sends `p`, waiting while the socket is full (Click blocks too).
    fn send(&mut self, p: Packet) {
        let Some(fd) = self.send.as_ref().map(|f| f.as_raw_fd()) else {
            return;
        };
        let to = sockaddr(self.mcast);
        loop {
            // SAFETY: the data and `to` are valid for the sizes passed.
            let r = unsafe {
                libc::sendto(
                    fd,
                    p.data().as_ptr() as *const libc::c_void,
                    p.len(),
                    0,
                    &to as *const libc::sockaddr_in as *const libc::sockaddr,
                    std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
                )
            };
            if r >= 0 {
                self.sent += 1;
                return;
            }
            match std::io::Error::last_os_error().raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) | Some(libc::ENOBUFS) => {
                    let mut pfd = libc::pollfd {
                        fd,
                        events: libc::POLLOUT,
                        revents: 0,
                    };
                    // SAFETY: one valid pollfd.
                    if unsafe { libc::poll(&mut pfd, 1, 1000) } <= 0 {
                        self.drops += 1;
                        return;
                    }
                }
                _ => {
                    self.drops += 1;
                    return;
                }
            }
        }
    }
}

impl Element for McastSocket {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let mip: Ipv4Addr = a.read_mp("MCASTIP")?;
        let mport: UdpPort = a.read_mp("MCASTPORT")?;
        let sip: Option<Ipv4Addr> = a.read_p("SOURCEIP")?;
        let sport: Option<UdpPort> = a.read_p("SOURCEPORT")?;
        let snaplen: Option<u32> = a.read("SNAPLEN")?;
        let headroom: Option<u32> = a.read("HEADROOM")?;
        let timestamp: Option<bool> = a.read("TIMESTAMP")?;
        let rcvbuf: Option<i32> = a.read("RCVBUF")?;
        let sndbuf: Option<i32> = a.read("SNDBUF")?;
        let looped: Option<bool> = a.read("LOOP")?;
        a.complete()?;
        self.mcast = SocketAddrV4::new(mip, mport.0);
        self.source = SocketAddrV4::new(
            sip.unwrap_or(Ipv4Addr::UNSPECIFIED),
            sport.map(|p| p.0).unwrap_or(0),
        );
        self.snaplen = snaplen.unwrap_or(2048) as usize;
        self.headroom = headroom.map(|h| h as usize).unwrap_or(DEFAULT_HEADROOM);
        self.timestamp = timestamp.unwrap_or(true);
        self.rcvbuf = rcvbuf.filter(|&n| n >= 0);
        self.sndbuf = sndbuf.filter(|&n| n >= 0);
        self.looped = looped.unwrap_or(true);
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        self.open()?;
        self.buf = vec![0; self.snaplen.max(1)];
        self.me = cx.index();
        self.pull_input = cx.ninputs() > 0 && cx.input_is_pull(0);
        let mut fds = Vec::new();
        if cx.noutputs() > 0 {
            if let Some(f) = &self.recv {
                fds.push((f.as_raw_fd(), libc::POLLIN));
            }
        }
        if let Some(sel) = selector(cx) {
            sel.set(self.me, &fds);
            // a socket that receives keeps the driver running, as Click's
            // selects do
            sel.hold(self.me, !fds.is_empty());
        }
        if self.pull_input || cx.noutputs() > 0 {
            cx.schedule_task();
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, p: Packet, _cx: &Ctx) {
        self.send(p);
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        let got = if cx.noutputs() > 0 {
            self.receive(cx)
        } else {
            0
        };
        let mut wrote = 0;
        if self.pull_input {
            if self.signal.is_none() {
                self.signal = Some(cx.upstream_signal(0));
            }
            if self.signal.as_ref().is_some_and(|s| cx.signal_active(s)) {
                while wrote < 64 {
                    let Some(p) = cx.pull(0) else { break };
                    self.send(p);
                    wrote += 1;
                }
            }
        }
        got == 64 || wrote == 64
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "received" => self.received.to_string(),
            "sent" => self.sent.to_string(),
            "drops" => self.drops.to_string(),
            _ => return None,
        }))
    }

    fn cleanup(&mut self, cx: &Ctx) {
        if let Some(sel) = selector(cx) {
            sel.set(self.me, &[]);
            sel.hold(self.me, false);
        }
        self.recv = None;
        self.send = None;
    }

    element_any!();
}
