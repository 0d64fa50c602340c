//! memcpy, memmove, memset, memcmp and bcmp for the guest.
//!
//! `x86_64-unknown-none` is a soft-float target without SSE, and the
//! `compiler_builtins` versions are three `rep movs` in a row: 30–100
//! cycles of start-up for every small copy, and the engine makes many
//! (packet data, moves of large values). These handle small sizes with
//! overlapping general-register loads and stores, loops of 32 bytes up to
//! 512 bytes, and `rep movsb` / `rep stosb` (fast with ERMS) beyond.
//!
//! LLVM does not turn the loops back into calls to themselves: loop-idiom
//! recognition is disabled inside functions named like these.

use core::arch::asm;

#[inline(always)]
unsafe fn ld8(p: *const u8) -> u64 {
    // SAFETY: the caller guarantees 8 readable bytes.
    unsafe { (p as *const u64).read_unaligned() }
}
#[inline(always)]
unsafe fn st8(p: *mut u8, v: u64) {
    // SAFETY: the caller guarantees 8 writable bytes.
    unsafe { (p as *mut u64).write_unaligned(v) }
}
#[inline(always)]
unsafe fn ld4(p: *const u8) -> u32 {
    // SAFETY: as ld8.
    unsafe { (p as *const u32).read_unaligned() }
}
#[inline(always)]
unsafe fn st4(p: *mut u8, v: u32) {
    // SAFETY: as st8.
    unsafe { (p as *mut u32).write_unaligned(v) }
}
#[inline(always)]
unsafe fn ld2(p: *const u8) -> u16 {
    // SAFETY: as ld8.
    unsafe { (p as *const u16).read_unaligned() }
}
#[inline(always)]
unsafe fn st2(p: *mut u8, v: u16) {
    // SAFETY: as st8.
    unsafe { (p as *mut u16).write_unaligned(v) }
}

/// Copies n ≤ 32 bytes; all loads happen before any store, so it is also
/// correct for overlapping ranges.
#[inline(always)]
unsafe fn copy_small(d: *mut u8, s: *const u8, n: usize) {
    // SAFETY (all): n bytes readable at s and writable at d; every access
    // below stays within [0, n).
    unsafe {
        if n >= 16 {
            let (a, b) = (ld8(s), ld8(s.add(8)));
            let (c, e) = (ld8(s.add(n - 16)), ld8(s.add(n - 8)));
            st8(d, a);
            st8(d.add(8), b);
            st8(d.add(n - 16), c);
            st8(d.add(n - 8), e);
        } else if n >= 8 {
            let (a, b) = (ld8(s), ld8(s.add(n - 8)));
            st8(d, a);
            st8(d.add(n - 8), b);
        } else if n >= 4 {
            let (a, b) = (ld4(s), ld4(s.add(n - 4)));
            st4(d, a);
            st4(d.add(n - 4), b);
        } else if n >= 2 {
            let (a, b) = (ld2(s), ld2(s.add(n - 2)));
            st2(d, a);
            st2(d.add(n - 2), b);
        } else if n == 1 {
            *d = *s;
        }
    }
}

/// # Safety
/// The C contract.
#[cfg_attr(target_os = "none", unsafe(no_mangle))]
pub unsafe extern "C" fn memcpy(d: *mut u8, s: *const u8, n: usize) -> *mut u8 {
    // SAFETY: the C contract: n bytes readable at s, writable at d, no
    // overlap.
    unsafe {
        if n <= 32 {
            copy_small(d, s, n);
        } else if n <= 512 {
            // 32-byte blocks, then the last 32 bytes (overlapping).
            let mut i = 0;
            while i + 32 < n {
                let (a, b, c, e) = (
                    ld8(s.add(i)),
                    ld8(s.add(i + 8)),
                    ld8(s.add(i + 16)),
                    ld8(s.add(i + 24)),
                );
                st8(d.add(i), a);
                st8(d.add(i + 8), b);
                st8(d.add(i + 16), c);
                st8(d.add(i + 24), e);
                i += 32;
            }
            copy_small(d.add(n - 32), s.add(n - 32), 32);
        } else {
            asm!("rep movsb", inout("rcx") n => _, inout("rdi") d => _, inout("rsi") s => _,
                 options(nostack, preserves_flags));
        }
    }
    d
}

/// # Safety
/// The C contract.
#[cfg_attr(target_os = "none", unsafe(no_mangle))]
pub unsafe extern "C" fn memmove(d: *mut u8, s: *const u8, n: usize) -> *mut u8 {
    // SAFETY: the C contract (ranges may overlap).
    unsafe {
        if n <= 32 {
            copy_small(d, s, n);
        } else if (d as usize).wrapping_sub(s as usize) >= n {
            // d below s, or past its end: copy forwards. Each 32-byte block
            // is loaded before it is stored, and later reads lie above
            // everything written so far.
            let mut i = 0;
            while i + 32 <= n {
                let (a, b, c, e) = (
                    ld8(s.add(i)),
                    ld8(s.add(i + 8)),
                    ld8(s.add(i + 16)),
                    ld8(s.add(i + 24)),
                );
                st8(d.add(i), a);
                st8(d.add(i + 8), b);
                st8(d.add(i + 16), c);
                st8(d.add(i + 24), e);
                i += 32;
            }
            while i < n {
                *d.add(i) = *s.add(i);
                i += 1;
            }
        } else {
            // d inside (s, s + n): copy backwards.
            asm!("std", "rep movsb", "cld",
                 inout("rcx") n => _, inout("rdi") d.add(n - 1) => _, inout("rsi") s.add(n - 1) => _,
                 options(nostack));
        }
    }
    d
}

/// # Safety
/// The C contract.
#[cfg_attr(target_os = "none", unsafe(no_mangle))]
pub unsafe extern "C" fn memset(d: *mut u8, c: i32, n: usize) -> *mut u8 {
    let v = (c as u8 as u64) * 0x0101_0101_0101_0101;
    // SAFETY: the C contract: n bytes writable at d.
    unsafe {
        if (32..=512).contains(&n) {
            let mut i = 0;
            while i + 32 < n {
                st8(d.add(i), v);
                st8(d.add(i + 8), v);
                st8(d.add(i + 16), v);
                st8(d.add(i + 24), v);
                i += 32;
            }
            st8(d.add(n - 32), v);
            st8(d.add(n - 24), v);
            st8(d.add(n - 16), v);
            st8(d.add(n - 8), v);
        } else if n > 512 {
            asm!("rep stosb", inout("rcx") n => _, inout("rdi") d => _, in("al") c as u8,
                 options(nostack, preserves_flags));
        } else if n >= 16 {
            st8(d, v);
            st8(d.add(8), v);
            st8(d.add(n - 16), v);
            st8(d.add(n - 8), v);
        } else if n >= 8 {
            st8(d, v);
            st8(d.add(n - 8), v);
        } else if n >= 4 {
            st4(d, v as u32);
            st4(d.add(n - 4), v as u32);
        } else {
            let mut i = 0;
            while i < n {
                *d.add(i) = v as u8;
                i += 1;
            }
        }
    }
    d
}

/// # Safety
/// The C contract.
#[cfg_attr(target_os = "none", unsafe(no_mangle))]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    // SAFETY: the C contract: n bytes readable at a and b.
    unsafe {
        while i + 8 <= n {
            let (x, y) = (ld8(a.add(i)), ld8(b.add(i)));
            if x != y {
                // The first differing byte decides (little-endian: swap).
                return if x.swap_bytes() < y.swap_bytes() {
                    -1
                } else {
                    1
                };
            }
            i += 8;
        }
        while i < n {
            let (x, y) = (*a.add(i), *b.add(i));
            if x != y {
                return x as i32 - y as i32;
            }
            i += 1;
        }
    }
    0
}

/// # Safety
/// The C contract.
#[cfg_attr(target_os = "none", unsafe(no_mangle))]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: the C contract.
    unsafe {
        if n >= 8 {
            let mut i = 0;
            while i + 8 < n {
                if ld8(a.add(i)) != ld8(b.add(i)) {
                    return 1;
                }
                i += 8;
            }
            return (ld8(a.add(n - 8)) != ld8(b.add(n - 8))) as i32;
        }
        if n >= 4 {
            return ((ld4(a) != ld4(b)) | (ld4(a.add(n - 4)) != ld4(b.add(n - 4)))) as i32;
        }
        let mut i = 0;
        while i < n {
            if *a.add(i) != *b.add(i) {
                return 1;
            }
            i += 1;
        }
    }
    0
}
