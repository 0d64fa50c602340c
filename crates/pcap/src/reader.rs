//! Reading classic pcap and pcapng.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use crate::{Error, Record, RecordMeta};

/// Default upper bound on a record's captured length and on a pcapng block
/// length: 256 MiB.
pub const DEFAULT_MAX_RECORD_LEN: u32 = 256 << 20;

/// A record may always be as long as this, whatever the file's snap length
/// says (libpcap's maximum snap length).  Longer records are accepted only
/// when the snap length allows them.
pub const MIN_SNAPLEN_LIMIT: u32 = 262_144;

/// Records up to this size are read into a pre-sized buffer; larger ones are
/// read incrementally so that a lying length field cannot make us allocate
/// memory the input does not back.
const EAGER_READ: u64 = 1 << 20;

/// Non-packet pcapng blocks that are parsed (SHB, IDB) must fit in this.
const MAX_META_BLOCK: u64 = 1 << 20;

const MAGIC_USEC: u32 = 0xa1b2_c3d4;
const MAGIC_NSEC: u32 = 0xa1b2_3c4d;
const MAGIC_MODIFIED: u32 = 0xa1b2_cd34;
const NG_SHB: u32 = 0x0a0d_0d0a;
const NG_IDB: u32 = 1;
const NG_OPB: u32 = 2;
const NG_SPB: u32 = 3;
const NG_EPB: u32 = 6;
const NG_BOM: u32 = 0x1a2b_3c4d;

/// The kind of capture file being read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Classic libpcap format.
    Pcap {
        /// Timestamps' fraction is in nanoseconds (magic `0xa1b23c4d`).
        nanosecond: bool,
        /// The file is big-endian.
        big_endian: bool,
        /// "Modified" pcap (magic `0xa1b2cd34`, 24-byte record headers).
        modified: bool,
    },
    /// pcapng; byte order may change from section to section.
    PcapNg,
}

/// How much a reader buffers: a classic record this long or shorter is
/// handed out from the buffer where it lies
/// ([`PcapReader::next_borrowed`]), without a copy.
const BUFFER: usize = 1 << 16;

/// Reads bytes through its own buffer while counting the offset.
struct Src<R> {
    inner: R,
    /// Offset of the next byte not yet consumed.
    pos: u64,
    buf: Box<[u8]>,
    /// `buf[lo..hi]` is read from `inner` and not yet consumed.
    lo: usize,
    hi: usize,
}

impl<R: Read> Read for Src<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.lo == self.hi {
            if out.len() >= self.buf.len() {
                let n = self.inner.read(out)?;
                self.pos += n as u64;
                return Ok(n);
            }
            self.lo = 0;
            self.hi = self.inner.read(&mut self.buf)?;
        }
        let n = out.len().min(self.hi - self.lo);
        out[..n].copy_from_slice(&self.buf[self.lo..self.lo + n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: Read> Src<R> {
    fn new(inner: R) -> Src<R> {
        Src {
            inner,
            pos: 0,
            buf: vec![0; BUFFER].into_boxed_slice(),
            lo: 0,
            hi: 0,
        }
    }

    /// The next `n` bytes (at most [`BUFFER`]), read into the buffer if
    /// need be but not consumed; fewer at the end of input.
    fn peek(&mut self, n: usize) -> io::Result<&[u8]> {
        if self.hi - self.lo < n {
            self.buf.copy_within(self.lo..self.hi, 0);
            self.hi -= self.lo;
            self.lo = 0;
            while self.hi < n {
                match self.inner.read(&mut self.buf[self.hi..]) {
                    Ok(0) => break,
                    Ok(k) => self.hi += k,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(&self.buf[self.lo..self.hi.min(self.lo + n)])
    }

    fn consume(&mut self, n: usize) {
        self.lo += n;
        self.pos += n as u64;
    }

    /// Reads until `buf` is full or EOF; returns the number of bytes read.
    fn fill(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        let mut n = 0;
        while n < buf.len() {
            match self.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(Error::Io {
                        offset: self.pos,
                        source: e,
                    })
                }
            }
        }
        Ok(n)
    }

    /// Reads exactly `len` bytes into `buf` (replacing its contents); returns
    /// the number of bytes actually available (< len at EOF).  Memory use is
    /// bounded by what the input really contains.
    fn read_vec(&mut self, buf: &mut Vec<u8>, len: u64) -> Result<u64, Error> {
        if len <= EAGER_READ {
            // the old contents are overwritten: no zeroing of the record's
            // bytes once the buffer has been that long (one record a packet)
            if buf.len() < len as usize {
                buf.resize(len as usize, 0);
            } else {
                buf.truncate(len as usize);
            }
            let n = self.fill(buf)?;
            buf.truncate(n);
            Ok(n as u64)
        } else {
            buf.clear();
            let start = self.pos;
            loop {
                match (&mut *self).take(len - buf.len() as u64).read_to_end(buf) {
                    Ok(_) => return Ok(buf.len() as u64),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        return Err(Error::Io {
                            offset: start + buf.len() as u64,
                            source: e,
                        })
                    }
                }
            }
        }
    }

    /// Skips `len` bytes; returns how many were skipped (< len at EOF).
    fn skip(&mut self, len: u64) -> Result<u64, Error> {
        let mut chunk = [0u8; 4096];
        let mut done = 0u64;
        while done < len {
            let want = (len - done).min(chunk.len() as u64) as usize;
            let n = self.fill(&mut chunk[..want])?;
            done += n as u64;
            if n < want {
                break;
            }
        }
        Ok(done)
    }
}

#[derive(Clone, Copy, Debug)]
enum Endian {
    Little,
    Big,
}

impl Endian {
    fn u16(self, b: &[u8]) -> u16 {
        let a = [b[0], b[1]];
        match self {
            Endian::Little => u16::from_le_bytes(a),
            Endian::Big => u16::from_be_bytes(a),
        }
    }
    fn u32(self, b: &[u8]) -> u32 {
        let a = [b[0], b[1], b[2], b[3]];
        match self {
            Endian::Little => u32::from_le_bytes(a),
            Endian::Big => u32::from_be_bytes(a),
        }
    }
    fn i64(self, b: &[u8]) -> i64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[..8]);
        match self {
            Endian::Little => i64::from_le_bytes(a),
            Endian::Big => i64::from_be_bytes(a),
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Resolution {
    /// 10^-n seconds, n <= 19.
    Decimal(u32),
    /// 2^-n seconds, n <= 63.
    Binary(u32),
}

impl Resolution {
    /// Splits a timestamp in units into (seconds, nanoseconds).
    fn split(self, units: u64) -> (u64, u32) {
        match self {
            Resolution::Decimal(e) => {
                let per = 10u64.pow(e);
                let (sec, frac) = (units / per, units % per);
                let nsec = if e <= 9 {
                    frac * 10u64.pow(9 - e)
                } else {
                    frac / 10u64.pow(e - 9)
                };
                (sec, nsec as u32)
            }
            Resolution::Binary(e) => {
                let sec = units >> e;
                let frac = units & ((1u64 << e) - 1);
                let nsec = ((frac as u128 * 1_000_000_000) >> e) as u32;
                (sec, nsec)
            }
        }
    }
}

#[derive(Clone, Debug)]
struct Interface {
    linktype: u32,
    snaplen: u32,
    resolution: Resolution,
    ts_offset: i64,
}

#[derive(Debug)]
struct Classic {
    endian: Endian,
    nanosecond: bool,
    modified: bool,
    snaplen: u32,
    linktype: u32,
}

#[derive(Debug)]
struct Ng {
    endian: Endian,
    interfaces: Vec<Interface>,
}

#[derive(Debug)]
enum State {
    Classic(Classic),
    Ng(Ng),
}

/// A classic record header's captured length and metadata.
fn classic_meta(endian: Endian, nanosecond: bool, linktype: u32, h: &[u8]) -> (u32, RecordMeta) {
    let sec = endian.u32(&h[0..]);
    let frac = endian.u32(&h[4..]) as u64;
    let caplen = endian.u32(&h[8..]);
    let nsec = if nanosecond { frac } else { frac * 1000 };
    let meta = RecordMeta {
        ts_sec: sec as i64 + (nsec / 1_000_000_000) as i64,
        ts_nsec: (nsec % 1_000_000_000) as u32,
        caplen,
        orig_len: endian.u32(&h[12..]),
        linktype,
        interface_id: 0,
    };
    (caplen, meta)
}

/// Reader for classic pcap and pcapng capture files.
///
/// The reader buffers its source itself (64 KiB), so a [`BufReader`](std::io::BufReader)
/// around a file gains nothing.  Iterating yields owned [`Record`]s;
/// [`PcapReader::next_into`] and [`PcapReader::next_borrowed`] reuse a
/// buffer.  After an error or the end of input, every further call returns
/// `Ok(None)`.
pub struct PcapReader<R> {
    src: Src<R>,
    state: State,
    format: Format,
    records: u64,
    max_len: u32,
    done: bool,
    buf: Vec<u8>,
}

impl<R> std::fmt::Debug for PcapReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PcapReader")
            .field("format", &self.format)
            .field("offset", &self.src.pos)
            .field("records", &self.records)
            .finish_non_exhaustive()
    }
}

impl PcapReader<File> {
    /// Opens a capture file.
    pub fn open<P: AsRef<Path>>(path: P) -> Result<Self, Error> {
        let f = File::open(path).map_err(|e| Error::Io {
            offset: 0,
            source: e,
        })?;
        PcapReader::new(f)
    }
}

impl<R: Read> PcapReader<R> {
    /// Reads the file header (pcap) or first section header (pcapng).
    pub fn new(inner: R) -> Result<Self, Error> {
        let mut src = Src::new(inner);
        let mut magic = [0u8; 4];
        let n = src.fill(&mut magic)?;
        if n == 0 {
            return Err(Error::Empty);
        }
        if n < 4 {
            return Err(Error::Truncated {
                offset: 0,
                record: 0,
                what: "file header",
                needed: 4,
                got: n as u64,
            });
        }
        let le = u32::from_le_bytes(magic);
        let be = u32::from_be_bytes(magic);
        let mut reader = PcapReader {
            src,
            state: State::Ng(Ng {
                endian: Endian::Little,
                interfaces: Vec::new(),
            }),
            format: Format::PcapNg,
            records: 0,
            max_len: DEFAULT_MAX_RECORD_LEN,
            done: false,
            buf: Vec::new(),
        };
        if le == NG_SHB {
            reader.read_shb(0)?;
            return Ok(reader);
        }
        let (endian, m) = match (le, be) {
            (MAGIC_USEC | MAGIC_NSEC | MAGIC_MODIFIED, _) => (Endian::Little, le),
            (_, MAGIC_USEC | MAGIC_NSEC | MAGIC_MODIFIED) => (Endian::Big, be),
            _ => return Err(Error::BadMagic { magic }),
        };
        let mut h = [0u8; 20];
        let n = reader.src.fill(&mut h)?;
        if n < h.len() {
            return Err(Error::Truncated {
                offset: 0,
                record: 0,
                what: "file header",
                needed: 24,
                got: 4 + n as u64,
            });
        }
        let (major, minor) = (endian.u16(&h[0..]), endian.u16(&h[2..]));
        if major != 2 {
            return Err(Error::UnsupportedVersion {
                offset: 0,
                major,
                minor,
            });
        }
        let classic = Classic {
            endian,
            nanosecond: m == MAGIC_NSEC,
            modified: m == MAGIC_MODIFIED,
            snaplen: endian.u32(&h[12..]),
            // The upper bits carry FCS information (LINKTYPE_EXT).
            linktype: endian.u32(&h[16..]) & 0x03ff_ffff,
        };
        reader.format = Format::Pcap {
            nanosecond: classic.nanosecond,
            big_endian: matches!(endian, Endian::Big),
            modified: classic.modified,
        };
        reader.state = State::Classic(classic);
        Ok(reader)
    }

    /// Sets the largest captured length (and pcapng block length) accepted,
    /// default [`DEFAULT_MAX_RECORD_LEN`].
    pub fn set_max_record_len(&mut self, max: u32) {
        self.max_len = max;
    }

    /// The detected file format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Link type of the file (classic pcap), or of interface 0 of the current
    /// pcapng section if it has been read yet.
    pub fn linktype(&self) -> Option<u32> {
        match &self.state {
            State::Classic(c) => Some(c.linktype),
            State::Ng(ng) => ng.interfaces.first().map(|i| i.linktype),
        }
    }

    /// Snap length of the file (classic pcap), or of interface 0 of the
    /// current pcapng section if it has been read yet.
    pub fn snaplen(&self) -> Option<u32> {
        match &self.state {
            State::Classic(c) => Some(c.snaplen),
            State::Ng(ng) => ng.interfaces.first().map(|i| i.snaplen),
        }
    }

    /// Number of records returned so far.
    pub fn records_read(&self) -> u64 {
        self.records
    }

    /// Number of bytes consumed from the input so far.
    pub fn offset(&self) -> u64 {
        self.src.pos
    }

    /// The underlying reader.
    pub fn get_ref(&self) -> &R {
        &self.src.inner
    }

    /// Returns the underlying reader.
    pub fn into_inner(self) -> R {
        self.src.inner
    }

    /// Reads the next record's data into `buf` (replacing its contents, and
    /// reusing its allocation) and returns its metadata, or `Ok(None)` at
    /// the end of input.
    pub fn next_into(&mut self, buf: &mut Vec<u8>) -> Result<Option<RecordMeta>, Error> {
        if self.done {
            return Ok(None);
        }
        let r = match self.state {
            State::Classic(_) => self.next_classic(buf),
            State::Ng(_) => self.next_ng(buf),
        };
        match r {
            Ok(Some(meta)) => {
                self.records += 1;
                Ok(Some(meta))
            }
            other => {
                self.done = true;
                other
            }
        }
    }

    /// Like [`next_into`](Self::next_into), using an internal buffer: the
    /// returned slice is valid until the next call.
    pub fn next_borrowed(&mut self) -> Result<Option<(RecordMeta, &[u8])>, Error> {
        if let Some((meta, lo, hi)) = self.next_buffered() {
            return Ok(Some((meta, &self.src.buf[lo..hi])));
        }
        let mut buf = std::mem::take(&mut self.buf);
        let r = self.next_into(&mut buf);
        self.buf = buf;
        match r {
            Ok(Some(meta)) => Ok(Some((meta, &self.buf))),
            Ok(None) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A classic record that lies whole in the source's buffer (read into
    /// it if need be): its metadata and where its data is, the record
    /// consumed. `None` leaves everything else — pcapng, the end of
    /// input, an error, a record too long or longer than the buffer — to
    /// the copying path, which reads the same bytes again from the buffer
    /// and reports what is wrong.
    fn next_buffered(&mut self) -> Option<(RecordMeta, usize, usize)> {
        let State::Classic(c) = &self.state else {
            return None;
        };
        if self.done {
            return None;
        }
        let (endian, nanosecond, linktype) = (c.endian, c.nanosecond, c.linktype);
        let hlen = if c.modified { 24 } else { 16 };
        let limit = self.caplen_limit(c.snaplen);
        let h = self.src.peek(hlen).ok()?;
        if h.len() < hlen {
            return None;
        }
        let (caplen, meta) = classic_meta(endian, nanosecond, linktype, h);
        let end = hlen + caplen as usize;
        if caplen > limit || end > BUFFER || self.src.peek(end).ok()?.len() < end {
            return None;
        }
        let lo = self.src.lo;
        self.src.consume(end);
        self.records += 1;
        Some((meta, lo + hlen, lo + end))
    }

    /// Reads the next record as an owned [`Record`].
    pub fn next_record(&mut self) -> Result<Option<Record>, Error> {
        let mut data = Vec::new();
        Ok(self
            .next_into(&mut data)?
            .map(|meta| Record::from_parts(meta, data)))
    }

    fn caplen_limit(&self, snaplen: u32) -> u32 {
        snaplen.max(MIN_SNAPLEN_LIMIT).min(self.max_len)
    }

    fn truncated(&self, offset: u64, what: &'static str, needed: u64, got: u64) -> Error {
        Error::Truncated {
            offset,
            record: self.records,
            what,
            needed,
            got,
        }
    }

    fn malformed(&self, offset: u64, reason: String) -> Error {
        Error::Malformed {
            offset,
            record: self.records,
            reason,
        }
    }

    fn next_classic(&mut self, buf: &mut Vec<u8>) -> Result<Option<RecordMeta>, Error> {
        let State::Classic(c) = &self.state else {
            return Ok(None);
        };
        let (endian, nanosecond, snaplen, linktype) =
            (c.endian, c.nanosecond, c.snaplen, c.linktype);
        let hlen = if c.modified { 24 } else { 16 };
        let start = self.src.pos;
        let mut h = [0u8; 24];
        let n = self.src.fill(&mut h[..hlen])?;
        if n == 0 {
            return Ok(None);
        }
        if n < hlen {
            return Err(self.truncated(start, "record header", hlen as u64, n as u64));
        }
        let (caplen, meta) = classic_meta(endian, nanosecond, linktype, &h);
        let limit = self.caplen_limit(snaplen);
        if caplen > limit {
            return Err(Error::TooLarge {
                offset: start,
                record: self.records,
                what: "captured length",
                len: caplen as u64,
                limit: limit as u64,
            });
        }
        let got = self.src.read_vec(buf, caplen as u64)?;
        if got < caplen as u64 {
            return Err(self.truncated(
                start,
                "packet data",
                hlen as u64 + caplen as u64,
                hlen as u64 + got,
            ));
        }
        Ok(Some(meta))
    }

    /// Reads a Section Header Block whose 4-byte type (at `start`) has
    /// already been consumed.
    fn read_shb(&mut self, start: u64) -> Result<(), Error> {
        let mut h = [0u8; 8];
        let n = self.src.fill(&mut h)?;
        if n < h.len() {
            return Err(self.truncated(start, "section header block", 12, 4 + n as u64));
        }
        let endian = match u32::from_le_bytes([h[4], h[5], h[6], h[7]]) {
            NG_BOM => Endian::Little,
            x if x.swap_bytes() == NG_BOM => Endian::Big,
            x => {
                return Err(self.malformed(
                    start,
                    format!("bad byte-order magic {x:#010x} in section header"),
                ))
            }
        };
        let total = endian.u32(&h[0..]) as u64;
        if total < 28 || total & 3 != 0 {
            return Err(self.malformed(start, format!("bad section header block length {total}")));
        }
        if total > MAX_META_BLOCK {
            return Err(Error::TooLarge {
                offset: start,
                record: self.records,
                what: "section header block length",
                len: total,
                limit: MAX_META_BLOCK,
            });
        }
        let mut body = Vec::new();
        let need = total - 12;
        let got = self.src.read_vec(&mut body, need)?;
        if got < need {
            return Err(self.truncated(start, "section header block", total, 12 + got));
        }
        let (major, minor) = (endian.u16(&body[0..]), endian.u16(&body[2..]));
        if major != 1 {
            return Err(Error::UnsupportedVersion {
                offset: start,
                major,
                minor,
            });
        }
        let trailer = endian.u32(&body[body.len() - 4..]) as u64;
        if trailer != total {
            return Err(self.malformed(
                start,
                format!("block trailer length {trailer} differs from header length {total}"),
            ));
        }
        self.state = State::Ng(Ng {
            endian,
            interfaces: Vec::new(),
        });
        Ok(())
    }

    fn read_idb(&mut self, start: u64, endian: Endian, total: u64) -> Result<(), Error> {
        if total < 20 {
            return Err(self.malformed(
                start,
                format!("interface description block too short ({total} bytes)"),
            ));
        }
        if total > MAX_META_BLOCK {
            return Err(Error::TooLarge {
                offset: start,
                record: self.records,
                what: "interface description block length",
                len: total,
                limit: MAX_META_BLOCK,
            });
        }
        let mut body = Vec::new();
        let need = total - 8;
        let got = self.src.read_vec(&mut body, need)?;
        if got < need {
            return Err(self.truncated(start, "interface description block", total, 8 + got));
        }
        self.check_trailer(start, endian, &body[body.len() - 4..], total)?;
        let body = &body[..body.len() - 4];
        let mut iface = Interface {
            linktype: endian.u16(&body[0..]) as u32,
            snaplen: endian.u32(&body[4..]),
            resolution: Resolution::Decimal(6),
            ts_offset: 0,
        };
        let mut opts = &body[8..];
        while opts.len() >= 4 {
            let code = endian.u16(&opts[0..]);
            let len = endian.u16(&opts[2..]) as usize;
            if code == 0 {
                break;
            }
            let padded = (len + 3) & !3;
            if 4 + padded > opts.len() {
                return Err(self.malformed(
                    start,
                    format!("option {code} (length {len}) runs past the end of the block"),
                ));
            }
            let val = &opts[4..4 + len];
            match code {
                9 if !val.is_empty() => {
                    let v = val[0];
                    iface.resolution =
                        if v & 0x80 != 0 {
                            let e = (v & 0x7f) as u32;
                            if e > 63 {
                                return Err(self
                                    .malformed(start, format!("unsupported if_tsresol {v:#04x}")));
                            }
                            Resolution::Binary(e)
                        } else {
                            let e = v as u32;
                            if e > 19 {
                                return Err(self
                                    .malformed(start, format!("unsupported if_tsresol {v:#04x}")));
                            }
                            Resolution::Decimal(e)
                        };
                }
                14 if val.len() == 8 => iface.ts_offset = endian.i64(val),
                _ => {}
            }
            opts = &opts[4 + padded..];
        }
        if let State::Ng(ng) = &mut self.state {
            ng.interfaces.push(iface);
        }
        Ok(())
    }

    fn check_trailer(&self, start: u64, endian: Endian, b: &[u8], total: u64) -> Result<(), Error> {
        let trailer = endian.u32(b) as u64;
        if trailer != total {
            return Err(self.malformed(
                start,
                format!("block trailer length {trailer} differs from header length {total}"),
            ));
        }
        Ok(())
    }

    fn next_ng(&mut self, buf: &mut Vec<u8>) -> Result<Option<RecordMeta>, Error> {
        loop {
            let start = self.src.pos;
            let mut h = [0u8; 8];
            let n = self.src.fill(&mut h[..4])?;
            if n == 0 {
                return Ok(None);
            }
            if n < 4 {
                return Err(self.truncated(start, "block header", 8, n as u64));
            }
            let endian = match &self.state {
                State::Ng(ng) => ng.endian,
                State::Classic(_) => return Ok(None),
            };
            // The SHB type is a palindrome: recognizable in either byte order.
            if u32::from_le_bytes([h[0], h[1], h[2], h[3]]) == NG_SHB {
                self.read_shb(start)?;
                continue;
            }
            let n = self.src.fill(&mut h[4..])?;
            if n < 4 {
                return Err(self.truncated(start, "block header", 8, 4 + n as u64));
            }
            let btype = endian.u32(&h[0..]);
            let total = endian.u32(&h[4..]) as u64;
            if total < 12 || total & 3 != 0 {
                return Err(self.malformed(
                    start,
                    format!("bad block length {total} for block type {btype:#x}"),
                ));
            }
            let block_limit = self.max_len as u64 + 65_536;
            if total > block_limit {
                return Err(Error::TooLarge {
                    offset: start,
                    record: self.records,
                    what: "block length",
                    len: total,
                    limit: block_limit,
                });
            }
            match btype {
                NG_IDB => self.read_idb(start, endian, total)?,
                NG_EPB | NG_OPB | NG_SPB => {
                    return self
                        .read_packet_block(start, endian, btype, total, buf)
                        .map(Some)
                }
                _ => {
                    let need = total - 12;
                    let got = self.src.skip(need)?;
                    if got < need {
                        return Err(self.truncated(start, "block", total, 8 + got));
                    }
                    let mut t = [0u8; 4];
                    let n = self.src.fill(&mut t)?;
                    if n < 4 {
                        return Err(self.truncated(start, "block", total, total - 4 + n as u64));
                    }
                    self.check_trailer(start, endian, &t, total)?;
                }
            }
        }
    }

    fn read_packet_block(
        &mut self,
        start: u64,
        endian: Endian,
        btype: u32,
        total: u64,
        buf: &mut Vec<u8>,
    ) -> Result<RecordMeta, Error> {
        // Fixed part after the 8-byte block header.
        let fixed = if btype == NG_SPB { 4 } else { 20 };
        if total < 12 + fixed as u64 {
            return Err(self.malformed(start, format!("packet block too short ({total} bytes)")));
        }
        let mut f = [0u8; 20];
        let n = self.src.fill(&mut f[..fixed])?;
        if n < fixed {
            return Err(self.truncated(start, "packet block", total, 8 + n as u64));
        }
        let room = total - 12 - fixed as u64; // bytes for data + padding + options
        let (interface_id, units, caplen, orig_len) = match btype {
            NG_SPB => {
                let orig_len = endian.u32(&f[0..]);
                (0u32, None, None, orig_len)
            }
            NG_OPB => (
                endian.u16(&f[0..]) as u32,
                Some(((endian.u32(&f[4..]) as u64) << 32) | endian.u32(&f[8..]) as u64),
                Some(endian.u32(&f[12..])),
                endian.u32(&f[16..]),
            ),
            _ => (
                endian.u32(&f[0..]),
                Some(((endian.u32(&f[4..]) as u64) << 32) | endian.u32(&f[8..]) as u64),
                Some(endian.u32(&f[12..])),
                endian.u32(&f[16..]),
            ),
        };
        let iface = match &self.state {
            State::Ng(ng) => ng.interfaces.get(interface_id as usize).cloned(),
            State::Classic(_) => None,
        };
        let Some(iface) = iface else {
            let defined = match &self.state {
                State::Ng(ng) => ng.interfaces.len(),
                State::Classic(_) => 0,
            };
            return Err(Error::UnknownInterface {
                offset: start,
                record: self.records,
                interface_id,
                defined,
            });
        };
        let caplen = match caplen {
            Some(c) => {
                if c as u64 > room {
                    return Err(self.malformed(
                        start,
                        format!("captured length {c} does not fit in a block of {total} bytes"),
                    ));
                }
                c
            }
            None => {
                // SPB: the captured length is implied by the block length
                // and the interface's snap length.
                let mut c = (orig_len as u64).min(room);
                if iface.snaplen != 0 {
                    c = c.min(iface.snaplen as u64);
                }
                c as u32
            }
        };
        let limit = self.caplen_limit(iface.snaplen);
        if caplen > limit {
            return Err(Error::TooLarge {
                offset: start,
                record: self.records,
                what: "captured length",
                len: caplen as u64,
                limit: limit as u64,
            });
        }
        let got = self.src.read_vec(buf, caplen as u64)?;
        if got < caplen as u64 {
            return Err(self.truncated(start, "packet block", total, 8 + fixed as u64 + got));
        }
        let rest = room - caplen as u64;
        let skipped = self.src.skip(rest)?;
        if skipped < rest {
            return Err(self.truncated(
                start,
                "packet block",
                total,
                8 + fixed as u64 + caplen as u64 + skipped,
            ));
        }
        let mut t = [0u8; 4];
        let n = self.src.fill(&mut t)?;
        if n < 4 {
            return Err(self.truncated(start, "packet block", total, total - 4 + n as u64));
        }
        self.check_trailer(start, endian, &t, total)?;
        let (ts_sec, ts_nsec) = match units {
            None => (0, 0),
            Some(u) => {
                let (sec, nsec) = iface.resolution.split(u);
                let sec = i64::try_from(sec).unwrap_or(i64::MAX);
                (sec.saturating_add(iface.ts_offset), nsec)
            }
        };
        Ok(RecordMeta {
            ts_sec,
            ts_nsec,
            caplen,
            orig_len,
            linktype: iface.linktype,
            interface_id,
        })
    }
}

impl<R: Read> Iterator for PcapReader<R> {
    type Item = Result<Record, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

impl<R: Read> std::iter::FusedIterator for PcapReader<R> {}
