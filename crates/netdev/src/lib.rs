//! Linux network devices without the element layer, for anything that
//! moves frames between a program and an interface: Click's FromDevice and
//! ToDevice (`clickos-userlevel`), a software switch's ports.
//!
//! * [`DevInfo::lookup`]: an interface's facts (index, MTU, link type,
//!   queues).
//! * [`Rx`] and [`Tx`]: receive and send batches of frames over AF_XDP or
//!   an AF_PACKET memory-mapped ring, chosen by [`Method`]; each has a
//!   descriptor to poll and counters.
//! * [`Tun`]: a tun or tap device whose host side gets an address.
//!
//! Underneath, and public for callers that want one mechanism: AF_PACKET
//! rings ([`afpacket`]), AF_XDP sockets ([`afxdp`]) and the two tiny BPF
//! programs they need ([`bpf`]), loaded with the `bpf(2)` system call (no
//! libbpf). Errors are strings in Click's wording (`DEV: CALL: strerror`).
//!
//! Receiving a batch and sending it back out another interface:
//!
//! ```no_run
//! use clickos_netdev::{DevInfo, Rx, RxConfig, Tx, TxConfig};
//!
//! let a = DevInfo::lookup("veth0")?;
//! let b = DevInfo::lookup("veth1")?;
//! let mut note = |m: &str| eprintln!("{m}");
//! let mut rx = Rx::open(&a, &RxConfig::default(), &mut note)?;
//! let mut tx = Tx::open(&b, &TxConfig::default(), &mut note)?;
//! let mut frames: Vec<Vec<u8>> = Vec::new();
//! rx.recv(32, |f| frames.push(f.data.to_vec()));
//! let batch: Vec<&[u8]> = frames.iter().map(|f| f.as_slice()).collect();
//! let (taken, kicked) = tx.send(&batch);
//! kicked.map_err(|e| e.to_string())?;
//! println!("{taken} of {} frames sent; poll fd {} for more", batch.len(), rx.fd());
//! # Ok::<(), String>(())
//! ```

pub mod afpacket;
pub mod afxdp;
pub mod bpf;
mod rx;
mod tun;
mod tx;

pub use afpacket::TxError;
pub use rx::{Frame, Rx, RxConfig, RxStats};
pub use tun::{HostSide, Tun};
pub use tx::{Tx, TxConfig, TxStats};

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// An I/O error as Click prints `strerror(errno)`: the message without
/// Rust's ` (os error N)`.
pub fn err_text(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The last OS error.
pub fn last_err() -> io::Error {
    io::Error::last_os_error()
}

/// `DEV: CALL: strerror` (Click's wording for device errors).
pub fn dev_err(dev: &str, call: &str, e: &io::Error) -> String {
    format!("{dev}: {call}: {}", err_text(e))
}

/// How frames move between the device and the program.
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

    /// The name Click's handlers report: `AF_XDP` or `AF_PACKET` (empty
    /// for `Auto`, which is never in use).
    pub fn name(self) -> &'static str {
        match self {
            Method::Auto => "",
            Method::Packet => "AF_PACKET",
            Method::Xdp => "AF_XDP",
        }
    }
}

/// Link types (`/usr/include/linux/if_arp.h`).
pub const ARPHRD_ETHER: u16 = 1;
pub const ARPHRD_LOOPBACK: u16 = 772;
pub const ARPHRD_NONE: u16 = 0xfffe;

/// What a reader or writer needs to know about an interface.
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
    /// Looks the interface up. Errors are Click's: `DEV: SIOCGIFINDEX: No
    /// such device`.
    pub fn lookup(name: &str) -> Result<DevInfo, String> {
        dev_info(name)
    }

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
pub(crate) fn ctl_socket() -> io::Result<OwnedFd> {
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

/// An id for PACKET_FANOUT groups: the interface and this process, so the
/// copies of one reader in this process (a router's `-j N` copies) share
/// one group and other processes don't.
pub fn fanout_group(ifindex: u32) -> u16 {
    let pid = std::process::id();
    ((ifindex.wrapping_mul(0x9e37) ^ pid ^ (pid >> 16)) & 0xffff) as u16
}
