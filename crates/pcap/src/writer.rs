//! Writing classic pcap.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::{linktype, Record, RecordMeta};

/// Timestamp precision of a written file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TsPrecision {
    /// Microseconds (magic `0xa1b2c3d4`), readable by every pcap tool.
    #[default]
    Micro,
    /// Nanoseconds (magic `0xa1b23c4d`), libpcap >= 1.5.
    Nano,
}

/// Parameters of a [`PcapWriter`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriterOptions {
    /// Link type written in the file header ([`linktype`] constants).
    pub linktype: u32,
    /// Snap length: longer packets are truncated (`orig_len` keeps the real
    /// length).  0 means "no limit" and writes 262144 in the header.
    pub snaplen: u32,
    /// Timestamp precision.
    pub precision: TsPrecision,
    /// Write big-endian instead of little-endian (for tests / old tools).
    pub big_endian: bool,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            linktype: linktype::EN10MB,
            snaplen: 65535,
            precision: TsPrecision::Micro,
            big_endian: false,
        }
    }
}

/// Writes classic pcap files.  Wrap unbuffered sinks in a [`BufWriter`]
/// ([`PcapWriter::create`] does), and call [`flush`](Self::flush) or
/// [`into_inner`](Self::into_inner) at the end.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
    opts: WriterOptions,
    records: u64,
}

impl PcapWriter<BufWriter<File>> {
    /// Creates (truncates) a file and writes the pcap header.
    pub fn create<P: AsRef<Path>>(path: P, opts: WriterOptions) -> io::Result<Self> {
        PcapWriter::with_options(BufWriter::new(File::create(path)?), opts)
    }
}

impl<W: Write> PcapWriter<W> {
    /// Writes a microsecond, little-endian pcap header with the given link
    /// type and snap length.
    pub fn new(out: W, linktype: u32, snaplen: u32) -> io::Result<Self> {
        PcapWriter::with_options(
            out,
            WriterOptions {
                linktype,
                snaplen,
                ..WriterOptions::default()
            },
        )
    }

    /// Writes the pcap header described by `opts`.
    pub fn with_options(mut out: W, opts: WriterOptions) -> io::Result<Self> {
        let magic: u32 = match opts.precision {
            TsPrecision::Micro => 0xa1b2_c3d4,
            TsPrecision::Nano => 0xa1b2_3c4d,
        };
        let snaplen = if opts.snaplen == 0 {
            crate::MIN_SNAPLEN_LIMIT
        } else {
            opts.snaplen
        };
        let mut h = [0u8; 24];
        let w = Enc(opts.big_endian);
        w.u32(&mut h[0..], magic);
        w.u16(&mut h[4..], 2);
        w.u16(&mut h[6..], 4);
        // thiszone (8..12) and sigfigs (12..16) stay 0.
        w.u32(&mut h[16..], snaplen);
        w.u32(&mut h[20..], opts.linktype);
        out.write_all(&h)?;
        Ok(PcapWriter {
            out,
            opts,
            records: 0,
        })
    }

    /// Writes one packet.  `data` is truncated to the snap length;
    /// `orig_len` is raised to `data.len()` if smaller.  `ts_nsec` values of
    /// a second or more carry into the seconds.  Fails with
    /// [`io::ErrorKind::InvalidInput`] if the time is not representable
    /// (before 1970 or after 2106).
    pub fn write_packet(
        &mut self,
        ts_sec: i64,
        ts_nsec: u32,
        orig_len: u32,
        data: &[u8],
    ) -> io::Result<()> {
        let sec = ts_sec + (ts_nsec / 1_000_000_000) as i64;
        let nsec = ts_nsec % 1_000_000_000;
        let sec = u32::try_from(sec).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("timestamp {ts_sec} s not representable in pcap"),
            )
        })?;
        let frac = match self.opts.precision {
            TsPrecision::Micro => nsec / 1000,
            TsPrecision::Nano => nsec,
        };
        let mut caplen = data.len();
        if self.opts.snaplen != 0 {
            caplen = caplen.min(self.opts.snaplen as usize);
        }
        let caplen32 = u32::try_from(caplen)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "packet longer than 4 GiB"))?;
        let orig_len = orig_len.max(u32::try_from(data.len()).unwrap_or(u32::MAX));
        let mut h = [0u8; 16];
        let w = Enc(self.opts.big_endian);
        w.u32(&mut h[0..], sec);
        w.u32(&mut h[4..], frac);
        w.u32(&mut h[8..], caplen32);
        w.u32(&mut h[12..], orig_len);
        self.out.write_all(&h)?;
        self.out.write_all(&data[..caplen])?;
        self.records += 1;
        Ok(())
    }

    /// Writes a record with the timestamp and original length of `meta`
    /// (its link type and caplen are ignored).
    pub fn write_meta(&mut self, meta: &RecordMeta, data: &[u8]) -> io::Result<()> {
        self.write_packet(meta.ts_sec, meta.ts_nsec, meta.orig_len, data)
    }

    /// Writes an owned record (see [`write_meta`](Self::write_meta)).
    pub fn write_record(&mut self, rec: &Record) -> io::Result<()> {
        self.write_packet(rec.ts_sec, rec.ts_nsec, rec.orig_len, &rec.data)
    }

    /// The options the writer was created with.
    pub fn options(&self) -> &WriterOptions {
        &self.opts
    }

    /// Number of records written.
    pub fn records_written(&self) -> u64 {
        self.records
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// The underlying writer.
    pub fn get_ref(&self) -> &W {
        &self.out
    }

    /// The underlying writer, mutably (writing to it corrupts the file).
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Flushes and returns the underlying writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[derive(Clone, Copy)]
struct Enc(bool);

impl Enc {
    fn u16(self, b: &mut [u8], v: u16) {
        b[..2].copy_from_slice(&if self.0 {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        });
    }
    fn u32(self, b: &mut [u8], v: u32) {
        b[..4].copy_from_slice(&if self.0 {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        });
    }
}
