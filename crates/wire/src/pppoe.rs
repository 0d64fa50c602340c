//! PPPoE (RFC 2516) and the PPP control packets carried in it (RFC 1661
//! LCP, RFC 1332 IPCP): the 6-byte PPPoE header, its discovery tags, and
//! the code/identifier/length header of a control packet with its
//! type-length-value options.
//!
//! [`PppoePacket::new_checked`] checks the version/type byte and that the
//! header's length field fits the buffer; [`PppoePacket::payload`] then
//! ends where that length says (Ethernet padding cut off). Tags and
//! options are walked by iterators that yield `Err(Malformed)` for an
//! entry running past its buffer, so a truncated frame cannot panic.

use crate::Error;

/// PPPoE ethertypes.
pub mod ethertype {
    /// Discovery stage (PADI, PADO, PADR, PADS, PADT).
    pub const DISCOVERY: u16 = 0x8863;
    /// Session stage (PPP frames).
    pub const SESSION: u16 = 0x8864;
}

/// PPPoE codes.
pub mod code {
    /// Session data.
    pub const SESSION: u8 = 0x00;
    /// Active Discovery Offer.
    pub const PADO: u8 = 0x07;
    /// Active Discovery Initiation.
    pub const PADI: u8 = 0x09;
    /// Active Discovery Request.
    pub const PADR: u8 = 0x19;
    /// Active Discovery Session-confirmation.
    pub const PADS: u8 = 0x65;
    /// Active Discovery Terminate.
    pub const PADT: u8 = 0xa7;
}

/// Discovery tag types.
pub mod tag {
    /// End-Of-List.
    pub const END_OF_LIST: u16 = 0x0000;
    /// Service-Name.
    pub const SERVICE_NAME: u16 = 0x0101;
    /// AC-Name.
    pub const AC_NAME: u16 = 0x0102;
    /// Host-Uniq.
    pub const HOST_UNIQ: u16 = 0x0103;
    /// AC-Cookie.
    pub const AC_COOKIE: u16 = 0x0104;
    /// Relay-Session-Id.
    pub const RELAY_SESSION_ID: u16 = 0x0110;
    /// Service-Name-Error.
    pub const SERVICE_NAME_ERROR: u16 = 0x0201;
    /// AC-System-Error.
    pub const AC_SYSTEM_ERROR: u16 = 0x0202;
    /// Generic-Error.
    pub const GENERIC_ERROR: u16 = 0x0203;
}

/// PPP protocol numbers.
pub mod ppp_proto {
    /// IPv4 datagrams.
    pub const IPV4: u16 = 0x0021;
    /// IP Control Protocol.
    pub const IPCP: u16 = 0x8021;
    /// Link Control Protocol.
    pub const LCP: u16 = 0xc021;
}

/// Control packet codes (LCP uses all of them, IPCP 1 to 7).
pub mod cp_code {
    /// Configure-Request.
    pub const CONF_REQ: u8 = 1;
    /// Configure-Ack.
    pub const CONF_ACK: u8 = 2;
    /// Configure-Nak.
    pub const CONF_NAK: u8 = 3;
    /// Configure-Reject.
    pub const CONF_REJ: u8 = 4;
    /// Terminate-Request.
    pub const TERM_REQ: u8 = 5;
    /// Terminate-Ack.
    pub const TERM_ACK: u8 = 6;
    /// Code-Reject.
    pub const CODE_REJ: u8 = 7;
    /// Protocol-Reject (LCP).
    pub const PROTO_REJ: u8 = 8;
    /// Echo-Request (LCP).
    pub const ECHO_REQ: u8 = 9;
    /// Echo-Reply (LCP).
    pub const ECHO_REPLY: u8 = 10;
    /// Discard-Request (LCP).
    pub const DISCARD_REQ: u8 = 11;
}

/// A PPPoE header and its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PppoePacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> PppoePacket<T> {
    /// Length of the PPPoE header.
    pub const HEADER_LEN: usize = 6;

    /// Wraps a buffer without checks; accessors panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Self {
        PppoePacket { buffer }
    }

    /// Wraps a buffer, checking the header is complete, the version and
    /// type are 1 (`Malformed` otherwise) and the length field fits
    /// (`Truncated`). No accessor panics after this.
    pub fn new_checked(buffer: T) -> Result<Self, Error> {
        let b = buffer.as_ref();
        if b.len() < Self::HEADER_LEN {
            return Err(Error::Truncated);
        }
        if b[0] != 0x11 {
            return Err(Error::Malformed);
        }
        let len = usize::from(u16::from_be_bytes([b[4], b[5]]));
        if Self::HEADER_LEN + len > b.len() {
            return Err(Error::Truncated);
        }
        Ok(PppoePacket { buffer })
    }

    /// The code (see [`code`]).
    pub fn code(&self) -> u8 {
        self.buffer.as_ref()[1]
    }

    /// The session id.
    pub fn session_id(&self) -> u16 {
        let b = self.buffer.as_ref();
        u16::from_be_bytes([b[2], b[3]])
    }

    /// The length field: payload bytes.
    pub fn length(&self) -> u16 {
        let b = self.buffer.as_ref();
        u16::from_be_bytes([b[4], b[5]])
    }

    /// The payload, as long as the length field says.
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        &b[Self::HEADER_LEN..Self::HEADER_LEN + usize::from(self.length())]
    }

    /// The discovery tags of the payload.
    pub fn tags(&self) -> Tags<'_> {
        Tags {
            data: self.payload(),
        }
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> PppoePacket<T> {
    /// Writes the whole header: version and type 1, `code`, `session`,
    /// `length`.
    pub fn set_header(&mut self, code: u8, session: u16, length: u16) {
        let b = self.buffer.as_mut();
        b[0] = 0x11;
        b[1] = code;
        b[2..4].copy_from_slice(&session.to_be_bytes());
        b[4..6].copy_from_slice(&length.to_be_bytes());
    }
}

/// Iterator over discovery tags: `(type, value)`, ending at End-Of-List or
/// the end of the payload; a tag that runs past the payload gives one
/// `Err(Malformed)` and ends the walk.
#[derive(Debug, Clone)]
pub struct Tags<'a> {
    data: &'a [u8],
}

impl<'a> Iterator for Tags<'a> {
    type Item = Result<(u16, &'a [u8]), Error>;

    fn next(&mut self) -> Option<Self::Item> {
        let d = self.data;
        if d.is_empty() {
            return None;
        }
        if d.len() < 4 {
            self.data = &[];
            return Some(Err(Error::Malformed));
        }
        let t = u16::from_be_bytes([d[0], d[1]]);
        let n = usize::from(u16::from_be_bytes([d[2], d[3]]));
        if t == tag::END_OF_LIST {
            self.data = &[];
            return None;
        }
        let Some(v) = d.get(4..4 + n) else {
            self.data = &[];
            return Some(Err(Error::Malformed));
        };
        self.data = &d[4 + n..];
        Some(Ok((t, v)))
    }
}

/// A PPP control packet (LCP, IPCP): code, identifier, length, data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> ControlPacket<T> {
    /// Length of the code/identifier/length header.
    pub const HEADER_LEN: usize = 4;

    /// Wraps a buffer, checking the header is there and its length field
    /// is at least 4 and fits the buffer. Bytes past the length are padding.
    pub fn new_checked(buffer: T) -> Result<Self, Error> {
        let b = buffer.as_ref();
        if b.len() < Self::HEADER_LEN {
            return Err(Error::Truncated);
        }
        let len = usize::from(u16::from_be_bytes([b[2], b[3]]));
        if len < Self::HEADER_LEN {
            return Err(Error::Malformed);
        }
        if len > b.len() {
            return Err(Error::Truncated);
        }
        Ok(ControlPacket { buffer })
    }

    /// The code (see [`cp_code`]).
    pub fn code(&self) -> u8 {
        self.buffer.as_ref()[0]
    }

    /// The identifier.
    pub fn identifier(&self) -> u8 {
        self.buffer.as_ref()[1]
    }

    /// The length field.
    pub fn length(&self) -> u16 {
        let b = self.buffer.as_ref();
        u16::from_be_bytes([b[2], b[3]])
    }

    /// The whole packet, as long as its length field says.
    pub fn packet(&self) -> &[u8] {
        &self.buffer.as_ref()[..usize::from(self.length())]
    }

    /// The data after the header.
    pub fn data(&self) -> &[u8] {
        &self.buffer.as_ref()[Self::HEADER_LEN..usize::from(self.length())]
    }

    /// The configuration options of the data (Configure-*).
    pub fn options(&self) -> Options<'_> {
        Options { data: self.data() }
    }
}

/// Iterator over configuration options: `(type, value, whole option)`; an
/// option with a length below 2 or past the data gives one
/// `Err(Malformed)` and ends the walk.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    data: &'a [u8],
}

/// One configuration option: its type, its value and its raw bytes.
pub type ConfigOption<'a> = (u8, &'a [u8], &'a [u8]);

impl<'a> Iterator for Options<'a> {
    type Item = Result<ConfigOption<'a>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        let d = self.data;
        if d.is_empty() {
            return None;
        }
        let n = d.get(1).map_or(0, |&n| usize::from(n));
        if n < 2 || n > d.len() {
            self.data = &[];
            return Some(Err(Error::Malformed));
        }
        self.data = &d[n..];
        Some(Ok((d[0], &d[2..n], &d[..n])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn header_and_tags() {
        // PADI with Service-Name "" and Host-Uniq 01020304, 2 padding bytes
        let b = [
            0x11, 0x09, 0, 0, 0, 12, 0x01, 0x01, 0, 0, 0x01, 0x03, 0, 4, 1, 2, 3, 4, 0xee, 0xee,
        ];
        let p = PppoePacket::new_checked(&b[..]).unwrap();
        assert_eq!(p.code(), code::PADI);
        assert_eq!(p.payload().len(), 12);
        let t: Vec<_> = p.tags().collect::<Result<_, _>>().unwrap();
        assert_eq!(
            t,
            [
                (tag::SERVICE_NAME, &[][..]),
                (tag::HOST_UNIQ, &[1, 2, 3, 4][..])
            ]
        );
        assert_eq!(
            PppoePacket::new_checked(&b[..10]).err(),
            Some(Error::Truncated)
        );
        let mut bad = b;
        bad[13] = 9; // Host-Uniq runs past the payload
        let p = PppoePacket::new_checked(&bad[..]).unwrap();
        assert!(p.tags().any(|t| t.is_err()));
        bad[0] = 0x12;
        assert_eq!(
            PppoePacket::new_checked(&bad[..]).err(),
            Some(Error::Malformed)
        );
    }

    #[test]
    fn control_options() {
        let b = [1, 7, 0, 14, 1, 4, 5, 0xd4, 5, 6, 1, 2, 3, 4, 0];
        let c = ControlPacket::new_checked(&b[..]).unwrap();
        assert_eq!((c.code(), c.identifier(), c.data().len()), (1, 7, 10));
        let o: Vec<_> = c.options().collect::<Result<_, _>>().unwrap();
        assert_eq!(o[0].0, 1);
        assert_eq!(o[0].1, &[5, 0xd4]);
        assert_eq!(o[1].2, &[5, 6, 1, 2, 3, 4]);
        let b = [1, 7, 0, 6, 1, 0];
        let c = ControlPacket::new_checked(&b[..]).unwrap();
        assert!(c.options().next().unwrap().is_err());
        assert!(ControlPacket::new_checked(&[1u8, 7, 0, 9][..]).is_err());
        assert!(ControlPacket::new_checked(&[1u8, 7, 0, 3][..]).is_err());
    }

    #[test]
    fn never_panics() {
        let mut x = 0x9e3779b97f4a7c15u64;
        for n in 0..4000usize {
            let mut b = std::vec![0u8; n % 40];
            for v in b.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *v = x as u8;
            }
            if b.len() > 1 && n % 2 == 0 {
                b[0] = 0x11;
            }
            if let Ok(p) = PppoePacket::new_checked(&b[..]) {
                let _ = (p.code(), p.session_id(), p.payload());
                for t in p.tags() {
                    let _ = t;
                }
            }
            if let Ok(c) = ControlPacket::new_checked(&b[..]) {
                let _ = (c.code(), c.identifier(), c.packet());
                for o in c.options() {
                    let _ = o;
                }
            }
        }
    }
}
