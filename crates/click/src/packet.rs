//! Packets: one buffer type with headroom and tailroom, Click's annotations,
//! and a recycling buffer pool so the hot path never allocates.
//!
//! Header positions (MAC, network, transport) are kept as absolute offsets
//! into the buffer, as Click keeps pointers: stripping the Ethernet header
//! leaves the network-header annotation where it was.

use crate::time::Timestamp;
use alloc::boxed::Box;
use alloc::rc::Rc;
use alloc::vec;
use alloc::vec::Vec;
use click_wire::Ipv4Packet;
use core::cell::RefCell;
use core::mem::ManuallyDrop;
use core::net::Ipv4Addr;

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
    pub fn get<const N: usize>(&self, off: usize) -> [u8; N] {
        let mut out = [0u8; N];
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.u8_at(off + i);
        }
        out
    }
    pub fn set(&mut self, off: usize, v: &[u8]) {
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

struct Buf {
    mem: Box<[u8]>,
    head: u32,
    tail: u32,
    mac: u32,
    nh: u32,
    th: u32,
    anno: Anno,
    pool: Option<Rc<PoolInner>>,
}

struct PoolInner {
    // Boxed so recycling a buffer moves a pointer, not the header.
    #[allow(clippy::vec_box)]
    free: RefCell<Vec<Box<Buf>>>,
    max_free: usize,
    created: core::cell::Cell<u64>,
    depot: Option<alloc::sync::Arc<dyn BufferDepot>>,
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
                free: RefCell::new(Vec::with_capacity(max_free.min(65536))),
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
        let mut free = self.inner.free.borrow_mut();
        for sp in got {
            let mut b = sp.0;
            b.pool = Some(self.inner.clone());
            free.push(b);
        }
        true
    }

    /// Number of buffers this pool ever allocated (for tests and stats).
    pub fn buffers_created(&self) -> u64 {
        self.inner.created.get()
    }

    /// Idle buffers held right now.
    pub fn free_buffers(&self) -> usize {
        self.inner.free.borrow().len()
    }

    fn get_buf(&self, need: usize) -> Box<Buf> {
        if need <= POOL_BUFFER_SIZE {
            if let Some(b) = self.inner.free.borrow_mut().pop() {
                return b;
            }
            if self.refill() {
                if let Some(b) = self.inner.free.borrow_mut().pop() {
                    return b;
                }
            }
        }
        self.inner.created.set(self.inner.created.get() + 1);
        let size = need.max(POOL_BUFFER_SIZE);
        Box::new(Buf {
            mem: vec![0u8; size].into_boxed_slice(),
            head: 0,
            tail: 0,
            mac: NO_HEADER,
            nh: NO_HEADER,
            th: NO_HEADER,
            anno: Anno::default(),
            pool: if size == POOL_BUFFER_SIZE {
                Some(self.inner.clone())
            } else {
                None
            },
        })
    }

    /// Makes a packet that crossed from another thread this pool's own:
    /// a buffer of the pool's size returns here when dropped.
    #[inline]
    pub fn adopt(&self, p: SendPacket) -> Packet {
        let mut b = p.0;
        if b.mem.len() == POOL_BUFFER_SIZE {
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

/// A packet on its way to another thread: the buffer, annotations and
/// header offsets, without the thread-local pool it came from. Made by
/// [`Packet::into_send`]; the receiving thread's [`Pool::adopt`] turns it
/// back into a packet (whose buffer then returns to that thread's pool).
pub struct SendPacket(Box<Buf>);

// SAFETY: the only non-Send part of a `Buf` is its `Rc` pool handle, and a
// SendPacket's is always `None` (`into_send` clears it and nothing else
// makes one); the rest is plain owned data.
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
    fn drop(&mut self) {
        // SAFETY: `self.b` is never used again after this point: we are in
        // drop, and `into_inner`-style paths do not exist for Packet.
        let b = unsafe { ManuallyDrop::take(&mut self.b) };
        if let Some(pool) = &b.pool {
            let pool: *const PoolInner = Rc::as_ptr(pool);
            // SAFETY: the pool is alive for the rest of this function: `b`
            // holds an Rc to it until `b` is either dropped at the end of
            // this block or pushed into the pool's own free list, where its
            // Rc keeps the pool alive (the free list owns it). No `&mut`
            // to the pool exists: it is only reached through Rc.
            let pool = unsafe { &*pool };
            let mut free = pool.free.borrow_mut();
            if free.len() < pool.max_free {
                free.push(b);
            } else if let Some(d) = &pool.depot {
                // full: hand a batch to the threads that run short
                let at = free.len() - DEPOT_BATCH.min(free.len());
                let mut out: Vec<SendPacket> = free
                    .drain(at..)
                    .map(|mut x| {
                        x.pool = None;
                        SendPacket(x)
                    })
                    .collect();
                free.push(b);
                drop(free);
                d.give(&mut out);
            }
        }
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
        let mut b = Box::new(Buf {
            mem: vec![0u8; DEFAULT_HEADROOM + data.len()].into_boxed_slice(),
            head: DEFAULT_HEADROOM as u32,
            tail: (DEFAULT_HEADROOM + data.len()) as u32,
            mac: NO_HEADER,
            nh: NO_HEADER,
            th: NO_HEADER,
            anno: Anno::default(),
            pool: None,
        });
        b.mem[DEFAULT_HEADROOM..].copy_from_slice(data);
        Packet {
            b: ManuallyDrop::new(b),
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
        self.b.mem.len() - self.b.tail as usize
    }
    /// The packet's bytes.
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.b.mem[self.b.head as usize..self.b.tail as usize]
    }
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        let (h, t) = (self.b.head as usize, self.b.tail as usize);
        &mut self.b.mem[h..t]
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
        if n > self.headroom() {
            self.grow(n + DEFAULT_HEADROOM, 0);
        }
        self.b.head -= n as u32;
        let h = self.b.head as usize;
        self.b.mem[h..h + n].fill(0);
    }

    /// Adds `n` zero bytes at the end (Click's `put`).
    #[inline]
    pub fn put(&mut self, n: usize) {
        if n > self.tailroom() {
            self.grow(0, n);
        }
        let t = self.b.tail as usize;
        self.b.mem[t..t + n].fill(0);
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
        let size = self.b.mem.len() + head + tail;
        let mut mem = vec![0u8; size].into_boxed_slice();
        mem[head..head + self.b.mem.len()].copy_from_slice(&self.b.mem);
        let shift = |o: u32| if o == NO_HEADER { o } else { o + head as u32 };
        self.b.mac = shift(self.b.mac);
        self.b.nh = shift(self.b.nh);
        self.b.th = shift(self.b.th);
        self.b.tail += head as u32;
        self.b.head = new_head as u32;
        self.b.mem = mem;
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
        if self.tailroom() < delta {
            self.grow(0, delta + 8);
        }
        let head = self.b.head as usize;
        let base = self.b.mem.as_ptr() as usize;
        // the first position at or after head + 1 with the wanted alignment
        let mut to = head + 1;
        while (base + to) & 7 != want {
            to += 1;
        }
        let by = to - head;
        let (h, t) = (head, self.b.tail as usize);
        self.b.mem.copy_within(h..t, h + by);
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
        Some(&self.b.mem[self.b.nh as usize..self.b.tail as usize])
    }
    #[inline]
    pub fn network_header_mut(&mut self) -> Option<&mut [u8]> {
        if self.b.nh == NO_HEADER || self.b.nh > self.b.tail {
            return None;
        }
        let (n, t) = (self.b.nh as usize, self.b.tail as usize);
        Some(&mut self.b.mem[n..t])
    }
    #[inline]
    pub fn transport_header(&self) -> Option<&[u8]> {
        if self.b.th == NO_HEADER || self.b.th > self.b.tail {
            return None;
        }
        Some(&self.b.mem[self.b.th as usize..self.b.tail as usize])
    }
    #[inline]
    pub fn transport_header_mut(&mut self) -> Option<&mut [u8]> {
        if self.b.th == NO_HEADER || self.b.th > self.b.tail {
            return None;
        }
        let (n, t) = (self.b.th as usize, self.b.tail as usize);
        Some(&mut self.b.mem[n..t])
    }
    #[inline]
    pub fn mac_header(&self) -> Option<&[u8]> {
        if self.b.mac == NO_HEADER || self.b.mac > self.b.tail {
            return None;
        }
        Some(&self.b.mem[self.b.mac as usize..self.b.tail as usize])
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
