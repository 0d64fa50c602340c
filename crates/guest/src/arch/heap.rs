//! The guest's global allocator: size classes with free lists for small
//! blocks (≤ 2 KiB), a binary buddy allocator over 4 KiB pages for
//! everything else (and for the small classes' pages).
//!
//! * Small: 24 classes (16 … 2048 bytes); a free block goes back on its
//!   class's list and is reused by the next allocation of that class. Each
//!   class carves fresh pages lazily (a bump pointer within its current
//!   page), so memory is only touched when it is used.
//! * Large: buddy blocks of 2^k pages with coalescing on free, so
//!   configurations can be replaced forever without fragmenting the heap.
//!   The buddy metadata lives out of band (a per-page order byte and
//!   free-list links at the start of the heap), so free memory is never
//!   written and stays untouched by the host's page accounting.
//!
//! The guest is single-threaded (one vCPU, no interrupts), so no locking.

use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;
use core::ptr::null_mut;

const PAGE: usize = 4096;
const SMALL_MAX: usize = 2048;
const CLASSES: [u16; 24] = [
    16, 32, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1024,
    1280, 1536, 1792, 2048,
];
const NC: usize = CLASSES.len();
/// Class index for `(size + 15) / 16`, size ≤ 2048.
const CLASS_OF: [u8; SMALL_MAX / 16 + 1] = {
    let mut t = [0u8; SMALL_MAX / 16 + 1];
    let mut i = 0;
    while i < t.len() {
        let size = i * 16;
        let mut c = 0;
        while (CLASSES[c] as usize) < size {
            c += 1;
        }
        t[i] = c as u8;
        i += 1;
    }
    t
};
const MAX_ORDER: usize = 24; // 2^24 pages = 64 GiB
const NONE: u32 = u32::MAX;
/// `order[p]` for a page that does not head a free buddy block.
const NOT_FREE: u8 = 0xFF;

struct Inner {
    /// Small classes: free list heads, and the bump range in the current page.
    free: [usize; NC],
    cur: [usize; NC],
    end: [usize; NC],
    /// Buddy: first page address, page count, metadata.
    base: usize,
    npages: usize,
    order: *mut u8,
    links: *mut [u32; 2],
    heads: [u32; MAX_ORDER + 1],
}

pub struct Heap(UnsafeCell<Inner>);

// SAFETY: the guest runs one vCPU with no interrupts or threads; the heap
// is only ever used from that single flow of control.
unsafe impl Sync for Heap {}

#[global_allocator]
static HEAP: Heap = Heap(UnsafeCell::new(Inner {
    free: [0; NC],
    cur: [0; NC],
    end: [0; NC],
    base: 0,
    npages: 0,
    order: null_mut(),
    links: null_mut(),
    heads: [NONE; MAX_ORDER + 1],
}));

/// Hands `[start, start + size)` to the allocator.
///
/// # Safety
/// Once, before any allocation; the range must be mapped, writable and
/// otherwise unused.
pub unsafe fn init(start: usize, size: usize) {
    // SAFETY: called once before any allocation, single-threaded.
    let h = unsafe { &mut *HEAP.0.get() };
    let lo = (start + PAGE - 1) & !(PAGE - 1);
    let hi = (start + size) & !(PAGE - 1);
    if hi <= lo {
        return;
    }
    let total = (hi - lo) / PAGE;
    // Metadata: 1 order byte + 8 link bytes per page, at the bottom.
    let meta_pages = (total * 9).div_ceil(PAGE);
    if meta_pages >= total {
        return;
    }
    h.order = lo as *mut u8;
    h.links = (lo + total).next_multiple_of(8) as *mut [u32; 2];
    h.base = lo + meta_pages * PAGE;
    h.npages = total - meta_pages;
    // SAFETY: the order array is inside the metadata pages.
    unsafe { core::ptr::write_bytes(h.order, NOT_FREE, h.npages) };
    // Cover the pages with maximal naturally aligned blocks.
    let mut p = 0;
    while p < h.npages {
        let addr = h.base + p * PAGE;
        let mut k = 0;
        while k < MAX_ORDER
            && addr.is_multiple_of(PAGE << (k + 1))
            && p + (1 << (k + 1)) <= h.npages
        {
            k += 1;
        }
        // SAFETY: p is a valid page index heading a block of 2^k pages.
        unsafe { h.push(p, k) };
        p += 1 << k;
    }
}

impl Inner {
    /// # Safety
    /// `p < npages` and not on any list.
    unsafe fn push(&mut self, p: usize, k: usize) {
        let head = self.heads[k];
        // SAFETY: p and head are page indices below npages.
        unsafe {
            *self.links.add(p) = [head, NONE];
            if head != NONE {
                (*self.links.add(head as usize))[1] = p as u32;
            }
            *self.order.add(p) = k as u8;
        }
        self.heads[k] = p as u32;
    }

    /// # Safety
    /// `p` heads a free block of order `k`.
    unsafe fn unlink(&mut self, p: usize, k: usize) {
        // SAFETY: p and its neighbours are valid page indices on list k.
        unsafe {
            let [next, prev] = *self.links.add(p);
            if prev == NONE {
                self.heads[k] = next;
            } else {
                (*self.links.add(prev as usize))[0] = next;
            }
            if next != NONE {
                (*self.links.add(next as usize))[1] = prev;
            }
            *self.order.add(p) = NOT_FREE;
        }
    }

    fn alloc_pages(&mut self, k: usize) -> *mut u8 {
        let mut j = k;
        while j <= MAX_ORDER && self.heads[j] == NONE {
            j += 1;
        }
        if j > MAX_ORDER {
            return null_mut();
        }
        let p = self.heads[j] as usize;
        // SAFETY: p heads a free block of order j; its halves are in range.
        unsafe {
            self.unlink(p, j);
            while j > k {
                j -= 1;
                self.push(p + (1 << j), j);
            }
        }
        (self.base + p * PAGE) as *mut u8
    }

    fn free_pages(&mut self, ptr: *mut u8, k: usize) {
        let mut p = (ptr as usize - self.base) / PAGE;
        let mut k = k;
        while k < MAX_ORDER {
            let addr = self.base + p * PAGE;
            let buddy_addr = addr ^ (PAGE << k);
            if buddy_addr < self.base {
                break;
            }
            let b = (buddy_addr - self.base) / PAGE;
            // SAFETY: b < npages is checked first.
            if b + (1 << k) > self.npages || unsafe { *self.order.add(b) } as usize != k {
                break;
            }
            // SAFETY: b heads a free block of order k.
            unsafe { self.unlink(b, k) };
            p = p.min(b);
            k += 1;
        }
        // SAFETY: p heads the (merged) block, now free.
        unsafe { self.push(p, k) };
    }
}

/// Small class for a layout, or `None` for the page allocator.
#[inline]
fn class(l: Layout) -> Option<usize> {
    let size = l.size().max(l.align());
    if size > SMALL_MAX {
        return None;
    }
    let c = CLASS_OF[size.div_ceil(16)] as usize;
    // Classes that are not powers of two only guarantee 16-byte alignment;
    // a larger alignment uses the power-of-two class covering it (blocks
    // of a power-of-two class are aligned to their size within a page).
    if l.align() > 16 && !(CLASSES[c] as usize).is_multiple_of(l.align()) {
        return Some(CLASS_OF[size.next_power_of_two() / 16] as usize);
    }
    Some(c)
}

#[inline]
fn order(l: Layout) -> usize {
    let pages = l.size().max(l.align()).div_ceil(PAGE);
    pages.next_power_of_two().trailing_zeros() as usize
}

// SAFETY: blocks are disjoint, within the heap, sized and aligned for the
// layout (see `class` and the buddy's natural alignment); dealloc gets the
// allocation's own layout, so it maps to the same class or order.
unsafe impl GlobalAlloc for Heap {
    #[inline]
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        // SAFETY: single-threaded guest (see `Sync`).
        let h = unsafe { &mut *self.0.get() };
        match class(l) {
            Some(c) => {
                let f = h.free[c];
                if f != 0 {
                    // SAFETY: a free block holds the next link in its first word.
                    h.free[c] = unsafe { *(f as *const usize) };
                    return f as *mut u8;
                }
                let size = CLASSES[c] as usize;
                if h.cur[c] + size > h.end[c] {
                    let page = h.alloc_pages(0);
                    if page.is_null() {
                        return page;
                    }
                    h.cur[c] = page as usize;
                    h.end[c] = page as usize + PAGE;
                }
                let p = h.cur[c];
                h.cur[c] += size;
                p as *mut u8
            }
            None => h.alloc_pages(order(l)),
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, l: Layout) {
        // SAFETY: single-threaded guest (see `Sync`).
        let h = unsafe { &mut *self.0.get() };
        match class(l) {
            Some(c) => {
                // SAFETY: the block is at least 16 bytes and ours again.
                unsafe { *(ptr as *mut usize) = h.free[c] };
                h.free[c] = ptr as usize;
            }
            None => h.free_pages(ptr, order(l)),
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees a valid layout for new_size.
        let nl = unsafe { Layout::from_size_align_unchecked(new_size, l.align()) };
        let same = match (class(l), class(nl)) {
            (Some(a), Some(b)) => a == b,
            (None, None) => order(l) == order(nl),
            _ => false,
        };
        if same {
            return ptr;
        }
        // SAFETY: as GlobalAlloc::realloc's default.
        unsafe {
            let new = self.alloc(nl);
            if !new.is_null() {
                core::ptr::copy_nonoverlapping(ptr, new, l.size().min(new_size));
                self.dealloc(ptr, l);
            }
            new
        }
    }
}
