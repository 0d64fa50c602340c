//! ARP for Ethernet/IPv4 (RFC 826).

use core::net::Ipv4Addr;

use crate::ethernet::{ethertype, EtherAddress};
use crate::{get_array, get_ipv4, get_u16, set_ipv4, set_u16, Error};

/// Hardware type: Ethernet.
pub const HTYPE_ETHERNET: u16 = 1;
/// Operation: request.
pub const OP_REQUEST: u16 = 1;
/// Operation: reply.
pub const OP_REPLY: u16 = 2;

mod field {
    pub const HTYPE: usize = 0;
    pub const PTYPE: usize = 2;
    pub const HLEN: usize = 4;
    pub const PLEN: usize = 5;
    pub const OPER: usize = 6;
    pub const SHA: usize = 8;
    pub const SPA: usize = 14;
    pub const THA: usize = 18;
    pub const TPA: usize = 24;
    pub const END: usize = 28;
}

/// A read/write view of an Ethernet/IPv4 ARP packet (28 bytes).
///
/// [`new_checked`](Self::new_checked) requires hardware/protocol address
/// lengths of 6/4 (it does not check the hardware and protocol *types*; see
/// [`is_ethernet_ipv4`](Self::is_ethernet_ipv4)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> ArpPacket<T> {
    /// Length of an Ethernet/IPv4 ARP packet.
    pub const LEN: usize = field::END;

    /// Wrap a buffer without checks. Accessors panic if it is shorter than
    /// 28 bytes.
    #[inline]
    pub const fn new_unchecked(buffer: T) -> Self {
        ArpPacket { buffer }
    }

    /// Wrap a buffer, checking it (see [`check_len`](Self::check_len)).
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, Error> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// `Truncated` if the buffer is shorter than 8 bytes, or than 28 bytes;
    /// `Malformed` if the address lengths are not 6 and 4.
    #[inline]
    pub fn check_len(&self) -> Result<(), Error> {
        let len = self.buffer.as_ref().len();
        if len < field::SHA {
            return Err(Error::Truncated);
        }
        if self.hardware_len() != 6 || self.protocol_len() != 4 {
            return Err(Error::Malformed);
        }
        if len < field::END {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    /// Unwrap the buffer.
    #[inline]
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Hardware type.
    #[inline]
    pub fn hardware_type(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::HTYPE)
    }

    /// Protocol type (an ethertype).
    #[inline]
    pub fn protocol_type(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::PTYPE)
    }

    /// Hardware address length.
    #[inline]
    pub fn hardware_len(&self) -> u8 {
        self.buffer.as_ref()[field::HLEN]
    }

    /// Protocol address length.
    #[inline]
    pub fn protocol_len(&self) -> u8 {
        self.buffer.as_ref()[field::PLEN]
    }

    /// `true` if hardware type is Ethernet and protocol type IPv4.
    #[inline]
    pub fn is_ethernet_ipv4(&self) -> bool {
        self.hardware_type() == HTYPE_ETHERNET && self.protocol_type() == ethertype::IPV4
    }

    /// Operation ([`OP_REQUEST`], [`OP_REPLY`]).
    #[inline]
    pub fn operation(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::OPER)
    }

    /// Sender hardware address.
    #[inline]
    pub fn sender_hardware_addr(&self) -> EtherAddress {
        EtherAddress(get_array(self.buffer.as_ref(), field::SHA))
    }

    /// Sender protocol address.
    #[inline]
    pub fn sender_protocol_addr(&self) -> Ipv4Addr {
        get_ipv4(self.buffer.as_ref(), field::SPA)
    }

    /// Target hardware address.
    #[inline]
    pub fn target_hardware_addr(&self) -> EtherAddress {
        EtherAddress(get_array(self.buffer.as_ref(), field::THA))
    }

    /// Target protocol address.
    #[inline]
    pub fn target_protocol_addr(&self) -> Ipv4Addr {
        get_ipv4(self.buffer.as_ref(), field::TPA)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ArpPacket<T> {
    /// Set the hardware type.
    #[inline]
    pub fn set_hardware_type(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::HTYPE, v)
    }

    /// Set the protocol type.
    #[inline]
    pub fn set_protocol_type(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::PTYPE, v)
    }

    /// Set the hardware address length.
    #[inline]
    pub fn set_hardware_len(&mut self, v: u8) {
        self.buffer.as_mut()[field::HLEN] = v;
    }

    /// Set the protocol address length.
    #[inline]
    pub fn set_protocol_len(&mut self, v: u8) {
        self.buffer.as_mut()[field::PLEN] = v;
    }

    /// Set hardware type, protocol type and address lengths for
    /// Ethernet/IPv4.
    #[inline]
    pub fn set_ethernet_ipv4(&mut self) {
        self.set_hardware_type(HTYPE_ETHERNET);
        self.set_protocol_type(ethertype::IPV4);
        self.set_hardware_len(6);
        self.set_protocol_len(4);
    }

    /// Set the operation.
    #[inline]
    pub fn set_operation(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::OPER, v)
    }

    /// Set the sender hardware address.
    #[inline]
    pub fn set_sender_hardware_addr(&mut self, a: EtherAddress) {
        self.buffer.as_mut()[field::SHA..field::SHA + 6].copy_from_slice(&a.0)
    }

    /// Set the sender protocol address.
    #[inline]
    pub fn set_sender_protocol_addr(&mut self, a: Ipv4Addr) {
        set_ipv4(self.buffer.as_mut(), field::SPA, a)
    }

    /// Set the target hardware address.
    #[inline]
    pub fn set_target_hardware_addr(&mut self, a: EtherAddress) {
        self.buffer.as_mut()[field::THA..field::THA + 6].copy_from_slice(&a.0)
    }

    /// Set the target protocol address.
    #[inline]
    pub fn set_target_protocol_addr(&mut self, a: Ipv4Addr) {
        set_ipv4(self.buffer.as_mut(), field::TPA, a)
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for ArpPacket<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::hex;
    use crate::EthernetFrame;
    use proptest::prelude::*;

    const ARP_REQUEST: &str = "ffffffffffff 001122334455 0806
        0001 0800 06 04 0001 001122334455 c0a80001 000000000000 c0a80002
        000000000000000000000000000000000000";

    #[test]
    fn parse_request() {
        let b = hex(ARP_REQUEST);
        let f = EthernetFrame::new_checked(&b[..]).unwrap();
        assert_eq!(f.ethertype(), ethertype::ARP);
        // Ethernet padding after the 28 ARP bytes is allowed.
        let a = ArpPacket::new_checked(f.payload()).unwrap();
        assert!(a.is_ethernet_ipv4());
        assert_eq!(a.hardware_type(), 1);
        assert_eq!(a.protocol_type(), 0x0800);
        assert_eq!((a.hardware_len(), a.protocol_len()), (6, 4));
        assert_eq!(a.operation(), OP_REQUEST);
        assert_eq!(
            a.sender_hardware_addr(),
            EtherAddress::new(0, 0x11, 0x22, 0x33, 0x44, 0x55)
        );
        assert_eq!(a.sender_protocol_addr(), Ipv4Addr::new(192, 168, 0, 1));
        assert_eq!(a.target_hardware_addr(), EtherAddress::ZERO);
        assert_eq!(a.target_protocol_addr(), Ipv4Addr::new(192, 168, 0, 2));
    }

    #[test]
    fn errors() {
        let b = hex(ARP_REQUEST);
        let p = &b[14..];
        assert_eq!(ArpPacket::new_checked(&p[..7]), Err(Error::Truncated));
        assert_eq!(ArpPacket::new_checked(&p[..27]), Err(Error::Truncated));
        assert!(ArpPacket::new_checked(&p[..28]).is_ok());
        let mut c = p.to_vec();
        c[4] = 8;
        assert_eq!(ArpPacket::new_checked(&c[..]), Err(Error::Malformed));
        let mut c = p.to_vec();
        c[5] = 16;
        assert_eq!(ArpPacket::new_checked(&c[..]), Err(Error::Malformed));
        let mut c = p.to_vec();
        c[1] = 6; // IEEE 802 hardware type: lengths fine, but not Ethernet
        assert!(!ArpPacket::new_checked(&c[..]).unwrap().is_ethernet_ipv4());
    }

    #[test]
    fn build_reply() {
        // Answer the request the way ARPResponder would.
        let req = hex(ARP_REQUEST);
        let req = ArpPacket::new_checked(&req[14..]).unwrap();
        let me = EtherAddress::new(0x52, 0x54, 0, 0x12, 0x34, 0x56);
        let mut b = [0u8; 28];
        let mut r = ArpPacket::new_unchecked(&mut b[..]);
        r.set_ethernet_ipv4();
        r.set_operation(OP_REPLY);
        r.set_sender_hardware_addr(me);
        r.set_sender_protocol_addr(req.target_protocol_addr());
        r.set_target_hardware_addr(req.sender_hardware_addr());
        r.set_target_protocol_addr(req.sender_protocol_addr());
        assert_eq!(r.check_len(), Ok(()));
        assert!(r.is_ethernet_ipv4());
        assert_eq!(r.operation(), OP_REPLY);
        assert_eq!(r.sender_hardware_addr(), me);
        assert_eq!(r.sender_protocol_addr(), Ipv4Addr::new(192, 168, 0, 2));
        assert_eq!(r.target_hardware_addr(), req.sender_hardware_addr());
        assert_eq!(r.target_protocol_addr(), Ipv4Addr::new(192, 168, 0, 1));
        assert_eq!(r.as_ref().len(), 28);
        assert_eq!(
            &r.into_inner()[..],
            &hex("0001 0800 0604 0002 525400123456 c0a80002 001122334455 c0a80001")[..]
        );
    }

    proptest! {
        #[test]
        fn never_panics(d in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Ok(a) = ArpPacket::new_checked(&d[..]) {
                let _ = (a.hardware_type(), a.protocol_type(), a.hardware_len(), a.protocol_len());
                let _ = (a.operation(), a.is_ethernet_ipv4(), a.sender_hardware_addr());
                let _ = (a.sender_protocol_addr(), a.target_hardware_addr(), a.target_protocol_addr());
            }
        }
    }
}
