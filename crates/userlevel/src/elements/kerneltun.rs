//! KernelTun / KernelTap (user level): hands packets to the host's own IP
//! stack through a Linux tun or tap device, and takes what the host routes
//! to that device.

use click::element_any;
use click::lang::args::IpPrefix;
use click::prelude::*;
use click_wire::Ipv4Packet;
use clickos_netdev::{dev_err, HostSide, Tun};
use std::net::Ipv4Addr;
use std::os::fd::RawFd;

const DESCRIPTION: &str = "Reads packets from and writes packets to a Linux tun device \
(`/dev/net/tun`), which lets a user-level configuration hand packets to the host's own IP \
stack, and receive the packets the host routes to the device. KernelTun produces and expects \
IPv4 packets (the IP header annotation is set on the packets it emits; a packet that is not \
IPv4 goes to output 1 if it exists and is dropped otherwise); with `TAP true` (or as \
KernelTap) it uses a tap device and produces and expects Ethernet frames.\n\n\
KernelTun allocates the device and gives the host's side the address ADDR with netmask MASK, \
brings it up, and, when GATEWAY (on the same network) is given, adds a default route through \
it — as Click does with ifconfig(8) and route(8), but with the kernel's own interfaces. The \
device and its routes disappear when the router stops. This needs the privilege to create \
network devices (root, or CAP_NET_ADMIN).\n\n\
The input may be push or pull; pulled packets are written as the upstream queue offers them. \
Packets that the device refuses (its queue is full) are dropped and counted in `drops`; the \
first such error is reported.\n\n\
Keyword arguments:\n\n\
- `TAP` (boolean): use a tap device (Ethernet frames). Default false (KernelTap: true).\n\
- `HEADROOM` (unsigned): bytes of headroom in each packet read. Default 28 (Click's).\n\
- `ETHER` (Ethernet address): the tap device's address (TAP only).\n\
- `MTU` (unsigned): the device's MTU. Default the kernel's (1500).\n\
- `DEVNAME` (string): the device name, or a pattern such as `tun%d` (the default is `tun%d`, \
or `tap%d` with TAP).\n\
- `BURST` (unsigned): most packets read and written per task run. Default 32.\n\
- `IGNORE_QUEUE_OVERFLOWS` (boolean): report no full-queue errors at all. Default false.";

const HANDLERS: &[HandlerDoc] = &[
    HandlerDoc {
        name: "dev_name",
        mode: HandlerMode::Read,
        text: "The device's name (tun0, ...).",
    },
    HandlerDoc {
        name: "count",
        mode: HandlerMode::Read,
        text: "Packets read from the device.",
    },
    HandlerDoc {
        name: "sent",
        mode: HandlerMode::Read,
        text: "Packets written to the device.",
    },
    HandlerDoc {
        name: "drops",
        mode: HandlerMode::Read,
        text: "Packets dropped: refused by the device, or read but not IPv4 (KernelTun without \
output 1).",
    },
];

pub static SPEC: ClassSpec = ClassSpec {
    name: "KernelTun",
    port_count: "0-1/1-2",
    processing: "a/h",
    group: "userlevel",
    signature: "KernelTun(ADDR/MASK [, GATEWAY] [, KEYWORDS])",
    summary: "User-level interface to the host's IP stack through a tun device.",
    description: DESCRIPTION,
    ports: "an optional input (push or pull) of packets for the host; output 0 pushes \
packets from the host; optional output 1 pushes non-IPv4 packets read (tun mode)",
    handlers: HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(KernelTun::default()),
};

pub static TAP_SPEC: ClassSpec = ClassSpec {
    name: "KernelTap",
    port_count: "0-1/1-2",
    processing: "a/h",
    group: "userlevel",
    signature: "KernelTap(ADDR/MASK [, GATEWAY] [, KEYWORDS])",
    summary: "User-level interface to the host's network stack through a tap device.",
    description: "KernelTun with `TAP true`: Ethernet frames through a tap device. See \
KernelTun.",
    ports: "an optional input (push or pull) of Ethernet frames for the host; output 0 pushes \
frames from the host",
    handlers: HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || {
        Box::new(KernelTun {
            tap: true,
            ..KernelTun::default()
        })
    },
};

pub struct KernelTun {
    addr: Ipv4Addr,
    mask: Ipv4Addr,
    gateway: Option<Ipv4Addr>,
    tap: bool,
    headroom: usize,
    ether: Option<[u8; 6]>,
    mtu: Option<u32>,
    devname: String,
    burst: usize,
    ignore_overflows: bool,
    // running
    tun: Option<Tun>,
    name: String,
    buf: Vec<u8>,
    me: usize,
    pull_input: bool,
    signal: Option<click::router::UpstreamSignal>,
    count: u64,
    sent: u64,
    drops: u64,
    warned_write: bool,
}

impl Default for KernelTun {
    fn default() -> Self {
        KernelTun {
            addr: Ipv4Addr::UNSPECIFIED,
            mask: Ipv4Addr::UNSPECIFIED,
            gateway: None,
            tap: false,
            headroom: 28,
            ether: None,
            mtu: None,
            devname: String::new(),
            burst: 32,
            ignore_overflows: false,
            tun: None,
            name: String::new(),
            buf: Vec::new(),
            me: 0,
            pull_input: false,
            signal: None,
            count: 0,
            sent: 0,
            drops: 0,
            warned_write: false,
        }
    }
}

use crate::selector::selector;

impl KernelTun {
    fn raw_fd(&self) -> RawFd {
        self.tun.as_ref().map_or(-1, |t| t.fd())
    }

    /// Writes one packet to the device.
    fn send(&mut self, p: Packet, cx: &Ctx) {
        let Some(tun) = &self.tun else {
            self.drops += 1;
            return;
        };
        if let Err(e) = tun.write(p.data()) {
            self.drops += 1;
            let overflow = matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::ENOBUFS));
            let quiet = self.warned_write || (overflow && self.ignore_overflows);
            if !quiet {
                self.warned_write = true;
                cx.error_line(&format!(
                    "{}: {}",
                    cx.declaration(),
                    dev_err(&self.name, "write", &e)
                ));
            }
        } else {
            self.sent += 1;
        }
    }

    /// Reads what the device holds, at most BURST packets; returns how many.
    fn receive(&mut self, cx: &Ctx) -> usize {
        let mut n = 0;
        let Some(tun) = &self.tun else {
            return 0;
        };
        while n < self.burst {
            let len = match tun.read(&mut self.buf) {
                Ok(len) if len > 0 => len,
                _ => break,
            };
            n += 1;
            self.count += 1;
            let mut p = cx.pool().make_len(self.headroom, len, 0);
            p.data_mut().copy_from_slice(&self.buf[..len]);
            p.set_timestamp(cx.now());
            if self.tap {
                p.set_mac_header(0);
                if len >= 14 {
                    p.set_network_header(14, 0);
                }
                cx.push(0, p);
                continue;
            }
            let ip = Ipv4Packet::new_fixed_checked(&self.buf[..len]).ok();
            if let Some(ip) = ip.filter(|ip| ip.version() == 4 && ip.check_header_len().is_ok()) {
                p.set_network_header(0, usize::from(ip.header_len()));
                cx.push(0, p);
            } else if cx.noutputs() > 1 {
                cx.push(1, p);
            } else {
                self.drops += 1;
            }
        }
        n
    }
}

impl Element for KernelTun {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let prefix = a.read_mp::<IpPrefix>("ADDR")?;
        let gateway = a.read_p::<Ipv4Addr>("GATEWAY")?;
        let tap = a.read::<bool>("TAP")?.unwrap_or(self.tap);
        let headroom = a.read::<u32>("HEADROOM")?.unwrap_or(28);
        let ether = a.read::<[u8; 6]>("ETHER")?;
        let mtu = a.read::<u32>("MTU")?;
        let devname = a.read::<String>("DEVNAME")?.unwrap_or_default();
        let burst = a.read::<u32>("BURST")?.unwrap_or(32);
        let ignore = a.read::<bool>("IGNORE_QUEUE_OVERFLOWS")?.unwrap_or(false);
        a.complete()?;
        if headroom > 8190 {
            return Err("HEADROOM out of range".into());
        }
        if burst == 0 {
            return Err("BURST must be at least 1".into());
        }
        if mtu.is_some_and(|m| !(68..=65535).contains(&m)) {
            return Err("MTU out of range (68 to 65535)".into());
        }
        if devname.len() >= libc::IFNAMSIZ {
            return Err(format!(
                "DEVNAME longer than {} characters",
                libc::IFNAMSIZ - 1
            ));
        }
        if let Some(gw) = gateway.filter(|g| !g.is_unspecified()) {
            let m = u32::from(prefix.mask);
            if u32::from(gw) & m != u32::from(prefix.addr) & m {
                return Err(format!(
                    "GATEWAY {gw} is not on the network {}/{}",
                    Ipv4Addr::from(u32::from(prefix.addr) & m),
                    m.count_ones()
                ));
            }
        }
        self.addr = prefix.addr;
        self.mask = prefix.mask;
        self.gateway = gateway.filter(|g| !g.is_unspecified());
        self.tap = tap;
        self.headroom = headroom as usize;
        self.ether = ether;
        self.mtu = mtu;
        self.devname = devname;
        self.burst = burst as usize;
        self.ignore_overflows = ignore;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let Some(sel) = selector(cx) else {
            return Err("KernelTun needs the userlevel driver ('clickos run')".into());
        };
        let tun = self.tun.insert(Tun::open(&self.devname, self.tap)?);
        tun.set_up(&HostSide {
            addr: self.addr,
            mask: self.mask,
            gateway: self.gateway,
            mtu: self.mtu,
            ether: self.ether,
        })?;
        self.name = tun.name().to_string();
        self.buf = vec![0; 65536];
        self.me = cx.index();
        self.pull_input = cx.ninputs() > 0 && cx.input_is_pull(0);
        sel.set(self.me, &[(self.raw_fd(), libc::POLLIN)]);
        sel.hold(self.me, true);
        if self.pull_input {
            cx.schedule_task();
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        self.send(p, cx);
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        let got = self.receive(cx);
        let mut wrote = 0;
        if self.pull_input {
            if self.signal.is_none() {
                self.signal = Some(cx.upstream_signal(0));
            }
            if self.signal.as_ref().is_some_and(|s| cx.signal_active(s)) {
                while wrote < self.burst {
                    let Some(p) = cx.pull(0) else { break };
                    self.send(p, cx);
                    wrote += 1;
                }
            }
        }
        // more may be waiting on either side; otherwise the selector (the
        // device) or the upstream notifier wakes the task
        got == self.burst || wrote == self.burst
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "dev_name" => self.name.clone(),
            "count" => self.count.to_string(),
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
        // closing the descriptor removes the device and its routes
        self.tun = None;
    }

    element_any!();
}
