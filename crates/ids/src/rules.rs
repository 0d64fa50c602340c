//! The Snort 3 rule subset: parsing rule text into [`Rule`]s.
//!
//! Everything a rule may say is listed in the element's documentation
//! (`SPEC` in `element.rs`); anything else refuses the rule set with the
//! line and the reason ([`RuleError`]). Nothing is ignored silently.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// What a matching rule does.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Alert,
    Drop,
    Pass,
}

impl Action {
    pub fn name(self) -> &'static str {
        match self {
            Action::Alert => "alert",
            Action::Drop => "drop",
            Action::Pass => "pass",
        }
    }
}

/// The rule's protocol.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Proto {
    Ip,
    Tcp,
    Udp,
    Icmp,
}

/// An address set (Snort's `any`, `a.b.c.d[/n]`, `[list]`, `!x`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AddrExpr {
    Any,
    /// Network and mask, host order.
    Net(u32, u32),
    List(Vec<AddrExpr>),
    Not(Box<AddrExpr>),
}

impl AddrExpr {
    pub fn matches(&self, a: u32) -> bool {
        match self {
            AddrExpr::Any => true,
            AddrExpr::Net(n, m) => a & m == *n,
            AddrExpr::Not(x) => !x.matches(a),
            AddrExpr::List(items) => list_matches(
                items,
                |e| e.matches(a),
                |e| match e {
                    AddrExpr::Not(x) => Some(&**x),
                    _ => None,
                },
            ),
        }
    }
}

/// A port set (`any`, `80`, `1024:`, `:1023`, `1:100`, `[list]`, `!x`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortExpr {
    Any,
    Range(u16, u16),
    List(Vec<PortExpr>),
    Not(Box<PortExpr>),
}

impl PortExpr {
    pub fn matches(&self, p: u16) -> bool {
        match self {
            PortExpr::Any => true,
            PortExpr::Range(lo, hi) => *lo <= p && p <= *hi,
            PortExpr::Not(x) => !x.matches(p),
            PortExpr::List(items) => list_matches(
                items,
                |e| e.matches(p),
                |e| match e {
                    PortExpr::Not(x) => Some(&**x),
                    _ => None,
                },
            ),
        }
    }
}

/// Snort's list semantics: the positive entries are alternatives (none
/// means "anything"), and a value matching any negated entry is out.
fn list_matches<T>(
    items: &[T],
    matches: impl Fn(&T) -> bool,
    negated: impl Fn(&T) -> Option<&T>,
) -> bool {
    let mut any_pos = false;
    let mut pos_hit = false;
    for it in items {
        match negated(it) {
            Some(inner) => {
                if matches(inner) {
                    return false;
                }
            }
            None => {
                any_pos = true;
                if !pos_hit && matches(it) {
                    pos_hit = true;
                }
            }
        }
    }
    !any_pos || pos_hit
}

/// One `content` option with its modifiers.
#[derive(Clone, Debug)]
pub struct Content {
    pub bytes: Vec<u8>,
    pub nocase: bool,
    pub offset: Option<i64>,
    pub depth: Option<i64>,
    pub distance: Option<i64>,
    pub within: Option<i64>,
    pub fast_pattern: bool,
}

impl Content {
    /// Relative to the previous content match (`distance`/`within`).
    pub fn relative(&self) -> bool {
        self.distance.is_some() || self.within.is_some()
    }
}

/// One `pcre` option.
#[derive(Clone, Debug)]
pub struct Pcre {
    pub source: String,
    pub pattern: String,
    pub caseless: bool,
    pub dotall: bool,
    pub multiline: bool,
    pub extended: bool,
}

/// Flow direction, decided statelessly (see the element's documentation).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FlowDir {
    ToServer,
    ToClient,
}

/// The `flow` option.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Flow {
    pub dir: Option<FlowDir>,
    /// `Some(true)` for `established`, `Some(false)` for `not_established`.
    pub established: Option<bool>,
}

/// Whom `detection_filter` counts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Track {
    BySrc,
    ByDst,
}

/// `detection_filter: track by_src|by_dst, count N, seconds S`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DetectionFilter {
    pub track: Track,
    pub count: u32,
    pub seconds: u32,
}

/// A parsed rule.
#[derive(Clone, Debug)]
pub struct Rule {
    /// Where it came from: source label and line (1-based).
    pub source: &'static str,
    pub line: usize,
    pub action: Action,
    pub proto: Proto,
    pub src: AddrExpr,
    pub sport: PortExpr,
    pub bidir: bool,
    pub dst: AddrExpr,
    pub dport: PortExpr,
    pub msg: String,
    pub gid: u32,
    pub sid: u32,
    pub rev: u32,
    /// Classtype name and description.
    pub class: Option<(&'static str, &'static str)>,
    pub priority: u32,
    pub contents: Vec<Content>,
    pub pcres: Vec<Pcre>,
    pub flow: Flow,
    pub filter: Option<DetectionFilter>,
}

impl Rule {
    /// The content searched for in the one pass over the payload: the one
    /// marked `fast_pattern`, else the longest (Snort's default).
    pub fn fast_pattern(&self) -> Option<usize> {
        if let Some(i) = self.contents.iter().position(|c| c.fast_pattern) {
            return Some(i);
        }
        let mut best: Option<usize> = None;
        for (i, c) in self.contents.iter().enumerate() {
            if best.is_none_or(|b| c.bytes.len() > self.contents[b].bytes.len()) {
                best = Some(i);
            }
        }
        best
    }
}

/// Why a rule set was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleError {
    pub source: &'static str,
    pub line: usize,
    pub reason: String,
}

impl core::fmt::Display for RuleError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} line {}: {}", self.source, self.line, self.reason)
    }
}

/// Snort's standard classifications (`classification.config`): name,
/// description, default priority.
pub static CLASSTYPES: &[(&str, &str, u32)] = &[
    ("not-suspicious", "Not Suspicious Traffic", 3),
    ("unknown", "Unknown Traffic", 3),
    ("bad-unknown", "Potentially Bad Traffic", 2),
    ("attempted-recon", "Attempted Information Leak", 2),
    ("successful-recon-limited", "Information Leak", 2),
    (
        "successful-recon-largescale",
        "Large Scale Information Leak",
        2,
    ),
    ("attempted-dos", "Attempted Denial of Service", 2),
    ("successful-dos", "Denial of Service", 2),
    ("attempted-user", "Attempted User Privilege Gain", 1),
    ("unsuccessful-user", "Unsuccessful User Privilege Gain", 1),
    ("successful-user", "Successful User Privilege Gain", 1),
    (
        "attempted-admin",
        "Attempted Administrator Privilege Gain",
        1,
    ),
    (
        "successful-admin",
        "Successful Administrator Privilege Gain",
        1,
    ),
    ("rpc-portmap-decode", "Decode of an RPC Query", 2),
    ("shellcode-detect", "Executable Code was Detected", 1),
    ("string-detect", "A Suspicious String was Detected", 3),
    (
        "suspicious-filename-detect",
        "A Suspicious Filename was Detected",
        2,
    ),
    (
        "suspicious-login",
        "An Attempted Login Using a Suspicious Username was Detected",
        2,
    ),
    ("system-call-detect", "A System Call was Detected", 2),
    ("tcp-connection", "A TCP Connection was Detected", 4),
    ("trojan-activity", "A Network Trojan was Detected", 1),
    (
        "unusual-client-port-connection",
        "A Client was Using an Unusual Port",
        2,
    ),
    ("network-scan", "Detection of a Network Scan", 3),
    (
        "denial-of-service",
        "Detection of a Denial of Service Attack",
        2,
    ),
    (
        "non-standard-protocol",
        "Detection of a Non-Standard Protocol or Event",
        2,
    ),
    (
        "protocol-command-decode",
        "Generic Protocol Command Decode",
        3,
    ),
    (
        "web-application-activity",
        "Access to a Potentially Vulnerable Web Application",
        2,
    ),
    ("web-application-attack", "Web Application Attack", 1),
    ("misc-activity", "Misc activity", 3),
    ("misc-attack", "Misc Attack", 2),
    ("icmp-event", "Generic ICMP event", 3),
    (
        "inappropriate-content",
        "Inappropriate Content was Detected",
        1,
    ),
    (
        "policy-violation",
        "Potential Corporate Privacy Violation",
        1,
    ),
    (
        "default-login-attempt",
        "Attempt to Login By a Default Username and Password",
        2,
    ),
    (
        "sdf",
        "Sensitive Data was Transmitted Across the Network",
        2,
    ),
    (
        "file-format",
        "Known malicious file or file based exploit",
        1,
    ),
    (
        "malware-cnc",
        "Known malware command and control traffic",
        1,
    ),
    (
        "client-side-exploit",
        "Known client side exploit attempt",
        1,
    ),
];

/// Rules longer than this (after joining `\` continuations) are refused.
pub const MAX_RULE_LEN: usize = 64 * 1024;
/// At most this many rules in one set.
pub const MAX_RULES: usize = 100_000;

type Res<T> = Result<T, String>;

/// Parses rule text from one or more sources (`("RULES", text)`,
/// `("FILE", text)`), sharing `var`/`ipvar`/`portvar` definitions in order.
/// Blank lines and `#` comments are skipped; a line ending in `\`
/// continues on the next.
pub fn parse_rules(sources: &[(&'static str, &str)]) -> Result<Vec<Rule>, RuleError> {
    let mut vars: BTreeMap<String, String> = BTreeMap::new();
    let mut rules: Vec<Rule> = Vec::new();
    let mut ids: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    for &(source, text) in sources {
        let mut lines = text.split('\n').enumerate().peekable();
        while let Some((i, l)) = lines.next() {
            let line_no = i + 1;
            let err = |reason: String| RuleError {
                source,
                line: line_no,
                reason,
            };
            let mut joined = String::from(l.trim_end_matches('\r'));
            while joined.ends_with('\\') {
                joined.pop();
                match lines.next() {
                    Some((_, next)) => joined.push_str(next.trim_end_matches('\r')),
                    None => return Err(err("line continuation at end of text".into())),
                }
                if joined.len() > MAX_RULE_LEN {
                    return Err(err(format!("rule longer than {MAX_RULE_LEN} bytes")));
                }
            }
            let t = joined.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            if t.len() > MAX_RULE_LEN {
                return Err(err(format!("rule longer than {MAX_RULE_LEN} bytes")));
            }
            let first = t.split_ascii_whitespace().next().unwrap_or("");
            if matches!(first, "var" | "ipvar" | "portvar") {
                let mut it = t[first.len()..]
                    .trim_start()
                    .splitn(2, |c: char| c.is_ascii_whitespace());
                let name = it.next().unwrap_or("");
                let value = it.next().unwrap_or("").trim();
                if name.is_empty() || value.is_empty() {
                    return Err(err(format!("'{first}' needs a name and a value")));
                }
                if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                    return Err(err(format!("bad variable name '{name}'")));
                }
                // Check the value parses as one or the other now.
                let ok_addr = parse_addr(value, &vars, 0).is_ok();
                let ok_port = parse_port(value, &vars, 0).is_ok();
                match (first, ok_addr, ok_port) {
                    ("ipvar", false, _) => {
                        return Err(err(format!(
                            "variable {name}: {}",
                            parse_addr(value, &vars, 0).unwrap_err()
                        )))
                    }
                    ("portvar", _, false) => {
                        return Err(err(format!(
                            "variable {name}: {}",
                            parse_port(value, &vars, 0).unwrap_err()
                        )))
                    }
                    ("var", false, false) => {
                        return Err(err(format!(
                            "variable {name}: not an address or port set: '{value}'"
                        )))
                    }
                    _ => {}
                }
                vars.insert(name.to_string(), value.to_string());
                continue;
            }
            let rule = parse_rule(t, &vars).map_err(err)?;
            let rule = Rule {
                source,
                line: line_no,
                ..rule
            };
            if let Some(prev) = ids.get(&(rule.gid, rule.sid)) {
                let p = &rules[*prev];
                return Err(err(format!(
                    "duplicate gid:sid {}:{} (first at {} line {})",
                    rule.gid, rule.sid, p.source, p.line
                )));
            }
            if rules.len() >= MAX_RULES {
                return Err(err(format!("more than {MAX_RULES} rules")));
            }
            ids.insert((rule.gid, rule.sid), rules.len());
            rules.push(rule);
        }
    }
    Ok(rules)
}

/// Splits the rule header into words, keeping `[...]` lists (which may
/// contain spaces) together.
fn header_words(h: &str) -> Res<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    for c in h.chars() {
        match c {
            '[' => {
                depth += 1;
                cur.push(c);
            }
            ']' => {
                depth -= 1;
                if depth < 0 {
                    return Err("unbalanced ']' in rule header".into());
                }
                cur.push(c);
            }
            c if c.is_ascii_whitespace() && depth == 0 => {
                if !cur.is_empty() {
                    out.push(core::mem::take(&mut cur));
                }
            }
            c if c.is_ascii_whitespace() => {}
            c => cur.push(c),
        }
    }
    if depth != 0 {
        return Err("unbalanced '[' in rule header".into());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    Ok(out)
}

fn parse_rule(t: &str, vars: &BTreeMap<String, String>) -> Res<Rule> {
    let open = t
        .find('(')
        .ok_or_else(|| String::from("no option list: expected '(' after the rule header"))?;
    let header = &t[..open];
    let body = t[open + 1..].trim_end();
    let body = body
        .strip_suffix(')')
        .ok_or_else(|| String::from("option list does not end with ')'"))?;
    let w = header_words(header)?;
    if w.is_empty() {
        return Err("empty rule header".into());
    }
    let action = match w[0].as_str() {
        "alert" => Action::Alert,
        "drop" => Action::Drop,
        "pass" => Action::Pass,
        a => {
            return Err(format!(
                "unsupported action '{a}' (supported: alert, drop, pass)"
            ))
        }
    };
    if w.len() != 7 {
        return Err(format!(
            "rule header needs 7 fields (action proto src sport dir dst dport), found {}",
            w.len()
        ));
    }
    let proto = match w[1].to_ascii_lowercase().as_str() {
        "ip" => Proto::Ip,
        "tcp" => Proto::Tcp,
        "udp" => Proto::Udp,
        "icmp" => Proto::Icmp,
        p => {
            return Err(format!(
                "unsupported protocol '{p}' (supported: ip, tcp, udp, icmp)"
            ))
        }
    };
    let src = parse_addr(&w[2], vars, 0).map_err(|e| format!("source address: {e}"))?;
    let sport = parse_port(&w[3], vars, 0).map_err(|e| format!("source port: {e}"))?;
    let bidir = match w[4].as_str() {
        "->" => false,
        "<>" => true,
        d => return Err(format!("unsupported direction '{d}' (supported: ->, <>)")),
    };
    let dst = parse_addr(&w[5], vars, 0).map_err(|e| format!("destination address: {e}"))?;
    let dport = parse_port(&w[6], vars, 0).map_err(|e| format!("destination port: {e}"))?;
    if matches!(proto, Proto::Ip | Proto::Icmp)
        && (sport != PortExpr::Any || dport != PortExpr::Any)
    {
        return Err(format!(
            "ports must be 'any' for protocol {}",
            w[1].to_ascii_lowercase()
        ));
    }
    let mut r = Rule {
        source: "",
        line: 0,
        action,
        proto,
        src,
        sport,
        bidir,
        dst,
        dport,
        msg: String::new(),
        gid: 1,
        sid: 0,
        rev: 1,
        class: None,
        priority: 0,
        contents: Vec::new(),
        pcres: Vec::new(),
        flow: Flow::default(),
        filter: None,
    };
    parse_options(body, &mut r)?;
    Ok(r)
}

/// Splits `body` at `;` outside double quotes (`\` escapes one character).
fn split_options(body: &str) -> Res<Vec<&str>> {
    let b = body.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut inq = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'"' => inq = !inq,
            b';' if !inq => {
                out.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if inq {
        return Err("unterminated quoted string in options".into());
    }
    if !body[start..].trim().is_empty() {
        return Err(format!(
            "option '{}' not terminated by ';'",
            body[start..].trim()
        ));
    }
    Ok(out)
}

fn parse_options(body: &str, r: &mut Rule) -> Res<()> {
    let mut have_sid = false;
    let mut have = BTreeMap::<&str, ()>::new();
    let mut pcre_seen = false;
    for opt in split_options(body)? {
        let opt = opt.trim();
        if opt.is_empty() {
            continue;
        }
        let (name, value) = match opt.find(':') {
            Some(i) => (opt[..i].trim(), Some(opt[i + 1..].trim())),
            None => (opt, None),
        };
        fn need<'s>(v: Option<&'s str>, name: &str) -> Res<&'s str> {
            v.ok_or_else(|| format!("option '{name}' needs a value"))
        }
        let once = |have: &mut BTreeMap<&str, ()>, n: &'static str| -> Res<()> {
            if have.insert(n, ()).is_some() {
                Err(format!("option '{n}' given twice"))
            } else {
                Ok(())
            }
        };
        match name {
            "msg" => {
                once(&mut have, "msg")?;
                r.msg = unquote_msg(need(value, name)?)?;
            }
            "sid" => {
                once(&mut have, "sid")?;
                r.sid = parse_num(need(value, name)?, 1, u32::MAX as i64, "sid")? as u32;
                have_sid = true;
            }
            "rev" => {
                once(&mut have, "rev")?;
                r.rev = parse_num(need(value, name)?, 1, u32::MAX as i64, "rev")? as u32;
            }
            "gid" => {
                once(&mut have, "gid")?;
                r.gid = parse_num(need(value, name)?, 1, u32::MAX as i64, "gid")? as u32;
            }
            "classtype" => {
                once(&mut have, "classtype")?;
                let v = need(value, name)?;
                let c = CLASSTYPES
                    .iter()
                    .find(|c| c.0 == v)
                    .ok_or_else(|| format!("unknown classtype '{v}'"))?;
                r.class = Some((c.0, c.1));
                if !have.contains_key("priority") {
                    r.priority = c.2;
                }
            }
            "priority" => {
                once(&mut have, "priority")?;
                r.priority = parse_num(need(value, name)?, 1, u32::MAX as i64, "priority")? as u32;
            }
            "reference" | "metadata" => {
                // Documentation only: they never change what matches.
                need(value, name)?;
            }
            "content" => {
                if pcre_seen {
                    // Contents are verified before pcre; a content after a
                    // pcre is accepted only when it is not relative (checked
                    // when its modifiers are known, below).
                }
                let c = parse_content(need(value, name)?)?;
                if c.relative() && pcre_seen {
                    return Err(
                        "a relative content (distance/within) after a pcre is not supported".into(),
                    );
                }
                r.contents.push(c);
            }
            "nocase" | "offset" | "depth" | "distance" | "within" | "fast_pattern" => {
                // Snort 2's separate modifier options, applied to the
                // preceding content.
                if pcre_seen && matches!(name, "distance" | "within") {
                    return Err(
                        "a relative content (distance/within) after a pcre is not supported".into(),
                    );
                }
                let c = r
                    .contents
                    .last_mut()
                    .ok_or_else(|| format!("'{name}' without a preceding content"))?;
                apply_modifier(c, name, value)?;
                check_content(c)?;
            }
            "pcre" => {
                pcre_seen = true;
                r.pcres.push(parse_pcre(need(value, name)?)?);
            }
            "flow" => {
                once(&mut have, "flow")?;
                r.flow = parse_flow(need(value, name)?)?;
            }
            "detection_filter" => {
                once(&mut have, "detection_filter")?;
                r.filter = Some(parse_filter(need(value, name)?)?);
            }
            other => return Err(format!("unsupported option '{other}'")),
        }
    }
    if !have_sid {
        return Err("rule has no sid".into());
    }
    if r.contents.iter().filter(|c| c.fast_pattern).count() > 1 {
        return Err("more than one content marked fast_pattern".into());
    }
    if r.flow.dir.is_some() || r.flow.established.is_some() {
        // flow applies to tcp and udp (and ip rules, on their tcp/udp packets).
        if r.proto == Proto::Icmp {
            return Err("flow is not supported on icmp rules".into());
        }
    }
    Ok(())
}

fn parse_num(s: &str, lo: i64, hi: i64, what: &str) -> Res<i64> {
    let s = s.trim();
    let v: i64 = s
        .parse()
        .map_err(|_| format!("{what}: expected an integer, found '{s}'"))?;
    if v < lo || v > hi {
        return Err(format!("{what}: {v} out of range {lo}..{hi}"));
    }
    Ok(v)
}

/// A quoted option value: `"..."`, with `\"`, `\;` and `\\` escapes.
/// Returns the raw bytes between the quotes (escapes kept) and the rest.
fn split_quoted(v: &str) -> Res<(&str, &str)> {
    let v = v.trim_start();
    let b = v.as_bytes();
    if b.first() != Some(&b'"') {
        return Err(format!("expected a quoted string, found '{v}'"));
    }
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Ok((&v[1..i], &v[i + 1..])),
            _ => i += 1,
        }
    }
    Err("unterminated quoted string".into())
}

fn unquote_msg(v: &str) -> Res<String> {
    let (inner, rest) = split_quoted(v)?;
    if !rest.trim().is_empty() {
        return Err(format!(
            "msg: unexpected text after the string: '{}'",
            rest.trim()
        ));
    }
    let mut out = String::new();
    let mut it = inner.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some(n) => out.push(n),
                None => return Err("msg: dangling '\\'".into()),
            }
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

/// Content bytes: text with `\` escapes and `|hex hex|` blocks.
fn content_bytes(inner: &str) -> Res<Vec<u8>> {
    let b = inner.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => {
                let n = *b.get(i + 1).ok_or("content: dangling '\\'")?;
                if !matches!(n, b'"' | b';' | b'\\' | b'|' | b':') {
                    return Err(format!("content: unsupported escape '\\{}'", n as char));
                }
                out.push(n);
                i += 2;
            }
            b'|' => {
                let end = inner[i + 1..]
                    .find('|')
                    .ok_or("content: unterminated '|' hex block")?
                    + i
                    + 1;
                let hex: Vec<u8> = inner[i + 1..end]
                    .bytes()
                    .filter(|c| !c.is_ascii_whitespace())
                    .collect();
                if !hex.len().is_multiple_of(2) {
                    return Err("content: odd number of hex digits in '|...|'".into());
                }
                for p in hex.chunks(2) {
                    let h = |c: u8| (c as char).to_digit(16);
                    match (h(p[0]), h(p[1])) {
                        (Some(x), Some(y)) => out.push((x * 16 + y) as u8),
                        _ => {
                            return Err(format!(
                                "content: bad hex byte '{}{}'",
                                p[0] as char, p[1] as char
                            ))
                        }
                    }
                }
                i = end + 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

fn parse_content(v: &str) -> Res<Content> {
    let v = v.trim_start();
    if v.starts_with('!') {
        return Err("negated content ('!') is not supported".into());
    }
    let (inner, rest) = split_quoted(v)?;
    let bytes = content_bytes(inner)?;
    if bytes.is_empty() {
        return Err("empty content".into());
    }
    let mut c = Content {
        bytes,
        nocase: false,
        offset: None,
        depth: None,
        distance: None,
        within: None,
        fast_pattern: false,
    };
    let rest = rest.trim();
    if !rest.is_empty() {
        let rest = rest
            .strip_prefix(',')
            .ok_or_else(|| format!("content: unexpected text after the string: '{rest}'"))?;
        for m in rest.split(',') {
            let m = m.trim();
            let (n, val) = match m.find(|c: char| c.is_ascii_whitespace() || c == ':') {
                Some(i) => (&m[..i], Some(m[i + 1..].trim())),
                None => (m, None),
            };
            apply_modifier(&mut c, n, val)?;
        }
    }
    check_content(&c)?;
    Ok(c)
}

fn apply_modifier(c: &mut Content, name: &str, value: Option<&str>) -> Res<()> {
    let num = |lo: i64, hi: i64| -> Res<i64> {
        let v = value.ok_or_else(|| format!("content modifier '{name}' needs a value"))?;
        parse_num(v, lo, hi, name)
    };
    let set = |slot: &mut Option<i64>, v: i64| -> Res<()> {
        if slot.replace(v).is_some() {
            return Err(format!("content modifier '{name}' given twice"));
        }
        Ok(())
    };
    match name {
        "nocase" | "fast_pattern" => {
            if value.is_some_and(|v| !v.is_empty()) {
                return Err(format!("content modifier '{name}' takes no value"));
            }
            if name == "nocase" {
                c.nocase = true;
            } else {
                c.fast_pattern = true;
            }
        }
        "offset" => set(&mut c.offset, num(0, 65535)?)?,
        "depth" => set(&mut c.depth, num(1, 65535)?)?,
        "distance" => set(&mut c.distance, num(-65535, 65535)?)?,
        "within" => set(&mut c.within, num(1, 65535)?)?,
        "" => return Err("empty content modifier".into()),
        other => return Err(format!("unsupported content modifier '{other}'")),
    }
    Ok(())
}

fn check_content(c: &Content) -> Res<()> {
    if (c.offset.is_some() || c.depth.is_some()) && c.relative() {
        return Err("content mixes offset/depth with distance/within".into());
    }
    let n = c.bytes.len() as i64;
    if c.depth.is_some_and(|d| d < n) {
        return Err("content: depth is shorter than the content".into());
    }
    if c.within.is_some_and(|w| w < n) {
        return Err("content: within is shorter than the content".into());
    }
    Ok(())
}

fn parse_pcre(v: &str) -> Res<Pcre> {
    let v = v.trim_start();
    if v.starts_with('!') {
        return Err("negated pcre ('!') is not supported".into());
    }
    let (inner, rest) = split_quoted(v)?;
    if !rest.trim().is_empty() {
        return Err(format!(
            "pcre: unexpected text after the string: '{}'",
            rest.trim()
        ));
    }
    let body = inner
        .strip_prefix('/')
        .ok_or("pcre: expected /pattern/flags")?;
    let end = body.rfind('/').ok_or("pcre: expected /pattern/flags")?;
    let pattern = &body[..end];
    let flags = &body[end + 1..];
    let mut p = Pcre {
        source: String::from(inner),
        pattern: String::from(pattern),
        caseless: false,
        dotall: false,
        multiline: false,
        extended: false,
    };
    for f in flags.chars() {
        match f {
            'i' => p.caseless = true,
            's' => p.dotall = true,
            'm' => p.multiline = true,
            'x' => p.extended = true,
            f => {
                return Err(format!(
                    "pcre: unsupported flag '{f}' (supported: i, s, m, x)"
                ))
            }
        }
    }
    // Compile once here so that a pattern the engine cannot run is refused
    // with the rule's line.
    crate::matcher::compile_pcre(&p)?;
    Ok(p)
}

fn parse_flow(v: &str) -> Res<Flow> {
    let mut f = Flow::default();
    for w in v.split(',') {
        let w = w.trim();
        let (dir, est) = match w {
            "to_server" | "from_client" => (Some(FlowDir::ToServer), None),
            "to_client" | "from_server" => (Some(FlowDir::ToClient), None),
            "established" => (None, Some(true)),
            "not_established" => (None, Some(false)),
            "stateless" => (None, None),
            other => {
                return Err(format!(
                    "flow: unsupported value '{other}' (supported: to_server, from_client, to_client, from_server, established, not_established, stateless)"
                ))
            }
        };
        if let Some(d) = dir {
            if f.dir.is_some_and(|x| x != d) {
                return Err("flow: conflicting directions".into());
            }
            f.dir = Some(d);
        }
        if let Some(e) = est {
            if f.established.is_some_and(|x| x != e) {
                return Err("flow: established and not_established together".into());
            }
            f.established = Some(e);
        }
    }
    Ok(f)
}

fn parse_filter(v: &str) -> Res<DetectionFilter> {
    let mut track = None;
    let mut count = None;
    let mut seconds = None;
    for part in v.split(',') {
        let mut it = part.split_ascii_whitespace();
        let k = it.next().unwrap_or("");
        let val = it
            .next()
            .ok_or_else(|| format!("detection_filter: '{k}' needs a value"))?;
        if it.next().is_some() {
            return Err(format!("detection_filter: bad item '{}'", part.trim()));
        }
        match k {
            "track" => {
                track = Some(match val {
                    "by_src" => Track::BySrc,
                    "by_dst" => Track::ByDst,
                    o => {
                        return Err(format!(
                            "detection_filter: track must be by_src or by_dst, not '{o}'"
                        ))
                    }
                })
            }
            "count" => {
                count = Some(parse_num(val, 1, u32::MAX as i64, "detection_filter count")? as u32)
            }
            "seconds" => {
                seconds = Some(parse_num(val, 1, 86400 * 365, "detection_filter seconds")? as u32)
            }
            o => return Err(format!("detection_filter: unsupported item '{o}'")),
        }
    }
    match (track, count, seconds) {
        (Some(track), Some(count), Some(seconds)) => Ok(DetectionFilter {
            track,
            count,
            seconds,
        }),
        _ => Err("detection_filter needs track, count and seconds".into()),
    }
}

const MAX_VAR_DEPTH: usize = 16;

fn var_lookup<'v>(name: &str, vars: &'v BTreeMap<String, String>, depth: usize) -> Res<&'v str> {
    if depth > MAX_VAR_DEPTH {
        return Err(format!("variable ${name} nests too deeply (a cycle?)"));
    }
    vars.get(name)
        .map(|s| s.as_str())
        .ok_or_else(|| format!("undefined variable ${name}"))
}

/// Splits a `[a, b, [c, d]]` list body at top-level commas.
fn list_items(s: &str) -> Res<Vec<&str>> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    if out.iter().any(|x| x.is_empty()) {
        return Err(format!("empty item in list '[{s}]'"));
    }
    Ok(out)
}

fn parse_addr(s: &str, vars: &BTreeMap<String, String>, depth: usize) -> Res<AddrExpr> {
    let s = s.trim();
    if depth > MAX_VAR_DEPTH {
        return Err("address list nests too deeply".into());
    }
    if let Some(rest) = s.strip_prefix('!') {
        return Ok(AddrExpr::Not(Box::new(parse_addr(rest, vars, depth + 1)?)));
    }
    if let Some(name) = s.strip_prefix('$') {
        return parse_addr(var_lookup(name, vars, depth)?, vars, depth + 1);
    }
    if s == "any" {
        return Ok(AddrExpr::Any);
    }
    if let Some(inner) = s.strip_prefix('[') {
        let inner = inner
            .strip_suffix(']')
            .ok_or_else(|| format!("bad address list '{s}'"))?;
        let mut items = Vec::new();
        for it in list_items(inner)? {
            items.push(parse_addr(it, vars, depth + 1)?);
        }
        return Ok(AddrExpr::List(items));
    }
    let (a, bits) = match s.split_once('/') {
        Some((a, b)) => (
            a,
            b.parse::<u32>()
                .ok()
                .filter(|b| *b <= 32)
                .ok_or_else(|| format!("bad prefix length in '{s}'"))?,
        ),
        None => (s, 32),
    };
    if a.contains(':') {
        return Err(format!("IPv6 addresses are not supported: '{s}'"));
    }
    let ip: core::net::Ipv4Addr = a.parse().map_err(|_| format!("bad address '{s}'"))?;
    let mask = if bits == 0 {
        0
    } else {
        u32::MAX << (32 - bits)
    };
    Ok(AddrExpr::Net(u32::from(ip) & mask, mask))
}

fn parse_port(s: &str, vars: &BTreeMap<String, String>, depth: usize) -> Res<PortExpr> {
    let s = s.trim();
    if depth > MAX_VAR_DEPTH {
        return Err("port list nests too deeply".into());
    }
    if let Some(rest) = s.strip_prefix('!') {
        return Ok(PortExpr::Not(Box::new(parse_port(rest, vars, depth + 1)?)));
    }
    if let Some(name) = s.strip_prefix('$') {
        return parse_port(var_lookup(name, vars, depth)?, vars, depth + 1);
    }
    if s == "any" {
        return Ok(PortExpr::Any);
    }
    if let Some(inner) = s.strip_prefix('[') {
        let inner = inner
            .strip_suffix(']')
            .ok_or_else(|| format!("bad port list '{s}'"))?;
        let mut items = Vec::new();
        for it in list_items(inner)? {
            items.push(parse_port(it, vars, depth + 1)?);
        }
        return Ok(PortExpr::List(items));
    }
    let port = |p: &str| -> Res<u16> {
        p.trim()
            .parse::<u16>()
            .map_err(|_| format!("bad port '{s}'"))
    };
    match s.split_once(':') {
        Some((lo, hi)) => {
            let lo = if lo.is_empty() { 0 } else { port(lo)? };
            let hi = if hi.is_empty() { 65535 } else { port(hi)? };
            if lo > hi {
                return Err(format!("empty port range '{s}'"));
            }
            Ok(PortExpr::Range(lo, hi))
        }
        None => {
            let p = port(s)?;
            Ok(PortExpr::Range(p, p))
        }
    }
}
