//! Click's `IPFilter`/`IPClassifier` pattern language (tcpdump-like).
//!
//! The parser follows Click's `IPFilter::Parser` closely: a pattern is
//! `expr ::= orexpr [? expr : expr]`, `orexpr ::= term (or|'||' term)*`,
//! `term ::= factor ([and|&&] factor)*` (juxtaposition means "and"),
//! `factor ::= (not|!) factor | '(' expr ')' | test`, and a test is
//! `QUALIFIERS [ '[' POS[:LEN] ']' ] [& MASK] [RELOP] [DATA]`. A test that
//! gives only data (`80`, `10.0.0.1`, `www`, `syn`) takes its type,
//! direction and transport protocol from the previous test (Click's
//! `prev_prim`), so `src port 80 or 443` means
//! `src port 80 or src port 443`.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::expr::Expr;
use click_lang::ArgContext;

const UNKNOWN: i32 = -1000;
const PROTO_ICMP: i32 = 1;
const PROTO_TCP: i32 = 6;
const PROTO_UDP: i32 = 17;
const PROTO_DCCP: i32 = 33;
const PROTO_TCP_OR_UDP: i32 = 0x100;
const PROTO_TRANSP: i32 = 0x101;

/// A header field: bit offset and width within the IP header (`proto ==
/// None`) or the transport header of the given protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Field {
    proto: Option<i32>,
    bitoff: u32,
    nbits: u32,
}

const fn ipfield(bitoff: u32, nbits: u32) -> Field {
    Field {
        proto: None,
        bitoff,
        nbits,
    }
}

const F_VERSION: Field = ipfield(0, 4);
const F_HL: Field = ipfield(4, 4);
const F_TOS: Field = ipfield(8, 8);
const F_DSCP: Field = ipfield(8, 6);
const F_ECN: Field = ipfield(14, 2);
const F_IPLEN: Field = ipfield(16, 16);
const F_ID: Field = ipfield(32, 16);
const F_TTL: Field = ipfield(64, 8);
const F_TCP_WIN: Field = Field {
    proto: Some(PROTO_TCP),
    bitoff: 14 * 8,
    nbits: 16,
};
const F_ICMP_TYPE: Field = Field {
    proto: Some(PROTO_ICMP),
    bitoff: 0,
    nbits: 8,
};

/// Primitive types (`_type`) and data kinds (`_data`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum T {
    None,
    Int,
    Host,
    Net,
    Proto,
    Port,
    TcpOpt,
    IpFrag,
    IpUnfrag,
    IpEct,
    IpCe,
    /// An Ethernet address (Click's `TYPE_ETHER`).
    Ether,
    Field(Field),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Gt,
    Lt,
}

const SD_SRC: u8 = 1;
const SD_DST: u8 = 2;
const SD_AND: u8 = 3;
const SD_OR: u8 = 4;

// ---------------------------------------------------------------------------
// Name databases

enum Word {
    Syntax,
    Type(T),
}

fn type_word(w: &str) -> Option<Word> {
    Some(match w {
        "ce" => Word::Type(T::IpCe),
        "dest" | "dst" | "ether" | "ip" | "not" | "src" => Word::Syntax,
        "dscp" => Word::Type(T::Field(F_DSCP)),
        "ect" => Word::Type(T::IpEct),
        // Extension: the two ECN bits as a plain field (`ip ecn 3`).
        "ecn" => Word::Type(T::Field(F_ECN)),
        "frag" => Word::Type(T::IpFrag),
        "hl" => Word::Type(T::Field(F_HL)),
        "host" => Word::Type(T::Host),
        "id" => Word::Type(T::Field(F_ID)),
        "len" => Word::Type(T::Field(F_IPLEN)),
        "net" => Word::Type(T::Net),
        "opt" => Word::Type(T::TcpOpt),
        "port" => Word::Type(T::Port),
        "proto" => Word::Type(T::Proto),
        "tos" => Word::Type(T::Field(F_TOS)),
        "ttl" => Word::Type(T::Field(F_TTL)),
        "type" => Word::Type(T::Field(F_ICMP_TYPE)),
        "unfrag" => Word::Type(T::IpUnfrag),
        "vers" => Word::Type(T::Field(F_VERSION)),
        "win" => Word::Type(T::Field(F_TCP_WIN)),
        _ => return None,
    })
}

fn proto_name(w: &str) -> Option<i32> {
    Some(match w {
        "icmp" => PROTO_ICMP,
        "igmp" => 2,
        "ipip" => 4,
        "tcp" => PROTO_TCP,
        "udp" => PROTO_UDP,
        "dccp" => PROTO_DCCP,
        "gre" => 47,
        "esp" => 50,
        "ah" => 51,
        "sctp" => 132,
        "tcpudp" => PROTO_TCP_OR_UDP,
        "transp" => PROTO_TRANSP,
        _ => return None,
    })
}

fn tcp_opt_name(w: &str) -> Option<u32> {
    Some(match w {
        "fin" => 0x01,
        "syn" => 0x02,
        "rst" => 0x04,
        "psh" => 0x08,
        "ack" => 0x10,
        "urg" => 0x20,
        _ => return None,
    })
}

fn icmp_type_name(w: &str) -> Option<u32> {
    Some(match w {
        "echo-reply" => 0,
        "unreachable" => 3,
        "sourcequench" => 4,
        "redirect" => 5,
        "echo" => 8,
        "routeradvert" => 9,
        "routersolicit" => 10,
        "timeexceeded" => 11,
        "parameterproblem" => 12,
        "timestamp" => 13,
        "timestamp-reply" => 14,
        "inforeq" => 15,
        "inforeq-reply" => 16,
        "maskreq" => 17,
        "maskreq-reply" => 18,
        _ => return None,
    })
}

enum Lookup {
    /// Not a known word (or a syntax word such as `src`).
    NotFound,
    /// A type word (`host`, `port`, ...).
    Type(T),
    /// A value: its kind and number.
    Found(T, u32),
}

fn unparse_transp_proto(p: i32) -> String {
    match p {
        UNKNOWN => String::new(),
        PROTO_ICMP => "icmp".into(),
        2 => "igmp".into(),
        4 => "ipip".into(),
        PROTO_TCP => "tcp".into(),
        PROTO_UDP => "udp".into(),
        PROTO_TCP_OR_UDP => "tcpudp".into(),
        PROTO_TRANSP => "transp".into(),
        _ => format!("ip proto {p}"),
    }
}

fn unparse_type(srcdst: u8, t: T) -> String {
    let mut s = String::from(match srcdst {
        SD_SRC => "src ",
        SD_DST => "dst ",
        SD_OR => "src or dst ",
        SD_AND => "src and dst ",
        _ => "",
    });
    let name: String = match t {
        T::None => "<none>".into(),
        T::Int => "<int>".into(),
        T::Host => "ip host".into(),
        T::Proto => "proto".into(),
        T::IpFrag => "ip frag".into(),
        T::Port => "port".into(),
        T::TcpOpt => "tcp opt".into(),
        T::Net => "ip net".into(),
        T::IpUnfrag => "ip unfrag".into(),
        T::IpEct => "ip ect".into(),
        T::IpCe => "ip ce".into(),
        T::Ether => "ether host".into(),
        T::Field(f) => match f {
            F_IPLEN => "ip len".into(),
            F_ID => "ip id".into(),
            F_VERSION => "ip vers".into(),
            F_HL => "ip hl".into(),
            F_TOS => "ip tos".into(),
            F_DSCP => "ip dscp".into(),
            F_ECN => "ip ecn".into(),
            F_TTL => "ip ttl".into(),
            F_TCP_WIN => "tcp win".into(),
            F_ICMP_TYPE => "icmp type".into(),
            Field { proto: Some(p), .. } => format!("{}[...]", unparse_transp_proto(p)),
            Field { proto: None, .. } => "ip[...]".into(),
        },
    };
    s.push_str(&name);
    s
}

fn unparse_word(t: T, proto: i32, word: &str) -> String {
    let mut s = String::new();
    if t != T::None {
        s.push_str(&unparse_type(0, t));
        s.push(' ');
    }
    let tr = unparse_transp_proto(proto);
    if !tr.is_empty() {
        s.push_str(&tr);
        s.push(' ');
    }
    s.push_str(word);
    s
}

/// Click's `IPFilter::lookup`. `ty` is the primitive's type so far
/// (`T::None` = unconstrained, in which case type words win).
fn lookup(word: &str, ty: T, proto: i32, cx: &ArgContext) -> Result<Lookup, String> {
    if ty == T::None {
        match type_word(word) {
            Some(Word::Syntax) => return Ok(Lookup::NotFound),
            Some(Word::Type(t)) => return Ok(Lookup::Type(t)),
            None => {}
        }
    }
    let icmp_type = T::Field(F_ICMP_TYPE);
    let got: [(Option<u32>, T); 5] = [
        (proto_name(word).map(|p| p as u32), T::Proto),
        (cx.port_name(word, 6).map(u32::from), T::Port),
        (cx.port_name(word, 17).map(u32::from), T::Port),
        (tcp_opt_name(word), T::TcpOpt),
        (icmp_type_name(word), icmp_type),
    ];
    if got.iter().all(|g| g.0.is_none()) {
        return Ok(Lookup::NotFound);
    }
    let any_ty = ty == T::None;
    // DCCP ports (an extension) use the TCP names
    let tcpish =
        proto == UNKNOWN || proto == PROTO_TCP || proto == PROTO_TCP_OR_UDP || proto == PROTO_DCCP;
    let udpish = proto == UNKNOWN || proto == PROTO_UDP || proto == PROTO_TCP_OR_UDP;
    let mut ok = [
        got[0].0.is_some() && (any_ty || ty == T::Proto),
        got[1].0.is_some() && (any_ty || ty == T::Port) && tcpish,
        got[2].0.is_some() && (any_ty || ty == T::Port) && udpish,
        got[3].0.is_some()
            && (any_ty || ty == T::TcpOpt)
            && (proto == UNKNOWN || proto == PROTO_TCP || proto == PROTO_TCP_OR_UDP),
        got[4].0.is_some()
            && (any_ty || ty == icmp_type)
            && (proto == UNKNOWN || proto == PROTO_ICMP),
    ];
    // one of the TCP and UDP names when they mean the same port
    if ok[1] && ok[2] && got[1].0 == got[2].0 {
        ok[2] = false;
    }
    let n = ok.iter().filter(|x| **x).count();
    if n == 1 {
        let i = ok.iter().position(|x| *x).unwrap_or(0);
        return Ok(Lookup::Found(got[i].1, got[i].0.unwrap_or(0)));
    }
    let tries: Vec<String> = got
        .iter()
        .filter(|g| g.0.is_some())
        .map(|g| format!("'{}'", unparse_word(g.1, proto, word)))
        .collect();
    Err(format!(
        "'{}' is {}; try {}",
        unparse_word(ty, proto, word),
        if n > 1 { "ambiguous" } else { "meaningless" },
        tries.join(", ")
    ))
}

// ---------------------------------------------------------------------------
// Lexical helpers

/// Click's `separate_text`.
fn tokenize(text: &str) -> Vec<&str> {
    let s = text.as_bytes();
    let len = s.len();
    let mut words = Vec::new();
    let mut pos = 0;
    let word_char =
        |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'/' | b'@' | b'_' | b':');
    while pos < len {
        while pos < len && s[pos].is_ascii_whitespace() {
            pos += 1;
        }
        if pos >= len {
            break;
        }
        let c = s[pos];
        let n = match c {
            b'&' | b'|' if pos + 1 < len && s[pos + 1] == c => 2,
            b'<' | b'>' | b'!' | b'=' if pos + 1 < len && s[pos + 1] == b'=' => 2,
            b'&' | b'|' | b'<' | b'>' | b'!' | b'=' | b'(' | b')' | b'[' | b']' | b',' | b';'
            | b'?' => 1,
            _ => {
                let mut e = pos;
                while e < len && word_char(s[e]) {
                    e += 1;
                }
                if e == pos {
                    // Skip a whole (possibly multi-byte) character.
                    let mut e = pos + 1;
                    while e < len && !text.is_char_boundary(e) {
                        e += 1;
                    }
                    e - pos
                } else {
                    e - pos
                }
            }
        };
        words.push(&text[pos..pos + n]);
        pos += n;
    }
    words
}

/// Click's integer syntax: decimal, `0x` hex, leading-`0` octal, optional
/// sign.
fn parse_int(w: &str) -> Option<i64> {
    let (neg, body) = match w.as_bytes().first()? {
        b'-' => (true, &w[1..]),
        b'+' => (false, &w[1..]),
        _ => (false, w),
    };
    if body.is_empty() {
        return None;
    }
    let (radix, digits) =
        if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            (16, h)
        } else if body.len() > 1 && body.starts_with('0') {
            (8, &body[1..])
        } else {
            (10, body)
        };
    if digits.is_empty() || digits.len() > 12 {
        return None;
    }
    let v = i64::from_str_radix(digits, radix).ok()?;
    if v > u32::MAX as i64 {
        return None;
    }
    Some(if neg { -v } else { v })
}

fn parse_octets(w: &str, max: usize) -> Option<([u8; 4], usize)> {
    let mut out = [0u8; 4];
    let mut n = 0;
    for part in w.split('.') {
        if n >= max
            || part.is_empty()
            || part.len() > 3
            || !part.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let v: u32 = part.parse().ok()?;
        if v > 255 {
            return None;
        }
        out[n] = v as u8;
        n += 1;
    }
    Some((out, n))
}

/// A dotted-quad IPv4 address, as a big-endian word.
fn parse_ip(w: &str) -> Option<u32> {
    match parse_octets(w, 4)? {
        (o, 4) => Some(u32::from_be_bytes(o)),
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Primitives

#[derive(Clone, Copy, Debug)]
struct Prim {
    ty: T,
    data: T,
    op: Op,
    neg: bool,
    srcdst: u8,
    transp: i32,
    u: u32,
    mask: u32,
    /// An Ethernet address value and mask (`T::Ether`).
    eth: [u8; 6],
    eth_mask: [u8; 6],
}

impl Default for Prim {
    fn default() -> Prim {
        Prim {
            ty: T::None,
            data: T::None,
            op: Op::Eq,
            neg: false,
            srcdst: 0,
            transp: UNKNOWN,
            u: 0,
            mask: 0,
            eth: [0; 6],
            eth_mask: [0; 6],
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum MaskKind {
    None,
    Int,
    Host,
    Ether,
}

/// The header a primitive tests (Click's `header`: 0, `'i'`, `'e'`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Header {
    /// Not given: IP, unless the value is an Ethernet address.
    Unset,
    Ip,
    Ether,
}

impl Prim {
    fn set_type(&mut self, t: T) -> Result<(), String> {
        if self.ty != T::None {
            return Err("type specified twice".into());
        }
        self.ty = t;
        Ok(())
    }

    fn set_srcdst(&mut self, sd: u8) -> Result<(), String> {
        if self.srcdst != 0 {
            return Err("'src' or 'dst' specified twice".into());
        }
        self.srcdst = sd;
        Ok(())
    }

    fn set_transp_proto(&mut self, p: i32) -> Result<(), String> {
        if self.transp != UNKNOWN && self.transp != p {
            return Err("transport protocol specified twice".into());
        }
        self.transp = p;
        Ok(())
    }

    fn unparse_op(&self) -> &'static str {
        match (self.op, self.neg) {
            (Op::Gt, false) => ">",
            (Op::Gt, true) => "<=",
            (Op::Lt, false) => "<",
            (Op::Lt, true) => ">=",
            (Op::Eq, false) => "=",
            (Op::Eq, true) => "!=",
        }
    }

    fn type_error(&self, msg: &str) -> String {
        format!("'{}': {}", unparse_type(self.srcdst, self.ty), msg)
    }

    /// Click's `Primitive::set_mask` (always with shift 0).
    fn set_mask(
        &mut self,
        full: u32,
        provided: u32,
        warnings: &mut Vec<String>,
    ) -> Result<(), String> {
        let data = self.u;
        let this_mask = if provided != 0 { provided } else { full };
        if this_mask & full != this_mask {
            return Err(format!("mask 0x{provided:X} out of range (0-0x{full:X})"));
        }
        if self.op == Op::Gt || self.op == Op::Lt {
            if (self.op == Op::Lt && (data == 0 || data > this_mask))
                || (self.op == Op::Gt && data >= this_mask)
            {
                let will_be = if self.op == Op::Lt && data > this_mask {
                    !self.neg
                } else {
                    self.neg
                };
                warnings.push(format!(
                    "relation '{} {}' is always {} (range 0-{})",
                    self.unparse_op(),
                    data,
                    will_be,
                    this_mask
                ));
                self.u = 0;
                self.mask = 0;
                self.neg = !will_be;
                self.op = Op::Eq;
                return Ok(());
            }
            if self.op == Op::Lt {
                // x < X  ==  !(x > X - 1)
                self.u -= 1;
                self.neg = !self.neg;
                self.op = Op::Gt;
            }
            self.mask = this_mask;
            if self.u & self.mask != self.u {
                // 'x & 5 > 2' == 'x & 5 > 1': fill in below the highest
                // value bit that the mask ignores.
                let missing = (self.u & full) & !self.mask;
                let add = u32::MAX
                    .checked_shr(missing.leading_zeros() + 1)
                    .unwrap_or(0);
                self.u = (self.u | add) & self.mask;
            }
            return Ok(());
        }
        if data > full {
            return Err(format!(
                "'{}': out of range, bound {}",
                unparse_type(self.srcdst, self.ty),
                full
            ));
        }
        self.u = data;
        self.mask = this_mask;
        Ok(())
    }

    /// Click's `Primitive::check`: resolves implicit types and validates.
    fn check(
        &mut self,
        prev: &Prim,
        header: Header,
        mask_kind: MaskKind,
        pmask: u32,
        warnings: &mut Vec<String>,
    ) -> Result<(), String> {
        let old_srcdst = self.srcdst;
        if self.ty == T::None {
            loop {
                match self.data {
                    T::Host | T::Net | T::TcpOpt | T::Ether => {
                        self.ty = self.data;
                        if self.srcdst == 0 {
                            self.srcdst = prev.srcdst;
                        }
                    }
                    T::Proto => self.ty = T::Proto,
                    T::Port => {
                        self.ty = T::Port;
                        if self.srcdst == 0 {
                            self.srcdst = prev.srcdst;
                        }
                        if self.transp == UNKNOWN {
                            self.transp = prev.transp;
                        }
                    }
                    T::Int => {
                        if !matches!(prev.ty, T::Field(_) | T::Proto | T::Port) {
                            return Err("specify header field or 'port'".into());
                        }
                        self.data = prev.ty;
                        continue;
                    }
                    T::None => {
                        if self.transp != UNKNOWN {
                            self.ty = T::Proto;
                        } else {
                            return Err("partial directive".into());
                        }
                    }
                    T::Field(f) => {
                        self.ty = self.data;
                        if let Some(p) = f.proto {
                            if self.transp == UNKNOWN {
                                self.transp = p;
                            }
                        }
                    }
                    t => return Err(format!("unknown type '{}'", unparse_type(0, t))),
                }
                break;
            }
        }

        // the header can change the type (Click: `ether host ADDR`)
        let header = match header {
            Header::Unset if self.data == T::Ether => Header::Ether,
            Header::Unset => Header::Ip,
            h => h,
        };
        if header == Header::Ether && self.ty == T::Host {
            self.ty = T::Ether;
        }
        if header != Header::Ip && !matches!(self.ty, T::Host | T::Net | T::Ether) {
            return Err(self.type_error("ip only"));
        }

        let full_mask_ok = |p: &Prim| -> Result<(), String> {
            if matches!(mask_kind, MaskKind::Host | MaskKind::Ether) {
                Err(p.type_error("bad mask"))
            } else {
                Ok(())
            }
        };
        let provided = if mask_kind == MaskKind::None {
            0
        } else {
            pmask
        };

        match self.ty {
            T::Host | T::Net => {
                if header != Header::Ip || self.data != self.ty {
                    return Err(self.type_error("address missing"));
                }
                if self.op != Op::Eq {
                    return Err(self.type_error("operator not supported"));
                }
                if self.ty == T::Host {
                    self.mask = u32::MAX;
                }
                self.ty = T::Host;
                if mask_kind == MaskKind::Ether {
                    return Err(self.type_error("bad mask"));
                }
                if mask_kind != MaskKind::None {
                    self.mask = pmask;
                }
            }
            T::Ether => {
                if header != Header::Ether || self.data != T::Ether {
                    return Err(self.type_error("address missing"));
                }
                if self.op != Op::Eq {
                    return Err(self.type_error("operator not supported"));
                }
                // `eth_mask` holds the `& ETHERMASK` given, if any
                match mask_kind {
                    MaskKind::None => self.eth_mask = [0xFF; 6],
                    MaskKind::Ether => {}
                    _ => return Err(self.type_error("bad mask")),
                }
            }
            T::Proto => {
                if self.data == T::Int || self.data == T::Proto {
                    if self.transp != UNKNOWN && self.transp as i64 != self.u as i64 {
                        return Err(self.type_error("specified twice"));
                    }
                    self.data = T::None;
                } else if self.transp == UNKNOWN {
                    return Err(self.type_error("value missing"));
                } else {
                    self.u = self.transp as u32;
                }
                self.transp = UNKNOWN;
                if self.data != T::None {
                    return Err(self.type_error("value missing"));
                }
                if self.u == PROTO_TCP_OR_UDP as u32 || self.u == PROTO_TRANSP as u32 {
                    if self.op != Op::Eq || mask_kind != MaskKind::None {
                        return Err(format!(
                            "'{}': operator or mask not supported",
                            unparse_transp_proto(self.u as i32)
                        ));
                    }
                    self.mask = 0xFF;
                } else {
                    full_mask_ok(self)?;
                    self.set_mask(0xFF, provided, warnings)?;
                }
                if self.op == Op::Eq && self.mask == 0xFF && !self.neg {
                    self.transp = self.u as i32;
                }
            }
            T::Port => {
                if self.data == T::Int {
                    self.data = T::Port;
                }
                if self.data != T::Port {
                    return Err(self.type_error("value missing"));
                }
                if self.transp == UNKNOWN {
                    self.transp = PROTO_TCP_OR_UDP;
                } else if !matches!(
                    self.transp,
                    PROTO_TCP | PROTO_UDP | PROTO_TCP_OR_UDP | PROTO_DCCP
                ) {
                    return Err(format!("'port': bad protocol {}", self.transp));
                }
                full_mask_ok(self)?;
                self.set_mask(0xFFFF, provided, warnings)?;
            }
            T::TcpOpt => {
                if self.data == T::Int {
                    self.data = T::TcpOpt;
                }
                if self.data != T::TcpOpt {
                    return Err(self.type_error("value missing"));
                }
                if self.transp == UNKNOWN {
                    self.transp = PROTO_TCP;
                } else if self.transp != PROTO_TCP {
                    return Err(format!("'tcp opt': bad protocol {}", self.transp));
                }
                if self.op != Op::Eq || self.neg || mask_kind != MaskKind::None {
                    return Err(self.type_error("operator or mask not supported"));
                }
                if self.u > 255 {
                    return Err(format!("'tcp opt': value {} out of range", self.u as i32));
                }
                self.mask = self.u;
            }
            T::IpEct => {
                if self.data != T::None && self.data != T::Int {
                    return Err(self.type_error("value missing"));
                }
                if self.data == T::None {
                    self.u = 0;
                    self.neg = true;
                } else {
                    full_mask_ok(self)?;
                }
                self.set_mask(0x3, provided, warnings)?;
                self.ty = T::Field(F_TOS);
            }
            T::IpCe => {
                if self.data != T::None || mask_kind != MaskKind::None {
                    return Err(self.type_error("value not supported"));
                }
                self.mask = 3;
                self.u = 3;
                self.ty = T::Field(F_TOS);
            }
            T::IpFrag | T::IpUnfrag => {
                if self.data != T::None || mask_kind != MaskKind::None {
                    return Err(self.type_error("value not supported"));
                }
                self.mask = 1;
                if self.ty == T::IpUnfrag {
                    self.neg = true;
                    self.ty = T::IpFrag;
                }
            }
            T::Field(f) => {
                if self.data != T::Int && self.data != self.ty {
                    return Err(self.type_error("value missing"));
                }
                full_mask_ok(self)?;
                let full = if f.nbits >= 32 {
                    u32::MAX
                } else {
                    (1u32 << f.nbits) - 1
                };
                self.set_mask(full, provided, warnings)?;
            }
            T::None | T::Int => return Err("partial directive".into()),
        }

        if matches!(self.ty, T::Host | T::Port | T::Ether) {
            if self.srcdst == 0 {
                self.srcdst = SD_OR;
            }
        } else if old_srcdst != 0 {
            warnings.push(format!(
                "'{}': 'src' or 'dst' ignored",
                unparse_type(self.srcdst, self.ty)
            ));
        }
        Ok(())
    }

    /// `value (op) field`, for a field at word `off` shifted left `shift`.
    fn comparison(&self, transp: bool, off: u32, shift: u32, op_negate: bool) -> Expr {
        let mask = self.mask << shift;
        let u = (self.u & self.mask) << shift;
        let e = match self.op {
            Op::Eq => Expr::atom(transp, off, mask, u),
            Op::Gt | Op::Lt => greater(transp, off, mask, u),
        };
        if self.neg && op_negate {
            e.not_flip()
        } else {
            e
        }
    }

    fn srcdst_combine(&self, src: impl FnOnce() -> Expr, dst: impl FnOnce() -> Expr) -> Expr {
        let sd = self.srcdst;
        let mut v = Vec::new();
        if matches!(sd, SD_SRC | SD_AND | SD_OR) {
            v.push(src());
        }
        if matches!(sd, SD_DST | SD_AND | SD_OR) {
            v.push(dst());
        }
        let e = if let Some(e) = one_word(sd, &v) {
            e
        } else if sd == SD_OR {
            Expr::or(v)
        } else {
            Expr::and(v)
        };
        if self.neg {
            e.not_flip()
        } else {
            e
        }
    }

    /// Click's `Primitive::compile`.
    fn compile(&self) -> Expr {
        let mut parts = Vec::new();
        let transport_test = matches!(
            self.ty,
            T::Port | T::TcpOpt | T::Field(Field { proto: Some(_), .. })
        );
        if self.transp != UNKNOWN && self.ty != T::Proto {
            parts.push(proto_expr(self.transp));
        }
        if transport_test {
            // first fragment only
            parts.push(Expr::atom(false, 4, 0x1FFF, 0));
        }
        let e = match self.ty {
            T::Host => self.srcdst_combine(
                || self.comparison(false, 12, 0, false),
                || self.comparison(false, 16, 0, false),
            ),
            T::Proto => {
                if self.u == PROTO_TCP_OR_UDP as u32 || self.u == PROTO_TRANSP as u32 {
                    proto_expr(self.u as i32)
                } else {
                    self.comparison(false, 8, 16, true)
                }
            }
            T::IpFrag => {
                let a = Expr::atom(false, 4, 0x3FFF, 0);
                if self.neg {
                    a
                } else {
                    a.not_flip()
                }
            }
            T::Port => self.srcdst_combine(
                || self.comparison(true, 0, 16, false),
                || self.comparison(true, 0, 0, false),
            ),
            T::TcpOpt => Expr::atom(true, 12, self.mask << 16, self.u << 16),
            T::Ether => {
                // Click's MAC offsets start 2 bytes before the header: the
                // destination is the low half of word 0 and word 4, the
                // source word 8 and the high half of word 12.
                let (a, m) = (&self.eth, &self.eth_mask);
                let word = |x: &[u8; 6], i: usize| {
                    u32::from_be_bytes([x[i], x[i + 1], x[i + 2], x[i + 3]])
                };
                let half = |x: &[u8; 6], i: usize| u32::from(u16::from_be_bytes([x[i], x[i + 1]]));
                self.srcdst_combine(
                    || {
                        Expr::and(alloc::vec![
                            Expr::mac_atom(8, word(m, 0), word(a, 0)),
                            Expr::mac_atom(12, half(m, 4) << 16, half(a, 4) << 16),
                        ])
                    },
                    || {
                        Expr::and(alloc::vec![
                            Expr::mac_atom(0, half(m, 0), half(a, 0)),
                            Expr::mac_atom(4, word(m, 2), word(a, 2)),
                        ])
                    },
                )
            }
            T::Field(f) => {
                let word_off = (f.bitoff >> 3) & !3;
                let bit_off = f.bitoff & 31;
                let shift = 32 - (bit_off + f.nbits);
                self.comparison(f.proto.is_some(), word_off, shift, true)
            }
            _ => Expr::Const(false),
        };
        parts.push(e);
        Expr::and(parts)
    }
}

/// A source-and-destination test whose two halves read one word (ports)
/// as one test, as Click's optimizer merges them (`src and dst port 80`,
/// and `port >= 1024`, which is `!(src < 1024 and dst < 1024)`): a packet
/// too short for the destination half then fails the test as a whole,
/// as it does in Click, even when the source half alone could be read.
fn one_word(sd: u8, v: &[Expr]) -> Option<Expr> {
    // (the halves of a port test have disjoint masks: `conjoin` merges
    // them; hosts are two words and stay apart)
    match (sd, v) {
        (SD_AND, [Expr::Atom(a, s), Expr::Atom(b, t)]) if s == t => {
            Some(Expr::Atom(a.conjoin(b)?, *s))
        }
        (SD_OR, [Expr::Not(x), Expr::Not(y)]) => match (&**x, &**y) {
            (Expr::Atom(a, s), Expr::Atom(b, t)) if s == t => {
                Some(Expr::Atom(a.conjoin(b)?, *s).not())
            }
            _ => None,
        },
        _ => None,
    }
}

fn proto_expr(p: i32) -> Expr {
    match p {
        PROTO_TCP_OR_UDP => Expr::or(alloc::vec![
            Expr::atom(false, 8, 0x00FF_0000, (PROTO_TCP as u32) << 16),
            Expr::atom(false, 8, 0x00FF_0000, (PROTO_UDP as u32) << 16),
        ]),
        p if p >= 256 => Expr::Const(true),
        p => Expr::atom(false, 8, 0x00FF_0000, (p as u32) << 16),
    }
}

/// `(word & mask) > u` as a formula of masked-equality tests, where
/// `u & mask == u` (the decomposition Click's `add_comparison_exprs` uses).
fn greater(transp: bool, off: u32, mask: u32, u: u32) -> Expr {
    if mask == 0 || u >= mask {
        return Expr::Const(false);
    }
    let top = 1u32 << (31 - mask.leading_zeros());
    if u & top != 0 {
        // Leading run of mask bits that u has set: they must all be set.
        let mut h = 0;
        let mut m = mask;
        while m != 0 {
            let b = 1u32 << (31 - m.leading_zeros());
            if u & b == 0 {
                break;
            }
            h |= b;
            m &= !b;
        }
        Expr::and(alloc::vec![
            Expr::atom(transp, off, h, h),
            greater(transp, off, mask & !h, u & !h),
        ])
    } else {
        // Mask bits above u's highest set bit: any of them set wins.
        let h = if u == 0 {
            mask
        } else {
            let hb = 31 - u.leading_zeros();
            mask & !(u32::MAX >> (31 - hb))
        };
        Expr::or(alloc::vec![
            Expr::atom(transp, off, h, 0).not_flip(),
            greater(transp, off, mask & !h, u),
        ])
    }
}

// ---------------------------------------------------------------------------
// Parser

struct Parser<'a> {
    cx: ArgContext<'a>,
    words: Vec<&'a str>,
    pos: usize,
    prev: Prim,
    warnings: &'a mut Vec<String>,
    depth: usize,
}

const MAX_DEPTH: usize = 200;

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&'a str> {
        self.words.get(self.pos).copied()
    }

    fn peek_is(&self, a: &str) -> bool {
        self.peek() == Some(a)
    }

    /// `expr ::= orexpr [? expr : expr]`
    fn expr(&mut self) -> Result<Expr, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("expression too deeply nested".into());
        }
        let c = self.orexpr()?;
        let r = if self.peek_is("?") {
            self.pos += 1;
            let start = self.pos;
            let a = self.expr()?;
            if self.pos == start || !self.peek_is(":") {
                return Err("missing ':' in ternary expression".into());
            }
            self.pos += 1;
            let b = self.expr()?;
            Expr::ite(c, a, b)
        } else {
            c
        };
        self.depth -= 1;
        Ok(r)
    }

    fn orexpr(&mut self) -> Result<Expr, String> {
        let mut v = alloc::vec![self.term()?];
        while self.peek_is("or") || self.peek_is("||") {
            self.pos += 1;
            v.push(self.term()?);
        }
        Ok(Expr::or(v))
    }

    fn term(&mut self) -> Result<Expr, String> {
        let mut v = Vec::new();
        let mut need = true;
        loop {
            match self.factor()? {
                None => {
                    if need {
                        return Err("missing expression".into());
                    }
                    break;
                }
                Some(e) => v.push(e),
            }
            need = self.peek_is("and") || self.peek_is("&&");
            if need {
                self.pos += 1;
            }
        }
        Ok(Expr::and(v))
    }

    fn factor(&mut self) -> Result<Option<Expr>, String> {
        match self.peek() {
            Some(w @ ("not" | "!")) => {
                self.pos += 1;
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err("expression too deeply nested".into());
                }
                let f = self.factor()?;
                self.depth -= 1;
                match f {
                    None => Err(format!("missing expression after '{w}'")),
                    Some(e) => Ok(Some(e.not())),
                }
            }
            Some("(") => {
                self.pos += 1;
                let start = self.pos;
                let e = self.expr()?;
                if self.pos == start {
                    return Err("missing expression after '('".into());
                }
                if self.peek_is(")") {
                    self.pos += 1;
                } else {
                    return Err("missing ')'".into());
                }
                Ok(Some(e))
            }
            _ => self.test(),
        }
    }

    /// Word at `pos` unless it is the last word (Click's quirk: a relop,
    /// bracket or mask is only recognised when something follows it).
    fn word_before_last(&self, pos: usize) -> &'a str {
        if pos + 1 >= self.words.len() {
            ""
        } else {
            self.words[pos]
        }
    }

    fn test(&mut self) -> Result<Option<Expr>, String> {
        let n = self.words.len();
        let Some(first) = self.peek() else {
            return Ok(None);
        };
        match first {
            ")" | "||" | "or" | "?" | ":" => return Ok(None),
            "true" => {
                self.pos += 1;
                return Ok(Some(Expr::Const(true)));
            }
            "false" => {
                self.pos += 1;
                return Ok(Some(Expr::Const(false)));
            }
            _ => {}
        }

        let first_pos = self.pos;
        let mut pos = self.pos;
        let mut prim = Prim::default();
        let mut header = Header::Unset;
        let mut negated = false;

        // qualifiers
        while pos < n {
            let wd = self.words[pos];
            match lookup(wd, T::None, UNKNOWN, &self.cx) {
                Ok(Lookup::Type(t)) => {
                    prim.set_type(t)?;
                    if let T::Field(Field { proto: Some(p), .. }) = t {
                        prim.set_transp_proto(p)?;
                    }
                }
                Ok(Lookup::Found(T::Proto, v)) => prim.set_transp_proto(v as i32)?,
                Ok(Lookup::Found(..)) | Err(_) => break,
                Ok(Lookup::NotFound) => {
                    if wd == "src" {
                        let w1 = self.words.get(pos + 1).copied();
                        let w2 = self.words.get(pos + 2).copied();
                        if matches!(w2, Some("dst" | "dest")) && matches!(w1, Some("and" | "&&")) {
                            prim.set_srcdst(SD_AND)?;
                            pos += 2;
                        } else if matches!(w2, Some("dst" | "dest"))
                            && matches!(w1, Some("or" | "||"))
                        {
                            prim.set_srcdst(SD_OR)?;
                            pos += 2;
                        } else {
                            prim.set_srcdst(SD_SRC)?;
                        }
                    } else if wd == "dst" || wd == "dest" {
                        prim.set_srcdst(SD_DST)?;
                    } else if wd == "ip" || wd == "ether" {
                        if header != Header::Unset {
                            break;
                        }
                        header = if wd == "ip" {
                            Header::Ip
                        } else {
                            Header::Ether
                        };
                    } else if wd == "not" || wd == "!" {
                        negated = !negated;
                    } else {
                        break;
                    }
                }
            }
            pos += 1;
        }

        if pos != first_pos {
            self.prev = Prim::default();
        }
        // a bare value after an Ethernet primitive is an Ethernet address
        if self.prev.data == T::Ether {
            header = Header::Ether;
        }

        // optional [POS:LEN]
        let mut wd = self.word_before_last(pos);
        if wd == "[" && pos > first_pos && prim.ty == T::None {
            pos = self.brackets(&mut prim, pos)?;
            wd = self.word_before_last(pos);
        }

        // optional bitmask
        let mut mask_kind = MaskKind::None;
        let mut pmask = 0u32;
        if wd == "&" && pos + 1 < n {
            let mw = self.words[pos + 1];
            if let Some(v) = parse_int(mw).filter(|v| *v >= 0) {
                mask_kind = MaskKind::Int;
                pmask = v as u32;
                pos += 2;
            } else if let Some(v) = parse_ip(mw).filter(|_| header != Header::Ether) {
                mask_kind = MaskKind::Host;
                pmask = v;
                pos += 2;
            } else if let Some(m) = self.ether(mw, header) {
                mask_kind = MaskKind::Ether;
                prim.eth_mask = m;
                pos += 2;
            }
            if matches!(mask_kind, MaskKind::Int | MaskKind::Host) && pmask == 0 {
                return Err("zero mask ignored".into());
            }
            wd = self.word_before_last(pos);
        }

        // optional relation
        pos += 1;
        match wd {
            "=" | "==" => {}
            "!=" => prim.neg = true,
            ">" => prim.op = Op::Gt,
            "<" => prim.op = Op::Lt,
            ">=" => {
                prim.op = Op::Lt;
                prim.neg = true;
            }
            "<=" => {
                prim.op = Op::Gt;
                prim.neg = true;
            }
            _ => pos -= 1,
        }

        // data
        if pos < n {
            wd = self.words[pos];
            pos += 1;
            match lookup(wd, prim.ty, prim.transp, &self.cx)? {
                Lookup::Found(t, v) => {
                    prim.data = t;
                    prim.u = v;
                }
                _ => {
                    let ip = header != Header::Ether;
                    if let Some(v) = parse_int(wd) {
                        prim.data = T::Int;
                        prim.u = v as u32;
                    } else if let Some(a) = self.cx.ip(wd).ok().filter(|_| ip) {
                        prim.u = u32::from(a);
                        let mask = if pos + 1 < n && self.words[pos] == "mask" {
                            self.cx.ip(self.words[pos + 1]).ok()
                        } else {
                            None
                        };
                        if let Some(m) = mask {
                            pos += 2;
                            prim.data = T::Net;
                            prim.mask = u32::from(m);
                        } else if prim.ty == T::Net {
                            // `net NAME`: the name's prefix (a literal
                            // address means itself, /32)
                            prim.data = T::Net;
                            prim.mask = u32::MAX;
                            if let Ok((a, m)) = self.cx.prefix(wd, false) {
                                prim.u = u32::from(a);
                                prim.mask = u32::from(m);
                            }
                        } else {
                            prim.data = T::Host;
                        }
                    } else if let Some((a, m)) = self.cx.prefix(wd, false).ok().filter(|_| ip) {
                        prim.data = T::Net;
                        prim.u = u32::from(a);
                        prim.mask = u32::from(m);
                    } else if let Some(e) = self.ether(wd, header) {
                        prim.data = T::Ether;
                        prim.eth = e;
                    } else {
                        if prim.op != Op::Eq || prim.neg {
                            return Err(format!("dangling operator near '{wd}'"));
                        }
                        pos -= 1;
                    }
                }
            }
        }

        if pos == first_pos {
            return Err(format!("empty term near '{wd}'"));
        }
        self.pos = pos;
        let prev = self.prev;
        prim.check(&prev, header, mask_kind, pmask, self.warnings)?;
        let e = prim.compile();
        self.prev = prim;
        Ok(Some(if negated { e.not() } else { e }))
    }

    /// `w` as an Ethernet address (Click's EtherAddressArg, names
    /// included), unless the primitive is for the IP header.
    fn ether(&self, w: &str, header: Header) -> Option<[u8; 6]> {
        if header == Header::Ip {
            None
        } else {
            self.cx.ether(w).ok()
        }
    }

    fn brackets(&self, prim: &mut Prim, mut pos: usize) -> Result<usize, String> {
        let mut comb = String::new();
        pos += 1;
        while pos < self.words.len() && self.words[pos] != "]" {
            comb.push_str(self.words[pos]);
            pos += 1;
        }
        if pos >= self.words.len() {
            return Err("missing ']'".into());
        }
        pos += 1;
        let syntax = || String::from("syntax error after '[', expected '[POS]' or '[POS:LEN]'");
        let int = |s: &str| parse_int(s).filter(|v| *v >= 0 && *v <= 0x1FFF);
        let (fieldpos, len) =
            if let Some((a, b)) = comb.split_once(':').filter(|(_, b)| !b.is_empty()) {
                (int(a).ok_or_else(syntax)?, parse_int(b).ok_or_else(syntax)?)
            } else if let Some((a, b)) = comb.split_once(',').filter(|(_, b)| !b.is_empty()) {
                let a = int(a).ok_or_else(syntax)?;
                let b = parse_int(b).ok_or_else(syntax)?;
                (a, b - a + 1)
            } else {
                (int(&comb).ok_or_else(syntax)?, 1)
            };
        if !(1..=4).contains(&len) {
            return Err("LEN in '[POS:LEN]' out of range, should be between 1 and 4".into());
        }
        let (bp, bl) = (fieldpos as u32 * 8, len as u32 * 8);
        if bp & !31 != (bp + bl - 1) & !31 {
            return Err(format!(
                "field [{fieldpos}:{len}] does not fit in a single word"
            ));
        }
        let proto = if prim.transp == UNKNOWN {
            None
        } else {
            Some(prim.transp)
        };
        prim.set_type(T::Field(Field {
            proto,
            bitoff: bp,
            nbits: bl,
        }))?;
        Ok(pos)
    }
}

fn parse_words(
    words: Vec<&str>,
    start: usize,
    warnings: &mut Vec<String>,
    cx: &ArgContext,
) -> Result<Expr, String> {
    let n = words.len();
    if n == start || (n == start + 1 && matches!(words[start], "-" | "any" | "all")) {
        return Ok(Expr::Const(true));
    }
    if n == start + 1 && words[start] == "none" {
        // Extension: a pattern consisting of "none" matches nothing.
        return Ok(Expr::Const(false));
    }
    let mut p = Parser {
        cx: *cx,
        words,
        pos: start,
        prev: Prim::default(),
        warnings,
        depth: 0,
    };
    let e = p.expr()?;
    if p.pos < n {
        return Err(format!("garbage after expression at '{}'", p.words[p.pos]));
    }
    Ok(e)
}

fn prefixed<T>(i: usize, r: Result<T, String>) -> Result<T, String> {
    r.map_err(|e| format!("pattern {i}: {e}"))
}

fn prefix_warnings(i: usize, from: usize, warnings: &mut [String]) {
    for w in &mut warnings[from..] {
        *w = format!("pattern {i}: {w}");
    }
}

/// Click's `cp_unquote`, simplified: removes `"..."` and `'...'` quoting
/// (with backslash escapes inside double quotes).
fn unquote(s: &str) -> String {
    if !s.contains(['"', '\'']) {
        return s.into();
    }
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        match c {
            '"' => {
                while let Some(c) = it.next() {
                    match c {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = it.next() {
                                out.push(n);
                            }
                        }
                        c => out.push(c),
                    }
                }
            }
            '\'' => {
                for c in it.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    out.push(c);
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// One IPClassifier pattern.
pub(crate) fn parse_pattern(
    i: usize,
    pat: &str,
    warnings: &mut Vec<String>,
    cx: &ArgContext,
) -> Result<Expr, String> {
    let from = warnings.len();
    let pat = unquote(pat);
    let r = prefixed(i, parse_words(tokenize(&pat), 0, warnings, cx));
    prefix_warnings(i, from, warnings);
    r
}

/// One IPFilter rule; returns the output port (`None` = drop).
pub(crate) fn parse_rule(
    i: usize,
    rule: &str,
    noutputs: usize,
    warnings: &mut Vec<String>,
    cx: &ArgContext,
) -> Result<(Option<usize>, Expr), String> {
    let rule = unquote(rule);
    let words = tokenize(&rule);
    let Some(&slotwd) = words.first() else {
        return Err(format!("empty pattern {i}"));
    };
    let from = warnings.len();
    let slot = match slotwd {
        "allow" => {
            if noutputs == 0 {
                return prefixed(
                    i,
                    Err("'allow' is meaningless, element has zero outputs".into()),
                );
            }
            Some(0)
        }
        "deny" => {
            if noutputs > 1 {
                warnings.push("meaning of 'deny' has changed (now it means 'drop')".to_string());
            }
            None
        }
        "drop" => None,
        w => match parse_int(w) {
            Some(s) if s >= 0 && (s as u64) < noutputs as u64 => Some(s as usize),
            Some(s) => return prefixed(i, Err(format!("slot '{s}' out of range"))),
            None => return prefixed(i, Err(format!("unknown slot ID '{w}'"))),
        },
    };
    let e = prefixed(i, parse_words(words, 1, warnings, cx))?;
    prefix_warnings(i, from, warnings);
    Ok((slot, e))
}
