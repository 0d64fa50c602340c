//! IPFIXExport: a flow meter and IPFIX exporter (RFC 7011). Keeps a table
//! of 5-tuple flows with packet and octet counts and first/last times, and
//! emits IPFIX messages (UDP payloads) on output 1 when flows end.

use crate::prelude::*;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::vec::Vec;
use click_lang::args::Seconds;
use click_wire::Ipv4Packet;

/// IPFIX version number in the message header.
pub const IPFIX_VERSION: u16 = 10;
/// Set ID of a Template Set.
pub const TEMPLATE_SET_ID: u16 = 2;
/// Bytes in the message header.
pub const MESSAGE_HEADER_LEN: usize = 16;
/// Bytes in a set header.
pub const SET_HEADER_LEN: usize = 4;

/// The template's fields: (information element, length), IANA numbers.
pub const FIELDS: [(u16, u16); 9] = [
    (8, 4),   // sourceIPv4Address
    (12, 4),  // destinationIPv4Address
    (7, 2),   // sourceTransportPort
    (11, 2),  // destinationTransportPort
    (4, 1),   // protocolIdentifier
    (2, 8),   // packetDeltaCount
    (1, 8),   // octetDeltaCount
    (152, 8), // flowStartMilliseconds
    (153, 8), // flowEndMilliseconds
];

/// Bytes in one data record.
pub const RECORD_LEN: usize = 45;

/// A flow key: addresses, ports (ICMP: type and code in the destination
/// port, as NetFlow does), protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FlowKey {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub sport: u16,
    pub dport: u16,
    pub proto: u8,
}

/// One exported flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowRecord {
    pub key: FlowKey,
    pub packets: u64,
    pub octets: u64,
    /// First and last packet, milliseconds since the epoch.
    pub start_ms: u64,
    pub end_ms: u64,
}

/// Appends the Template Set for `template_id`.
pub fn encode_template_set(template_id: u16, out: &mut Vec<u8>) {
    let len = SET_HEADER_LEN + 4 + FIELDS.len() * 4;
    out.extend_from_slice(&TEMPLATE_SET_ID.to_be_bytes());
    out.extend_from_slice(&(len as u16).to_be_bytes());
    out.extend_from_slice(&template_id.to_be_bytes());
    out.extend_from_slice(&(FIELDS.len() as u16).to_be_bytes());
    for (ie, l) in FIELDS {
        out.extend_from_slice(&ie.to_be_bytes());
        out.extend_from_slice(&l.to_be_bytes());
    }
}

/// Appends one data record in template order.
pub fn encode_record(r: &FlowRecord, out: &mut Vec<u8>) {
    out.extend_from_slice(&r.key.src);
    out.extend_from_slice(&r.key.dst);
    out.extend_from_slice(&r.key.sport.to_be_bytes());
    out.extend_from_slice(&r.key.dport.to_be_bytes());
    out.push(r.key.proto);
    out.extend_from_slice(&r.packets.to_be_bytes());
    out.extend_from_slice(&r.octets.to_be_bytes());
    out.extend_from_slice(&r.start_ms.to_be_bytes());
    out.extend_from_slice(&r.end_ms.to_be_bytes());
}

/// A whole IPFIX message: header, the template set if `template`, and a
/// data set with `records` (none: no data set).
pub fn encode_message(
    export_time: u32,
    sequence: u32,
    domain: u32,
    template_id: u16,
    template: bool,
    records: &[FlowRecord],
) -> Vec<u8> {
    let mut m = Vec::with_capacity(MESSAGE_HEADER_LEN + 64 + records.len() * RECORD_LEN);
    m.extend_from_slice(&IPFIX_VERSION.to_be_bytes());
    m.extend_from_slice(&[0, 0]); // length, below
    m.extend_from_slice(&export_time.to_be_bytes());
    m.extend_from_slice(&sequence.to_be_bytes());
    m.extend_from_slice(&domain.to_be_bytes());
    if template {
        encode_template_set(template_id, &mut m);
    }
    if !records.is_empty() {
        let len = SET_HEADER_LEN + records.len() * RECORD_LEN;
        m.extend_from_slice(&template_id.to_be_bytes());
        m.extend_from_slice(&(len as u16).to_be_bytes());
        for r in records {
            encode_record(r, &mut m);
        }
    }
    let len = m.len() as u16;
    m[2..4].copy_from_slice(&len.to_be_bytes());
    m
}

/// The flow key and IP length of a packet, or `None` when it has no usable
/// IP header.
pub fn flow_key(p: &Packet) -> Option<(FlowKey, u16)> {
    let nh = p.network_header()?;
    let ip = Ipv4Packet::new_fixed_checked(nh).ok()?;
    if ip.version() != 4 || ip.header_len() < 20 {
        return None;
    }
    let hl = usize::from(ip.header_len());
    let proto = ip.protocol();
    let mut key = FlowKey {
        src: ip.src_addr().octets(),
        dst: ip.dst_addr().octets(),
        sport: 0,
        dport: 0,
        proto,
    };
    if ip.is_first_fragment() {
        let t = nh.get(hl..).unwrap_or(&[]);
        match proto {
            // TCP, UDP, SCTP, UDP-Lite: the ports lead the header
            6 | 17 | 132 | 136 => {
                if let Some(b) = t.get(..4) {
                    key.sport = u16::from_be_bytes([b[0], b[1]]);
                    key.dport = u16::from_be_bytes([b[2], b[3]]);
                }
            }
            // ICMP: type * 256 + code as the destination port
            1 => {
                if let Some(b) = t.get(..2) {
                    key.dport = u16::from_be_bytes([b[0], b[1]]);
                }
            }
            _ => {}
        }
    }
    Some((key, ip.total_len()))
}

struct Flow {
    packets: u64,
    octets: u64,
    start_ms: u64,
    end_ms: u64,
    /// Router time of the first and the last packet (for the timeouts).
    first_seen: i64,
    last_seen: i64,
    /// This flow's entry in the recency index.
    touch: u64,
}

const TIMER: u32 = 0;
/// How often the timeouts are checked.
const CHECK_NS: i64 = 1_000_000_000;

/// `IPFIXExport([KEYWORDS])`.
pub struct IPFIXExport {
    domain: u32,
    template_id: u16,
    active_ns: i64,
    inactive_ns: i64,
    template_interval_ns: i64,
    capacity: usize,
    mtu: usize,
    flows: BTreeMap<FlowKey, Flow>,
    /// Recency index: touch number -> flow, oldest first.
    recency: BTreeMap<u64, FlowKey>,
    next_touch: u64,
    pending: Vec<FlowRecord>,
    sequence: u32,
    last_template: Option<i64>,
    exported: u64,
    messages: u64,
    templates: u64,
    evicted: u64,
    dropped: u64,
}

impl Default for IPFIXExport {
    fn default() -> Self {
        IPFIXExport {
            domain: 0,
            template_id: 256,
            active_ns: 1800 * 1_000_000_000,
            inactive_ns: 15 * 1_000_000_000,
            template_interval_ns: 60 * 1_000_000_000,
            capacity: 65536,
            mtu: 1400,
            flows: BTreeMap::new(),
            recency: BTreeMap::new(),
            next_touch: 0,
            pending: Vec::new(),
            sequence: 0,
            last_template: None,
            exported: 0,
            messages: 0,
            templates: 0,
            evicted: 0,
            dropped: 0,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "IPFIXExport",
    port_count: "1/2",
    processing: "a/ah",
    group: "analysis",
    signature: "IPFIXExport([KEYWORDS])",
    summary: "Meters IP flows and exports them as IPFIX messages.",
    description: "Passes packets unchanged from its input to output 0, keeping a table of flows \
(source and destination address, source and destination port, IP protocol; one direction each) \
with packet and octet counts and the times of the first and last packet. Ended flows are exported \
as IPFIX (RFC 7011) messages pushed out output 1: each packet there is one message, a UDP \
payload. Send them with `UDPIPEncap` and a device, or in `clickos run` with \
`Socket(UDP, ADDR, PORT)`.\n\n\
Packets need a network header annotation (CheckIPHeader, MarkIPHeader, FromDump with FORCE_IP); \
packets without a usable IPv4 header pass through uncounted (the `dropped` count). The octet \
count is the IP total length. Ports are those of TCP, UDP, SCTP and UDP-Lite first fragments; \
ICMP's type and code go in the destination port as type * 256 + code, as NetFlow does; later \
fragments count as port 0 flows. Flow times are the packets' timestamp annotations (the current \
time for packets without one); timeouts run on the router's clock.\n\n\
A flow is exported when no packet came for INACTIVE_TIMEOUT, when it has lasted ACTIVE_TIMEOUT \
(the next packet starts a new flow), when the table is full and a new flow needs its place (the \
least recently seen flow goes, counted in `evicted`), or on a `flush` write. Messages carry one \
template (ID TEMPLATE_ID) with the information elements sourceIPv4Address (8), \
destinationIPv4Address (12), sourceTransportPort (7), destinationTransportPort (11), \
protocolIdentifier (4), packetDeltaCount (2), octetDeltaCount (1), flowStartMilliseconds (152) \
and flowEndMilliseconds (153): 45-byte data records. The template goes in the first message, and \
again in the first message after each TEMPLATE_INTERVAL. The header's sequence number counts the \
data records sent before the message, modulo 2^32, as RFC 7011 says.\n\n\
Keyword arguments:\n\n\
- `OBSERVATION_DOMAIN` (unsigned): the observation domain ID. Default 0.\n\
- `TEMPLATE_ID` (256-65535): the template's ID. Default 256.\n\
- `ACTIVE_TIMEOUT` (time): longest flow before it is exported. Default 30 minutes.\n\
- `INACTIVE_TIMEOUT` (time): idle time after which a flow is exported. Default 15 s.\n\
- `TEMPLATE_INTERVAL` (time): how often the template is sent again; 0 sends it in every \
message. Default 60 s.\n\
- `CAPACITY` (unsigned, at least 1): most flows kept at once. Default 65536.\n\
- `MTU` (bytes, at least 110): largest message. Default 1400.",
    ports: "one input; output 0 passes the packets, push output 1 emits IPFIX messages",
    handlers: &[
        HandlerDoc {
            name: "flows",
            mode: HandlerMode::Read,
            text: "Flows in the table now.",
        },
        HandlerDoc {
            name: "exported",
            mode: HandlerMode::Read,
            text: "Data records exported so far.",
        },
        HandlerDoc {
            name: "messages",
            mode: HandlerMode::Read,
            text: "IPFIX messages emitted.",
        },
        HandlerDoc {
            name: "template_sent",
            mode: HandlerMode::Read,
            text: "How many times the template was sent.",
        },
        HandlerDoc {
            name: "evicted",
            mode: HandlerMode::Read,
            text: "Flows exported early because the table was full.",
        },
        HandlerDoc {
            name: "dropped",
            mode: HandlerMode::Read,
            text: "Packets not counted (no usable IPv4 header).",
        },
        HandlerDoc {
            name: "sequence",
            mode: HandlerMode::Read,
            text: "The sequence number the next message will carry.",
        },
        HandlerDoc {
            name: "flush",
            mode: HandlerMode::Write,
            text: "Exports every flow now and emits the messages (write it when the input ends).",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(IPFIXExport::default()),
};

fn ms(t: Timestamp) -> u64 {
    (t.nsec().max(0) / 1_000_000) as u64
}

impl IPFIXExport {
    fn records_per_message(&self) -> usize {
        // room for a template in every message
        let room = self.mtu - MESSAGE_HEADER_LEN - (SET_HEADER_LEN + 4 + FIELDS.len() * 4);
        ((room - SET_HEADER_LEN) / RECORD_LEN).max(1)
    }

    fn finish(&mut self, key: FlowKey) {
        if let Some(f) = self.flows.remove(&key) {
            self.recency.remove(&f.touch);
            self.pending.push(FlowRecord {
                key,
                packets: f.packets,
                octets: f.octets,
                start_ms: f.start_ms,
                end_ms: f.end_ms,
            });
        }
    }

    /// Emits full messages (all pending records with `all`).
    fn emit(&mut self, all: bool, cx: &Ctx) {
        let per = self.records_per_message();
        while self.pending.len() >= per || (all && !self.pending.is_empty()) {
            let n = self.pending.len().min(per);
            let batch: Vec<FlowRecord> = self.pending.drain(..n).collect();
            let now = cx.now();
            let template = match self.last_template {
                None => true,
                Some(t) => {
                    self.template_interval_ns == 0
                        || now.nsec().saturating_sub(t) >= self.template_interval_ns
                }
            };
            if template {
                self.last_template = Some(now.nsec());
                self.templates += 1;
            }
            let m = encode_message(
                now.sec().clamp(0, i64::from(u32::MAX)) as u32,
                self.sequence,
                self.domain,
                self.template_id,
                template,
                &batch,
            );
            self.sequence = self.sequence.wrapping_add(batch.len() as u32);
            self.exported += batch.len() as u64;
            self.messages += 1;
            let mut p = cx.pool().make(DEFAULT_HEADROOM, &m, 0);
            p.set_timestamp(now);
            cx.push(1, p);
        }
    }

    /// Exports the flows whose timeouts passed.
    fn expire(&mut self, now: i64) {
        // inactive: the least recently seen first
        while let Some((_, key)) = self.recency.first_key_value() {
            let key = *key;
            let idle = self
                .flows
                .get(&key)
                .map(|f| now.saturating_sub(f.last_seen) >= self.inactive_ns)
                .unwrap_or(true);
            if !idle {
                break;
            }
            self.finish(key);
        }
        let active: Vec<FlowKey> = self
            .flows
            .iter()
            .filter(|(_, f)| now.saturating_sub(f.first_seen) >= self.active_ns)
            .map(|(k, _)| *k)
            .collect();
        for k in active {
            self.finish(k);
        }
    }

    fn arm(&self, cx: &Ctx) {
        let idle = self.flows.is_empty() && self.pending.is_empty();
        if !idle && !cx.timer_scheduled(TIMER) {
            cx.schedule_timer_after(TIMER, CHECK_NS);
        }
    }

    fn count(&mut self, p: &Packet, cx: &Ctx) {
        let Some((key, len)) = flow_key(p) else {
            self.dropped += 1;
            return;
        };
        let now = cx.now_coarse().nsec();
        let ts = if p.timestamp().is_zero() {
            cx.now()
        } else {
            p.timestamp()
        };
        let t = ms(ts);
        if let Some(f) = self.flows.get(&key) {
            if now.saturating_sub(f.first_seen) >= self.active_ns {
                self.finish(key);
            }
        }
        if !self.flows.contains_key(&key) && self.flows.len() >= self.capacity {
            if let Some((_, old)) = self.recency.first_key_value() {
                let old = *old;
                self.finish(old);
                self.evicted += 1;
            }
        }
        let touch = self.next_touch;
        self.next_touch += 1;
        let f = self.flows.entry(key).or_insert(Flow {
            packets: 0,
            octets: 0,
            start_ms: t,
            end_ms: t,
            first_seen: now,
            last_seen: now,
            touch,
        });
        let old_touch = f.touch;
        f.packets += 1;
        f.octets += u64::from(len);
        f.start_ms = f.start_ms.min(t);
        f.end_ms = f.end_ms.max(t);
        f.last_seen = now;
        f.touch = touch;
        self.recency.remove(&old_touch);
        self.recency.insert(touch, key);
        if self.pending.len() >= self.records_per_message() {
            self.emit(false, cx);
        }
        self.arm(cx);
    }
}

impl Element for IPFIXExport {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let d = IPFIXExport::default();
        let domain = a.read::<u32>("OBSERVATION_DOMAIN")?.unwrap_or(d.domain);
        let template_id = a.read::<u32>("TEMPLATE_ID")?.unwrap_or(256);
        let active = a
            .read::<Seconds>("ACTIVE_TIMEOUT")?
            .map_or(d.active_ns, |s| s.0);
        let inactive = a
            .read::<Seconds>("INACTIVE_TIMEOUT")?
            .map_or(d.inactive_ns, |s| s.0);
        let tinterval = a
            .read::<Seconds>("TEMPLATE_INTERVAL")?
            .map_or(d.template_interval_ns, |s| s.0);
        let capacity = a.read::<u32>("CAPACITY")?.unwrap_or(65536);
        let mtu = a.read::<u32>("MTU")?.unwrap_or(1400);
        a.complete()?;
        if !(256..=65535).contains(&template_id) {
            return Err("TEMPLATE_ID must be between 256 and 65535".into());
        }
        if capacity == 0 {
            return Err("CAPACITY must be at least 1".into());
        }
        if !(110..=65535).contains(&mtu) {
            return Err("MTU must be between 110 and 65535".into());
        }
        if active <= 0 || inactive <= 0 {
            return Err("timeouts must be positive".into());
        }
        *self = IPFIXExport {
            domain,
            template_id: template_id as u16,
            active_ns: active,
            inactive_ns: inactive,
            template_interval_ns: tinterval.max(0),
            capacity: capacity as usize,
            mtu: mtu as usize,
            ..IPFIXExport::default()
        };
        Ok(())
    }

    fn simple_action(&mut self, p: Packet, cx: &Ctx) -> Option<Packet> {
        self.count(&p, cx);
        Some(p)
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        for p in &batch {
            self.count(p, cx);
        }
        cx.push_batch(0, batch);
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        self.expire(cx.now().nsec());
        self.emit(true, cx);
        self.arm(cx);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        let v = match name {
            "flows" => self.flows.len() as u64,
            "exported" => self.exported,
            "messages" => self.messages,
            "template_sent" => self.templates,
            "evicted" => self.evicted,
            "dropped" => self.dropped,
            "sequence" => u64::from(self.sequence),
            _ => return None,
        };
        Some(Ok(format!("{}", v)))
    }

    fn write_handler(&mut self, name: &str, _value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        if name != "flush" {
            return None;
        }
        let keys: Vec<FlowKey> = self.recency.values().copied().collect();
        for k in keys {
            self.finish(k);
        }
        self.emit(true, cx);
        Some(Ok(()))
    }

    crate::element_any!();
}
