//! The snapshot file: a paused VM's whole state, to restore it here or on
//! another host (see [`crate::Vm::snapshot`] and [`crate::Vm::restore`]).
//!
//! Everything an instance is (its configuration, every element's state:
//! counters, queues, NAT mappings, ARP tables) lives in guest RAM, so a
//! snapshot is the guest's RAM, its vNIC regions and its vCPU's registers.
//! The guest is built soft-float (`x86_64-unknown-none`: no x87/SSE state),
//! has no IDT, no interrupt controller and no MSRs of its own beyond the
//! TSC, which is re-derived on restore from the boot information so that
//! the guest's clock reads the wall clock again (timers due meanwhile fire
//! at once; none is lost or stuck).
//!
//! ```text
//! magic "CLICKOS-SNAPSHOT" | version u32 | flags u32 | body length u64
//! body:
//!   guest image id u64 | TSC kHz u64 | taken (ns since the epoch) i64 | id u32
//!   memory u64 | vNICs u32 × (slots u32, buf size u32, MAC 6 bytes, region size u64)
//!   kvm_regs (length u32, bytes) | kvm_sregs (length u32, bytes)
//!   note (length u32, bytes: the caller's; the instance layer's state)
//!   RAM pages | each vNIC's pages
//! checksum u64 over everything before it
//! ```
//! Pages are runs `(first page u32, count u32, count × 4096 bytes)` ended by
//! first page `u32::MAX`. RAM pages that are zero, and pages of the image
//! range equal to the guest image, are left out (the image is mapped again
//! on restore, so the snapshot names the image it needs).

use clickos_ring::layout::PAGE_SIZE;

pub const MAGIC: &[u8; 16] = b"CLICKOS-SNAPSHOT";
pub const VERSION: u32 = 1;
/// Header flag: the first part of a live migration (pre-copy), taken
/// while the guest ran: its RAM and vNIC pages as they were read, no
/// registers. Not resumable alone.
pub const FLAG_BASE: u32 = 1;
/// Header flag: the second part of a live migration, taken paused: the
/// registers and only the pages that differ from the base it follows
/// (zero pages included; a page left out is the base's).
pub const FLAG_DELTA: u32 = 2;
const END: u32 = u32::MAX;
const PAGE: usize = PAGE_SIZE as usize;

/// One vNIC as the snapshot describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapVnic {
    pub slots: u32,
    pub buf_size: u32,
    pub mac: [u8; 6],
    pub size: u64,
}

/// A parsed, checked snapshot (nothing created yet).
pub struct Snapshot {
    /// 0 for a whole snapshot, else [`FLAG_BASE`] or [`FLAG_DELTA`].
    pub flags: u32,
    pub image_id: u64,
    pub tsc_khz: u64,
    pub taken_ns: i64,
    pub id: u32,
    pub memory: u64,
    pub vnics: Vec<SnapVnic>,
    pub regs: kvm_bindings::kvm_regs,
    pub sregs: kvm_bindings::kvm_sregs,
    pub note: Vec<u8>,
    /// (first page, bytes) runs of RAM.
    pub ram: Vec<(u32, Vec<u8>)>,
    pub vnic_pages: Vec<Vec<(u32, Vec<u8>)>>,
}

impl Snapshot {
    /// The caller's note (for `clickos-instance`, its own state and the
    /// daemon's record).
    pub fn note(&self) -> &[u8] {
        &self.note
    }
    /// Guest RAM in bytes.
    pub fn memory(&self) -> u64 {
        self.memory
    }
    /// The vNICs: (slots, buffer size, MAC).
    pub fn vnics(&self) -> Vec<(u32, u32, [u8; 6])> {
        self.vnics
            .iter()
            .map(|v| (v.slots, v.buf_size, v.mac))
            .collect()
    }
    /// The instance id the snapshot was taken with.
    pub fn id(&self) -> u32 {
        self.id
    }
}

/// A fast checksum (four independent multiply-rotate lanes over 64-bit
/// words): catches truncation, bit flips and edits, not an adversary.
pub fn checksum(b: &[u8]) -> u64 {
    const K: [u64; 4] = [
        0x9E37_79B9_7F4A_7C15,
        0xC2B2_AE3D_27D4_EB4F,
        0x1656_67B1_9E37_79F9,
        0x85EB_CA77_C2B2_AE63,
    ];
    let mut h = [
        0x243F_6A88_85A3_08D3u64,
        0x1319_8A2E_0370_7344,
        0xA409_3822_299F_31D0,
        0x082E_FA98_EC4E_6C89,
    ];
    let blocks = b.chunks_exact(32);
    let rest = blocks.remainder();
    for c in blocks {
        for i in 0..4 {
            let w = u64::from_le_bytes(c[i * 8..i * 8 + 8].try_into().unwrap());
            h[i] = (h[i] ^ w).wrapping_mul(K[i]).rotate_left(31);
        }
    }
    let mut t = b.len() as u64;
    for (i, &x) in rest.iter().enumerate() {
        t ^= (x as u64) << ((i % 8) * 8);
        if i % 8 == 7 {
            t = t.wrapping_mul(K[0]).rotate_left(27);
        }
    }
    let mut r = t.wrapping_mul(K[1]);
    for (i, v) in h.iter().enumerate() {
        r = (r ^ v.wrapping_mul(K[i]))
            .rotate_left(23)
            .wrapping_mul(K[3]);
    }
    r ^ (r >> 29)
}

/// Writes the body of a snapshot.
pub struct Writer {
    pub buf: Vec<u8>,
}

impl Default for Writer {
    fn default() -> Self {
        Self::new()
    }
}

impl Writer {
    pub fn new() -> Writer {
        Self::with_flags(0)
    }
    /// A writer of a migration part ([`FLAG_BASE`], [`FLAG_DELTA`]).
    pub fn with_flags(flags: u32) -> Writer {
        let mut buf = Vec::with_capacity(1 << 20);
        buf.extend_from_slice(MAGIC);
        buf.extend_from_slice(&VERSION.to_le_bytes());
        buf.extend_from_slice(&flags.to_le_bytes());
        buf.extend_from_slice(&0u64.to_le_bytes()); // body length, patched
        Writer { buf }
    }
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.buf.extend_from_slice(b);
    }
    /// Appends the pages of `mem` that `keep(page, bytes)` selects, as runs.
    pub fn pages(&mut self, mem: &[u8], mut keep: impl FnMut(usize, &[u8]) -> bool) {
        let n = mem.len() / PAGE;
        let mut p = 0;
        while p < n {
            if !keep(p, &mem[p * PAGE..(p + 1) * PAGE]) {
                p += 1;
                continue;
            }
            let start = p;
            p += 1;
            while p < n && keep(p, &mem[p * PAGE..(p + 1) * PAGE]) {
                p += 1;
            }
            self.u32(start as u32);
            self.u32((p - start) as u32);
            self.buf.extend_from_slice(&mem[start * PAGE..p * PAGE]);
        }
        self.u32(END);
    }
    /// Patches the length and appends the checksum.
    pub fn finish(mut self) -> Vec<u8> {
        let body = (self.buf.len() - 32) as u64;
        self.buf[24..32].copy_from_slice(&body.to_le_bytes());
        let sum = checksum(&self.buf);
        self.u64(sum);
        self.buf
    }
}

/// Whether a page is all zeros.
pub fn is_zero(p: &[u8]) -> bool {
    let (pre, words, post) = {
        // SAFETY: u64 has no invalid bit patterns; align_to splits off any
        // unaligned ends.
        unsafe { p.align_to::<u64>() }
    };
    pre.iter().all(|&b| b == 0) && words.iter().all(|&w| w == 0) && post.iter().all(|&b| b == 0)
}

/// Reads a body, every read bounds-checked.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or("snapshot is malformed (a field runs past its end)")?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn pages(&mut self, limit: u64) -> Result<Vec<(u32, Vec<u8>)>, String> {
        let mut out = Vec::new();
        let pages = limit / PAGE_SIZE;
        loop {
            let first = self.u32()?;
            if first == END {
                return Ok(out);
            }
            let n = self.u32()?;
            if n == 0 || first as u64 + n as u64 > pages {
                return Err("snapshot is malformed (pages outside the memory)".into());
            }
            let data = self.take(n as usize * PAGE)?;
            out.push((first, data.to_vec()));
        }
    }
}

/// A POD kvm structure as bytes.
pub fn pod_bytes<T: Copy>(t: &T) -> &[u8] {
    // SAFETY: used only for kvm-bindings register structures, plain C
    // structures of integers filled in whole by the kernel (padding
    // included), read as bytes for their size.
    unsafe { std::slice::from_raw_parts(t as *const T as *const u8, std::mem::size_of::<T>()) }
}

fn pod_from<T: Copy + Default>(b: &[u8], what: &str) -> Result<T, String> {
    if b.len() != std::mem::size_of::<T>() {
        return Err(format!(
            "snapshot is malformed ({what}: {} bytes, expected {})",
            b.len(),
            std::mem::size_of::<T>()
        ));
    }
    let mut t = T::default();
    // SAFETY: T is a kvm-bindings register structure of plain integers
    // (any bit pattern is a value); exactly size_of::<T>() bytes are copied.
    unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), &mut t as *mut T as *mut u8, b.len()) };
    Ok(t)
}

/// Checks and parses a snapshot file's bytes. Nothing is created: a bad
/// file is refused here, with why.
pub fn parse(b: &[u8]) -> Result<Snapshot, String> {
    if b.len() < 16 || &b[..16] != MAGIC {
        return Err("not a ClickOS snapshot (bad magic)".into());
    }
    if b.len() < 32 {
        return Err("snapshot is truncated (no header)".into());
    }
    let version = u32::from_le_bytes(b[16..20].try_into().unwrap());
    if version != VERSION {
        return Err(format!(
            "snapshot version {version} is not supported (this clickos reads version {VERSION})"
        ));
    }
    let flags = u32::from_le_bytes(b[20..24].try_into().unwrap());
    if flags > FLAG_DELTA {
        return Err(format!("snapshot is malformed (flags {flags:#x})"));
    }
    let body = u64::from_le_bytes(b[24..32].try_into().unwrap());
    let want = 32u64.saturating_add(body).saturating_add(8);
    if (b.len() as u64) < want {
        return Err(format!(
            "snapshot is truncated ({} of {want} bytes)",
            b.len()
        ));
    }
    if (b.len() as u64) > want {
        return Err(format!(
            "snapshot has {} bytes after its end",
            b.len() as u64 - want
        ));
    }
    let end = 32 + body as usize;
    let sum = u64::from_le_bytes(b[end..end + 8].try_into().unwrap());
    if checksum(&b[..end]) != sum {
        return Err("snapshot is corrupt (checksum mismatch)".into());
    }
    let mut r = Reader {
        b: &b[..end],
        at: 32,
    };
    let image_id = r.u64()?;
    let tsc_khz = r.u64()?;
    let taken_ns = r.u64()? as i64;
    let id = r.u32()?;
    let memory = r.u64()?;
    let n = r.u32()? as usize;
    if n > clickos_ring::layout::MAX_VNICS {
        return Err(format!("snapshot is malformed ({n} vNICs)"));
    }
    let mut vnics = Vec::new();
    for _ in 0..n {
        let slots = r.u32()?;
        let buf_size = r.u32()?;
        let mac: [u8; 6] = r.take(6)?.try_into().unwrap();
        let size = r.u64()?;
        vnics.push(SnapVnic {
            slots,
            buf_size,
            mac,
            size,
        });
    }
    let regs = pod_from(r.bytes()?, "registers")?;
    let sregs = pod_from(r.bytes()?, "segment registers")?;
    let note = r.bytes()?.to_vec();
    let ram = r.pages(memory)?;
    let mut vnic_pages = Vec::new();
    for v in &vnics {
        vnic_pages.push(r.pages(v.size)?);
    }
    if r.at != end {
        return Err("snapshot is malformed (trailing bytes in its body)".into());
    }
    Ok(Snapshot {
        flags,
        image_id,
        tsc_khz,
        taken_ns,
        id,
        memory,
        vnics,
        regs,
        sregs,
        note,
        ram,
        vnic_pages,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut w = Writer::new();
        w.u64(7);
        w.u64(2_000_000);
        w.u64(123);
        w.u32(1);
        w.u64(4 * PAGE_SIZE);
        w.u32(0);
        w.bytes(pod_bytes(&kvm_bindings::kvm_regs::default()));
        w.bytes(pod_bytes(&kvm_bindings::kvm_sregs::default()));
        w.bytes(b"note");
        let mut mem = vec![0u8; 4 * PAGE];
        mem[PAGE + 5] = 9;
        mem[3 * PAGE] = 1;
        w.pages(&mem, |_, p| !is_zero(p));
        w.finish()
    }

    #[test]
    fn a_snapshot_round_trips() {
        let s = parse(&sample()).unwrap();
        assert_eq!(s.note(), b"note");
        assert_eq!(s.ram.len(), 2);
        assert_eq!(s.ram[0].0, 1);
        assert_eq!(s.ram[0].1[5], 9);
        assert_eq!(s.ram[1].0, 3);
    }

    #[test]
    fn damaged_snapshots_are_refused_with_why() {
        let good = sample();
        let err = |b: &[u8]| parse(b).err().unwrap();
        assert!(err(b"hello").contains("not a ClickOS snapshot"));
        assert!(err(&good[..good.len() - 1]).contains("truncated"));
        assert!(err(&good[..40]).contains("truncated"));
        let mut flip = good.clone();
        flip[100] ^= 1;
        assert!(err(&flip).contains("checksum"));
        let mut v2 = good.clone();
        v2[16] = 2;
        assert!(err(&v2).contains("version 2 is not supported"));
        let mut long = good.clone();
        long.push(0);
        assert!(err(&long).contains("after its end"));
    }
}
