//! The guest's memcpy/memmove/memset/memcmp/bcmp (crates/guest/src/arch/mem.rs),
//! compiled for the host as ordinary functions and checked against the
//! obvious byte loops for every size and offset up to 600 bytes.
#[allow(dead_code)]
#[path = "../../guest/src/arch/mem.rs"]
mod mem;

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[test]
fn memcpy_memset_match_byte_loops() {
    for n in (0..600).chain([1000, 4096, 5000]) {
        for off in 0..3 {
            let src = pattern(n + 8, 7);
            let mut dst = vec![0xEEu8; n + 16];
            // SAFETY: in-bounds buffers.
            unsafe { mem::memcpy(dst.as_mut_ptr().add(off), src.as_ptr().add(1), n) };
            assert_eq!(&dst[off..off + n], &src[1..1 + n], "memcpy n={n} off={off}");
            assert!(
                dst[..off].iter().all(|&b| b == 0xEE) && dst[off + n..].iter().all(|&b| b == 0xEE)
            );
            let mut buf = vec![0x11u8; n + 16];
            // SAFETY: in-bounds.
            unsafe { mem::memset(buf.as_mut_ptr().add(off), 0xAB, n) };
            assert!(buf[off..off + n].iter().all(|&b| b == 0xAB), "memset n={n}");
            assert!(
                buf[..off].iter().all(|&b| b == 0x11) && buf[off + n..].iter().all(|&b| b == 0x11)
            );
        }
    }
}

#[test]
fn memmove_handles_overlap_both_ways() {
    for n in (0..300).chain([511, 512, 513, 1000, 3000]) {
        for shift in [1usize, 3, 8, 31, 32, 33, 100] {
            let base = pattern(n + shift + 8, 3);
            // forward overlap (d > s)
            let mut v = base.clone();
            let mut want = base.clone();
            want.copy_within(0..n, shift);
            // SAFETY: in-bounds.
            unsafe { mem::memmove(v.as_mut_ptr().add(shift), v.as_ptr(), n) };
            assert_eq!(v, want, "memmove up n={n} shift={shift}");
            // backward overlap (d < s)
            let mut v = base.clone();
            let mut want = base.clone();
            want.copy_within(shift..shift + n, 0);
            // SAFETY: in-bounds.
            unsafe { mem::memmove(v.as_mut_ptr(), v.as_ptr().add(shift), n) };
            assert_eq!(v, want, "memmove down n={n} shift={shift}");
        }
    }
}

#[test]
fn memcmp_bcmp_order_and_equality() {
    for n in 0..80 {
        let a = pattern(n, 1);
        for i in 0..n {
            for delta in [1u8, 0x80] {
                let mut b = a.clone();
                b[i] = b[i].wrapping_add(delta);
                // SAFETY: n bytes each.
                let (c, e) = unsafe {
                    (
                        mem::memcmp(a.as_ptr(), b.as_ptr(), n),
                        mem::bcmp(a.as_ptr(), b.as_ptr(), n),
                    )
                };
                assert_eq!(
                    c.signum(),
                    (a.cmp(&b) as i32).signum(),
                    "memcmp n={n} i={i}"
                );
                assert_ne!(e, 0);
            }
        }
        // SAFETY: n bytes each.
        unsafe {
            assert_eq!(mem::memcmp(a.as_ptr(), a.clone().as_ptr(), n), 0);
            assert_eq!(mem::bcmp(a.as_ptr(), a.clone().as_ptr(), n), 0);
        }
    }
}
