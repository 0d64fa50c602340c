//! ARPQuerier: encapsulates IP packets in Ethernet headers found via ARP.

use super::arptable::{
    ARPTable, ExpiryTimer, LimitArgs, Lookup, SharedTable, Table, DEFAULT_LIMITS, SEC,
};
use crate::prelude::*;
use alloc::format;
use alloc::rc::Rc;
use click_lang::args::{IpPrefix, RawString, Seconds};
use click_wire::arp::{HTYPE_ETHERNET, OP_REPLY, OP_REQUEST};
use click_wire::{ethertype, ArpPacket, EtherAddress, EthernetFrame};
use core::cell::RefCell;
use core::net::Ipv4Addr;

const EXPIRE_TIMER: u32 = 0;

/// `ARPQuerier(IP, ETH [, KEYWORDS])`.
pub struct ARPQuerier {
    my_ip: u32,
    my_eth: [u8; 6],
    bcast: u32,
    poll_timeout: i64,
    broadcast_poll: bool,
    /// The table: this element's own, or an ARPTable's (TABLE).
    table: SharedTable,
    /// The ARPTable element named by TABLE, found at initialization.
    table_name: Option<String>,
    /// Expires the table's entries (a shared table's too: every holder
    /// ticks at the same times).
    timer: ExpiryTimer,
    queries: u64,
    responses: u64,
    drops: u64,
    zero_warned: bool,
    configured: bool,
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
            table: Rc::new(RefCell::new(Table::new(DEFAULT_LIMITS))),
            table_name: None,
            timer: ExpiryTimer::default(),
            queries: 0,
            responses: 0,
            drops: 0,
            zero_warned: false,
            configured: false,
            out: Vec::new(),
        }
    }
}

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
- `TABLE` (ARPTable element): use that element's table, shared with other ARPQueriers, \
instead of one of this element's own; the table keywords above then configure nothing (give \
them to the ARPTable).\n\n\
A single argument gives both IP and ETH (`ARPQuerier(eth0)`, an AddressInfo name for both). \
A name for both an address and a prefix as IP means the address (so the broadcast address is \
255.255.255.255 unless BROADCAST is given); `eth0:ipnet` would give the prefix. Expired \
entries stay in the table, shown invalid, until the expiry timer runs (after TIMEOUT's whole \
seconds, then every whole seconds + 1), as in Click.",
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
            text: "Number of packets this element dropped (no address, not configured); \
`stats` adds the table's drops (capacity limits, expiry, clearing).",
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
            text: "Adds or updates an entry, `IP ETH`. As in Click, packets already waiting \
for IP stay queued until an ARP reply for it arrives; later packets go straight out.",
        },
        HandlerDoc {
            name: "delete",
            mode: HandlerMode::Write,
            text: "Marks the entry for an IP address unresolved (as Click does: it stays in \
the table with address FF-FF-FF-FF-FF-FF).",
        },
        HandlerDoc {
            name: "clear",
            mode: HandlerMode::Write,
            text: "Empties the table and zeroes the query, response and drop counters.",
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
    poll_timeout: Option<i64>,
    broadcast_poll: Option<bool>,
    lim: LimitArgs,
    table: Option<String>,
}

fn parse(config: &str, cx: click_lang::ArgContext) -> Result<Parsed, String> {
    let mut a = Args::with_context(config, cx);
    let lim = LimitArgs::read(&mut a)?;
    let bcast = a.read::<Ipv4Addr>("BROADCAST")?;
    let table = a.read::<RawString>("TABLE")?.map(|r| r.0);
    let poll_timeout = a.read::<Seconds>("POLL_TIMEOUT")?.map(|s| s.0.max(0));
    let broadcast_poll = a.read::<bool>("BROADCAST_POLL")?;
    // Click: a single remaining argument gives both IP and ETH
    // (`ARPQuerier(eth0)` with an AddressInfo name)
    let mut rest = a.rest();
    if rest.len() == 1 {
        rest.push(rest[0].clone());
    }
    let mut a = Args::from_vec_in(rest, cx);
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
        table,
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
            let dst = match dst {
                Some(e) if !self.broadcast_poll => EtherAddress(e),
                _ => EtherAddress::BROADCAST,
            };
            let me = EtherAddress(self.my_eth);
            let mut f = EthernetFrame::new_unchecked(q.data_mut());
            f.set_dst_addr(dst);
            f.set_src_addr(me);
            f.set_ethertype(ethertype::ARP);
            let mut a = ArpPacket::new_unchecked(f.payload_mut());
            a.set_ethernet_ipv4();
            a.set_operation(OP_REQUEST);
            a.set_sender_hardware_addr(me);
            a.set_sender_protocol_addr(Ipv4Addr::from(self.my_ip));
            a.set_target_hardware_addr(EtherAddress::ZERO);
            a.set_target_protocol_addr(Ipv4Addr::from(want));
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
            EthernetFrame::new_unchecked(p.data_mut()).set_ethertype(ethertype::IPV4);
        }
        let dst = u32::from(p.anno().dst_ip());
        let now = cx.now_coarse().nsec();
        let found = self.table.borrow_mut().lookup(dst, now, self.poll_timeout);
        let dst_eth = match found {
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
                let r = {
                    let mut t = self.table.borrow_mut();
                    let r = t.append(dst, p, now);
                    self.timer.arm(&t, EXPIRE_TIMER, cx);
                    r
                };
                match r {
                    Ok(true) => self.send_query(dst, None, anno, cx, out),
                    Ok(false) => {}
                    Err(_dropped) => {}
                }
                return;
            }
        };
        // Set the source just before sending, in case ipaddr/ETH changed
        // while the packet waited.
        // Every packet here has its 14-byte Ethernet header.
        let mut f = EthernetFrame::new_unchecked(p.data_mut());
        f.set_dst_addr(EtherAddress(dst_eth));
        f.set_src_addr(EtherAddress(self.my_eth));
        out.push((0, p));
    }

    /// Click's `handle_response`.
    fn handle_response(&mut self, p: &Packet, cx: &Ctx, out: &mut Vec<(usize, Packet)>) {
        let d = p.data();
        if d.len() < EthernetFrame::<&[u8]>::HEADER_LEN + ArpPacket::<&[u8]>::LEN {
            return;
        }
        self.responses += 1;
        // Ethernet/IPv4 positions; like Click, the address lengths are not
        // looked at.
        let f = EthernetFrame::new_unchecked(d);
        let a = ArpPacket::new_unchecked(f.payload());
        let sha = a.sender_hardware_addr();
        if f.ethertype() != ethertype::ARP
            || a.hardware_type() != HTYPE_ETHERNET
            || a.protocol_type() != ethertype::IPV4
            || a.operation() != OP_REPLY
            || sha.is_group()
        {
            return;
        }
        let spa = u32::from(a.sender_protocol_addr());
        self.insert_and_release(spa, sha.0, cx, out);
    }

    /// Records a mapping and sends the packets that waited for it.
    fn insert_and_release(
        &mut self,
        ip: u32,
        eth: [u8; 6],
        cx: &Ctx,
        out: &mut Vec<(usize, Packet)>,
    ) {
        let waiting = {
            let mut t = self.table.borrow_mut();
            let w = t.insert(ip, eth, cx.now().nsec());
            self.timer.arm(&t, EXPIRE_TIMER, cx);
            w
        };
        for q in waiting {
            self.handle_ip(q, true, cx, out);
        }
    }

    /// Pushes what `handle_*` produced, in order, batching runs of packets
    /// for the same output.
    /// Gives an IP packet whose next hop is known and fresh in `t` its
    /// Ethernet header; false (the packet untouched) otherwise.
    #[inline]
    fn encap_if_known(&self, t: &Table, p: &mut Packet, now: i64) -> bool {
        let dst = u32::from(p.anno().dst_ip());
        let Some(eth) = t.lookup_fresh(dst, now, self.poll_timeout) else {
            return false;
        };
        p.push(14);
        p.set_mac_header(0);
        let mut f = EthernetFrame::new_unchecked(p.data_mut());
        f.set_ethertype(ethertype::IPV4);
        f.set_dst_addr(EtherAddress(eth));
        f.set_src_addr(EtherAddress(self.my_eth));
        true
    }

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
}

impl Element for ARPQuerier {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let p = parse(config, cx.arg_context())?;
        if self.configured && p.table != self.table_name {
            return Err("TABLE: cannot change on reconfiguration".into());
        }
        let own = p.table.is_none();
        if self.configured && own && (p.my_ip != self.my_ip || p.my_eth != self.my_eth) {
            self.table.borrow_mut().clear();
        }
        self.my_ip = p.my_ip;
        self.my_eth = p.my_eth;
        self.bcast = p.bcast;
        self.poll_timeout = p.poll_timeout.unwrap_or(if self.configured {
            self.poll_timeout
        } else {
            60 * SEC
        });
        self.broadcast_poll = p
            .broadcast_poll
            .unwrap_or(self.configured && self.broadcast_poll);
        if own {
            // the table keywords configure this element's own table
            let mut t = self.table.borrow_mut();
            let base = if self.configured {
                t.lim
            } else {
                DEFAULT_LIMITS
            };
            t.lim = p.lim.apply(base);
        }
        self.table_name = p.table;
        self.configured = true;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        self.timer.start(cx);
        let Some(name) = &self.table_name else {
            return Ok(());
        };
        let shared = cx.find_element(name).and_then(|i| {
            cx.with_element(i, |e| {
                e.as_any().downcast_ref::<ARPTable>().map(ARPTable::shared)
            })
            .flatten()
        });
        match shared {
            Some(t) => {
                self.table = t;
                Ok(())
            }
            None if cx.find_element(name).is_some() => {
                Err(format!("TABLE: '{name}' is not an ARPTable element"))
            }
            None => Err(format!(
                "TABLE: no ARPTable element named '{name}' (on this element's thread)"
            )),
        }
    }

    /// Hot swap: an ARPQuerier with the same addresses takes the old one's
    /// table (entries and waiting packets) when both keep their own (with
    /// TABLE, the ARPTable element carries the state).
    fn take_state(&mut self, old: &mut dyn Element, cx: &Ctx) {
        let Some(o) = old
            .as_any_mut()
            .and_then(|a| a.downcast_mut::<ARPQuerier>())
        else {
            return;
        };
        if o.my_ip != self.my_ip
            || o.my_eth != self.my_eth
            || o.bcast != self.bcast
            || o.table_name.is_some()
            || self.table_name.is_some()
        {
            return;
        }
        let mut t = self.table.borrow_mut();
        t.take_entries(&mut o.table.borrow_mut());
        self.timer.arm(&t, EXPIRE_TIMER, cx);
    }

    fn push(&mut self, port: usize, mut p: Packet, cx: &Ctx) {
        if port == 0 && self.my_ip != 0 {
            // a known, fresh next hop: encapsulated and sent on here
            let now = cx.now_coarse().nsec();
            if self.encap_if_known(&self.table.borrow(), &mut p, now) {
                return cx.push(0, p);
            }
        }
        let mut out = core::mem::take(&mut self.out);
        if port == 0 {
            self.handle_ip(p, false, cx, &mut out);
        } else {
            self.handle_response(&p, cx, &mut out);
        }
        self.emit(out, cx);
    }

    fn push_batch(&mut self, port: usize, mut batch: Batch, cx: &Ctx) {
        if port == 0 && self.my_ip != 0 {
            // The run of packets whose next hop is known and fresh gets its
            // Ethernet header here and leaves as one batch; from the first
            // other packet on, `handle_ip` takes them one by one.
            let now = cx.now_coarse().nsec();
            let mut i = 0;
            {
                let t = self.table.borrow();
                while let Some(p) = batch.get_mut(i) {
                    if !self.encap_if_known(&t, p, now) {
                        break;
                    }
                    i += 1;
                }
            }
            if i == batch.len() {
                cx.push_batch(0, batch);
                return;
            }
            let rest = batch.split_off(i);
            cx.push_batch(0, batch);
            batch = rest;
        }
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
        self.timer
            .fire(&mut self.table.borrow_mut(), EXPIRE_TIMER, cx);
    }

    fn read_handler(&mut self, name: &str, cx: &Ctx) -> Option<HandlerResult<String>> {
        let t = self.table.borrow();
        Some(Ok(match name {
            "stats" => format!(
                "{} packets killed\n{} ARP queries sent\n",
                self.drops + t.drops,
                self.queries
            ),
            "queries" => self.queries.to_string(),
            "responses" => self.responses.to_string(),
            "drops" => self.drops.to_string(),
            "ipaddr" => Ipv4Addr::from(self.my_ip).to_string(),
            "broadcast" => Ipv4Addr::from(self.bcast).to_string(),
            "table" | "count" | "length" => return t.read_handler(name, cx.now().nsec()).map(Ok),
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
        match name {
            "ipaddr" => Some(ip_arg(value, "ipaddr").map(|a| self.my_ip = a)),
            "broadcast" => Some(ip_arg(value, "broadcast").map(|a| self.bcast = a)),
            "clear" => {
                self.drops = 0;
                self.queries = 0;
                self.responses = 0;
                self.table.borrow_mut().clear();
                Some(Ok(()))
            }
            "insert" | "delete" => {
                let mut t = self.table.borrow_mut();
                let r = t.write_handler(name, value, &ac, cx.now().nsec());
                self.timer.arm(&t, EXPIRE_TIMER, cx);
                r
            }
            _ => None,
        }
    }

    crate::element_any!();
}
