//! The Internet checksum (RFC 1071), incremental updates (RFC 1624) and the
//! TCP/UDP pseudo-header.
//!
//! Conventions: a *sum* is the folded 16-bit ones-complement sum of the data
//! (not complemented), as a host-order number whose big-endian encoding is
//! what would appear on the wire. A *checksum* is the complement of a sum, the
//! value stored in a header's checksum field.
//!
//! The sum of any data that is not all zeros is never `0x0000` (a zero sum
//! shows up as `0xFFFF`, "negative zero"), so a checksum computed by
//! [`ip_checksum`] is `0xFFFF` only for all-zero data.

use core::net::Ipv4Addr;

/// Add one 64-bit word into a ones-complement accumulator (end-around carry).
#[inline(always)]
fn add64(acc: u64, w: u64) -> u64 {
    let (s, carry) = acc.overflowing_add(w);
    // If `carry`, `s <= 2^64 - 2`, so `s + 1` cannot overflow.
    s + carry as u64
}

/// Fold a 64-bit ones-complement accumulator to 16 bits.
#[inline(always)]
fn fold64(acc: u64) -> u16 {
    let mut s = (acc & 0xffff_ffff) + (acc >> 32); // < 2^33
    s = (s & 0xffff_ffff) + (s >> 32); // < 2^32 + 1, and fits the 32-bit fold below
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    s as u16
}

/// Ones-complement sum of `data`, read as native-endian 64-bit words.
///
/// Because the ones-complement sum is byte-order independent (RFC 1071
/// §2(B)), summing native-endian words and byte-swapping the folded result
/// gives the network-order sum; this avoids a byte swap per word.
#[inline]
fn sum_native(data: &[u8]) -> u64 {
    let mut acc0: u64 = 0;
    let mut acc1: u64 = 0;
    let mut chunks = data.chunks_exact(16);
    for c in &mut chunks {
        let (a, b) = c.split_at(8);
        // Two independent accumulators shorten the carry dependency chain.
        acc0 = add64(acc0, u64::from_ne_bytes(a.try_into().unwrap_or([0; 8])));
        acc1 = add64(acc1, u64::from_ne_bytes(b.try_into().unwrap_or([0; 8])));
    }
    let mut acc = add64(acc0, acc1);
    let rem = chunks.remainder();
    if !rem.is_empty() {
        // Zero padding at the end keeps every byte in its 16-bit word
        // position (the remainder starts at an even offset), and pads an odd
        // final byte with a zero low byte as RFC 1071 requires.
        let mut last = [0u8; 16];
        last[..rem.len()].copy_from_slice(rem);
        let (a, b) = last.split_at(8);
        acc = add64(acc, u64::from_ne_bytes(a.try_into().unwrap_or([0; 8])));
        acc = add64(acc, u64::from_ne_bytes(b.try_into().unwrap_or([0; 8])));
    }
    acc
}

/// Folded 16-bit ones-complement sum of `data` (not complemented).
///
/// An odd trailing byte is treated as the high byte of a final 16-bit word.
#[inline]
pub fn sum(data: &[u8]) -> u16 {
    u16::from_be(fold64(sum_native(data)))
}

/// Ones-complement addition of two 16-bit sums.
#[inline]
pub const fn add(a: u16, b: u16) -> u16 {
    let s = a as u32 + b as u32;
    ((s & 0xffff) + (s >> 16)) as u16
}

/// The Internet checksum of `data` (RFC 1071): the complement of the
/// ones-complement sum of its 16-bit big-endian words.
///
/// To *verify* a header that includes its checksum field, check that
/// `ip_checksum(header) == 0`.
#[inline]
pub fn ip_checksum(data: &[u8]) -> u16 {
    !sum(data)
}

/// Ones-complement sum of the IPv4 TCP/UDP pseudo-header: source address,
/// destination address, zero byte, protocol, and the transport length
/// (header plus payload) in bytes.
#[inline]
pub fn pseudo_header_sum(src: Ipv4Addr, dst: Ipv4Addr, proto: u8, len: u16) -> u16 {
    let s = u32::from(src);
    let d = u32::from(dst);
    let acc: u64 = (s >> 16) as u64
        + (s & 0xffff) as u64
        + (d >> 16) as u64
        + (d & 0xffff) as u64
        + proto as u64
        + len as u64;
    fold64(acc)
}

/// Transport (TCP/UDP) checksum of `segment` with the IPv4 pseudo-header.
///
/// `segment` is the whole transport header plus payload, with the checksum
/// field either zeroed (to compute a checksum) or filled (to verify: the
/// result is then `0`). The length in the pseudo-header is `segment.len()`
/// (truncated to 16 bits).
#[inline]
pub fn transport_checksum(src: Ipv4Addr, dst: Ipv4Addr, proto: u8, segment: &[u8]) -> u16 {
    !add(
        pseudo_header_sum(src, dst, proto, segment.len() as u16),
        sum(segment),
    )
}

/// Incrementally update a checksum after a 16-bit word of the covered data
/// changed from `old` to `new` (RFC 1624, eqn. 3: `HC' = ~(~HC + ~m + m')`).
///
/// For data that is not all zeros this gives exactly the same value as
/// recomputing the checksum from scratch. Typical use (Click's `DecIPTTL`):
///
/// ```
/// # use click_wire::checksum_update_u16;
/// let (ttl, proto) = (64u8, 17u8);
/// let old = u16::from_be_bytes([ttl, proto]);
/// let new = u16::from_be_bytes([ttl - 1, proto]);
/// let csum = checksum_update_u16(0xb861, old, new);
/// assert_eq!(csum, 0xb961);
/// ```
#[inline]
pub const fn checksum_update_u16(old_csum: u16, old: u16, new: u16) -> u16 {
    let s = (!old_csum) as u32 + (!old) as u32 + new as u32;
    let s = (s & 0xffff) + (s >> 16);
    let s = (s & 0xffff) + (s >> 16);
    !(s as u16)
}

/// Incrementally update a checksum after an aligned 32-bit word of the
/// covered data (e.g. an IPv4 address, also covered by the TCP/UDP
/// pseudo-header) changed from `old` to `new`.
#[inline]
pub const fn checksum_update_u32(old_csum: u16, old: u32, new: u32) -> u16 {
    let s = (!old_csum) as u32 + ((!old) >> 16) + ((!old) & 0xffff) + (new >> 16) + (new & 0xffff);
    let s = (s & 0xffff) + (s >> 16);
    let s = (s & 0xffff) + (s >> 16);
    !(s as u16)
}

/// The checksum delta of a rewrite, Click's `click_update_in_cksum` run
/// over each 16-bit word that changes (`old[i]` becomes `new[i]`), starting
/// from zero. Apply it with [`checksum_apply_delta`]: forward (`true`) to a
/// checksum covering the old words, backward (`false`) to undo the rewrite
/// on a checksum covering the new ones. NAT rewriters (IPRewriter and
/// friends) keep two per flow: over the addresses (the IP header) and over
/// the addresses and ports (the TCP/UDP pseudo-header and ports).
pub fn checksum_delta(old: &[u16], new: &[u16]) -> u16 {
    let mut d = 0u16;
    for (o, n) in old.iter().zip(new) {
        d = checksum_update_u16(d, *o, *n);
    }
    d
}

/// Applies a delta from [`checksum_delta`] to checksum `csum`: `forward`
/// performs the rewrite the delta was computed for, `!forward` undoes it.
/// A zero delta leaves the checksum alone (as Click's `update_csum` does).
#[inline]
pub const fn checksum_apply_delta(csum: u16, delta: u16, forward: bool) -> u16 {
    if delta == 0 {
        csum
    } else {
        checksum_update_u16(csum, 0, if forward { !delta } else { delta })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::hex;
    use proptest::prelude::*;
    use std::vec::Vec;

    /// Obviously-correct reference: sum of big-endian 16-bit words.
    fn reference_sum(data: &[u8]) -> u16 {
        let mut acc: u64 = 0;
        for c in data.chunks(2) {
            let w = if c.len() == 2 {
                u16::from_be_bytes([c[0], c[1]])
            } else {
                u16::from_be_bytes([c[0], 0])
            };
            acc += w as u64;
        }
        while acc > 0xffff {
            acc = (acc & 0xffff) + (acc >> 16);
        }
        acc as u16
    }

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3: bytes 00 01 f2 03 f4 f5 f6 f7 sum to 0xddf2.
        let d = hex("0001 f203 f4f5 f6f7");
        assert_eq!(sum(&d), 0xddf2);
        assert_eq!(ip_checksum(&d), 0x220d);
    }

    #[test]
    fn ipv4_header_vector() {
        // Classic example header, checksum 0xb861.
        let mut h = hex("4500 0073 0000 4000 4011 b861 c0a8 0001 c0a8 00c7");
        assert_eq!(ip_checksum(&h), 0);
        h[10] = 0;
        h[11] = 0;
        assert_eq!(ip_checksum(&h), 0xb861);
    }

    #[test]
    fn odd_lengths_and_empty() {
        assert_eq!(sum(&[]), 0);
        assert_eq!(ip_checksum(&[]), 0xffff);
        assert_eq!(sum(&[0xab]), 0xab00);
        assert_eq!(sum(&[0xff; 3]), reference_sum(&[0xff; 3]));
        for n in 0..64usize {
            let d: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            assert_eq!(sum(&d), reference_sum(&d), "len {n}");
        }
    }

    #[test]
    fn large_all_ones() {
        let d = [0xffu8; 4096 + 7];
        assert_eq!(sum(&d), reference_sum(&d));
        assert_eq!(sum(&d), 0xff00);
    }

    #[test]
    fn pseudo_header() {
        let src = Ipv4Addr::new(192, 168, 0, 1);
        let dst = Ipv4Addr::new(192, 168, 0, 199);
        let mut ph = Vec::new();
        ph.extend_from_slice(&src.octets());
        ph.extend_from_slice(&dst.octets());
        ph.extend_from_slice(&[0, 17, 0x00, 0x5f]);
        assert_eq!(pseudo_header_sum(src, dst, 17, 0x5f), reference_sum(&ph));
    }

    #[test]
    fn update_u32_example() {
        // Rewrite the source address of the example header.
        let mut h = hex("4500 0073 0000 4000 4011 b861 c0a8 0001 c0a8 00c7");
        let new = Ipv4Addr::new(10, 1, 2, 3);
        let c = checksum_update_u32(0xb861, 0xc0a8_0001, u32::from(new));
        h[12..16].copy_from_slice(&new.octets());
        h[10] = 0;
        h[11] = 0;
        assert_eq!(c, ip_checksum(&h));
    }

    proptest! {
        #[test]
        fn sum_matches_reference(d in proptest::collection::vec(any::<u8>(), 0..300)) {
            prop_assert_eq!(sum(&d), reference_sum(&d));
        }

        #[test]
        fn sum_split_combines(d in proptest::collection::vec(any::<u8>(), 0..200), at in 0usize..100) {
            // Splitting at an even offset and adding the two sums is the same.
            let at = (at * 2).min(d.len() & !1);
            let (a, b) = d.split_at(at);
            let whole = sum(&d);
            let parts = add(sum(a), sum(b));
            // Equal modulo 0xffff (0 and 0xffff both denote zero).
            prop_assert_eq!(whole as u32 % 0xffff, parts as u32 % 0xffff);
        }

        #[test]
        fn update_u16_equals_recompute(
            mut d in proptest::collection::vec(any::<u8>(), 4..64),
            idx in any::<prop::sample::Index>(),
            new in any::<u16>(),
        ) {
            // Word 0 is the checksum field; make the rest non-zero.
            let n = d.len() & !1;
            d.truncate(n);
            d[2] |= 1;
            d[0] = 0; d[1] = 0;
            let c0 = ip_checksum(&d);
            let w = 1 + idx.index(n / 2 - 1);
            let old = u16::from_be_bytes([d[2 * w], d[2 * w + 1]]);
            d[2 * w..2 * w + 2].copy_from_slice(&new.to_be_bytes());
            if d[2..].iter().any(|&b| b != 0) {
                prop_assert_eq!(checksum_update_u16(c0, old, new), ip_checksum(&d));
            }
        }

        #[test]
        fn update_u32_equals_recompute(
            mut d in proptest::collection::vec(any::<u8>(), 8..64),
            idx in any::<prop::sample::Index>(),
            new in any::<u32>(),
        ) {
            let n = d.len() & !3;
            d.truncate(n);
            d[0] = 0; d[1] = 0;
            d[2] |= 1;
            let c0 = ip_checksum(&d);
            let w = 1 + idx.index(n / 4 - 1);
            let old = u32::from_be_bytes([d[4 * w], d[4 * w + 1], d[4 * w + 2], d[4 * w + 3]]);
            d[4 * w..4 * w + 4].copy_from_slice(&new.to_be_bytes());
            if d[2..].iter().any(|&b| b != 0) {
                prop_assert_eq!(checksum_update_u32(c0, old, new), ip_checksum(&d));
            }
        }
    }
}
