//! Packets: one buffer type with headroom and tailroom, Click's annotations,
//! and a recycling buffer pool so the hot path never allocates.
//!
//! Header positions (MAC, network, transport) are kept as absolute offsets
//! into the buffer, as Click keeps pointers: stripping the Ethernet header
//! leaves the network-header annotation where it was.
//!
//! A packet's data may be shared, read-only, with other packets (a
//! [`SharedData`] buffer, as Click's InfiniteSource clones one packet):
//! every accessor that writes the data ([`Packet::data_mut`], `push`, `put`,
//! the `*_mut` header views) first gives the packet its own copy (copy on
//! write, Click's `uniqueify`), so a writer never changes what other
//! packets see. Annotations and header offsets are always the packet's own.

use crate::time::Timestamp;
use alloc::boxed::Box;
use alloc::rc::Rc;
use alloc::vec;
use alloc::vec::Vec;
use click_wire::Ipv4Packet;
use core::cell::UnsafeCell;
use core::mem::ManuallyDrop;
use core::net::Ipv4Addr;
use core::ptr::NonNull;

/// Bytes of headroom given to packets made by sources, enough for an
/// Ethernet header, a VLAN tag and an IP-in-IP encapsulation.
pub const DEFAULT_HEADROOM: usize = 64;
/// Size of the buffers kept in the pool (headroom + a full Ethernet frame).
pub const POOL_BUFFER_SIZE: usize = 2048;

/// Size of Click's annotation area.
pub const ANNO_SIZE: usize = 48;
/// Offset of the destination IP annotation (4 bytes) in the area.
pub const DST_IP_ANNO_OFFSET: usize = 0;
/// Offset of the paint annotation (1 byte).
pub const PAINT_ANNO_OFFSET: usize = 16;
/// Offset of the ICMP parameter-problem annotation (1 byte): Click's
/// `ICMP_PARAMPROB_ANNO`, the byte offset from the start of the IP header
/// of the erroneous byte. Set by IPGWOptions before it emits a packet on its
/// error output; ICMPError(..., parameterproblem) uses it as the pointer.
pub const ICMP_PARAMPROB_ANNO_OFFSET: usize = 17;
/// Offset of the fix-IP-source annotation (1 byte): Click's
/// `FIX_IP_SRC_ANNO`. Nonzero asks FixIPSrc to rewrite the IP source
/// address (ICMPError sets it); FixIPSrc clears it.
pub const FIX_IP_SRC_ANNO_OFFSET: usize = 19;
/// Offset of the VLAN TCI annotation (2 bytes, network order).
pub const VLAN_TCI_ANNO_OFFSET: usize = 22;
/// Offset of the aggregate annotation (4 bytes).
pub const AGGREGATE_ANNO_OFFSET: usize = 12;
/// Offset of the extra-length annotation (4 bytes).
pub const EXTRA_LENGTH_ANNO_OFFSET: usize = 36;
/// Offset of the first-timestamp annotation (8 bytes: nanoseconds,
/// little-endian), Click's `FIRST_TIMESTAMP_ANNO`.
pub const FIRST_TIMESTAMP_ANNO_OFFSET: usize = 40;

/// Click's packet types (`Packet::PacketType`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum PacketType {
    #[default]
    Host = 0,
    Broadcast = 1,
    Multicast = 2,
    OtherHost = 3,
    Outgoing = 4,
    Loopback = 5,
    FastRoute = 6,
}

impl PacketType {
    pub const NAMES: [&'static str; 7] = [
        "HOST",
        "BROADCAST",
        "MULTICAST",
        "OTHERHOST",
        "OUTGOING",
        "LOOPBACK",
        "FASTROUTE",
    ];
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
    pub fn from_name(s: &str) -> Option<PacketType> {
        let i = Self::NAMES.iter().position(|n| n.eq_ignore_ascii_case(s))?;
        Some(Self::from_u8(i as u8))
    }
    pub fn from_u8(v: u8) -> PacketType {
        match v {
            1 => PacketType::Broadcast,
            2 => PacketType::Multicast,
            3 => PacketType::OtherHost,
            4 => PacketType::Outgoing,
            5 => PacketType::Loopback,
            6 => PacketType::FastRoute,
            _ => PacketType::Host,
        }
    }
}

/// Click's packet annotations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anno {
    pub timestamp: Timestamp,
    pub packet_type: PacketType,
    /// The byte-addressed annotation area (destination IP, paint, ...).
    pub bytes: [u8; ANNO_SIZE],
}

impl Default for Anno {
    fn default() -> Self {
        Anno {
            timestamp: Timestamp::ZERO,
            packet_type: PacketType::Host,
            bytes: [0; ANNO_SIZE],
        }
    }
}

impl Anno {
    #[inline]
    pub fn dst_ip(&self) -> Ipv4Addr {
        let b = &self.bytes;
        Ipv4Addr::new(b[0], b[1], b[2], b[3])
    }
    #[inline]
    pub fn set_dst_ip(&mut self, a: Ipv4Addr) {
        self.bytes[DST_IP_ANNO_OFFSET..DST_IP_ANNO_OFFSET + 4].copy_from_slice(&a.octets());
    }
    /// Click's first-timestamp annotation (SetTimestamp with FIRST).
    pub fn first_timestamp(&self) -> Timestamp {
        Timestamp::from_nsec(i64::from_le_bytes(
            self.get::<8>(FIRST_TIMESTAMP_ANNO_OFFSET),
        ))
    }
    pub fn set_first_timestamp(&mut self, t: Timestamp) {
        self.set(FIRST_TIMESTAMP_ANNO_OFFSET, &t.nsec().to_le_bytes());
    }
    #[inline]
    pub fn paint(&self) -> u8 {
        self.bytes[PAINT_ANNO_OFFSET]
    }
    #[inline]
    pub fn set_paint(&mut self, v: u8) {
        self.bytes[PAINT_ANNO_OFFSET] = v;
    }
    #[inline]
    pub fn vlan_tci(&self) -> u16 {
        u16::from_be_bytes([
            self.bytes[VLAN_TCI_ANNO_OFFSET],
            self.bytes[VLAN_TCI_ANNO_OFFSET + 1],
        ])
    }
    #[inline]
    pub fn set_vlan_tci(&mut self, v: u16) {
        self.bytes[VLAN_TCI_ANNO_OFFSET..VLAN_TCI_ANNO_OFFSET + 2]
            .copy_from_slice(&v.to_be_bytes());
    }
    /// Click's `ICMP_PARAMPROB_ANNO`.
    #[inline]
    pub fn icmp_paramprob(&self) -> u8 {
        self.bytes[ICMP_PARAMPROB_ANNO_OFFSET]
    }
    #[inline]
    pub fn set_icmp_paramprob(&mut self, v: u8) {
        self.bytes[ICMP_PARAMPROB_ANNO_OFFSET] = v;
    }
    /// Click's `FIX_IP_SRC_ANNO`.
    #[inline]
    pub fn fix_ip_src(&self) -> bool {
        self.bytes[FIX_IP_SRC_ANNO_OFFSET] != 0
    }
    #[inline]
    pub fn set_fix_ip_src(&mut self, on: bool) {
        self.bytes[FIX_IP_SRC_ANNO_OFFSET] = u8::from(on);
    }
    #[inline]
    pub fn u8_at(&self, off: usize) -> u8 {
        self.bytes.get(off).copied().unwrap_or(0)
    }
    #[inline]
    pub fn set_u8_at(&mut self, off: usize, v: u8) {
        if let Some(b) = self.bytes.get_mut(off) {
            *b = v;
        }
    }
    /// Reads `N` bytes at `off` (zeros where out of range).
    #[inline]
    pub fn get<const N: usize>(&self, off: usize) -> [u8; N] {
        if let Some(b) = self.bytes.get(off..off.wrapping_add(N)) {
            if let Ok(a) = <[u8; N]>::try_from(b) {
                return a;
            }
        }
        let mut out = [0u8; N];
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.u8_at(off + i);
        }
        out
    }
    #[inline]
    pub fn set(&mut self, off: usize, v: &[u8]) {
        if let Some(d) = self.bytes.get_mut(off..off.wrapping_add(v.len())) {
            d.copy_from_slice(v);
            return;
        }
        for (i, b) in v.iter().enumerate() {
            self.set_u8_at(off + i, *b);
        }
    }
    pub fn u32_at(&self, off: usize) -> u32 {
        u32::from_ne_bytes(self.get::<4>(off))
    }
    pub fn set_u32_at(&mut self, off: usize, v: u32) {
        self.set(off, &v.to_ne_bytes());
    }
}

const NO_HEADER: u32 = u32::MAX;

/// A packet buffer: its own storage, the storage its data lives in now
/// (its own, or a [`SharedData`] buffer), the data bounds and header
/// offsets (absolute, into the current storage), and the annotations.
struct Buf {
    /// Own storage, a `Box<[u8]>` turned into a raw pointer (freed in
    /// `Drop`), so that `base` may point into it while the `Buf` moves.
    own: NonNull<[u8]>,
    /// Start of the current storage: `own`'s, or `shared`'s while set.
    base: NonNull<u8>,
    /// Length of the current storage.
    cap: u32,
    head: u32,
    tail: u32,
    mac: u32,
    nh: u32,
    th: u32,
    /// The read-only buffer the data lives in, when shared.
    shared: Option<SharedRef>,
    /// Where the shared buffer's data starts (before: zero headroom, which
    /// unsharing need not copy).
    shared_start: u32,
    anno: Anno,
    pool: Option<Rc<PoolInner>>,
}

impl Drop for Buf {
    fn drop(&mut self) {
        // SAFETY: `own` came from `Box::into_raw` (see `Buf::new`) and is
        // freed only here.
        drop(unsafe { Box::from_raw(self.own.as_ptr()) });
    }
}

impl Buf {
    fn new(size: usize, pool: Option<Rc<PoolInner>>) -> Buf {
        let own = NonNull::from(Box::leak(vec![0u8; size].into_boxed_slice()));
        Buf {
            own,
            base: own.cast(),
            cap: size as u32,
            head: 0,
            tail: 0,
            mac: NO_HEADER,
            nh: NO_HEADER,
            th: NO_HEADER,
            shared: None,
            shared_start: 0,
            anno: Anno::default(),
            pool,
        }
    }

    /// Length of the own storage.
    #[inline]
    fn own_len(&self) -> usize {
        self.own.len()
    }

    /// The current storage, read-only.
    #[inline(always)]
    fn mem(&self) -> &[u8] {
        // SAFETY: `base`/`cap` describe either `own` (alive while `self`
        // is) or `shared`'s bytes (alive while `self.shared` holds the Rc).
        unsafe { core::slice::from_raw_parts(self.base.as_ptr(), self.cap as usize) }
    }

    /// The current storage, writable: unshares it first.
    #[inline(always)]
    fn mem_mut(&mut self) -> &mut [u8] {
        if self.shared.is_some() {
            self.unshare();
        }
        // SAFETY: not shared, so `base`/`cap` describe `own`, which only
        // this `Buf` reaches; `&mut self` makes the borrow unique.
        unsafe { core::slice::from_raw_parts_mut(self.base.as_ptr(), self.cap as usize) }
    }

    /// Uses the own storage (as it is) again.
    #[inline(always)]
    fn use_own(&mut self) {
        self.base = self.own.cast();
        self.cap = self.own_len() as u32;
    }

    /// Copies the shared data into the own storage (a larger one if it is
    /// too small), keeping every offset, and drops the shared buffer.
    #[cold]
    #[inline(never)]
    fn unshare(&mut self) {
        let Some(sh) = self.shared.take() else {
            return;
        };
        let sh = sh.mem();
        if self.own_len() < sh.len() {
            let own = NonNull::from(Box::leak(vec![0u8; sh.len()].into_boxed_slice()));
            // SAFETY: as in `Drop`; `self.own` is replaced at once.
            drop(unsafe { Box::from_raw(self.own.as_ptr()) });
            self.own = own;
            if own.len() != POOL_BUFFER_SIZE {
                self.pool = None;
            }
        }
        let start = (self.shared_start as usize).min(sh.len());
        // SAFETY: `own` is this Buf's alone and at least `sh.len()` long;
        // it does not overlap `sh`, a separate allocation.
        unsafe {
            core::ptr::copy_nonoverlapping(
                sh.as_ptr().add(start),
                self.own.as_ptr().cast::<u8>().add(start),
                sh.len() - start,
            );
        }
        self.use_own();
    }
}

/// The heap part of a [`SharedRef`]: a reference count and the bytes.
struct SharedInner {
    refs: core::cell::Cell<usize>,
    mem: Box<[u8]>,
}

/// A counted reference to read-only shared packet data: an `Rc<[u8]>`
/// with a thin pointer, whose count a source can raise once for a whole
/// batch ([`SharedRef::add_refs`], [`SharedRef::claim`]) rather than once
/// per packet. Like `Rc`, neither `Send` nor `Sync` (the `NonNull`).
struct SharedRef(NonNull<SharedInner>);

impl SharedRef {
    fn new(mem: Box<[u8]>) -> SharedRef {
        let inner = Box::new(SharedInner {
            refs: core::cell::Cell::new(1),
            mem,
        });
        SharedRef(NonNull::from(Box::leak(inner)))
    }

    #[inline(always)]
    fn inner(&self) -> &SharedInner {
        // SAFETY: the allocation lives while any reference counted in
        // `refs` does, and `self` is one of them.
        unsafe { self.0.as_ref() }
    }

    /// The shared bytes.
    #[inline(always)]
    fn mem(&self) -> &[u8] {
        &self.inner().mem
    }

    /// Counts `n` more references, to be made by `n` calls of
    /// [`claim`](Self::claim).
    #[inline(always)]
    fn add_refs(&self, n: usize) {
        let r = &self.inner().refs;
        match r.get().checked_add(n) {
            Some(v) => r.set(v),
            None => refcount_overflow(),
        }
    }

    /// A reference already counted by [`add_refs`](Self::add_refs).
    ///
    /// # Safety
    /// Each call must be matched by one count added with `add_refs` and
    /// not yet claimed: the returned handle releases it when dropped.
    #[inline(always)]
    unsafe fn claim(&self) -> SharedRef {
        SharedRef(self.0)
    }
}

#[cold]
#[inline(never)]
fn refcount_overflow() -> ! {
    panic!("shared packet data: reference count overflow")
}

impl Clone for SharedRef {
    #[inline(always)]
    fn clone(&self) -> SharedRef {
        self.add_refs(1);
        // SAFETY: the count for this handle was just added.
        unsafe { self.claim() }
    }
}

impl Drop for SharedRef {
    #[inline(always)]
    fn drop(&mut self) {
        let r = &self.inner().refs;
        let v = r.get() - 1;
        r.set(v);
        if v == 0 {
            // SAFETY: that was the last counted reference: nothing reaches
            // the allocation (made by `Box::leak` in `new`) any more.
            drop(unsafe { Box::from_raw(self.0.as_ptr()) });
        }
    }
}

/// Read-only packet data shared by many packets without copying, as
/// Click's InfiniteSource shares one packet buffer among the clones it
/// sends: [`Pool::make_shared`] makes a packet of it. Cloning the handle
/// is cheap.
#[derive(Clone)]
pub struct SharedData {
    mem: SharedRef,
    head: u32,
}

impl SharedData {
    /// `data`, with `headroom` bytes (zeros) before it.
    pub fn new(headroom: usize, data: &[u8]) -> SharedData {
        let mut v = vec![0u8; headroom + data.len()];
        v[headroom..].copy_from_slice(data);
        SharedData {
            mem: SharedRef::new(v.into_boxed_slice()),
            head: headroom as u32,
        }
    }
    /// The data.
    pub fn data(&self) -> &[u8] {
        &self.mem.mem()[self.head as usize..]
    }
    pub fn len(&self) -> usize {
        self.mem.mem().len() - self.head as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

struct PoolInner {
    /// The idle buffers. Only ever reached through [`PoolInner::free`],
    /// whose borrows never overlap (see there).
    // Boxed so recycling a buffer moves a pointer, not the header.
    #[allow(clippy::vec_box)]
    free: UnsafeCell<Vec<Box<Buf>>>,
    max_free: usize,
    created: core::cell::Cell<u64>,
    depot: Option<alloc::sync::Arc<dyn BufferDepot>>,
}

impl PoolInner {
    /// The free list.
    ///
    /// # Safety
    /// The caller must not hold the returned borrow across anything that
    /// can reach this pool's free list again (another `free` call, dropping
    /// a `Packet`, calling the depot): pools are thread-local (`Rc`), so
    /// that makes the borrow unique. Pushing, popping and draining the
    /// `Vec` run no code of ours.
    #[inline(always)]
    #[allow(clippy::mut_from_ref, clippy::vec_box)]
    unsafe fn free(&self) -> &mut Vec<Box<Buf>> {
        &mut *self.free.get()
    }
}

/// Spare buffers shared by the pools of several threads. When packets
/// cross from one thread to another, buffers pile up where packets end
/// and run out where they start; each pool then gives (or takes) a batch
/// of [`DEPOT_BATCH`] through the depot instead of freeing (or
/// allocating) one buffer per packet.
pub trait BufferDepot: Send + Sync {
    /// Moves up to `n` spare buffers into `out`.
    fn take(&self, n: usize, out: &mut Vec<SendPacket>);
    /// Takes the buffers in `bufs` (it may free some if it holds enough).
    fn give(&self, bufs: &mut Vec<SendPacket>);
}

/// How many buffers a pool moves to or from its depot at once.
pub const DEPOT_BATCH: usize = 64;

/// A pool of packet buffers. Cloning the handle is cheap; buffers return to
/// the pool when their packet is dropped, so steady-state packet processing
/// allocates nothing.
#[derive(Clone)]
pub struct Pool {
    inner: Rc<PoolInner>,
}

impl Default for Pool {
    fn default() -> Self {
        Pool::new(4096)
    }
}

impl Pool {
    /// A pool that keeps at most `max_free` idle buffers.
    pub fn new(max_free: usize) -> Pool {
        Pool::with_depot(max_free, None)
    }

    /// A pool that trades spare buffers with other threads' pools through
    /// `depot` (see [`BufferDepot`]).
    pub fn with_depot(max_free: usize, depot: Option<alloc::sync::Arc<dyn BufferDepot>>) -> Pool {
        let max_free = if depot.is_some() {
            max_free.max(2 * DEPOT_BATCH)
        } else {
            max_free
        };
        Pool {
            inner: Rc::new(PoolInner {
                free: UnsafeCell::new(Vec::with_capacity(max_free.min(65536))),
                max_free,
                created: core::cell::Cell::new(0),
                depot,
            }),
        }
    }

    /// Refills the free list from the depot; false if it had nothing.
    #[cold]
    fn refill(&self) -> bool {
        let Some(d) = &self.inner.depot else {
            return false;
        };
        let mut got = Vec::with_capacity(DEPOT_BATCH);
        d.take(DEPOT_BATCH, &mut got);
        if got.is_empty() {
            return false;
        }
        for sp in got {
            let mut b = sp.0;
            b.pool = Some(self.inner.clone());
            // SAFETY: the borrow ends with the statement (see `free`).
            unsafe { self.inner.free() }.push(b);
        }
        true
    }

    /// Number of buffers this pool ever allocated (for tests and stats).
    pub fn buffers_created(&self) -> u64 {
        self.inner.created.get()
    }

    /// Idle buffers held right now.
    pub fn free_buffers(&self) -> usize {
        // SAFETY: the borrow ends with the statement (see `free`).
        unsafe { self.inner.free() }.len()
    }

    #[inline(always)]
    fn get_buf(&self, need: usize) -> Box<Buf> {
        if need <= POOL_BUFFER_SIZE {
            // SAFETY: the borrow ends with the statement (see `free`).
            if let Some(b) = unsafe { self.inner.free() }.pop() {
                return b;
            }
        }
        self.get_buf_slow(need)
    }

    #[cold]
    #[inline(never)]
    fn get_buf_slow(&self, need: usize) -> Box<Buf> {
        if need <= POOL_BUFFER_SIZE && self.refill() {
            // SAFETY: the borrow ends with the statement (see `free`).
            if let Some(b) = unsafe { self.inner.free() }.pop() {
                return b;
            }
        }
        self.inner.created.set(self.inner.created.get() + 1);
        let size = need.max(POOL_BUFFER_SIZE);
        let pool = if size == POOL_BUFFER_SIZE {
            Some(self.inner.clone())
        } else {
            None
        };
        Box::new(Buf::new(size, pool))
    }

    /// Makes a packet that crossed from another thread this pool's own:
    /// a buffer of the pool's size returns here when dropped.
    #[inline]
    pub fn adopt(&self, p: SendPacket) -> Packet {
        let mut b = p.0;
        if b.own_len() == POOL_BUFFER_SIZE {
            b.pool = Some(self.inner.clone());
        }
        Packet {
            b: ManuallyDrop::new(b),
        }
    }

    /// A packet holding a copy of `data`, with `headroom` bytes before it
    /// and at least `tailroom` after. Annotations are cleared.
    #[inline]
    pub fn make(&self, headroom: usize, data: &[u8], tailroom: usize) -> Packet {
        let mut p = self.make_len(headroom, data.len(), tailroom);
        p.data_mut().copy_from_slice(data);
        p
    }

    /// A packet of `len` bytes (contents unspecified but initialised).
    #[inline]
    pub fn make_len(&self, headroom: usize, len: usize, tailroom: usize) -> Packet {
        let mut b = self.get_buf(headroom + len + tailroom);
        b.use_own();
        b.head = headroom as u32;
        b.tail = (headroom + len) as u32;
        b.mac = NO_HEADER;
        b.nh = NO_HEADER;
        b.th = NO_HEADER;
        b.anno = Anno::default();
        Packet {
            b: ManuallyDrop::new(b),
        }
    }
}

impl Pool {
    /// A packet whose data is `d`'s, shared rather than copied: no copy is
    /// made until something writes the packet's data (then it gets its
    /// own, see the module documentation). Annotations are cleared.
    #[inline]
    pub fn make_shared(&self, d: &SharedData) -> Packet {
        let mut b = self.get_buf(0);
        b.base = NonNull::from(d.mem.mem()).cast();
        b.cap = d.mem.mem().len() as u32;
        b.shared = Some(d.mem.clone());
        b.shared_start = d.head;
        b.head = d.head;
        b.tail = b.cap;
        b.mac = NO_HEADER;
        b.nh = NO_HEADER;
        b.th = NO_HEADER;
        b.anno = Anno::default();
        Packet {
            b: ManuallyDrop::new(b),
        }
    }
}

impl Pool {
    /// Appends `n` packets sharing `d` (as [`make_shared`](Self::make_shared)
    /// makes them) with timestamp `ts` to `out`: a source's burst, with
    /// the pool's free list reached once rather than once per packet.
    #[inline]
    pub fn make_shared_batch(
        &self,
        d: &SharedData,
        n: usize,
        ts: Timestamp,
        out: &mut Vec<Packet>,
    ) {
        out.reserve(n);
        let mem = d.mem.mem();
        let base: NonNull<u8> = NonNull::from(mem).cast();
        let cap = mem.len() as u32;
        let anno = Anno {
            timestamp: ts,
            ..Anno::default()
        };
        let made = {
            // SAFETY: nothing below reaches the free list again until the
            // borrow ends with this block (see `free`): the loop only
            // moves pointers and writes buffer headers.
            let free = unsafe { self.inner.free() };
            let k = n.min(free.len());
            let from = free.len() - k;
            d.mem.add_refs(k);
            // SAFETY: `out` has room for `n >= k` more packets (reserved
            // above); the `k` buffers at `from..` of the free list are
            // moved (read once each, and the list shortened to `from`
            // below, so none is left behind twice) into `out`'s spare
            // capacity, whose length then counts them. Nothing in the loop
            // can panic.
            unsafe {
                let src = free.as_ptr().add(from);
                let dst = out.as_mut_ptr().add(out.len());
                for i in 0..k {
                    let mut b: Box<Buf> = core::ptr::read(src.add(i));
                    b.base = base;
                    b.cap = cap;
                    // A free buffer holds no shared data (`recycle` drops
                    // it), so nothing is released here; `forget` keeps the
                    // compiler from checking.
                    core::mem::forget(b.shared.replace(d.mem.claim()));
                    b.shared_start = d.head;
                    b.head = d.head;
                    b.tail = cap;
                    b.mac = NO_HEADER;
                    b.nh = NO_HEADER;
                    b.th = NO_HEADER;
                    b.anno = anno.clone();
                    dst.add(i).write(Packet {
                        b: ManuallyDrop::new(b),
                    });
                }
                free.set_len(from);
                out.set_len(out.len() + k);
            }
            k
        };
        for _ in made..n {
            let mut p = self.make_shared(d);
            p.set_timestamp(ts);
            out.push(p);
        }
    }
}

/// A packet on its way to another thread: the buffer, annotations and
/// header offsets, without the thread-local pool it came from. Made by
/// [`Packet::into_send`]; the receiving thread's [`Pool::adopt`] turns it
/// back into a packet (whose buffer then returns to that thread's pool).
pub struct SendPacket(Box<Buf>);

// SAFETY: the non-Send parts of a `Buf` are its `Rc` pool handle and its
// shared data (an `Rc`-like `SharedRef`), and a SendPacket's are always `None` (`into_send`
// clears them and nothing else makes one); the raw pointers point into its
// own storage, plain owned data.
unsafe impl Send for SendPacket {}

impl SendPacket {
    /// The packet's length in bytes.
    pub fn len(&self) -> usize {
        (self.0.tail - self.0.head) as usize
    }
    pub fn is_empty(&self) -> bool {
        self.0.tail == self.0.head
    }
}

/// A packet. Owned by exactly one element at a time; dropping it returns
/// its buffer to the pool it came from.
pub struct Packet {
    b: ManuallyDrop<Box<Buf>>,
}

impl Drop for Packet {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: `self.b` is never used again after this point: we are in
        // drop, and `into_inner`-style paths do not exist for Packet.
        let mut b = unsafe { ManuallyDrop::take(&mut self.b) };
        // release a shared buffer now, not when the buffer is reused
        b.shared = None;
        if let Some(pool) = &b.pool {
            let pool: *const PoolInner = Rc::as_ptr(pool);
            // SAFETY: the pool is alive for the rest of this function: `b`
            // holds an Rc to it until `b` is either dropped at the end of
            // this block or pushed into the pool's own free list, where its
            // Rc keeps the pool alive (the free list owns it). No `&mut`
            // to the pool exists: it is only reached through Rc.
            let pool = unsafe { &*pool };
            // SAFETY: the borrow ends with the statement (see `free`).
            let free = unsafe { pool.free() };
            if free.len() < pool.max_free {
                free.push(b);
            } else {
                pool_full(pool, b);
            }
        }
    }
}

/// Drops every packet in `v` (leaving it empty), with the per-packet work
/// inlined into one loop. Buffers of the first packet's pool go straight
/// into its free list (one length update for the batch) while it has
/// room for them all; the others are recycled one by one.
#[inline]
pub fn drop_all(v: &mut Vec<Packet>) {
    let n = v.len();
    let Some(first) = v.first() else { return };
    let Some(pool) = first.b.pool.as_ref().map(Rc::as_ptr) else {
        return drop_each(v);
    };
    // SAFETY: as in `Packet`'s `Drop`: the first buffer holds an Rc to
    // the pool until it is in the pool's own free list, which keeps it.
    let pool = unsafe { &*pool };
    // SAFETY: nothing in the loop below reaches this pool's free list
    // again: buffers of other pools go to theirs (`recycle`), and
    // releasing shared data frees memory only.
    let free = unsafe { pool.free() };
    if free.len() + n > pool.max_free {
        return drop_each(v);
    }
    free.reserve(n);
    let at = free.len();
    let mut k = 0;
    // SAFETY: `v`'s length is set to 0 first, so each of its `n` packets
    // is read (moved out) exactly once; `free` has room for `n` more
    // buffers (reserved above) and its length grows by the `k` written.
    // A panic (none is expected) would leak, never double-drop.
    unsafe {
        v.set_len(0);
        let src = v.as_ptr();
        let dst = free.as_mut_ptr().add(at);
        for i in 0..n {
            let mut me = ManuallyDrop::new(core::ptr::read(src.add(i)));
            let mut b = ManuallyDrop::take(&mut me.b);
            b.shared = None;
            if b.pool.as_ref().map(Rc::as_ptr) == Some(pool as *const PoolInner) {
                dst.add(k).write(b);
                k += 1;
            } else {
                recycle(b);
            }
        }
        free.set_len(at + k);
    }
}

/// [`drop_all`], one packet at a time.
#[cold]
#[inline(never)]
fn drop_each(v: &mut Vec<Packet>) {
    for p in v.drain(..) {
        let mut me = ManuallyDrop::new(p);
        // SAFETY: `me` is in ManuallyDrop, so Packet's Drop never runs for
        // it, and `me.b` is taken exactly once.
        let b = unsafe { ManuallyDrop::take(&mut me.b) };
        recycle(b);
    }
}

/// What dropping a packet does with its buffer: release any shared data
/// and return the buffer to its pool (or free it).
#[inline(always)]
fn recycle(mut b: Box<Buf>) {
    b.shared = None;
    if let Some(pool) = &b.pool {
        let pool: *const PoolInner = Rc::as_ptr(pool);
        // SAFETY: as in `Packet`'s `Drop`.
        let pool = unsafe { &*pool };
        // SAFETY: the borrow ends with the statement (see `free`).
        let free = unsafe { pool.free() };
        if free.len() < pool.max_free {
            free.push(b);
        } else {
            pool_full(pool, b);
        }
    }
}

/// A buffer comes back to a full pool: with a depot, hand it a batch of
/// spare buffers (for threads that run short); else free the buffer.
#[cold]
#[inline(never)]
fn pool_full(pool: &PoolInner, b: Box<Buf>) {
    if let Some(d) = &pool.depot {
        let mut out: Vec<SendPacket> = {
            // SAFETY: this borrow ends with the block and nothing in it
            // reaches the free list (the `pool = None` drops are of Rcs to
            // this pool, kept alive by `b`).
            let free = unsafe { pool.free() };
            let at = free.len() - DEPOT_BATCH.min(free.len());
            free.drain(at..)
                .map(|mut x| {
                    x.pool = None;
                    SendPacket(x)
                })
                .collect()
        };
        // SAFETY: the borrow ends with the statement (see `free`).
        unsafe { pool.free() }.push(b);
        d.give(&mut out);
    }
}

impl core::fmt::Debug for Packet {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "Packet(len={}, headroom={})",
            self.len(),
            self.headroom()
        )
    }
}

impl Packet {
    /// A packet outside any pool (tests, rare paths).
    pub fn from_slice(data: &[u8]) -> Packet {
        let mut b = Box::new(Buf::new(DEFAULT_HEADROOM + data.len(), None));
        b.head = DEFAULT_HEADROOM as u32;
        b.tail = (DEFAULT_HEADROOM + data.len()) as u32;
        b.mem_mut()[DEFAULT_HEADROOM..].copy_from_slice(data);
        Packet {
            b: ManuallyDrop::new(b),
        }
    }

    /// Whether the data is shared with other packets (read-only until
    /// written: see the module documentation).
    #[inline]
    pub fn is_shared(&self) -> bool {
        self.b.shared.is_some()
    }

    /// Gives the packet its own copy of shared data (Click's `uniqueify`);
    /// every writing accessor does this by itself.
    #[inline]
    pub fn unshare(&mut self) {
        if self.b.shared.is_some() {
            self.b.unshare();
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        (self.b.tail - self.b.head) as usize
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.b.tail == self.b.head
    }
    #[inline]
    pub fn headroom(&self) -> usize {
        self.b.head as usize
    }
    #[inline]
    pub fn tailroom(&self) -> usize {
        self.b.cap as usize - self.b.tail as usize
    }
    /// The packet's bytes.
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.b.mem()[self.b.head as usize..self.b.tail as usize]
    }
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        let (h, t) = (self.b.head as usize, self.b.tail as usize);
        &mut self.b.mem_mut()[h..t]
    }
    #[inline]
    pub fn anno(&self) -> &Anno {
        &self.b.anno
    }
    #[inline]
    pub fn anno_mut(&mut self) -> &mut Anno {
        &mut self.b.anno
    }
    #[inline]
    pub fn timestamp(&self) -> Timestamp {
        self.b.anno.timestamp
    }
    #[inline]
    pub fn set_timestamp(&mut self, t: Timestamp) {
        self.b.anno.timestamp = t;
    }

    /// Removes `n` bytes from the front (Click's `pull`). Returns false and
    /// leaves the packet alone if it is shorter than `n`.
    #[inline]
    pub fn pull(&mut self, n: usize) -> bool {
        if n > self.len() {
            return false;
        }
        self.b.head += n as u32;
        true
    }

    /// Adds `n` bytes at the front (Click's `push`), moving the data into a
    /// larger buffer when the headroom is short. The new bytes are zeroed.
    #[inline]
    pub fn push(&mut self, n: usize) {
        self.unshare();
        if n > self.headroom() {
            self.grow(n + DEFAULT_HEADROOM, 0);
        }
        self.b.head -= n as u32;
        let h = self.b.head as usize;
        self.b.mem_mut()[h..h + n].fill(0);
    }

    /// Adds `n` zero bytes at the end (Click's `put`).
    #[inline]
    pub fn put(&mut self, n: usize) {
        self.unshare();
        if n > self.tailroom() {
            self.grow(0, n);
        }
        let t = self.b.tail as usize;
        self.b.mem_mut()[t..t + n].fill(0);
        self.b.tail += n as u32;
    }

    /// Removes `n` bytes from the end (Click's `take`); saturates at zero.
    #[inline]
    pub fn take(&mut self, n: usize) {
        let n = n.min(self.len()) as u32;
        self.b.tail -= n;
    }

    /// Reallocates the buffer with at least `head` headroom and `tail`
    /// tailroom more than now. Header offsets move with the data.
    fn grow(&mut self, head: usize, tail: usize) {
        let old_head = self.b.head as usize;
        let new_head = old_head + head;
        let cap = self.b.cap as usize;
        let size = cap + head + tail;
        let mut mem = vec![0u8; size].into_boxed_slice();
        mem[head..head + cap].copy_from_slice(self.b.mem());
        let shift = |o: u32| if o == NO_HEADER { o } else { o + head as u32 };
        self.b.mac = shift(self.b.mac);
        self.b.nh = shift(self.b.nh);
        self.b.th = shift(self.b.th);
        self.b.tail += head as u32;
        self.b.head = new_head as u32;
        let own = NonNull::from(Box::leak(mem));
        // SAFETY: as in `Buf`'s `Drop`; `own` is replaced at once.
        drop(unsafe { Box::from_raw(self.b.own.as_ptr()) });
        self.b.own = own;
        self.b.shared = None;
        self.b.use_own();
        // A grown buffer no longer has the pool's size.
        self.b.pool = None;
    }

    /// Moves the data `delta` bytes (less than 8) later in its buffer,
    /// with its header annotations (Click's `shift_data` for a positive
    /// offset): the data's address afterwards is its address before plus
    /// `delta`, modulo 8. A buffer without the tailroom is replaced by a
    /// larger one, keeping that alignment.
    pub fn shift_data(&mut self, delta: usize) {
        let delta = delta & 7;
        if delta == 0 {
            return;
        }
        let want = (self.data().as_ptr() as usize + delta) & 7;
        // Moving the data writes the buffer: a packet sharing a source's
        // data gets its own copy first.
        self.unshare();
        if self.tailroom() < delta {
            self.grow(0, delta + 8);
        }
        let head = self.b.head as usize;
        let base = self.b.mem().as_ptr() as usize;
        // the first position at or after head + 1 with the wanted alignment
        let mut to = head + 1;
        while (base + to) & 7 != want {
            to += 1;
        }
        let by = to - head;
        let (h, t) = (head, self.b.tail as usize);
        self.b.mem_mut().copy_within(h..t, h + by);
        let shift = |o: u32| if o == NO_HEADER { o } else { o + by as u32 };
        self.b.mac = shift(self.b.mac);
        self.b.nh = shift(self.b.nh);
        self.b.th = shift(self.b.th);
        self.b.head += by as u32;
        self.b.tail += by as u32;
    }

    /// Sets the network header annotation at `off` bytes from the data
    /// start, leaving the transport header annotation alone (Click's
    /// `set_mac_header(p, len)` sets the network header after the MAC
    /// header this way).
    #[inline]
    pub fn set_mac_network_header(&mut self, off: usize) {
        self.b.nh = self.b.head + off as u32;
    }

    /// Detaches the packet from its (thread-local) pool so it can move to
    /// another thread; [`Pool::adopt`] makes it a packet again there.
    #[inline]
    pub fn into_send(self) -> SendPacket {
        let mut me = ManuallyDrop::new(self);
        // SAFETY: `me` is wrapped in ManuallyDrop, so Packet's Drop never
        // runs for it, and `me.b` is taken exactly once and not used again.
        let mut b = unsafe { ManuallyDrop::take(&mut me.b) };
        b.unshare();
        b.pool = None;
        SendPacket(b)
    }

    /// A copy of this packet (data and annotations) from `pool`.
    pub fn clone_in(&self, pool: &Pool) -> Packet {
        let mut p = pool.make(
            self.headroom(),
            self.data(),
            self.tailroom().min(POOL_BUFFER_SIZE),
        );
        // Offsets are absolute and the copy has the same headroom.
        p.b.mac = self.b.mac;
        p.b.nh = self.b.nh;
        p.b.th = self.b.th;
        p.b.anno = self.b.anno.clone();
        p
    }

    // ---- header annotations -------------------------------------------

    fn rel(&self, abs: u32) -> Option<isize> {
        if abs == NO_HEADER {
            None
        } else {
            Some(abs as isize - self.b.head as isize)
        }
    }

    /// Offset of the MAC header from the data start (may be negative).
    #[inline]
    pub fn mac_header_offset(&self) -> Option<isize> {
        self.rel(self.b.mac)
    }
    /// Offset of the network header from the data start (may be negative).
    #[inline]
    pub fn network_header_offset(&self) -> Option<isize> {
        self.rel(self.b.nh)
    }
    /// Offset of the transport header from the data start.
    #[inline]
    pub fn transport_header_offset(&self) -> Option<isize> {
        self.rel(self.b.th)
    }
    #[inline]
    pub fn has_network_header(&self) -> bool {
        self.b.nh != NO_HEADER
    }
    /// Sets the MAC header at `off` bytes from the data start.
    #[inline]
    pub fn set_mac_header(&mut self, off: usize) {
        self.b.mac = self.b.head + off as u32;
    }
    /// Sets the network header at `off` and the transport header `len`
    /// bytes after it (Click's `set_network_header(p, len)`).
    #[inline]
    pub fn set_network_header(&mut self, off: usize, len: usize) {
        self.b.nh = self.b.head + off as u32;
        self.b.th = self.b.nh + len as u32;
    }
    #[inline]
    pub fn set_transport_header(&mut self, off: usize) {
        self.b.th = self.b.head + off as u32;
    }
    pub fn clear_headers(&mut self) {
        self.b.mac = NO_HEADER;
        self.b.nh = NO_HEADER;
        self.b.th = NO_HEADER;
    }
    /// The bytes from the network header to the end of the packet, if the
    /// network header is set and lies inside the buffer.
    #[inline]
    pub fn network_header(&self) -> Option<&[u8]> {
        if self.b.nh == NO_HEADER || self.b.nh > self.b.tail {
            return None;
        }
        Some(&self.b.mem()[self.b.nh as usize..self.b.tail as usize])
    }
    #[inline]
    pub fn network_header_mut(&mut self) -> Option<&mut [u8]> {
        if self.b.nh == NO_HEADER || self.b.nh > self.b.tail {
            return None;
        }
        let (n, t) = (self.b.nh as usize, self.b.tail as usize);
        Some(&mut self.b.mem_mut()[n..t])
    }
    #[inline]
    pub fn transport_header(&self) -> Option<&[u8]> {
        if self.b.th == NO_HEADER || self.b.th > self.b.tail {
            return None;
        }
        Some(&self.b.mem()[self.b.th as usize..self.b.tail as usize])
    }
    #[inline]
    pub fn transport_header_mut(&mut self) -> Option<&mut [u8]> {
        if self.b.th == NO_HEADER || self.b.th > self.b.tail {
            return None;
        }
        let (n, t) = (self.b.th as usize, self.b.tail as usize);
        Some(&mut self.b.mem_mut()[n..t])
    }
    #[inline]
    pub fn mac_header(&self) -> Option<&[u8]> {
        if self.b.mac == NO_HEADER || self.b.mac > self.b.tail {
            return None;
        }
        Some(&self.b.mem()[self.b.mac as usize..self.b.tail as usize])
    }
    /// The network header as an IPv4 view, if the annotation is set and the
    /// 20-byte fixed header lies inside the packet (Click's `ip_header()`).
    /// Its fixed fields can be read without a panic; the options and payload
    /// need [`Ipv4Packet::check_header_len`] / [`Ipv4Packet::check_len`].
    #[inline]
    pub fn ip_header(&self) -> Option<Ipv4Packet<&[u8]>> {
        Ipv4Packet::new_fixed_checked(self.network_header()?).ok()
    }
    /// [`ip_header`](Self::ip_header), to rewrite the header in place.
    #[inline]
    pub fn ip_header_mut(&mut self) -> Option<Ipv4Packet<&mut [u8]>> {
        Ipv4Packet::new_fixed_checked(self.network_header_mut()?).ok()
    }
    /// Length of the network header (transport offset − network offset).
    pub fn network_header_length(&self) -> Option<usize> {
        if self.b.nh == NO_HEADER || self.b.th == NO_HEADER || self.b.th < self.b.nh {
            return None;
        }
        Some((self.b.th - self.b.nh) as usize)
    }
    /// Moves the data start to an absolute header offset previously
    /// recorded (used by Unstrip-style elements): `delta` bytes relative to
    /// the current start, negative to expose earlier bytes.
    pub fn shift_head(&mut self, delta: isize) -> bool {
        let nh = self.b.head as isize + delta;
        if nh < 0 || nh > self.b.tail as isize {
            return false;
        }
        self.b.head = nh as u32;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_cross_pools() {
        let a = Pool::new(4);
        let b = Pool::new(4);
        let mut p = a.make(DEFAULT_HEADROOM, &[9, 8, 7], 0);
        p.anno_mut().set_paint(5);
        let s = p.into_send();
        assert_eq!(s.len(), 3);
        let q = b.adopt(s);
        assert_eq!(q.data(), &[9, 8, 7]);
        assert_eq!(q.anno().paint(), 5);
        drop(q);
        assert_eq!(a.free_buffers(), 0);
        assert_eq!(b.free_buffers(), 1);
    }

    #[test]
    fn pools_trade_buffers_through_a_depot() {
        extern crate std;
        use alloc::sync::Arc;
        struct D(std::sync::Mutex<Vec<SendPacket>>);
        impl BufferDepot for D {
            fn take(&self, n: usize, out: &mut Vec<SendPacket>) {
                let mut v = self.0.lock().unwrap();
                let at = v.len() - n.min(v.len());
                out.extend(v.drain(at..));
            }
            fn give(&self, bufs: &mut Vec<SendPacket>) {
                self.0.lock().unwrap().append(bufs);
            }
        }
        let d = Arc::new(D(std::sync::Mutex::new(Vec::new())));
        let src = Pool::with_depot(0, Some(d.clone()));
        let dst = Pool::with_depot(0, Some(d.clone()));
        // packets made by `src` end in `dst` (as across threads)
        for _ in 0..10 {
            let batch: Vec<SendPacket> = (0..100)
                .map(|_| src.make(DEFAULT_HEADROOM, &[1; 60], 0).into_send())
                .collect();
            for sp in batch {
                drop(dst.adopt(sp));
            }
        }
        // after the first round trip `src` reuses what `dst` gave back
        assert!(src.buffers_created() < 400, "{}", src.buffers_created());
        assert_eq!(dst.buffers_created(), 0);
    }

    #[test]
    fn pool_recycles_buffers() {
        let pool = Pool::new(16);
        for _ in 0..100 {
            let p = pool.make(DEFAULT_HEADROOM, &[1, 2, 3], 0);
            assert_eq!(p.data(), &[1, 2, 3]);
        }
        assert_eq!(pool.buffers_created(), 1);
        assert_eq!(pool.free_buffers(), 1);
    }

    #[test]
    fn push_pull_put_take() {
        let pool = Pool::new(4);
        let mut p = pool.make(4, &[1, 2, 3, 4], 0);
        assert!(p.pull(2));
        assert_eq!(p.data(), &[3, 4]);
        assert!(!p.pull(3));
        p.push(2);
        assert_eq!(p.data(), &[0, 0, 3, 4]);
        p.push(10); // beyond headroom: grows
        assert_eq!(p.len(), 14);
        assert_eq!(&p.data()[12..], &[3, 4]);
        p.put(3);
        assert_eq!(p.len(), 17);
        p.take(100);
        assert!(p.is_empty());
    }

    #[test]
    fn headers_survive_strip_and_grow() {
        let pool = Pool::new(4);
        let mut p = pool.make(2, &[0u8; 40], 0);
        p.set_network_header(14, 20);
        assert!(p.pull(14));
        assert_eq!(p.network_header_offset(), Some(0));
        p.push(30);
        assert_eq!(p.network_header_offset(), Some(30));
        assert_eq!(p.network_header().unwrap().len(), 26);
        assert_eq!(p.transport_header().unwrap().len(), 6);
    }

    #[test]
    fn shared_data_is_copied_on_write() {
        let pool = Pool::new(8);
        let d = SharedData::new(DEFAULT_HEADROOM, &[1, 2, 3, 4, 5, 6]);
        let mut a = pool.make_shared(&d);
        let b = pool.make_shared(&d);
        assert!(a.is_shared() && b.is_shared());
        assert_eq!(a.data(), &[1, 2, 3, 4, 5, 6]);
        assert_eq!(a.headroom(), DEFAULT_HEADROOM);
        // reads, pulls, trims and annotations do not unshare
        a.set_network_header(2, 2);
        assert!(a.pull(1));
        a.take(1);
        a.anno_mut().set_paint(3);
        assert_eq!(a.data(), &[2, 3, 4, 5]);
        assert_eq!(a.network_header().unwrap(), &[3, 4, 5]);
        assert!(a.is_shared());
        // a write unshares, keeping offsets and annotations
        a.data_mut()[0] = 99;
        assert!(!a.is_shared());
        assert_eq!(a.data(), &[99, 3, 4, 5]);
        assert_eq!(a.network_header_offset(), Some(1));
        assert_eq!(a.anno().paint(), 3);
        assert!(a.tailroom() > 0);
        // nobody else saw it
        assert_eq!(b.data(), &[1, 2, 3, 4, 5, 6]);
        assert_eq!(d.data(), &[1, 2, 3, 4, 5, 6]);
        assert_eq!(pool.make_shared(&d).data(), &[1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn every_writer_unshares() {
        let pool = Pool::new(8);
        let orig = [
            0x45u8, 0, 0, 20, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        let d = SharedData::new(4, &orig);
        let writers: [fn(&mut Packet); 7] = [
            |p| p.data_mut()[1] = 7,
            |p| p.push(2),
            |p| p.push(10), // beyond the headroom
            |p| p.put(3),
            |p| {
                p.network_header_mut().unwrap()[8] = 1;
            },
            |p| {
                p.transport_header_mut().unwrap()[0] = 1;
            },
            |p| {
                p.ip_header_mut().unwrap().set_ttl(1);
            },
        ];
        for w in writers {
            let mut p = pool.make_shared(&d);
            p.set_network_header(0, 12);
            w(&mut p);
            assert!(!p.is_shared());
            let q = pool.make_shared(&d);
            assert_eq!(q.data(), &orig);
            assert_eq!(d.data(), &orig);
        }
        // a shared packet sent to another thread takes its data along
        let p = pool.make_shared(&d);
        let q = Pool::new(2).adopt(p.into_send());
        assert!(!q.is_shared());
        assert_eq!(q.data(), &orig);
        // a copy is a plain packet
        let c = pool.make_shared(&d).clone_in(&pool);
        assert!(!c.is_shared());
        assert_eq!(c.data(), &orig);
    }

    #[test]
    fn shared_batches_and_recycling() {
        let pool = Pool::new(8);
        let d = SharedData::new(DEFAULT_HEADROOM, &[7; 60]);
        // a dirty recycled buffer first
        let mut p = pool.make(3, &[1, 2, 3], 0);
        p.set_network_header(0, 1);
        p.anno_mut().set_paint(9);
        drop(p);
        let mut v = Vec::new();
        pool.make_shared_batch(&d, 5, Timestamp::from_nsec(42), &mut v);
        assert_eq!(v.len(), 5);
        for p in &v {
            assert!(p.is_shared());
            assert_eq!(p.data(), &[7; 60]);
            assert_eq!(p.headroom(), DEFAULT_HEADROOM);
            assert_eq!(p.timestamp(), Timestamp::from_nsec(42));
            assert_eq!(p.anno().paint(), 0);
            assert!(!p.has_network_header());
        }
        v[0].data_mut()[0] = 0;
        assert_eq!(v[1].data()[0], 7);
        drop_all(&mut v);
        assert!(v.is_empty());
        assert_eq!(pool.free_buffers(), 5);
        assert_eq!(pool.buffers_created(), 5);
    }

    #[test]
    fn large_shared_data_unshares_into_a_larger_buffer() {
        let pool = Pool::new(8);
        let big = vec![5u8; POOL_BUFFER_SIZE + 100];
        let d = SharedData::new(DEFAULT_HEADROOM, &big);
        let mut p = pool.make_shared(&d);
        p.data_mut()[0] = 1;
        assert_eq!(p.len(), big.len());
        assert_eq!(p.data()[0], 1);
        assert_eq!(&p.data()[1..], &big[1..]);
        assert_eq!(d.data(), &big[..]);
    }

    #[test]
    fn annotations() {
        let mut a = Anno::default();
        a.set_dst_ip(Ipv4Addr::new(10, 0, 0, 1));
        a.set_paint(7);
        a.set_vlan_tci(0x1234);
        assert_eq!(a.dst_ip(), Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(a.paint(), 7);
        assert_eq!(a.vlan_tci(), 0x1234);
        a.set_u8_at(100, 1); // out of range: ignored
        assert_eq!(a.u8_at(100), 0);
    }
}
