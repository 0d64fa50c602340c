//! ARPTable: the IP-to-Ethernet table behind ARPQuerier, as an element of
//! its own so several ARPQueriers can share one (`ARPQuerier(TABLE t, ...)`).

use crate::prelude::*;
use alloc::collections::{BTreeMap, BTreeSet, VecDeque};
use alloc::format;
use alloc::rc::Rc;
use click_lang::args::{split_words, Seconds};
use click_lang::ArgContext;
use click_wire::EtherAddress;
use core::cell::RefCell;
use core::fmt::Write as _;
use core::net::Ipv4Addr;

pub(crate) const SEC: i64 = 1_000_000_000;
/// Where the two sequence counters of [`Table`] start, back to back.
const SEQ_BASE: u64 = 1 << 62;
/// Queries for one address go out at most this often ...
const POLL_GAP: i64 = SEC / 10;
/// ... or this often after ten unanswered ones.
const POLL_GAP_SLOW: i64 = 2 * SEC;

/// One ARP table entry.
pub(crate) struct Entry {
    pub(crate) eth: [u8; 6],
    pub(crate) known: bool,
    /// When the entry was created or last confirmed (ns).
    pub(crate) live_at: i64,
    pub(crate) polled_at: i64,
    pub(crate) polls_since_reply: u8,
    /// Position in the age list (with `live_at`).
    pub(crate) seq: u64,
    /// Packets waiting for this address, Ethernet header already in place.
    pub(crate) queue: VecDeque<Packet>,
}

impl Entry {
    pub(crate) fn expired(&self, now: i64, timeout: i64) -> bool {
        timeout != 0 && self.live_at.saturating_add(timeout) < now
    }
    pub(crate) fn is_known(&self, now: i64, timeout: i64) -> bool {
        self.known && !self.expired(now, timeout)
    }
    pub(crate) fn allow_poll(&self, now: i64) -> bool {
        let gap = if self.polls_since_reply >= 10 {
            POLL_GAP_SLOW
        } else {
            POLL_GAP
        };
        now >= self.polled_at.saturating_add(gap)
    }
    pub(crate) fn mark_poll(&mut self, now: i64) {
        self.polled_at = now;
        self.polls_since_reply = self.polls_since_reply.saturating_add(1);
    }
}

/// Table limits, as configured.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) capacity: u32,
    pub(crate) entry_capacity: u32,
    pub(crate) entry_packet_capacity: u32,
    pub(crate) slim_factor: u32,
    /// Entry lifetime in ns; 0 means entries never expire.
    pub(crate) timeout: i64,
}

/// The ARP table ARPQuerier keeps (Click's ARPTable).
pub(crate) struct Table {
    pub(crate) map: BTreeMap<u32, Entry>,
    /// (live_at, seq, ip), oldest first.
    pub(crate) age: BTreeSet<(i64, u64, u32)>,
    /// Sequence numbers for entries made or confirmed (counting up) ...
    pub(crate) next_seq: u64,
    /// ... and for entries kept from expiring (counting down, so such an
    /// entry goes before the others of the same age, as Click's walk along
    /// its age list puts it).
    pub(crate) low_seq: u64,
    pub(crate) packets: usize,
    pub(crate) drops: u64,
    pub(crate) lim: Limits,
}

/// What a lookup found.
pub(crate) enum Lookup {
    Unknown,
    Known([u8; 6]),
    /// Known, and old enough that a renewal query should go out.
    KnownPoll([u8; 6]),
}

impl Table {
    pub(crate) fn new(lim: Limits) -> Table {
        Table {
            map: BTreeMap::new(),
            age: BTreeSet::new(),
            next_seq: SEQ_BASE,
            low_seq: SEQ_BASE - 1,
            packets: 0,
            drops: 0,
            lim,
        }
    }

    pub(crate) fn lookup(&mut self, ip: u32, now: i64, poll_timeout: i64) -> Lookup {
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

    /// The address for `ip` when [`lookup`](Self::lookup) would answer
    /// `Known` without side effects (known, not expired, not yet due for a
    /// renewal query); `None` otherwise.
    #[inline]
    pub(crate) fn lookup_fresh(&self, ip: u32, now: i64, poll_timeout: i64) -> Option<[u8; 6]> {
        let e = self.map.get(&ip)?;
        let due = poll_timeout != 0 && now >= e.live_at.saturating_add(poll_timeout);
        (e.is_known(now, self.lim.timeout) && !due).then_some(e.eth)
    }

    /// Removes an entry, dropping its packets.
    pub(crate) fn remove(&mut self, ip: u32) -> bool {
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
    pub(crate) fn slim(&mut self, now: i64) {
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
    pub(crate) fn ensure(&mut self, ip: u32, now: i64) -> &mut Entry {
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
    pub(crate) fn insert(&mut self, ip: u32, eth: [u8; 6], now: i64) -> VecDeque<Packet> {
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
    pub(crate) fn append(&mut self, ip: u32, p: Packet, now: i64) -> Result<bool, Packet> {
        let timeout = self.lim.timeout;
        let epc = self.lim.entry_packet_capacity as usize;
        let low = self.low_seq;
        let e = self.ensure(ip, now);
        // Keep an entry that is still wanted just this side of expiring.
        // (Click moves it forward in its age list past the entries older
        // than that, so it lands before those of the same age.)
        if timeout != 0 && e.live_at < now - timeout {
            let old = (e.live_at, e.seq, ip);
            e.live_at = now - timeout;
            e.seq = low;
            let new = (e.live_at, e.seq, ip);
            self.low_seq -= 1;
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

    /// Hot swap: an empty table takes `old`'s entries (with their waiting
    /// packets) and counters, keeping its own limits.
    pub(crate) fn take_entries(&mut self, old: &mut Table) {
        if !self.map.is_empty() {
            return;
        }
        core::mem::swap(&mut self.map, &mut old.map);
        core::mem::swap(&mut self.age, &mut old.age);
        self.next_seq = old.next_seq;
        self.low_seq = old.low_seq;
        self.packets = core::mem::take(&mut old.packets);
        self.drops = old.drops;
    }

    /// Drops every entry and waiting packet.
    pub(crate) fn clear(&mut self) {
        self.drops += self.packets as u64;
        self.map.clear();
        self.age.clear();
        self.packets = 0;
    }
}

pub(crate) const DEFAULT_LIMITS: Limits = Limits {
    capacity: 2048,
    entry_capacity: 0,
    entry_packet_capacity: 0,
    slim_factor: 2,
    timeout: 300 * SEC,
};

/// The table keywords a configuration gave (ARPTable's, which ARPQuerier
/// also takes for the table it keeps itself).
#[derive(Clone, Copy, Default)]
pub(crate) struct LimitArgs {
    pub(crate) capacity: Option<u32>,
    pub(crate) entry_capacity: Option<u32>,
    pub(crate) entry_packet_capacity: Option<u32>,
    pub(crate) slim_factor: Option<u32>,
    pub(crate) timeout: Option<i64>,
}

impl LimitArgs {
    pub(crate) fn read(a: &mut Args) -> Result<LimitArgs, String> {
        let l = LimitArgs {
            capacity: a.read::<u32>("CAPACITY")?,
            entry_capacity: a.read::<u32>("ENTRY_CAPACITY")?,
            entry_packet_capacity: a.read::<u32>("ENTRY_PACKET_CAPACITY")?,
            slim_factor: a.read::<u32>("CAPACITY_SLIM_FACTOR")?,
            timeout: a.read::<Seconds>("TIMEOUT")?.map(|s| s.0.max(0)),
        };
        if l.slim_factor == Some(0) {
            return Err("CAPACITY_SLIM_FACTOR cannot be zero".into());
        }
        Ok(l)
    }

    /// `base` with the given limits changed.
    pub(crate) fn apply(&self, base: Limits) -> Limits {
        Limits {
            capacity: self.capacity.unwrap_or(base.capacity),
            entry_capacity: self.entry_capacity.unwrap_or(base.entry_capacity),
            entry_packet_capacity: self
                .entry_packet_capacity
                .unwrap_or(base.entry_packet_capacity),
            slim_factor: self.slim_factor.unwrap_or(base.slim_factor),
            timeout: self.timeout.unwrap_or(base.timeout),
        }
    }
}

/// The expiry timer runs as Click's: first after TIMEOUT's whole seconds,
/// then every whole seconds + 1 (so entries may outlive TIMEOUT a little,
/// shown invalid, until it runs). `None`: TIMEOUT 0, no timer.
pub(crate) fn first_expiry_delay(timeout: i64) -> Option<i64> {
    (timeout != 0).then_some(timeout / SEC * SEC)
}

pub(crate) fn expiry_period(timeout: i64) -> Option<i64> {
    (timeout != 0).then_some((timeout / SEC + 1) * SEC)
}

/// The expiry timer of a table's holder (an ARPTable, or an ARPQuerier).
/// It runs at Click's times — TIMEOUT's whole seconds after the router
/// started, then every whole seconds + 1 — but only while the table holds
/// entries, so an idle router can finish.
#[derive(Default)]
pub(crate) struct ExpiryTimer {
    origin: i64,
    armed: bool,
}

impl ExpiryTimer {
    pub(crate) fn start(&mut self, cx: &Ctx) {
        self.origin = cx.now().nsec();
    }

    /// Schedules timer `id` at the next tick if the table holds entries.
    pub(crate) fn arm(&mut self, table: &Table, id: u32, cx: &Ctx) {
        if self.armed || table.map.is_empty() {
            return;
        }
        let (Some(first), Some(period)) = (
            first_expiry_delay(table.lim.timeout),
            expiry_period(table.lim.timeout),
        ) else {
            return;
        };
        let first = self.origin.saturating_add(first);
        let now = cx.now().nsec();
        let at = if now <= first {
            first
        } else {
            let k = (now - first + period - 1) / period;
            first.saturating_add(k.saturating_mul(period))
        };
        self.armed = true;
        cx.schedule_timer_at(id, Timestamp::from_nsec(at));
    }

    /// The timer fired: expire entries and schedule the next tick.
    pub(crate) fn fire(&mut self, table: &mut Table, id: u32, cx: &Ctx) {
        self.armed = false;
        let now = cx.now().nsec();
        table.slim(now);
        if !table.map.is_empty() {
            if let Some(p) = expiry_period(table.lim.timeout) {
                self.armed = true;
                cx.schedule_timer_at(id, Timestamp::from_nsec(now.saturating_add(p)));
            }
        }
    }
}

impl Table {
    /// The `table` handler: oldest entry first, `IP VALID ETH AGE`.
    pub(crate) fn dump(&self, now: i64) -> String {
        let mut s = String::new();
        for &(_, _, ip) in &self.age {
            let Some(e) = self.map.get(&ip) else {
                continue;
            };
            let ok = e.is_known(now, self.lim.timeout) as u8;
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

    /// The table's own read handlers.
    pub(crate) fn read_handler(&self, name: &str, now: i64) -> Option<String> {
        Some(match name {
            "table" => self.dump(now),
            "drops" => self.drops.to_string(),
            "count" => self.map.len().to_string(),
            "length" => self.packets.to_string(),
            _ => return None,
        })
    }

    /// The table's own write handlers: `insert IP ETH` (packets waiting
    /// for IP stay queued, as in Click), `delete IP` (marks the entry
    /// unresolved, as Click does), `clear`.
    pub(crate) fn write_handler(
        &mut self,
        name: &str,
        value: &str,
        cx: &ArgContext,
        now: i64,
    ) -> Option<Result<(), String>> {
        Some(match name {
            "insert" => {
                let w = split_words(value);
                match w.as_slice() {
                    [ip, eth] => cx.ip(ip).map_err(|e| format!("IP: {}", e)).and_then(|ip| {
                        cx.ether(eth)
                            .map(|e| {
                                self.insert_keep(u32::from(ip), e, now);
                            })
                            .map_err(|e| format!("ETH: {}", e))
                    }),
                    [_] | [] => Err("missing mandatory ETH argument".into()),
                    _ => Err("too many arguments".into()),
                }
            }
            "delete" => {
                let w = split_words(value);
                match w.as_slice() {
                    [ip] => cx.ip(ip).map_err(|e| format!("IP: {}", e)).map(|ip| {
                        self.insert_keep(u32::from(ip), [0xff; 6], now);
                    }),
                    [] => Err("missing mandatory IP argument".into()),
                    _ => Err("too many arguments".into()),
                }
            }
            "clear" => {
                self.clear();
                Ok(())
            }
            _ => return None,
        })
    }

    /// Click's `insert` without taking the waiting packets.
    fn insert_keep(&mut self, ip: u32, eth: [u8; 6], now: i64) {
        let waiting = self.insert(ip, eth, now);
        if let Some(e) = self.map.get_mut(&ip) {
            self.packets += waiting.len();
            e.queue = waiting;
        }
    }
}

/// A table shared between an ARPTable element and the ARPQueriers that
/// use it (all on one thread: elements of one router).
pub(crate) type SharedTable = Rc<RefCell<Table>>;

const EXPIRE_TIMER: u32 = 0;

/// `ARPTable([KEYWORDS])`.
pub struct ARPTable {
    table: SharedTable,
    configured: bool,
    timer: ExpiryTimer,
}

impl Default for ARPTable {
    fn default() -> Self {
        ARPTable {
            table: Rc::new(RefCell::new(Table::new(DEFAULT_LIMITS))),
            configured: false,
            timer: ExpiryTimer::default(),
        }
    }
}

impl ARPTable {
    pub(crate) fn shared(&self) -> SharedTable {
        self.table.clone()
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "ARPTable",
    port_count: "0/0",
    processing: "a/a",
    group: "arp",
    signature: "ARPTable([KEYWORDS])",
    summary: "Stores IP-to-Ethernet mappings.",
    description: "Holds the table of IP-to-Ethernet mappings (and the packets waiting for \
one) that ARPQuerier uses, as an element of its own: ARPQueriers given `TABLE` this element \
share it, so what one learns the others use. It has no ports. The ARPQueriers must be in the \
same thread as the table under `-j N`.

Keyword arguments:

- `CAPACITY` (unsigned): most waiting packets held at once; when exceeded, the oldest are \
dropped until CAPACITY − CAPACITY/CAPACITY_SLIM_FACTOR remain. 0 means unlimited. Default 2048.
- `ENTRY_CAPACITY` (unsigned): most entries held; the oldest are removed. 0 (default) means \
unlimited.
- `ENTRY_PACKET_CAPACITY` (unsigned): most waiting packets per entry. 0 (default) means \
unlimited.
- `CAPACITY_SLIM_FACTOR` (unsigned, not 0): see CAPACITY. Default 2.
- `TIMEOUT` (time): how long an entry lives after its last update. 0 means forever. Default 5 \
minutes. Expired entries stay in the table, invalid, until the expiry timer removes them; the \
timer runs after TIMEOUT's whole seconds, then every whole seconds + 1, as in Click.",
    ports: "none",
    handlers: &[
        HandlerDoc {
            name: "table",
            mode: HandlerMode::Read,
            text: "The entries, oldest first, one `IP VALID ETH AGE` line each (VALID 1 for a \
usable entry; ETH FF-FF-FF-FF-FF-FF while unresolved; AGE in seconds since the last update).",
        },
        HandlerDoc {
            name: "drops",
            mode: HandlerMode::Read,
            text: "Packets dropped because of timeouts, capacity limits or clearing.",
        },
        HandlerDoc {
            name: "count",
            mode: HandlerMode::Read,
            text: "Number of entries.",
        },
        HandlerDoc {
            name: "length",
            mode: HandlerMode::Read,
            text: "Number of waiting packets.",
        },
        HandlerDoc {
            name: "insert",
            mode: HandlerMode::Write,
            text: "Adds or updates an entry, `IP ETH`. Packets waiting for IP stay queued (an \
ARP reply to an ARPQuerier releases them).",
        },
        HandlerDoc {
            name: "delete",
            mode: HandlerMode::Write,
            text: "Marks the entry for an IP address unresolved (Click's behaviour).",
        },
        HandlerDoc {
            name: "clear",
            mode: HandlerMode::Write,
            text: "Removes every entry, dropping the waiting packets.",
        },
    ],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(ARPTable::default()),
};

impl Element for ARPTable {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let l = LimitArgs::read(&mut a)?;
        a.complete()?;
        let mut t = self.table.borrow_mut();
        let base = if self.configured {
            Limits {
                timeout: DEFAULT_LIMITS.timeout,
                ..t.lim
            }
        } else {
            DEFAULT_LIMITS
        };
        t.lim = l.apply(base);
        self.configured = true;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        self.timer.start(cx);
        Ok(())
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        self.timer
            .fire(&mut self.table.borrow_mut(), EXPIRE_TIMER, cx);
    }

    /// Hot swap: the entries of the old ARPTable of this name.
    fn take_state(&mut self, old: &mut dyn Element, cx: &Ctx) {
        let Some(o) = old.as_any_mut().and_then(|a| a.downcast_mut::<ARPTable>()) else {
            return;
        };
        if Rc::ptr_eq(&self.table, &o.table) {
            return;
        }
        // the expiry timer starts with the next packet or write, as it
        // would have for entries made here
        let _ = cx;
        self.table
            .borrow_mut()
            .take_entries(&mut o.table.borrow_mut());
    }

    fn read_handler(&mut self, name: &str, cx: &Ctx) -> Option<HandlerResult<String>> {
        self.table
            .borrow()
            .read_handler(name, cx.now().nsec())
            .map(Ok)
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        let mut t = self.table.borrow_mut();
        let r = t.write_handler(name, value, &cx.arg_context(), cx.now().nsec());
        self.timer.arm(&t, EXPIRE_TIMER, cx);
        r
    }

    fn cleanup(&mut self, _cx: &Ctx) {
        self.table.borrow_mut().clear();
    }

    crate::element_any!();
}
