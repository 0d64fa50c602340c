//! ARPQuerier: encapsulates IP packets in Ethernet headers found via ARP.

use crate::prelude::*;
use alloc::collections::{BTreeMap, BTreeSet, VecDeque};
use alloc::format;
use click_lang::args::{split_words, IpPrefix, Seconds};
use click_wire::EtherAddress;
use core::fmt::Write as _;
use core::net::Ipv4Addr;

const SEC: i64 = 1_000_000_000;
/// Queries for one address go out at most this often ...
const POLL_GAP: i64 = SEC / 10;
/// ... or this often after ten unanswered ones.
const POLL_GAP_SLOW: i64 = 2 * SEC;
const EXPIRE_TIMER: u32 = 0;

/// One ARP table entry.
struct Entry {
    eth: [u8; 6],
    known: bool,
    /// When the entry was created or last confirmed (ns).
    live_at: i64,
    polled_at: i64,
    polls_since_reply: u8,
    /// Position in the age list (with `live_at`).
    seq: u64,
    /// Packets waiting for this address, Ethernet header already in place.
    queue: VecDeque<Packet>,
}

impl Entry {
    fn expired(&self, now: i64, timeout: i64) -> bool {
        timeout != 0 && self.live_at.saturating_add(timeout) < now
    }
    fn is_known(&self, now: i64, timeout: i64) -> bool {
        self.known && !self.expired(now, timeout)
    }
    fn allow_poll(&self, now: i64) -> bool {
        let gap = if self.polls_since_reply >= 10 {
            POLL_GAP_SLOW
        } else {
            POLL_GAP
        };
        now >= self.polled_at.saturating_add(gap)
    }
    fn mark_poll(&mut self, now: i64) {
        self.polled_at = now;
        self.polls_since_reply = self.polls_since_reply.saturating_add(1);
    }
}

/// Table limits, as configured.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Limits {
    capacity: u32,
    entry_capacity: u32,
    entry_packet_capacity: u32,
    slim_factor: u32,
    /// Entry lifetime in ns; 0 means entries never expire.
    timeout: i64,
}

/// The ARP table ARPQuerier keeps (Click's ARPTable).
struct Table {
    map: BTreeMap<u32, Entry>,
    /// (live_at, seq, ip), oldest first.
    age: BTreeSet<(i64, u64, u32)>,
    next_seq: u64,
    packets: usize,
    drops: u64,
    lim: Limits,
}

/// What a lookup found.
enum Lookup {
    Unknown,
    Known([u8; 6]),
    /// Known, and old enough that a renewal query should go out.
    KnownPoll([u8; 6]),
}

impl Table {
    fn new(lim: Limits) -> Table {
        Table {
            map: BTreeMap::new(),
            age: BTreeSet::new(),
            next_seq: 0,
            packets: 0,
            drops: 0,
            lim,
        }
    }

    fn lookup(&mut self, ip: u32, now: i64, poll_timeout: i64) -> Lookup {
        let timeout = self.lim.timeout;
        match self.map.get_mut(&ip) {
            Some(e) if e.is_known(now, timeout) => {
                if poll_timeout != 0
                    && now >= e.live_at.saturating_add(poll_timeout)
                    && e.allow_poll(now)
                {
                    e.mark_poll(now);
                    Lookup::KnownPoll(e.eth)
                } else {
                    Lookup::Known(e.eth)
                }
            }
            _ => Lookup::Unknown,
        }
    }

    /// Removes an entry, dropping its packets.
    fn remove(&mut self, ip: u32) -> bool {
        let Some(e) = self.map.remove(&ip) else {
            return false;
        };
        self.age.remove(&(e.live_at, e.seq, ip));
        self.packets -= e.queue.len();
        self.drops += e.queue.len() as u64;
        true
    }

    /// Click's `slim`: removes expired entries and entries beyond
    /// ENTRY_CAPACITY (oldest first), then drops the oldest waiting packets
    /// while more than CAPACITY are held.
    fn slim(&mut self, now: i64) {
        while let Some(&(_, _, ip)) = self.age.first() {
            let over =
                self.lim.entry_capacity != 0 && self.map.len() > self.lim.entry_capacity as usize;
            let expired = self
                .map
                .get(&ip)
                .is_some_and(|e| e.expired(now, self.lim.timeout));
            if !(over || expired) {
                break;
            }
            if !self.remove(ip) {
                self.age.pop_first();
            }
        }
        let cap = self.lim.capacity as usize;
        if cap != 0 && self.packets > cap {
            let slim_cap = (cap - cap / self.lim.slim_factor.max(1) as usize).max(1);
            let order: Vec<u32> = self.age.iter().map(|&(_, _, ip)| ip).collect();
            for ip in order {
                if self.packets <= slim_cap {
                    break;
                }
                if let Some(e) = self.map.get_mut(&ip) {
                    while self.packets > slim_cap && e.queue.pop_front().is_some() {
                        self.packets -= 1;
                        self.drops += 1;
                    }
                }
            }
        }
    }

    /// Finds or creates the entry for `ip`.
    fn ensure(&mut self, ip: u32, now: i64) -> &mut Entry {
        if !self.map.contains_key(&ip) {
            let seq = self.next_seq;
            self.next_seq += 1;
            self.map.insert(
                ip,
                Entry {
                    eth: [0xff; 6],
                    known: false,
                    live_at: now,
                    polled_at: now - SEC,
                    polls_since_reply: 0,
                    seq,
                    queue: VecDeque::new(),
                },
            );
            self.age.insert((now, seq, ip));
            if self.lim.entry_capacity != 0 && self.map.len() > self.lim.entry_capacity as usize {
                // Make room; the new entry is the youngest, so it survives
                // unless ENTRY_CAPACITY is zero, which means unlimited.
                self.slim(now);
            }
        }
        self.map.get_mut(&ip).expect("entry just ensured")
    }

    /// Records `ip` at `eth` (a broadcast address marks it unknown) and
    /// returns the packets that were waiting for it.
    fn insert(&mut self, ip: u32, eth: [u8; 6], now: i64) -> VecDeque<Packet> {
        let seq = self.next_seq;
        self.next_seq += 1;
        let e = self.ensure(ip, now);
        let old = (e.live_at, e.seq, ip);
        e.eth = eth;
        e.known = eth != [0xff; 6];
        e.live_at = now;
        e.seq = seq;
        e.polls_since_reply = 0;
        e.polled_at = now - SEC;
        let q = core::mem::take(&mut e.queue);
        self.age.remove(&old);
        self.age.insert((now, seq, ip));
        self.packets -= q.len();
        q
    }

    /// Queues `p` for `ip`. Returns Ok(true) when a query should be sent,
    /// Err(p) when the packet could not be queued.
    fn append(&mut self, ip: u32, p: Packet, now: i64) -> Result<bool, Packet> {
        let timeout = self.lim.timeout;
        let epc = self.lim.entry_packet_capacity as usize;
        let e = self.ensure(ip, now);
        // Keep an entry that is still wanted just this side of expiring.
        if timeout != 0 && e.live_at < now - timeout {
            let old = (e.live_at, e.seq, ip);
            e.live_at = now - timeout;
            let new = (e.live_at, e.seq, ip);
            self.age.remove(&old);
            self.age.insert(new);
        }
        let e = self.map.get_mut(&ip).expect("entry exists");
        if epc != 0 && e.queue.len() >= epc {
            self.drops += 1;
            return Err(p);
        }
        self.packets += 1;
        let cap = self.lim.capacity as usize;
        if cap != 0 && self.packets > cap {
            self.slim(now);
        }
        let Some(e) = self.map.get_mut(&ip) else {
            // Cannot happen (the entry was just refreshed), but never lose
            // count of a packet.
            self.packets -= 1;
            self.drops += 1;
            return Err(p);
        };
        e.queue.push_back(p);
        if e.allow_poll(now) {
            e.mark_poll(now);
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Drops every entry and waiting packet.
    fn clear(&mut self) {
        self.drops += self.packets as u64;
        self.map.clear();
        self.age.clear();
        self.packets = 0;
    }

    /// When the oldest entry expires (the expiry timer's next deadline).
    fn next_expiry(&self) -> Option<i64> {
        if self.lim.timeout == 0 {
            return None;
        }
        let &(live_at, _, _) = self.age.first()?;
        Some(live_at.saturating_add(self.lim.timeout).saturating_add(1))
    }
}

/// `ARPQuerier(IP, ETH [, KEYWORDS])`.
pub struct ARPQuerier {
    my_ip: u32,
    my_eth: [u8; 6],
    bcast: u32,
    poll_timeout: i64,
    broadcast_poll: bool,
    table: Table,
    queries: u64,
    responses: u64,
    drops: u64,
    zero_warned: bool,
    configured: bool,
    /// When the expiry timer is set to fire.
    timer_at: Option<i64>,
    /// Scratch list of (output, packet) to emit, kept for its allocation.
    out: Vec<(usize, Packet)>,
}

impl Default for ARPQuerier {
    fn default() -> Self {
        ARPQuerier {
            my_ip: 0,
            my_eth: [0; 6],
            bcast: u32::MAX,
            poll_timeout: 60 * SEC,
            broadcast_poll: false,
            table: Table::new(DEFAULT_LIMITS),
            queries: 0,
            responses: 0,
            drops: 0,
            zero_warned: false,
            configured: false,
            timer_at: None,
            out: Vec::new(),
        }
    }
}

const DEFAULT_LIMITS: Limits = Limits {
    capacity: 2048,
    entry_capacity: 0,
    entry_packet_capacity: 0,
    slim_factor: 2,
    timeout: 300 * SEC,
};

pub static SPEC: ClassSpec = ClassSpec {
    name: "ARPQuerier",
    port_count: "2/1-2",
    processing: "h/h",
    group: "arp",
    signature: "ARPQuerier(IP, ETH [, KEYWORDS])",
    summary: "Encapsulates IP packets in Ethernet headers found via ARP.",
    description: "Handles most of the ARP protocol. IP is this host's IP address (optionally \
with a prefix length or mask, `18.26.4.24/24`, which gives the local broadcast address), ETH its \
Ethernet address.\n\n\
Packets arriving on input 0 should be IP packets with their destination IP address annotation \
set. If the Ethernet address of the destination is known, the packet is wrapped in an Ethernet \
header (type 0x0800, source ETH) and sent to output 0. Otherwise the packet is saved and an ARP \
query is sent instead (at most ten a second per address, one every two seconds after ten \
unanswered ones). ARP replies arriving on input 1 (with their Ethernet header) record the \
mapping and release the saved packets, in the order they arrived. Replies are accepted whether \
or not a query was outstanding.\n\n\
With two outputs, ARP queries leave on output 1; with one, on output 0. Queries are broadcast, \
carry the timestamp and VLAN TCI annotations of the packet that caused them, and ask for the \
packet's destination annotation.\n\n\
Special addresses: packets for 0.0.0.0 are dropped (the first one with a warning on standard \
error); packets for 255.255.255.255 or the BROADCAST address go to FF-FF-FF-FF-FF-FF; packets for \
multicast addresses go to 01-00-5E-xx-yy-zz, xx-yy-zz being the low 23 bits of the address \
(RFC 1112). Once an entry is older than POLL_TIMEOUT, the next packet for it also triggers a \
renewal query, sent unicast to the known address (broadcast with BROADCAST_POLL). Entries \
expire TIMEOUT after their last reply; saved packets expire with their entry. While packets \
keep arriving for an unresolved address its entry is kept just short of expiring.\n\n\
Keyword arguments:\n\n\
- `CAPACITY` (unsigned): most saved packets held at once; when exceeded, the oldest saved \
packets are dropped until CAPACITY − CAPACITY/CAPACITY_SLIM_FACTOR remain, counting the \
packet arriving. 0 means unlimited. \
Default 2048.\n\
- `ENTRY_CAPACITY` (unsigned): most ARP entries held; the oldest are removed. 0 (default) means \
unlimited.\n\
- `ENTRY_PACKET_CAPACITY` (unsigned): most saved packets per entry; later ones are dropped. \
0 (default) means unlimited.\n\
- `CAPACITY_SLIM_FACTOR` (unsigned, not 0): see CAPACITY. Default 2.\n\
- `TIMEOUT` (time): entry lifetime. 0 means forever. Default 5 minutes.\n\
- `POLL_TIMEOUT` (time): age after which known entries are renewed. 0 means never. Default \
1 minute.\n\
- `BROADCAST` (IP address): the local broadcast address. Default: from IP's prefix, or \
255.255.255.255.\n\
- `BROADCAST_POLL` (boolean): send renewal queries broadcast. Default false.\n\n\
A separate ARPTable element (Click's TABLE keyword) is not supported: each ARPQuerier keeps its \
own table.",
    ports: "two inputs (0: IP packets, 1: ARP replies); one or two outputs (0: Ethernet \
packets, and queries when there is no output 1; 1: ARP queries)",
    handlers: &[
        HandlerDoc {
            name: "table",
            mode: HandlerMode::Read,
            text: "The ARP table, oldest entry first, one `IP VALID ETH AGE` line per entry \
(VALID 1 for a usable entry; ETH FF-FF-FF-FF-FF-FF while unresolved; AGE in seconds since the \
entry was created or last confirmed).",
        },
        HandlerDoc {
            name: "stats",
            mode: HandlerMode::Read,
            text: "`N packets killed` and `N ARP queries sent`, one per line.",
        },
        HandlerDoc {
            name: "queries",
            mode: HandlerMode::Read,
            text: "Number of ARP queries sent.",
        },
        HandlerDoc {
            name: "responses",
            mode: HandlerMode::Read,
            text: "Number of packets of ARP-reply size received on input 1.",
        },
        HandlerDoc {
            name: "drops",
            mode: HandlerMode::Read,
            text: "Number of packets dropped (no address, capacity limits, expiry, clearing).",
        },
        HandlerDoc {
            name: "count",
            mode: HandlerMode::Read,
            text: "Number of entries in the table.",
        },
        HandlerDoc {
            name: "length",
            mode: HandlerMode::Read,
            text: "Number of packets waiting in the table.",
        },
        HandlerDoc {
            name: "ipaddr",
            mode: HandlerMode::ReadWrite,
            text: "This host's IP address (the ARP sender address). While it is 0.0.0.0 every \
packet is dropped.",
        },
        HandlerDoc {
            name: "broadcast",
            mode: HandlerMode::ReadWrite,
            text: "The local broadcast address.",
        },
        HandlerDoc {
            name: "insert",
            mode: HandlerMode::Write,
            text: "Adds an entry, `IP ETH`; packets waiting for IP are sent at once.",
        },
        HandlerDoc {
            name: "delete",
            mode: HandlerMode::Write,
            text: "Removes the entry for an IP address (and drops its waiting packets).",
        },
        HandlerDoc {
            name: "clear",
            mode: HandlerMode::Write,
            text: "Empties the table and zeroes the counters.",
        },
    ],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(ARPQuerier::default()),
};

struct Parsed {
    my_ip: u32,
    my_eth: [u8; 6],
    bcast: u32,
    poll_timeout: i64,
    broadcast_poll: bool,
    lim: Limits,
}

fn parse(config: &str, cx: click_lang::ArgContext) -> Result<Parsed, String> {
    let mut a = Args::with_context(config, cx);
    let mut lim = DEFAULT_LIMITS;
    if let Some(v) = a.read::<u32>("CAPACITY")? {
        lim.capacity = v;
    }
    if let Some(v) = a.read::<u32>("ENTRY_CAPACITY")? {
        lim.entry_capacity = v;
    }
    if let Some(v) = a.read::<u32>("ENTRY_PACKET_CAPACITY")? {
        lim.entry_packet_capacity = v;
    }
    if let Some(v) = a.read::<u32>("CAPACITY_SLIM_FACTOR")? {
        if v == 0 {
            return Err("CAPACITY_SLIM_FACTOR cannot be zero".into());
        }
        lim.slim_factor = v;
    }
    if let Some(Seconds(t)) = a.read::<Seconds>("TIMEOUT")? {
        lim.timeout = t.max(0);
    }
    let bcast = a.read::<Ipv4Addr>("BROADCAST")?;
    if a.read::<click_lang::args::RawString>("TABLE")?.is_some() {
        return Err("TABLE: ARPTable elements are not supported".into());
    }
    let poll_timeout = a
        .read::<Seconds>("POLL_TIMEOUT")?
        .map(|s| s.0.max(0))
        .unwrap_or(60 * SEC);
    let broadcast_poll = a.read::<bool>("BROADCAST_POLL")?.unwrap_or(false);
    let ip = a.read_mp::<IpPrefix>("IP")?;
    let eth = a.read_mp::<[u8; 6]>("ETH")?;
    a.complete()?;
    let my_ip = u32::from(ip.addr);
    let bcast = match bcast {
        Some(b) => u32::from(b),
        None => {
            let b = my_ip | !u32::from(ip.mask);
            if b == my_ip {
                u32::MAX
            } else {
                b
            }
        }
    };
    Ok(Parsed {
        my_ip,
        my_eth: eth,
        bcast,
        poll_timeout,
        broadcast_poll,
        lim,
    })
}

impl ARPQuerier {
    /// Builds and sends an ARP query for `want`.
    fn send_query(
        &mut self,
        want: u32,
        dst: Option<[u8; 6]>,
        anno_from: (Timestamp, u16),
        cx: &Ctx,
        out: &mut Vec<(usize, Packet)>,
    ) {
        let mut q = cx.pool().make_len(DEFAULT_HEADROOM, 42, 0);
        {
            let d = q.data_mut();
            let dst = match dst {
                Some(e) if !self.broadcast_poll => e,
                _ => [0xff; 6],
            };
            d[..6].copy_from_slice(&dst);
            d[6..12].copy_from_slice(&self.my_eth);
            d[12..14].copy_from_slice(&[0x08, 0x06]);
            d[14..22].copy_from_slice(&[0, 1, 0x08, 0, 6, 4, 0, 1]);
            d[22..28].copy_from_slice(&self.my_eth);
            d[28..32].copy_from_slice(&self.my_ip.to_be_bytes());
            d[32..38].fill(0);
            d[38..42].copy_from_slice(&want.to_be_bytes());
        }
        q.set_mac_header(0);
        // as Click's: the ARP header is the network header (ARPPrint
        // downstream prints the query)
        q.set_network_header(14, 28);
        q.set_timestamp(anno_from.0);
        q.anno_mut().set_vlan_tci(anno_from.1);
        self.queries += 1;
        out.push((cx.noutputs().max(1) - 1, q));
    }

    /// Click's `handle_ip`. `response` is true for packets released from
    /// the table, which already carry their Ethernet header.
    fn handle_ip(
        &mut self,
        mut p: Packet,
        response: bool,
        cx: &Ctx,
        out: &mut Vec<(usize, Packet)>,
    ) {
        if self.my_ip == 0 {
            self.drops += 1;
            return;
        }
        if !response {
            p.push(14);
            p.set_mac_header(0);
            p.data_mut()[12..14].copy_from_slice(&[0x08, 0x00]);
        }
        let dst = u32::from(p.anno().dst_ip());
        let now = cx.now_coarse().nsec();
        let dst_eth = match self.table.lookup(dst, now, self.poll_timeout) {
            Lookup::Known(e) => e,
            Lookup::KnownPoll(e) => {
                let anno = (p.timestamp(), p.anno().vlan_tci());
                self.send_query(dst, Some(e), anno, cx, out);
                e
            }
            Lookup::Unknown if dst == u32::MAX || dst == self.bcast => [0xff; 6],
            Lookup::Unknown if dst >> 28 == 0xe => {
                let b = dst.to_be_bytes();
                [0x01, 0x00, 0x5e, b[1] & 0x7f, b[2], b[3]]
            }
            Lookup::Unknown => {
                if dst == 0 {
                    if !self.zero_warned {
                        self.zero_warned = true;
                        cx.error_line(&format!(
                            "{}: would query for 0.0.0.0; missing dest IP addr annotation?",
                            cx.declaration()
                        ));
                    }
                    self.drops += 1;
                    return;
                }
                let anno = (p.timestamp(), p.anno().vlan_tci());
                match self.table.append(dst, p, now) {
                    Ok(true) => self.send_query(dst, None, anno, cx, out),
                    Ok(false) => {}
                    Err(_dropped) => {}
                }
                self.arm_timer(cx);
                return;
            }
        };
        // Set the source just before sending, in case ipaddr/ETH changed
        // while the packet waited.
        let d = p.data_mut();
        d[..6].copy_from_slice(&dst_eth);
        d[6..12].copy_from_slice(&self.my_eth);
        out.push((0, p));
    }

    /// Click's `handle_response`.
    fn handle_response(&mut self, p: &Packet, cx: &Ctx, out: &mut Vec<(usize, Packet)>) {
        let d = p.data();
        if d.len() < 42 {
            return;
        }
        self.responses += 1;
        let sha: [u8; 6] = d[22..28].try_into().unwrap_or([1; 6]);
        if d[12..14] != [0x08, 0x06]
            || d[14..16] != [0, 1]
            || d[16..18] != [0x08, 0x00]
            || d[20..22] != [0, 2]
            || sha[0] & 1 != 0
        {
            return;
        }
        let spa = u32::from_be_bytes([d[28], d[29], d[30], d[31]]);
        self.insert_and_release(spa, sha, cx, out);
    }

    /// Records a mapping and sends the packets that waited for it.
    fn insert_and_release(
        &mut self,
        ip: u32,
        eth: [u8; 6],
        cx: &Ctx,
        out: &mut Vec<(usize, Packet)>,
    ) {
        let waiting = self.table.insert(ip, eth, cx.now().nsec());
        self.arm_timer(cx);
        for q in waiting {
            self.handle_ip(q, true, cx, out);
        }
    }

    /// Pushes what `handle_*` produced, in order, batching runs of packets
    /// for the same output.
    fn emit(&mut self, mut out: Vec<(usize, Packet)>, cx: &Ctx) {
        if out.len() == 1 {
            if let Some((port, p)) = out.pop() {
                cx.push(port, p);
            }
        } else if !out.is_empty() {
            let mut run: Batch = Vec::new();
            let mut run_port = 0;
            for (port, p) in out.drain(..) {
                if port != run_port && !run.is_empty() {
                    cx.push_batch(run_port, core::mem::take(&mut run));
                }
                run_port = port;
                run.push(p);
            }
            cx.push_batch(run_port, run);
        }
        if self.out.capacity() == 0 {
            self.out = out;
        }
    }

    /// Makes sure the expiry timer fires by the time the oldest entry
    /// expires.
    fn arm_timer(&mut self, cx: &Ctx) {
        let Some(at) = self.table.next_expiry() else {
            return;
        };
        if self.timer_at.is_some_and(|t| t <= at) {
            return;
        }
        self.timer_at = Some(at);
        cx.schedule_timer_at(EXPIRE_TIMER, Timestamp::from_nsec(at));
    }

    fn table_string(&self, now: i64) -> String {
        let mut s = String::new();
        for &(_, _, ip) in &self.table.age {
            let Some(e) = self.table.map.get(&ip) else {
                continue;
            };
            let ok = e.is_known(now, self.table.lim.timeout) as u8;
            // Click reports the age in jiffies (milliseconds at user level).
            let age_ms = (now - e.live_at).max(0) / 1_000_000;
            let _ = writeln!(
                s,
                "{} {} {} {}",
                Ipv4Addr::from(ip),
                ok,
                EtherAddress(e.eth),
                Timestamp::from_nsec(age_ms * 1_000_000)
            );
        }
        s
    }

    fn total_drops(&self) -> u64 {
        self.drops + self.table.drops
    }
}

impl Element for ARPQuerier {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let p = parse(config, cx.arg_context())?;
        if self.configured && (p.my_ip != self.my_ip || p.my_eth != self.my_eth) {
            self.table.clear();
        }
        self.my_ip = p.my_ip;
        self.my_eth = p.my_eth;
        self.bcast = p.bcast;
        self.poll_timeout = p.poll_timeout;
        self.broadcast_poll = p.broadcast_poll;
        self.table.lim = p.lim;
        self.configured = true;
        Ok(())
    }

    fn push(&mut self, port: usize, p: Packet, cx: &Ctx) {
        let mut out = core::mem::take(&mut self.out);
        if port == 0 {
            self.handle_ip(p, false, cx, &mut out);
        } else {
            self.handle_response(&p, cx, &mut out);
        }
        self.emit(out, cx);
    }

    fn push_batch(&mut self, port: usize, batch: Batch, cx: &Ctx) {
        let mut out = core::mem::take(&mut self.out);
        for p in batch {
            if port == 0 {
                self.handle_ip(p, false, cx, &mut out);
            } else {
                self.handle_response(&p, cx, &mut out);
            }
        }
        self.emit(out, cx);
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        self.timer_at = None;
        let now = cx.now().nsec();
        self.table.slim(now);
        self.arm_timer(cx);
    }

    fn read_handler(&mut self, name: &str, cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "table" => self.table_string(cx.now().nsec()),
            "stats" => format!(
                "{} packets killed\n{} ARP queries sent\n",
                self.total_drops(),
                self.queries
            ),
            "queries" => self.queries.to_string(),
            "responses" => self.responses.to_string(),
            "drops" => self.total_drops().to_string(),
            "count" => self.table.map.len().to_string(),
            "length" => self.table.packets.to_string(),
            "ipaddr" => Ipv4Addr::from(self.my_ip).to_string(),
            "broadcast" => Ipv4Addr::from(self.bcast).to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        let ac = cx.arg_context();
        let ip_arg = |v: &str, what: &str| {
            ac.ip(click_lang::args::uncomment(v).trim())
                .map(u32::from)
                .map_err(|_| format!("'{}' expects IP address", what))
        };
        Some(match name {
            "ipaddr" => ip_arg(value, "ipaddr").map(|a| self.my_ip = a),
            "broadcast" => ip_arg(value, "broadcast").map(|a| self.bcast = a),
            "insert" => {
                let w = split_words(value);
                let parsed = match w.as_slice() {
                    [ip, eth] => ac.ip(ip).map_err(|e| format!("IP: {}", e)).and_then(|ip| {
                        ac.ether(eth)
                            .map(|e| (u32::from(ip), e))
                            .map_err(|e| format!("ETH: {}", e))
                    }),
                    [_] | [] => Err("missing mandatory ETH argument".into()),
                    _ => Err("too many arguments".into()),
                };
                parsed.map(|(ip, eth)| {
                    let mut out = Vec::new();
                    self.insert_and_release(ip, eth, cx, &mut out);
                    self.emit(out, cx);
                })
            }
            "delete" => {
                let w = split_words(value);
                match w.as_slice() {
                    [ip] => ac.ip(ip).map_err(|e| format!("IP: {}", e)).map(|ip| {
                        self.table.remove(u32::from(ip));
                    }),
                    [] => Err("missing mandatory IP argument".into()),
                    _ => Err("too many arguments".into()),
                }
            }
            "clear" => {
                self.table.clear();
                self.table.drops = 0;
                self.drops = 0;
                self.queries = 0;
                self.responses = 0;
                Ok(())
            }
            _ => return None,
        })
    }

    crate::element_any!();
}
