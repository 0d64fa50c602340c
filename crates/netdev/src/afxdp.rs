//! AF_XDP sockets: a UMEM of fixed-size frames shared with the kernel,
//! the fill and completion rings that pass frames back and forth, and
//! the RX and TX descriptor rings.
//!
//! One socket serves one (interface, queue) pair and both directions: a
//! FromDevice and a ToDevice on the same interface in one router copy
//! share it (the kernel allows one socket per queue without a shared
//! UMEM). Half the UMEM frames circulate through the fill and RX rings,
//! the other half through the TX and completion rings.

use crate::bpf::{xdp_prog, XdpProg};
use crate::{dev_err, last_err, DevInfo};
use clickos_sys::{getsockopt, setsockopt, Mapping};
use std::cell::RefCell;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::rc::{Rc, Weak};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

const SOL_XDP: i32 = 283;
const XDP_MMAP_OFFSETS: i32 = 1;
const XDP_RX_RING: i32 = 2;
const XDP_TX_RING: i32 = 3;
const XDP_UMEM_REG: i32 = 4;
const XDP_UMEM_FILL_RING: i32 = 5;
const XDP_UMEM_COMPLETION_RING: i32 = 6;
const XDP_STATISTICS: i32 = 7;
const XDP_OPTIONS: i32 = 8;
const XDP_OPTIONS_ZEROCOPY: u32 = 1;
const XDP_USE_NEED_WAKEUP: u16 = 1 << 3;
const XDP_RING_NEED_WAKEUP: u32 = 1;
const XDP_PGOFF_RX_RING: u64 = 0;
const XDP_PGOFF_TX_RING: u64 = 0x8000_0000;
const XDP_UMEM_PGOFF_FILL_RING: u64 = 0x1_0000_0000;
const XDP_UMEM_PGOFF_COMPLETION_RING: u64 = 0x1_8000_0000;
/// Headroom the kernel keeps in front of received data in copy mode.
const XDP_PACKET_HEADROOM: usize = 256;
/// Descriptors per ring, and frames per direction.
const RING: u32 = 2048;

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct RingOff {
    producer: u64,
    consumer: u64,
    desc: u64,
    flags: u64,
}

#[repr(C)]
#[derive(Default)]
struct MmapOffsets {
    rx: RingOff,
    tx: RingOff,
    fr: RingOff,
    cr: RingOff,
}

#[repr(C)]
struct UmemReg {
    addr: u64,
    len: u64,
    chunk_size: u32,
    headroom: u32,
    flags: u32,
    tx_metadata_len: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Desc {
    addr: u64,
    len: u32,
    options: u32,
}

#[repr(C)]
struct SockaddrXdp {
    family: u16,
    flags: u16,
    ifindex: u32,
    queue_id: u32,
    shared_umem_fd: u32,
}

/// A single-producer single-consumer ring shared with the kernel.
struct Ring<T: Copy> {
    _map: Mapping,
    producer: *const AtomicU32,
    consumer: *const AtomicU32,
    flags: *const AtomicU32,
    desc: *mut T,
    mask: u32,
    /// Our side's index (producer for fill/TX, consumer for RX/completion).
    local: u32,
}

impl<T: Copy> Ring<T> {
    fn map(fd: BorrowedFd<'_>, off: &RingOff, pgoff: u64) -> io::Result<Ring<T>> {
        let len = off.desc as usize + RING as usize * std::mem::size_of::<T>();
        let map = Mapping::shared_populated(fd, len, pgoff)?;
        let base = map.ptr();
        // SAFETY: the kernel's offsets lie within the mapping it sized for
        // RING entries; the words are 4-byte aligned ring indices.
        let r = unsafe {
            Ring {
                producer: base.add(off.producer as usize) as *const AtomicU32,
                consumer: base.add(off.consumer as usize) as *const AtomicU32,
                flags: base.add(off.flags as usize) as *const AtomicU32,
                desc: base.add(off.desc as usize) as *mut T,
                mask: RING - 1,
                local: 0,
                _map: map,
            }
        };
        Ok(r)
    }

    fn prod(&self) -> &AtomicU32 {
        // SAFETY: points into our live mapping (see `map`).
        unsafe { &*self.producer }
    }

    fn cons(&self) -> &AtomicU32 {
        // SAFETY: points into our live mapping (see `map`).
        unsafe { &*self.consumer }
    }

    fn need_wakeup(&self) -> bool {
        // SAFETY: points into our live mapping (see `map`).
        unsafe { &*self.flags }.load(Ordering::Relaxed) & XDP_RING_NEED_WAKEUP != 0
    }

    fn get(&self, i: u32) -> T {
        // SAFETY: the index is masked into the ring's RING entries.
        unsafe { std::ptr::read_volatile(self.desc.add((i & self.mask) as usize)) }
    }

    fn set(&mut self, i: u32, v: T) {
        // SAFETY: the index is masked into the ring's RING entries, which
        // the producer (us) owns until the index is published.
        unsafe { std::ptr::write_volatile(self.desc.add((i & self.mask) as usize), v) }
    }

    // --- consumer side (RX, completion)
    fn available(&self) -> u32 {
        self.prod().load(Ordering::Acquire).wrapping_sub(self.local)
    }
    fn release(&mut self, n: u32) {
        self.local = self.local.wrapping_add(n);
        self.cons().store(self.local, Ordering::Release);
    }

    // --- producer side (fill, TX)
    fn free(&self) -> u32 {
        RING - self.local.wrapping_sub(self.cons().load(Ordering::Acquire))
    }
    fn publish(&mut self, n: u32) {
        self.local = self.local.wrapping_add(n);
        self.prod().store(self.local, Ordering::Release);
    }
    /// Entries produced that the kernel has not consumed yet.
    fn outstanding(&self) -> u32 {
        self.local.wrapping_sub(self.cons().load(Ordering::Acquire))
    }
}

/// One AF_XDP socket and its UMEM.
pub struct Xsk {
    pub queue: u32,
    pub zerocopy: bool,
    // fields drop in order: rings before the socket, UMEM last
    fill: Ring<u64>,
    comp: Ring<u64>,
    rx: Ring<Desc>,
    tx: Ring<Desc>,
    fd: OwnedFd,
    umem: Mapping,
    frame: usize,
    tx_free: Vec<u64>,
    tx_pending: u32,
    prog: Option<Arc<XdpProg>>,
}

/// (ifindex, queue, socket)
type SocketEntry = (u32, u32, Weak<RefCell<Xsk>>);

thread_local! {
    /// Sockets of this router copy by (ifindex, queue), for sharing.
    static SOCKETS: RefCell<Vec<SocketEntry>> = const { RefCell::new(Vec::new()) };
}

/// This thread's socket for `dev`'s `queue`, opening it on first use.
pub fn socket(dev: &DevInfo, queue: u32) -> Result<Rc<RefCell<Xsk>>, String> {
    let found = SOCKETS.with(|s| {
        let mut s = s.borrow_mut();
        s.retain(|x| x.2.strong_count() > 0);
        s.iter()
            .find(|x| x.0 == dev.ifindex && x.1 == queue)
            .and_then(|x| x.2.upgrade())
    });
    if let Some(x) = found {
        return Ok(x);
    }
    // A queue just given up by another socket (say, a router that has
    // just exited) stays busy until the kernel's deferred release runs:
    // retry EBUSY for up to a second.
    let mut tries = 0;
    let x = loop {
        match Xsk::open(dev, queue) {
            Ok(x) => break x,
            Err(e) if e.ends_with(&busy_text()) && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => return Err(e),
        }
    };
    let x = Rc::new(RefCell::new(x));
    SOCKETS.with(|s| s.borrow_mut().push((dev.ifindex, queue, Rc::downgrade(&x))));
    Ok(x)
}

fn busy_text() -> String {
    crate::err_text(&io::Error::from_raw_os_error(libc::EBUSY))
}

impl Xsk {
    fn open(dev: &DevInfo, queue: u32) -> Result<Xsk, String> {
        let name = &dev.name;
        if !dev.is_ether() {
            return Err(format!("{name}: not an Ethernet device"));
        }
        let frame = if dev.max_frame() + XDP_PACKET_HEADROOM <= 2048 {
            2048
        } else if dev.max_frame() + XDP_PACKET_HEADROOM <= 4096 {
            4096
        } else {
            return Err(format!(
                "{name}: MTU {} too large for AF_XDP frames",
                dev.mtu
            ));
        };
        if queue >= dev.rx_queues.max(dev.tx_queues) {
            return Err(format!(
                "{name}: no queue {queue} ({} RX queues)",
                dev.rx_queues
            ));
        }
        // SAFETY: plain socket(2) call; the result is checked.
        let fd = unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(dev_err(name, "AF_XDP socket", &last_err()));
        }
        // SAFETY: `fd` is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let raw = fd.as_raw_fd();
        let nframes = 2 * RING as usize;
        let umem = Mapping::anonymous_populated(nframes * frame)
            .map_err(|e| dev_err(name, "UMEM mmap", &e))?;
        let reg = UmemReg {
            addr: umem.ptr() as u64,
            len: umem.len() as u64,
            chunk_size: frame as u32,
            headroom: 0,
            flags: 0,
            tx_metadata_len: 0,
        };
        setsockopt(raw, SOL_XDP, XDP_UMEM_REG, &reg)
            .map_err(|e| dev_err(name, "XDP_UMEM_REG", &e))?;
        for opt in [
            XDP_UMEM_FILL_RING,
            XDP_UMEM_COMPLETION_RING,
            XDP_RX_RING,
            XDP_TX_RING,
        ] {
            setsockopt(raw, SOL_XDP, opt, &RING)
                .map_err(|e| dev_err(name, "XDP ring setup", &e))?;
        }
        let mut off = MmapOffsets::default();
        getsockopt(raw, SOL_XDP, XDP_MMAP_OFFSETS, &mut off)
            .map_err(|e| dev_err(name, "XDP_MMAP_OFFSETS", &e))?;
        let m = |e: io::Error| dev_err(name, "XDP ring mmap", &e);
        let mut fill: Ring<u64> =
            Ring::map(fd.as_fd(), &off.fr, XDP_UMEM_PGOFF_FILL_RING).map_err(m)?;
        let comp: Ring<u64> =
            Ring::map(fd.as_fd(), &off.cr, XDP_UMEM_PGOFF_COMPLETION_RING).map_err(m)?;
        let rx: Ring<Desc> = Ring::map(fd.as_fd(), &off.rx, XDP_PGOFF_RX_RING).map_err(m)?;
        let tx: Ring<Desc> = Ring::map(fd.as_fd(), &off.tx, XDP_PGOFF_TX_RING).map_err(m)?;
        // the first half of the frames waits in the fill ring
        for i in 0..RING {
            fill.set(i, u64::from(i) * frame as u64);
        }
        fill.publish(RING);
        let tx_free = (RING as u64..2 * RING as u64)
            .map(|i| i * frame as u64)
            .collect();
        // no XDP_COPY/XDP_ZEROCOPY: the kernel tries zero-copy, then copies
        let sa = SockaddrXdp {
            family: libc::AF_XDP as u16,
            flags: XDP_USE_NEED_WAKEUP,
            ifindex: dev.ifindex,
            queue_id: queue,
            shared_umem_fd: 0,
        };
        // SAFETY: `sa` is a valid sockaddr_xdp of the given size.
        let r = unsafe {
            libc::bind(
                raw,
                &sa as *const SockaddrXdp as *const libc::sockaddr,
                std::mem::size_of::<SockaddrXdp>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(dev_err(name, "AF_XDP bind", &last_err()));
        }
        let mut opts = 0u32;
        let zerocopy = getsockopt(raw, SOL_XDP, XDP_OPTIONS, &mut opts).is_ok()
            && opts & XDP_OPTIONS_ZEROCOPY != 0;
        Ok(Xsk {
            queue,
            zerocopy,
            fill,
            comp,
            rx,
            tx,
            fd,
            umem,
            frame,
            tx_free,
            tx_pending: 0,
            prog: None,
        })
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Starts receiving: attaches (or joins) the interface's XDP program
    /// and directs this queue to the socket.
    pub fn start_rx(&mut self, dev: &DevInfo) -> Result<(), String> {
        if self.prog.is_some() {
            return Ok(());
        }
        let p = xdp_prog(dev.ifindex, &dev.name)?;
        p.insert(self.queue, self.fd())
            .map_err(|e| dev_err(&dev.name, "XSKMAP update", &e))?;
        self.prog = Some(p);
        Ok(())
    }

    /// Reads up to `max` frames, calling `f` on each; their UMEM frames go
    /// straight back to the fill ring.
    pub fn recv(&mut self, max: usize, mut f: impl FnMut(&[u8])) -> usize {
        let n = self.rx.available().min(max as u32);
        if n == 0 {
            return 0;
        }
        let start = self.rx.local;
        let fstart = self.fill.local;
        for k in 0..n {
            let d = self.rx.get(start.wrapping_add(k));
            let addr = d.addr as usize;
            let len = d.len as usize;
            if addr < self.umem.len() && len <= self.umem.len() - addr {
                // SAFETY: bounds checked against the UMEM just above; the
                // kernel handed this frame to us until we refill it.
                let data = unsafe { std::slice::from_raw_parts(self.umem.ptr().add(addr), len) };
                f(data);
            }
            let base = (d.addr / self.frame as u64) * self.frame as u64;
            self.fill.set(fstart.wrapping_add(k), base);
        }
        self.rx.release(n);
        // the fill ring has room: it holds at most RING frames, all ours
        self.fill.publish(n);
        if self.fill.need_wakeup() {
            self.wake_rx();
        }
        n as usize
    }

    fn wake_rx(&self) {
        // SAFETY: a zero-length, non-blocking recvfrom on our own socket,
        // only to wake the kernel's fill-ring processing.
        unsafe {
            libc::recvfrom(
                self.fd(),
                std::ptr::null_mut(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
        }
    }

    /// Takes finished TX frames back from the completion ring.
    pub fn reclaim(&mut self) {
        let n = self.comp.available();
        let start = self.comp.local;
        for k in 0..n {
            let a = self.comp.get(start.wrapping_add(k));
            self.tx_free.push(a);
        }
        self.comp.release(n);
    }

    /// Copies a frame into a free TX frame and queues its descriptor
    /// (sent at the next [`Xsk::flush`]).
    pub fn queue(&mut self, data: &[u8]) -> Result<(), crate::afpacket::TxError> {
        use crate::afpacket::TxError;
        if data.len() < 14 || data.len() > self.frame {
            return Err(TxError::BadLength);
        }
        if self.tx_free.is_empty() {
            self.reclaim();
        }
        if self.tx.free() == 0 {
            return Err(TxError::Full);
        }
        let Some(addr) = self.tx_free.pop() else {
            return Err(TxError::Full);
        };
        // SAFETY: `addr` is the start of one of our TX frames (frame-sized,
        // inside the UMEM), owned by us until the kernel completes it.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr(),
                self.umem.ptr().add(addr as usize),
                data.len(),
            );
        }
        let i = self.tx.local;
        self.tx.set(
            i,
            Desc {
                addr,
                len: data.len() as u32,
                options: 0,
            },
        );
        self.tx.publish(1);
        self.tx_pending += 1;
        Ok(())
    }

    /// Kicks the kernel to send what the TX ring holds. Copy mode sends
    /// in the system call (at most 32 frames per call on Linux), so the
    /// caller calls again while [`Xsk::tx_unsent`] is nonzero.
    pub fn flush(&mut self) -> io::Result<()> {
        if self.tx.outstanding() == 0 {
            self.tx_pending = 0;
            return Ok(());
        }
        if self.zerocopy && !self.tx.need_wakeup() {
            return Ok(());
        }
        // SAFETY: a zero-length non-blocking send on our own socket; the
        // kernel reads the frames from the TX ring.
        let r = unsafe {
            libc::sendto(
                self.fd(),
                std::ptr::null(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null(),
                0,
            )
        };
        self.tx_pending = self.tx.outstanding();
        if r < 0 {
            let e = last_err();
            match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EBUSY) | Some(libc::ENOBUFS)
                | Some(libc::EINTR) => {}
                _ => return Err(e),
            }
        }
        self.reclaim();
        Ok(())
    }

    /// Descriptors the kernel has not taken from the TX ring yet.
    pub fn tx_unsent(&self) -> u32 {
        self.tx.outstanding()
    }

    /// Frames dropped by the kernel before we could read them.
    pub fn kernel_drops(&self) -> u64 {
        let mut st = [0u64; 6];
        match getsockopt(self.fd(), SOL_XDP, XDP_STATISTICS, &mut st) {
            // rx_dropped + rx_ring_full
            Ok(_) => st[0] + st[3],
            Err(_) => 0,
        }
    }
}

impl Drop for Xsk {
    fn drop(&mut self) {
        if let Some(p) = &self.prog {
            p.remove(self.queue);
        }
    }
}
