//! The reader's error type.

use std::fmt;
use std::io;

/// Why a capture file could not be read.
///
/// `offset` is the byte offset in the input where the offending header,
/// block or record starts (or where reading failed); `record` is the 0-based
/// index of the packet record being read (the number of records returned
/// before the error).
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The underlying reader failed.
    Io {
        /// Byte offset at which the read was attempted.
        offset: u64,
        /// The I/O error.
        source: io::Error,
    },
    /// The input is empty (zero bytes): not a capture file at all.
    Empty,
    /// The first four bytes are no pcap or pcapng magic number.
    BadMagic {
        /// The first four bytes of the input.
        magic: [u8; 4],
    },
    /// A pcap file header or pcapng section header with a version this
    /// crate does not understand.
    UnsupportedVersion {
        /// Offset of the header.
        offset: u64,
        /// Major version.
        major: u16,
        /// Minor version.
        minor: u16,
    },
    /// The input ends in the middle of a header, block or record.  A clean
    /// end of input (exactly at a record/block boundary) is not an error.
    Truncated {
        /// Offset where the incomplete item starts.
        offset: u64,
        /// Index of the record being read.
        record: u64,
        /// What was being read ("file header", "record header", ...).
        what: &'static str,
        /// Bytes the item needs.
        needed: u64,
        /// Bytes that were available.
        got: u64,
    },
    /// A record or block length beyond the allowed limit (absurd lengths are
    /// rejected rather than allocated).
    TooLarge {
        /// Offset of the record header or block.
        offset: u64,
        /// Index of the record being read.
        record: u64,
        /// What the length describes ("captured length", "block length").
        what: &'static str,
        /// The length in the file.
        len: u64,
        /// The limit it exceeds.
        limit: u64,
    },
    /// A structurally invalid pcapng block (bad length, byte-order magic,
    /// option overrun, trailer mismatch, unsupported timestamp resolution...).
    Malformed {
        /// Offset of the block.
        offset: u64,
        /// Index of the record being read.
        record: u64,
        /// What is wrong.
        reason: String,
    },
    /// A pcapng packet block references an interface that no Interface
    /// Description Block of the current section defined.
    UnknownInterface {
        /// Offset of the block.
        offset: u64,
        /// Index of the record being read.
        record: u64,
        /// The interface id in the block.
        interface_id: u32,
        /// Number of interfaces defined so far in the section.
        defined: usize,
    },
}

impl Error {
    /// True if the input ended in the middle of something: a capture cut
    /// short (e.g. by a killed tcpdump).  Callers typically stop quietly.
    pub fn is_truncated(&self) -> bool {
        matches!(self, Error::Truncated { .. })
    }

    /// Byte offset the error refers to, if any.
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::Io { offset, .. }
            | Error::UnsupportedVersion { offset, .. }
            | Error::Truncated { offset, .. }
            | Error::TooLarge { offset, .. }
            | Error::Malformed { offset, .. }
            | Error::UnknownInterface { offset, .. } => Some(*offset),
            Error::Empty => Some(0),
            Error::BadMagic { .. } => Some(0),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { offset, source } => {
                write!(f, "I/O error at byte offset {offset}: {source}")
            }
            Error::Empty => write!(f, "empty input: not a pcap or pcapng file"),
            Error::BadMagic { magic } => write!(
                f,
                "not a pcap or pcapng file: bad magic {:02x}{:02x}{:02x}{:02x} at byte offset 0",
                magic[0], magic[1], magic[2], magic[3]
            ),
            Error::UnsupportedVersion {
                offset,
                major,
                minor,
            } => write!(
                f,
                "unsupported file format version {major}.{minor} at byte offset {offset}"
            ),
            Error::Truncated {
                offset,
                record,
                what,
                needed,
                got,
            } => write!(
                f,
                "truncated {what} at byte offset {offset} (record index {record}): \
                 needed {needed} bytes, only {got} available"
            ),
            Error::TooLarge {
                offset,
                record,
                what,
                len,
                limit,
            } => write!(
                f,
                "{what} {len} too large (limit {limit}) at byte offset {offset} \
                 (record index {record})"
            ),
            Error::Malformed {
                offset,
                record,
                reason,
            } => write!(
                f,
                "malformed pcapng block at byte offset {offset} (record index {record}): {reason}"
            ),
            Error::UnknownInterface {
                offset,
                record,
                interface_id,
                defined,
            } => write!(
                f,
                "pcapng packet block at byte offset {offset} (record index {record}) \
                 uses interface {interface_id}, but only {defined} interface(s) are defined"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
