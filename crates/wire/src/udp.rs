//! UDP datagrams (RFC 768).

use core::net::Ipv4Addr;

use crate::checksum::transport_checksum;
use crate::ip_proto;
use crate::{get_u16, set_u16, Error};

mod field {
    pub const SRC_PORT: usize = 0;
    pub const DST_PORT: usize = 2;
    pub const LENGTH: usize = 4;
    pub const CHECKSUM: usize = 6;
    pub const PAYLOAD: usize = 8;
}

/// A read/write view of a UDP datagram.
///
/// After [`new_checked`](Self::new_checked) the buffer holds at least
/// `len()` bytes and `len() >= 8`; the buffer may be longer (padding), and
/// [`payload`](Self::payload) and the checksum functions stop at `len()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> UdpPacket<T> {
    /// Length of the UDP header.
    pub const HEADER_LEN: usize = field::PAYLOAD;

    /// Wrap a buffer without checks. Accessors panic if the buffer is
    /// shorter than 8 bytes (`payload()` and checksums: than `len()`).
    #[inline]
    pub const fn new_unchecked(buffer: T) -> Self {
        UdpPacket { buffer }
    }

    /// Wrap a buffer, checking the lengths (see [`check_len`](Self::check_len)).
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, Error> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Wrap a buffer that holds at least the 8-byte header, without looking
    /// at the length field (`Truncated` otherwise). Header accessors and
    /// setters cannot panic then; `payload()`, `verify_checksum()` and
    /// `fill_checksum()` need [`check_len`](Self::check_len).
    #[inline]
    pub fn new_fixed_checked(buffer: T) -> Result<Self, Error> {
        if buffer.as_ref().len() < field::PAYLOAD {
            return Err(Error::Truncated);
        }
        Ok(Self::new_unchecked(buffer))
    }

    /// `Truncated` if the buffer is shorter than 8 bytes or than `len()`;
    /// `Malformed` if `len() < 8`.
    #[inline]
    pub fn check_len(&self) -> Result<(), Error> {
        let blen = self.buffer.as_ref().len();
        if blen < field::PAYLOAD {
            return Err(Error::Truncated);
        }
        let len = self.len() as usize;
        if len < field::PAYLOAD {
            return Err(Error::Malformed);
        }
        if len > blen {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    /// Unwrap the buffer.
    #[inline]
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Source port.
    #[inline]
    pub fn src_port(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::SRC_PORT)
    }

    /// Destination port.
    #[inline]
    pub fn dst_port(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::DST_PORT)
    }

    /// Length field (header + payload, bytes).
    #[inline]
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::LENGTH)
    }

    /// Checksum field (0 means "no checksum").
    #[inline]
    pub fn checksum(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// Payload: bytes `8..len()`.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD..self.len() as usize]
    }

    /// `true` if the checksum is absent (zero) or correct for the given
    /// IPv4 pseudo-header addresses.
    #[inline]
    pub fn verify_checksum(&self, src: Ipv4Addr, dst: Ipv4Addr) -> bool {
        if self.checksum() == 0 {
            return true;
        }
        let data = &self.buffer.as_ref()[..self.len() as usize];
        transport_checksum(src, dst, ip_proto::UDP, data) == 0
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> UdpPacket<&'a T> {
    /// Payload with the lifetime of the underlying buffer.
    #[inline]
    pub fn payload_ref(&self) -> &'a [u8] {
        let data = self.buffer.as_ref();
        &data[field::PAYLOAD..get_u16(data, field::LENGTH) as usize]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> UdpPacket<T> {
    /// Set the source port.
    #[inline]
    pub fn set_src_port(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::SRC_PORT, v)
    }

    /// Set the destination port.
    #[inline]
    pub fn set_dst_port(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::DST_PORT, v)
    }

    /// Set the length field.
    #[inline]
    pub fn set_len(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::LENGTH, v)
    }

    /// Set the checksum field.
    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::CHECKSUM, v)
    }

    /// Mutable payload (`8..len()`).
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let len = self.len() as usize;
        &mut self.buffer.as_mut()[field::PAYLOAD..len]
    }

    /// Compute and store the checksum over `len()` bytes with the IPv4
    /// pseudo-header. A computed zero is sent as `0xFFFF` (RFC 768).
    #[inline]
    pub fn fill_checksum(&mut self, src: Ipv4Addr, dst: Ipv4Addr) {
        self.set_checksum(0);
        let len = self.len() as usize;
        let c = transport_checksum(src, dst, ip_proto::UDP, &self.buffer.as_ref()[..len]);
        self.set_checksum(if c == 0 { 0xffff } else { c })
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for UdpPacket<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::hex;
    use crate::{EthernetFrame, Ipv4Packet};
    use proptest::prelude::*;

    /// Captured with tcpdump on `lo`: 127.0.0.1:55830 -> 127.0.0.1:5353,
    /// payload "hello click". Loopback leaves the checksum partial (0xfe26);
    /// tcpdump reports the correct value 0x9703, which is used here.
    const UDP_FRAME: &str = "000000000000 000000000000 0800
        4500 0027 7134 4000 4011 cb8f 7f000001 7f000001
        da16 14e9 0013 9703 68656c6c6f20636c69636b";

    #[test]
    fn parse_captured() {
        let b = hex(UDP_FRAME);
        let f = EthernetFrame::new_checked(&b[..]).unwrap();
        let ip = Ipv4Packet::new_checked(f.payload()).unwrap();
        assert_eq!(ip.validate(), Ok(()));
        assert_eq!(ip.protocol(), ip_proto::UDP);
        let udp = UdpPacket::new_checked(ip.payload()).unwrap();
        assert_eq!(udp.src_port(), 55830);
        assert_eq!(udp.dst_port(), 5353);
        assert_eq!(udp.len(), 19);
        assert_eq!(udp.checksum(), 0x9703);
        assert_eq!(udp.payload(), b"hello click");
        assert_eq!(udp.payload_ref(), b"hello click");
        assert!(udp.verify_checksum(ip.src_addr(), ip.dst_addr()));
        assert!(!udp.verify_checksum(ip.src_addr(), Ipv4Addr::new(127, 0, 0, 2)));
    }

    #[test]
    fn fill_and_zero_checksum() {
        let mut b = hex(UDP_FRAME);
        let (src, dst) = (Ipv4Addr::LOCALHOST, Ipv4Addr::LOCALHOST);
        let mut udp = UdpPacket::new_checked(&mut b[34..]).unwrap();
        udp.set_checksum(0xfe26); // partial, as captured
        assert!(!udp.verify_checksum(src, dst));
        udp.fill_checksum(src, dst);
        assert_eq!(udp.checksum(), 0x9703);
        udp.set_checksum(0);
        assert!(udp.verify_checksum(src, dst));
    }

    #[test]
    fn zero_result_sent_as_ffff() {
        // Find a payload word that makes the computed checksum zero.
        let (src, dst) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
        let mut b = [0u8; 10];
        let mut udp = UdpPacket::new_unchecked(&mut b[..]);
        udp.set_src_port(1);
        udp.set_dst_port(2);
        udp.set_len(10);
        udp.fill_checksum(src, dst);
        let c = udp.checksum();
        // Putting the checksum value into the payload makes the sum 0xffff.
        udp.payload_mut().copy_from_slice(&c.to_be_bytes());
        udp.fill_checksum(src, dst);
        assert_eq!(udp.checksum(), 0xffff);
        assert!(udp.verify_checksum(src, dst));
    }

    #[test]
    fn fixed_checked() {
        assert_eq!(
            UdpPacket::new_fixed_checked(&[0u8; 7][..]).err(),
            Some(Error::Truncated)
        );
        // A length field past the buffer: the header is still readable.
        let h = [0, 53, 0, 54, 0, 99, 0x12, 0x34];
        let u = UdpPacket::new_fixed_checked(&h[..]).unwrap();
        assert_eq!(
            (u.src_port(), u.dst_port(), u.len(), u.checksum()),
            (53, 54, 99, 0x1234)
        );
        assert_eq!(u.check_len(), Err(Error::Truncated));
    }

    #[test]
    fn errors() {
        assert_eq!(UdpPacket::new_checked(&[0u8; 7][..]), Err(Error::Truncated));
        // len field 7 < 8.
        assert_eq!(
            UdpPacket::new_checked(&hex("0001 0002 0007 0000")[..]),
            Err(Error::Malformed)
        );
        // len field beyond buffer.
        assert_eq!(
            UdpPacket::new_checked(&hex("0001 0002 0009 0000")[..]),
            Err(Error::Truncated)
        );
        // Trailing padding allowed.
        let b = hex("0001 0002 0008 0000 ffff");
        let p = UdpPacket::new_checked(&b[..]).unwrap();
        assert!(p.payload().is_empty());
    }

    #[test]
    fn setters_roundtrip() {
        let mut b = [0u8; 12];
        let mut p = UdpPacket::new_unchecked(&mut b[..]);
        p.set_src_port(53);
        p.set_dst_port(1024);
        p.set_len(12);
        p.set_checksum(0x1234);
        p.payload_mut().copy_from_slice(b"abcd");
        assert_eq!(p.check_len(), Ok(()));
        assert_eq!(
            (p.src_port(), p.dst_port(), p.len(), p.checksum()),
            (53, 1024, 12, 0x1234)
        );
        assert_eq!(p.payload(), b"abcd");
        assert_eq!(p.as_ref().len(), 12);
        assert_eq!(&p.into_inner()[..4], &[0, 53, 4, 0]);
    }

    proptest! {
        #[test]
        fn never_panics(d in proptest::collection::vec(any::<u8>(), 0..24), a in any::<u32>()) {
            if let Ok(p) = UdpPacket::new_checked(&d[..]) {
                let ip = Ipv4Addr::from(a);
                let _ = (p.src_port(), p.dst_port(), p.len(), p.checksum(), p.payload(), p.payload_ref());
                let _ = p.verify_checksum(ip, ip);
                let mut d2 = d.clone();
                let mut p = UdpPacket::new_checked(&mut d2[..]).unwrap();
                p.fill_checksum(ip, ip);
                prop_assert!(p.verify_checksum(ip, ip));
                let _ = p.payload_mut();
            }
        }

        #[test]
        fn port_rewrite_incremental(mut d in proptest::collection::vec(any::<u8>(), 8..40), port in any::<u16>()) {
            let n = d.len() as u16;
            d[4..6].copy_from_slice(&n.to_be_bytes());
            let (src, dst) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
            let mut p = UdpPacket::new_checked(&mut d[..]).unwrap();
            p.fill_checksum(src, dst);
            let inc = crate::checksum_update_u16(p.checksum(), p.src_port(), port);
            p.set_src_port(port);
            p.fill_checksum(src, dst);
            // Equal, modulo UDP's 0 -> 0xffff mapping.
            let inc = if inc == 0 { 0xffff } else { inc };
            prop_assert_eq!(inc, p.checksum());
        }
    }
}
