//! IPRateMonitor: packet or byte rates to and from IP address prefixes,
//! zooming into busy prefixes (Click's `elements/ip/ipratemon`).
//!
//! A 256-way tree by address byte: the first level counts by first byte
//! (`18` stands for 18.0.0.0/8), and a prefix whose forward or reverse
//! rate reaches THRESH gets a level of its own below it, down to single
//! hosts. Each counter keeps two moving averages (Click's `RateEWMAX`
//! with stability shift 5, scale 10 and epochs of 8 jiffies), forward
//! (source addresses of input 0) and reverse (destination addresses of
//! input 1). Once a second, and whenever memory runs over MEMORY, levels
//! whose parent's rates both fell below the threshold are folded away,
//! oldest or newest first at random, as Click does.

use crate::common::ewma::{jiffies, CLICK_HZ};
use crate::common::handlers;
use crate::common::rng::Rng;
use crate::common::unparse::unparse_real2;
use crate::prelude::*;
use alloc::format;
use alloc::vec::Vec;
use click_lang::args;

/// Where the forward and reverse rates go in the annotation area (4 bytes
/// each, native order; Click's FWD_RATE_ANNO and REV_RATE_ANNO).
pub const FWD_RATE_ANNO_OFFSET: usize = 24;
pub const REV_RATE_ANNO_OFFSET: usize = 28;

const STABILITY: u32 = 5;
const SCALE: u32 = 10;
/// Epochs per second: an epoch is 8 jiffies.
const EPOCH_FREQ: i64 = (CLICK_HZ >> 3) as i64;
/// MEMORY's floor, in kilobytes.
const MEMMAX_MIN: usize = 100;
/// Without MEMORY, a periodic fold frees at most this share.
const FOLD_FACTOR: f64 = 0.9;
/// A forced fold raises its threshold by THRESH / this each round.
const FOLD_INCREASE: i64 = 5;

fn epoch(cx: &Ctx) -> u32 {
    (jiffies(cx.now()) >> 3) as u32
}

/// Two moving averages sharing one epoch (Click's RateEWMAX, two rates).
#[derive(Clone)]
struct Rates {
    avg: [i64; 2],
    current: [i64; 2],
    epoch: u32,
}

impl Rates {
    fn new(now: u32) -> Rates {
        Rates {
            avg: [0; 2],
            current: [0; 2],
            epoch: now,
        }
    }

    fn fold_in(avg: &mut i64, x: i64) {
        let xs = (x << SCALE) + (1 << (STABILITY - 1));
        *avg += (xs - *avg) >> STABILITY;
    }

    fn update_time(&mut self, now: u32) {
        if now == self.epoch {
            return;
        }
        let idle = now.wrapping_sub(self.epoch).wrapping_sub(1);
        for i in 0..2 {
            Self::fold_in(&mut self.avg[i], self.current[i]);
            if idle >= 100 {
                self.avg[i] = 0;
            } else {
                for _ in 0..idle {
                    Self::fold_in(&mut self.avg[i], 0);
                }
            }
            self.current[i] = 0;
        }
        self.epoch = now;
    }

    fn update(&mut self, now: u32, delta: i64, k: usize) {
        self.update_time(now);
        self.current[k] += delta;
    }

    /// Events per second (unscaled).
    fn rate(&self, k: usize) -> i64 {
        (self.avg[k] * EPOCH_FREQ) >> SCALE
    }

    fn unparse(&self, k: usize) -> String {
        if self.avg[k] < 0 {
            return format!(
                "-{}",
                unparse_real2((-self.avg[k] * EPOCH_FREQ) as u64, SCALE)
            );
        }
        unparse_real2((self.avg[k] * EPOCH_FREQ) as u64, SCALE)
    }
}

struct Counter {
    rates: Rates,
    next: Option<Box<Stats>>,
    /// No zooming below this counter before this epoch (`anno_level`).
    anno_this: u32,
}

/// One level: a counter for each value of the next address byte.
struct Stats {
    counters: Vec<Option<Box<Counter>>>,
    /// Creation order, for folding oldest or newest first.
    born: u64,
}

impl Stats {
    fn new(born: u64) -> Stats {
        let mut counters = Vec::with_capacity(256);
        counters.resize_with(256, || None);
        Stats { counters, born }
    }

    /// Bytes this level and everything below it take.
    fn footprint(&self) -> usize {
        STATS_SIZE
            + self
                .counters
                .iter()
                .flatten()
                .map(|c| COUNTER_SIZE + c.next.as_ref().map_or(0, |n| n.footprint()))
                .sum::<usize>()
    }
}

const COUNTER_SIZE: usize = core::mem::size_of::<Counter>();
const STATS_SIZE: usize =
    core::mem::size_of::<Stats>() + 256 * core::mem::size_of::<Option<Box<Counter>>>();

/// `IPRateMonitor(TYPE, RATIO, THRESH [, MEMORY, ANNO])`.
pub struct IPRateMonitor {
    count_packets: bool,
    anno: bool,
    thresh: i64,
    /// Bytes; 0 is no limit.
    memmax: usize,
    /// Sampling ratio, 16-bit fixed point (0x10000 is every packet).
    ratio: u32,
    base: Stats,
    alloced: usize,
    reset_epoch: u32,
    last_fold: Option<u32>,
    born: u64,
    rng: Rng,
}

impl Default for IPRateMonitor {
    fn default() -> Self {
        IPRateMonitor {
            count_packets: true,
            anno: true,
            thresh: 1,
            memmax: 0,
            ratio: 0x10000,
            base: Stats::new(0),
            alloced: STATS_SIZE,
            reset_epoch: 0,
            last_fold: None,
            born: 0,
            rng: Rng::new(0x1b2a_7e0f),
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "IPRateMonitor",
    port_count: "1-2/1-2",
    processing: "a/a",
    group: "analysis",
    signature: "IPRateMonitor(TYPE, RATIO, THRESH [, MEMORY, ANNO])",
    summary: "Measures coming and going IP traffic rates per address prefix.",
    description: "Keeps packet (TYPE `PACKETS`) or byte (`BYTES`, the IP length) rates per \
second from and to IP addresses: packets on input 0 count for their source address (the \
forward rate), packets on input 1 for their destination address (the reverse rate); each \
leaves on the output of its input's number. Rates are kept per first address byte (a /8) and, \
once a prefix's forward or reverse rate reaches THRESH per second, also per next byte below \
it, down to single hosts. Rates are moving averages (Click's, with alpha 1/32 and epochs of \
8 ms); RATIO (between 0 and 1) is the share of packets sampled into them, and THRESH is \
given as if RATIO were 1. MEMORY (kilobytes, at least 100; 0, the default, is unlimited) \
bounds the tree: when a new level would exceed it, none is made, and levels whose parent \
prefix has gone quiet are folded away (once a second in any case). With ANNO true (the \
default) each packet's forward and reverse rate annotations (4 bytes each at annotation \
offsets 24 and 28) are set to the rates of the deepest prefix holding its address, as \
CompareBlock would read them.",
    ports: "one or two inputs (0: forward, by source address; 1: reverse, by destination \
address); as many outputs",
    handlers: &[
        HandlerDoc {
            name: "look",
            mode: HandlerMode::Read,
            text: "Epochs (8 ms) since the last reset, then a line per prefix with a nonzero \
rate: the prefix (`18`, `18.26`, ..., indented by a tab per level below the first), its \
forward and its reverse rate per second, tab-separated.",
        },
        HandlerDoc {
            name: "thresh",
            mode: HandlerMode::Read,
            text: "THRESH, scaled by RATIO.",
        },
        HandlerDoc {
            name: "memmax",
            mode: HandlerMode::ReadWrite,
            text: "The memory bound in bytes (read); write a new MEMORY in kilobytes (0 for \
none), which folds at once if the tree is over it.",
        },
        HandlerDoc {
            name: "anno_level",
            mode: HandlerMode::Write,
            text: "`ADDRESS, LEVEL, SECONDS`: stop zooming at LEVEL (0-3) of ADDRESS's prefixes \
for SECONDS (dropping the levels below it now).",
        },
        HandlerDoc {
            name: "reset",
            mode: HandlerMode::Write,
            text: "Forgets every rate and restarts the epoch count.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(IPRateMonitor::default()),
};

impl IPRateMonitor {
    /// Counts packet `p` for `addr` (host order) in direction `k` (0
    /// forward, 1 reverse); returns the deepest prefix's two rates, or
    /// None if there was no memory for its counter.
    fn update(
        &mut self,
        addr: u32,
        val: i64,
        k: usize,
        sample: bool,
        now: u32,
    ) -> Option<[i64; 2]> {
        let memmax = self.memmax;
        let thresh = self.thresh;
        let alloced = &mut self.alloced;
        let born = &mut self.born;
        let mut s: &mut Stats = &mut self.base;
        let mut shift: i32 = 24;
        let c: &mut Counter = loop {
            let byte = ((addr >> shift) & 255) as usize;
            if s.counters[byte].is_none() {
                if memmax != 0 && *alloced + COUNTER_SIZE > memmax {
                    return None;
                }
                s.counters[byte] = Some(Box::new(Counter {
                    rates: Rates::new(now),
                    next: None,
                    anno_this: 0,
                }));
                *alloced += COUNTER_SIZE;
            }
            let c = s.counters[byte].as_deref_mut()?;
            if sample {
                c.rates.update(now, val, k);
            }
            if c.next.is_none() {
                break c;
            }
            s = c.next.as_deref_mut()?;
            shift -= 8;
        };
        let rates = [c.rates.rate(0), c.rates.rate(1)];
        // zoom in: a level below this prefix, its counter starting from
        // this one's rates
        if c.anno_this < now
            && (rates[0] >= thresh || rates[1] >= thresh)
            && shift > 0
            && (memmax == 0 || *alloced + COUNTER_SIZE + STATS_SIZE <= memmax)
        {
            *born += 1;
            let mut next = Stats::new(*born);
            let byte = ((addr >> (shift - 8)) & 255) as usize;
            next.counters[byte] = Some(Box::new(Counter {
                rates: c.rates.clone(),
                next: None,
                anno_this: 0,
            }));
            *alloced += STATS_SIZE + COUNTER_SIZE;
            c.next = Some(Box::new(next));
        }
        if self
            .last_fold
            .is_none_or(|t| now.wrapping_sub(t) as i64 >= EPOCH_FREQ)
        {
            if self.last_fold.is_some() {
                self.fold(thresh, now);
            }
            self.last_fold = Some(now);
        }
        Some(rates)
    }

    /// The paths (address bytes from the top) of every level below the
    /// first, with their creation order.
    fn levels(s: &Stats, path: &mut Vec<u8>, out: &mut Vec<(u64, Vec<u8>)>) {
        for (b, c) in s.counters.iter().enumerate() {
            if let Some(next) = c.as_ref().and_then(|c| c.next.as_deref()) {
                path.push(b as u8);
                out.push((next.born, path.clone()));
                Self::levels(next, path, out);
                path.pop();
            }
        }
    }

    fn counter_at(&mut self, path: &[u8]) -> Option<&mut Counter> {
        let mut s = &mut self.base;
        let (last, above) = path.split_last()?;
        for b in above {
            s = s.counters[*b as usize]
                .as_deref_mut()?
                .next
                .as_deref_mut()?;
        }
        s.counters[*last as usize].as_deref_mut()
    }

    /// Folds away levels whose parent's rates are both below `thresh`
    /// (compared per epoch and scaled, as Click does), oldest first or
    /// newest first at random, until memory is under MEMORY (or, without
    /// one, a tenth of it is freed).
    fn fold(&mut self, thresh: i64, now: u32) {
        let target = if self.memmax != 0 {
            self.memmax
        } else {
            (self.alloced as f64 * FOLD_FACTOR) as usize
        };
        let mut order = Vec::new();
        Self::levels(&self.base, &mut Vec::new(), &mut order);
        order.sort_unstable_by_key(|(born, _)| *born);
        if self.rng.below(2) == 0 {
            order.reverse();
        }
        for (_, path) in order {
            let Some(parent) = self.counter_at(&path) else {
                continue; // folded with an ancestor
            };
            parent.rates.update_time(now);
            if parent.rates.avg[0] < thresh && parent.rates.avg[1] < thresh {
                let freed = parent.next.take().map_or(0, |n| n.footprint());
                self.alloced -= freed;
                if self.alloced < target {
                    break;
                }
            }
        }
    }

    /// Folds with a rising threshold until memory is under MEMORY.
    fn forced_fold(&mut self, now: u32) {
        let step = (self.thresh / FOLD_INCREASE).max(1);
        let mut thresh = self.thresh;
        while self.memmax != 0 && self.alloced > self.memmax {
            let before = self.alloced;
            self.fold(thresh, now);
            if self.alloced == before && thresh > i64::MAX / 2 {
                break;
            }
            thresh = thresh.saturating_add(step);
        }
    }

    fn count(&mut self, p: &mut Packet, port: usize, cx: &Ctx) {
        let sample = ((self.rng.next_u64() >> 5) & 0xffff) as u32 <= self.ratio;
        // packets without an IP header annotation pass uncounted
        let Some(ip) = p.ip_header() else {
            return;
        };
        let val = if self.count_packets {
            1
        } else {
            i64::from(ip.total_len())
        };
        let addr = u32::from(if port == 0 {
            ip.src_addr()
        } else {
            ip.dst_addr()
        });
        let now = epoch(cx);
        if let Some([fwd, rev]) = self.update(addr, val, usize::from(port != 0), sample, now) {
            if self.anno {
                let a = p.anno_mut();
                a.set(FWD_RATE_ANNO_OFFSET, &(fwd as i32).to_ne_bytes());
                a.set(REV_RATE_ANNO_OFFSET, &(rev as i32).to_ne_bytes());
            }
        }
    }

    fn print(s: &mut Stats, prefix: &str, now: u32, out: &mut String) {
        for (b, c) in s.counters.iter_mut().enumerate() {
            let Some(c) = c.as_deref_mut() else { continue };
            if c.rates.avg[0] <= 0 && c.rates.avg[1] <= 0 {
                continue;
            }
            let here = if prefix.is_empty() {
                format!("{b}")
            } else {
                format!("{prefix}.{b}")
            };
            c.rates.update_time(now);
            out.push_str(&format!(
                "{here}\t{}\t{}\n",
                c.rates.unparse(0),
                c.rates.unparse(1)
            ));
            if let Some(next) = c.next.as_deref_mut() {
                Self::print(next, &format!("\t{here}"), now, out);
            }
        }
    }

    fn set_anno_level(&mut self, addr: u32, level: u32, when: u32) {
        let mut s = &mut self.base;
        let mut level = level;
        for shift in [24, 16, 8, 0] {
            let byte = ((addr >> shift) & 255) as usize;
            let Some(c) = s.counters[byte].as_deref_mut() else {
                return;
            };
            if level == 0 {
                c.anno_this = when;
                if let Some(n) = c.next.take() {
                    self.alloced -= n.footprint();
                }
                return;
            }
            let Some(next) = c.next.as_deref_mut() else {
                return;
            };
            s = next;
            level -= 1;
        }
    }
}

impl Element for IPRateMonitor {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let what: String = a.read_mp("TYPE")?;
        let ratio: f64 = a.read_mp("RATIO")?;
        let thresh: i64 = a.read_mp("THRESH")?;
        let memory: Option<u64> = a.read_p("MEMORY")?;
        let anno: Option<bool> = a.read_p("ANNO")?;
        a.complete()?;
        let count_packets = match what.to_ascii_uppercase().as_str() {
            "PACKETS" => true,
            "BYTES" => false,
            _ => return Err("monitor type should be \"PACKETS\" or \"BYTES\"".into()),
        };
        if !(0.0..=1.0).contains(&ratio) {
            return Err("ratio must be between 0 and 1".into());
        }
        let ratio = (ratio * 65536.0 + 0.5) as u32;
        let mut kb = memory.unwrap_or(0) as usize;
        if kb != 0 && kb < MEMMAX_MIN {
            kb = MEMMAX_MIN;
        }
        *self = IPRateMonitor {
            count_packets,
            anno: anno.unwrap_or(true),
            thresh: (thresh * i64::from(ratio)) >> 16,
            memmax: kb.saturating_mul(1024),
            ratio,
            rng: Rng::from_name(cx.name),
            ..IPRateMonitor::default()
        };
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        self.reset_epoch = epoch(cx);
        Ok(())
    }

    fn push(&mut self, port: usize, mut p: Packet, cx: &Ctx) {
        self.count(&mut p, port, cx);
        cx.push(port.min(cx.noutputs().saturating_sub(1)), p);
    }

    fn pull(&mut self, port: usize, cx: &Ctx) -> Option<Packet> {
        let mut p = cx.pull(port.min(cx.ninputs().saturating_sub(1)))?;
        self.count(&mut p, port, cx);
        Some(p)
    }

    fn read_handler(&mut self, name: &str, cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "look" => {
                let now = epoch(cx);
                let mut out = format!("{}\n", now.wrapping_sub(self.reset_epoch));
                Self::print(&mut self.base, "", now, &mut out);
                out
            }
            "thresh" => format!("{}", self.thresh),
            "memmax" => format!("{}", self.memmax),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        // Click splits these handlers' values at commas (cp_argvec)
        let words = args::split_args(&handlers::clean(value));
        Some(match name {
            "reset" => {
                self.base = Stats::new(0);
                self.alloced = STATS_SIZE;
                self.reset_epoch = epoch(cx);
                Ok(())
            }
            "memmax" => {
                let [w] = words.as_slice() else {
                    return Some(Err("expecting 1 integer".into()));
                };
                let Ok(kb) = args::parse_u64(w) else {
                    return Some(Err("not an integer".into()));
                };
                let mut kb = kb as usize;
                if kb != 0 && kb < MEMMAX_MIN {
                    kb = MEMMAX_MIN;
                }
                self.memmax = kb.saturating_mul(1024);
                if self.memmax != 0 && self.alloced > self.memmax {
                    self.forced_fold(epoch(cx));
                }
                Ok(())
            }
            "anno_level" => {
                let [a, level, when] = words.as_slice() else {
                    return Some(Err("expecting 3 arguments".into()));
                };
                let Ok(a) = a.parse::<core::net::Ipv4Addr>() else {
                    return Some(Err("not an IP address".into()));
                };
                let level = match args::parse_u64(level) {
                    Ok(l) if l < 4 => l as u32,
                    _ => {
                        return Some(Err(
                            "2nd argument specifies a level, between 0 and 3, to annotate".into(),
                        ))
                    }
                };
                let when = match args::parse_u64(when) {
                    Ok(w) if w >= 1 && w < u64::from(u32::MAX) / EPOCH_FREQ as u64 => w as u32,
                    _ => {
                        return Some(Err(
                            "3rd argument specifies when this rule expires, must be > 0".into(),
                        ))
                    }
                };
                let until = epoch(cx).wrapping_add(when * EPOCH_FREQ as u32);
                self.set_anno_level(u32::from(a), level, until);
                Ok(())
            }
            _ => return None,
        })
    }

    crate::element_any!();
}
