//! Linux network devices for FromDevice and ToDevice: interface facts
//! (index, MTU, link type, queues), AF_PACKET rings ([`afpacket`]),
//! AF_XDP sockets ([`afxdp`]) and the two tiny BPF programs they need
//! ([`bpf`]), loaded with the `bpf(2)` system call (no libbpf).

pub mod afpacket;
pub mod afxdp;
pub mod bpf;

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// An I/O error as Click prints `strerror(errno)`.
pub fn err_text(e: &io::Error) -> String {
    super::io_error_text(e)
}

/// The last OS error.
pub fn last_err() -> io::Error {
    io::Error::last_os_error()
}

/// `DEV: CALL: strerror` (Click's wording for device errors).
pub fn dev_err(dev: &str, call: &str, e: &io::Error) -> String {
    format!("{dev}: {call}: {}", err_text(e))
}

/// How packets move between the device and the element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// AF_XDP where possible, else AF_PACKET.
    Auto,
    /// AF_PACKET with mmap rings.
    Packet,
    /// AF_XDP.
    Xdp,
}

impl Method {
    /// Parses METHOD (Click's spellings too: LINUX and PCAP mean
    /// AF_PACKET here, as libpcap itself uses AF_PACKET on Linux).
    pub fn parse(s: &str) -> Option<Method> {
        Some(match s.to_ascii_uppercase().as_str() {
            "AUTO" | "DEFAULT" => Method::Auto,
            "PACKET" | "AF_PACKET" | "LINUX" | "PCAP" => Method::Packet,
            "XDP" | "AF_XDP" => Method::Xdp,
            _ => return None,
        })
    }
}

/// Link types (`/usr/include/linux/if_arp.h`).
pub const ARPHRD_ETHER: u16 = 1;
pub const ARPHRD_LOOPBACK: u16 = 772;
pub const ARPHRD_NONE: u16 = 0xfffe;

/// What FromDevice and ToDevice need to know about an interface.
#[derive(Clone, Debug)]
pub struct DevInfo {
    pub name: String,
    pub ifindex: u32,
    pub mtu: u32,
    pub arphrd: u16,
    pub rx_queues: u32,
    pub tx_queues: u32,
}

impl DevInfo {
    /// Frames carry an Ethernet header.
    pub fn is_ether(&self) -> bool {
        self.arphrd == ARPHRD_ETHER || self.arphrd == ARPHRD_LOOPBACK
    }

    /// Click's encapsulation name for the link.
    pub fn encap(&self) -> &'static str {
        match self.arphrd {
            ARPHRD_ETHER | ARPHRD_LOOPBACK => "ETHER",
            ARPHRD_NONE => "IP",
            _ => "UNKNOWN",
        }
    }

    /// Largest frame the device sends: MTU, link header and a VLAN tag.
    pub fn max_frame(&self) -> usize {
        self.mtu as usize + if self.is_ether() { 18 } else { 0 }
    }
}

#[repr(C)]
struct IfReq {
    name: [u8; 16],
    data: [u8; 24],
}

fn ifreq(name: &str) -> io::Result<IfReq> {
    let b = name.as_bytes();
    if b.is_empty() || b.len() >= 16 || b.contains(&0) || b.contains(&b'/') {
        return Err(io::Error::from_raw_os_error(libc::ENODEV));
    }
    let mut r = IfReq {
        name: [0; 16],
        data: [0; 24],
    };
    r.name[..b.len()].copy_from_slice(b);
    Ok(r)
}

fn ioctl_ifreq(fd: RawFd, req: libc::c_ulong, r: &mut IfReq) -> io::Result<()> {
    // SAFETY: `r` is a valid, exclusively borrowed ifreq-sized buffer for
    // the duration of the call; the request numbers used read/write only
    // the ifreq.
    if unsafe { libc::ioctl(fd, req, r as *mut IfReq) } < 0 {
        Err(last_err())
    } else {
        Ok(())
    }
}

/// A throwaway socket for interface ioctls.
fn ctl_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2) call; the result is checked.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(last_err());
    }
    // SAFETY: `fd` is a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

const SIOCGIFINDEX: libc::c_ulong = 0x8933;
const SIOCGIFMTU: libc::c_ulong = 0x8921;
const SIOCGIFHWADDR: libc::c_ulong = 0x8927;
const SIOCETHTOOL: libc::c_ulong = 0x8946;
const ETHTOOL_GCHANNELS: u32 = 0x3c;

/// Looks the interface up. Errors are Click's: `DEV: SIOCGIFINDEX: No
/// such device`.
pub fn dev_info(name: &str) -> Result<DevInfo, String> {
    let s = ctl_socket().map_err(|e| dev_err(name, "socket", &e))?;
    let fd = s.as_raw_fd();
    let mut r = ifreq(name).map_err(|e| dev_err(name, "SIOCGIFINDEX", &e))?;
    ioctl_ifreq(fd, SIOCGIFINDEX, &mut r).map_err(|e| dev_err(name, "SIOCGIFINDEX", &e))?;
    let ifindex = u32::from_ne_bytes([r.data[0], r.data[1], r.data[2], r.data[3]]);
    let mut r = ifreq(name).map_err(|e| dev_err(name, "SIOCGIFMTU", &e))?;
    ioctl_ifreq(fd, SIOCGIFMTU, &mut r).map_err(|e| dev_err(name, "SIOCGIFMTU", &e))?;
    let mtu = u32::from_ne_bytes([r.data[0], r.data[1], r.data[2], r.data[3]]);
    let mut r = ifreq(name).map_err(|e| dev_err(name, "SIOCGIFHWADDR", &e))?;
    ioctl_ifreq(fd, SIOCGIFHWADDR, &mut r).map_err(|e| dev_err(name, "SIOCGIFHWADDR", &e))?;
    let arphrd = u16::from_ne_bytes([r.data[0], r.data[1]]);
    let (rx_queues, tx_queues) = channels(fd, name).unwrap_or((1, 1));
    Ok(DevInfo {
        name: name.to_string(),
        ifindex,
        mtu,
        arphrd,
        rx_queues,
        tx_queues,
    })
}

/// (RX, TX) queue counts from ETHTOOL_GCHANNELS.
fn channels(fd: RawFd, name: &str) -> Option<(u32, u32)> {
    // struct ethtool_channels: cmd, max_rx, max_tx, max_other,
    // max_combined, rx_count, tx_count, other_count, combined_count
    let mut ch = [0u32; 9];
    ch[0] = ETHTOOL_GCHANNELS;
    let mut r = ifreq(name).ok()?;
    let p = ch.as_mut_ptr() as usize;
    r.data[..8].copy_from_slice(&p.to_ne_bytes());
    ioctl_ifreq(fd, SIOCETHTOOL, &mut r).ok()?;
    let rx = (ch[5] + ch[8]).max(1);
    let tx = (ch[6] + ch[8]).max(1);
    Some((rx, tx))
}

/// A shared memory mapping, unmapped on drop.
pub struct Mmap {
    ptr: *mut u8,
    len: usize,
}

impl Mmap {
    /// Maps `len` bytes of `fd` at `offset` (a ring), or anonymous memory
    /// when `fd` is `None` (an AF_XDP UMEM).
    pub fn new(fd: Option<RawFd>, len: usize, offset: i64) -> io::Result<Mmap> {
        let (flags, fd) = match fd {
            Some(fd) => (libc::MAP_SHARED | libc::MAP_POPULATE, fd),
            None => (
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
            ),
        };
        // SAFETY: a fresh mapping chosen by the kernel (null hint); the
        // result is checked before use.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                fd,
                offset as libc::off_t,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(last_err());
        }
        Ok(Mmap {
            ptr: ptr as *mut u8,
            len,
        })
    }

    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` describe a mapping this value created and
        // nothing else unmaps.
        unsafe {
            libc::munmap(self.ptr as *mut libc::c_void, self.len);
        }
    }
}

/// setsockopt with a plain value.
pub fn setsockopt<T>(fd: RawFd, level: i32, name: i32, v: &T) -> io::Result<()> {
    // SAFETY: `v` points to a valid T of the given size for the call.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            v as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if r < 0 {
        Err(last_err())
    } else {
        Ok(())
    }
}

/// getsockopt into a plain value; returns the length the kernel wrote.
pub fn getsockopt<T>(fd: RawFd, level: i32, name: i32, v: &mut T) -> io::Result<usize> {
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `v` is a valid, exclusively borrowed T of `len` bytes.
    let r =
        unsafe { libc::getsockopt(fd, level, name, v as *mut T as *mut libc::c_void, &mut len) };
    if r < 0 {
        Err(last_err())
    } else {
        Ok(len as usize)
    }
}

/// An id for PACKET_FANOUT groups: the interface and this process, so the
/// router's copies (`-j N`) share one group and other processes don't.
pub fn fanout_group(ifindex: u32) -> u16 {
    let pid = std::process::id();
    ((ifindex.wrapping_mul(0x9e37) ^ pid ^ (pid >> 16)) & 0xffff) as u16
}

/// Sets the IP header annotation as Click's `fake_pcap_force_ip` does for
/// Ethernet (optionally 802.1Q-tagged) frames and raw IP links; false when
/// the frame is not IPv4.
pub fn force_ip(p: &mut click::packet::Packet, ether: bool) -> bool {
    let d = p.data();
    let off = if !ether {
        0
    } else {
        if d.len() < 14 {
            return false;
        }
        match u16::from_be_bytes([d[12], d[13]]) {
            0x0800 => 14,
            0x8100 | 0x88a8 if d.len() >= 18 && u16::from_be_bytes([d[16], d[17]]) == 0x0800 => 18,
            _ => return false,
        }
    };
    let Some(&vh) = d.get(off) else {
        return false;
    };
    let hl = usize::from(vh & 15) * 4;
    if vh >> 4 != 4 || hl < 20 || d.len() < off + hl {
        return false;
    }
    p.set_network_header(off, hl);
    true
}
