//! PPPoEServer: a PPPoE access concentrator (RFC 2516) with the PPP
//! control a BRAS needs (a minimal RFC 1661 LCP and RFC 1332 IPCP), and
//! the session data path both ways.

use crate::common::rng::Rng;
use crate::prelude::*;
use alloc::collections::BTreeMap;
use alloc::format;
use click_lang::args::{IpPrefix, RawString};
use click_wire::pppoe::{code, cp_code, ethertype as pppoe_type, ppp_proto, tag};
use click_wire::pppoe::{ControlPacket, PppoePacket};
use click_wire::{EtherAddress, EthernetFrame, Ipv4Packet};
use core::fmt::Write;
use core::net::Ipv4Addr;

/// Seconds between retransmissions of our Configure-Requests.
const RESTART_NS: i64 = 3_000_000_000;
/// Configure-Requests sent before a session is given up.
const MAX_CONFIGURE: u32 = 10;
/// How long a session may take to open (LCP and IPCP) before it is
/// terminated.
const SETUP_NS: i64 = 60_000_000_000;
/// How long a terminated session waits for the client's PADT.
const CLOSE_NS: i64 = 3_000_000_000;
/// Ethernet + PPPoE + PPP protocol.
const ENCAP_LEN: usize = 14 + 6 + 2;

/// LCP options we understand.
const LCP_MRU: u8 = 1;
const LCP_MAGIC: u8 = 5;
/// IPCP options we understand.
const IPCP_ADDR: u8 = 3;
const IPCP_DNS1: u8 = 129;
const IPCP_DNS2: u8 = 131;

/// One direction of a PPP control protocol's negotiation (RFC 1661's
/// option negotiation, reduced to what a server needs).
#[derive(Clone, Debug, Default)]
struct Cp {
    /// Identifier of our outstanding Configure-Request.
    id: u8,
    /// When our Configure-Request was last sent, while it is unanswered.
    sent: Option<Timestamp>,
    /// Configure-Requests sent since the last Ack.
    tries: u32,
    /// The peer acknowledged our request.
    ours_acked: bool,
    /// We acknowledged the peer's request.
    theirs_acked: bool,
    /// Option types of ours the peer rejected (bit per type < 32).
    rejected: u32,
}

impl Cp {
    fn opened(&self) -> bool {
        self.ours_acked && self.theirs_acked
    }
}

#[derive(Clone, Debug)]
struct Session {
    id: u16,
    mac: [u8; 6],
    ip: u32,
    start: Timestamp,
    lcp: Cp,
    ipcp: Cp,
    our_magic: u32,
    /// The largest frame the peer takes (its MRU), for downstream packets.
    peer_mru: u16,
    /// Set when the session is being torn down (Terminate exchanged).
    closing: Option<Timestamp>,
    up_packets: u64,
    up_bytes: u64,
    down_packets: u64,
    down_bytes: u64,
}

impl Session {
    fn up(&self) -> bool {
        self.closing.is_none() && self.lcp.opened() && self.ipcp.opened()
    }
    fn state(&self) -> &'static str {
        if self.closing.is_some() {
            "closing"
        } else if !self.lcp.opened() {
            "lcp"
        } else if !self.ipcp.opened() {
            "ipcp"
        } else {
            "open"
        }
    }
}

/// Bad-frame and event counters, in the order the `stats` handler lists
/// them.
#[derive(Clone, Debug, Default)]
struct Stats {
    padi: u64,
    pado: u64,
    padr: u64,
    pads: u64,
    padt_in: u64,
    padt_out: u64,
    bad_header: u64,
    bad_length: u64,
    bad_session: u64,
    bad_mac: u64,
    bad_protocol: u64,
    bad_cookie: u64,
    bad_service: u64,
    spoofed: u64,
    no_session: u64,
    too_big: u64,
    refused: u64,
}

const COUNTERS: &[&str] = &[
    "padi",
    "pado",
    "padr",
    "pads",
    "padt_in",
    "padt_out",
    "bad_header",
    "bad_length",
    "bad_session",
    "bad_mac",
    "bad_protocol",
    "bad_cookie",
    "bad_service",
    "spoofed",
    "no_session",
    "too_big",
    "refused",
];

impl Stats {
    fn get(&self, name: &str) -> Option<u64> {
        Some(match name {
            "padi" => self.padi,
            "pado" => self.pado,
            "padr" => self.padr,
            "pads" => self.pads,
            "padt_in" => self.padt_in,
            "padt_out" => self.padt_out,
            "bad_header" => self.bad_header,
            "bad_length" => self.bad_length,
            "bad_session" => self.bad_session,
            "bad_mac" => self.bad_mac,
            "bad_protocol" => self.bad_protocol,
            "bad_cookie" => self.bad_cookie,
            "bad_service" => self.bad_service,
            "spoofed" => self.spoofed,
            "no_session" => self.no_session,
            "too_big" => self.too_big,
            "refused" => self.refused,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug)]
struct Config {
    eth: [u8; 6],
    local: u32,
    pool_net: u32,
    pool_mask: u32,
    ac_name: String,
    service: String,
    cookie: bool,
    mru: u16,
    dns: [Option<u32>; 2],
    max_sessions: usize,
}

/// `PPPoEServer(ETH, LOCAL, POOL, [KEYWORDS])`.
pub struct PPPoEServer {
    cf: Config,
    sessions: BTreeMap<u16, Session>,
    by_ip: BTreeMap<u32, u16>,
    next_id: u16,
    rng: Rng,
    secret: u64,
    stats: Stats,
}

impl Default for PPPoEServer {
    fn default() -> Self {
        PPPoEServer {
            cf: Config {
                eth: [0; 6],
                local: 0,
                pool_net: 0,
                pool_mask: 0,
                ac_name: String::new(),
                service: String::new(),
                cookie: true,
                mru: 1492,
                dns: [None, None],
                max_sessions: 4096,
            },
            sessions: BTreeMap::new(),
            by_ip: BTreeMap::new(),
            next_id: 1,
            rng: Rng::new(1),
            secret: 0,
            stats: Stats::default(),
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "PPPoEServer",
    port_count: "2/2-3",
    processing: "h/h",
    group: "ppp",
    signature: "PPPoEServer(ETH, LOCAL, POOL, [KEYWORDS])",
    summary: "Terminates PPPoE sessions: a software BRAS.",
    description: "A PPPoE access concentrator (RFC 2516) with the PPP control of a broadband \
remote access server: discovery, a minimal LCP and IPCP, and the session data path in both \
directions. No authentication is requested (clients must not require it from us either: pppd's \
`noauth`).\n\n\
Input 0 takes Ethernet frames from the access link. Discovery (ethertype 0x8863): a PADI \
with a Service-Name we serve gets a PADO (AC-Name, the requested Service-Name and ours, \
Host-Uniq and Relay-Session-Id echoed, an AC-Cookie); a PADR (carrying that cookie) gets a \
PADS with a fresh session id, or a PADS with session 0 and an error tag when the service is \
not ours or no session or address is left; a PADT ends the session. Session frames (0x8864) \
are checked — version/type, code 0, the length field, the session id, the client's MAC — and \
counted and dropped when wrong. LCP: Configure-Requests are answered for MRU (at most MRU) and \
Magic-Number, everything else is rejected; we request MRU and a Magic-Number ourselves, \
answer Echo-Requests, Terminate-Requests (then wait for the PADT), unknown codes with \
Code-Reject and unknown protocols with Protocol-Reject. IPCP: the client is given the lowest \
free address of POOL (Nak of 0.0.0.0 or any other address), DNS servers when configured \
(rejected otherwise), every other option rejected; we request LOCAL as our own address. Our \
Configure-Requests are retransmitted every 3 seconds, 10 times at most; a session that is not \
up within 60 seconds is terminated (PADT).\n\n\
Once LCP and IPCP are open, IPv4 frames (PPP protocol 0x0021) from the session's own address \
leave on output 1 as plain IPv4 packets (Ethernet padding removed, network header set); \
packets with another source address are counted as spoofed and dropped. Input 1 takes IPv4 \
packets (no link header) for subscribers: the destination address picks the session, and the \
packet leaves on output 0 encapsulated (Ethernet to the client's MAC, PPPoE, PPP); packets for \
no open session go to output 2 if there is one (dropped otherwise), packets longer than the \
client's MRU are dropped (fragment before, e.g. IPFragmenter(1492)).\n\n\
Keyword arguments are:\n\n\
- `ETH`: Ethernet address. The access link's address (an AddressInfo name works).\n\
- `LOCAL`: IP address. Our address on the PPP links.\n\
- `POOL`: IP prefix. Subscribers' addresses (network, broadcast and LOCAL excluded).\n\
- `AC_NAME`: String. The AC-Name tag. Default `clickos`.\n\
- `SERVICE_NAME`: String. The service offered; PADIs asking for another one get no PADO. \
Default empty: any service name is accepted.\n\
- `COOKIE`: Boolean. Send AC-Cookies and require them in PADRs. Default true.\n\
- `MRU`: Integer. Largest PPP frame, our MRU and the most a client may ask for. Default 1492.\n\
- `DNS1`, `DNS2`: IP addresses. DNS servers offered in IPCP.\n\
- `MAX_SESSIONS`: Integer. Default 4096.",
    ports: "input 0: Ethernet frames from the access link; input 1: IPv4 packets for \
subscribers. Output 0: Ethernet frames to the access link; output 1: IPv4 packets from \
subscribers; optional output 2: IPv4 packets for no open session",
    handlers: &[
        HandlerDoc {
            name: "sessions",
            mode: HandlerMode::Read,
            text: "One line per session: `ID MAC IP STATE up PACKETS BYTES down PACKETS BYTES \
uptime SECONDS` (STATE is `lcp`, `ipcp`, `open` or `closing`; up is from the subscriber).",
        },
        HandlerDoc {
            name: "count",
            mode: HandlerMode::Read,
            text: "Number of sessions.",
        },
        HandlerDoc {
            name: "stats",
            mode: HandlerMode::Read,
            text: "Every counter below, one `NAME VALUE` per line.",
        },
        HandlerDoc {
            name: "padi",
            mode: HandlerMode::Read,
            text: "PADIs received.",
        },
        HandlerDoc {
            name: "pado",
            mode: HandlerMode::Read,
            text: "PADOs sent.",
        },
        HandlerDoc {
            name: "padr",
            mode: HandlerMode::Read,
            text: "PADRs received (to our address).",
        },
        HandlerDoc {
            name: "pads",
            mode: HandlerMode::Read,
            text: "PADS packets sent (refusals, with session 0, included).",
        },
        HandlerDoc {
            name: "padt_in",
            mode: HandlerMode::Read,
            text: "PADTs received.",
        },
        HandlerDoc {
            name: "padt_out",
            mode: HandlerMode::Read,
            text: "PADTs sent.",
        },
        HandlerDoc {
            name: "bad_header",
            mode: HandlerMode::Read,
            text: "Frames dropped for a wrong version/type, code or ethertype, a PADI/PADR with a session id or a PADT without one, a group source address, or a PADI/PADR without exactly one Service-Name.",
        },
        HandlerDoc {
            name: "bad_length",
            mode: HandlerMode::Read,
            text: "Frames dropped for a length field, tag or option running past the frame (truncated frames), or a short IP header.",
        },
        HandlerDoc {
            name: "bad_session",
            mode: HandlerMode::Read,
            text: "Session frames (and PADTs) for no session.",
        },
        HandlerDoc {
            name: "bad_mac",
            mode: HandlerMode::Read,
            text: "Session frames (and PADTs) from another MAC than the session's, PADRs not to our address.",
        },
        HandlerDoc {
            name: "bad_protocol",
            mode: HandlerMode::Read,
            text: "Session frames with a PPP protocol we do not speak (answered with Protocol-Reject once LCP is open), IPv4 before IPCP is open, IPCP before LCP is open.",
        },
        HandlerDoc {
            name: "bad_cookie",
            mode: HandlerMode::Read,
            text: "PADRs with a missing or wrong AC-Cookie.",
        },
        HandlerDoc {
            name: "bad_service",
            mode: HandlerMode::Read,
            text: "PADIs and PADRs for a service we do not offer.",
        },
        HandlerDoc {
            name: "spoofed",
            mode: HandlerMode::Read,
            text: "Upstream IPv4 packets whose source is not the session's address.",
        },
        HandlerDoc {
            name: "no_session",
            mode: HandlerMode::Read,
            text: "Downstream packets for no open session.",
        },
        HandlerDoc {
            name: "too_big",
            mode: HandlerMode::Read,
            text: "Downstream packets longer than the client's MRU.",
        },
        HandlerDoc {
            name: "refused",
            mode: HandlerMode::Read,
            text: "PADRs refused: no session id or pool address left.",
        },
        HandlerDoc {
            name: "kill",
            mode: HandlerMode::Write,
            text: "Terminates a session: write its id; sends a PADT.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(PPPoEServer::default()),
};

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn fnv(h: u64, data: &[u8]) -> u64 {
    let mut h = h;
    for &b in data {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Appends a discovery tag.
fn put_tag(v: &mut Vec<u8>, t: u16, value: &[u8]) {
    let n = value.len().min(usize::from(u16::MAX));
    v.extend_from_slice(&t.to_be_bytes());
    v.extend_from_slice(&(n as u16).to_be_bytes());
    v.extend_from_slice(&value[..n]);
}

/// What a discovery packet asked for.
#[derive(Default)]
struct Discovery<'a> {
    services: u32,
    service: &'a [u8],
    host_uniq: Option<&'a [u8]>,
    relay: Option<&'a [u8]>,
    cookie: Option<&'a [u8]>,
}

impl PPPoEServer {
    fn cookie_for(&self, mac: &[u8; 6]) -> [u8; 16] {
        let a = fnv(self.secret ^ 0xcbf2_9ce4_8422_2325, mac);
        let b = fnv(a ^ self.secret.rotate_left(17), mac);
        let mut c = [0u8; 16];
        c[..8].copy_from_slice(&a.to_be_bytes());
        c[8..].copy_from_slice(&b.to_be_bytes());
        c
    }

    /// An Ethernet frame to `dst` with a PPPoE header and `payload`.
    fn frame(
        &self,
        cx: &Ctx,
        dst: [u8; 6],
        etype: u16,
        code: u8,
        sid: u16,
        payload: &[&[u8]],
    ) -> Packet {
        let n: usize = payload.iter().map(|s| s.len()).sum();
        let mut p = cx.pool().make_len(DEFAULT_HEADROOM, 20 + n, 0);
        {
            let d = p.data_mut();
            let mut f = EthernetFrame::new_unchecked(&mut d[..]);
            f.set_dst_addr(EtherAddress(dst));
            f.set_src_addr(EtherAddress(self.cf.eth));
            f.set_ethertype(etype);
            let mut h = PppoePacket::new_unchecked(&mut d[14..]);
            h.set_header(code, sid, n as u16);
            let mut off = 20;
            for s in payload {
                d[off..off + s.len()].copy_from_slice(s);
                off += s.len();
            }
        }
        p.set_mac_header(0);
        p
    }

    /// A PPP control packet in session `s`.
    fn control(&self, cx: &Ctx, s: &Session, proto: u16, code: u8, id: u8, data: &[u8]) -> Packet {
        // never more than the peer's MRU
        let room = usize::from(s.peer_mru).saturating_sub(6);
        let data = &data[..data.len().min(room)];
        let hdr = [
            (proto >> 8) as u8,
            proto as u8,
            code,
            id,
            ((data.len() + 4) >> 8) as u8,
            (data.len() + 4) as u8,
        ];
        self.frame(
            cx,
            s.mac,
            pppoe_type::SESSION,
            code::SESSION,
            s.id,
            &[&hdr, data],
        )
    }

    fn lcp_request_data(&self, s: &Session) -> Vec<u8> {
        let mut v = Vec::new();
        if s.lcp.rejected & (1 << LCP_MRU) == 0 {
            v.extend_from_slice(&[LCP_MRU, 4]);
            v.extend_from_slice(&self.cf.mru.to_be_bytes());
        }
        if s.lcp.rejected & (1 << LCP_MAGIC) == 0 {
            v.extend_from_slice(&[LCP_MAGIC, 6]);
            v.extend_from_slice(&s.our_magic.to_be_bytes());
        }
        v
    }

    /// Sends our Configure-Request of `proto` (LCP or IPCP) with a new id.
    fn send_request(&mut self, sid: u16, proto: u16, cx: &Ctx) {
        let Some(s) = self.sessions.get(&sid) else {
            return;
        };
        let data = if proto == ppp_proto::LCP {
            self.lcp_request_data(s)
        } else {
            let mut v = alloc::vec![IPCP_ADDR, 6];
            v.extend_from_slice(&self.cf.local.to_be_bytes());
            v
        };
        let now = cx.now();
        let s = self.sessions.get_mut(&sid).unwrap();
        let c = if proto == ppp_proto::LCP {
            &mut s.lcp
        } else {
            &mut s.ipcp
        };
        c.id = c.id.wrapping_add(1);
        c.sent = Some(now);
        c.tries += 1;
        c.ours_acked = false;
        let id = c.id;
        let s = s.clone();
        let p = self.control(cx, &s, proto, cp_code::CONF_REQ, id, &data);
        cx.push(0, p);
    }

    /// Removes a session, sending a PADT when `padt`.
    fn remove(&mut self, sid: u16, padt: bool, cx: &Ctx) {
        let Some(s) = self.sessions.remove(&sid) else {
            return;
        };
        if self.by_ip.get(&s.ip) == Some(&sid) {
            self.by_ip.remove(&s.ip);
        }
        if padt {
            let mut t = Vec::new();
            put_tag(&mut t, tag::GENERIC_ERROR, b"session terminated");
            let p = self.frame(cx, s.mac, pppoe_type::DISCOVERY, code::PADT, sid, &[&t]);
            self.stats.padt_out += 1;
            cx.push(0, p);
        }
    }

    fn free_ip(&self) -> Option<u32> {
        let first = self.cf.pool_net.checked_add(1)?;
        let last = (self.cf.pool_net | !self.cf.pool_mask).checked_sub(1)?;
        let mut a = first;
        // the map is ordered: walk the used addresses alongside
        for (&used, _) in self.by_ip.range(first..=last) {
            while a < used {
                if a != self.cf.local {
                    return Some(a);
                }
                a += 1;
            }
            a = used.checked_add(1)?;
        }
        while a <= last {
            if a != self.cf.local {
                return Some(a);
            }
            a = a.checked_add(1)?;
        }
        None
    }

    fn free_id(&mut self) -> Option<u16> {
        for _ in 0..0xffff {
            let id = self.next_id;
            self.next_id = if id >= 0xfffe { 1 } else { id + 1 };
            if id != 0 && !self.sessions.contains_key(&id) {
                return Some(id);
            }
        }
        None
    }

    /// Re-arms the timer at the earliest deadline of any session.
    fn rearm(&self, cx: &Ctx) {
        let mut next: Option<i64> = None;
        for s in self.sessions.values() {
            let mut d = Vec::with_capacity(4);
            if let Some(c) = s.closing {
                d.push(c.nsec() + CLOSE_NS);
            } else {
                if !s.up() {
                    d.push(s.start.nsec() + SETUP_NS);
                }
                for c in [&s.lcp, &s.ipcp] {
                    if let Some(t) = c.sent {
                        d.push(t.nsec() + RESTART_NS);
                    }
                }
                if s.lcp.sent.is_none() && !s.lcp.ours_acked {
                    // our first LCP request goes out with the client's
                    // first, or after a restart interval
                    d.push(s.start.nsec() + RESTART_NS);
                }
            }
            for t in d {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        }
        match next {
            Some(t) => cx.schedule_timer_at(0, Timestamp::from_nsec(t)),
            None => cx.unschedule_timer(0),
        }
    }

    fn discovery(&mut self, p: &Packet, cx: &Ctx) {
        let d = p.data();
        let src: [u8; 6] = d[6..12].try_into().unwrap_or([0; 6]);
        let dst: [u8; 6] = d[0..6].try_into().unwrap_or([0; 6]);
        let Ok(h) = PppoePacket::new_checked(&d[14..]) else {
            if d.len() < 20 || d[14] == 0x11 {
                self.stats.bad_length += 1;
            } else {
                self.stats.bad_header += 1;
            }
            return;
        };
        if EtherAddress(src).is_group() {
            self.stats.bad_header += 1;
            return;
        }
        let mut q = Discovery::default();
        for t in h.tags() {
            let Ok((t, v)) = t else {
                self.stats.bad_length += 1;
                return;
            };
            match t {
                tag::SERVICE_NAME => {
                    q.services += 1;
                    q.service = v;
                }
                tag::HOST_UNIQ => q.host_uniq = Some(v),
                tag::RELAY_SESSION_ID => q.relay = Some(v),
                tag::AC_COOKIE => q.cookie = Some(v),
                _ => {}
            }
        }
        let ours = self.cf.service.as_bytes();
        let service_ok = q.service.is_empty() || ours.is_empty() || q.service == ours;
        match (h.code(), h.session_id()) {
            (code::PADI, 0) => {
                self.stats.padi += 1;
                if q.services != 1 {
                    self.stats.bad_header += 1;
                    return;
                }
                if !service_ok {
                    self.stats.bad_service += 1;
                    return;
                }
                let mut t = Vec::new();
                put_tag(&mut t, tag::AC_NAME, self.cf.ac_name.as_bytes());
                put_tag(&mut t, tag::SERVICE_NAME, q.service);
                if q.service != ours {
                    put_tag(&mut t, tag::SERVICE_NAME, ours);
                }
                if let Some(v) = q.host_uniq {
                    put_tag(&mut t, tag::HOST_UNIQ, v);
                }
                if let Some(v) = q.relay {
                    put_tag(&mut t, tag::RELAY_SESSION_ID, v);
                }
                if self.cf.cookie {
                    put_tag(&mut t, tag::AC_COOKIE, &self.cookie_for(&src));
                }
                let r = self.frame(cx, src, pppoe_type::DISCOVERY, code::PADO, 0, &[&t]);
                self.stats.pado += 1;
                cx.push(0, r);
            }
            (code::PADR, 0) => {
                if dst != self.cf.eth {
                    self.stats.bad_mac += 1;
                    return;
                }
                self.stats.padr += 1;
                if q.services != 1 {
                    self.stats.bad_header += 1;
                    return;
                }
                if self.cf.cookie && q.cookie != Some(&self.cookie_for(&src)[..]) {
                    self.stats.bad_cookie += 1;
                    return;
                }
                let mut t = Vec::new();
                put_tag(&mut t, tag::SERVICE_NAME, q.service);
                if let Some(v) = q.host_uniq {
                    put_tag(&mut t, tag::HOST_UNIQ, v);
                }
                if let Some(v) = q.relay {
                    put_tag(&mut t, tag::RELAY_SESSION_ID, v);
                }
                let mut sid = 0;
                if !service_ok {
                    self.stats.bad_service += 1;
                    put_tag(&mut t, tag::SERVICE_NAME_ERROR, b"unknown service");
                } else {
                    let ip = self.free_ip();
                    let id = if self.sessions.len() < self.cf.max_sessions {
                        self.free_id()
                    } else {
                        None
                    };
                    match (ip, id) {
                        (Some(ip), Some(id)) => {
                            sid = id;
                            let s = Session {
                                id,
                                mac: src,
                                ip,
                                start: cx.now(),
                                lcp: Cp::default(),
                                ipcp: Cp::default(),
                                our_magic: (self.rng.next_u64() as u32).max(1),
                                peer_mru: self.cf.mru,
                                closing: None,
                                up_packets: 0,
                                up_bytes: 0,
                                down_packets: 0,
                                down_bytes: 0,
                            };
                            self.sessions.insert(id, s);
                            self.by_ip.insert(ip, id);
                        }
                        _ => {
                            self.stats.refused += 1;
                            put_tag(&mut t, tag::AC_SYSTEM_ERROR, b"no session available");
                        }
                    }
                }
                let r = self.frame(cx, src, pppoe_type::DISCOVERY, code::PADS, sid, &[&t]);
                self.stats.pads += 1;
                cx.push(0, r);
                self.rearm(cx);
            }
            (code::PADT, sid) if sid != 0 => {
                self.stats.padt_in += 1;
                match self.sessions.get(&sid) {
                    None => self.stats.bad_session += 1,
                    Some(s) if s.mac != src => self.stats.bad_mac += 1,
                    Some(_) => {
                        self.remove(sid, false, cx);
                        self.rearm(cx);
                    }
                }
            }
            _ => self.stats.bad_header += 1,
        }
    }

    /// A session-stage frame: upstream data or PPP control.
    fn session_frame(&mut self, mut p: Packet, cx: &Ctx) {
        let (sid, plen, proto) = {
            let d = p.data();
            let Ok(h) = PppoePacket::new_checked(&d[14..]) else {
                if d.len() < 20 || d[14] == 0x11 {
                    self.stats.bad_length += 1;
                } else {
                    self.stats.bad_header += 1;
                }
                return;
            };
            if h.code() != code::SESSION {
                self.stats.bad_header += 1;
                return;
            }
            let Some(s) = self.sessions.get(&h.session_id()) else {
                self.stats.bad_session += 1;
                return;
            };
            if d[6..12] != s.mac {
                self.stats.bad_mac += 1;
                return;
            }
            if h.payload().len() < 2 {
                self.stats.bad_length += 1;
                return;
            }
            (h.session_id(), usize::from(h.length()), be16(h.payload()))
        };
        if proto == ppp_proto::IPV4 {
            // the IP packet: cut the link headers and the Ethernet padding
            let pad = p.len() - (20 + plen);
            p.take(pad);
            p.pull(ENCAP_LEN);
            let Some(s) = self.sessions.get_mut(&sid) else {
                return;
            };
            if !s.up() {
                self.stats.bad_protocol += 1;
                return;
            }
            let hl = match Ipv4Packet::new_fixed_checked(p.data()) {
                Ok(ip) if ip.version() == 4 => {
                    if u32::from(ip.src_addr()) != s.ip {
                        self.stats.spoofed += 1;
                        return;
                    }
                    usize::from(ip.header_len())
                }
                _ => {
                    self.stats.bad_length += 1;
                    return;
                }
            };
            s.up_packets += 1;
            s.up_bytes += p.len() as u64;
            p.set_network_header(0, hl);
            cx.push(1, p);
            return;
        }
        let info: Vec<u8> = p.data()[22..20 + plen].to_vec();
        drop(p);
        match proto {
            ppp_proto::LCP => self.lcp(sid, &info, cx),
            ppp_proto::IPCP => self.ipcp(sid, &info, cx),
            _ => {
                self.stats.bad_protocol += 1;
                let Some(s) = self.sessions.get(&sid) else {
                    return;
                };
                if s.lcp.opened() {
                    let mut d = proto.to_be_bytes().to_vec();
                    d.extend_from_slice(&info);
                    let id = self.rng.next_u64() as u8;
                    let r = self.control(cx, s, ppp_proto::LCP, cp_code::PROTO_REJ, id, &d);
                    cx.push(0, r);
                }
            }
        }
        self.rearm(cx);
    }

    /// Handles the answers shared by LCP and IPCP to our request; returns
    /// false when `code` is not one of them.
    fn answer(&mut self, sid: u16, proto: u16, c: &ControlPacket<&[u8]>, cx: &Ctx) -> bool {
        let Some(s) = self.sessions.get_mut(&sid) else {
            return true;
        };
        let cp = if proto == ppp_proto::LCP {
            &mut s.lcp
        } else {
            &mut s.ipcp
        };
        match c.code() {
            cp_code::CONF_ACK if cp.sent.is_some() && c.identifier() == cp.id => {
                cp.ours_acked = true;
                cp.sent = None;
                cp.tries = 0;
            }
            cp_code::CONF_NAK | cp_code::CONF_REJ
                if cp.sent.is_some() && c.identifier() == cp.id =>
            {
                for o in c.options().flatten() {
                    if proto == ppp_proto::LCP && o.0 == LCP_MAGIC && c.code() == cp_code::CONF_NAK
                    {
                        s.our_magic = (self.rng.next_u64() as u32).max(1);
                    } else if o.0 < 32 {
                        cp.rejected |= 1 << o.0;
                    }
                }
                self.send_request(sid, proto, cx);
            }
            cp_code::CONF_ACK | cp_code::CONF_NAK | cp_code::CONF_REJ => {} // stale
            cp_code::TERM_REQ => {
                let id = c.identifier();
                if proto == ppp_proto::LCP {
                    s.closing = Some(cx.now());
                }
                s.ipcp = Cp::default();
                let s = s.clone();
                let r = self.control(cx, &s, proto, cp_code::TERM_ACK, id, &[]);
                cx.push(0, r);
            }
            cp_code::TERM_ACK => {
                if proto == ppp_proto::LCP && s.closing.is_some() {
                    self.remove(sid, true, cx);
                }
            }
            cp_code::CODE_REJ => {}
            _ => return false,
        }
        true
    }

    fn code_reject(&mut self, sid: u16, proto: u16, pkt: &[u8], cx: &Ctx) {
        if let Some(s) = self.sessions.get(&sid) {
            let id = self.rng.next_u64() as u8;
            let r = self.control(cx, s, proto, cp_code::CODE_REJ, id, pkt);
            cx.push(0, r);
        }
    }

    fn lcp(&mut self, sid: u16, info: &[u8], cx: &Ctx) {
        let Ok(c) = ControlPacket::new_checked(info) else {
            self.stats.bad_length += 1;
            return;
        };
        if c.code() == cp_code::CONF_REQ {
            let (mut nak, mut rej) = (Vec::new(), Vec::new());
            let Some(s) = self.sessions.get(&sid) else {
                return;
            };
            let mut mru = s.peer_mru;
            for o in c.options() {
                let Ok((t, v, raw)) = o else {
                    self.stats.bad_length += 1;
                    return;
                };
                match (t, v.len()) {
                    (LCP_MRU, 2) if be16(v) <= self.cf.mru && be16(v) >= 64 => {
                        mru = be16(v);
                    }
                    (LCP_MRU, 2) => {
                        nak.extend_from_slice(&[LCP_MRU, 4]);
                        nak.extend_from_slice(&self.cf.mru.to_be_bytes());
                    }
                    (LCP_MAGIC, 4) if be32(v) != 0 && be32(v) != s.our_magic => {}
                    (LCP_MAGIC, 4) => {
                        nak.extend_from_slice(&[LCP_MAGIC, 6]);
                        let m = (self.rng.next_u64() as u32).max(1);
                        nak.extend_from_slice(&m.to_be_bytes());
                    }
                    _ => rej.extend_from_slice(raw),
                }
            }
            self.configure_reply(sid, ppp_proto::LCP, c.identifier(), c.data(), nak, rej, cx);
            if let Some(s) = self.sessions.get_mut(&sid) {
                if s.lcp.theirs_acked {
                    s.peer_mru = mru;
                }
            }
            return;
        }
        if self.answer(sid, ppp_proto::LCP, &c, cx) {
            self.after_change(sid, cx);
            return;
        }
        let Some(s) = self.sessions.get(&sid) else {
            return;
        };
        match c.code() {
            cp_code::ECHO_REQ if s.lcp.opened() => {
                let mut d = s.our_magic.to_be_bytes().to_vec();
                d.extend_from_slice(c.data().get(4..).unwrap_or(&[]));
                let r = self.control(
                    cx,
                    s,
                    ppp_proto::LCP,
                    cp_code::ECHO_REPLY,
                    c.identifier(),
                    &d,
                );
                cx.push(0, r);
            }
            cp_code::ECHO_REQ | cp_code::ECHO_REPLY | cp_code::DISCARD_REQ => {}
            cp_code::PROTO_REJ => {}
            _ => self.code_reject(sid, ppp_proto::LCP, c.packet(), cx),
        }
    }

    fn ipcp(&mut self, sid: u16, info: &[u8], cx: &Ctx) {
        let Some(s) = self.sessions.get(&sid) else {
            return;
        };
        if !s.lcp.opened() {
            // RFC 1661: silently discarded before LCP is open
            self.stats.bad_protocol += 1;
            return;
        }
        let Ok(c) = ControlPacket::new_checked(info) else {
            self.stats.bad_length += 1;
            return;
        };
        if c.code() == cp_code::CONF_REQ {
            let (mut nak, mut rej) = (Vec::new(), Vec::new());
            let mut saw_addr = false;
            for o in c.options() {
                let Ok((t, v, raw)) = o else {
                    self.stats.bad_length += 1;
                    return;
                };
                let want = match (t, v.len()) {
                    (IPCP_ADDR, 4) => {
                        saw_addr = true;
                        Some(s.ip)
                    }
                    (IPCP_DNS1, 4) => self.cf.dns[0],
                    (IPCP_DNS2, 4) => self.cf.dns[1],
                    _ => None,
                };
                match want {
                    Some(a) if be32(v) == a => {}
                    Some(a) => {
                        nak.extend_from_slice(&[t, 6]);
                        nak.extend_from_slice(&a.to_be_bytes());
                    }
                    None => rej.extend_from_slice(raw),
                }
            }
            if !saw_addr && rej.is_empty() {
                // RFC 1332: Nak with the option the peer should request
                nak.extend_from_slice(&[IPCP_ADDR, 6]);
                nak.extend_from_slice(&s.ip.to_be_bytes());
            }
            self.configure_reply(sid, ppp_proto::IPCP, c.identifier(), c.data(), nak, rej, cx);
            return;
        }
        if self.answer(sid, ppp_proto::IPCP, &c, cx) {
            self.after_change(sid, cx);
            return;
        }
        self.code_reject(sid, ppp_proto::IPCP, c.packet(), cx);
    }

    /// Answers a Configure-Request: Reject if anything is rejected, else
    /// Nak if anything is, else Ack with the request's options.
    #[allow(clippy::too_many_arguments)]
    fn configure_reply(
        &mut self,
        sid: u16,
        proto: u16,
        id: u8,
        request: &[u8],
        nak: Vec<u8>,
        rej: Vec<u8>,
        cx: &Ctx,
    ) {
        let Some(s) = self.sessions.get_mut(&sid) else {
            return;
        };
        let cp = if proto == ppp_proto::LCP {
            &mut s.lcp
        } else {
            &mut s.ipcp
        };
        // a Configure-Request on an open layer renegotiates it
        let was_open = cp.opened();
        let (code, data) = if !rej.is_empty() {
            (cp_code::CONF_REJ, rej)
        } else if !nak.is_empty() {
            (cp_code::CONF_NAK, nak)
        } else {
            (cp_code::CONF_ACK, request.to_vec())
        };
        cp.theirs_acked = code == cp_code::CONF_ACK;
        let need_request = was_open || (cp.sent.is_none() && !cp.ours_acked);
        if was_open {
            cp.ours_acked = false;
            if proto == ppp_proto::LCP {
                s.ipcp = Cp::default();
            }
        }
        let s = s.clone();
        if need_request {
            self.send_request(sid, proto, cx);
        }
        let r = self.control(cx, &s, proto, code, id, &data);
        cx.push(0, r);
        self.after_change(sid, cx);
    }

    /// Starts IPCP once LCP opens, and re-arms the timer.
    fn after_change(&mut self, sid: u16, cx: &Ctx) {
        if let Some(s) = self.sessions.get(&sid) {
            if s.closing.is_none() && s.lcp.opened() && s.ipcp.sent.is_none() && !s.ipcp.ours_acked
            {
                self.send_request(sid, ppp_proto::IPCP, cx);
            }
        }
        self.rearm(cx);
    }

    /// Downstream: an IPv4 packet for a subscriber.
    fn downstream(&mut self, mut p: Packet, cx: &Ctx) {
        let dst = match Ipv4Packet::new_fixed_checked(p.data()) {
            Ok(ip) if ip.version() == 4 => u32::from(ip.dst_addr()),
            _ => {
                self.stats.bad_length += 1;
                return;
            }
        };
        let s = self
            .by_ip
            .get(&dst)
            .and_then(|id| self.sessions.get_mut(id))
            .filter(|s| s.up());
        let Some(s) = s else {
            self.stats.no_session += 1;
            if cx.noutputs() > 2 {
                cx.push(2, p);
            }
            return;
        };
        let n = p.len();
        if n + 2 > usize::from(s.peer_mru) {
            self.stats.too_big += 1;
            return;
        }
        s.down_packets += 1;
        s.down_bytes += n as u64;
        let (mac, sid) = (s.mac, s.id);
        p.push(ENCAP_LEN);
        {
            let d = p.data_mut();
            let mut f = EthernetFrame::new_unchecked(&mut d[..]);
            f.set_dst_addr(EtherAddress(mac));
            f.set_src_addr(EtherAddress(self.cf.eth));
            f.set_ethertype(pppoe_type::SESSION);
            PppoePacket::new_unchecked(&mut d[14..]).set_header(code::SESSION, sid, (n + 2) as u16);
            d[20..22].copy_from_slice(&ppp_proto::IPV4.to_be_bytes());
        }
        p.set_mac_header(0);
        p.set_network_header(ENCAP_LEN, 0);
        cx.push(0, p);
    }

    fn sessions_text(&self, cx: &Ctx) -> String {
        let now = cx.now().nsec();
        let mut out = String::new();
        for s in self.sessions.values() {
            let up = (now - s.start.nsec()).max(0);
            let _ = writeln!(
                out,
                "{} {} {} {} up {} {} down {} {} uptime {}.{:03}",
                s.id,
                EtherAddress(s.mac).fmt_colon(),
                Ipv4Addr::from(s.ip),
                s.state(),
                s.up_packets,
                s.up_bytes,
                s.down_packets,
                s.down_bytes,
                up / 1_000_000_000,
                (up / 1_000_000) % 1000
            );
        }
        out
    }
}

fn parse(config: &str, cx: &ConfigureCtx) -> Result<Config, String> {
    let mut a = cx.args(config);
    let eth = a.read_mp::<[u8; 6]>("ETH")?;
    let local = a.read_mp::<Ipv4Addr>("LOCAL")?;
    let pool = a.read_mp::<IpPrefix>("POOL")?;
    let ac_name = a.read::<String>("AC_NAME")?;
    let service = a.read::<RawString>("SERVICE_NAME")?;
    let cookie = a.read::<bool>("COOKIE")?;
    let mru = a.read::<u32>("MRU")?;
    let dns1 = a.read::<Ipv4Addr>("DNS1")?;
    let dns2 = a.read::<Ipv4Addr>("DNS2")?;
    let max_sessions = a.read::<u32>("MAX_SESSIONS")?;
    a.complete()?;
    let mru = mru.unwrap_or(1492);
    if !(576..=65535).contains(&mru) {
        return Err("MRU must be between 576 and 65535".into());
    }
    let mask = u32::from(pool.mask);
    if mask.count_ones() > 30 {
        return Err("POOL must be a /30 or larger".into());
    }
    let service = match service {
        Some(RawString(s)) => click_lang::args::unquote(&s),
        None => String::new(),
    };
    Ok(Config {
        eth,
        local: u32::from(local),
        pool_net: u32::from(pool.addr) & mask,
        pool_mask: mask,
        ac_name: ac_name.unwrap_or_else(|| "clickos".into()),
        service,
        cookie: cookie.unwrap_or(true),
        mru: mru as u16,
        dns: [dns1.map(u32::from), dns2.map(u32::from)],
        max_sessions: max_sessions.unwrap_or(4096) as usize,
    })
}

impl Element for PPPoEServer {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let cf = parse(config, cx)?;
        self.rng = Rng::from_name(cx.name);
        self.cf = cf;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        self.secret = self.rng.next_u64() ^ (cx.now().nsec() as u64);
        Ok(())
    }

    fn push(&mut self, port: usize, p: Packet, cx: &Ctx) {
        if port == 1 {
            self.downstream(p, cx);
            return;
        }
        let Ok(f) = EthernetFrame::new_checked(p.data()) else {
            self.stats.bad_length += 1;
            return;
        };
        match f.ethertype() {
            pppoe_type::DISCOVERY => self.discovery(&p, cx),
            pppoe_type::SESSION => self.session_frame(p, cx),
            _ => self.stats.bad_header += 1,
        }
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        let now = cx.now().nsec();
        let ids: Vec<u16> = self.sessions.keys().copied().collect();
        for sid in ids {
            let Some(s) = self.sessions.get(&sid) else {
                continue;
            };
            if let Some(c) = s.closing {
                if now >= c.nsec() + CLOSE_NS {
                    self.remove(sid, true, cx);
                }
                continue;
            }
            let expired = !s.up() && now >= s.start.nsec() + SETUP_NS;
            if expired || s.lcp.tries > MAX_CONFIGURE || s.ipcp.tries > MAX_CONFIGURE {
                self.remove(sid, true, cx);
                continue;
            }
            let first_lcp =
                s.lcp.sent.is_none() && !s.lcp.ours_acked && now >= s.start.nsec() + RESTART_NS;
            let lcp_due = s.lcp.sent.is_some_and(|t| now >= t.nsec() + RESTART_NS);
            let ipcp_due = s.ipcp.sent.is_some_and(|t| now >= t.nsec() + RESTART_NS);
            if first_lcp || lcp_due {
                self.send_request(sid, ppp_proto::LCP, cx);
            }
            if ipcp_due {
                self.send_request(sid, ppp_proto::IPCP, cx);
            }
        }
        self.rearm(cx);
    }

    fn read_handler(&mut self, name: &str, cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "sessions" => self.sessions_text(cx),
            "count" => self.sessions.len().to_string(),
            "stats" => {
                let mut s = String::new();
                for n in COUNTERS {
                    let _ = writeln!(s, "{} {}", n, self.stats.get(n).unwrap_or(0));
                }
                s
            }
            _ => self.stats.get(name)?.to_string(),
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        if name != "kill" {
            return None;
        }
        let Ok(sid) = value.trim().parse::<u16>() else {
            return Some(Err(format!(
                "expected a session id, not '{}'",
                value.trim()
            )));
        };
        if !self.sessions.contains_key(&sid) {
            return Some(Err(format!("no session {}", sid)));
        }
        self.remove(sid, true, cx);
        self.rearm(cx);
        Some(Ok(()))
    }

    fn take_state(&mut self, old: &mut dyn Element, cx: &Ctx) {
        let Some(o) = old
            .as_any_mut()
            .and_then(|a| a.downcast_mut::<PPPoEServer>())
        else {
            return;
        };
        self.sessions = core::mem::take(&mut o.sessions);
        self.by_ip = core::mem::take(&mut o.by_ip);
        self.next_id = o.next_id;
        self.secret = o.secret;
        self.rearm(cx);
    }

    crate::element_any!();
}
