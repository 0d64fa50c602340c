//! pcap / pcapng reading and writing.
//!
//! * [`PcapReader`] reads classic pcap files (either byte order, microsecond
//!   magic `0xa1b2c3d4`, nanosecond magic `0xa1b23c4d`, and the "modified"
//!   Kuznetzov magic `0xa1b2cd34`) and pcapng files (any number of sections
//!   of either byte order, any number of interfaces, `if_tsresol` /
//!   `if_tsoffset`, Enhanced / Simple / obsolete Packet Blocks; every other
//!   block type is skipped).  The format is detected from the magic number.
//! * [`PcapWriter`] writes classic pcap files readable by tcpdump/libpcap.
//!
//! The reader never panics on malformed input and never allocates more than
//! what the input actually contains (plus a small constant): lengths are
//! validated against [`DEFAULT_MAX_RECORD_LEN`] and the file's snap length,
//! and packet data is only allocated as it is read.
//!
//! ```no_run
//! use click_pcap::PcapReader;
//! let mut r = PcapReader::open("tests/data/udp-64.pcap").unwrap();
//! let mut buf = Vec::new();
//! while let Some(meta) = r.next_into(&mut buf).unwrap() {
//!     println!("{}.{:09} {} bytes", meta.ts_sec, meta.ts_nsec, buf.len());
//! }
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
mod reader;
mod writer;

pub use error::Error;
pub use reader::{Format, PcapReader, DEFAULT_MAX_RECORD_LEN, MIN_SNAPLEN_LIMIT};
pub use writer::{PcapWriter, TsPrecision, WriterOptions};

/// Link-layer header types (the `LINKTYPE_*` values of the tcpdump.org
/// registry, plus the platform-dependent `DLT_RAW` values seen in old files).
pub mod linktype {
    /// BSD loopback: 4-byte address family in the *writer's* byte order.
    pub const NULL: u32 = 0;
    /// Ethernet (10 Mb and up).
    pub const EN10MB: u32 = 1;
    /// `DLT_RAW` as numbered on most BSDs (raw IPv4/IPv6).
    pub const RAW_DLT12: u32 = 12;
    /// `DLT_RAW` as numbered on OpenBSD (raw IPv4/IPv6).
    pub const RAW_DLT14: u32 = 14;
    /// Raw IPv4 or IPv6, no link header (`LINKTYPE_RAW`).
    pub const RAW: u32 = 101;
    /// OpenBSD loopback: 4-byte address family in network byte order.
    pub const LOOP: u32 = 108;
    /// Linux "cooked" capture, version 1 (16-byte header).
    pub const LINUX_SLL: u32 = 113;
    /// Raw IPv4 only.
    pub const IPV4: u32 = 228;
    /// Raw IPv6 only.
    pub const IPV6: u32 = 229;
    /// Linux "cooked" capture, version 2 (20-byte header).
    pub const LINUX_SLL2: u32 = 276;

    /// Maps the platform-dependent raw-IP values (12, 14) to [`RAW`];
    /// returns every other value unchanged.
    pub fn normalize(lt: u32) -> u32 {
        match lt {
            RAW_DLT12 | RAW_DLT14 => RAW,
            other => other,
        }
    }

    /// True for link types whose packets start directly with an IP header.
    pub fn is_raw_ip(lt: u32) -> bool {
        matches!(lt, RAW_DLT12 | RAW_DLT14 | RAW | IPV4 | IPV6)
    }

    /// Length of the fixed link-layer header preceding the network-layer
    /// header, for the link types this crate knows (Ethernet without VLAN
    /// tags counts 14).
    pub fn header_len(lt: u32) -> Option<usize> {
        match lt {
            EN10MB => Some(14),
            NULL | LOOP => Some(4),
            LINUX_SLL => Some(16),
            LINUX_SLL2 => Some(20),
            l if is_raw_ip(l) => Some(0),
            _ => None,
        }
    }

    /// A short name for a link type (tcpdump's spelling), or `"UNKNOWN"`.
    pub fn name(lt: u32) -> &'static str {
        match lt {
            NULL => "NULL",
            EN10MB => "EN10MB",
            RAW_DLT12 | RAW_DLT14 | RAW => "RAW",
            LOOP => "LOOP",
            LINUX_SLL => "LINUX_SLL",
            IPV4 => "IPV4",
            IPV6 => "IPV6",
            LINUX_SLL2 => "LINUX_SLL2",
            _ => "UNKNOWN",
        }
    }
}

/// Everything about a record except its bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RecordMeta {
    /// Seconds since the Unix epoch (may be negative with pcapng
    /// `if_tsoffset`).  Simple Packet Blocks have no timestamp: 0.
    pub ts_sec: i64,
    /// Nanoseconds within the second, always `< 1_000_000_000`.
    pub ts_nsec: u32,
    /// Number of bytes captured (the length of the record's data).
    pub caplen: u32,
    /// Length of the packet on the wire (may exceed `caplen`).
    pub orig_len: u32,
    /// Link type of the record ([`linktype`] constants), as found in the file
    /// (not normalized).
    pub linktype: u32,
    /// pcapng interface id within the current section; 0 for classic pcap.
    pub interface_id: u32,
}

impl RecordMeta {
    /// The timestamp in nanoseconds since the epoch (saturating).
    pub fn timestamp_nanos(&self) -> i128 {
        self.ts_sec as i128 * 1_000_000_000 + self.ts_nsec as i128
    }

    /// True if the packet was truncated by the capture (`caplen < orig_len`).
    pub fn is_snapped(&self) -> bool {
        self.caplen < self.orig_len
    }
}

/// One packet record with its own copy of the data.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Record {
    /// See [`RecordMeta::ts_sec`].
    pub ts_sec: i64,
    /// See [`RecordMeta::ts_nsec`].
    pub ts_nsec: u32,
    /// See [`RecordMeta::caplen`]; equals `data.len()`.
    pub caplen: u32,
    /// See [`RecordMeta::orig_len`].
    pub orig_len: u32,
    /// See [`RecordMeta::linktype`].
    pub linktype: u32,
    /// See [`RecordMeta::interface_id`].
    pub interface_id: u32,
    /// The captured bytes.
    pub data: Vec<u8>,
}

impl Record {
    /// Builds a record from its metadata and data.
    pub fn from_parts(meta: RecordMeta, data: Vec<u8>) -> Record {
        Record {
            ts_sec: meta.ts_sec,
            ts_nsec: meta.ts_nsec,
            caplen: meta.caplen,
            orig_len: meta.orig_len,
            linktype: meta.linktype,
            interface_id: meta.interface_id,
            data,
        }
    }

    /// The record's metadata.
    pub fn meta(&self) -> RecordMeta {
        RecordMeta {
            ts_sec: self.ts_sec,
            ts_nsec: self.ts_nsec,
            caplen: self.caplen,
            orig_len: self.orig_len,
            linktype: self.linktype,
            interface_id: self.interface_id,
        }
    }
}
