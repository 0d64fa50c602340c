//! Reading one line of an IP summary dump into a packet, for
//! FromIPSummaryDump: field values (timestamps, fragment words, quoted
//! fields) and Click's `PacketOdesc`, which builds the headers the fields
//! describe and fixes lengths and checksums.

use super::ipsumdump::{Field, EXTRA_PACKETS_ANNO_OFFSET};
use super::ipsumdump_opt::cp_uint;
use super::set_extra_length;
use click::packet::AGGREGATE_ANNO_OFFSET;
use click::prelude::*;
use click_wire::{checksum, Ipv4Packet};
use std::net::Ipv4Addr;

/// Default addresses and ports (`!flowid`, FLOWID).
#[derive(Copy, Clone, Debug)]
pub(super) struct FlowId {
    pub(super) src: [u8; 4],
    pub(super) sport: u16,
    pub(super) dst: [u8; 4],
    pub(super) dport: u16,
}

/// A parsed field value.
pub(super) enum Val {
    N(u32),
    U64(u64),
    Ts(Timestamp),
    Mac([u8; 6]),
    /// Option bytes (`None`: no options).
    Opt(Option<Vec<u8>>),
    Bytes(Vec<u8>),
}

pub(super) fn parse_ts(s: &str) -> Option<Timestamp> {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (a, b) = s.split_once('.').unwrap_or((s, ""));
    if a.is_empty() && b.is_empty() {
        return None;
    }
    let sec: i64 = if a.is_empty() { 0 } else { a.parse().ok()? };
    if a.starts_with('+') || b.len() > 9 || !b.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    if sec > i64::MAX / 1_000_000_000 - 1 {
        return None;
    }
    let frac: u32 = if b.is_empty() {
        0
    } else {
        format!("{:0<9}", b).parse().ok()?
    };
    let t = Timestamp::from_sec_nsec(sec, frac);
    Some(if neg { Timestamp(-t.nsec()) } else { t })
}

/// Click's `ip_frag` / `ip_fragoff` input: the IP fragment field.
pub(super) fn parse_frag(s: &str, minor_version: u32) -> Option<u32> {
    match s {
        "." => return Some(0),
        "!" => return Some(0x4000),
        "F" => return Some(0x2000),
        "f" => return Some(100),
        _ => {}
    }
    let b = s.as_bytes();
    let (v, mut i) = cp_uint(b, 0, 0);
    let mut v = v.unwrap_or(0);
    if minor_version > 0 {
        v >>= 3;
    }
    if v > 0x1fff || b.is_empty() {
        return None;
    }
    let mut v = v as u32;
    while i < b.len() {
        match b[i] {
            b'!' => v |= 0x4000,
            b'+' => v |= 0x2000,
            _ => return None,
        }
        i += 1;
    }
    Some(v)
}

/// Splits a data line as Click does: whitespace separates fields, double
/// quotes (with backslash escapes) may appear inside a field. Missing
/// fields are empty.
pub(super) fn split_line(line: &str, n: usize) -> Vec<&str> {
    let b = line.as_bytes();
    let mut out = Vec::with_capacity(n);
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    while out.len() < n {
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() {
            if b[i] == b'"' {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i = (i + 1).min(b.len());
            } else {
                i += 1;
            }
        }
        out.push(&line[start..i]);
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
    }
    out
}

/// Click's `click_icmp_hl`: the header length of an ICMP type.
pub(super) fn icmp_hl(ty: u8) -> usize {
    match ty {
        13 | 14 => 20,
        17 | 18 => 12,
        _ => 8,
    }
}

/// Types whose header holds an identifier and sequence number.
pub(super) fn icmp_has_flow(ty: u8) -> bool {
    matches!(ty, 0 | 8 | 13 | 14 | 15 | 16)
}

/// A packet being built from one line (Click's `PacketOdesc`): the data
/// from its first byte, where the headers are, and its annotations.
pub(super) struct Odesc {
    pub(super) buf: Vec<u8>,
    pub(super) mac: bool,
    pub(super) nh: Option<usize>,
    pub(super) th: Option<usize>,
    pub(super) is_ip: bool,
    pub(super) have_icmp_type: bool,
    pub(super) have_icmp_code: bool,
    pub(super) have_ip_hl: bool,
    pub(super) have_tcp_hl: bool,
    pub(super) default_ip_p: u8,
    pub(super) flowid: Option<FlowId>,
    pub(super) minor_version: u32,
    pub(super) want_len: u32,
    pub(super) ts: Timestamp,
    pub(super) first_ts: Option<Timestamp>,
    pub(super) extra_packets: u32,
    pub(super) paint: Option<u8>,
    pub(super) aggregate: Option<u32>,
}

impl Odesc {
    pub(super) fn new(default_ip_p: u8, flowid: Option<FlowId>, minor_version: u32) -> Odesc {
        Odesc {
            buf: Vec::new(),
            mac: false,
            nh: None,
            th: None,
            is_ip: true,
            have_icmp_type: false,
            have_icmp_code: false,
            have_ip_hl: false,
            have_tcp_hl: false,
            default_ip_p,
            flowid,
            minor_version,
            want_len: 0,
            ts: Timestamp::ZERO,
            first_ts: None,
            extra_packets: 0,
            paint: None,
            aggregate: None,
        }
    }

    pub(super) fn nh(&self) -> usize {
        self.nh.unwrap_or(0)
    }
    pub(super) fn th(&self) -> usize {
        self.th.unwrap_or(self.buf.len())
    }
    pub(super) fn net_len(&self) -> usize {
        self.buf.len().saturating_sub(self.nh())
    }
    pub(super) fn trans_len(&self) -> usize {
        self.buf.len().saturating_sub(self.th())
    }
    pub(super) fn put(&mut self, n: usize) {
        self.buf.resize(self.buf.len() + n, 0);
    }
    pub(super) fn ip_p(&self) -> u8 {
        self.buf[self.nh() + 9]
    }
    pub(super) fn ip_hl(&self) -> usize {
        ((self.buf[self.nh()] & 15) as usize) * 4
    }
    pub(super) fn first_frag(&self) -> bool {
        let n = self.nh();
        (u16::from_be_bytes([self.buf[n + 6], self.buf[n + 7]]) & 0x1fff) == 0
    }
    /// Writes bytes at `at` if they fit in the data (Click writes past the
    /// end of short headers, where nothing reads them).
    pub(super) fn set(&mut self, at: usize, v: &[u8]) {
        if at + v.len() <= self.buf.len() {
            self.buf[at..at + v.len()].copy_from_slice(v);
        }
    }
    pub(super) fn has_ip(&self) -> bool {
        self.is_ip && self.nh.is_some() && self.net_len() >= 20
    }

    /// Click's `make_ip`: an IP header exists (made if needed) and its
    /// protocol is `ip_p` (or unset, or `ip_p` is 0).
    pub(super) fn make_ip(&mut self, ip_p: u8) -> bool {
        if !self.has_ip() && !self.hard_make_ip() {
            return false;
        }
        let p = self.ip_p();
        ip_p == 0 || p == 0 || p == ip_p
    }

    pub(super) fn hard_make_ip(&mut self) -> bool {
        if !self.is_ip {
            return false;
        }
        if self.nh.is_none() {
            self.nh = Some(0);
        }
        let nl = self.net_len();
        if nl < 20 {
            self.put(20 - nl);
            let n = self.nh();
            self.th = Some(n + 20);
            let b = &mut self.buf[n..n + 20];
            b.fill(0);
            let mut ip = Ipv4Packet::new_unchecked(b);
            ip.set_version(4);
            ip.set_header_len(20);
            ip.set_ttl(100);
            ip.set_protocol(self.default_ip_p);
            if let Some(f) = self.flowid {
                ip.set_src_addr(Ipv4Addr::from(f.src));
                ip.set_dst_addr(Ipv4Addr::from(f.dst));
            }
        }
        true
    }

    /// Click's `make_transp`: a transport header for the first fragment.
    pub(super) fn make_transp(&mut self) -> bool {
        if !self.first_frag() {
            return false;
        }
        if self.trans_len() < 8 {
            self.hard_make_transp();
        }
        true
    }

    pub(super) fn hard_make_transp(&mut self) {
        let mut len: i64 = match self.ip_p() {
            6 => 20,
            17 | 136 => 8,
            33 => 12,
            1 => 8,
            _ => return,
        };
        let th = self.th() as i64;
        if self.want_len > 0 && (self.want_len as i64) < th + len {
            len = self.want_len as i64 - th;
        }
        let tl = self.trans_len() as i64;
        if tl < len {
            let xlen = len.max(4);
            self.put((xlen - tl) as usize);
            let th = self.th();
            if self.ip_p() == 6 && len >= 13 {
                self.buf[th + 12] = (self.buf[th + 12] & 0x0f) | 0x50;
            }
            if let Some(f) = self.flowid {
                self.set(th, &f.sport.to_be_bytes());
                self.set(th + 2, &f.dport.to_be_bytes());
            }
            let cut = (xlen - len) as usize;
            self.buf.truncate(self.buf.len() - cut);
        }
    }

    /// Click's `payload_info`: where the payload starts (from the data
    /// start).
    pub(super) fn payload_off(&self) -> usize {
        if !self.is_ip || !self.has_ip() {
            return 0;
        }
        let mut off = self.th();
        if self.first_frag() {
            match self.ip_p() {
                6 => {
                    let th = self.th();
                    off += if self.trans_len() >= 13 && (self.buf[th + 12] >> 4) >= 5 {
                        ((self.buf[th + 12] >> 4) as usize) * 4
                    } else {
                        20
                    };
                }
                17 | 136 => off += 8,
                _ => {}
            }
        }
        off
    }

    /// Click's `account_payload_len`: reconciles a payload length with the
    /// IP length, growing TCP and then IP headers with EOL options when the
    /// IP length is longer.
    pub(super) fn account_payload_len(&mut self, off: usize, plen: u32) {
        let ip_len_field = if self.has_ip() {
            u16::from_be_bytes([self.buf[self.nh() + 2], self.buf[self.nh() + 3]]) as u32
        } else {
            0
        };
        if !self.has_ip() || (ip_len_field == 0 && self.want_len == 0) {
            self.want_len = (off as u32).saturating_add(plen);
            return;
        }
        let ip_len = if ip_len_field != 0 {
            ip_len_field as i64 + self.nh() as i64
        } else {
            self.want_len as i64
        };
        let mut delta = ip_len - (off as i64 + plen as i64);
        if delta > 0 && self.first_frag() && self.ip_p() == 6 && !self.have_tcp_hl {
            let th = self.th();
            if self.trans_len() >= 13 && self.buf[th + 12] >> 4 == 5 {
                let grow = ((delta - (delta & 3)) as usize).min(40);
                self.buf
                    .splice(th + 20..th + 20, std::iter::repeat_n(0u8, grow));
                self.buf[th + 12] = (self.buf[th + 12] & 0x0f) | ((((20 + grow) / 4) as u8) << 4);
                delta -= grow as i64;
            }
        }
        if delta > 0 && !self.have_ip_hl && self.ip_hl() == 20 {
            let grow = ((delta - (delta & 3)) as usize).min(40);
            let n = self.nh();
            self.buf
                .splice(n + 20..n + 20, std::iter::repeat_n(0u8, grow));
            self.buf[n] = 0x40 | ((20 + grow) / 4) as u8;
            self.th = Some(self.th() + grow);
        }
    }

    /// Inserts an Ethernet header (Click's `push_mac_header`).
    pub(super) fn make_mac(&mut self) {
        if self.mac {
            return;
        }
        self.buf.splice(0..0, [0u8; 14]);
        self.buf[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        self.mac = true;
        self.nh = Some(14);
        self.th = self.th.map(|t| t + 14);
    }

    /// Writes IP or TCP options (`at`: the header start, `base`: its fixed
    /// length, `hl`: the current header length); returns the new length.
    pub(super) fn put_options(&mut self, at: usize, opts: &[u8], cur_len: usize) -> usize {
        let base = 20;
        let len = (base + opts.len() + 3) & !3;
        let have = self.buf.len() - at;
        if have < len {
            self.put(len - have);
        }
        self.buf[at + base..at + base + opts.len()].copy_from_slice(opts);
        self.buf[at + base + opts.len()..at + len].fill(0);
        len.max(cur_len)
    }

    pub(super) fn inject(&mut self, f: Field, v: Val) {
        let num = match &v {
            Val::N(n) => *n,
            Val::U64(n) => *n as u32,
            _ => 0,
        };
        match f {
            Field::Timestamp | Field::NTimestamp => {
                if let Val::Ts(t) = v {
                    self.ts = t;
                }
            }
            Field::FirstTimestamp | Field::FirstNTimestamp => {
                if let Val::Ts(t) = v {
                    self.first_ts = Some(t);
                }
            }
            Field::TsSec => self.ts = Timestamp::from_sec_nsec(num as i64, self.ts.subsec_nsec()),
            Field::TsUsec => self.ts = Timestamp::from_sec_nsec(self.ts.sec(), num * 1000),
            Field::TsUsec1 => {
                if let Val::U64(us) = v {
                    self.ts =
                        Timestamp::from_sec_usec((us / 1_000_000) as i64, (us % 1_000_000) as u32);
                }
            }
            Field::Count => self.extra_packets = num.saturating_sub(1),
            Field::Link | Field::Paint | Field::Direction => self.paint = Some(num as u8),
            Field::Aggregate => self.aggregate = Some(num),
            Field::WireLen => self.want_len = num,
            Field::EthSrc | Field::EthDst | Field::EthType => {
                self.make_mac();
                match (f, v) {
                    (Field::EthSrc, Val::Mac(m)) => self.buf[6..12].copy_from_slice(&m),
                    (Field::EthDst, Val::Mac(m)) => self.buf[0..6].copy_from_slice(&m),
                    _ => {
                        self.buf[12..14].copy_from_slice(&(num as u16).to_be_bytes());
                        if num != 0x0800 && num != 0x86DD {
                            self.is_ip = false;
                        }
                    }
                }
            }
            Field::Sport | Field::Dport => {
                if !self.make_ip(0) || !self.make_transp() {
                    return;
                }
                let p = self.ip_p();
                if p != 0 && !matches!(p, 6 | 17 | 33 | 136) {
                    return;
                }
                let at = self.th() + if f == Field::Sport { 0 } else { 2 };
                self.set(at, &(num as u16).to_be_bytes());
            }
            Field::IpSrc
            | Field::IpDst
            | Field::IpTos
            | Field::IpDscp
            | Field::IpEcn
            | Field::IpTtl
            | Field::IpFrag
            | Field::IpFragoff
            | Field::IpId
            | Field::IpSum
            | Field::IpProto
            | Field::IpHl
            | Field::IpLen
            | Field::IpOpt
            | Field::IpCaptureLen => {
                if !self.make_ip(0) {
                    return;
                }
                self.inject_ip(f, v, num);
            }
            Field::TcpSeq
            | Field::TcpAck
            | Field::TcpOff
            | Field::TcpFlags
            | Field::TcpWindow
            | Field::TcpUrp
            | Field::TcpOpt
            | Field::TcpNtopt
            | Field::TcpSack => {
                if !self.make_ip(6) || !self.make_transp() {
                    return;
                }
                self.inject_tcp(f, v, num);
            }
            Field::UdpLen => {
                if !self.make_ip(0) || !self.make_transp() {
                    return;
                }
                let p = self.ip_p();
                if p != 0 && p != 17 && p != 136 {
                    return;
                }
                if self.trans_len() < 8 {
                    self.put(8 - self.trans_len());
                }
                let th = self.th();
                self.set(th + 4, &(num as u16).to_be_bytes());
            }
            Field::IcmpType
            | Field::IcmpTypeName
            | Field::IcmpCode
            | Field::IcmpCodeName
            | Field::IcmpFlowid
            | Field::IcmpSeq
            | Field::IcmpNextmtu => {
                if !self.make_ip(1) || !self.make_transp() {
                    return;
                }
                if self.trans_len() < 8 {
                    self.put(8 - self.trans_len());
                }
                self.inject_icmp(f, num);
            }
            Field::PayloadLen | Field::Payload => {
                if self.make_ip(0) {
                    self.make_transp();
                }
                match v {
                    Val::Bytes(b) => {
                        if b.is_empty() {
                            return;
                        }
                        // As in Click, the payload goes where it started
                        // before account_payload_len grew a header: over
                        // the new option bytes
                        let off = self.payload_off();
                        self.account_payload_len(off, b.len() as u32);
                        if self.buf.len() < off + b.len() {
                            self.put(off + b.len() - self.buf.len());
                        }
                        self.buf[off..off + b.len()].copy_from_slice(&b);
                    }
                    _ => self.account_payload_len(self.payload_off(), num),
                }
            }
            Field::PayloadMd5 | Field::PayloadMd5Hex => {}
        }
    }

    pub(super) fn inject_ip(&mut self, f: Field, v: Val, num: u32) {
        let n = self.nh();
        // `make_ip` made the fixed header: 20 bytes from `n`.
        let mut ip = Ipv4Packet::new_unchecked(&mut self.buf[n..]);
        match f {
            Field::IpSrc => ip.set_src_addr(Ipv4Addr::from(num)),
            Field::IpDst => ip.set_dst_addr(Ipv4Addr::from(num)),
            Field::IpTos => ip.set_tos(num as u8),
            Field::IpDscp => ip.set_dscp(num as u8),
            Field::IpEcn => ip.set_ecn(num as u8),
            Field::IpTtl => ip.set_ttl(num as u8),
            Field::IpFrag | Field::IpFragoff => ip.set_flags_frag(num as u16),
            Field::IpId => ip.set_ident(num as u16),
            Field::IpSum => ip.set_checksum(num as u16),
            Field::IpProto => ip.set_protocol(num as u8),
            Field::IpOpt => {
                // `.` (no options) fixes the header length too, as in Click
                self.have_ip_hl = true;
                if let Val::Opt(Some(o)) = v {
                    let cur = self.ip_hl();
                    let len = self.put_options(n, &o, cur);
                    if len > cur {
                        self.th = Some(n + len);
                        self.buf[n] = 0x40 | (len / 4) as u8;
                    }
                }
            }
            Field::IpHl => {
                self.have_ip_hl = true;
                let want = (num as usize + 3) & !3;
                let cur = self.ip_hl();
                if want > cur {
                    let more = want - cur;
                    let have = self.buf.len() - n;
                    if have < want {
                        self.put(want - have);
                    }
                    self.buf[n + want - more..n + want].fill(0);
                    self.th = Some(n + want);
                }
                self.buf[n] = (self.buf[n] & 0xf0) | ((want / 4) as u8 & 15);
            }
            Field::IpLen => self.want_len = (n as u32).saturating_add(num),
            _ => {}
        }
    }

    pub(super) fn inject_tcp(&mut self, f: Field, v: Val, num: u32) {
        let th = self.th();
        match f {
            Field::TcpSeq => self.set(th + 4, &num.to_be_bytes()),
            Field::TcpAck => self.set(th + 8, &num.to_be_bytes()),
            Field::TcpFlags => {
                if self.trans_len() >= 14 {
                    self.buf[th + 13] = num as u8;
                    self.buf[th + 12] = (self.buf[th + 12] & 0xf0) | ((num >> 8) as u8 & 15);
                }
            }
            Field::TcpOff => {
                self.have_tcp_hl = true;
                if self.trans_len() < 13 {
                    return;
                }
                let want = (num as usize + 3) & !3;
                let cur = ((self.buf[th + 12] >> 4) as usize) * 4;
                if want > cur {
                    let more = want - cur;
                    self.put(more);
                    let end = (th + want).min(self.buf.len());
                    self.buf[end - more..end].fill(0);
                }
                self.buf[th + 12] = (self.buf[th + 12] & 0x0f) | (((want / 4) as u8 & 15) << 4);
            }
            Field::TcpWindow => self.set(th + 14, &(num as u16).to_be_bytes()),
            Field::TcpUrp => self.set(th + 18, &(num as u16).to_be_bytes()),
            _ => {
                self.have_tcp_hl = true;
                if let Val::Opt(Some(o)) = v {
                    if o.is_empty() || self.trans_len() < 13 {
                        return;
                    }
                    let cur = ((self.buf[th + 12] >> 4) as usize) * 4;
                    let len = self.put_options(th, &o, cur);
                    if len > cur {
                        self.buf[th + 12] = (self.buf[th + 12] & 0x0f) | (((len / 4) as u8) << 4);
                    }
                }
            }
        }
    }

    pub(super) fn inject_icmp(&mut self, f: Field, num: u32) {
        let th = self.th();
        match f {
            Field::IcmpType | Field::IcmpTypeName => {
                self.buf[th] = num as u8;
                self.have_icmp_type = true;
                let len = icmp_hl(num as u8);
                if self.trans_len() < len {
                    self.put(len - self.trans_len());
                }
            }
            Field::IcmpCode | Field::IcmpCodeName => {
                self.buf[th + 1] = num as u8;
                self.have_icmp_code = true;
            }
            Field::IcmpFlowid | Field::IcmpSeq => {
                if !self.have_icmp_type || icmp_has_flow(self.buf[th]) {
                    let at = th + if f == Field::IcmpFlowid { 4 } else { 6 };
                    self.set(at, &(num as u16).to_be_bytes());
                }
            }
            _ => {
                if (!self.have_icmp_type || self.buf[th] == 3)
                    && (!self.have_icmp_code || self.buf[th + 1] == 4)
                {
                    self.set(th + 6, &(num as u16).to_be_bytes());
                }
            }
        }
    }

    /// The IP length, UDP length, checksums and extra length, then the
    /// packet.
    pub(super) fn finish(mut self, checksum: bool, cx: &Ctx) -> Packet {
        if self.flowid.is_some() {
            self.make_ip(0);
        }
        if self.has_ip() {
            self.make_transp();
        }
        let mut dst = None;
        if self.has_ip() {
            let n = self.nh();
            let mut ip_len = u16::from_be_bytes([self.buf[n + 2], self.buf[n + 3]]) as u32;
            if ip_len == 0 {
                ip_len = self.want_len;
                if ip_len >= n as u32 {
                    ip_len -= n as u32;
                }
                ip_len = ip_len.min(0xFFFF);
                if ip_len == 0 {
                    ip_len = self.net_len().min(0xFFFF) as u32;
                }
                self.buf[n + 2..n + 4].copy_from_slice(&(ip_len as u16).to_be_bytes());
            }
            let th = self.th();
            if self.ip_p() == 17
                && self.first_frag()
                && self.trans_len() >= 6
                && self.buf[th + 4..th + 6] == [0, 0]
            {
                let ulen = ip_len.saturating_sub((th - n) as u32) as u16;
                self.buf[th + 4..th + 6].copy_from_slice(&ulen.to_be_bytes());
            }
            dst = Some(core::net::Ipv4Addr::new(
                self.buf[n + 16],
                self.buf[n + 17],
                self.buf[n + 18],
                self.buf[n + 19],
            ));
            if checksum {
                if ip_len as usize > self.net_len() {
                    self.put(ip_len as usize - self.net_len());
                }
                self.set_checksums();
            }
        }
        let mut p = cx.pool().make(DEFAULT_HEADROOM, &self.buf, 0);
        if self.mac {
            p.set_mac_header(0);
        }
        if let Some(n) = self.nh {
            let th = self.th.unwrap_or(n).max(n);
            p.set_network_header(n, th - n);
        }
        if let Some(d) = dst {
            p.anno_mut().set_dst_ip(d);
        }
        p.set_timestamp(self.ts);
        if let Some(t) = self.first_ts {
            p.anno_mut().set_first_timestamp(t);
        }
        if self.extra_packets > 0 {
            p.anno_mut()
                .set_u32_at(EXTRA_PACKETS_ANNO_OFFSET, self.extra_packets);
        }
        if let Some(x) = self.paint {
            p.anno_mut().set_paint(x);
        }
        if let Some(a) = self.aggregate {
            p.anno_mut().set_u32_at(AGGREGATE_ANNO_OFFSET, a);
        }
        if self.want_len as usize > self.buf.len() {
            set_extra_length(&mut p, self.want_len - self.buf.len() as u32);
        }
        p
    }

    pub(super) fn set_checksums(&mut self) {
        let n = self.nh();
        let hl = self.ip_hl();
        if hl < 20 || n + hl > self.buf.len() {
            return;
        }
        // The whole header is in the buffer.
        let mut ip = Ipv4Packet::new_unchecked(&mut self.buf[n..]);
        ip.fill_checksum();
        if ip.is_fragment() {
            return;
        }
        let (src, dst) = (ip.src_addr(), ip.dst_addr());
        let th = self.th();
        let tl = self.trans_len();
        let (at, pseudo) = match self.ip_p() {
            6 => (16, true),
            17 => (6, true),
            1 => (2, false),
            _ => return,
        };
        if tl < at + 2 {
            return;
        }
        self.buf[th + at..th + at + 2].fill(0);
        let seg = &self.buf[th..];
        let c = if pseudo {
            // The length folded to 16 bits (ones-complement), as it is
            // summed; only a segment past 64 KiB, which no IP length
            // describes, has bits above them.
            let len = checksum::add((tl >> 16) as u16, tl as u16);
            let ph = checksum::pseudo_header_sum(src, dst, self.ip_p(), len);
            !checksum::add(ph, checksum::sum(seg))
        } else {
            checksum::ip_checksum(seg)
        };
        self.buf[th + at..th + at + 2].copy_from_slice(&c.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frag_words() {
        assert_eq!(parse_frag(".", 3), Some(0));
        assert_eq!(parse_frag("!", 3), Some(0x4000));
        assert_eq!(parse_frag("F", 3), Some(0x2000));
        assert_eq!(parse_frag("f", 3), Some(100));
        assert_eq!(parse_frag("800+!", 3), Some(100 | 0x6000));
        assert_eq!(parse_frag("100", 0), Some(100));
        assert_eq!(parse_frag("+", 3), Some(0x2000));
        assert_eq!(parse_frag("800x", 3), None);
        assert_eq!(parse_frag("99999", 3), None);
        assert_eq!(parse_frag("", 3), None);
    }

    #[test]
    fn split_like_click() {
        assert_eq!(split_line("a \"b c\" d", 3), ["a", "\"b c\"", "d"]);
        assert_eq!(split_line("x\"1 2\"y z", 2), ["x\"1 2\"y", "z"]);
        assert_eq!(split_line("a", 3), ["a", "", ""]);
        assert_eq!(split_line("\"unterminated", 1), ["\"unterminated"]);
    }

    #[test]
    fn timestamps() {
        assert_eq!(
            parse_ts("1.5"),
            Some(Timestamp::from_sec_nsec(1, 500_000_000))
        );
        assert_eq!(parse_ts("1"), Some(Timestamp::from_sec_nsec(1, 0)));
        assert_eq!(parse_ts("1.0000000001"), None);
        assert_eq!(parse_ts("."), None);
        assert_eq!(parse_ts("99999999999999999999"), None);
    }
}
