//! IPReassembler: reassembles fragmented IP packets.

use crate::common::args::parse_anno;
use crate::packet::Anno;
use crate::prelude::*;
use alloc::collections::BTreeMap;
use alloc::format;
use click_lang::args::RawString;
use click_wire::ipv4::{FLAG_DF, FLAG_MF, FLAG_RF, OFFSET_MASK};
use click_wire::Ipv4Packet;
use core::fmt::Write as _;
use core::net::Ipv4Addr;

/// Seconds an incomplete datagram is kept.
const REAP_TIMEOUT: i64 = 30;
/// Seconds between reaps.
const REAP_INTERVAL: i64 = 10;
/// Bookkeeping bytes charged per datagram (Click's `IPH_MEM_USED`).
const IPH_MEM_USED: usize = 40;
const NS: i64 = Timestamp::NSEC_PER_SEC;

/// (source, destination, protocol, ID): the datagram a fragment belongs to.
type Key = ([u8; 4], [u8; 4], u8, u16);

/// What the fragment at offset 0 contributed: the bytes up to the end of
/// its IP header (a MAC header included), and its annotations.
struct Head {
    prefix: Vec<u8>,
    nh: usize,
    mac: Option<usize>,
    anno: Anno,
}

/// A datagram being reassembled.
struct Datagram {
    /// IP payload bytes received so far (holes are zero).
    data: Vec<u8>,
    /// Received byte ranges, sorted, merged.
    ranges: Vec<(usize, usize)>,
    /// Set once a fragment without MF arrived: the payload length.
    total: Option<usize>,
    head: Option<Head>,
    /// The first 20 header bytes of the fragment that created the entry.
    first_hdr: [u8; 20],
    /// Router time when the entry was created.
    created: Timestamp,
    /// Creation order (for Click's dump order).
    seq: u64,
    /// Largest fragment seen (for MAX_MTU_ANNO).
    max_frag: u16,
}

impl Datagram {
    fn mem(&self) -> usize {
        IPH_MEM_USED + self.data.len()
    }

    fn add_range(&mut self, a: usize, b: usize) {
        let mut out: Vec<(usize, usize)> = Vec::with_capacity(self.ranges.len() + 1);
        let (mut a, mut b) = (a, b);
        let mut placed = false;
        for &(x, y) in &self.ranges {
            if y < a {
                out.push((x, y));
            } else if x > b {
                if !placed {
                    out.push((a, b));
                    placed = true;
                }
                out.push((x, y));
            } else {
                a = a.min(x);
                b = b.max(y);
            }
        }
        if !placed {
            out.push((a, b));
        }
        self.ranges = out;
    }

    fn complete(&self) -> bool {
        matches!(self.total, Some(t) if self.ranges.len() == 1 && self.ranges[0] == (0, t))
    }
}

/// `IPReassembler([KEYWORDS])`.
pub struct IPReassembler {
    map: BTreeMap<Key, Datagram>,
    mem_used: usize,
    mem_high: usize,
    mem_low: usize,
    mtu_anno: Option<usize>,
    next_reap: Timestamp,
    seq: u64,
    frags_seen: u64,
    good: u64,
    failed: u64,
    bad: u64,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "IPReassembler",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "ip",
    signature: "IPReassembler([KEYWORDS])",
    summary: "Reassembles fragmented IP packets.",
    description: "Expects IP packets with the IP header annotation set. Packets that are not \
fragments pass through unchanged. Fragments are held until every byte of their datagram (same \
source, destination, protocol and ID) has arrived and the last fragment (more-fragments bit \
clear) has been seen; the reassembled packet then leaves on output 0. It has the MAC header (if \
the packet still had one), IP header and annotations of the fragment at offset 0, the timestamp \
of the fragment that completed it, no fragmentation offset or more-fragments bit, the total \
length set and a recomputed checksum.\n\n\
Fragments may arrive in any order, duplicated or overlapping; where fragments overlap, the \
later one's bytes win. Malformed fragments are dropped and counted (`bad fragments seen` in \
`dump`): truncated headers, empty fragments, data shorter than the IP length says, middle \
fragments whose length is not a multiple of 8, datagrams longer than 65535 bytes, fragments \
extending past a known end, and last fragments that contradict data already received.\n\n\
A datagram that is still incomplete 30 seconds after its first fragment arrived is expired by \
a timer (checked every 10 seconds, and whenever a fragment arrives): if there is a second \
output, a single packet holding every received fragment at its proper offset (holes zeroed, \
more-fragments bit as last seen) is pushed there, otherwise the fragments are dropped. \
Connect an `ICMPError(ADDR, timeexceeded, reassembly)` to it to report expiry.\n\n\
Memory use is bounded: when the data held exceeds HIMEM bytes (40 bytes of bookkeeping are \
charged per datagram), the oldest datagrams (first those older than 10 s, then 5 s, then any) \
are expired the same way until use falls below 3/4 HIMEM.\n\n\
Keyword arguments:\n\n\
- `HIMEM` (unsigned): the memory bound, in bytes. Default 262144. `MAX_MEMORY` is accepted as \
a synonym.\n\
- `MAX_MTU_ANNO` (annotation): a 2-byte annotation set, on reassembled packets, to the size \
of the largest fragment (in host byte order, as Click's `set_anno_u16`).",
    ports: "one input; one or two outputs (1: expired incomplete datagrams)",
    handlers: &[HandlerDoc {
        name: "dump",
        mode: HandlerMode::Read,
        text: "Statistics (fragments seen, good and failed reassemblies, bad fragments) and the \
datagrams being reassembled with their received byte ranges, in Click's format.",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || {
        Box::new(IPReassembler {
            map: BTreeMap::new(),
            mem_used: 0,
            mem_high: 256 * 1024,
            mem_low: 192 * 1024,
            mtu_anno: None,
            next_reap: Timestamp::ZERO,
            seq: 0,
            frags_seen: 0,
            good: 0,
            failed: 0,
            bad: 0,
        })
    },
};

const REAP_TIMER: u32 = 0;

impl IPReassembler {
    /// Builds the packet for a datagram: whole (output 0) or partial
    /// (expired, output 1).
    fn build(&self, d: &Datagram, cx: &Ctx) -> Option<Packet> {
        let (prefix, nh, mac, anno): (&[u8], usize, Option<usize>, Option<&Anno>) = match &d.head {
            Some(h) => (&h.prefix, h.nh, h.mac, Some(&h.anno)),
            None => (&d.first_hdr, 0, None, None),
        };
        let hlen = prefix.len() - nh;
        let ip_len = hlen + d.data.len();
        if ip_len > 0xffff {
            return None;
        }
        let mut p = cx
            .pool()
            .make_len(DEFAULT_HEADROOM, prefix.len() + d.data.len(), 0);
        {
            let buf = p.data_mut();
            buf[..prefix.len()].copy_from_slice(prefix);
            buf[prefix.len()..].copy_from_slice(&d.data);
            let mut ip = Ipv4Packet::new_unchecked(&mut buf[nh..nh + hlen]);
            if d.head.is_none() {
                ip.set_version(4);
                ip.set_header_len(20);
            }
            ip.set_total_len(ip_len as u16);
            // Keep the reserved and DF bits of the fragment that created
            // the entry; MF only while the end is unknown.
            let first = Ipv4Packet::new_unchecked(&d.first_hdr[..]);
            let mut flags = first.flags_frag() & (FLAG_RF | FLAG_DF);
            if d.total.is_none() {
                flags |= FLAG_MF;
            }
            ip.set_flags_frag(flags);
            ip.fill_checksum();
        }
        if let Some(a) = anno {
            *p.anno_mut() = a.clone();
        }
        if let Some(off) = self.mtu_anno {
            p.anno_mut().set(off, &d.max_frag.to_ne_bytes());
        }
        p.set_network_header(nh, hlen);
        if let Some(m) = mac {
            p.set_mac_header(m);
        }
        Some(p)
    }

    /// Expires a datagram (partial packet to output 1, if any).
    fn expire(&mut self, key: &Key, cx: &Ctx) {
        if let Some(d) = self.map.remove(key) {
            self.mem_used -= d.mem();
            self.failed += 1;
            if cx.noutputs() > 1 {
                if let Some(p) = self.build(&d, cx) {
                    cx.push(1, p);
                }
            }
        }
    }

    /// Expires datagrams older than REAP_TIMEOUT.
    fn reap(&mut self, now: Timestamp, cx: &Ctx) {
        let kill = now.add_nsec(-REAP_TIMEOUT * NS);
        let old: Vec<Key> = self
            .map
            .iter()
            .filter(|(_, d)| d.created < kill)
            .map(|(k, _)| *k)
            .collect();
        for k in old {
            self.expire(&k, cx);
        }
        self.next_reap = now.add_nsec(REAP_INTERVAL * NS);
    }

    /// Frees memory: datagrams older than 10 s, then 5 s, then any, oldest
    /// first, until use is at most the low threshold.
    fn reap_overfull(&mut self, now: Timestamp, cx: &Ctx) {
        let mut by_age: Vec<(Timestamp, u64, Key)> = self
            .map
            .iter()
            .map(|(k, d)| (d.created, d.seq, *k))
            .collect();
        by_age.sort();
        for delta in [10i64, 5, 0] {
            let limit = now.add_nsec(-delta * NS);
            for &(created, _, k) in &by_age {
                if self.mem_used <= self.mem_low {
                    return;
                }
                if delta == 0 || created < limit {
                    self.expire(&k, cx);
                }
            }
        }
        if self.mem_used > self.mem_low {
            cx.error_line("IPReassembler: cannot free enough memory!");
        }
    }

    /// Handles one packet; returns a packet for output 0, if any.
    fn process(&mut self, p: Packet, cx: &Ctx) -> Option<Packet> {
        let Some(ip) = p.ip_header() else {
            self.bad += 1;
            return None;
        };
        if !ip.is_fragment() {
            return Some(p);
        }
        self.frags_seen += 1;
        let now = cx.now();
        if now >= self.next_reap {
            self.reap(now, cx);
        }
        let hl = usize::from(ip.header_len());
        let ip_len = usize::from(ip.total_len());
        let mf = ip.more_frags();
        let off = usize::from(ip.flags_frag() & OFFSET_MASK) << 3;
        let Some(dlen) = ip_len.checked_sub(hl) else {
            self.bad += 1;
            return None;
        };
        let last = off + dlen;
        if hl < 20
            || hl > ip.as_ref().len()
            || dlen == 0
            || last > 0xffff
            || (mf && last & 7 != 0)
            || ip.as_ref().len() - hl < dlen
        {
            self.bad += 1;
            return None;
        }
        // From here `20 <= hl <= ip_len <= len`: header and payload are in.
        let key: Key = (
            ip.src_addr().octets(),
            ip.dst_addr().octets(),
            ip.protocol(),
            ip.ident(),
        );
        let frag_size = (ip_len.min(0xffff)) as u16;
        if self.mem_used > self.mem_high {
            self.reap_overfull(now, cx);
        }
        if !self.map.contains_key(&key) {
            let mut first_hdr = [0u8; 20];
            first_hdr.copy_from_slice(&ip.header()[..20]);
            self.seq += 1;
            self.map.insert(
                key,
                Datagram {
                    data: Vec::new(),
                    ranges: Vec::new(),
                    total: None,
                    head: None,
                    first_hdr,
                    created: now,
                    seq: self.seq,
                    max_frag: 0,
                },
            );
            self.mem_used += IPH_MEM_USED;
            if !cx.timer_scheduled(REAP_TIMER) {
                cx.schedule_timer_at(REAP_TIMER, now.add_nsec(REAP_INTERVAL * NS));
            }
        }
        let d = self.map.get_mut(&key)?;
        // Consistency with what is known of the datagram's end.
        if let Some(t) = d.total {
            if last > t || (!mf && last != t) {
                self.bad += 1;
                return None;
            }
        } else if !mf && last < d.data.len() {
            self.bad += 1;
            return None;
        }
        if last > d.data.len() {
            self.mem_used += last - d.data.len();
            d.data.resize(last, 0);
        }
        d.data[off..last].copy_from_slice(ip.payload());
        d.add_range(off, last);
        d.max_frag = d.max_frag.max(frag_size);
        if !mf {
            d.total = Some(last);
        }
        if off == 0 {
            let nh = p.network_header_offset().unwrap_or(0).max(0) as usize;
            let start = p.network_header_offset().unwrap_or(0).min(0).unsigned_abs();
            // `start` > 0 when the data begins after the IP header start
            // (stripped): keep the IP header only.
            let (prefix, nh) = if start > 0 {
                (ip.header().to_vec(), 0)
            } else {
                (p.data()[..nh + hl].to_vec(), nh)
            };
            let mac = p
                .mac_header_offset()
                .filter(|&m| m >= 0 && (m as usize) <= nh)
                .map(|m| m as usize);
            d.head = Some(Head {
                prefix,
                nh,
                mac,
                anno: p.anno().clone(),
            });
        }
        if !d.complete() {
            return None;
        }
        let d = self.map.remove(&key)?;
        self.mem_used -= d.mem();
        match self.build(&d, cx) {
            Some(mut q) => {
                self.good += 1;
                q.set_timestamp(p.timestamp());
                Some(q)
            }
            None => {
                // Longer than 65535 bytes with its header.
                self.failed += 1;
                self.bad += 1;
                None
            }
        }
    }

    fn dump(&self) -> String {
        let mut s = String::new();
        let _ = write!(
            s,
            "frags seen total:    {}\ngood reassemblies:   {}\nfailed reassemblies: {}\n\
             bad fragments seen:  {}\ncached chunk data:\n",
            self.frags_seen, self.good, self.failed, self.bad
        );
        // Click's order: by bucket (ID mod 256), newest first.
        let mut list: Vec<(&Key, &Datagram)> = self.map.iter().collect();
        list.sort_by_key(|(k, d)| (k.3 % 256, core::cmp::Reverse(d.seq)));
        for (k, d) in list {
            let port = |i: usize| {
                u16::from_be_bytes([
                    d.data.get(i).copied().unwrap_or(0),
                    d.data.get(i + 1).copied().unwrap_or(0),
                ])
            };
            // Click's IPFlowID reads the ports where the transport header
            // of the datagram starts.
            let (sport, dport) = (port(0), port(2));
            let _ = write!(
                s,
                " ({}, {}, {}, {}) {}",
                Ipv4Addr::from(k.0),
                sport,
                Ipv4Addr::from(k.1),
                dport,
                k.3
            );
            for (a, b) in &d.ranges {
                let _ = write!(s, " ({},{})", a, b);
            }
            s.push('\n');
        }
        s
    }
}

impl Element for IPReassembler {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let himem = a.read::<u32>("HIMEM")?;
        let maxmem = a.read::<u32>("MAX_MEMORY")?;
        let mtu_anno = match a.read::<RawString>("MAX_MTU_ANNO")? {
            Some(s) => Some(parse_anno(&s.0, 2).map_err(|e| format!("MAX_MTU_ANNO: {}", e))?),
            None => None,
        };
        a.complete()?;
        let high = himem.or(maxmem).unwrap_or(256 * 1024) as usize;
        self.mem_high = high;
        self.mem_low = (high >> 2) * 3;
        self.mtu_anno = mtu_anno;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        self.next_reap = cx.now().add_nsec(REAP_INTERVAL * NS);
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    #[inline]
    fn simple_action(&mut self, p: Packet, cx: &Ctx) -> Option<Packet> {
        self.process(p, cx)
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        let now = cx.now();
        self.reap(now, cx);
        if !self.map.is_empty() {
            cx.schedule_timer_at(REAP_TIMER, now.add_nsec(REAP_INTERVAL * NS));
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "dump" => Some(Ok(self.dump())),
            _ => None,
        }
    }

    fn cleanup(&mut self, _cx: &Ctx) {
        self.map.clear();
        self.mem_used = 0;
    }

    crate::element_any!();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dg() -> Datagram {
        Datagram {
            data: Vec::new(),
            ranges: Vec::new(),
            total: None,
            head: None,
            first_hdr: [0; 20],
            created: Timestamp::ZERO,
            seq: 0,
            max_frag: 0,
        }
    }

    #[test]
    fn ranges_merge() {
        let mut d = dg();
        d.add_range(16, 24);
        d.add_range(0, 8);
        assert_eq!(d.ranges, [(0, 8), (16, 24)]);
        d.add_range(8, 16);
        assert_eq!(d.ranges, [(0, 24)]);
        d.add_range(40, 48);
        d.add_range(4, 44);
        assert_eq!(d.ranges, [(0, 48)]);
        d.add_range(56, 64);
        d.add_range(50, 52);
        assert_eq!(d.ranges, [(0, 48), (50, 52), (56, 64)]);
        d.total = Some(64);
        assert!(!d.complete());
        d.add_range(48, 56);
        assert!(d.complete());
    }
}
