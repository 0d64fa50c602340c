//! Zero-copy, typed views over packet headers, in the style of smoltcp's
//! `wire` module.
//!
//! Every header type is a thin wrapper around a byte buffer (`T: AsRef<[u8]>`,
//! plus `AsMut<[u8]>` for the setters):
//!
//! * [`EthernetFrame`] (and [`EtherAddress`], [`ethertype`] constants),
//! * [`VlanHeader`] (the 4-byte 802.1Q tag that follows ethertype `0x8100`),
//! * [`ArpPacket`] (Ethernet/IPv4 ARP),
//! * [`Ipv4Packet`] (with options, fragments and flags),
//! * [`IcmpPacket`] (echo id/seq, [`icmp_type`] and code constants),
//! * [`TcpPacket`] (flags, options),
//! * [`UdpPacket`],
//! * [`PppoePacket`] (RFC 2516, with its tags) and [`pppoe::ControlPacket`]
//!   (LCP/IPCP code, identifier, options).
//!
//! # Panics
//!
//! Each view has two constructors:
//!
//! * `new_checked` validates the buffer length (and the length fields inside
//!   the header). After it succeeds, **no accessor and no setter can panic**
//!   (except setters that are documented to panic on out-of-range *arguments*,
//!   e.g. [`Ipv4Packet::set_header_len`] with a value that is not a multiple
//!   of 4).
//! * `new_unchecked` does no validation; accessors then panic (slice index
//!   out of range) if the buffer is too short for the field they read.
//!
//! # Checksums
//!
//! The [`checksum`] module implements the RFC 1071 Internet checksum (summing
//! 64 bits at a time), RFC 1624 incremental updates and the TCP/UDP
//! pseudo-header.
//!
//! Click-compatible name tables (ICMP type/code names, IP protocol names,
//! well-known ports) are in [`names`].

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(test)]
extern crate std;

pub mod arp;
pub mod checksum;
pub mod ethernet;
pub mod icmp;
pub mod ipv4;
pub mod names;
pub mod pppoe;
pub mod tcp;
pub mod udp;

pub use arp::ArpPacket;
pub use checksum::{
    checksum_apply_delta, checksum_delta, checksum_update_u16, checksum_update_u32, ip_checksum,
    pseudo_header_sum,
};
pub use ethernet::{ethertype, EtherAddress, EthernetFrame, VlanHeader};
pub use icmp::{icmp_code, icmp_type, IcmpPacket};
pub use ipv4::{ip_proto, Ipv4Packet, Ipv4Repr};
pub use pppoe::PppoePacket;
pub use tcp::{tcp_flags, tcp_option, TcpPacket};
pub use udp::UdpPacket;

pub use core::net::Ipv4Addr;

use core::fmt;

/// Errors returned by the `new_checked` / `check_len` / `validate` functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Error {
    /// The buffer is shorter than the header (or than a length field inside
    /// the header claims).
    Truncated,
    /// A length or size field inside the header is inconsistent (e.g. an IPv4
    /// header length below 20 bytes, a total length smaller than the header,
    /// ARP hardware/protocol address sizes other than 6/4).
    Malformed,
    /// The IP version field is not 4.
    BadVersion,
    /// A checksum did not verify.
    BadChecksum,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::Truncated => "truncated packet",
            Error::Malformed => "malformed packet",
            Error::BadVersion => "bad IP version",
            Error::BadChecksum => "bad checksum",
        })
    }
}

impl core::error::Error for Error {}

/// Read a big-endian `u16` at `off`.
#[inline(always)]
pub(crate) fn get_u16(data: &[u8], off: usize) -> u16 {
    u16::from_be_bytes([data[off], data[off + 1]])
}

/// Write a big-endian `u16` at `off`.
#[inline(always)]
pub(crate) fn set_u16(data: &mut [u8], off: usize, value: u16) {
    data[off..off + 2].copy_from_slice(&value.to_be_bytes());
}

/// Read a big-endian `u32` at `off`.
#[inline(always)]
pub(crate) fn get_u32(data: &[u8], off: usize) -> u32 {
    u32::from_be_bytes(get_array(data, off))
}

/// Write a big-endian `u32` at `off`.
#[inline(always)]
pub(crate) fn set_u32(data: &mut [u8], off: usize, value: u32) {
    data[off..off + 4].copy_from_slice(&value.to_be_bytes());
}

/// Copy `N` bytes starting at `off` into an array.
#[inline(always)]
pub(crate) fn get_array<const N: usize>(data: &[u8], off: usize) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&data[off..off + N]);
    a
}

/// Read an IPv4 address at `off`.
#[inline(always)]
pub(crate) fn get_ipv4(data: &[u8], off: usize) -> Ipv4Addr {
    Ipv4Addr::from(get_array::<4>(data, off))
}

/// Write an IPv4 address at `off`.
#[inline(always)]
pub(crate) fn set_ipv4(data: &mut [u8], off: usize, addr: Ipv4Addr) {
    data[off..off + 4].copy_from_slice(&addr.octets());
}

#[cfg(test)]
pub(crate) mod testutil {
    /// Parse a hex string (whitespace ignored) into bytes.
    pub fn hex(s: &str) -> std::vec::Vec<u8> {
        let digits: std::vec::Vec<u8> = s
            .bytes()
            .filter(|b| !b.is_ascii_whitespace())
            .map(|b| match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                b'A'..=b'F' => b - b'A' + 10,
                _ => panic!("bad hex digit {}", b as char),
            })
            .collect();
        assert!(digits.len() & 1 == 0, "odd number of hex digits");
        digits.chunks(2).map(|c| (c[0] << 4) | c[1]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn error_display() {
        assert_eq!(Error::Truncated.to_string(), "truncated packet");
        assert_eq!(Error::Malformed.to_string(), "malformed packet");
        assert_eq!(Error::BadVersion.to_string(), "bad IP version");
        assert_eq!(Error::BadChecksum.to_string(), "bad checksum");
    }
}
