//! ICMP for IPv4 (RFC 792).
//!
//! Type and code names as used by Click are in [`crate::names`].

use crate::checksum;
use crate::{get_u16, get_u32, set_u16, set_u32, Error};

/// ICMP message types (Click's `ICMP_*` constants in `clicknet/icmp.h`).
pub mod icmp_type {
    /// Echo reply (`echo-reply`).
    pub const ECHO_REPLY: u8 = 0;
    /// Destination unreachable (`unreachable`).
    pub const UNREACH: u8 = 3;
    /// Source quench (`sourcequench`).
    pub const SOURCE_QUENCH: u8 = 4;
    /// Redirect (`redirect`).
    pub const REDIRECT: u8 = 5;
    /// Echo request (`echo`).
    pub const ECHO: u8 = 8;
    /// Router advertisement (`routeradvert`).
    pub const ROUTER_ADVERT: u8 = 9;
    /// Router solicitation (`routersolicit`).
    pub const ROUTER_SOLICIT: u8 = 10;
    /// Time exceeded (`timeexceeded`).
    pub const TIME_EXCEEDED: u8 = 11;
    /// Parameter problem (`parameterproblem`).
    pub const PARAM_PROBLEM: u8 = 12;
    /// Timestamp request (`timestamp`).
    pub const TIMESTAMP: u8 = 13;
    /// Timestamp reply (`timestamp-reply`).
    pub const TIMESTAMP_REPLY: u8 = 14;
    /// Information request (`inforeq`).
    pub const INFO_REQUEST: u8 = 15;
    /// Information reply (`inforeq-reply`).
    pub const INFO_REPLY: u8 = 16;
    /// Address mask request (`maskreq`).
    pub const MASK_REQUEST: u8 = 17;
    /// Address mask reply (`maskreq-reply`).
    pub const MASK_REPLY: u8 = 18;
}

/// ICMP codes, grouped by type.
pub mod icmp_code {
    /// Codes for [`super::icmp_type::UNREACH`].
    pub mod unreach {
        /// Network unreachable.
        pub const NET: u8 = 0;
        /// Host unreachable.
        pub const HOST: u8 = 1;
        /// Protocol unreachable.
        pub const PROTOCOL: u8 = 2;
        /// Port unreachable.
        pub const PORT: u8 = 3;
        /// Fragmentation needed and DF set.
        pub const NEEDFRAG: u8 = 4;
        /// Source route failed.
        pub const SRCFAIL: u8 = 5;
        /// Destination network unknown.
        pub const NET_UNKNOWN: u8 = 6;
        /// Destination host unknown.
        pub const HOST_UNKNOWN: u8 = 7;
        /// Source host isolated.
        pub const ISOLATED: u8 = 8;
        /// Network administratively prohibited.
        pub const NET_PROHIB: u8 = 9;
        /// Host administratively prohibited.
        pub const HOST_PROHIB: u8 = 10;
        /// Network unreachable for TOS.
        pub const TOSNET: u8 = 11;
        /// Host unreachable for TOS.
        pub const TOSHOST: u8 = 12;
        /// Communication administratively prohibited.
        pub const FILTER_PROHIB: u8 = 13;
        /// Host precedence violation.
        pub const HOST_PRECEDENCE: u8 = 14;
        /// Precedence cutoff in effect.
        pub const PRECEDENCE_CUTOFF: u8 = 15;
    }
    /// Codes for [`super::icmp_type::REDIRECT`].
    pub mod redirect {
        /// Redirect for network.
        pub const NET: u8 = 0;
        /// Redirect for host.
        pub const HOST: u8 = 1;
        /// Redirect for TOS and network.
        pub const TOSNET: u8 = 2;
        /// Redirect for TOS and host.
        pub const TOSHOST: u8 = 3;
    }
    /// Codes for [`super::icmp_type::TIME_EXCEEDED`].
    pub mod time_exceeded {
        /// TTL exceeded in transit.
        pub const TRANSIT: u8 = 0;
        /// Fragment reassembly time exceeded.
        pub const REASSEMBLY: u8 = 1;
    }
    /// Codes for [`super::icmp_type::PARAM_PROBLEM`].
    pub mod param_problem {
        /// Pointer indicates the error.
        pub const ERRATPTR: u8 = 0;
        /// Missing a required option.
        pub const OPTABSENT: u8 = 1;
        /// Bad length.
        pub const LENGTH: u8 = 2;
    }
}

mod field {
    pub const TYPE: usize = 0;
    pub const CODE: usize = 1;
    pub const CHECKSUM: usize = 2;
    pub const REST: usize = 4;
    pub const ECHO_IDENT: usize = 4;
    pub const ECHO_SEQNO: usize = 6;
    pub const DATA: usize = 8;
}

/// A read/write view of an ICMP message. The message extends to the end of
/// the buffer (pass the IP payload).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IcmpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> IcmpPacket<T> {
    /// Length of the fixed 8-byte header (type, code, checksum, 4 bytes of
    /// type-specific data).
    pub const HEADER_LEN: usize = field::DATA;

    /// Wrap a buffer without checks. Accessors panic if it is shorter than
    /// 8 bytes.
    #[inline]
    pub const fn new_unchecked(buffer: T) -> Self {
        IcmpPacket { buffer }
    }

    /// Wrap a buffer, checking that it holds the 8-byte header.
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, Error> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// `Err(Truncated)` if the buffer is shorter than 8 bytes.
    #[inline]
    pub fn check_len(&self) -> Result<(), Error> {
        if self.buffer.as_ref().len() < field::DATA {
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

    /// Message type (see [`icmp_type`]).
    #[inline]
    pub fn msg_type(&self) -> u8 {
        self.buffer.as_ref()[field::TYPE]
    }

    /// Message code (see [`icmp_code`]).
    #[inline]
    pub fn msg_code(&self) -> u8 {
        self.buffer.as_ref()[field::CODE]
    }

    /// Checksum field.
    #[inline]
    pub fn checksum(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// The 4 type-specific header bytes as a big-endian word (e.g. the
    /// gateway address of a redirect, the next-hop MTU of a "fragmentation
    /// needed" unreachable in its low 16 bits).
    #[inline]
    pub fn rest_of_header(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::REST)
    }

    /// Echo / echo-reply (and timestamp, info, mask) identifier.
    #[inline]
    pub fn echo_ident(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::ECHO_IDENT)
    }

    /// Echo / echo-reply (and timestamp, info, mask) sequence number.
    #[inline]
    pub fn echo_seq_no(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::ECHO_SEQNO)
    }

    /// Parameter-problem pointer (first type-specific byte).
    #[inline]
    pub fn param_pointer(&self) -> u8 {
        self.buffer.as_ref()[field::REST]
    }

    /// Next-hop MTU of a "fragmentation needed" unreachable (RFC 1191).
    #[inline]
    pub fn next_hop_mtu(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::ECHO_SEQNO)
    }

    /// Everything after the 8-byte header (echo data, or the embedded IP
    /// header + 8 bytes for error messages).
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.buffer.as_ref()[field::DATA..]
    }

    /// Alias of [`data`](Self::data).
    #[inline]
    pub fn payload(&self) -> &[u8] {
        self.data()
    }

    /// `true` for error messages (unreachable, source quench, redirect,
    /// time exceeded, parameter problem), which embed the offending IP header.
    #[inline]
    pub fn is_error(&self) -> bool {
        matches!(
            self.msg_type(),
            icmp_type::UNREACH
                | icmp_type::SOURCE_QUENCH
                | icmp_type::REDIRECT
                | icmp_type::TIME_EXCEEDED
                | icmp_type::PARAM_PROBLEM
        )
    }

    /// `true` if the checksum over the whole buffer is correct.
    #[inline]
    pub fn verify_checksum(&self) -> bool {
        checksum::ip_checksum(self.buffer.as_ref()) == 0
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> IcmpPacket<&'a T> {
    /// Data with the lifetime of the underlying buffer.
    #[inline]
    pub fn data_ref(&self) -> &'a [u8] {
        &self.buffer.as_ref()[field::DATA..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> IcmpPacket<T> {
    /// Set the message type.
    #[inline]
    pub fn set_msg_type(&mut self, t: u8) {
        self.buffer.as_mut()[field::TYPE] = t;
    }

    /// Set the message code.
    #[inline]
    pub fn set_msg_code(&mut self, c: u8) {
        self.buffer.as_mut()[field::CODE] = c;
    }

    /// Set the checksum field.
    #[inline]
    pub fn set_checksum(&mut self, c: u16) {
        set_u16(self.buffer.as_mut(), field::CHECKSUM, c)
    }

    /// Set the 4 type-specific header bytes.
    #[inline]
    pub fn set_rest_of_header(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), field::REST, v)
    }

    /// Set the echo identifier.
    #[inline]
    pub fn set_echo_ident(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::ECHO_IDENT, v)
    }

    /// Set the echo sequence number.
    #[inline]
    pub fn set_echo_seq_no(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::ECHO_SEQNO, v)
    }

    /// Set the parameter-problem pointer.
    #[inline]
    pub fn set_param_pointer(&mut self, v: u8) {
        self.buffer.as_mut()[field::REST] = v;
    }

    /// Set the next-hop MTU (low 16 bits of the type-specific word).
    #[inline]
    pub fn set_next_hop_mtu(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::ECHO_SEQNO, v)
    }

    /// Mutable data after the 8-byte header.
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::DATA..]
    }

    /// Alias of [`data_mut`](Self::data_mut).
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        self.data_mut()
    }

    /// Recompute the checksum over the whole buffer.
    #[inline]
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let c = checksum::ip_checksum(self.buffer.as_ref());
        self.set_checksum(c)
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for IcmpPacket<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::hex;
    use crate::{ip_proto, EthernetFrame, Ipv4Packet};
    use proptest::prelude::*;

    /// A Linux `ping` echo request (Ethernet + IPv4 + ICMP, 98 bytes),
    /// 10.0.0.1 -> 10.0.0.2, id 0x1c46, seq 1, 56 data bytes (8-byte
    /// timestamp then 0x10..0x37).
    pub(crate) const PING: &str = "
        525400123402 525400123401 0800
        4500 0054 a6f2 4000 4001 7fb4 0a000001 0a000002
        0800 abd2 1c46 0001
        cb5f6a6500000000 2e4e0d0000000000
        101112131415161718191a1b1c1d1e1f 202122232425262728292a2b2c2d2e2f
        3031323334353637";

    #[test]
    fn parse_ping() {
        let b = hex(PING);
        assert_eq!(b.len(), 98);
        let f = EthernetFrame::new_checked(&b[..]).unwrap();
        let ip = Ipv4Packet::new_checked(f.payload()).unwrap();
        assert_eq!(ip.validate(), Ok(()));
        assert_eq!(ip.protocol(), ip_proto::ICMP);
        let icmp = IcmpPacket::new_checked(ip.payload()).unwrap();
        assert_eq!(icmp.msg_type(), icmp_type::ECHO);
        assert_eq!(icmp.msg_code(), 0);
        assert_eq!(icmp.checksum(), 0xabd2);
        assert_eq!(icmp.echo_ident(), 0x1c46);
        assert_eq!(icmp.echo_seq_no(), 1);
        assert_eq!(icmp.rest_of_header(), 0x1c46_0001);
        assert_eq!(icmp.data().len(), 56);
        assert_eq!(icmp.data_ref().len(), 56);
        assert_eq!(icmp.payload()[16], 0x10);
        assert!(!icmp.is_error());
        assert!(icmp.verify_checksum());
    }

    /// Captured with tcpdump on `lo`: the kernel's port-unreachable for a
    /// UDP datagram to 127.0.0.1:5353 (TOS 0xc0, embedded IP + UDP + data).
    const UNREACH_FRAME: &str = "000000000000 000000000000 0800
        45c0 0043 4ed9 0000 4001 2d1f 7f000001 7f000001
        0303 be37 00000000
        4500 0027 6d4b 4000 4011 cf78 7f000001 7f000001
        afdf 14e9 0013 fe26 68656c6c6f20636c69636b";

    #[test]
    fn parse_captured_unreachable() {
        let b = hex(UNREACH_FRAME);
        let ip = Ipv4Packet::new_checked(&b[14..]).unwrap();
        assert_eq!(ip.validate(), Ok(()));
        assert_eq!(ip.tos(), 0xc0);
        let icmp = IcmpPacket::new_checked(ip.payload()).unwrap();
        assert!(icmp.verify_checksum());
        assert!(icmp.is_error());
        assert_eq!(icmp.msg_type(), icmp_type::UNREACH);
        assert_eq!(icmp.msg_code(), icmp_code::unreach::PORT);
        assert_eq!(
            crate::names::icmp_type_name(icmp.msg_type()),
            Some("unreachable")
        );
        assert_eq!(
            crate::names::icmp_code_name(icmp.msg_type(), icmp.msg_code()),
            Some("port")
        );
        let inner = Ipv4Packet::new_checked(icmp.data()).unwrap();
        assert_eq!(inner.validate(), Ok(()));
        assert_eq!(inner.protocol(), ip_proto::UDP);
        let udp = crate::UdpPacket::new_checked(inner.payload()).unwrap();
        assert_eq!(udp.dst_port(), 5353);
        assert_eq!(udp.payload(), b"hello click");
    }

    #[test]
    fn make_echo_reply() {
        // Turn the request into a reply the way ICMPPingResponder does.
        let mut b = hex(PING);
        let mut icmp = IcmpPacket::new_checked(&mut b[34..]).unwrap();
        icmp.set_msg_type(icmp_type::ECHO_REPLY);
        let inc = crate::checksum_update_u16(icmp.checksum(), 0x0800, 0x0000);
        icmp.fill_checksum();
        assert_eq!(icmp.checksum(), inc);
        assert_eq!(icmp.checksum(), 0xb3d2);
        assert!(icmp.verify_checksum());
    }

    #[test]
    fn errors_and_setters() {
        assert_eq!(
            IcmpPacket::new_checked(&[0u8; 7][..]),
            Err(Error::Truncated)
        );
        let mut b = [0u8; 36];
        let mut p = IcmpPacket::new_checked(&mut b[..]).unwrap();
        p.set_msg_type(icmp_type::UNREACH);
        p.set_msg_code(icmp_code::unreach::NEEDFRAG);
        p.set_rest_of_header(0);
        p.set_next_hop_mtu(1400);
        p.data_mut()[0] = 0x45;
        p.payload_mut()[1] = 0x01;
        p.fill_checksum();
        assert!(p.verify_checksum());
        assert!(p.is_error());
        assert_eq!(p.msg_type(), 3);
        assert_eq!(p.msg_code(), 4);
        assert_eq!(p.next_hop_mtu(), 1400);
        assert_eq!(p.rest_of_header(), 1400);
        p.set_param_pointer(9);
        assert_eq!(p.param_pointer(), 9);
        p.set_echo_ident(7);
        p.set_echo_seq_no(8);
        assert_eq!((p.echo_ident(), p.echo_seq_no()), (7, 8));
        assert!(!p.verify_checksum());
        p.set_checksum(0xabcd);
        assert_eq!(p.checksum(), 0xabcd);
        assert_eq!(p.as_ref().len(), 36);
        assert_eq!(p.into_inner()[8], 0x45);
    }

    proptest! {
        #[test]
        fn never_panics(d in proptest::collection::vec(any::<u8>(), 0..20)) {
            if let Ok(p) = IcmpPacket::new_checked(&d[..]) {
                let _ = (p.msg_type(), p.msg_code(), p.checksum(), p.rest_of_header());
                let _ = (p.echo_ident(), p.echo_seq_no(), p.param_pointer(), p.next_hop_mtu());
                let _ = (p.data(), p.data_ref(), p.is_error(), p.verify_checksum());
            }
        }
    }
}
