//! AF_PACKET sockets with TPACKET_V2 memory-mapped rings: an RX ring for
//! FromDevice (frames are read in place, one status word per frame) and a
//! TX ring for ToDevice (frames are written in place and sent with one
//! `send` per batch, bypassing the qdisc layer).

use crate::{dev_err, last_err, DevInfo};
use clickos_sys::{getsockopt, setsockopt, Mapping};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};

const SOL_PACKET: i32 = 263;
const PACKET_ADD_MEMBERSHIP: i32 = 1;
const PACKET_RX_RING: i32 = 5;
const PACKET_STATISTICS: i32 = 6;
const PACKET_VERSION: i32 = 10;
const PACKET_LOSS: i32 = 14;
const PACKET_TX_RING: i32 = 13;
const PACKET_FANOUT: i32 = 18;
const PACKET_QDISC_BYPASS: i32 = 20;
const PACKET_IGNORE_OUTGOING: i32 = 23;
const PACKET_MR_PROMISC: u16 = 1;
const PACKET_FANOUT_HASH: u32 = 0;
const PACKET_FANOUT_FLAG_DEFRAG: u32 = 0x8000;
const TPACKET_V2: i32 = 1;
pub const ETH_P_ALL: u16 = 3;

const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;
const TP_STATUS_AVAILABLE: u32 = 0;
const TP_STATUS_SEND_REQUEST: u32 = 1;
const TP_STATUS_SENDING: u32 = 2;
const TP_STATUS_WRONG_FORMAT: u32 = 4;
/// `struct tpacket2_hdr` size (TPACKET_ALIGN'ed).
const HDR2: usize = 32;
/// Where TX frame data starts: TPACKET2_HDRLEN - sizeof(sockaddr_ll).
const TX_DATA: usize = 32;
const PACKET_OUTGOING: u8 = 4;

#[repr(C)]
struct TpacketReq {
    block_size: u32,
    block_nr: u32,
    frame_size: u32,
    frame_nr: u32,
}

#[repr(C)]
struct PacketMreq {
    ifindex: i32,
    kind: u16,
    alen: u16,
    address: [u8; 8],
}

fn packet_socket(dev: &str) -> Result<OwnedFd, String> {
    // Protocol 0: receives nothing until bound, so no other interface's
    // frames slip into the ring first.
    // SAFETY: plain socket(2) call; the result is checked.
    let fd = unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            0,
        )
    };
    if fd < 0 {
        return Err(dev_err(dev, "socket", &last_err()));
    }
    // SAFETY: `fd` is a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn bind(fd: RawFd, ifindex: u32, proto_host: u16) -> io::Result<()> {
    // SAFETY: sockaddr_ll is plain data; all-zero is valid.
    let mut sa: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sa.sll_family = libc::AF_PACKET as u16;
    sa.sll_protocol = proto_host.to_be();
    sa.sll_ifindex = ifindex as i32;
    // SAFETY: `sa` is a valid sockaddr_ll of the given size.
    let r = unsafe {
        libc::bind(
            fd,
            &sa as *const libc::sockaddr_ll as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if r < 0 {
        Err(last_err())
    } else {
        Ok(())
    }
}

/// A memory-mapped ring of equal frames.
struct Ring {
    map: Mapping,
    frame_size: usize,
    frames_per_block: usize,
    block_size: usize,
    frame_nr: usize,
}

impl Ring {
    fn setup(
        fd: BorrowedFd<'_>,
        opt: i32,
        frame_size: usize,
        min_frames: usize,
    ) -> io::Result<Ring> {
        let block_size = (128usize << 10).max(frame_size.next_power_of_two());
        let frames_per_block = block_size / frame_size;
        let block_nr = min_frames.div_ceil(frames_per_block).max(1);
        let frame_nr = frames_per_block * block_nr;
        let req = TpacketReq {
            block_size: block_size as u32,
            block_nr: block_nr as u32,
            frame_size: frame_size as u32,
            frame_nr: frame_nr as u32,
        };
        setsockopt(fd.as_raw_fd(), SOL_PACKET, opt, &req)?;
        let map = Mapping::shared_populated(fd, block_size * block_nr, 0)?;
        Ok(Ring {
            map,
            frame_size,
            frames_per_block,
            block_size,
            frame_nr,
        })
    }

    /// Offset of frame `i` in the mapping.
    fn off(&self, i: usize) -> usize {
        (i / self.frames_per_block) * self.block_size
            + (i % self.frames_per_block) * self.frame_size
    }

    fn status(&self, i: usize) -> &AtomicU32 {
        // SAFETY: frame `i` (< frame_nr) lies within the mapping and starts
        // 16-byte aligned with its 32-bit status word; the kernel accesses
        // it atomically too.
        unsafe { &*(self.map.ptr().add(self.off(i)) as *const AtomicU32) }
    }

    /// The frame's bytes. Only touched while its status gives it to us.
    #[allow(clippy::mut_from_ref)]
    fn frame(&self, i: usize) -> &mut [u8] {
        // SAFETY: frame `i` lies within the mapping; the status protocol
        // gives user space exclusive access while we use it, and the
        // returned slice does not outlive that use.
        unsafe { std::slice::from_raw_parts_mut(self.map.ptr().add(self.off(i)), self.frame_size) }
    }
}

/// A received frame, valid during the [`PacketRx::recv`] callback.
pub struct RxFrame<'a> {
    pub data: &'a [u8],
    /// Length on the wire.
    pub len: usize,
    pub sec: u32,
    pub nsec: u32,
    pub pkttype: u8,
    /// An 802.1Q tag the kernel took off (TPID, TCI).
    pub vlan: Option<(u16, u16)>,
}

/// FromDevice's receive socket.
pub struct PacketRx {
    fd: OwnedFd,
    ring: Ring,
    head: usize,
    outbound: bool,
    drops: u64,
}

pub struct RxOptions {
    pub snaplen: usize,
    pub promisc: bool,
    pub outbound: bool,
    pub protocol: u16,
    /// Join this PACKET_FANOUT group (the router's copies under `-j N`).
    pub fanout: Option<u16>,
}

impl PacketRx {
    pub fn open(dev: &DevInfo, o: &RxOptions) -> Result<PacketRx, String> {
        let name = &dev.name;
        let fd = packet_socket(name)?;
        let raw = fd.as_raw_fd();
        setsockopt(raw, SOL_PACKET, PACKET_VERSION, &TPACKET_V2)
            .map_err(|e| dev_err(name, "PACKET_VERSION", &e))?;
        if !o.outbound {
            // Older kernels lack it; frames are also filtered below.
            let _ = setsockopt(raw, SOL_PACKET, PACKET_IGNORE_OUTGOING, &1i32);
        }
        // header, sockaddr_ll, alignment, a re-inserted VLAN tag
        let frame_size = (o.snaplen + 128).next_multiple_of(16);
        let ring = Ring::setup(fd.as_fd(), PACKET_RX_RING, frame_size, 1024)
            .map_err(|e| dev_err(name, "PACKET_RX_RING", &e))?;
        let proto = if o.protocol == 0 {
            ETH_P_ALL
        } else {
            o.protocol
        };
        bind(raw, dev.ifindex, proto).map_err(|e| dev_err(name, "bind", &e))?;
        if o.promisc {
            let mr = PacketMreq {
                ifindex: dev.ifindex as i32,
                kind: PACKET_MR_PROMISC,
                alen: 0,
                address: [0; 8],
            };
            setsockopt(raw, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr)
                .map_err(|e| dev_err(name, "PACKET_ADD_MEMBERSHIP", &e))?;
        }
        if let Some(g) = o.fanout {
            let arg: u32 = u32::from(g) | ((PACKET_FANOUT_HASH | PACKET_FANOUT_FLAG_DEFRAG) << 16);
            setsockopt(raw, SOL_PACKET, PACKET_FANOUT, &arg)
                .map_err(|e| dev_err(name, "PACKET_FANOUT", &e))?;
        }
        Ok(PacketRx {
            fd,
            ring,
            head: 0,
            outbound: o.outbound,
            drops: 0,
        })
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Reads up to `max` frames, calling `f` on each; returns how many
    /// were handed over (our own outgoing frames are skipped unless
    /// OUTBOUND).
    pub fn recv(&mut self, max: usize, mut f: impl FnMut(&RxFrame)) -> usize {
        let mut n = 0;
        while n < max {
            let i = self.head;
            let st = self.ring.status(i).load(Ordering::Acquire);
            if st & TP_STATUS_USER == 0 {
                break;
            }
            let fr = self.ring.frame(i);
            let rd32 = |o: usize| u32::from_ne_bytes([fr[o], fr[o + 1], fr[o + 2], fr[o + 3]]);
            let rd16 = |o: usize| u16::from_ne_bytes([fr[o], fr[o + 1]]);
            let len = rd32(4) as usize;
            let snap = rd32(8) as usize;
            let mac = rd16(12) as usize;
            let pkttype = fr[HDR2 + 10];
            let start = mac.min(fr.len());
            let end = (mac + snap).min(fr.len());
            if pkttype != PACKET_OUTGOING || self.outbound {
                let vlan = (st & TP_STATUS_VLAN_VALID != 0).then(|| {
                    let tpid = if st & TP_STATUS_VLAN_TPID_VALID != 0 {
                        rd16(26)
                    } else {
                        0x8100
                    };
                    (tpid, rd16(24))
                });
                f(&RxFrame {
                    data: &fr[start..end],
                    len,
                    sec: rd32(16),
                    nsec: rd32(20),
                    pkttype,
                    vlan,
                });
                n += 1;
            }
            self.ring
                .status(i)
                .store(TP_STATUS_KERNEL, Ordering::Release);
            self.head = (i + 1) % self.ring.frame_nr;
        }
        n
    }

    /// Frames the kernel dropped so far (PACKET_STATISTICS, which resets
    /// on every read, accumulated).
    pub fn kernel_drops(&mut self) -> u64 {
        let mut st = [0u32; 2];
        if getsockopt(self.fd(), SOL_PACKET, PACKET_STATISTICS, &mut st).is_ok() {
            self.drops += u64::from(st[1]);
        }
        self.drops
    }
}

/// Why a frame was not queued for sending.
#[derive(Debug, PartialEq, Eq)]
pub enum TxError {
    /// The ring is full: try again later.
    Full,
    /// Larger than the device takes, or too short.
    BadLength,
}

/// ToDevice's transmit socket.
pub struct PacketTx {
    fd: OwnedFd,
    ring: Ring,
    head: usize,
    max_len: usize,
    queued: usize,
    /// Frames the kernel refused (counted when their slot is reused).
    pub errors: u64,
}

impl PacketTx {
    pub fn open(dev: &DevInfo) -> Result<PacketTx, String> {
        let name = &dev.name;
        let fd = packet_socket(name)?;
        let raw = fd.as_raw_fd();
        setsockopt(raw, SOL_PACKET, PACKET_VERSION, &TPACKET_V2)
            .map_err(|e| dev_err(name, "PACKET_VERSION", &e))?;
        // skip malformed frames instead of stopping the ring
        let _ = setsockopt(raw, SOL_PACKET, PACKET_LOSS, &1i32);
        // straight to the driver, as a NIC-owning router wants
        let _ = setsockopt(raw, SOL_PACKET, PACKET_QDISC_BYPASS, &1i32);
        let max_len = dev.max_frame();
        let frame_size = (max_len + TX_DATA).next_power_of_two().max(2048);
        let ring = Ring::setup(fd.as_fd(), PACKET_TX_RING, frame_size, 512)
            .map_err(|e| dev_err(name, "PACKET_TX_RING", &e))?;
        // protocol 0: this socket receives nothing
        bind(raw, dev.ifindex, 0).map_err(|e| dev_err(name, "bind", &e))?;
        Ok(PacketTx {
            fd,
            ring,
            head: 0,
            max_len,
            queued: 0,
            errors: 0,
        })
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Copies a frame into the ring (sent at the next [`PacketTx::flush`]).
    pub fn queue(&mut self, data: &[u8]) -> Result<(), TxError> {
        if data.len() < 14
            || data.len() > self.max_len
            || data.len() > self.ring.frame_size - TX_DATA
        {
            return Err(TxError::BadLength);
        }
        let i = self.head;
        let st = self.ring.status(i).load(Ordering::Acquire);
        if st & (TP_STATUS_SEND_REQUEST | TP_STATUS_SENDING) != 0 {
            return Err(TxError::Full);
        }
        if st & TP_STATUS_WRONG_FORMAT != 0 {
            self.errors += 1;
        }
        let fr = self.ring.frame(i);
        fr[TX_DATA..TX_DATA + data.len()].copy_from_slice(data);
        fr[4..8].copy_from_slice(&(data.len() as u32).to_ne_bytes());
        self.ring
            .status(i)
            .store(TP_STATUS_SEND_REQUEST, Ordering::Release);
        self.head = (i + 1) % self.ring.frame_nr;
        self.queued += 1;
        Ok(())
    }

    /// Hands queued frames to the kernel with one `send`. Returns the
    /// error of a failed kick (frames stay queued and go with the next).
    pub fn flush(&mut self) -> io::Result<()> {
        if self.queued == 0 {
            return Ok(());
        }
        // SAFETY: a zero-length send on our own socket with no buffer; the
        // kernel reads the frames from the TX ring.
        let r = unsafe { libc::send(self.fd(), std::ptr::null(), 0, libc::MSG_DONTWAIT) };
        if r < 0 {
            let e = last_err();
            match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::ENOBUFS) | Some(libc::EINTR) => return Ok(()),
                _ => return Err(e),
            }
        }
        self.queued = 0;
        Ok(())
    }

    /// Frames queued but not yet handed to the kernel.
    pub fn unsent(&self) -> usize {
        self.queued
    }
}

/// TP_STATUS_AVAILABLE is 0; kept for the reader.
const _: u32 = TP_STATUS_AVAILABLE;
