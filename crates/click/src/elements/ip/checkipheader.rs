//! CheckIPHeader and CheckIPHeader2: check IP headers for correctness
//! (CheckIPHeader2 skips the checksum). The check and the address-list
//! arguments are shared with IPInputCombo.

use crate::common::drops::DropStats;
use crate::prelude::*;
use alloc::format;
use click_lang::args::{parse_u64, split_words, RawString};
use click_wire::Ipv4Packet;

const REASONS: [&str; 6] = [
    "tiny packet",
    "bad IP version",
    "bad IP header length",
    "bad IP length",
    "bad IP checksum",
    "bad source address",
];

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Reason {
    Tiny = 0,
    Version = 1,
    Hlen = 2,
    Len = 3,
    Checksum = 4,
    Src = 5,
}

/// `CheckIPHeader([OFFSET, KEYWORDS])` and `CheckIPHeader2([OFFSET,
/// KEYWORDS])`.
pub struct CheckIPHeader {
    offset: usize,
    bad_src: Vec<[u8; 4]>,
    good_dst: Vec<[u8; 4]>,
    checksum: bool,
    /// CHECKSUM's default: true for CheckIPHeader, false for
    /// CheckIPHeader2.
    checksum_default: bool,
    stats: DropStats<6>,
}

impl Default for CheckIPHeader {
    fn default() -> Self {
        CheckIPHeader {
            offset: 0,
            bad_src: Vec::new(),
            good_dst: Vec::new(),
            checksum: true,
            checksum_default: true,
            stats: DropStats::default(),
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "CheckIPHeader",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "ip",
    signature: "CheckIPHeader([OFFSET, KEYWORDS])",
    summary: "Checks IP header.",
    description: "Input packets should have IP headers starting OFFSET bytes in. Checks that the \
packet is long enough, and that the IP version, header length, total length and checksum fields \
are valid; optionally checks the source address (RFC 1812 5.3.7). Sets the IP header annotation, \
shortens packets to the IP total length (removing Ethernet padding), and sets the destination IP \
address annotation to the packet's destination address.\n\n\
Valid packets leave on output 0. Invalid packets leave on output 1 if it is connected, and are \
dropped otherwise. The first invalid packet (every one with VERBOSE) is reported on standard \
error as `NAME: IP header check failed: REASON`.\n\n\
Keyword arguments:\n\n\
- `OFFSET` (unsigned): byte position of the IP header. Default 0.\n\
- `CHECKSUM` (boolean): check the header checksum. Default true.\n\
- `BADSRC` (space-separated IP addresses): drop packets with these source addresses (unless \
the destination is in GOODDST).\n\
- `GOODDST` (space-separated IP addresses): destinations exempt from BADSRC.\n\
- `INTERFACES` (space-separated ADDR/MASK): this router's interfaces; sets BADSRC to their \
broadcast addresses plus 0.0.0.0 and 255.255.255.255, and GOODDST to their addresses.\n\
- `VERBOSE` (boolean): report every bad packet. Default false.\n\
- `DETAILS` (boolean): keep per-reason counts for `drop_details`. Default false.\n\n\
The old form `CheckIPHeader(BADSRC [, OFFSET])`, with the bad source addresses positional \
(`CheckIPHeader(18.26.4.255 1.255.255.255)`), is accepted too; it adds 0.0.0.0 and \
255.255.255.255 to the list.",
    ports: "one input; one or two outputs (1: invalid packets)",
    handlers: crate::common::drops::DROP_HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(CheckIPHeader::default()),
};

pub static SPEC2: ClassSpec = ClassSpec {
    name: "CheckIPHeader2",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "ip",
    signature: "CheckIPHeader2([OFFSET, KEYWORDS])",
    summary: "Checks IP header, no checksum.",
    description: "Like CheckIPHeader, but does not check the IP header checksum (unless `CHECKSUM \
true` is given). Input packets should have IP headers starting OFFSET bytes in. Checks that the \
packet is long enough and that the IP version, header length and total length fields are valid; \
optionally checks the source address. Sets the IP header annotation, shortens packets to the IP \
total length, and sets the destination IP address annotation.\n\n\
Valid packets leave on output 0. Invalid packets leave on output 1 if it is connected, and are \
dropped otherwise. The first invalid packet (every one with VERBOSE) is reported on standard \
error as `NAME: IP header check failed: REASON`.\n\n\
Keyword arguments are CheckIPHeader's:\n\n\
- `OFFSET` (unsigned): byte position of the IP header. Default 0.\n\
- `CHECKSUM` (boolean): check the header checksum. Default false.\n\
- `BADSRC` (space-separated IP addresses): drop packets with these source addresses (unless \
the destination is in GOODDST).\n\
- `GOODDST` (space-separated IP addresses): destinations exempt from BADSRC.\n\
- `INTERFACES` (space-separated ADDR/MASK): this router's interfaces; sets BADSRC to their \
broadcast addresses plus 0.0.0.0 and 255.255.255.255, and GOODDST to their addresses.\n\
- `VERBOSE` (boolean): report every bad packet. Default false.\n\
- `DETAILS` (boolean): keep per-reason counts for `drop_details`. Default false.\n\n\
The old form `CheckIPHeader2(BADSRC [, OFFSET])` is accepted too.",
    ports: "one input; one or two outputs (1: invalid packets)",
    handlers: crate::common::drops::DROP_HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || {
        Box::new(CheckIPHeader {
            checksum: false,
            checksum_default: false,
            ..CheckIPHeader::default()
        })
    },
};

/// A list of IPv4 addresses (BADSRC, GOODDST), as bytes.
pub(crate) type AddrList = Vec<[u8; 4]>;

/// A space-separated list of IP addresses (BADSRC, GOODDST).
pub(crate) fn addr_list(
    kw: &str,
    s: &str,
    cx: &click_lang::ArgContext,
) -> Result<Vec<[u8; 4]>, String> {
    split_words(s)
        .iter()
        .map(|w| {
            cx.ip(w)
                .map(|a| a.octets())
                .map_err(|_| format!("{}: expected list of IP addresses", kw))
        })
        .collect()
}

/// Click's `CheckIPHeader::OldBadSrcArg`: the positional BADSRC list, to
/// which 0.0.0.0 and 255.255.255.255 are added.
pub(crate) fn old_bad_src(s: &str, cx: &click_lang::ArgContext) -> Result<Vec<[u8; 4]>, String> {
    let mut v = addr_list("BADSRC", s, cx)?;
    v.push([0; 4]);
    v.push([255; 4]);
    Ok(v)
}

/// Click's `CheckIPHeader::InterfacesArg`: INTERFACES `ADDR/MASK ...` gives
/// (BADSRC, GOODDST): the interfaces' broadcast addresses plus 0.0.0.0 and
/// 255.255.255.255, and the interfaces' addresses.
pub(crate) fn interfaces_arg(
    s: &str,
    cx: &click_lang::ArgContext,
) -> Result<(AddrList, AddrList), String> {
    let mut bad_src = Vec::new();
    let mut good_dst = Vec::new();
    for w in split_words(s) {
        let (ip, mask) = cx
            .prefix(&w, true)
            .map_err(|_| String::from("INTERFACES: expected list of IP address prefixes"))?;
        let (ip, mask) = (u32::from(ip), u32::from(mask));
        bad_src.push(((ip & mask) | !mask).to_be_bytes());
        good_dst.push(ip.to_be_bytes());
    }
    bad_src.push([0; 4]);
    bad_src.push([255; 4]);
    Ok((bad_src, good_dst))
}

impl CheckIPHeader {
    /// A checker for headers at offset 0 with the checksum checked and
    /// these source-address lists (IPInputCombo's).
    pub(crate) fn with_addrs(bad_src: Vec<[u8; 4]>, good_dst: Vec<[u8; 4]>) -> CheckIPHeader {
        CheckIPHeader {
            bad_src,
            good_dst,
            ..CheckIPHeader::default()
        }
    }

    /// Checks one packet in place; on success trims it and sets the
    /// IP header and destination IP annotations.
    #[inline(always)]
    pub(crate) fn check(&self, p: &mut Packet) -> Result<(), Reason> {
        let off = self.offset;
        let h = p.data().get(off..).ok_or(Reason::Tiny)?;
        let plen = h.len();
        let fixed: &[u8; 20] = h.first_chunk().ok_or(Reason::Tiny)?;
        if fixed[0] >> 4 != 4 {
            return Err(Reason::Version);
        }
        let hlen = usize::from(fixed[0] & 0x0f) * 4;
        if hlen < 20 {
            return Err(Reason::Hlen);
        }
        let tlen = usize::from(u16::from_be_bytes([fixed[2], fixed[3]]));
        if tlen > plen || tlen < hlen {
            return Err(Reason::Len);
        }
        // `20 <= hlen <= tlen <= plen`: the header is in the buffer.
        if self.checksum && !Ipv4Packet::new_unchecked(h).verify_checksum() {
            return Err(Reason::Checksum);
        }
        let dst = [fixed[16], fixed[17], fixed[18], fixed[19]];
        if !self.bad_src.is_empty() {
            let src = [fixed[12], fixed[13], fixed[14], fixed[15]];
            if self.bad_src.contains(&src) && !self.good_dst.contains(&dst) {
                return Err(Reason::Src);
            }
        }
        p.set_network_header(off, hlen);
        if plen > tlen {
            p.take(plen - tlen);
        }
        p.anno_mut().set(0, &dst);
        Ok(())
    }

    #[cold]
    fn drop(&mut self, r: Reason, p: Packet, cx: &Ctx) {
        if self.stats.record(r as usize) {
            cx.error_line(&format!(
                "{}: IP header check failed: {}",
                cx.name(),
                REASONS[r as usize]
            ));
        }
        if cx.noutputs() == 2 {
            cx.push(1, p);
        }
    }
}

impl Element for CheckIPHeader {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let ac = cx.arg_context();
        let mut bad_src: Vec<[u8; 4]> = Vec::new();
        let mut good_dst: Vec<[u8; 4]> = Vec::new();
        if let Some(s) = a.read::<RawString>("INTERFACES")?.map(|r| r.0) {
            (bad_src, good_dst) = interfaces_arg(&s, &ac)?;
        }
        if let Some(s) = a.read::<RawString>("BADSRC")?.map(|r| r.0) {
            bad_src = addr_list("BADSRC", &s, &ac)?;
        }
        if let Some(s) = a.read::<RawString>("GOODDST")?.map(|r| r.0) {
            good_dst = addr_list("GOODDST", &s, &ac)?;
        }
        let mut offset = a.read::<usize>("OFFSET")?.unwrap_or(0);
        self.stats.configure(&mut a)?;
        let checksum = a.read::<bool>("CHECKSUM")?.unwrap_or(self.checksum_default);
        let rest = a.rest();
        if rest.is_empty() {
        } else if rest.len() == 1 && parse_u64(&rest[0]).is_ok() {
            offset = usize::try_from(parse_u64(&rest[0])?)
                .map_err(|_| String::from("OFFSET: out of range"))?;
        } else {
            // Click's deprecated syntax: CheckIPHeader(BADSRC, OFFSET), the
            // addresses positional (as Click 1.x and 2.0 wrote them, e.g.
            // fake-iprouter.click's `CheckIPHeader(18.26.4.255 1.255.255.255)`)
            // or keywords.
            let mut b = Args::from_vec_in(rest, ac);
            if let Some(s) = b.read_p::<RawString>("BADSRC")?.map(|r| r.0) {
                bad_src = old_bad_src(&s, &ac)?;
            }
            if let Some(o) = b.read_p::<usize>("OFFSET")? {
                offset = o;
            }
            b.complete()?;
        }
        self.offset = offset;
        self.bad_src = bad_src;
        self.good_dst = good_dst;
        self.checksum = checksum;
        Ok(())
    }

    #[inline]
    fn push(&mut self, _port: usize, mut p: Packet, cx: &Ctx) {
        match self.check(&mut p) {
            Ok(()) => cx.push(0, p),
            Err(r) => self.drop(r, p, cx),
        }
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, cx: &Ctx) -> Option<Packet> {
        match self.check(&mut p) {
            Ok(()) => Some(p),
            Err(r) => {
                self.drop(r, p, cx);
                None
            }
        }
    }

    #[inline]
    fn push_batch(&mut self, _port: usize, mut batch: Batch, cx: &Ctx) {
        let mut first_bad = usize::MAX;
        for (i, p) in batch.iter_mut().enumerate() {
            if self.check(p).is_err() {
                first_bad = i;
                break;
            }
        }
        if first_bad == usize::MAX {
            cx.push_batch(0, batch);
            return;
        }
        // Slow path: split the batch.
        let rest = batch.split_off(first_bad);
        let mut good = batch;
        // The first packet of `rest` failed and was left unchanged; checking
        // it again gives the same answer.
        for mut p in rest {
            match self.check(&mut p) {
                Ok(()) => good.push(p),
                Err(r) => self.drop(r, p, cx),
            }
        }
        cx.push_batch(0, good);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "drops" | "drop_details" => self.stats.read_handler(name, &REASONS),
            _ => None,
        }
    }

    crate::element_any!();
}
