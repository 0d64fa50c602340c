//! The guest's initial state: page tables, GDT, segment and general
//! registers for a direct ring-3 entry (see `shared/MICROVM.md` §4).

use crate::image::Segment;
use clickos_ring::layout::*;
use kvm_bindings::{kvm_regs, kvm_segment, kvm_sregs};

const P: u64 = 1;
const RW: u64 = 2;
const US: u64 = 4;
const A: u64 = 0x20;
const D: u64 = 0x40;
const PS: u64 = 0x80;
const NX: u64 = 1 << 63;
const TWO_MB: u64 = 2 << 20;
/// Page-table pages: PML4, PDPT, PD for 0–1 GiB, PD for 1–2 GiB, then
/// 4 KiB page tables up to the data area. (The layout reserves 16 KiB at
/// PAGE_TABLE_GPA; the pages up to DATA_OFF are otherwise unused.)
const PT_LIMIT: u64 = DATA_OFF;
/// The control region (GPA 0–2 MiB) is aliased at this non-null address so
/// the runtime never offsets a null pointer: PD(1–2 GiB)[511] points to the
/// page table of GPA 0–2 MiB.
pub const CONTROL_ALIAS: u64 = 0x7FE0_0000;

/// Where things are in guest RAM.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub mem: u64,
    pub image_end: u64,
    pub heap_start: u64,
    pub heap_size: u64,
    pub guard: u64,
    pub stack_top: u64,
}

impl Plan {
    pub fn new(mem: u64, image_span: u64) -> Result<Plan, String> {
        let image_end = IMAGE_GPA + image_span;
        let guard = mem
            .checked_sub(STACK_SIZE + PAGE_SIZE)
            .ok_or("guest memory too small")?;
        if guard < image_end + (1 << 20) {
            return Err(format!(
                "guest memory {} KiB too small: the image needs {} KiB plus at least 1 MiB of heap and {} KiB of stack",
                mem >> 10,
                image_end >> 10,
                (STACK_SIZE + PAGE_SIZE) >> 10
            ));
        }
        Ok(Plan {
            mem,
            image_end,
            heap_start: image_end,
            heap_size: guard - image_end,
            guard,
            stack_top: mem,
        })
    }

    /// Leaf flags of the 4 KiB page at `gpa` (< mem), 0 = not present.
    fn page(&self, gpa: u64, segs: &[Segment]) -> u64 {
        let ro = P | US | A | NX;
        let rw = P | RW | US | A | D | NX;
        match gpa {
            0 => 0,
            BOOTINFO_OFF => ro,
            MAILBOX_OFF | CONSOLE_OFF => rw,
            GDT_GPA => P | A | NX,
            g if (PAGE_TABLE_GPA..PT_LIMIT).contains(&g) => P | RW | A | D | NX,
            g if g < DATA_OFF => 0,
            g if g < IMAGE_GPA => rw,
            g if g < self.image_end => {
                segs.iter()
                    .find(|s| (s.start..s.end).contains(&g))
                    .map_or(0, |s| match (s.write, s.exec) {
                        (true, _) => rw,
                        (false, true) => P | US | A,
                        (false, false) => ro,
                    })
            }
            g if g == self.guard => 0,
            _ => rw,
        }
    }
}

/// Writes the page tables into guest RAM (`ram` = host mapping of GPA 0).
/// vNIC regions are mapped read-write with 2 MiB pages.
///
/// # Safety
/// `ram` must map at least `PT_LIMIT` bytes of guest RAM.
pub unsafe fn write_page_tables(
    ram: *mut u8,
    plan: &Plan,
    segs: &[Segment],
    vnics: &[(u64, u64)],
) -> Result<(), String> {
    let table = |gpa: u64| -> *mut u64 { ram.wrapping_add(gpa as usize) as *mut u64 };
    let pml4 = PAGE_TABLE_GPA;
    let pdpt = pml4 + PAGE_SIZE;
    let pd0 = pdpt + PAGE_SIZE;
    let pd1 = pd0 + PAGE_SIZE;
    let mut next_pt = pd1 + PAGE_SIZE;
    let up = P | RW | US | A;
    // SAFETY (all writes below): every table lies in [PAGE_TABLE_GPA,
    // PT_LIMIT), inside the RAM mapping (caller's contract); indices < 512.
    unsafe {
        std::ptr::write_bytes(
            table(pml4) as *mut u8,
            0,
            (PT_LIMIT - PAGE_TABLE_GPA) as usize,
        );
        *table(pml4) = pdpt | up;
        *table(pdpt) = pd0 | up;
        *table(pdpt).add(1) = pd1 | up;
        let mut pt0 = 0;
        let mut region = 0;
        while region < plan.mem {
            let flags: Vec<u64> = (0..512)
                .map(|i| {
                    let g = region + i * PAGE_SIZE;
                    if g < plan.mem {
                        plan.page(g, segs)
                    } else {
                        0
                    }
                })
                .collect();
            let pde = if flags.iter().all(|&f| f == flags[0]) && flags[0] != 0 {
                region | flags[0] | PS
            } else if flags.iter().all(|&f| f == 0) {
                0
            } else {
                if next_pt >= PT_LIMIT {
                    return Err("guest page tables do not fit (image too large?)".into());
                }
                let pt = next_pt;
                next_pt += PAGE_SIZE;
                for (i, f) in flags.iter().enumerate() {
                    if *f != 0 {
                        *table(pt).add(i) = (region + i as u64 * PAGE_SIZE) | f;
                    }
                }
                if region == 0 {
                    pt0 = pt;
                }
                pt | up
            };
            *table(pd0).add((region / TWO_MB) as usize) = pde;
            region += TWO_MB;
        }
        if pt0 == 0 {
            return Err("guest page tables: no page table for the control region".into());
        }
        *table(pd1).add(511) = pt0 | up;
        for &(gpa, size) in vnics {
            let mut g = gpa;
            while g < gpa + size {
                let i = ((g - (1 << 30)) / TWO_MB) as usize;
                if i >= 511 {
                    return Err("vNIC region outside the mapped range".into());
                }
                *table(pd1).add(i) = (g & !(TWO_MB - 1)) | P | RW | US | A | D | NX | PS;
                g = (g & !(TWO_MB - 1)) + TWO_MB;
            }
        }
    }
    Ok(())
}

/// The TSS (in the GDT page): the guest runs with IOPL 0 (see [`regs`]),
/// so the hypercall ports are opened through the TSS I/O permission
/// bitmap, which the CPU (and PVM's `out` emulation: under PVM, RFLAGS.IOPL
/// would not survive the first exit anyway) consults for `out` at CPL 3.
/// Only the hypercall ports are allowed.
const TSS_OFF: u64 = 0x80;
const IOMAP_OFF: u64 = 104;
/// A 4-byte `out` to port P needs ports P..P+3 allowed, so the bitmap
/// opens 0x500..=0x508 (LAST + 3); then comes the terminating 0xFF byte.
const IO_LAST: u64 = port::LAST as u64 + 3;
const IOMAP_LEN: u64 = IO_LAST / 8 + 2;
pub const TSS_LIMIT: u64 = IOMAP_OFF + IOMAP_LEN - 1;

/// Writes the GDT (null, code64/data DPL0, code64/data DPL3, 64-bit TSS)
/// and the TSS at GDT_GPA.
///
/// # Safety
/// `ram` must map the GDT page.
pub unsafe fn write_gdt(ram: *mut u8) {
    let tss = GDT_GPA + TSS_OFF;
    let tss_lo = TSS_LIMIT
        | ((tss & 0xFF_FFFF) << 16)
        | (0x8B << 40) // present, type 11 = busy 64-bit TSS
        | (((tss >> 24) & 0xFF) << 56);
    let tss_hi = tss >> 32;
    let gdt: [u64; 7] = [
        0,
        0x00AF_9B00_0000_FFFF,
        0x00CF_9300_0000_FFFF,
        0x00AF_FB00_0000_FFFF,
        0x00CF_F300_0000_FFFF,
        tss_lo,
        tss_hi,
    ];
    let mut iomap = [0xFFu8; IOMAP_LEN as usize];
    for p in port::FIRST as usize..=IO_LAST as usize {
        iomap[p / 8] &= !(1 << (p % 8));
    }
    const _: () = assert!(TSS_OFF + TSS_LIMIT < PAGE_SIZE);
    // SAFETY: the GDT page is in the mapping (caller's contract); the TSS
    // and its bitmap fit the same page (asserted above).
    unsafe {
        let p = ram.add(GDT_GPA as usize);
        std::ptr::write_bytes(p, 0, PAGE_SIZE as usize);
        std::ptr::copy_nonoverlapping(gdt.as_ptr() as *const u8, p, 7 * 8);
        let t = p.add(TSS_OFF as usize);
        std::ptr::write_unaligned(t.add(102) as *mut u16, IOMAP_OFF as u16);
        std::ptr::copy_nonoverlapping(iomap.as_ptr(), t.add(IOMAP_OFF as usize), iomap.len());
    }
}

pub const GDT_LIMIT: u16 = 7 * 8 - 1;

fn seg(selector: u16, code: bool) -> kvm_segment {
    kvm_segment {
        base: 0,
        limit: 0xFFFF_FFFF,
        selector,
        type_: if code { 0xB } else { 0x3 },
        present: 1,
        dpl: 3,
        db: if code { 0 } else { 1 },
        s: 1,
        l: if code { 1 } else { 0 },
        g: 1,
        avl: 0,
        unusable: 0,
        padding: 0,
    }
}

/// Ring-3 long mode, paging on, no IDT.
pub fn sregs(mut s: kvm_sregs) -> kvm_sregs {
    s.cs = seg(0x1B, true);
    let d = seg(0x23, false);
    s.ss = d;
    s.ds = d;
    s.es = d;
    s.fs = d;
    s.gs = d;
    s.tr = kvm_segment {
        base: GDT_GPA + TSS_OFF,
        limit: TSS_LIMIT as u32,
        selector: 0x28,
        type_: 0xB,
        present: 1,
        dpl: 0,
        db: 0,
        s: 0,
        l: 0,
        g: 0,
        avl: 0,
        unusable: 0,
        padding: 0,
    };
    s.ldt = kvm_segment {
        unusable: 1,
        ..Default::default()
    };
    s.gdt.base = GDT_GPA;
    s.gdt.limit = GDT_LIMIT;
    s.idt.base = 0;
    s.idt.limit = 0;
    // PE | MP | ET | NE | WP | PG
    s.cr0 = 0x1 | 0x2 | 0x10 | 0x20 | 0x1_0000 | 0x8000_0000;
    s.cr3 = PAGE_TABLE_GPA;
    // PAE | OSFXSR | OSXMMEXCPT
    s.cr4 = 0x20 | 0x200 | 0x400;
    // LME | LMA | NXE
    s.efer = 0x100 | 0x400 | 0x800;
    s
}

/// RIP at the entry point, RSP at the stack top, RDI = the boot
/// information; RFLAGS = 0x2 (IOPL 0, interrupts off). IOPL 3 would let
/// the guest reach *every* port wherever RFLAGS survives (bare-metal
/// VT-x/SVM); the hypercall ports are opened by the TSS I/O permission
/// bitmap ([`write_gdt`]) instead, which both PVM and hardware consult.
pub fn regs(entry: u64, stack_top: u64) -> kvm_regs {
    kvm_regs {
        rip: entry,
        rsp: stack_top,
        rdi: BOOTINFO_OFF,
        rflags: 0x2,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// IOPL 3 would let the guest reach every port where RFLAGS survives
    /// (bare-metal VT-x/SVM); the hypercall ports are opened by the TSS
    /// I/O permission bitmap instead, so the guest starts with IOPL 0 and
    /// interrupts off: only the reserved bit 1 set.
    #[test]
    fn the_guest_starts_with_iopl_0() {
        let r = regs(IMAGE_GPA, 8 << 20);
        assert_eq!(r.rflags, 0x2, "RFLAGS {:#x}", r.rflags);
        assert_eq!(r.rflags & 0x3000, 0, "IOPL");
        assert_eq!((r.rip, r.rsp, r.rdi), (IMAGE_GPA, 8 << 20, BOOTINFO_OFF));
    }

    /// The TSS bitmap opens exactly the hypercall ports (a 4-byte `out`
    /// to port P needs P..P+3), and nothing below or above them.
    #[test]
    fn the_io_bitmap_opens_only_the_hypercall_ports() {
        let mut page = vec![0u8; 2 * PAGE_SIZE as usize + GDT_GPA as usize];
        // SAFETY: `page` covers the GDT page.
        unsafe { write_gdt(page.as_mut_ptr()) };
        let tss = (GDT_GPA + TSS_OFF) as usize;
        let base = u16::from_le_bytes([page[tss + 102], page[tss + 103]]) as usize;
        let open = |p: usize| page[tss + base + p / 8] & (1 << (p % 8)) == 0;
        for p in 0..=(TSS_LIMIT as usize - base - 1) * 8 + 7 {
            let want = (port::FIRST as usize..=IO_LAST as usize).contains(&p);
            assert_eq!(open(p), want, "port {p:#x}");
        }
        assert_eq!(page[tss + TSS_LIMIT as usize], 0xFF, "terminating byte");
    }
}
