//! AggregateIPFlows: numbers TCP and UDP flows in the aggregate annotation,
//! and paints each packet with its direction.

use crate::packet::{AGGREGATE_ANNO_OFFSET, PAINT_ANNO_OFFSET};
use crate::prelude::*;
use alloc::collections::{BTreeMap, VecDeque};
use alloc::format;
use alloc::vec::Vec;
use click_lang::args::Seconds;
use click_wire::Ipv4Packet;

/// `AggregateIPFlows([KEYWORDS])`.
pub struct AggregateIPFlows {
    tcp_timeout: i64,
    tcp_done_timeout: i64,
    udp_timeout: i64,
    smallest_timeout: i64,
    fragment_timeout: i64,
    gc_interval: i64,
    handle_icmp: bool,
    /// FRAGMENTS as given: `None` means "true in push context".
    fragments_arg: Option<bool>,
    fragments: bool,
    tcp: BTreeMap<(u32, u32), HostPairInfo>,
    udp: BTreeMap<(u32, u32), HostPairInfo>,
    next: u32,
    active_sec: i64,
    gc_sec: i64,
    timestamp_warning: bool,
    /// Packets dropped (sent to output 1) because they were not TCP or
    /// UDP, too short, or lone fragments.
    dropped: u64,
}

struct FlowInfo {
    ports: u32,
    aggregate: u32,
    last_sec: i64,
    /// Bit 0: FIN seen in direction 0, bit 1: in direction 1 (3: done).
    flow_over: u8,
    reverse: bool,
}

/// A held fragment (or a packet queued behind one), with its IP ID and
/// whether it is a fragment, from the header that decided its flow.
struct Held {
    p: Packet,
    id: u16,
    is_frag: bool,
}

#[derive(Default)]
struct HostPairInfo {
    flows: Vec<FlowInfo>,
    frags: VecDeque<Held>,
}

impl Default for AggregateIPFlows {
    fn default() -> Self {
        AggregateIPFlows {
            tcp_timeout: 24 * 60 * 60,
            tcp_done_timeout: 30,
            udp_timeout: 60,
            smallest_timeout: 30,
            fragment_timeout: 30,
            gc_interval: 20 * 60,
            handle_icmp: false,
            fragments_arg: None,
            fragments: true,
            tcp: BTreeMap::new(),
            udp: BTreeMap::new(),
            next: 1,
            active_sec: 0,
            gc_sec: 0,
            timestamp_warning: false,
            dropped: 0,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "AggregateIPFlows",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "analysis",
    signature: "AggregateIPFlows([KEYWORDS])",
    summary: "Sets the aggregate annotation based on TCP/UDP flow.",
    description: "Monitors TCP and UDP flows, setting the aggregate annotation on every passing \
packet to a flow number, and the paint annotation to a direction: the first packet seen on a flow \
gets paint 0, its replies paint 1 (ICMP errors, with `ICMP true`, get 2 plus the paint of the \
packet they quote). Flows are told apart by source and destination address and port; replies \
get the same number. Flow numbers are assigned sequentially from 1. A flow dies after a timeout \
of packet time (packets' timestamp annotations; a packet without one gets the current time and a \
warning), after which the same addresses and ports get a new number; a TCP flow that saw FIN in \
both directions (or a RST) is done, and a new SYN on a done flow starts a new one. Non-TCP/UDP \
packets, packets without a network header or too short for the ports, are pushed out output 1, \
or dropped if there is none.\n\n\
With FRAGMENTS (the default in push context), second and later fragments get the annotations of \
their first fragment: the element holds fragments (and the packets between the same two hosts \
behind them, so order between two hosts is kept) until the first fragment arrives, or until \
FRAGMENT_TIMEOUT seconds of packet time pass (then those without a first fragment are dropped). \
Without FRAGMENTS, later fragments go to output 1. Write `clear` when the input ends to flush \
held fragments.\n\n\
Host pairs are ordered by comparing addresses as Click does on a little-endian machine (the \
address bytes read as a little-endian 32-bit number), which decides the paint of flows between \
one host and itself as well.\n\n\
Keyword arguments:\n\n\
- `TCP_TIMEOUT` (seconds, integer): timeout for active TCP flows. Default 86400 (24 hours).\n\
- `TCP_DONE_TIMEOUT` (seconds, integer): timeout for completed TCP flows. Default 30.\n\
- `UDP_TIMEOUT` (time): timeout for UDP flows. Default 60 s.\n\
- `FRAGMENT_TIMEOUT` (time): how long fragments wait for their first fragment. Default 30 s.\n\
- `REAP` (time): garbage collection interval, in packet time. Default 20 minutes.\n\
- `ICMP` (boolean): give ICMP errors (unreachable, time exceeded, parameter problem, source \
quench, redirect) the aggregate of the connection they quote. Default false.\n\
- `FRAGMENTS` (boolean): assign annotations to later fragments. Only in push context. Default \
true in push context, false in pull.\n\n\
(Click's TRACEINFO and SOURCE keywords, which write an XML flow log, are not supported.)",
    ports: "one input; output 0 for annotated packets, optional push output 1 for the rest",
    handlers: &[
        HandlerDoc {
            name: "clear",
            mode: HandlerMode::Write,
            text: "Forgets every flow (later packets get new numbers) and emits the held \
fragments.",
        },
        HandlerDoc {
            name: "flows",
            mode: HandlerMode::Read,
            text: "Flows currently known (an extension).",
        },
        HandlerDoc {
            name: "dropped",
            mode: HandlerMode::Read,
            text: "Packets sent to output 1 or dropped (an extension).",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(AggregateIPFlows::default()),
};

/// Host pair key: addresses as Click's `s_addr` on a little-endian host.
fn addr_word(a: core::net::Ipv4Addr) -> u32 {
    u32::from_le_bytes(a.octets())
}

fn ports_reverse_order(ports: u32) -> bool {
    ((ports << 16).wrapping_sub(ports) as i32) < 0
}

fn flip_ports(ports: u32) -> u32 {
    ports.rotate_left(16)
}

/// The IP header that decides a packet's flow: the packet's own, or with
/// ICMP handling, the header an ICMP error quotes. Offsets into
/// `p.network_header()`.
struct FlowHeader {
    /// Offset of the deciding IP header within the network header slice.
    off: usize,
    paint: u8,
}

/// Checks a packet and finds its deciding header (`None`: send to output 1).
fn flow_header(p: &Packet, handle_icmp: bool) -> Option<FlowHeader> {
    let ip = p.ip_header()?;
    let mut fh = FlowHeader { off: 0, paint: 0 };
    if ip.protocol() == 1 && ip.is_first_fragment() && handle_icmp {
        // the ICMP header is the transport header; the quoted IP header
        // follows its 8 bytes
        let nh = p.network_header()?;
        let th = p.transport_header()?;
        let toff = nh.len().checked_sub(th.len())?;
        let icmp_type = *th.first()?;
        if !matches!(icmp_type, 3 | 11 | 12 | 4 | 5) {
            return None;
        }
        let emb = th.get(8..)?;
        let ehl = usize::from(*emb.first()? & 0x0F) * 4;
        if ehl < 20 || th.len() < 8 + ehl {
            return None;
        }
        fh = FlowHeader {
            off: toff + 8,
            paint: 2,
        };
    }
    Some(fh)
}

enum Action {
    Emit(Packet),
    Drop(Packet),
    None,
}

impl AggregateIPFlows {
    /// Click's `packet_emit_hook`: notes the time and TCP state.
    fn emit_hook(p: &Packet, iph: &Ipv4Packet<&[u8]>, f: &mut FlowInfo) {
        f.last_sec = p.timestamp().sec();
        let paint = p.anno().u8_at(PAINT_ANNO_OFFSET);
        if iph.protocol() == 6 && iph.is_first_fragment() && paint < 2 {
            // NLANR dumps lack full TCP headers: only the flags must be there
            if let Some(&flags) = p.transport_header().and_then(|t| t.get(13)) {
                if flags & 0x04 != 0 {
                    f.flow_over = 3;
                } else if flags & 0x01 != 0 {
                    f.flow_over |= 1 << paint;
                } else if flags & 0x02 != 0 {
                    f.flow_over = 0;
                }
            }
        }
    }

    /// The deciding header of a held packet (it was checked when held).
    fn held_header(p: &Packet, handle_icmp: bool) -> Option<Ipv4Packet<&[u8]>> {
        let fh = flow_header(p, handle_icmp)?;
        Ipv4Packet::new_fixed_checked(p.network_header()?.get(fh.off..)?).ok()
    }

    /// Emits the first held packet of a host pair, giving a lone fragment
    /// the annotations of its first fragment.
    fn emit_fragment_head(hp: &mut HostPairInfo, handle_icmp: bool, cx: &Ctx) {
        let Some(mut head) = hp.frags.pop_front() else {
            return;
        };
        let agg = head.p.anno().u32_at(AGGREGATE_ANNO_OFFSET);
        if agg != 0 {
            let paint = head.p.anno().u8_at(PAINT_ANNO_OFFSET);
            for h in hp.frags.iter_mut().filter(|h| h.id == head.id) {
                h.p.anno_mut().set_u32_at(AGGREGATE_ANNO_OFFSET, agg);
                h.p.anno_mut().set_u8_at(PAINT_ANNO_OFFSET, paint);
            }
        } else {
            let found = hp
                .frags
                .iter()
                .find(|h| h.id == head.id && h.p.anno().u32_at(AGGREGATE_ANNO_OFFSET) != 0)
                .map(|h| {
                    (
                        h.p.anno().u32_at(AGGREGATE_ANNO_OFFSET),
                        h.p.anno().u8_at(PAINT_ANNO_OFFSET),
                    )
                });
            let Some((a, paint)) = found else {
                return; // no first fragment: dropped
            };
            head.p.anno_mut().set_u32_at(AGGREGATE_ANNO_OFFSET, a);
            head.p.anno_mut().set_u8_at(PAINT_ANNO_OFFSET, paint);
        }
        let agg = head.p.anno().u32_at(AGGREGATE_ANNO_OFFSET);
        if let Some(f) = hp.flows.iter_mut().find(|f| f.aggregate == agg) {
            if let Some(iph) = Self::held_header(&head.p, handle_icmp) {
                Self::emit_hook(&head.p, &iph, f);
            }
        }
        cx.push(0, head.p);
    }

    /// Emits held packets that waited too long or are not fragments.
    fn flush_old_fragments(hp: &mut HostPairInfo, frag_limit: i64, icmp: bool, cx: &Ctx) {
        while let Some(h) = hp.frags.front() {
            if h.p.timestamp().sec() < frag_limit || !h.is_frag {
                Self::emit_fragment_head(hp, icmp, cx);
            } else {
                break;
            }
        }
    }

    fn reap_map(&mut self, udp: bool, force: bool, cx: &Ctx) {
        let (timeout, done) = if udp {
            (self.udp_timeout, self.udp_timeout)
        } else {
            (self.tcp_timeout, self.tcp_done_timeout)
        };
        let limit = self.active_sec - timeout;
        let done_limit = self.active_sec - done;
        let frag_limit = if force {
            i64::MAX
        } else {
            self.active_sec - self.fragment_timeout
        };
        let icmp = self.handle_icmp;
        let map = if udp { &mut self.udp } else { &mut self.tcp };
        for hp in map.values_mut() {
            Self::flush_old_fragments(hp, frag_limit, icmp, cx);
            // no flow dies while fragments wait for it
            if !hp.frags.is_empty() {
                continue;
            }
            hp.flows.retain(|f| {
                !force && f.last_sec >= if f.flow_over == 3 { done_limit } else { limit }
            });
        }
        map.retain(|_, hp| !hp.flows.is_empty() || !hp.frags.is_empty());
    }

    fn reap(&mut self, cx: &Ctx) {
        if self.gc_sec != 0 {
            self.reap_map(false, false, cx);
            self.reap_map(true, false, cx);
        }
        self.gc_sec = self.active_sec + self.gc_interval;
    }

    fn handle_packet(&mut self, mut p: Packet, cx: &Ctx) -> Action {
        if p.timestamp().is_zero() {
            if !self.timestamp_warning {
                cx.error_line(&format!(
                    "{}: warning: packet received without timestamp",
                    cx.declaration()
                ));
                self.timestamp_warning = true;
            }
            p.set_timestamp(cx.now());
        }
        let Some(fh) = flow_header(&p, self.handle_icmp) else {
            return Action::Drop(p);
        };
        // everything read from the deciding header, so `p` can be changed
        let (src, dst, proto, first_frag, is_frag, id, ports) = {
            let Some(bytes) = p.network_header().and_then(|nh| nh.get(fh.off..)) else {
                return Action::Drop(p);
            };
            let Ok(iph) = Ipv4Packet::new_fixed_checked(bytes) else {
                return Action::Drop(p);
            };
            let hl = usize::from(iph.header_len());
            let ports = bytes
                .get(hl..hl + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            (
                addr_word(iph.src_addr()),
                addr_word(iph.dst_addr()),
                iph.protocol(),
                iph.is_first_fragment(),
                iph.is_fragment(),
                iph.ident(),
                ports,
            )
        };
        if (proto != 6 && proto != 17) || (src == 0 && dst == 0) {
            return Action::Drop(p);
        }
        let udp = proto == 17;
        let key = if src > dst { (dst, src) } else { (src, dst) };
        let mut paint = fh.paint;
        if key.0 != src {
            paint ^= 1;
        }
        let now_sec = p.timestamp().sec();
        let mut flow_idx = None;
        if first_frag {
            let Some(mut ports) = ports else {
                return Action::Drop(p);
            };
            if key.0 == key.1 && ports_reverse_order(ports) {
                paint ^= 1;
            }
            if paint & 1 != 0 {
                ports = flip_ports(ports);
            }
            let flipped = paint & 1 != 0;
            // a SYN on the outer TCP header restarts a finished flow
            let outer_syn = p.ip_header().map(|ip| ip.protocol() == 6).unwrap_or(false)
                && p.transport_header()
                    .and_then(|t| t.get(13))
                    .map(|f| f & 0x02 != 0)
                    .unwrap_or(false);
            let smallest = self.smallest_timeout;
            let (tcp_t, done_t, udp_t) =
                (self.tcp_timeout, self.tcp_done_timeout, self.udp_timeout);
            let next = &mut self.next;
            let map = if udp { &mut self.udp } else { &mut self.tcp };
            let hp = map.entry(key).or_default();
            let idx = match hp.flows.iter().position(|f| f.ports == ports) {
                Some(i) => {
                    let f = &mut hp.flows[i];
                    let age = now_sec - f.last_sec;
                    let relevant = if udp {
                        udp_t
                    } else if f.flow_over == 3 {
                        done_t
                    } else {
                        tcp_t
                    };
                    if (age > smallest && age > relevant) || (f.flow_over == 3 && outer_syn) {
                        // the old flow died: a new number
                        f.aggregate = *next;
                        *next = next.wrapping_add(1);
                        f.reverse = flipped;
                        f.flow_over = 0;
                    }
                    i
                }
                None => {
                    hp.flows.push(FlowInfo {
                        ports,
                        aggregate: *next,
                        last_sec: now_sec,
                        flow_over: 0,
                        reverse: flipped,
                    });
                    *next = next.wrapping_add(1);
                    hp.flows.len() - 1
                }
            };
            let f = &hp.flows[idx];
            if f.reverse {
                paint ^= 1;
            }
            let agg = f.aggregate;
            p.anno_mut().set_u32_at(AGGREGATE_ANNO_OFFSET, agg);
            p.anno_mut().set_u8_at(PAINT_ANNO_OFFSET, paint);
            flow_idx = Some(idx);
        } else {
            p.anno_mut().set_u32_at(AGGREGATE_ANNO_OFFSET, 0);
            p.anno_mut().set_u8_at(PAINT_ANNO_OFFSET, paint);
        }
        let fragments = self.fragments;
        let frag_timeout = self.fragment_timeout;
        let icmp = self.handle_icmp;
        let map = if udp { &mut self.udp } else { &mut self.tcp };
        let hp = map.entry(key).or_default();
        if (fragments && is_frag) || !hp.frags.is_empty() {
            hp.frags.push_back(Held { p, id, is_frag });
            self.active_sec = now_sec;
            Self::flush_old_fragments(hp, now_sec - frag_timeout, icmp, cx);
            return Action::None;
        }
        let Some(idx) = flow_idx else {
            return Action::Drop(p);
        };
        self.active_sec = now_sec;
        if let Some(iph) = Self::held_header(&p, icmp) {
            Self::emit_hook(&p, &iph, &mut hp.flows[idx]);
        }
        Action::Emit(p)
    }

    fn process(&mut self, p: Packet, cx: &Ctx) -> Option<Packet> {
        let action = self.handle_packet(p, cx);
        if self.active_sec >= self.gc_sec {
            self.reap(cx);
        }
        match action {
            Action::Emit(p) => Some(p),
            Action::Drop(p) => {
                self.dropped += 1;
                cx.push(1, p);
                None
            }
            Action::None => None,
        }
    }
}

impl Element for AggregateIPFlows {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let tcp_timeout = a.read::<u32>("TCP_TIMEOUT")?.unwrap_or(24 * 60 * 60);
        let tcp_done_timeout = a.read::<u32>("TCP_DONE_TIMEOUT")?.unwrap_or(30);
        let secs = |v: Option<Seconds>, d: i64| v.map(|s| s.0 / 1_000_000_000).unwrap_or(d);
        let udp_timeout = secs(a.read::<Seconds>("UDP_TIMEOUT")?, 60);
        let fragment_timeout = secs(a.read::<Seconds>("FRAGMENT_TIMEOUT")?, 30);
        let gc_interval = secs(a.read::<Seconds>("REAP")?, 20 * 60);
        let handle_icmp = a.read::<bool>("ICMP")?.unwrap_or(false);
        let fragments_arg = a.read::<bool>("FRAGMENTS")?;
        a.complete()?;
        let (t, d) = (i64::from(tcp_timeout), i64::from(tcp_done_timeout));
        *self = AggregateIPFlows {
            tcp_timeout: t,
            tcp_done_timeout: d,
            udp_timeout,
            smallest_timeout: t.min(d).min(udp_timeout),
            fragment_timeout,
            gc_interval,
            handle_icmp,
            fragments_arg,
            ..AggregateIPFlows::default()
        };
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let pull = cx.input_is_pull(0);
        self.fragments = match self.fragments_arg {
            None => !pull,
            Some(true) if pull => return Err(
                "'FRAGMENTS true' is incompatible with pull; run this element in a push context"
                    .into(),
            ),
            Some(f) => f,
        };
        self.next = 1;
        self.active_sec = 0;
        self.gc_sec = 0;
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    fn simple_action(&mut self, p: Packet, cx: &Ctx) -> Option<Packet> {
        self.process(p, cx)
    }

    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        let p = cx.pull(0)?;
        self.process(p, cx)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "flows" => {
                let n: usize = self
                    .tcp
                    .values()
                    .chain(self.udp.values())
                    .map(|h| h.flows.len())
                    .sum();
                Some(Ok(format!("{}", n)))
            }
            "dropped" => Some(Ok(format!("{}", self.dropped))),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, _value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        if name != "clear" {
            return None;
        }
        self.reap_map(false, true, cx);
        self.reap_map(true, true, cx);
        Some(Ok(()))
    }

    crate::element_any!();
}
