//! Ethernet II frames, Ethernet addresses and the 802.1Q VLAN tag.

use core::fmt;
use core::str::FromStr;

use crate::{get_array, get_u16, set_u16, Error};

/// Well-known ethertypes (host-order values of the 16-bit type field).
pub mod ethertype {
    /// IPv4.
    pub const IPV4: u16 = 0x0800;
    /// ARP.
    pub const ARP: u16 = 0x0806;
    /// 802.1Q VLAN tag (TPID).
    pub const VLAN: u16 = 0x8100;
    /// 802.1ad service tag (the outer TPID of a QinQ frame).
    pub const QINQ: u16 = 0x88A8;
    /// IPv6.
    pub const IPV6: u16 = 0x86DD;
}

/// A 48-bit Ethernet (MAC) address.
///
/// `Display` uses Click's canonical form, `EtherAddress::unparse()`, which
/// is IEEE dash-separated upper-case hex: `00-05-4E-50-3C-1A` (Click's
/// `StringAccum << EtherAddress` prints the same). Click's
/// `unparse_colon()` form, `00:05:4E:50:3C:1A`, is available via
/// [`EtherAddress::fmt_colon`]. Both forms are accepted by `FromStr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct EtherAddress(pub [u8; 6]);

impl EtherAddress {
    /// The broadcast address `FF-FF-FF-FF-FF-FF`.
    pub const BROADCAST: EtherAddress = EtherAddress([0xff; 6]);
    /// The all-zeros address.
    pub const ZERO: EtherAddress = EtherAddress([0; 6]);

    /// Construct from six bytes.
    #[inline]
    pub const fn new(b0: u8, b1: u8, b2: u8, b3: u8, b4: u8, b5: u8) -> Self {
        EtherAddress([b0, b1, b2, b3, b4, b5])
    }

    /// Construct from a slice.
    ///
    /// # Panics
    /// If `data` is not exactly 6 bytes long.
    #[inline]
    pub fn from_bytes(data: &[u8]) -> Self {
        let mut a = [0u8; 6];
        a.copy_from_slice(data);
        EtherAddress(a)
    }

    /// The address bytes.
    #[inline]
    pub const fn as_bytes(&self) -> &[u8; 6] {
        &self.0
    }

    /// `true` for `FF-FF-FF-FF-FF-FF`.
    #[inline]
    pub fn is_broadcast(&self) -> bool {
        self.0 == [0xff; 6]
    }

    /// `true` if the group bit is set (includes broadcast).
    #[inline]
    pub const fn is_group(&self) -> bool {
        self.0[0] & 1 != 0
    }

    /// `true` for multicast (group) addresses other than broadcast.
    #[inline]
    pub fn is_multicast(&self) -> bool {
        self.is_group() && !self.is_broadcast()
    }

    /// `true` for individual (non-group) addresses.
    #[inline]
    pub const fn is_unicast(&self) -> bool {
        !self.is_group()
    }

    /// `true` for the all-zeros address.
    #[inline]
    pub fn is_zero(&self) -> bool {
        self.0 == [0; 6]
    }

    /// `true` if the locally administered bit is set.
    #[inline]
    pub const fn is_local(&self) -> bool {
        self.0[0] & 2 != 0
    }

    /// Displayable dash form `00-05-4E-50-3C-1A` (Click `unparse()` /
    /// `unparse_dash()`; same as `Display`).
    #[inline]
    pub fn fmt_dash(&self) -> EtherAddressDisplay {
        EtherAddressDisplay {
            addr: *self,
            sep: '-',
        }
    }

    /// Displayable colon form `00:05:4E:50:3C:1A` (Click `unparse_colon()`).
    #[inline]
    pub fn fmt_colon(&self) -> EtherAddressDisplay {
        EtherAddressDisplay {
            addr: *self,
            sep: ':',
        }
    }

    /// Parse Click's Ethernet address syntax: six groups of one or two hex
    /// digits separated consistently by `:` or `-` (Click's
    /// `EtherAddressArg::parse`, without the `AddressInfo` name lookup).
    pub fn parse(s: &str) -> Option<Self> {
        let mut out = [0u8; 6];
        let mut sep: Option<u8> = None;
        let mut d = 0usize; // group index
        let mut p = 0usize; // digits in the current group
        for &c in s.as_bytes() {
            let digit = match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'f' => c - b'a' + 10,
                b'A'..=b'F' => c - b'A' + 10,
                b':' | b'-' => {
                    if *sep.get_or_insert(c) != c || p == 0 || d >= 5 {
                        return None;
                    }
                    p = 0;
                    d += 1;
                    continue;
                }
                _ => return None,
            };
            if p == 2 {
                return None;
            }
            out[d] = (out[d] << 4) | digit;
            p += 1;
        }
        (d == 5 && p != 0).then_some(EtherAddress(out))
    }
}

impl From<[u8; 6]> for EtherAddress {
    #[inline]
    fn from(a: [u8; 6]) -> Self {
        EtherAddress(a)
    }
}

impl From<EtherAddress> for [u8; 6] {
    #[inline]
    fn from(a: EtherAddress) -> Self {
        a.0
    }
}

impl FromStr for EtherAddress {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        EtherAddress::parse(s).ok_or(Error::Malformed)
    }
}

impl fmt::Display for EtherAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.fmt_dash(), f)
    }
}

/// Helper returned by [`EtherAddress::fmt_dash`] / [`EtherAddress::fmt_colon`].
#[derive(Debug, Clone, Copy)]
pub struct EtherAddressDisplay {
    addr: EtherAddress,
    sep: char,
}

impl fmt::Display for EtherAddressDisplay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = &self.addr.0;
        let s = self.sep;
        write!(
            f,
            "{:02X}{s}{:02X}{s}{:02X}{s}{:02X}{s}{:02X}{s}{:02X}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

mod field {
    pub const DST: usize = 0;
    pub const SRC: usize = 6;
    pub const ETHERTYPE: usize = 12;
    pub const PAYLOAD: usize = 14;
}

/// A read/write view of an Ethernet II frame (no FCS).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    /// Length of the Ethernet header.
    pub const HEADER_LEN: usize = field::PAYLOAD;

    /// Wrap a buffer without checks. Accessors panic if the buffer is
    /// shorter than 14 bytes.
    #[inline]
    pub const fn new_unchecked(buffer: T) -> Self {
        EthernetFrame { buffer }
    }

    /// Wrap a buffer, checking that it holds a full header.
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, Error> {
        let f = Self::new_unchecked(buffer);
        f.check_len()?;
        Ok(f)
    }

    /// Length of the two addresses at the start of the header.
    pub const ADDRS_LEN: usize = field::ETHERTYPE;

    /// Wrap a buffer that holds at least the two addresses (12 bytes;
    /// `Truncated` otherwise), for elements that look at a MAC header cut
    /// right after them (Click's `HostEtherFilter`, `EtherRewrite`).
    /// [`dst_addr`](Self::dst_addr), [`src_addr`](Self::src_addr) and their
    /// setters cannot panic then; the type field and the payload need
    /// [`check_len`](Self::check_len).
    #[inline]
    pub fn new_addrs_checked(buffer: T) -> Result<Self, Error> {
        if buffer.as_ref().len() < Self::ADDRS_LEN {
            return Err(Error::Truncated);
        }
        Ok(Self::new_unchecked(buffer))
    }

    /// `Err(Truncated)` if the buffer is shorter than 14 bytes.
    #[inline]
    pub fn check_len(&self) -> Result<(), Error> {
        if self.buffer.as_ref().len() < Self::HEADER_LEN {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    /// Unwrap the buffer.
    #[inline]
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Total frame length needed for a payload of `payload_len` bytes.
    #[inline]
    pub const fn buffer_len(payload_len: usize) -> usize {
        field::PAYLOAD + payload_len
    }

    /// Destination address.
    #[inline]
    pub fn dst_addr(&self) -> EtherAddress {
        EtherAddress(get_array(self.buffer.as_ref(), field::DST))
    }

    /// Source address.
    #[inline]
    pub fn src_addr(&self) -> EtherAddress {
        EtherAddress(get_array(self.buffer.as_ref(), field::SRC))
    }

    /// The type field (see [`ethertype`]).
    #[inline]
    pub fn ethertype(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::ETHERTYPE)
    }

    /// Everything after the 14-byte header.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD..]
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> EthernetFrame<&'a T> {
    /// Payload with the lifetime of the underlying buffer.
    #[inline]
    pub fn payload_ref(&self) -> &'a [u8] {
        &self.buffer.as_ref()[field::PAYLOAD..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EthernetFrame<T> {
    /// Set the destination address.
    #[inline]
    pub fn set_dst_addr(&mut self, addr: EtherAddress) {
        self.buffer.as_mut()[field::DST..field::DST + 6].copy_from_slice(&addr.0);
    }

    /// Set the source address.
    #[inline]
    pub fn set_src_addr(&mut self, addr: EtherAddress) {
        self.buffer.as_mut()[field::SRC..field::SRC + 6].copy_from_slice(&addr.0);
    }

    /// Set the type field.
    #[inline]
    pub fn set_ethertype(&mut self, ty: u16) {
        set_u16(self.buffer.as_mut(), field::ETHERTYPE, ty)
    }

    /// Mutable payload.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD..]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for EthernetFrame<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

mod vfield {
    pub const TCI: usize = 0;
    pub const ETHERTYPE: usize = 2;
    pub const PAYLOAD: usize = 4;
}

/// A view of the 4-byte 802.1Q tag body that follows an Ethernet header whose
/// type is [`ethertype::VLAN`]: the TCI (priority, DEI, VLAN ID) and the
/// encapsulated ethertype. (Click's `click_ether_vlan` is the 14-byte
/// Ethernet header followed by this.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VlanHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> VlanHeader<T> {
    /// Length of the tag body.
    pub const HEADER_LEN: usize = vfield::PAYLOAD;

    /// Wrap a buffer without checks. Accessors panic if it is shorter than
    /// 4 bytes.
    #[inline]
    pub const fn new_unchecked(buffer: T) -> Self {
        VlanHeader { buffer }
    }

    /// Wrap a buffer, checking that it holds a full tag.
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, Error> {
        let v = Self::new_unchecked(buffer);
        v.check_len()?;
        Ok(v)
    }

    /// `Err(Truncated)` if the buffer is shorter than 4 bytes.
    #[inline]
    pub fn check_len(&self) -> Result<(), Error> {
        if self.buffer.as_ref().len() < Self::HEADER_LEN {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    /// Unwrap the buffer.
    #[inline]
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The whole 16-bit tag control information.
    #[inline]
    pub fn tci(&self) -> u16 {
        get_u16(self.buffer.as_ref(), vfield::TCI)
    }

    /// Priority code point (3 bits).
    #[inline]
    pub fn pcp(&self) -> u8 {
        (self.tci() >> 13) as u8
    }

    /// Drop eligible indicator (formerly CFI).
    #[inline]
    pub fn dei(&self) -> bool {
        self.tci() & 0x1000 != 0
    }

    /// VLAN identifier (12 bits).
    #[inline]
    pub fn vlan_id(&self) -> u16 {
        self.tci() & 0x0fff
    }

    /// The encapsulated ethertype.
    #[inline]
    pub fn ethertype(&self) -> u16 {
        get_u16(self.buffer.as_ref(), vfield::ETHERTYPE)
    }

    /// Everything after the tag.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[vfield::PAYLOAD..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> VlanHeader<T> {
    /// Set the whole TCI.
    #[inline]
    pub fn set_tci(&mut self, tci: u16) {
        set_u16(self.buffer.as_mut(), vfield::TCI, tci)
    }

    /// Set the priority code point (only the low 3 bits are used).
    #[inline]
    pub fn set_pcp(&mut self, pcp: u8) {
        let tci = (self.tci() & 0x1fff) | ((pcp as u16 & 7) << 13);
        self.set_tci(tci)
    }

    /// Set the drop eligible indicator.
    #[inline]
    pub fn set_dei(&mut self, dei: bool) {
        let tci = (self.tci() & !0x1000) | if dei { 0x1000 } else { 0 };
        self.set_tci(tci)
    }

    /// Set the VLAN ID (only the low 12 bits are used).
    #[inline]
    pub fn set_vlan_id(&mut self, id: u16) {
        let tci = (self.tci() & 0xf000) | (id & 0x0fff);
        self.set_tci(tci)
    }

    /// Set the encapsulated ethertype.
    #[inline]
    pub fn set_ethertype(&mut self, ty: u16) {
        set_u16(self.buffer.as_mut(), vfield::ETHERTYPE, ty)
    }

    /// Mutable payload.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[vfield::PAYLOAD..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::hex;
    use proptest::prelude::*;
    use std::format;
    use std::string::ToString;

    #[test]
    fn ether_address_format() {
        let a = EtherAddress::new(0x00, 0x05, 0x4e, 0x50, 0x3c, 0x1a);
        assert_eq!(a.to_string(), "00-05-4E-50-3C-1A");
        assert_eq!(a.fmt_dash().to_string(), "00-05-4E-50-3C-1A");
        assert_eq!(a.fmt_colon().to_string(), "00:05:4E:50:3C:1A");
        assert_eq!(format!("{}", EtherAddress::ZERO), "00-00-00-00-00-00");
    }

    #[test]
    fn ether_address_parse() {
        let a = EtherAddress::new(0x00, 0x05, 0x4e, 0x50, 0x3c, 0x1a);
        assert_eq!("00:05:4E:50:3C:1A".parse(), Ok(a));
        assert_eq!("00-05-4e-50-3c-1a".parse(), Ok(a));
        assert_eq!(EtherAddress::parse("0:5:4e:50:3c:1a"), Some(a));
        assert_eq!(EtherAddress::parse("0:5:4e:50:3c:1a:"), None);
        assert_eq!(EtherAddress::parse("00:05-4e:50:3c:1a"), None);
        assert_eq!(EtherAddress::parse("00:05:4e:50:3c"), None);
        assert_eq!(EtherAddress::parse("00:05:4e:50:3c:1a:00"), None);
        assert_eq!(EtherAddress::parse("000:05:4e:50:3c:1a"), None);
        assert_eq!(EtherAddress::parse("00::4e:50:3c:1a"), None);
        assert_eq!(EtherAddress::parse(":00:05:4e:50:3c"), None);
        assert_eq!(EtherAddress::parse("00:05:4e:50:3c:1g"), None);
        assert_eq!(EtherAddress::parse(""), None);
        assert_eq!("x".parse::<EtherAddress>(), Err(Error::Malformed));
    }

    #[test]
    fn ether_address_kinds() {
        assert!(EtherAddress::BROADCAST.is_broadcast());
        assert!(EtherAddress::BROADCAST.is_group());
        assert!(!EtherAddress::BROADCAST.is_multicast());
        let m = EtherAddress::new(0x01, 0x00, 0x5e, 0, 0, 1);
        assert!(m.is_multicast() && !m.is_unicast());
        let u = EtherAddress::new(0x02, 0, 0, 0, 0, 1);
        assert!(u.is_unicast() && u.is_local() && !u.is_zero());
        assert!(EtherAddress::ZERO.is_zero());
        assert_eq!(<[u8; 6]>::from(u), [2, 0, 0, 0, 0, 1]);
        assert_eq!(EtherAddress::from_bytes(&[2, 0, 0, 0, 0, 1]), u);
    }

    // An ARP request as captured on a LAN (broadcast, padded to 60 bytes).
    const ARP_FRAME: &str = "ffffffffffff 0011 2233 4455 0806
        0001 0800 06 04 0001 001122334455 c0a80001 000000000000 c0a80002
        000000000000000000000000000000000000";

    #[test]
    fn parse_frame() {
        let b = hex(ARP_FRAME);
        let f = EthernetFrame::new_checked(&b[..]).unwrap();
        assert_eq!(f.dst_addr(), EtherAddress::BROADCAST);
        assert_eq!(
            f.src_addr(),
            EtherAddress::new(0, 0x11, 0x22, 0x33, 0x44, 0x55)
        );
        assert_eq!(f.ethertype(), ethertype::ARP);
        assert_eq!(f.payload().len(), 60 - 14);
        assert_eq!(f.payload_ref().len(), 46);
        assert_eq!(f.as_ref().len(), 60);
        assert_eq!(EthernetFrame::<&[u8]>::buffer_len(46), 60);
    }

    #[test]
    fn frame_errors() {
        assert_eq!(
            EthernetFrame::new_checked(&[0u8; 13][..]),
            Err(Error::Truncated)
        );
        assert!(EthernetFrame::new_checked(&[0u8; 14][..]).is_ok());
        assert_eq!(
            VlanHeader::new_checked(&[0u8; 3][..]),
            Err(Error::Truncated)
        );
    }

    #[test]
    fn addrs_checked() {
        assert_eq!(
            EthernetFrame::new_addrs_checked(&[0u8; 11][..]),
            Err(Error::Truncated)
        );
        let mut b = [0u8; 12];
        let mut f = EthernetFrame::new_addrs_checked(&mut b[..]).unwrap();
        f.set_dst_addr(EtherAddress::BROADCAST);
        f.set_src_addr(EtherAddress::new(2, 0, 0, 0, 0, 1));
        assert_eq!(f.dst_addr(), EtherAddress::BROADCAST);
        assert_eq!(f.src_addr(), EtherAddress::new(2, 0, 0, 0, 0, 1));
        assert_eq!(f.check_len(), Err(Error::Truncated));
    }

    #[test]
    fn frame_setters() {
        let mut b = [0u8; 20];
        let mut f = EthernetFrame::new_unchecked(&mut b[..]);
        let a = EtherAddress::new(1, 2, 3, 4, 5, 6);
        f.set_dst_addr(a);
        f.set_src_addr(EtherAddress::BROADCAST);
        f.set_ethertype(ethertype::IPV6);
        f.payload_mut().copy_from_slice(&[9; 6]);
        assert_eq!(f.dst_addr(), a);
        assert_eq!(f.src_addr(), EtherAddress::BROADCAST);
        assert_eq!(f.ethertype(), 0x86dd);
        assert_eq!(f.payload(), &[9; 6]);
        let b = f.into_inner();
        assert_eq!(&b[12..14], &[0x86, 0xdd]);
    }

    #[test]
    fn vlan_tag() {
        // Ethernet + 802.1Q: PCP 5, DEI 0, VID 100, inner IPv4.
        let b = hex("0011223344550066778899aa 8100 a064 0800 45");
        let f = EthernetFrame::new_checked(&b[..]).unwrap();
        assert_eq!(f.ethertype(), ethertype::VLAN);
        let v = VlanHeader::new_checked(f.payload()).unwrap();
        assert_eq!(v.pcp(), 5);
        assert!(!v.dei());
        assert_eq!(v.vlan_id(), 100);
        assert_eq!(v.ethertype(), ethertype::IPV4);
        assert_eq!(v.payload(), &[0x45]);

        let mut t = [0u8; 4];
        let mut v = VlanHeader::new_unchecked(&mut t[..]);
        v.set_pcp(7);
        v.set_dei(true);
        v.set_vlan_id(0xfff);
        v.set_vlan_id(4094);
        v.set_ethertype(ethertype::ARP);
        assert_eq!((v.pcp(), v.dei(), v.vlan_id()), (7, true, 4094));
        v.set_dei(false);
        v.set_pcp(1);
        assert_eq!((v.pcp(), v.dei(), v.vlan_id()), (1, false, 4094));
        assert!(v.payload_mut().is_empty());
        assert_eq!(v.into_inner(), &[0x2f, 0xfe, 0x08, 0x06]);
    }

    proptest! {
        #[test]
        fn never_panics(d in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Ok(f) = EthernetFrame::new_checked(&d[..]) {
                let _ = (f.dst_addr(), f.src_addr(), f.ethertype(), f.payload());
            }
            if let Ok(v) = VlanHeader::new_checked(&d[..]) {
                let _ = (v.tci(), v.pcp(), v.dei(), v.vlan_id(), v.ethertype(), v.payload());
            }
        }

        #[test]
        fn parse_display_roundtrip(a in any::<[u8; 6]>()) {
            let a = EtherAddress(a);
            prop_assert_eq!(EtherAddress::parse(&a.to_string()), Some(a));
            prop_assert_eq!(EtherAddress::parse(&a.fmt_colon().to_string()), Some(a));
        }
    }
}
