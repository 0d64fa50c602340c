//! Single-producer single-consumer packet rings in shared memory, netmap
//! style: a header with free-running `head`/`tail` indices on their own
//! cache lines, notification-suppression flags, and 8-byte slots that name
//! a buffer in the vNIC's pool.
//!
//! Each side keeps its own index privately, starting from 0 on a freshly
//! initialised ring ([`init_region`]), and only *publishes* it: it never
//! reads its own index back from shared memory. The peer's index is read
//! from shared memory and checked (`head - tail` can never exceed the slot
//! count, a slot's buffer index must be in the pool, a length must fit the
//! buffer). A violation is reported as [`RingError::Corrupt`] and the frame
//! is never touched, so a peer that scribbles over the ring cannot make
//! this side read or write out of bounds, nor keep it busy: every call does
//! a bounded amount of work.
//!
//! Notification discipline (virtio's `NO_NOTIFY` without the lost wake-up):
//! the producer publishes `head`, fences, and kicks only if the consumer
//! asked (`consumer_wants_kick`); the consumer, before sleeping, sets the
//! flag, fences, and re-reads `head` ([`Consumer::prepare_to_sleep`]).

use crate::layout::VnicInfo;
use core::sync::atomic::{fence, AtomicU32, Ordering};

/// Slot flag: the frame continues in the next slot (not produced yet).
pub const FLAG_MORE: u16 = 1;
/// Slot flag: the checksum is known to be correct.
pub const FLAG_CSUM_OK: u16 = 2;

#[repr(C, align(64))]
pub struct RingHeader {
    /// Producer: next slot to fill (free-running).
    pub head: AtomicU32,
    _p0: [u32; 15],
    /// Consumer: next slot to consume (free-running).
    pub tail: AtomicU32,
    _p1: [u32; 15],
    /// Set by the consumer before it sleeps.
    pub consumer_wants_kick: AtomicU32,
    /// Set by the producer when it found the ring full.
    pub producer_wants_kick: AtomicU32,
    pub kick_at: AtomicU32,
    /// Constant after setup (informational: each side uses its own trusted copy).
    pub num_slots: AtomicU32,
    pub buf_size: AtomicU32,
    _p2: [u32; 11],
}

/// One slot: buffer index, then length and flags packed in one word.
#[repr(C)]
pub struct Slot {
    pub buf_idx: AtomicU32,
    /// `len | flags << 16`
    pub len_flags: AtomicU32,
}

pub const HEADER_BYTES: u32 = core::mem::size_of::<RingHeader>() as u32;

/// Bytes one ring (header + slots) takes, rounded to a cache line.
pub const fn ring_bytes(slots: u32) -> u32 {
    (HEADER_BYTES + slots * 8 + 63) & !63
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingError {
    /// The peer's index, a buffer index or a length is impossible.
    Corrupt(&'static str),
}

impl core::fmt::Display for RingError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            RingError::Corrupt(what) => write!(f, "ring corrupted: {what}"),
        }
    }
}

/// Which ring of a vNIC, named from the guest's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Host → guest.
    Rx,
    /// Guest → host.
    Tx,
}

/// A view of one ring in a vNIC region, built from *trusted* geometry (the
/// host's own record, or the boot information the guest can only read).
#[derive(Clone, Copy)]
struct View {
    hdr: *const RingHeader,
    slots: *const Slot,
    bufs: *mut u8,
    nslots: u32,
    buf_size: u32,
    nbufs: u32,
    /// First buffer owned by this ring's slots.
    buf_first: u32,
}

// SAFETY: the view only holds addresses into shared memory that outlives the
// endpoint (the caller of `new` guarantees it); all accesses are atomic or
// bounds-checked copies.
unsafe impl Send for View {}

impl View {
    /// # Safety
    /// `base` must point to a mapped region of at least `info.size` bytes
    /// laid out as `info` says, valid for the life of the view.
    unsafe fn new(base: *mut u8, info: &VnicInfo, dir: Dir) -> View {
        let (off, first) = match dir {
            Dir::Rx => (info.rx_off, 0),
            Dir::Tx => (info.tx_off, info.slots),
        };
        // SAFETY: offsets come from `vnic_layout`, inside the region.
        unsafe {
            let hdr = base.add(off as usize) as *const RingHeader;
            View {
                hdr,
                slots: base.add(off as usize + HEADER_BYTES as usize) as *const Slot,
                bufs: base.add(info.bufs_off as usize),
                nslots: info.slots,
                buf_size: info.buf_size,
                nbufs: info.nbufs,
                buf_first: first,
            }
        }
    }
    #[inline]
    fn hdr(&self) -> &RingHeader {
        // SAFETY: see `new`.
        unsafe { &*self.hdr }
    }
    #[inline]
    fn slot(&self, idx: u32) -> &Slot {
        // SAFETY: the index is masked to the trusted slot count.
        unsafe { &*self.slots.add((idx & (self.nslots - 1)) as usize) }
    }
    /// The buffer `idx`, after checking it is in the pool.
    #[inline]
    fn buf(&self, idx: u32) -> Result<*mut u8, RingError> {
        if idx >= self.nbufs {
            return Err(RingError::Corrupt("buffer index out of range"));
        }
        // SAFETY: idx < nbufs, and the pool holds nbufs buffers.
        Ok(unsafe { self.bufs.add(idx as usize * self.buf_size as usize) })
    }
}

/// Sets up both rings of a vNIC region (host, before the instance starts).
///
/// # Safety
/// As for [`Producer::new`].
pub unsafe fn init_region(base: *mut u8, info: &VnicInfo) {
    for dir in [Dir::Rx, Dir::Tx] {
        // SAFETY: forwarded from the caller.
        let v = unsafe { View::new(base, info, dir) };
        let h = v.hdr();
        h.head.store(0, Ordering::Relaxed);
        h.tail.store(0, Ordering::Relaxed);
        h.consumer_wants_kick.store(0, Ordering::Relaxed);
        h.producer_wants_kick.store(0, Ordering::Relaxed);
        h.kick_at.store(0, Ordering::Relaxed);
        h.num_slots.store(info.slots, Ordering::Relaxed);
        h.buf_size.store(info.buf_size, Ordering::Relaxed);
        for i in 0..info.slots {
            let s = v.slot(i);
            s.buf_idx.store(v.buf_first + i, Ordering::Relaxed);
            s.len_flags.store(0, Ordering::Relaxed);
        }
    }
    fence(Ordering::Release);
}

/// The producing end of a ring.
pub struct Producer {
    v: View,
    /// Our head (trusted; published to `hdr.head`).
    head: u32,
    published: u32,
    /// `head` may advance up to here without looking at the consumer's
    /// tail again (the last checked tail plus the slot count): one read
    /// of the peer's cache line per ring's worth of frames, not per frame.
    limit: u32,
    /// Frames dropped because the ring was full.
    pub full_drops: u64,
}

impl Producer {
    /// The producer of a ring set up by [`init_region`], starting from
    /// head 0 (whatever the shared header says by now: the peer may
    /// already have written it).
    ///
    /// # Safety
    /// `base` must map the whole vNIC region described by `info` for the
    /// life of the producer, and nobody else may produce on this ring.
    pub unsafe fn new(base: *mut u8, info: &VnicInfo, dir: Dir) -> Producer {
        Producer {
            // SAFETY: forwarded.
            v: unsafe { View::new(base, info, dir) },
            head: 0,
            published: 0,
            limit: 0,
            full_drops: 0,
        }
    }

    /// The producer of a ring restored from a snapshot: continues from
    /// the head the shared header shows (frames queued but never published
    /// were not part of it).
    ///
    /// # Safety
    /// As for [`Producer::new`].
    pub unsafe fn resume(base: *mut u8, info: &VnicInfo, dir: Dir) -> Producer {
        // SAFETY: forwarded.
        let v = unsafe { View::new(base, info, dir) };
        let head = v.hdr().head.load(Ordering::Acquire);
        Producer {
            v,
            head,
            published: head,
            limit: head,
            full_drops: 0,
        }
    }

    /// The longest frame a slot takes.
    pub fn buf_size(&self) -> u32 {
        self.v.buf_size
    }

    /// Free slots, from the consumer's published tail (checked).
    pub fn free(&self) -> Result<u32, RingError> {
        let tail = self.v.hdr().tail.load(Ordering::Acquire);
        let used = self.head.wrapping_sub(tail);
        if used > self.v.nslots {
            return Err(RingError::Corrupt("consumer index ahead of producer"));
        }
        Ok(self.v.nslots - used)
    }

    /// Copies one frame into the next slot. `Ok(false)`: the ring is full
    /// (the frame was not queued). Frames longer than a buffer are refused
    /// with `Ok(false)` too and counted.
    pub fn push(&mut self, frame: &[u8]) -> Result<bool, RingError> {
        if frame.len() > self.v.buf_size as usize || frame.len() > u16::MAX as usize {
            self.full_drops += 1;
            return Ok(false);
        }
        if self.head == self.limit {
            let free = self.free()?;
            if free == 0 {
                self.v.hdr().producer_wants_kick.store(1, Ordering::Relaxed);
                self.full_drops += 1;
                return Ok(false);
            }
            self.limit = self.head.wrapping_add(free);
        }
        let slot = self.v.slot(self.head);
        // Our own slot's buffer: fixed by geometry, never read back.
        let idx = self.v.buf_first + (self.head & (self.v.nslots - 1));
        let buf = self.v.buf(idx)?;
        // SAFETY: `buf` is a buffer of buf_size bytes in the mapped pool and
        // frame.len() <= buf_size; the consumer does not read it until head
        // is published.
        unsafe { core::ptr::copy_nonoverlapping(frame.as_ptr(), buf, frame.len()) };
        slot.buf_idx.store(idx, Ordering::Relaxed);
        slot.len_flags.store(frame.len() as u32, Ordering::Relaxed);
        self.head = self.head.wrapping_add(1);
        Ok(true)
    }

    /// Publishes queued frames. Returns true when the consumer asked to be
    /// kicked (the caller then notifies it).
    pub fn flush(&mut self) -> bool {
        if self.head == self.published {
            return false;
        }
        let h = self.v.hdr();
        h.head.store(self.head, Ordering::Release);
        self.published = self.head;
        fence(Ordering::SeqCst);
        if h.consumer_wants_kick.load(Ordering::Relaxed) != 0 {
            h.consumer_wants_kick.store(0, Ordering::Relaxed);
            return true;
        }
        false
    }
}

/// The consuming end of a ring.
pub struct Consumer {
    v: View,
    /// Our tail (trusted; published to `hdr.tail`).
    tail: u32,
    published: u32,
    /// Malformed slots seen (a length beyond the buffer: the ring is then
    /// corrupt).
    pub bad_frames: u64,
}

impl Consumer {
    /// The consumer of a ring set up by [`init_region`], starting from
    /// tail 0 (whatever the shared header says by now).
    ///
    /// # Safety
    /// As for [`Producer::new`], for the consuming side.
    pub unsafe fn new(base: *mut u8, info: &VnicInfo, dir: Dir) -> Consumer {
        Consumer {
            // SAFETY: forwarded.
            v: unsafe { View::new(base, info, dir) },
            tail: 0,
            published: 0,
            bad_frames: 0,
        }
    }

    /// The consumer of a ring restored from a snapshot: continues from
    /// the tail the shared header shows.
    ///
    /// # Safety
    /// As for [`Consumer::new`].
    pub unsafe fn resume(base: *mut u8, info: &VnicInfo, dir: Dir) -> Consumer {
        // SAFETY: forwarded.
        let v = unsafe { View::new(base, info, dir) };
        let tail = v.hdr().tail.load(Ordering::Acquire);
        Consumer {
            v,
            tail,
            published: tail,
            bad_frames: 0,
        }
    }

    /// Frames ready, from the producer's published head (checked).
    pub fn available(&self) -> Result<u32, RingError> {
        let head = self.v.hdr().head.load(Ordering::Acquire);
        let n = head.wrapping_sub(self.tail);
        if n > self.v.nslots {
            return Err(RingError::Corrupt("producer index out of range"));
        }
        Ok(n)
    }

    /// Hands the next frame to `f` (a bounds-checked view of the buffer).
    /// `Ok(false)`: the ring is empty. A slot with an impossible buffer
    /// index or length is corruption (counted in `bad_frames` too): `f` is
    /// not called.
    pub fn pop(&mut self, f: impl FnOnce(&[u8])) -> Result<bool, RingError> {
        let mut f = Some(f);
        self.pop_batch(1, |d| {
            if let Some(f) = f.take() {
                f(d)
            }
        })
        .map(|n| n == 1)
    }

    /// Hands up to `max` frames to `f`, reading the producer's head once.
    /// Returns how many were handed out; stops at the first corrupt slot
    /// (the frames before it were handed out and consumed).
    pub fn pop_batch(&mut self, max: u32, mut f: impl FnMut(&[u8])) -> Result<u32, RingError> {
        let n = self.available()?.min(max);
        for _ in 0..n {
            let slot = self.v.slot(self.tail);
            let idx = slot.buf_idx.load(Ordering::Relaxed);
            let lf = slot.len_flags.load(Ordering::Relaxed);
            self.tail = self.tail.wrapping_add(1);
            let len = (lf & 0xFFFF) as usize;
            let buf = self.v.buf(idx)?;
            if len > self.v.buf_size as usize {
                self.bad_frames += 1;
                return Err(RingError::Corrupt("slot length exceeds the buffer size"));
            }
            // SAFETY: as in `pop`: index and length checked against the pool.
            f(unsafe { core::slice::from_raw_parts(buf as *const u8, len) });
        }
        Ok(n)
    }

    /// Publishes consumed slots. Returns true when the producer was waiting
    /// for room (the caller may notify it).
    pub fn release(&mut self) -> bool {
        if self.tail == self.published {
            return false;
        }
        let h = self.v.hdr();
        h.tail.store(self.tail, Ordering::Release);
        self.published = self.tail;
        fence(Ordering::SeqCst);
        if h.producer_wants_kick.load(Ordering::Relaxed) != 0 {
            h.producer_wants_kick.store(0, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// Before sleeping: asks for a kick, then re-checks. Returns true when
    /// the ring is still empty (safe to sleep); false when frames arrived
    /// meanwhile (the request is withdrawn; keep polling).
    pub fn prepare_to_sleep(&mut self) -> Result<bool, RingError> {
        let h = self.v.hdr();
        h.consumer_wants_kick.store(1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if self.available()? != 0 {
            h.consumer_wants_kick.store(0, Ordering::Relaxed);
            return Ok(false);
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::layout::vnic_layout;

    /// A page-aligned, zeroed region (rings need 64-byte alignment).
    #[repr(C, align(4096))]
    struct Page([u8; 4096]);
    fn region(slots: u32) -> (std::vec::Vec<Page>, VnicInfo) {
        let info = vnic_layout(slots, 2048, [2, 0, 0, 0, 0, 1]).unwrap();
        let mut mem = std::vec::Vec::new();
        mem.resize_with(info.size as usize / 4096, || Page([0; 4096]));
        (mem, info)
    }

    #[test]
    fn frames_cross_in_order_and_full_is_reported() {
        let (mut mem, info) = region(64);
        let base = mem.as_mut_ptr() as *mut u8;
        // SAFETY: `mem` is info.size bytes and outlives both endpoints.
        let (mut p, mut c) = unsafe {
            init_region(base, &info);
            (
                Producer::new(base, &info, Dir::Rx),
                Consumer::new(base, &info, Dir::Rx),
            )
        };
        assert_eq!(c.available(), Ok(0));
        for i in 0..64u32 {
            assert_eq!(p.push(&i.to_le_bytes()), Ok(true));
        }
        assert_eq!(p.push(b"x"), Ok(false), "65th frame must not fit");
        assert_eq!(c.available(), Ok(0), "nothing visible before flush");
        p.flush();
        assert_eq!(c.available(), Ok(64));
        for i in 0..64u32 {
            let mut got = std::vec::Vec::new();
            assert_eq!(c.pop(|d| got.extend_from_slice(d)), Ok(true));
            assert_eq!(got, i.to_le_bytes());
        }
        assert_eq!(c.pop(|_| ()), Ok(false));
        assert!(c.release(), "producer found the ring full and wants a kick");
        assert_eq!(p.free(), Ok(64));
    }

    #[test]
    fn kicks_only_when_asked() {
        let (mut mem, info) = region(64);
        let base = mem.as_mut_ptr() as *mut u8;
        // SAFETY: as above.
        let (mut p, mut c) = unsafe {
            init_region(base, &info);
            (
                Producer::new(base, &info, Dir::Tx),
                Consumer::new(base, &info, Dir::Tx),
            )
        };
        p.push(b"a").unwrap();
        assert!(!p.flush(), "consumer did not ask");
        assert_eq!(c.prepare_to_sleep(), Ok(false), "a frame is waiting");
        c.pop(|_| ()).unwrap();
        c.release();
        assert_eq!(c.prepare_to_sleep(), Ok(true));
        p.push(b"b").unwrap();
        assert!(p.flush(), "consumer asked for a kick");
        p.push(b"c").unwrap();
        assert!(!p.flush(), "the request is one-shot");
    }

    #[test]
    fn garbage_from_the_peer_is_caught() {
        let (mut mem, info) = region(64);
        let base = mem.as_mut_ptr() as *mut u8;
        // SAFETY: as above.
        let (mut p, mut c) = unsafe {
            init_region(base, &info);
            (
                Producer::new(base, &info, Dir::Rx),
                Consumer::new(base, &info, Dir::Rx),
            )
        };
        // SAFETY: the header sits at rx_off in the region we own.
        let hdr = unsafe { &*(base.add(info.rx_off as usize) as *const RingHeader) };
        hdr.head.store(1000, Ordering::Relaxed);
        assert!(matches!(c.available(), Err(RingError::Corrupt(_))));
        hdr.head.store(0, Ordering::Relaxed);
        hdr.tail.store(77, Ordering::Relaxed);
        assert!(matches!(p.free(), Err(RingError::Corrupt(_))));
        hdr.tail.store(0, Ordering::Relaxed);
        p.push(b"hello").unwrap();
        p.flush();
        // Scribble over the slot: impossible buffer index, then length.
        // SAFETY: slot 0 follows the header.
        let slot =
            unsafe { &*(base.add(info.rx_off as usize + HEADER_BYTES as usize) as *const Slot) };
        slot.buf_idx.store(u32::MAX, Ordering::Relaxed);
        assert!(matches!(c.pop(|_| ()), Err(RingError::Corrupt(_))));
        let (mut mem2, info2) = region(64);
        let base2 = mem2.as_mut_ptr() as *mut u8;
        // SAFETY: as above.
        let (mut p2, mut c2) = unsafe {
            init_region(base2, &info2);
            (
                Producer::new(base2, &info2, Dir::Rx),
                Consumer::new(base2, &info2, Dir::Rx),
            )
        };
        p2.push(b"hello").unwrap();
        p2.flush();
        // SAFETY: as above.
        let slot2 =
            unsafe { &*(base2.add(info2.rx_off as usize + HEADER_BYTES as usize) as *const Slot) };
        slot2.len_flags.store(60000, Ordering::Relaxed);
        let mut called = false;
        assert!(matches!(
            c2.pop(|_| called = true),
            Err(RingError::Corrupt(_))
        ));
        assert!(!called, "an oversized frame is never handed out");
        assert_eq!(c2.bad_frames, 1);
    }

    /// The guest writes the host's own indices (RX head, TX tail) before
    /// the host attaches: the host's endpoints start from their own 0 and
    /// never take the peer's word for their own index.
    #[test]
    fn endpoints_start_from_their_own_zero() {
        let (mut mem, info) = region(64);
        let base = mem.as_mut_ptr() as *mut u8;
        // SAFETY: `mem` is info.size bytes and outlives the endpoints; the
        // headers sit at rx_off and tx_off.
        let (rx_hdr, tx_hdr) = unsafe {
            init_region(base, &info);
            (
                &*(base.add(info.rx_off as usize) as *const RingHeader),
                &*(base.add(info.tx_off as usize) as *const RingHeader),
            )
        };
        rx_hdr.head.store(0x8000_0123, Ordering::Relaxed);
        tx_hdr.tail.store(0x0BAD_F00D, Ordering::Relaxed);
        // SAFETY: as above; one producer and one consumer per ring.
        let (mut host_tx, mut host_rx, mut guest_rx, mut guest_tx) = unsafe {
            (
                Producer::new(base, &info, Dir::Rx),
                Consumer::new(base, &info, Dir::Tx),
                Consumer::new(base, &info, Dir::Rx),
                Producer::new(base, &info, Dir::Tx),
            )
        };
        assert_eq!(host_tx.free(), Ok(64));
        assert_eq!(host_rx.available(), Ok(0));
        assert_eq!(host_tx.push(b"down"), Ok(true));
        host_tx.flush();
        let mut got = std::vec::Vec::new();
        assert_eq!(guest_rx.pop(|d| got.extend_from_slice(d)), Ok(true));
        assert_eq!(got, b"down");
        // The scribbler only hurt itself: its producer sees the host's
        // (unpublished) tail as garbage.
        assert!(matches!(guest_tx.push(b"up"), Err(RingError::Corrupt(_))));
        // A frame the guest publishes by hand reaches the host's consumer,
        // which counts from its own tail 0.
        // SAFETY: TX slot 0 follows the TX header; its buffer is `slots`.
        unsafe {
            let slot = &*(base.add(info.tx_off as usize + HEADER_BYTES as usize) as *const Slot);
            let buf = base.add(info.bufs_off as usize + (info.slots * info.buf_size) as usize);
            core::ptr::copy_nonoverlapping(b"up".as_ptr(), buf, 2);
            slot.buf_idx.store(info.slots, Ordering::Relaxed);
            slot.len_flags.store(2, Ordering::Relaxed);
        }
        tx_hdr.head.store(1, Ordering::Release);
        got.clear();
        assert_eq!(host_rx.pop(|d| got.extend_from_slice(d)), Ok(true));
        assert_eq!(got, b"up");
        assert_eq!(host_rx.available(), Ok(0));
    }

    /// A slot whose length exceeds the buffer is corruption, like a bad
    /// buffer index: reported, never handed out, never skipped silently.
    #[test]
    fn a_bad_slot_length_is_corruption() {
        let (mut mem, info) = region(64);
        let base = mem.as_mut_ptr() as *mut u8;
        // SAFETY: as above.
        let (mut p, mut c) = unsafe {
            init_region(base, &info);
            (
                Producer::new(base, &info, Dir::Tx),
                Consumer::new(base, &info, Dir::Tx),
            )
        };
        for _ in 0..3 {
            p.push(b"frame").unwrap();
        }
        p.flush();
        // SAFETY: slot 1 of the TX ring follows its header.
        let slot = unsafe {
            &*(base.add(info.tx_off as usize + HEADER_BYTES as usize + 8) as *const Slot)
        };
        slot.len_flags.store(info.buf_size + 1, Ordering::Relaxed);
        assert_eq!(c.pop(|d| assert_eq!(d, b"frame")), Ok(true));
        let mut called = false;
        assert!(matches!(
            c.pop(|_| called = true),
            Err(RingError::Corrupt(_))
        ));
        assert!(!called, "an oversized frame is never handed out");
        assert_eq!(c.bad_frames, 1);
    }

    #[test]
    fn layout_rejects_bad_geometry() {
        assert!(vnic_layout(100, 2048, [0; 6]).is_none());
        assert!(vnic_layout(8192, 2048, [0; 6]).is_none());
        assert!(vnic_layout(256, 100, [0; 6]).is_none());
        let l = vnic_layout(256, 2048, [0; 6]).unwrap();
        assert!(l.bufs_off >= 2 * ring_bytes(256));
        assert_eq!(l.nbufs, 512);
    }

    /// Random garbage in every shared word, many times over: each call
    /// either works within bounds or reports corruption; nothing panics and
    /// nothing outside the pool is handed out.
    #[test]
    fn random_scribbles_never_escape_the_pool() {
        let (mut mem, info) = region(64);
        let base = mem.as_mut_ptr() as *mut u8;
        let words = (2 * ring_bytes(64) / 4) as usize;
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..20_000 {
            // SAFETY: `mem` is info.size bytes and outlives the endpoints.
            let (mut p, mut c) = unsafe {
                init_region(base, &info);
                (
                    Producer::new(base, &info, Dir::Rx),
                    Consumer::new(base, &info, Dir::Rx),
                )
            };
            for _ in 0..(1 + round % 5) {
                let _ = p.push(&[0xAB; 60]);
            }
            p.flush();
            for _ in 0..(1 + rnd() % 8) {
                let w = (rnd() as usize) % words;
                // SAFETY: w indexes a u32 inside the two rings.
                unsafe { (base as *mut u32).add(w).write_volatile(rnd() as u32) };
            }
            for _ in 0..70 {
                match c.pop(|d| assert!(d.len() <= info.buf_size as usize)) {
                    Ok(true) => {}
                    Ok(false) | Err(_) => break,
                }
            }
            c.release();
            let _ = c.prepare_to_sleep();
            let _ = p.push(b"again");
            p.flush();
            let _ = p.free();
        }
    }
}
