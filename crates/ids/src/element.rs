//! SnortIDS: the element.

use crate::matcher::{decode, Decoded, RuleSet, Verdict, PROTO_ICMP, PROTO_TCP, PROTO_UDP};
use crate::rules::Action;
use alloc::collections::VecDeque;
use alloc::format;
use click::prelude::*;
use core::fmt::Write as _;

/// Alerts kept for the `alerts` handler unless ALERT_RING says otherwise.
pub const DEFAULT_RING: usize = 256;

pub static SPEC: ClassSpec = ClassSpec {
    name: "SnortIDS",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "ids",
    signature: "SnortIDS([KEYWORDS])",
    summary: "Matches IP packets against a subset of Snort 3 rules; alerts, drops or passes them.",
    description: "Inspects IPv4 packets (from the network header annotation, or from the first byte \
when it is unset: put it after `CheckIPHeader`, `MarkIPHeader` or `Strip(14)`) against Snort 3 \
rules and writes Snort's fast-alert lines for the rules that fire. Every rule's fast pattern (the \
content marked `fast_pattern`, else its longest) is searched in one Aho-Corasick pass over the \
payload (ASCII case-insensitively); only the rules whose pattern occurs, and the rules without \
any content, are then checked in full, so the cost grows with the payload and the rules that \
nearly match, not with the number of rules.\n\n\
Keyword arguments:\n\n\
- `RULES` (string, may repeat): rule text, one rule per line (`#` comments, blank lines and \
`\\` continuations allowed). Quote it with single quotes so that Click keeps the rules' double \
quotes, commas and semicolons: `RULES 'alert tcp any any -> any 80 (msg:\"GET\"; content:\"GET\"; sid:1;)'`.\n\
- `FILE` (string): a rules file, read when the router initializes (through the host's console: \
at user level a file; an instance has no files, so an instance's rules come from `RULES` or a \
`rules` write). Its rules follow those of `RULES`; errors name `FILE line N`.\n\
- `ALERT_FILE` (string): a file the alert lines are appended to (truncated at initialization; \
user level only: an instance refuses it).\n\
- `CONSOLE` (boolean): write alert lines to standard error (the instance's console inside an \
instance). Default true.\n\
- `ALERT_RING` (unsigned): alert lines kept for the `alerts` handler. Default 256.\n\n\
**Rules.** `ACTION PROTO SRC SPORT DIR DST DPORT (OPTIONS)`, with:\n\n\
- ACTION: `alert` (report), `drop` (report and drop), `pass` (let through without reports). \
When a packet matches several rules, a matching `pass` rule wins (no alert, not dropped: \
Snort's default order), else a matching `drop` rule drops it; every matching alert and drop \
rule writes its alert line.\n\
- PROTO: `ip`, `tcp`, `udp`, `icmp`. `ip` rules see every IPv4 packet; their ports must be `any`, \
as must those of `icmp` rules.\n\
- Addresses: `any`, `a.b.c.d`, `a.b.c.d/n`, lists `[a, b, ...]` (nested lists too), negation \
`!a`, `![a, b]`, entries negated inside a list (`[10.0.0.0/8, !10.1.2.3]`: in the first, not the \
second), and `$NAME`. Ports: `any`, `80`, `1024:`, `:1023`, `1:100`, lists, `!`, `$NAME`. IPv6 \
is refused.\n\
- Variables: lines `var NAME VALUE`, `ipvar NAME VALUE`, `portvar NAME VALUE` define `$NAME` \
for the rules after them (an undefined variable refuses the rule).\n\
- DIR: `->` or `<>` (either way round).\n\
- Options: `msg`, `sid` (required; a gid:sid may appear once), `rev` (default 1), `gid` \
(default 1), `classtype` (Snort's standard classifications; sets the default priority), \
`priority`, `reference` and `metadata` (documentation only: they never change what matches); \
`content:\"...\"` with `|41 42|` hex bytes and `\\\"`, `\\;`, `\\\\`, `\\|`, `\\:` escapes, and \
its modifiers `nocase`, `offset N`, `depth N`, `distance N`, `within N`, `fast_pattern`, written \
Snort 3's way (`content:\"abc\", nocase, offset 2, depth 10;`) or Snort 2's (`content:\"abc\"; \
nocase; offset:2; depth:10;`); `pcre:\"/re/ismx\"`; `flow:`; `detection_filter: track \
by_src|by_dst, count N, seconds S`.\n\
- Content semantics: searched in the TCP or UDP payload, the ICMP data (after the 8-byte \
header), or, for other protocols, later fragments and packets whose transport header is cut, \
the IP payload. `offset`/`depth`: the match lies in `[offset, offset+depth)` of the payload. \
`distance`/`within`: relative to the end of the previous content's match (the cursor); the \
match lies in `[cursor+distance, cursor+distance+within)` (`distance` may be negative). If a \
relative content fails, the previous content is retried at its next occurrence (at most 4096 \
tries per rule and packet). `depth`/`within` shorter than the content, and offset/depth mixed \
with distance/within on one content, are refused, as Snort refuses them.\n\
- `pcre`: `regex-automata` syntax on bytes (Unicode off) with flags `i` (caseless), `s` \
(dot matches newline), `m` (multi-line), `x` (extended); matched anywhere in the payload. Other \
flags (`R`, `U`, `B`, ...), negation, lookaround and backreferences are refused.\n\
- `flow` is decided statelessly, per packet (there is no stream tracking): `to_server`/\
`from_client` holds for a TCP SYN without ACK, and otherwise when the source port is higher than \
the destination port (the client's ephemeral port); `to_client`/`from_server` for a SYN-ACK and \
when the source port is lower; with equal ports either holds. `established` holds for a TCP \
segment with ACK set and SYN clear (no handshake is seen: a mid-stream segment counts) and for \
every UDP packet; `not_established` for TCP segments without ACK or with SYN. `stateless` adds \
nothing. Packets without ports (ICMP, other protocols, fragments) never satisfy `flow`; `flow` on \
an `icmp` rule is refused.\n\
- `detection_filter`: per rule and tracked address, counts matches in a window of S seconds \
that starts at the first match (packet timestamps, or the router's clock for packets without \
one); the rule fires only for the matches after the first N in a window. At most 4096 addresses \
are tracked per rule (expired windows are forgotten first, then the oldest).\n\
- Anything else (other actions, protocols, options, content modifiers, negated content) refuses \
the whole rule set with `RULES line N: reason` (or `FILE line N`).\n\n\
**Alerts** are Snort's fast-alert lines, `MM/DD-HH:MM:SS.uuuuuu  [**] [gid:sid:rev] msg [**] \
[Classification: ...] [Priority: N] {PROTO} SRC:PORT -> DST:PORT` (the Classification part only \
when the rule has a classtype; no ports for ICMP and other protocols), with the packet's \
timestamp in UTC.\n\n\
Packets that are not IPv4 or whose IP header is cut or inconsistent are counted in `malformed` \
and passed on output 0 unexamined; packets whose TCP/UDP/ICMP header is cut are counted in \
`malformed` too, and only `ip` rules look at them.",
    ports: "one input (IPv4 packets); output 0: passed packets; optional output 1 (push): \
dropped packets (without it they are discarded and counted)",
    handlers: &[
        HandlerDoc { name: "count", mode: HandlerMode::Read, text: "Packets inspected." },
        HandlerDoc { name: "drops", mode: HandlerMode::Read, text: "Packets dropped by drop rules." },
        HandlerDoc { name: "alerts_total", mode: HandlerMode::Read, text: "Alert lines written." },
        HandlerDoc { name: "malformed", mode: HandlerMode::Read, text: "Packets with a bad IP header, or a cut transport header." },
        HandlerDoc { name: "passed", mode: HandlerMode::Read, text: "Packets a pass rule let through." },
        HandlerDoc { name: "rule_count", mode: HandlerMode::Read, text: "Rules in force." },
        HandlerDoc { name: "stats", mode: HandlerMode::Read, text: "One line per rule: `gid:sid:rev action matches N events M` (matches before detection_filter; events: alerts, or passes for pass rules). Reset by a reload." },
        HandlerDoc { name: "alerts", mode: HandlerMode::Read, text: "The last ALERT_RING alert lines, oldest first (the oldest are left out if they would exceed the handler value limit)." },
        HandlerDoc { name: "rules", mode: HandlerMode::ReadWrite, text: "The RULES text in force. A write replaces it (FILE's rules, if any, stay) atomically: rules that do not parse leave the old set in force and the error names the line and the reason." },
        HandlerDoc { name: "reload", mode: HandlerMode::Write, text: "Reads FILE again and replaces the rules atomically (RULES text plus the file), as `rules` does." },
        HandlerDoc { name: "reset_counts", mode: HandlerMode::Write, text: "Zeroes the counters, the per-rule stats and the alert ring." },
    ],
    live_reconfigure: false,
    order_sensitive: true,
    make: || Box::new(SnortIds::new()),
};

/// The element.
pub struct SnortIds {
    set: RuleSet,
    rules_text: String,
    file: Option<String>,
    file_text: String,
    console: bool,
    alert_file: Option<String>,
    ring_cap: usize,
    ring: VecDeque<String>,
    count: u64,
    drops: u64,
    alerts_total: u64,
    malformed: u64,
    passed: u64,
    verdict: Verdict,
}

impl SnortIds {
    pub fn new() -> SnortIds {
        SnortIds {
            set: RuleSet::new(Vec::new()).expect("empty rule set"),
            rules_text: String::new(),
            file: None,
            file_text: String::new(),
            console: true,
            alert_file: None,
            ring_cap: DEFAULT_RING,
            ring: VecDeque::new(),
            count: 0,
            drops: 0,
            alerts_total: 0,
            malformed: 0,
            passed: 0,
            verdict: Verdict::default(),
        }
    }

    /// The compiled rules (tests, tools).
    pub fn rule_set(&self) -> &RuleSet {
        &self.set
    }

    fn build(rules: &str, file_text: Option<&str>) -> Result<RuleSet, String> {
        let mut src: Vec<(&'static str, &str)> = alloc::vec![("RULES", rules)];
        if let Some(f) = file_text {
            src.push(("FILE", f));
        }
        RuleSet::parse(&src).map_err(|e| e.to_string())
    }

    fn report(&mut self, d: &Decoded<'_>, ts: Timestamp, cx: &Ctx) {
        let mut file_text = String::new();
        for k in 0..self.verdict.events.len() {
            let r = self.set.rule(self.verdict.events[k] as usize);
            let line = alert_line(ts, r, d);
            self.alerts_total += 1;
            if self.console {
                cx.error_line(&line);
            }
            if self.alert_file.is_some() {
                file_text.push_str(&line);
                file_text.push('\n');
            }
            if self.ring_cap > 0 {
                if self.ring.len() >= self.ring_cap {
                    self.ring.pop_front();
                }
                self.ring.push_back(line);
            }
        }
        if let Some(f) = &self.alert_file {
            if let Err(e) = cx.write_file(f, true, &file_text) {
                cx.error_line(&format!("{}: ALERT_FILE {}: {}", cx.name(), f, e));
            }
        }
    }

    fn replace_rules(&mut self, rules: &str, file_text: Option<&str>) -> Result<(), String> {
        let set = SnortIds::build(rules, file_text)
            .map_err(|e| format!("{e} (the rules in force are unchanged)"))?;
        self.set = set;
        self.rules_text = String::from(rules);
        if let Some(f) = file_text {
            self.file_text = String::from(f);
        }
        Ok(())
    }
}

impl Default for SnortIds {
    fn default() -> Self {
        SnortIds::new()
    }
}

/// Writes `n` with at least `w` digits.
fn pad(out: &mut String, n: u64, w: usize) {
    let _ = write!(out, "{n:0w$}");
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Snort's fast-alert timestamp, `MM/DD-HH:MM:SS.uuuuuu`, in UTC.
pub fn alert_time(ts: Timestamp) -> String {
    let secs = ts.sec();
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400) as u64;
    let (_, m, d) = civil_from_days(days);
    let mut s = String::with_capacity(21);
    pad(&mut s, m as u64, 2);
    s.push('/');
    pad(&mut s, d as u64, 2);
    s.push('-');
    pad(&mut s, sod / 3600, 2);
    s.push(':');
    pad(&mut s, sod / 60 % 60, 2);
    s.push(':');
    pad(&mut s, sod % 60, 2);
    s.push('.');
    pad(&mut s, ts.subsec_usec() as u64, 6);
    s
}

/// One fast-alert line.
pub fn alert_line(ts: Timestamp, r: &crate::rules::Rule, d: &Decoded<'_>) -> String {
    let mut s = alert_time(ts);
    let _ = write!(s, "  [**] [{}:{}:{}] {} [**] ", r.gid, r.sid, r.rev, r.msg);
    if let Some((_, desc)) = r.class {
        let _ = write!(s, "[Classification: {desc}] ");
    }
    let _ = write!(s, "[Priority: {}] ", r.priority);
    match d.proto {
        PROTO_TCP => s.push_str("{TCP} "),
        PROTO_UDP => s.push_str("{UDP} "),
        PROTO_ICMP => s.push_str("{ICMP} "),
        p => {
            let _ = write!(s, "{{PROTO:{p:03}}} ");
        }
    }
    let src = core::net::Ipv4Addr::from(d.src);
    let dst = core::net::Ipv4Addr::from(d.dst);
    match d.ports {
        Some((sp, dp)) => {
            let _ = write!(s, "{src}:{sp} -> {dst}:{dp}");
        }
        None => {
            let _ = write!(s, "{src} -> {dst}");
        }
    }
    s
}

impl Element for SnortIds {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let rules: Vec<String> = a.read_all("RULES")?;
        let file = a.read::<String>("FILE")?;
        let alert_file = a.read::<String>("ALERT_FILE")?;
        let console = a.read::<bool>("CONSOLE")?.unwrap_or(true);
        let ring = a.read::<u32>("ALERT_RING")?.unwrap_or(DEFAULT_RING as u32);
        a.complete()?;
        let text = rules.join("\n");
        // With FILE the rules are compiled in initialize, with the file.
        let set = if file.is_none() {
            SnortIds::build(&text, None)?
        } else {
            RuleSet::new(Vec::new()).map_err(|e| e.to_string())?
        };
        self.set = set;
        self.rules_text = text;
        self.file = file;
        self.alert_file = alert_file;
        self.console = console;
        self.ring_cap = ring as usize;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        if let Some(f) = self.file.clone() {
            let text = cx.read_file(&f).map_err(|e| format!("FILE {f}: {e}"))?;
            let rules = self.rules_text.clone();
            self.set = SnortIds::build(&rules, Some(&text))?;
            self.file_text = text;
        }
        if let Some(f) = &self.alert_file {
            cx.write_file(f, false, "")
                .map_err(|e| format!("ALERT_FILE {f}: {e}"))?;
        }
        Ok(())
    }

    fn simple_action(&mut self, p: Packet, cx: &Ctx) -> Option<Packet> {
        self.count += 1;
        let action = {
            let ip = match p.network_header() {
                Some(h) => h,
                None => p.data(),
            };
            let (d, bad) = match decode(ip) {
                Ok(x) => x,
                Err(_) => {
                    self.malformed += 1;
                    return Some(p);
                }
            };
            if bad {
                self.malformed += 1;
            }
            let ts = match p.timestamp() {
                t if t.is_zero() => cx.now(),
                t => t,
            };
            self.set.inspect(&d, ts.nsec(), &mut self.verdict);
            if !self.verdict.events.is_empty() {
                self.report(&d, ts, cx);
            }
            self.verdict.action
        };
        match action {
            Some(Action::Drop) => {
                self.drops += 1;
                if cx.noutputs() > 1 {
                    cx.push(1, p);
                }
                None
            }
            Some(Action::Pass) => {
                self.passed += 1;
                Some(p)
            }
            _ => Some(p),
        }
    }

    fn read_handler(&mut self, name: &str, cx: &Ctx) -> Option<HandlerResult<String>> {
        let v = match name {
            "count" => format!("{}", self.count),
            "drops" => format!("{}", self.drops),
            "alerts_total" => format!("{}", self.alerts_total),
            "malformed" => format!("{}", self.malformed),
            "passed" => format!("{}", self.passed),
            "rule_count" => format!("{}", self.set.len()),
            "rules" => self.rules_text.clone(),
            "stats" => {
                let max = cx.max_handler_value();
                let mut s = String::new();
                for i in 0..self.set.len() {
                    let r = self.set.rule(i);
                    let st = self.set.stats(i);
                    let _ = writeln!(
                        s,
                        "{}:{}:{} {} matches {} events {}",
                        r.gid,
                        r.sid,
                        r.rev,
                        r.action.name(),
                        st.matches,
                        st.events
                    );
                    if s.len() > max {
                        return Some(Err("stats exceed the handler value limit".into()));
                    }
                }
                s
            }
            "alerts" => {
                let max = cx.max_handler_value();
                let mut total = 0usize;
                let mut first = self.ring.len();
                for (i, l) in self.ring.iter().enumerate().rev() {
                    if total + l.len() + 1 > max {
                        break;
                    }
                    total += l.len() + 1;
                    first = i;
                }
                let mut s = String::with_capacity(total);
                for l in self.ring.iter().skip(first) {
                    s.push_str(l);
                    s.push('\n');
                }
                s
            }
            _ => return None,
        };
        Some(Ok(v))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "rules" => {
                let file = self.file.as_ref().map(|_| self.file_text.clone());
                Some(self.replace_rules(value, file.as_deref()))
            }
            "reload" => {
                let rules = self.rules_text.clone();
                let r = match self.file.clone() {
                    Some(f) => match cx.read_file(&f) {
                        Ok(text) => self.replace_rules(&rules, Some(&text)),
                        Err(e) => Err(format!("FILE {f}: {e} (the rules in force are unchanged)")),
                    },
                    None => self.replace_rules(&rules, None),
                };
                Some(r)
            }
            "reset_counts" => {
                self.count = 0;
                self.drops = 0;
                self.alerts_total = 0;
                self.malformed = 0;
                self.passed = 0;
                self.ring.clear();
                self.set.reset_stats();
                Some(Ok(()))
            }
            _ => None,
        }
    }

    click::element_any!();
}
