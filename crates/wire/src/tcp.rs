//! TCP segments (RFC 9293).

use core::net::Ipv4Addr;

use crate::checksum::transport_checksum;
use crate::ip_proto;
use crate::{get_u16, get_u32, set_u16, set_u32, Error};

/// TCP flag bits of the flags byte (byte 13), Click's `TH_*`.
pub mod tcp_flags {
    /// FIN.
    pub const FIN: u8 = 0x01;
    /// SYN.
    pub const SYN: u8 = 0x02;
    /// RST.
    pub const RST: u8 = 0x04;
    /// PSH.
    pub const PSH: u8 = 0x08;
    /// ACK.
    pub const ACK: u8 = 0x10;
    /// URG.
    pub const URG: u8 = 0x20;
    /// ECN-echo.
    pub const ECE: u8 = 0x40;
    /// Congestion window reduced.
    pub const CWR: u8 = 0x80;
}

mod field {
    pub const SRC_PORT: usize = 0;
    pub const DST_PORT: usize = 2;
    pub const SEQ_NUM: usize = 4;
    pub const ACK_NUM: usize = 8;
    pub const DATA_OFF: usize = 12;
    pub const FLAGS: usize = 13;
    pub const WIN_SIZE: usize = 14;
    pub const CHECKSUM: usize = 16;
    pub const URGENT: usize = 18;
    pub const OPTIONS: usize = 20;
}

/// TCP option kinds.
pub mod tcp_option {
    /// End of option list.
    pub const END: u8 = 0;
    /// No-operation.
    pub const NOP: u8 = 1;
    /// Maximum segment size.
    pub const MSS: u8 = 2;
    /// Window scale.
    pub const WINDOW_SCALE: u8 = 3;
    /// SACK permitted.
    pub const SACK_PERMITTED: u8 = 4;
    /// SACK.
    pub const SACK: u8 = 5;
    /// Timestamps.
    pub const TIMESTAMP: u8 = 8;
}

/// A read/write view of a TCP segment. The segment extends to the end of the
/// buffer (pass exactly the IP payload: the checksum covers the whole buffer).
///
/// After [`new_checked`](Self::new_checked), `20 <= header_len() <=
/// buffer length` and no accessor can panic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> TcpPacket<T> {
    /// Length of a header without options.
    pub const MIN_HEADER_LEN: usize = field::OPTIONS;

    /// Wrap a buffer without checks. Accessors panic if the buffer is
    /// shorter than 20 bytes (`options()`/`payload()`: than `header_len()`).
    #[inline]
    pub const fn new_unchecked(buffer: T) -> Self {
        TcpPacket { buffer }
    }

    /// Wrap a buffer, checking the lengths (see [`check_len`](Self::check_len)).
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, Error> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Wrap a buffer that holds at least the 20-byte fixed header, without
    /// looking at the data offset (`Truncated` otherwise). Fixed-field
    /// accessors and setters cannot panic then; `options()`, `payload()`
    /// and `mss_option()` need [`check_len`](Self::check_len).
    #[inline]
    pub fn new_fixed_checked(buffer: T) -> Result<Self, Error> {
        if buffer.as_ref().len() < field::OPTIONS {
            return Err(Error::Truncated);
        }
        Ok(Self::new_unchecked(buffer))
    }

    /// `Truncated` if the buffer is shorter than 20 bytes or than
    /// `header_len()`; `Malformed` if `header_len() < 20`.
    #[inline]
    pub fn check_len(&self) -> Result<(), Error> {
        let len = self.buffer.as_ref().len();
        if len < field::OPTIONS {
            return Err(Error::Truncated);
        }
        let hl = self.header_len() as usize;
        if hl < field::OPTIONS {
            return Err(Error::Malformed);
        }
        if hl > len {
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

    /// Sequence number.
    #[inline]
    pub fn seq_number(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::SEQ_NUM)
    }

    /// Acknowledgment number.
    #[inline]
    pub fn ack_number(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::ACK_NUM)
    }

    /// Header length in bytes (data offset * 4).
    #[inline]
    pub fn header_len(&self) -> u8 {
        (self.buffer.as_ref()[field::DATA_OFF] >> 4) * 4
    }

    /// The flags byte (see [`tcp_flags`]).
    #[inline]
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS]
    }

    /// The NS (nonce sum, RFC 3540, historic) bit.
    #[inline]
    pub fn ns(&self) -> bool {
        self.buffer.as_ref()[field::DATA_OFF] & 1 != 0
    }

    /// FIN flag.
    #[inline]
    pub fn fin(&self) -> bool {
        self.flags() & tcp_flags::FIN != 0
    }

    /// SYN flag.
    #[inline]
    pub fn syn(&self) -> bool {
        self.flags() & tcp_flags::SYN != 0
    }

    /// RST flag.
    #[inline]
    pub fn rst(&self) -> bool {
        self.flags() & tcp_flags::RST != 0
    }

    /// PSH flag.
    #[inline]
    pub fn psh(&self) -> bool {
        self.flags() & tcp_flags::PSH != 0
    }

    /// ACK flag.
    #[inline]
    pub fn ack(&self) -> bool {
        self.flags() & tcp_flags::ACK != 0
    }

    /// URG flag.
    #[inline]
    pub fn urg(&self) -> bool {
        self.flags() & tcp_flags::URG != 0
    }

    /// ECE flag.
    #[inline]
    pub fn ece(&self) -> bool {
        self.flags() & tcp_flags::ECE != 0
    }

    /// CWR flag.
    #[inline]
    pub fn cwr(&self) -> bool {
        self.flags() & tcp_flags::CWR != 0
    }

    /// Window size (unscaled).
    #[inline]
    pub fn window_len(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::WIN_SIZE)
    }

    /// Checksum field.
    #[inline]
    pub fn checksum(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// Urgent pointer.
    #[inline]
    pub fn urgent_at(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::URGENT)
    }

    /// Option bytes (`header_len() - 20` of them).
    #[inline]
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[field::OPTIONS..self.header_len() as usize]
    }

    /// Payload: everything after `header_len()`.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len() as usize..]
    }

    /// Sequence space consumed: payload length plus one each for SYN and FIN.
    #[inline]
    pub fn segment_len(&self) -> usize {
        self.payload().len() + self.syn() as usize + self.fin() as usize
    }

    /// The maximum segment size option, if present and well formed.
    pub fn mss_option(&self) -> Option<u16> {
        let mut opts = self.options();
        while let [kind, rest @ ..] = opts {
            match *kind {
                tcp_option::END => return None,
                tcp_option::NOP => opts = rest,
                _ => {
                    let len = *rest.first()? as usize;
                    if len < 2 || len > opts.len() {
                        return None;
                    }
                    if *kind == tcp_option::MSS && len == 4 {
                        return Some(u16::from_be_bytes([opts[2], opts[3]]));
                    }
                    opts = &opts[len..];
                }
            }
        }
        None
    }

    /// `true` if the checksum over the whole buffer with the IPv4
    /// pseudo-header is correct.
    #[inline]
    pub fn verify_checksum(&self, src: Ipv4Addr, dst: Ipv4Addr) -> bool {
        transport_checksum(src, dst, ip_proto::TCP, self.buffer.as_ref()) == 0
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> TcpPacket<&'a T> {
    /// Payload with the lifetime of the underlying buffer.
    #[inline]
    pub fn payload_ref(&self) -> &'a [u8] {
        let data = self.buffer.as_ref();
        &data[(data[field::DATA_OFF] >> 4) as usize * 4..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> TcpPacket<T> {
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

    /// Set the sequence number.
    #[inline]
    pub fn set_seq_number(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), field::SEQ_NUM, v)
    }

    /// Set the acknowledgment number.
    #[inline]
    pub fn set_ack_number(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), field::ACK_NUM, v)
    }

    /// Set the header length in bytes (keeps the low nibble: reserved/NS).
    ///
    /// # Panics
    /// If `len` is not a multiple of 4 in `20..=60`.
    #[inline]
    pub fn set_header_len(&mut self, len: u8) {
        assert!(
            len & 3 == 0 && (20..=60).contains(&len),
            "bad TCP header length"
        );
        let b = &mut self.buffer.as_mut()[field::DATA_OFF];
        *b = (*b & 0x0f) | ((len / 4) << 4);
    }

    /// Set the 4-bit data offset field (the header length in 32-bit words)
    /// as given, keeping the low nibble; unlike
    /// [`set_header_len`](Self::set_header_len) any value is written (only
    /// its low 4 bits), as Click's `SetTCPChecksum(FIXOFF true)` does.
    #[inline]
    pub fn set_data_offset(&mut self, words: u8) {
        let b = &mut self.buffer.as_mut()[field::DATA_OFF];
        *b = (*b & 0x0f) | ((words & 0x0f) << 4);
    }

    /// Set the flags byte.
    #[inline]
    pub fn set_flags(&mut self, f: u8) {
        self.buffer.as_mut()[field::FLAGS] = f;
    }

    /// Set/clear the NS bit.
    #[inline]
    pub fn set_ns(&mut self, on: bool) {
        let b = &mut self.buffer.as_mut()[field::DATA_OFF];
        *b = (*b & !1) | on as u8;
    }

    /// Set the window size.
    #[inline]
    pub fn set_window_len(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::WIN_SIZE, v)
    }

    /// Set the checksum field.
    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::CHECKSUM, v)
    }

    /// Set the urgent pointer.
    #[inline]
    pub fn set_urgent_at(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::URGENT, v)
    }

    /// Mutable option bytes.
    #[inline]
    pub fn options_mut(&mut self) -> &mut [u8] {
        let hl = self.header_len() as usize;
        &mut self.buffer.as_mut()[field::OPTIONS..hl]
    }

    /// Mutable payload.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let hl = self.header_len() as usize;
        &mut self.buffer.as_mut()[hl..]
    }

    /// Compute and store the checksum over the whole buffer with the IPv4
    /// pseudo-header.
    #[inline]
    pub fn fill_checksum(&mut self, src: Ipv4Addr, dst: Ipv4Addr) {
        self.set_checksum(0);
        let c = transport_checksum(src, dst, ip_proto::TCP, self.buffer.as_ref());
        self.set_checksum(c)
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for TcpPacket<T> {
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

    /// Captured with tcpdump on `lo`: SYN 127.0.0.1:39002 -> :5999 with MSS,
    /// SACK-permitted, timestamps, window scale. Loopback left the checksum
    /// partial (0xfe30); tcpdump's correct value 0x5cad is used here.
    const SYN_FRAME: &str = "000000000000 000000000000 0800
        4500 003c 2e19 4000 4006 0ea1 7f000001 7f000001
        985a 176f 835b379d 00000000 a002 ffd7 5cad 0000
        0204ffd7 0402 080a 11467749 00000000 01 03030a";

    /// The RST|ACK reply, as captured (checksum 0x470b, correct).
    const RST_FRAME: &str = "000000000000 000000000000 0800
        4500 0028 0000 4000 4006 3cce 7f000001 7f000001
        176f 985a 00000000 835b379e 5014 0000 470b 0000";

    #[test]
    fn parse_syn() {
        let b = hex(SYN_FRAME);
        let f = EthernetFrame::new_checked(&b[..]).unwrap();
        let ip = Ipv4Packet::new_checked(f.payload()).unwrap();
        assert_eq!(ip.validate(), Ok(()));
        assert_eq!(ip.protocol(), ip_proto::TCP);
        let tcp = TcpPacket::new_checked(ip.payload()).unwrap();
        assert_eq!(tcp.src_port(), 39002);
        assert_eq!(tcp.dst_port(), 5999);
        assert_eq!(tcp.seq_number(), 2203793309);
        assert_eq!(tcp.ack_number(), 0);
        assert_eq!(tcp.header_len(), 40);
        assert_eq!(tcp.flags(), tcp_flags::SYN);
        assert!(tcp.syn() && !tcp.ack() && !tcp.fin() && !tcp.rst());
        assert!(!tcp.psh() && !tcp.urg() && !tcp.ece() && !tcp.cwr() && !tcp.ns());
        assert_eq!(tcp.window_len(), 65495);
        assert_eq!(tcp.checksum(), 0x5cad);
        assert_eq!(tcp.urgent_at(), 0);
        assert_eq!(tcp.options().len(), 20);
        assert_eq!(tcp.mss_option(), Some(65495));
        assert!(tcp.payload().is_empty());
        assert!(tcp.payload_ref().is_empty());
        assert_eq!(tcp.segment_len(), 1);
        assert!(tcp.verify_checksum(ip.src_addr(), ip.dst_addr()));
    }

    #[test]
    fn fixed_checked() {
        let b = hex(RST_FRAME);
        assert_eq!(
            TcpPacket::new_fixed_checked(&b[34..53]).err(),
            Some(Error::Truncated)
        );
        let mut h = b[34..54].to_vec();
        h[12] = 0x40; // data offset 16 bytes
        let t = TcpPacket::new_fixed_checked(&h[..]).unwrap();
        assert_eq!(t.check_len(), Err(Error::Malformed));
        assert_eq!(
            (t.src_port(), t.dst_port(), t.checksum()),
            (0x176f, 0x985a, 0x470b)
        );
    }

    #[test]
    fn set_data_offset_writes_any_nibble() {
        let mut b = hex(RST_FRAME);
        let mut tcp = TcpPacket::new_unchecked(&mut b[34..]);
        tcp.set_ns(true);
        tcp.set_data_offset(0);
        assert_eq!(tcp.header_len(), 0);
        assert!(tcp.ns());
        tcp.set_data_offset(0x1f);
        assert_eq!(tcp.header_len(), 60);
        assert!(tcp.ns());
        assert_eq!(tcp.check_len(), Err(Error::Truncated));
    }

    #[test]
    fn parse_rst() {
        let b = hex(RST_FRAME);
        let ip = Ipv4Packet::new_checked(&b[14..]).unwrap();
        assert_eq!(ip.validate(), Ok(()));
        let tcp = TcpPacket::new_checked(ip.payload()).unwrap();
        assert_eq!(tcp.flags(), tcp_flags::RST | tcp_flags::ACK);
        assert!(tcp.rst() && tcp.ack());
        assert_eq!(tcp.ack_number(), 2203793310);
        assert_eq!(tcp.header_len(), 20);
        assert_eq!(tcp.mss_option(), None);
        assert!(tcp.verify_checksum(ip.src_addr(), ip.dst_addr()));
    }

    #[test]
    fn fill_checksum_matches_capture() {
        let mut b = hex(SYN_FRAME);
        let mut tcp = TcpPacket::new_checked(&mut b[34..]).unwrap();
        tcp.set_checksum(0xfe30);
        let lo = Ipv4Addr::LOCALHOST;
        assert!(!tcp.verify_checksum(lo, lo));
        tcp.fill_checksum(lo, lo);
        assert_eq!(tcp.checksum(), 0x5cad);
    }

    #[test]
    fn errors() {
        assert_eq!(
            TcpPacket::new_checked(&[0u8; 19][..]),
            Err(Error::Truncated)
        );
        let mut b = [0u8; 24];
        b[12] = 0x40; // 16-byte header
        assert_eq!(TcpPacket::new_checked(&b[..]), Err(Error::Malformed));
        b[12] = 0x70; // 28-byte header > 24
        assert_eq!(TcpPacket::new_checked(&b[..]), Err(Error::Truncated));
        b[12] = 0x60;
        assert!(TcpPacket::new_checked(&b[..]).is_ok());
    }

    #[test]
    fn options_parsing_edge_cases() {
        let mk = |opts: &[u8]| {
            let mut b = std::vec![0u8; 20 + opts.len()];
            b[12] = (((20 + opts.len()) / 4) << 4) as u8;
            b[20..].copy_from_slice(opts);
            b
        };
        let b = mk(&[1, 1, 2, 4, 0x05, 0xb4, 0, 0]);
        assert_eq!(
            TcpPacket::new_checked(&b[..]).unwrap().mss_option(),
            Some(1460)
        );
        let b = mk(&[0, 2, 4, 5, 0xb4, 0, 0, 0]);
        assert_eq!(TcpPacket::new_checked(&b[..]).unwrap().mss_option(), None);
        let b = mk(&[8, 1, 0, 0]); // bad length
        assert_eq!(TcpPacket::new_checked(&b[..]).unwrap().mss_option(), None);
        let b = mk(&[1, 1, 1, 2]); // kind without length byte
        assert_eq!(TcpPacket::new_checked(&b[..]).unwrap().mss_option(), None);
        let b = mk(&[3, 9, 0, 0]); // length beyond options
        assert_eq!(TcpPacket::new_checked(&b[..]).unwrap().mss_option(), None);
    }

    #[test]
    fn setters_roundtrip() {
        let mut b = [0u8; 28];
        let mut p = TcpPacket::new_unchecked(&mut b[..]);
        p.set_src_port(80);
        p.set_dst_port(12345);
        p.set_seq_number(0xdeadbeef);
        p.set_ack_number(0x01020304);
        p.set_header_len(24);
        p.set_ns(true);
        p.set_flags(
            tcp_flags::FIN | tcp_flags::PSH | tcp_flags::URG | tcp_flags::ECE | tcp_flags::CWR,
        );
        p.set_window_len(512);
        p.set_urgent_at(3);
        p.options_mut().copy_from_slice(&[2, 4, 0x05, 0xb4]);
        p.payload_mut().copy_from_slice(b"data");
        let (s, d) = (Ipv4Addr::new(1, 1, 1, 1), Ipv4Addr::new(2, 2, 2, 2));
        p.fill_checksum(s, d);
        assert!(p.verify_checksum(s, d));
        assert_eq!(p.check_len(), Ok(()));
        assert_eq!((p.src_port(), p.dst_port()), (80, 12345));
        assert_eq!((p.seq_number(), p.ack_number()), (0xdeadbeef, 0x01020304));
        assert_eq!(p.header_len(), 24);
        assert!(p.ns() && p.fin() && p.psh() && p.urg() && p.ece() && p.cwr());
        assert!(!p.syn() && !p.ack() && !p.rst());
        assert_eq!(p.window_len(), 512);
        assert_eq!(p.urgent_at(), 3);
        assert_eq!(p.mss_option(), Some(1460));
        assert_eq!(p.payload(), b"data");
        assert_eq!(p.segment_len(), 5);
        p.set_ns(false);
        assert!(!p.ns());
        assert_eq!(p.header_len(), 24);
        p.set_checksum(1);
        assert_eq!(p.checksum(), 1);
        assert_eq!(p.as_ref().len(), 28);
        assert_eq!(p.into_inner()[12], 0x60);
    }

    proptest! {
        #[test]
        fn never_panics(d in proptest::collection::vec(any::<u8>(), 0..70), a in any::<u32>()) {
            if let Ok(p) = TcpPacket::new_checked(&d[..]) {
                let ip = Ipv4Addr::from(a);
                let _ = (p.src_port(), p.dst_port(), p.seq_number(), p.ack_number());
                let _ = (p.header_len(), p.flags(), p.ns(), p.fin(), p.syn(), p.rst());
                let _ = (p.psh(), p.ack(), p.urg(), p.ece(), p.cwr(), p.window_len());
                let _ = (p.checksum(), p.urgent_at(), p.options(), p.payload(), p.segment_len());
                let _ = (p.mss_option(), p.verify_checksum(ip, ip), p.payload_ref());
                let mut d2 = d.clone();
                let mut p = TcpPacket::new_checked(&mut d2[..]).unwrap();
                p.fill_checksum(ip, ip);
                prop_assert!(p.verify_checksum(ip, ip));
                let _ = (p.options_mut().len(), p.payload_mut().len());
            }
        }

        #[test]
        fn nat_rewrite_incremental(
            mut d in proptest::collection::vec(any::<u8>(), 20..60),
            new_addr in any::<u32>(),
            new_port in any::<u16>(),
        ) {
            d[12] = 0x50;
            let (src, dst) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
            let mut p = TcpPacket::new_checked(&mut d[..]).unwrap();
            p.fill_checksum(src, dst);
            let c = crate::checksum_update_u32(p.checksum(), u32::from(src), new_addr);
            let c = crate::checksum_update_u16(c, p.src_port(), new_port);
            p.set_src_port(new_port);
            p.fill_checksum(Ipv4Addr::from(new_addr), dst);
            prop_assert_eq!(c, p.checksum());
        }
    }
}
