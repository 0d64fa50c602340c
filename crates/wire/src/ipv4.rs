//! IPv4 packets (RFC 791).

use core::net::Ipv4Addr;

use crate::checksum::{self, checksum_update_u16};
use crate::{get_ipv4, get_u16, set_ipv4, set_u16, Error};

/// IP protocol numbers.
pub mod ip_proto {
    /// ICMP.
    pub const ICMP: u8 = 1;
    /// IGMP.
    pub const IGMP: u8 = 2;
    /// IP-in-IP.
    pub const IPIP: u8 = 4;
    /// TCP.
    pub const TCP: u8 = 6;
    /// UDP.
    pub const UDP: u8 = 17;
    /// IPv6 encapsulation.
    pub const IPV6: u8 = 41;
    /// GRE.
    pub const GRE: u8 = 47;
    /// ESP.
    pub const ESP: u8 = 50;
    /// AH.
    pub const AH: u8 = 51;
}

mod field {
    pub const VER_IHL: usize = 0;
    pub const TOS: usize = 1;
    pub const LENGTH: usize = 2;
    pub const IDENT: usize = 4;
    pub const FLG_OFF: usize = 6;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: usize = 10;
    pub const SRC: usize = 12;
    pub const DST: usize = 16;
    pub const OPTIONS: usize = 20;
}

/// "Reserved" (evil) flag bit in the flags/fragment-offset word.
pub const FLAG_RF: u16 = 0x8000;
/// Don't-fragment flag bit in the flags/fragment-offset word.
pub const FLAG_DF: u16 = 0x4000;
/// More-fragments flag bit in the flags/fragment-offset word.
pub const FLAG_MF: u16 = 0x2000;
/// Fragment-offset mask (in 8-byte units) of the flags/fragment-offset word.
pub const OFFSET_MASK: u16 = 0x1fff;

/// A read/write view of an IPv4 packet.
///
/// After [`new_checked`](Self::new_checked) succeeds the buffer holds at
/// least `total_len()` bytes, `20 <= header_len() <= total_len()`, and no
/// accessor can panic. The buffer may be longer than `total_len()` (e.g.
/// Ethernet padding); [`payload`](Self::payload) stops at `total_len()`.
///
/// `new_checked` does not look at the version or checksum; use
/// [`validate`](Self::validate) for a `CheckIPHeader`-style check.
///
/// Click's elements check less than `new_checked` before they touch a
/// header (most only that the 20 fixed bytes are there), and a packet they
/// accept must keep being accepted, so there are two weaker levels:
///
/// * [`new_fixed_checked`](Self::new_fixed_checked): the buffer holds the
///   20-byte fixed header. Every fixed-field accessor and setter is then
///   panic-free; [`header`](Self::header), [`options`](Self::options),
///   [`fill_checksum`](Self::fill_checksum) and
///   [`verify_checksum`](Self::verify_checksum) also need
///   [`check_header_len`](Self::check_header_len), and
///   [`payload`](Self::payload) needs [`check_len`](Self::check_len).
/// * [`check_header_len`](Self::check_header_len): also `20 <= header_len()
///   <= buffer length`, ignoring the total length.
///
/// The `*_incremental` setters keep the header checksum valid by updating
/// it incrementally (RFC 1624) instead of recomputing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    /// Length of a header without options.
    pub const MIN_HEADER_LEN: usize = field::OPTIONS;

    /// Wrap a buffer without checks. Accessors panic if the buffer is too
    /// short for the field they read (20 bytes for fixed fields, the header
    /// length for `options()`, the total length for `payload()`).
    #[inline]
    pub const fn new_unchecked(buffer: T) -> Self {
        Ipv4Packet { buffer }
    }

    /// Wrap a buffer, checking the lengths (see [`check_len`](Self::check_len)).
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, Error> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Wrap a buffer that holds at least the 20-byte fixed header (see
    /// [`check_fixed_len`](Self::check_fixed_len)); the length fields are not
    /// looked at.
    #[inline]
    pub fn new_fixed_checked(buffer: T) -> Result<Self, Error> {
        let p = Self::new_unchecked(buffer);
        p.check_fixed_len()?;
        Ok(p)
    }

    /// `Truncated` if the buffer is shorter than the 20-byte fixed header.
    /// After it succeeds no fixed-field accessor or setter can panic.
    #[inline]
    pub fn check_fixed_len(&self) -> Result<(), Error> {
        if self.buffer.as_ref().len() < field::OPTIONS {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    /// Check that the whole header (options included) is in the buffer,
    /// without looking at the total length:
    ///
    /// * `Truncated` if the buffer is shorter than 20 bytes or than
    ///   `header_len()`;
    /// * `Malformed` if `header_len() < 20`.
    ///
    /// After it succeeds [`header`](Self::header), [`options`](Self::options),
    /// [`fill_checksum`](Self::fill_checksum) and
    /// [`verify_checksum`](Self::verify_checksum) cannot panic.
    #[inline]
    pub fn check_header_len(&self) -> Result<(), Error> {
        self.check_fixed_len()?;
        let hlen = self.header_len() as usize;
        if hlen < field::OPTIONS {
            return Err(Error::Malformed);
        }
        if hlen > self.buffer.as_ref().len() {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    /// Check that no accessor can panic:
    ///
    /// * `Truncated` if the buffer is shorter than 20 bytes, than
    ///   `header_len()` or than `total_len()`;
    /// * `Malformed` if `header_len() < 20` or `total_len() < header_len()`.
    #[inline]
    pub fn check_len(&self) -> Result<(), Error> {
        let len = self.buffer.as_ref().len();
        if len < field::OPTIONS {
            return Err(Error::Truncated);
        }
        let hlen = self.header_len() as usize;
        if hlen < field::OPTIONS {
            return Err(Error::Malformed);
        }
        if hlen > len {
            return Err(Error::Truncated);
        }
        let tlen = self.total_len() as usize;
        if tlen < hlen {
            return Err(Error::Malformed);
        }
        if tlen > len {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    /// Full header validation in the spirit of Click's `CheckIPHeader`:
    /// lengths, version 4, and header checksum.
    pub fn validate(&self) -> Result<(), Error> {
        self.check_len()?;
        if self.version() != 4 {
            return Err(Error::BadVersion);
        }
        if !self.verify_checksum() {
            return Err(Error::BadChecksum);
        }
        Ok(())
    }

    /// Unwrap the buffer.
    #[inline]
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Version field (4 for IPv4).
    #[inline]
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VER_IHL] >> 4
    }

    /// Header length in bytes (IHL * 4).
    #[inline]
    pub fn header_len(&self) -> u8 {
        (self.buffer.as_ref()[field::VER_IHL] & 0x0f) * 4
    }

    /// The whole TOS byte (DSCP << 2 | ECN).
    #[inline]
    pub fn tos(&self) -> u8 {
        self.buffer.as_ref()[field::TOS]
    }

    /// Alias of [`tos`](Self::tos).
    #[inline]
    pub fn dscp_ecn(&self) -> u8 {
        self.tos()
    }

    /// Differentiated services code point (upper 6 bits of TOS).
    #[inline]
    pub fn dscp(&self) -> u8 {
        self.tos() >> 2
    }

    /// Explicit congestion notification (lower 2 bits of TOS).
    #[inline]
    pub fn ecn(&self) -> u8 {
        self.tos() & 3
    }

    /// Total length (header + payload) in bytes.
    #[inline]
    pub fn total_len(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::LENGTH)
    }

    /// Identification.
    #[inline]
    pub fn ident(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::IDENT)
    }

    /// The raw flags/fragment-offset word (see [`FLAG_DF`], [`FLAG_MF`],
    /// [`OFFSET_MASK`]).
    #[inline]
    pub fn flags_frag(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::FLG_OFF)
    }

    /// The reserved flag bit.
    #[inline]
    pub fn reserved_flag(&self) -> bool {
        self.flags_frag() & FLAG_RF != 0
    }

    /// Don't-fragment flag.
    #[inline]
    pub fn dont_frag(&self) -> bool {
        self.flags_frag() & FLAG_DF != 0
    }

    /// More-fragments flag.
    #[inline]
    pub fn more_frags(&self) -> bool {
        self.flags_frag() & FLAG_MF != 0
    }

    /// Fragment offset in bytes.
    #[inline]
    pub fn frag_offset(&self) -> u16 {
        (self.flags_frag() & OFFSET_MASK) << 3
    }

    /// `true` if this packet is a fragment (MF set or nonzero offset;
    /// Click's `IP_ISFRAG`).
    #[inline]
    pub fn is_fragment(&self) -> bool {
        self.flags_frag() & (FLAG_MF | OFFSET_MASK) != 0
    }

    /// `true` for the first (or only) fragment (offset zero).
    #[inline]
    pub fn is_first_fragment(&self) -> bool {
        self.flags_frag() & OFFSET_MASK == 0
    }

    /// Time to live.
    #[inline]
    pub fn ttl(&self) -> u8 {
        self.buffer.as_ref()[field::TTL]
    }

    /// Protocol (see [`ip_proto`]).
    #[inline]
    pub fn protocol(&self) -> u8 {
        self.buffer.as_ref()[field::PROTOCOL]
    }

    /// Header checksum field.
    #[inline]
    pub fn checksum(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// Source address.
    #[inline]
    pub fn src_addr(&self) -> Ipv4Addr {
        get_ipv4(self.buffer.as_ref(), field::SRC)
    }

    /// Destination address.
    #[inline]
    pub fn dst_addr(&self) -> Ipv4Addr {
        get_ipv4(self.buffer.as_ref(), field::DST)
    }

    /// The options bytes (`header_len() - 20` of them).
    #[inline]
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[field::OPTIONS..self.header_len() as usize]
    }

    /// The whole header (including options).
    #[inline]
    pub fn header(&self) -> &[u8] {
        &self.buffer.as_ref()[..self.header_len() as usize]
    }

    /// The payload: bytes from `header_len()` to `total_len()`.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len() as usize..self.total_len() as usize]
    }

    /// `true` if the header checksum (over `header_len()` bytes) is correct.
    #[inline(always)]
    pub fn verify_checksum(&self) -> bool {
        let h = self.header();
        if h.len() == field::OPTIONS {
            // The common option-less header: five native-order 32-bit
            // words summed in a 64-bit register (the one's-complement sum
            // does not depend on byte order, and 0xffff is its own swap).
            let w = |i: usize| u64::from(u32::from_ne_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]));
            let s = w(0) + w(4) + w(8) + w(12) + w(16);
            // End-around-carry folds: adding a word to itself rotated by
            // half its width leaves (high + low + the carry out of low +
            // high) in the high half, the one's-complement sum.
            let s = (s.wrapping_add(s.rotate_left(32)) >> 32) as u32;
            let s = s.wrapping_add(s.rotate_left(16)) >> 16;
            s == 0xffff
        } else {
            verify_checksum_slow(h)
        }
    }
}

/// The checksum check of a header with options (out of line: rare).
#[inline(never)]
fn verify_checksum_slow(h: &[u8]) -> bool {
    checksum::ip_checksum(h) == 0
}

impl<'a, T: AsRef<[u8]> + ?Sized> Ipv4Packet<&'a T> {
    /// Payload with the lifetime of the underlying buffer.
    #[inline]
    pub fn payload_ref(&self) -> &'a [u8] {
        let data = self.buffer.as_ref();
        let hl = (data[field::VER_IHL] & 0x0f) as usize * 4;
        &data[hl..get_u16(data, field::LENGTH) as usize]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Packet<T> {
    /// Set the version field (low 4 bits of `v`).
    #[inline]
    pub fn set_version(&mut self, v: u8) {
        let b = &mut self.buffer.as_mut()[field::VER_IHL];
        *b = (*b & 0x0f) | (v << 4);
    }

    /// Set the header length in bytes.
    ///
    /// # Panics
    /// If `len` is not a multiple of 4 in `20..=60`.
    #[inline]
    pub fn set_header_len(&mut self, len: u8) {
        assert!(
            len & 3 == 0 && (20..=60).contains(&len),
            "bad IPv4 header length"
        );
        let b = &mut self.buffer.as_mut()[field::VER_IHL];
        *b = (*b & 0xf0) | (len / 4);
    }

    /// Set the TOS byte.
    #[inline]
    pub fn set_tos(&mut self, tos: u8) {
        self.buffer.as_mut()[field::TOS] = tos;
    }

    /// Alias of [`set_tos`](Self::set_tos).
    #[inline]
    pub fn set_dscp_ecn(&mut self, v: u8) {
        self.set_tos(v)
    }

    /// Set the DSCP (upper 6 bits of TOS; `dscp` above 63 is masked),
    /// keeping the ECN bits.
    #[inline]
    pub fn set_dscp(&mut self, dscp: u8) {
        let tos = self.tos();
        self.set_tos((tos & 3) | (dscp << 2))
    }

    /// Set the ECN bits (lower 2 bits of TOS; `ecn` above 3 is masked),
    /// keeping the DSCP.
    #[inline]
    pub fn set_ecn(&mut self, ecn: u8) {
        let tos = self.tos();
        self.set_tos((tos & !3) | (ecn & 3))
    }

    /// Set the TOS byte and update the checksum incrementally.
    #[inline]
    pub fn set_tos_incremental(&mut self, tos: u8) {
        let b0 = self.buffer.as_ref()[field::VER_IHL];
        let old = u16::from_be_bytes([b0, self.tos()]);
        self.set_tos(tos);
        self.update_checksum(old, u16::from_be_bytes([b0, tos]));
    }

    /// Set the DSCP (as [`set_dscp`](Self::set_dscp)) and update the
    /// checksum incrementally (Click's `SetIPDSCP`).
    #[inline]
    pub fn set_dscp_incremental(&mut self, dscp: u8) {
        let tos = self.tos();
        self.set_tos_incremental((tos & 3) | (dscp << 2))
    }

    /// Set the ECN bits (as [`set_ecn`](Self::set_ecn)) and update the
    /// checksum incrementally (Click's `MarkIPCE` sets them to 3).
    #[inline]
    pub fn set_ecn_incremental(&mut self, ecn: u8) {
        let tos = self.tos();
        self.set_tos_incremental((tos & !3) | (ecn & 3))
    }

    /// Set the total length.
    #[inline]
    pub fn set_total_len(&mut self, len: u16) {
        set_u16(self.buffer.as_mut(), field::LENGTH, len)
    }

    /// Set the identification.
    #[inline]
    pub fn set_ident(&mut self, id: u16) {
        set_u16(self.buffer.as_mut(), field::IDENT, id)
    }

    /// Set the raw flags/fragment-offset word.
    #[inline]
    pub fn set_flags_frag(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::FLG_OFF, v)
    }

    /// Set the raw flags/fragment-offset word and update the checksum
    /// incrementally.
    #[inline]
    pub fn set_flags_frag_incremental(&mut self, v: u16) {
        let old = self.flags_frag();
        self.set_flags_frag(v);
        self.update_checksum(old, v);
    }

    #[inline]
    fn set_flag(&mut self, flag: u16, on: bool) {
        let v = self.flags_frag();
        self.set_flags_frag(if on { v | flag } else { v & !flag })
    }

    /// Set/clear the don't-fragment flag.
    #[inline]
    pub fn set_dont_frag(&mut self, on: bool) {
        self.set_flag(FLAG_DF, on)
    }

    /// Set/clear the more-fragments flag.
    #[inline]
    pub fn set_more_frags(&mut self, on: bool) {
        self.set_flag(FLAG_MF, on)
    }

    /// Set/clear the reserved flag.
    #[inline]
    pub fn set_reserved_flag(&mut self, on: bool) {
        self.set_flag(FLAG_RF, on)
    }

    /// Set the fragment offset in bytes (must be a multiple of 8; the low 3
    /// bits are dropped; bits above 16 bits / 8 are masked off).
    #[inline]
    pub fn set_frag_offset(&mut self, offset: u16) {
        let v = (self.flags_frag() & !OFFSET_MASK) | ((offset >> 3) & OFFSET_MASK);
        self.set_flags_frag(v)
    }

    /// Set the TTL.
    #[inline]
    pub fn set_ttl(&mut self, ttl: u8) {
        self.buffer.as_mut()[field::TTL] = ttl;
    }

    /// Set the TTL and update the checksum incrementally.
    #[inline]
    pub fn set_ttl_incremental(&mut self, ttl: u8) {
        let proto = self.protocol();
        let old = u16::from_be_bytes([self.ttl(), proto]);
        self.set_ttl(ttl);
        self.update_checksum(old, u16::from_be_bytes([ttl, proto]));
    }

    /// Set the protocol.
    #[inline]
    pub fn set_protocol(&mut self, p: u8) {
        self.buffer.as_mut()[field::PROTOCOL] = p;
    }

    /// Set the header checksum field.
    #[inline]
    pub fn set_checksum(&mut self, c: u16) {
        set_u16(self.buffer.as_mut(), field::CHECKSUM, c)
    }

    /// Set the source address.
    #[inline]
    pub fn set_src_addr(&mut self, a: Ipv4Addr) {
        set_ipv4(self.buffer.as_mut(), field::SRC, a)
    }

    /// Set the destination address.
    #[inline]
    pub fn set_dst_addr(&mut self, a: Ipv4Addr) {
        set_ipv4(self.buffer.as_mut(), field::DST, a)
    }

    /// Update the checksum field incrementally (RFC 1624) for a 16-bit
    /// header word that changed from `old` to `new`.
    #[inline]
    pub fn update_checksum(&mut self, old: u16, new: u16) {
        let c = checksum_update_u16(self.checksum(), old, new);
        self.set_checksum(c)
    }

    /// Recompute the header checksum over `header_len()` bytes.
    #[inline]
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let c = checksum::ip_checksum(self.header());
        self.set_checksum(c)
    }

    /// Decrement the TTL by one and update the checksum incrementally
    /// (RFC 1624), as Click's `DecIPTTL` does. Returns the new TTL. A TTL of
    /// zero is left alone (returns 0).
    #[inline]
    pub fn decrement_ttl(&mut self) -> u8 {
        let ttl = self.ttl();
        if ttl == 0 {
            return 0;
        }
        self.set_ttl(ttl - 1);
        // The TTL/protocol word drops by 0x0100 whatever the protocol, so
        // `~old + new` is the constant 0xFEFF (Click's form of RFC 1624).
        // One fold suffices: the sum is at most 0x1FEFE.
        let sum = u32::from(!self.checksum()) + 0xfeff;
        self.set_checksum(!(((sum & 0xffff) + (sum >> 16)) as u16));
        ttl - 1
    }

    /// The mutable header (`header_len()` bytes, options included).
    #[inline]
    pub fn header_mut(&mut self) -> &mut [u8] {
        let hl = self.header_len() as usize;
        &mut self.buffer.as_mut()[..hl]
    }

    /// Mutable options bytes.
    #[inline]
    pub fn options_mut(&mut self) -> &mut [u8] {
        let hl = self.header_len() as usize;
        &mut self.buffer.as_mut()[field::OPTIONS..hl]
    }

    /// Mutable payload (`header_len()..total_len()`).
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let (hl, tl) = (self.header_len() as usize, self.total_len() as usize);
        &mut self.buffer.as_mut()[hl..tl]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Ipv4Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// A parsed, owned summary of an IPv4 header (without options).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Repr {
    /// Source address.
    pub src_addr: Ipv4Addr,
    /// Destination address.
    pub dst_addr: Ipv4Addr,
    /// Protocol.
    pub protocol: u8,
    /// Payload length in bytes.
    pub payload_len: usize,
    /// Time to live.
    pub ttl: u8,
    /// TOS byte.
    pub tos: u8,
    /// Identification.
    pub ident: u16,
    /// Don't-fragment flag.
    pub dont_frag: bool,
}

impl Ipv4Repr {
    /// Parse a packet after full [`validate`](Ipv4Packet::validate).
    pub fn parse<T: AsRef<[u8]>>(p: &Ipv4Packet<T>) -> Result<Self, Error> {
        p.validate()?;
        Ok(Ipv4Repr {
            src_addr: p.src_addr(),
            dst_addr: p.dst_addr(),
            protocol: p.protocol(),
            payload_len: p.total_len() as usize - p.header_len() as usize,
            ttl: p.ttl(),
            tos: p.tos(),
            ident: p.ident(),
            dont_frag: p.dont_frag(),
        })
    }

    /// Length of the emitted header (always 20).
    pub const fn header_len(&self) -> usize {
        field::OPTIONS
    }

    /// Write a 20-byte header (no options, not a fragment) with a valid
    /// checksum into `p`.
    ///
    /// # Panics
    /// If the buffer is shorter than 20 bytes or `20 + payload_len` does not
    /// fit in 16 bits.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Ipv4Packet<T>) {
        let total = u16::try_from(field::OPTIONS + self.payload_len).expect("IPv4 packet too long");
        p.buffer.as_mut()[field::VER_IHL] = 0x45;
        p.set_tos(self.tos);
        p.set_total_len(total);
        p.set_ident(self.ident);
        p.set_flags_frag(if self.dont_frag { FLAG_DF } else { 0 });
        p.set_ttl(self.ttl);
        p.set_protocol(self.protocol);
        p.set_src_addr(self.src_addr);
        p.set_dst_addr(self.dst_addr);
        p.fill_checksum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::hex;
    use proptest::prelude::*;
    use std::vec::Vec;

    // The classic example header (UDP, 0x73 bytes total, DF) + payload.
    fn example() -> Vec<u8> {
        let mut b = hex("4500 0073 0000 4000 4011 b861 c0a8 0001 c0a8 00c7");
        b.resize(0x73, 0xaa);
        b
    }

    #[test]
    fn parse_example() {
        let b = example();
        let p = Ipv4Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.version(), 4);
        assert_eq!(p.header_len(), 20);
        assert_eq!(p.tos(), 0);
        assert_eq!(p.dscp_ecn(), 0);
        assert_eq!(p.total_len(), 0x73);
        assert_eq!(p.ident(), 0);
        assert!(p.dont_frag());
        assert!(!p.more_frags());
        assert!(!p.reserved_flag());
        assert_eq!(p.frag_offset(), 0);
        assert!(!p.is_fragment());
        assert!(p.is_first_fragment());
        assert_eq!(p.ttl(), 64);
        assert_eq!(p.protocol(), ip_proto::UDP);
        assert_eq!(p.checksum(), 0xb861);
        assert_eq!(p.src_addr(), Ipv4Addr::new(192, 168, 0, 1));
        assert_eq!(p.dst_addr(), Ipv4Addr::new(192, 168, 0, 199));
        assert!(p.options().is_empty());
        assert_eq!(p.payload().len(), 0x73 - 20);
        assert_eq!(p.payload_ref().len(), 0x73 - 20);
        assert!(p.verify_checksum());
        assert_eq!(p.validate(), Ok(()));
        let r = Ipv4Repr::parse(&p).unwrap();
        assert_eq!(r.payload_len, 0x73 - 20);
        assert_eq!(r.header_len(), 20);
        let mut out = [0u8; 20];
        r.emit(&mut Ipv4Packet::new_unchecked(&mut out[..]));
        assert_eq!(&out[..], &b[..20]);
    }

    #[test]
    fn trailing_padding_is_not_payload() {
        let mut b = example();
        b.extend_from_slice(&[0; 6]);
        let p = Ipv4Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.payload().len(), 0x73 - 20);
    }

    #[test]
    fn options_and_fragments() {
        // IHL 6 (4 option bytes: NOP NOP NOP EOL), MF set, offset 1480.
        let mut b =
            hex("4600 0020 1234 20b9 0106 0000 0a000001 0a000002 01010100 deadbeef 00000000");
        let mut p = Ipv4Packet::new_checked(&mut b[..]).unwrap();
        p.fill_checksum();
        assert!(p.verify_checksum());
        assert_eq!(p.header_len(), 24);
        assert_eq!(p.options(), &[1, 1, 1, 0]);
        assert!(p.more_frags());
        assert!(!p.dont_frag());
        assert_eq!(p.frag_offset(), 0xb9 * 8);
        assert_eq!(p.frag_offset(), 1480);
        assert!(p.is_fragment());
        assert!(!p.is_first_fragment());
        assert_eq!(p.payload(), &[0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0]);
        assert_eq!(p.protocol(), ip_proto::TCP);
        p.options_mut()[3] = 1;
        assert!(!p.verify_checksum());
        assert_eq!(p.validate(), Err(Error::BadChecksum));
    }

    #[test]
    fn check_len_errors() {
        let b = example();
        // Shorter than the fixed header.
        assert_eq!(
            Ipv4Packet::new_checked(&b[..19]).err(),
            Some(Error::Truncated)
        );
        assert_eq!(
            Ipv4Packet::new_checked(&[][..]).err(),
            Some(Error::Truncated)
        );
        // IHL < 5.
        let mut c = b.clone();
        c[0] = 0x44;
        assert_eq!(
            Ipv4Packet::new_checked(&c[..]).err(),
            Some(Error::Malformed)
        );
        // IHL beyond the buffer.
        let mut c = b[..24].to_vec();
        c[0] = 0x47;
        c[2] = 0;
        c[3] = 24;
        assert_eq!(
            Ipv4Packet::new_checked(&c[..]).err(),
            Some(Error::Truncated)
        );
        // total_len < header_len.
        let mut c = b.clone();
        c[2] = 0;
        c[3] = 19;
        assert_eq!(
            Ipv4Packet::new_checked(&c[..]).err(),
            Some(Error::Malformed)
        );
        // total_len beyond the buffer.
        assert_eq!(
            Ipv4Packet::new_checked(&b[..0x72]).err(),
            Some(Error::Truncated)
        );
        // Bad version (lengths fine).
        let mut c = b.clone();
        c[0] = 0x65;
        let p = Ipv4Packet::new_checked(&c[..]).unwrap();
        assert_eq!(p.validate(), Err(Error::BadVersion));
        assert_eq!(Ipv4Repr::parse(&p), Err(Error::BadVersion));
    }

    #[test]
    fn setters_roundtrip() {
        let mut b = [0u8; 40];
        let mut p = Ipv4Packet::new_unchecked(&mut b[..]);
        p.set_version(4);
        p.set_header_len(24);
        p.set_tos(0xb8);
        p.set_total_len(40);
        p.set_ident(0xbeef);
        p.set_dont_frag(true);
        p.set_more_frags(true);
        p.set_reserved_flag(true);
        p.set_frag_offset(0xfff8);
        p.set_ttl(7);
        p.set_protocol(ip_proto::ICMP);
        p.set_src_addr(Ipv4Addr::new(1, 2, 3, 4));
        p.set_dst_addr(Ipv4Addr::new(5, 6, 7, 8));
        p.fill_checksum();
        p.payload_mut().fill(0x55);
        assert_eq!(p.check_len(), Ok(()));
        assert_eq!(p.version(), 4);
        assert_eq!(p.header_len(), 24);
        assert_eq!(p.dscp(), 0x2e);
        assert_eq!(p.ecn(), 0);
        assert_eq!(p.total_len(), 40);
        assert_eq!(p.ident(), 0xbeef);
        assert!(p.dont_frag() && p.more_frags() && p.reserved_flag());
        assert_eq!(p.frag_offset(), 0xfff8);
        assert_eq!(p.ttl(), 7);
        assert_eq!(p.protocol(), 1);
        assert_eq!(p.src_addr(), Ipv4Addr::new(1, 2, 3, 4));
        assert_eq!(p.dst_addr(), Ipv4Addr::new(5, 6, 7, 8));
        assert_eq!(p.payload(), &[0x55; 16]);
        assert_eq!(p.validate(), Ok(()));
        p.set_dont_frag(false);
        p.set_more_frags(false);
        p.set_reserved_flag(false);
        p.set_frag_offset(16);
        p.set_dscp_ecn(3);
        assert_eq!(p.flags_frag(), 2);
        assert_eq!(p.ecn(), 3);
        let b = p.into_inner();
        assert_eq!(b[0], 0x46);
    }

    #[test]
    #[should_panic]
    fn set_header_len_rejects_bad() {
        let mut b = [0u8; 20];
        Ipv4Packet::new_unchecked(&mut b[..]).set_header_len(22);
    }

    #[test]
    fn decrement_ttl() {
        let mut b = example();
        let mut p = Ipv4Packet::new_checked(&mut b[..]).unwrap();
        assert_eq!(p.decrement_ttl(), 63);
        assert_eq!(p.checksum(), 0xb961);
        assert!(p.verify_checksum());
        p.set_ttl(1);
        p.fill_checksum();
        assert_eq!(p.decrement_ttl(), 0);
        assert!(p.verify_checksum());
        assert_eq!(p.decrement_ttl(), 0);
        assert!(p.verify_checksum());
    }

    #[test]
    fn fixed_and_header_checks() {
        let b = example();
        // The fixed header only: the total length is not looked at.
        let p = Ipv4Packet::new_fixed_checked(&b[..20]).unwrap();
        assert_eq!(p.ttl(), 64);
        assert_eq!(p.check_header_len(), Ok(()));
        assert_eq!(p.check_len(), Err(Error::Truncated));
        assert!(p.verify_checksum());
        assert_eq!(
            Ipv4Packet::new_fixed_checked(&b[..19]).err(),
            Some(Error::Truncated)
        );
        // IHL 6 in a 20-byte buffer; IHL 4.
        let mut h = b[..20].to_vec();
        h[0] = 0x46;
        let p = Ipv4Packet::new_fixed_checked(&h[..]).unwrap();
        assert_eq!(p.check_header_len(), Err(Error::Truncated));
        h[0] = 0x44;
        let p = Ipv4Packet::new_fixed_checked(&h[..]).unwrap();
        assert_eq!(p.check_header_len(), Err(Error::Malformed));
    }

    #[test]
    fn verify_checksum_with_options() {
        let mut b =
            hex("4600 0020 1234 20b9 0106 0000 0a000001 0a000002 01010100 deadbeef 00000000");
        let mut p = Ipv4Packet::new_checked(&mut b[..]).unwrap();
        p.fill_checksum();
        assert!(p.verify_checksum());
        p.header_mut()[21] = 7;
        assert!(!p.verify_checksum());
        assert_eq!(p.header_mut().len(), 24);
    }

    #[test]
    fn tos_setters() {
        let mut b = example();
        let mut p = Ipv4Packet::new_checked(&mut b[..]).unwrap();
        p.set_tos(0b1010_1001);
        p.set_dscp(0x3f);
        assert_eq!(p.tos(), 0xfd);
        p.set_ecn(2);
        assert_eq!(p.tos(), 0xfe);
        p.set_ecn(7);
        assert_eq!(p.ecn(), 3);
        p.fill_checksum();
        p.set_dscp_incremental(0x2e);
        assert_eq!((p.dscp(), p.ecn()), (0x2e, 3));
        assert!(p.verify_checksum());
        p.set_ecn_incremental(1);
        assert_eq!((p.dscp(), p.ecn()), (0x2e, 1));
        assert!(p.verify_checksum());
        p.set_tos_incremental(0);
        assert_eq!(p.tos(), 0);
        assert_eq!(p.checksum(), 0xb861);
    }

    #[test]
    fn incremental_setters() {
        let mut b = example();
        let mut p = Ipv4Packet::new_checked(&mut b[..]).unwrap();
        p.set_ttl_incremental(255);
        assert_eq!(p.ttl(), 255);
        assert!(p.verify_checksum());
        p.set_flags_frag_incremental(FLAG_MF | 3);
        assert!(p.more_frags() && !p.dont_frag());
        assert_eq!(p.frag_offset(), 24);
        assert!(p.verify_checksum());
        let (old, new) = (p.ident(), 0x1234);
        p.set_ident(new);
        p.update_checksum(old, new);
        assert!(p.verify_checksum());
    }

    #[test]
    fn decrement_ttl_is_clicks_update() {
        // Click's DecIPTTL: ~(~old_sum + 0xFEFF), folded once.
        for c in [
            0u16, 1, 0x00ff, 0x0100, 0x0101, 0xfeff, 0xff00, 0xfffe, 0xffff,
        ] {
            for ttl in [1u8, 2, 64, 255] {
                let mut h = example();
                h[8] = ttl;
                h[10..12].copy_from_slice(&c.to_be_bytes());
                let mut p = Ipv4Packet::new_checked(&mut h[..]).unwrap();
                assert_eq!(p.decrement_ttl(), ttl - 1);
                let sum = (!u32::from(c) & 0xffff) + 0xfeff;
                assert_eq!(p.checksum(), !((sum + (sum >> 16)) as u16), "{c:#x} {ttl}");
            }
        }
    }

    fn header_strategy() -> impl Strategy<Value = Vec<u8>> {
        (0usize..=10, proptest::collection::vec(any::<u8>(), 60)).prop_map(|(nopt, mut v)| {
            let hl = 20 + 4 * nopt;
            v.truncate(hl);
            v[0] = 0x40 | (hl / 4) as u8;
            v[2] = 0;
            v[3] = hl as u8;
            v
        })
    }

    proptest! {
        #[test]
        fn never_panics(d in proptest::collection::vec(any::<u8>(), 0..100)) {
            if let Ok(p) = Ipv4Packet::new_checked(&d[..]) {
                let _ = (p.version(), p.header_len(), p.tos(), p.dscp(), p.ecn(), p.total_len());
                let _ = (p.ident(), p.dont_frag(), p.more_frags(), p.frag_offset(), p.is_fragment());
                let _ = (p.ttl(), p.protocol(), p.checksum(), p.src_addr(), p.dst_addr());
                let _ = (p.options(), p.payload(), p.payload_ref(), p.header(), p.verify_checksum());
                let _ = p.validate();
                let _ = Ipv4Repr::parse(&p);
                let mut d2 = d.clone();
                let mut p = Ipv4Packet::new_checked(&mut d2[..]).unwrap();
                p.fill_checksum();
                p.decrement_ttl();
                let _ = (p.options_mut().len(), p.payload_mut().len());
                prop_assert!(p.verify_checksum());
            }
        }

        #[test]
        fn decrement_ttl_equals_recompute(mut h in header_strategy()) {
            let mut p = Ipv4Packet::new_checked(&mut h[..]).unwrap();
            p.fill_checksum();
            let before = p.ttl();
            p.decrement_ttl();
            let inc = p.checksum();
            p.fill_checksum();
            prop_assert_eq!(inc, p.checksum());
            prop_assert_eq!(p.ttl(), before.saturating_sub(1));
        }

        #[test]
        fn incremental_setters_equal_recompute(
            mut h in header_strategy(),
            ttl in any::<u8>(),
            tos in any::<u8>(),
            ff in any::<u16>(),
        ) {
            let mut p = Ipv4Packet::new_checked(&mut h[..]).unwrap();
            p.fill_checksum();
            p.set_ttl_incremental(ttl);
            p.set_tos_incremental(tos);
            p.set_flags_frag_incremental(ff);
            let inc = p.checksum();
            p.fill_checksum();
            // Equal as ones-complement numbers (0 and 0xFFFF both zero; the
            // header's first word is never zero, so the sum never is).
            prop_assert_eq!(inc, p.checksum());
            prop_assert_eq!((p.ttl(), p.tos(), p.flags_frag()), (ttl, tos, ff));
        }

        #[test]
        fn verify_checksum_matches_general_sum(h in header_strategy()) {
            let p = Ipv4Packet::new_checked(&h[..]).unwrap();
            prop_assert_eq!(p.verify_checksum(), crate::checksum::ip_checksum(p.header()) == 0);
        }

        #[test]
        fn fixed_checked_never_panics(d in proptest::collection::vec(any::<u8>(), 0..70)) {
            let mut d = d;
            if let Ok(mut p) = Ipv4Packet::new_fixed_checked(&mut d[..]) {
                let _ = (p.version(), p.header_len(), p.tos(), p.total_len(), p.ident());
                let _ = (p.flags_frag(), p.ttl(), p.protocol(), p.checksum());
                let _ = (p.src_addr(), p.dst_addr());
                p.set_ttl_incremental(3);
                p.set_dscp_incremental(9);
                p.set_flags_frag_incremental(0);
                p.decrement_ttl();
                if p.check_header_len().is_ok() {
                    let _ = (p.header().len(), p.options().len(), p.header_mut().len());
                    p.fill_checksum();
                    prop_assert!(p.verify_checksum());
                }
            }
        }

        #[test]
        fn address_rewrite_equals_recompute(mut h in header_strategy(), new in any::<u32>()) {
            let mut p = Ipv4Packet::new_checked(&mut h[..]).unwrap();
            p.fill_checksum();
            let old = u32::from(p.src_addr());
            let inc = crate::checksum_update_u32(p.checksum(), old, new);
            p.set_src_addr(Ipv4Addr::from(new));
            p.fill_checksum();
            prop_assert_eq!(inc, p.checksum());
        }
    }
}
