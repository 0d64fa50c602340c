//! AggregateIP: sets the aggregate annotation from a field of the IP
//! header, the transport header or the payload.

use crate::packet::AGGREGATE_ANNO_OFFSET;
use crate::prelude::*;
use alloc::format;
use click_lang::args::RawString;

/// Click's pseudo-protocols for field headers.
const TCP_OR_UDP: u32 = 0x100;
const TRANSP: u32 = 0x101;
const PAYLOAD: u32 = 0x102;

/// A field: header (0 = IP, an IP protocol, or a pseudo-protocol), bit
/// offset and bit length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct IPField {
    pub proto: u32,
    pub bit_offset: u32,
    pub bit_length: u32,
}

type Named = (&'static str, u32, u32);

const IP_FIELDS: &[Named] = &[
    ("df", 6 * 8 + 1, 1),
    ("dport", 16, 16),
    ("dscp", 8, 6),
    ("dst", 16 * 8, 32),
    ("ecn", 8 + 6, 2),
    ("fragoff", 6 * 8 + 3, 13),
    ("hl", 4, 4),
    ("id", 4 * 8, 16),
    ("len", 2 * 8, 16),
    ("mf", 6 * 8 + 2, 1),
    ("off", 6 * 8, 16),
    ("proto", 9 * 8, 8),
    ("rf", 6 * 8, 1),
    ("sport", 0, 16),
    ("src", 12 * 8, 32),
    ("sum", 10 * 8, 16),
    ("tos", 8, 8),
    ("ttl", 8 * 8, 8),
    ("vers", 0, 4),
];
const UDP_FIELDS: &[Named] = &[
    ("dport", 16, 16),
    ("len", 32, 16),
    ("sport", 0, 16),
    ("sum", 48, 16),
];
const TCP_FIELDS: &[Named] = &[
    ("ack", 13 * 8 + 3, 1),
    ("ackno", 64, 32),
    ("dport", 16, 16),
    ("fin", 13 * 8 + 7, 1),
    ("flags", 13 * 8, 8),
    ("hl", 12 * 8, 4),
    ("psh", 13 * 8 + 4, 1),
    ("push", 13 * 8 + 4, 1),
    ("rst", 13 * 8 + 5, 1),
    ("seq", 32, 32),
    ("seqno", 32, 32),
    ("sport", 0, 16),
    ("sum", 16 * 8, 16),
    ("syn", 13 * 8 + 6, 1),
    ("urg", 13 * 8 + 2, 1),
    ("urp", 18 * 8, 16),
    ("win", 14 * 8, 16),
];
const ICMP_FIELDS: &[Named] = &[("code", 8, 8), ("sum", 16, 16), ("type", 0, 8)];
const TCP_OR_UDP_FIELDS: &[Named] = &[("dport", 16, 16), ("sport", 0, 16)];

/// The named fields of a header, with the header their names mean
/// (IP's `sport` and `dport` are TCP-or-UDP fields).
fn names(header: u32) -> &'static [Named] {
    match header {
        0 => IP_FIELDS,
        1 => ICMP_FIELDS,
        6 => TCP_FIELDS,
        17 => UDP_FIELDS,
        TCP_OR_UDP => TCP_OR_UDP_FIELDS,
        _ => &[],
    }
}

fn named_proto(header: u32, name: &str) -> u32 {
    if header == 0 && (name == "sport" || name == "dport") {
        TCP_OR_UDP
    } else {
        header
    }
}

fn proto_by_name(w: &str) -> Option<u32> {
    Some(match w {
        "icmp" => 1,
        "igmp" => 2,
        "ipip" => 4,
        "tcp" => 6,
        "udp" => 17,
        "dccp" => 33,
        "gre" => 47,
        "sctp" => 132,
        "tcpudp" => TCP_OR_UDP,
        "transp" => TRANSP,
        "payload" | "data" => PAYLOAD,
        _ => return None,
    })
}

fn proto_name(p: u32) -> Option<&'static str> {
    Some(match p {
        1 => "icmp",
        2 => "igmp",
        4 => "ipip",
        6 => "tcp",
        17 => "udp",
        33 => "dccp",
        47 => "gre",
        132 => "sctp",
        TCP_OR_UDP => "tcpudp",
        TRANSP => "transp",
        PAYLOAD => "payload",
        _ => return None,
    })
}

const E_SYNTAX: &str = "expected 'HEADER [NAME] [{OFFSET:LENGTH}] [/PREFIX] [& MASK]'";
const E_OFFSET: &str = "bad offset or length in TCP/IP field";
const E_MASK: &str = "bad prefix or mask in TCP/IP field";

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn space(&mut self) {
        while self.s.get(self.i).is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.space();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    /// Click's cp_integer: decimal, 0x hex, 0 octal.
    fn num(&mut self) -> Option<u64> {
        self.space();
        let rest = &self.s[self.i..];
        let (radix, skip) = if rest.len() > 2 && rest[0] == b'0' && (rest[1] | 0x20) == b'x' {
            (16, 2)
        } else if rest.len() > 1 && rest[0] == b'0' {
            (8, 1)
        } else {
            (10, 0)
        };
        let digits = rest[skip..]
            .iter()
            .take_while(|c| (**c as char).is_digit(radix))
            .count();
        if digits == 0 {
            if skip == 1 {
                self.i += 1;
                return Some(0);
            }
            return None;
        }
        let t = core::str::from_utf8(&rest[skip..skip + digits]).ok()?;
        let v = u64::from_str_radix(t, radix).ok()?;
        self.i += skip + digits;
        Some(v)
    }
    fn word(&mut self, delims: &[u8]) -> &str {
        let st = self.i;
        while self
            .s
            .get(self.i)
            .is_some_and(|c| !c.is_ascii_whitespace() && !delims.contains(c))
        {
            self.i += 1;
        }
        core::str::from_utf8(&self.s[st..self.i]).unwrap_or("")
    }
}

impl IPField {
    /// Parses Click's field syntax (`ip src/8`, `ip[8:2] & 0x3F0`,
    /// `tcp flags`, `transp{4-7}`); the whole string must be used.
    pub fn parse(text: &str) -> Result<IPField, String> {
        let mut c = Cursor {
            s: text.as_bytes(),
            i: 0,
        };
        // the header
        let header;
        let rest = &c.s[c.i..];
        let ip_word = rest.starts_with(b"ip")
            && !rest
                .get(2)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
        if ip_word {
            c.i += 2;
            let save = c.i;
            c.space();
            if c.i > save && c.s[c.i..].starts_with(b"proto") {
                c.i += 5;
                match c.num() {
                    Some(n) if n <= 0x1FF => header = n as u32,
                    _ => {
                        c.i = save;
                        header = 0;
                    }
                }
            } else {
                c.i = save;
                header = 0;
            }
        } else {
            let w = c.word(&[]);
            header = proto_by_name(w).ok_or(E_SYNTAX)?;
        }
        // a field name
        let save = c.i;
        c.space();
        let w = c.word(b"/[{&");
        let mut field = names(header)
            .iter()
            .find(|n| n.0 == w && !w.is_empty())
            .map(|n| IPField {
                proto: named_proto(header, n.0),
                bit_offset: n.1,
                bit_length: n.2,
            });
        if field.is_none() {
            c.i = save;
        }
        // an offset and length
        let save = c.i;
        let mut lim: Option<(i64, i64)> = None;
        for (open, close, bits) in [(b'[', b']', 8i64), (b'{', b'}', 1)] {
            if c.eat(open) {
                let a = c.num().ok_or(E_SYNTAX)? as i64;
                let (off, len) = if c.eat(b':') {
                    (a, c.num().ok_or(E_SYNTAX)? as i64)
                } else if c.eat(b'-') {
                    let b = c.num().ok_or(E_SYNTAX)? as i64;
                    (a, b - a + 1)
                } else {
                    (a, 1)
                };
                if !c.eat(close) {
                    return Err(E_SYNTAX.into());
                }
                lim = Some((off * bits, len * bits));
                break;
            }
        }
        if lim.is_none() {
            c.i = save;
        }
        field = match (field, lim) {
            (None, None) => return Err(E_SYNTAX.into()),
            (_, Some((_, len))) if len <= 0 => return Err(E_OFFSET.into()),
            (Some(f), Some((off, len))) => {
                if off >= i64::from(f.bit_length) || off + len > i64::from(f.bit_length) {
                    return Err(E_OFFSET.into());
                }
                Some(IPField {
                    proto: f.proto,
                    bit_offset: f.bit_offset + off as u32,
                    bit_length: len as u32,
                })
            }
            (None, Some((off, len))) => {
                if off > 0x1FFF * 8 || len > 64 * 8 {
                    return Err(E_OFFSET.into());
                }
                Some(IPField {
                    proto: header,
                    bit_offset: off as u32,
                    bit_length: len as u32,
                })
            }
            (f, None) => f,
        };
        let mut f = field.ok_or(E_SYNTAX)?;
        // a prefix
        let save = c.i;
        if c.eat(b'/') {
            let n = c.num().ok_or(E_MASK)?;
            if n == 0 || n > u64::from(f.bit_length) {
                return Err(E_MASK.into());
            }
            f.bit_length = n as u32;
        } else {
            c.i = save;
        }
        // a mask
        let save = c.i;
        if c.eat(b'&') {
            let m = c.num().ok_or(E_MASK)?;
            if m == 0 || m > u64::from(u32::MAX) {
                return Err(E_MASK.into());
            }
            let low = m.trailing_zeros();
            let top = m + (1u64 << low);
            if top & (top - 1) != 0 || top.trailing_zeros() > f.bit_length {
                return Err(E_MASK.into());
            }
            let msb = top.trailing_zeros();
            f = IPField {
                proto: f.proto,
                bit_offset: f.bit_offset + f.bit_length - msb,
                bit_length: msb - low,
            };
        } else {
            c.i = save;
        }
        if c.i != c.s.len() {
            return Err("garbage after field specification".into());
        }
        Ok(f)
    }

    /// Click's `IPField::unparse`.
    pub fn unparse(&self) -> String {
        let mut s = match self.proto {
            0 => String::from("ip"),
            p => match proto_name(p) {
                Some(n) => n.into(),
                None => format!("ip proto {}", p),
            },
        };
        let table = names(if self.proto == TCP_OR_UDP {
            0
        } else {
            self.proto
        });
        let lookup = |off: u32, len: u32| {
            table
                .iter()
                .find(|n| named_proto(self.proto, n.0) == self.proto && n.1 == off && n.2 == len)
                .map(|n| n.0)
        };
        if let Some(n) = lookup(self.bit_offset, self.bit_length) {
            return format!("{} {}", s, n);
        }
        let (mut bo, bl) = (self.bit_offset, self.bit_length);
        let mut container = 8;
        while container < 64 {
            if bo / container == (bo + bl - 1) / container {
                if let Some(n) = lookup(bo & !(container - 1), container) {
                    s = format!("{} {}", s, n);
                    bo &= container - 1;
                    if bo == 0 {
                        return format!("{}/{}", s, bl);
                    }
                    break;
                }
            }
            container *= 2;
        }
        if bo % 8 == 0 && bl == 8 {
            format!("{}[{}]", s, bo / 8)
        } else if bo % 8 == 0 && bl % 8 == 0 {
            format!("{}[{}:{}]", s, bo / 8, bl / 8)
        } else if bl == 1 {
            format!("{}{{{}}}", s, bo)
        } else {
            format!("{}{{{}:{}}}", s, bo, bl)
        }
    }
}

/// `AggregateIP(FIELD [, KEYWORDS])`.
#[derive(Default)]
pub struct AggregateIP {
    field: IPField,
    incremental: bool,
    offset: usize,
    shift: u32,
    mask: u32,
    bad: u64,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "AggregateIP",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "analysis",
    signature: "AggregateIP(FIELD [, KEYWORDS])",
    summary: "Sets the aggregate annotation from an IP packet field.",
    description: "Sets the aggregate annotation of every passing packet to a field of its IP \
header, transport header or payload, chosen by FIELD, a value in host byte order.\n\n\
FIELD names a header field (`ip tos`, `ip src`, `tcp flags`, `udp dport`, `icmp type`, `sport`, \
...; IP's are vers, hl, tos, dscp, ecn, len, id, off, rf, df, mf, fragoff, ttl, proto, sum, \
src, dst, and sport/dport for TCP or UDP; TCP's sport, dport, seq(no), ack(no), hl, flags, fin, \
syn, rst, psh/push, ack, urg, win, sum, urp; UDP's sport, dport, len, sum; ICMP's type, code, \
sum), or is an offset-length form: a header (`ip`, `transp`, `payload`/`data`, `tcp`, `udp`, \
`icmp`, `ip proto N`) then `[OFFSET:LENGTH]`, `[OFFSET1-OFFSET2]` or `[OFFSET]` in bytes, or \
the same in braces in bits. A named field can be narrowed with a bracket form relative to it. \
Either may end with `/N` (the top N bits) or `& MASK` (one contiguous run of 1 bits). The \
field must lie within one aligned 32-bit word and be at most 32 bits.\n\n\
Packets lacking the field (too short; a later fragment; the wrong protocol; no network header) \
go to output 1, or are dropped without one. The packet must have a network header annotation, \
and a transport header one for transport and payload fields. As in Click, the aligned 32-bit \
word holding the field must lie within the packet.\n\n\
Keyword arguments:\n\n\
- `INCREMENTAL` (boolean): the new aggregate is the old one times 2^N plus the field (N bits). \
Not with 32-bit fields. Default false.\n\
- `UNSHIFT_IP_ADDR` (boolean): for a field inside the IP source or destination address, keep \
its bits where they are in the address (`ip src/8` of 1.0.0.0 gives 16777216, not 1). Default \
false.",
    ports: "one input; output 0 for annotated packets, optional push output 1 for the rest",
    handlers: &[
        HandlerDoc {
            name: "header",
            mode: HandlerMode::Read,
            text: "The field's header: an IP protocol name or number (0 for the IP header).",
        },
        HandlerDoc {
            name: "bit_offset",
            mode: HandlerMode::Read,
            text: "The field's offset into its header, in bits.",
        },
        HandlerDoc {
            name: "bit_length",
            mode: HandlerMode::Read,
            text: "The field's length in bits.",
        },
        HandlerDoc {
            name: "field",
            mode: HandlerMode::Read,
            text: "The field, as Click writes it.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(AggregateIP::default()),
};

impl AggregateIP {
    fn handle(&mut self, mut p: Packet) -> Result<Packet, Packet> {
        let (ip_first, ip_p) = match p.ip_header() {
            Some(ip) => (ip.is_first_fragment(), u32::from(ip.protocol())),
            None => return Err(p),
        };
        let (Some(nh), th) = (p.network_header_offset(), p.transport_header_offset()) else {
            return Err(p);
        };
        let len = p.len() as isize;
        let th_or_len = th.unwrap_or(len);
        let base = match self.field.proto {
            0 => nh,
            TCP_OR_UDP if ip_first && (ip_p == 6 || ip_p == 17) => th_or_len,
            TRANSP if ip_first => th_or_len,
            PAYLOAD if ip_first => match (ip_p, th) {
                (6, Some(t)) if t + 20 <= len => {
                    let off = p.data().get(t as usize + 12).copied().unwrap_or(0) >> 4;
                    t + isize::from(off) * 4
                }
                (17, Some(t)) => t + 8,
                _ => len,
            },
            TCP_OR_UDP | TRANSP | PAYLOAD => len,
            proto if ip_first && ip_p == proto => th_or_len,
            _ => len,
        };
        let off = base + self.offset as isize;
        let Some(w) = usize::try_from(off)
            .ok()
            .and_then(|o| p.data().get(o..o + 4))
        else {
            return Err(p);
        };
        let v = (u32::from_be_bytes([w[0], w[1], w[2], w[3]]) >> self.shift) & self.mask;
        let agg = if self.incremental {
            let old = p.anno().u32_at(AGGREGATE_ANNO_OFFSET);
            (old << self.field.bit_length).wrapping_add(v)
        } else {
            v
        };
        p.anno_mut().set_u32_at(AGGREGATE_ANNO_OFFSET, agg);
        Ok(p)
    }
}

impl Element for AggregateIP {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let field: RawString = a.read_mp("FIELD")?;
        let incremental = a.read::<bool>("INCREMENTAL")?.unwrap_or(false);
        let unshift = a.read::<bool>("UNSHIFT_IP_ADDR")?.unwrap_or(false);
        a.complete()?;
        let text = click_lang::args::unquote(field.0.trim());
        let f = IPField::parse(text.trim())?;
        let right = f.bit_offset + f.bit_length - 1;
        if f.bit_offset / 32 != right / 32 {
            return Err("field specification does not fit within a single word".into());
        }
        if f.bit_length > 32 {
            return Err("field length too large, max 32".into());
        }
        if f.bit_length == 32 && incremental {
            return Err("'INCREMENTAL' is incompatible with field length 32".into());
        }
        let mut mask = if f.bit_length == 32 {
            u32::MAX
        } else {
            (1u32 << f.bit_length) - 1
        };
        let shift = if !unshift || f.proto != 0 || f.bit_offset < 12 * 8 || f.bit_offset >= 20 * 8 {
            31 - right % 32
        } else {
            mask <<= 31 - right % 32;
            0
        };
        *self = AggregateIP {
            field: f,
            incremental,
            offset: (f.bit_offset / 32 * 4) as usize,
            shift,
            mask,
            bad: 0,
        };
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    fn simple_action(&mut self, p: Packet, cx: &Ctx) -> Option<Packet> {
        match self.handle(p) {
            Ok(p) => Some(p),
            Err(p) => {
                self.bad += 1;
                cx.push(1, p);
                None
            }
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        let f = self.field;
        Some(Ok(match name {
            "header" => match proto_name(f.proto) {
                Some(n) => n.into(),
                None => format!("{}", f.proto),
            },
            "bit_offset" => format!("{}", f.bit_offset),
            "bit_length" => format!("{}", f.bit_length),
            "field" => f.unparse(),
            _ => return None,
        }))
    }

    crate::element_any!();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(s: &str) -> (u32, u32, u32) {
        let x = IPField::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        (x.proto, x.bit_offset, x.bit_length)
    }

    #[test]
    fn equivalent_forms() {
        for s in [
            "ip src/8",
            "ip src & 0xFF000000",
            "ip[12]",
            "ip[12:1]",
            "ip{96:8}",
            "ip{96-103}",
            "ip [12]",
        ] {
            assert_eq!(f(s), (0, 96, 8), "{s}");
        }
        assert_eq!(f("tcp flags"), (6, 104, 8));
        assert_eq!(f("ip sport"), (TCP_OR_UDP, 0, 16));
        assert_eq!(f("udp dport"), (17, 16, 16));
        assert_eq!(f("ip proto 6 [13]"), (6, 104, 8));
        assert_eq!(f("transp [2:2]"), (TRANSP, 16, 16));
        assert_eq!(f("ip[8:2] & 0x3F0"), (0, 70, 6));
        assert_eq!(f("ip dst[1]"), (0, 136, 8));
        assert!(IPField::parse("ipx").is_err());
        assert!(IPField::parse("ip src/33").is_err());
        assert!(IPField::parse("ip src & 0x0F0F").is_err());
        assert!(IPField::parse("ip[0:0]").is_err());
        assert!(IPField::parse("ip src junk").is_err());
    }

    #[test]
    fn unparse() {
        let u = |s: &str| IPField::parse(s).unwrap().unparse();
        assert_eq!(u("ip[12:4]"), "ip src");
        assert_eq!(u("ip src/8"), "ip src/8");
        assert_eq!(u("ip[1]"), "ip tos");
        assert_eq!(u("tcp [13]"), "tcp flags");
        assert_eq!(u("transp [2:2]"), "transp[2:2]");
        assert_eq!(u("ip{3}"), "ip{3}");
    }
}
