//! Tun and tap devices: a [`Tun`] is a Linux tun device (IP packets) or
//! tap device (Ethernet frames) whose host side gets an address, a netmask
//! and optionally a default route, so a program can hand packets to the
//! host's own IP stack and read what the host routes to the device.

use crate::{dev_err, err_text, last_err};
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The host's side of a tun or tap device.
#[derive(Clone, Debug)]
pub struct HostSide {
    /// The host's address on the device ...
    pub addr: Ipv4Addr,
    /// ... and the network's mask.
    pub mask: Ipv4Addr,
    /// A default route through this address (on the same network).
    pub gateway: Option<Ipv4Addr>,
    /// The device's MTU (the kernel's default, 1500, when `None`).
    pub mtu: Option<u32>,
    /// A tap device's Ethernet address (ignored for tun).
    pub ether: Option<[u8; 6]>,
}

/// An open tun or tap device, removed when dropped.
pub struct Tun {
    fd: OwnedFd,
    name: String,
    tap: bool,
}

fn ifreq_named(name: &str) -> libc::ifreq {
    // SAFETY: an all-zero ifreq is valid.
    let mut r: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in r
        .ifr_name
        .iter_mut()
        .zip(name.bytes().take(libc::IFNAMSIZ - 1))
    {
        *d = s as libc::c_char;
    }
    r
}

fn sockaddr_in(a: Ipv4Addr) -> libc::sockaddr {
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from(a).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: sockaddr_in and sockaddr have the same size; reading one as
    // the other is how the kernel interface is meant to be used.
    unsafe { std::mem::transmute::<libc::sockaddr_in, libc::sockaddr>(sin) }
}

/// Linux's `struct rtentry` (the route ioctls), which the libc crate does
/// not define for glibc.
#[repr(C)]
struct RtEntry {
    rt_pad1: libc::c_ulong,
    rt_dst: libc::sockaddr,
    rt_gateway: libc::sockaddr,
    rt_genmask: libc::sockaddr,
    rt_flags: libc::c_ushort,
    rt_pad2: libc::c_short,
    rt_pad3: libc::c_ulong,
    rt_pad4: *mut libc::c_void,
    rt_metric: libc::c_short,
    rt_dev: *mut libc::c_char,
    rt_mtu: libc::c_ulong,
    rt_window: libc::c_ulong,
    rt_irtt: libc::c_ushort,
}

const RTF_UP: libc::c_ushort = 0x0001;
const RTF_GATEWAY: libc::c_ushort = 0x0002;

impl Tun {
    /// Allocates a tun device, or a tap device with `tap`, named `name`
    /// (a pattern such as `tun%d` works; empty: `tun%d` or `tap%d`). The
    /// device disappears, with its addresses and routes, when the `Tun`
    /// is dropped.
    pub fn open(name: &str, tap: bool) -> Result<Tun, String> {
        // SAFETY: open(2) with a constant path; the result is checked.
        let fd = unsafe {
            libc::open(
                c"/dev/net/tun".as_ptr(),
                libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            let e = last_err();
            return Err(format!(
                "could not allocate a tun device: /dev/net/tun: {} (is the tun module loaded, and are you root?)",
                err_text(&e)
            ));
        }
        // SAFETY: `fd` is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let pattern = if name.is_empty() {
            if tap {
                "tap%d"
            } else {
                "tun%d"
            }
        } else {
            name
        };
        let mut r = ifreq_named(pattern);
        r.ifr_ifru.ifru_flags =
            ((if tap { libc::IFF_TAP } else { libc::IFF_TUN }) | libc::IFF_NO_PI) as i16;
        // SAFETY: TUNSETIFF takes a pointer to an ifreq, which lives across
        // the call.
        if unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF, &mut r) } < 0 {
            return Err(dev_err(pattern, "TUNSETIFF", &last_err()));
        }
        let name: String = r
            .ifr_name
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8 as char)
            .collect();
        Ok(Tun { fd, name, tap })
    }

    /// Gives the host's side its address (and MTU, and with a tap device
    /// its Ethernet address), brings the device up, adds the default
    /// route through the gateway.
    pub fn set_up(&self, host: &HostSide) -> Result<(), String> {
        let name = &self.name;
        let s = crate::ctl_socket().map_err(|e| dev_err(name, "socket", &e))?;
        let ioctl = |req: libc::c_ulong, r: &mut libc::ifreq, what: &str| {
            // SAFETY: the interface ioctls take a pointer to an ifreq that
            // lives across the call.
            if unsafe { libc::ioctl(s.as_raw_fd(), req as _, r as *mut libc::ifreq) } < 0 {
                Err(dev_err(name, what, &last_err()))
            } else {
                Ok(())
            }
        };
        if let Some(mtu) = host.mtu {
            let mut r = ifreq_named(name);
            r.ifr_ifru.ifru_mtu = mtu as libc::c_int;
            ioctl(libc::SIOCSIFMTU, &mut r, "SIOCSIFMTU")?;
        }
        if let (true, Some(eth)) = (self.tap, host.ether) {
            let mut r = ifreq_named(name);
            // SAFETY: an all-zero sockaddr is valid.
            let mut sa: libc::sockaddr = unsafe { std::mem::zeroed() };
            sa.sa_family = 1; // ARPHRD_ETHER
            for (d, b) in sa.sa_data.iter_mut().zip(eth) {
                *d = b as libc::c_char;
            }
            r.ifr_ifru.ifru_hwaddr = sa;
            ioctl(libc::SIOCSIFHWADDR, &mut r, "SIOCSIFHWADDR")?;
        }
        let mut r = ifreq_named(name);
        r.ifr_ifru.ifru_addr = sockaddr_in(host.addr);
        ioctl(libc::SIOCSIFADDR, &mut r, "SIOCSIFADDR")?;
        let mut r = ifreq_named(name);
        r.ifr_ifru.ifru_netmask = sockaddr_in(host.mask);
        ioctl(libc::SIOCSIFNETMASK, &mut r, "SIOCSIFNETMASK")?;
        let mut r = ifreq_named(name);
        ioctl(libc::SIOCGIFFLAGS, &mut r, "SIOCGIFFLAGS")?;
        // SAFETY: SIOCGIFFLAGS just filled the flags member.
        let flags = unsafe { r.ifr_ifru.ifru_flags };
        r.ifr_ifru.ifru_flags = flags | (libc::IFF_UP | libc::IFF_RUNNING) as i16;
        ioctl(libc::SIOCSIFFLAGS, &mut r, "SIOCSIFFLAGS")?;
        if let Some(gw) = host.gateway {
            let mut dev: Vec<libc::c_char> = name.bytes().map(|b| b as libc::c_char).collect();
            dev.push(0);
            let mut rt = RtEntry {
                rt_pad1: 0,
                rt_dst: sockaddr_in(Ipv4Addr::UNSPECIFIED),
                rt_gateway: sockaddr_in(gw),
                rt_genmask: sockaddr_in(Ipv4Addr::UNSPECIFIED),
                rt_flags: RTF_UP | RTF_GATEWAY,
                rt_pad2: 0,
                rt_pad3: 0,
                rt_pad4: std::ptr::null_mut(),
                rt_metric: 0,
                rt_dev: dev.as_mut_ptr(),
                rt_mtu: 0,
                rt_window: 0,
                rt_irtt: 0,
            };
            // SAFETY: SIOCADDRT takes a pointer to an rtentry (laid out as
            // the kernel's) whose device name outlives the call.
            if unsafe { libc::ioctl(s.as_raw_fd(), libc::SIOCADDRT as _, &mut rt) } < 0 {
                return Err(dev_err(name, "adding the default route", &last_err()));
            }
        }
        Ok(())
    }

    /// The device's name (`tun0`, ...).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether this is a tap device (Ethernet frames).
    pub fn is_tap(&self) -> bool {
        self.tap
    }

    /// The descriptor to poll for `POLLIN` (and `POLLOUT`); it is
    /// non-blocking.
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Reads one packet (tun) or frame (tap) into `buf`; `WouldBlock` when
    /// none is waiting.
    pub fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: reading into a buffer of buf.len() bytes that we borrow
        // exclusively, from our own descriptor.
        let r = unsafe { libc::read(self.fd(), buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
        if r < 0 {
            Err(last_err())
        } else {
            Ok(r as usize)
        }
    }

    /// Writes one packet (tun) or frame (tap) to the device.
    pub fn write(&self, data: &[u8]) -> io::Result<usize> {
        // SAFETY: writing data.len() bytes from a live slice to our own
        // descriptor.
        let r = unsafe { libc::write(self.fd(), data.as_ptr() as *const libc::c_void, data.len()) };
        if r < 0 {
            Err(last_err())
        } else {
            Ok(r as usize)
        }
    }
}
