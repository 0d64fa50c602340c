//! AggregateCounter: counts packets or bytes per aggregate annotation.

use crate::common::{handlers, unparse};
use crate::packet::{AGGREGATE_ANNO_OFFSET, EXTRA_LENGTH_ANNO_OFFSET};
use crate::prelude::*;
use alloc::format;
use alloc::vec::Vec;
use click_lang::args::{self, RawString};

/// Click's EXTRA_PACKETS annotation (FromIPSummaryDump's `count` field).
const EXTRA_PACKETS_ANNO_OFFSET: usize = 32;
const NONE: u32 = u32::MAX;

/// One node of the counter trie (Click's, after tcpdpriv): a node's
/// aggregate is the common prefix of its subtree, with zeros after it.
#[derive(Clone, Copy)]
struct Node {
    aggregate: u32,
    count: u32,
    child: [u32; 2],
}

/// What to do when a threshold is reached.
#[derive(Clone)]
enum Call {
    Freeze,
    Stop,
    Handler(String),
}

/// `AggregateCounter([KEYWORDS])`.
pub struct AggregateCounter {
    nodes: Vec<Node>,
    free: Vec<u32>,
    root: u32,
    num_nonzero: u32,
    count: u64,
    bytes: bool,
    ip_bytes: bool,
    use_packet_count: bool,
    use_extra_length: bool,
    frozen: bool,
    active: bool,
    banner: String,
    call_nnz: u32,
    call_nnz_h: Option<Call>,
    call_count: u64,
    call_count_h: Option<Call>,
}

impl Default for AggregateCounter {
    fn default() -> Self {
        let mut a = AggregateCounter {
            nodes: Vec::new(),
            free: Vec::new(),
            root: 0,
            num_nonzero: 0,
            count: 0,
            bytes: false,
            ip_bytes: false,
            use_packet_count: true,
            use_extra_length: true,
            frozen: false,
            active: true,
            banner: String::new(),
            call_nnz: NONE,
            call_nnz_h: None,
            call_count: u64::MAX,
            call_count_h: None,
        };
        a.clear();
        a
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "AggregateCounter",
    port_count: "1-2/1-2",
    processing: "a/a",
    group: "analysis",
    signature: "AggregateCounter([KEYWORDS])",
    summary: "Counts packets per aggregate annotation.",
    description: "Keeps a count of the packets (or bytes) seen for each aggregate annotation \
value. Write a file name (or `-` for standard output) to `write_text_file` or `write_file` to \
get the counts. A frozen AggregateCounter only updates counts that exist already (nonzero); it \
creates no new ones. The optional second input is always frozen. With two outputs, in push, \
counted packets leave on output 0 and the others on output 1.\n\n\
Keyword arguments:\n\n\
- `BYTES` (boolean): count bytes, not packets. Default false.\n\
- `IP_BYTES` (boolean): with BYTES, leave out the bytes before the network header. Default \
false.\n\
- `MULTIPACKET` (boolean): count a packet as 1 plus its extra-packets annotation (set by \
FromIPSummaryDump's `count` field). Default true.\n\
- `EXTRA_LENGTH` (boolean): with BYTES, add the extra-length annotation. Default true.\n\
- `AGGREGATE_FREEZE`, `AGGREGATE_STOP` (unsigned N): freeze the counter, or stop the driver, \
once N distinct aggregates were seen and another would start.\n\
- `AGGREGATE_CALL` (`N HANDLER [VALUE]`): call the write handler then instead.\n\
- `COUNT_FREEZE`, `COUNT_STOP` (unsigned N): freeze, or stop the driver, once the total count \
reaches N.\n\
- `COUNT_CALL` (`N HANDLER [VALUE]`): call the write handler then instead.\n\
- `BANNER` (string): written at the head of output files after the first line.\n\n\
At most one AGGREGATE keyword and one COUNT keyword. The files start `!IPAggregate 1.0`, the \
banner, `!num_nonzero N`; text files then have a line `AGGREGATE COUNT` per nonzero count, in \
increasing aggregate order; binary files (`write_file`) a line `!packed_le` and 8-byte records \
(aggregate, count; 32-bit little-endian). Counts are 32-bit, as in Click. The file handlers \
write through the host's console: in `clickos run` any file the process may write; where the \
host has no files (instances), only `-`.",
    ports: "one or two inputs (input 1 is frozen); one or two outputs",
    handlers: &[
        HandlerDoc {
            name: "write_text_file",
            mode: HandlerMode::Write,
            text: "Writes the counts as text to the named file, or `-` for standard output.",
        },
        HandlerDoc {
            name: "write_ascii_file",
            mode: HandlerMode::Write,
            text: "Same as `write_text_file`.",
        },
        HandlerDoc {
            name: "write_file",
            mode: HandlerMode::Write,
            text: "Writes the counts in packed binary form (`!packed_le`).",
        },
        HandlerDoc {
            name: "write_ip_file",
            mode: HandlerMode::Write,
            text: "Like `write_text_file`, with the aggregates printed as IP addresses.",
        },
        HandlerDoc {
            name: "write_pdf_file",
            mode: HandlerMode::Write,
            text: "Like `write_text_file`, with each count divided by the total.",
        },
        HandlerDoc {
            name: "freeze",
            mode: HandlerMode::ReadWrite,
            text: "Whether the counter is frozen (`true`/`false`).",
        },
        HandlerDoc {
            name: "active",
            mode: HandlerMode::ReadWrite,
            text: "Whether packets are counted at all.",
        },
        HandlerDoc {
            name: "stop",
            mode: HandlerMode::Write,
            text: "Stops counting (active false) and stops the driver.",
        },
        HandlerDoc {
            name: "reaggregate_counts",
            mode: HandlerMode::Write,
            text: "Replaces the counts by their distribution: each old count becomes an \
aggregate, counted as many times as it occurred (Click's trie nodes included, so count 0 \
appears for the trie's inner nodes, as in Click).",
        },
        HandlerDoc {
            name: "counts_pdf",
            mode: HandlerMode::Write,
            text: "Same as `reaggregate_counts`.",
        },
        HandlerDoc {
            name: "banner",
            mode: HandlerMode::ReadWrite,
            text: "The BANNER setting.",
        },
        HandlerDoc {
            name: "clear",
            mode: HandlerMode::Write,
            text: "Forgets all counts.",
        },
        HandlerDoc {
            name: "aggregate_call",
            mode: HandlerMode::ReadWrite,
            text: "The AGGREGATE_CALL setting, `N HANDLER [VALUE]`; empty for none.",
        },
        HandlerDoc {
            name: "count_call",
            mode: HandlerMode::ReadWrite,
            text: "The COUNT_CALL setting, `N HANDLER [VALUE]`; empty for none.",
        },
        HandlerDoc {
            name: "count",
            mode: HandlerMode::Read,
            text: "The total count.",
        },
        HandlerDoc {
            name: "nagg",
            mode: HandlerMode::Read,
            text: "How many aggregates have a nonzero count.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(AggregateCounter::default()),
};

/// Click's `ffs_msb`: 1 for the top bit, 32 for the bottom, 0 for none.
fn ffs_msb(x: u32) -> u32 {
    if x == 0 {
        0
    } else {
        x.leading_zeros() + 1
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Text,
    Binary,
    Ip,
    Pdf,
}

impl AggregateCounter {
    fn new_node(&mut self, n: Node) -> u32 {
        if let Some(i) = self.free.pop() {
            self.nodes[i as usize] = n;
            i
        } else {
            self.nodes.push(n);
            (self.nodes.len() - 1) as u32
        }
    }

    fn clear(&mut self) {
        self.nodes.clear();
        self.free.clear();
        self.root = self.new_node(Node {
            aggregate: 0,
            count: 0,
            child: [NONE; 2],
        });
        self.num_nonzero = 0;
        self.count = 0;
    }

    fn make_peer(&mut self, a: u32, n: u32) -> u32 {
        let old = self.nodes[n as usize];
        let swivel = ffs_msb(a ^ old.aggregate);
        let bitvalue = ((a >> (32 - swivel)) & 1) as usize;
        let mask = if swivel == 1 {
            0
        } else {
            0xFFFF_FFFFu32 << (33 - swivel)
        };
        let fresh = Node {
            aggregate: a,
            count: 0,
            child: [NONE; 2],
        };
        let (d_new, d_old) = (self.new_node(fresh), self.new_node(old));
        let down = if bitvalue == 0 {
            [d_new, d_old]
        } else {
            [d_old, d_new]
        };
        let d0 = self.nodes[down[0] as usize];
        let agg = d0.aggregate & mask;
        let count = if d0.aggregate == agg {
            self.nodes[down[0] as usize].count = 0;
            d0.count
        } else {
            0
        };
        self.nodes[n as usize] = Node {
            aggregate: agg,
            count,
            child: down,
        };
        if agg == a {
            n
        } else {
            down[bitvalue]
        }
    }

    fn find_node(&mut self, a: u32, frozen: bool) -> Option<u32> {
        let mut n = self.root;
        loop {
            let node = self.nodes[n as usize];
            if node.aggregate == a {
                return (node.count != 0 || !frozen).then_some(n);
            }
            if frozen && node.child[0] == NONE {
                return None;
            }
            if node.child[0] == NONE {
                return Some(self.make_peer(a, n));
            }
            let (c0, c1) = (
                self.nodes[node.child[0] as usize],
                self.nodes[node.child[1] as usize],
            );
            let swivel = ffs_msb(c0.aggregate ^ c1.aggregate);
            if ffs_msb(a ^ node.aggregate) < swivel {
                if frozen {
                    return None;
                }
                return Some(self.make_peer(a, n));
            }
            n = if a & (1u32 << (32 - swivel)) != 0 {
                node.child[1]
            } else {
                node.child[0]
            };
        }
    }

    /// Runs a threshold action.
    fn run_call(&mut self, call: Call, cx: &Ctx) {
        match call {
            Call::Freeze => self.frozen = true,
            Call::Stop => {
                self.active = false;
                cx.please_stop_driver();
            }
            Call::Handler(h) => {
                handlers::call_write_desc(cx, &h);
                // writes the call made back to us were deferred: apply
                // them now, as Click calls them at once
                for (name, value) in cx.take_deferred_writes_to_self() {
                    if let Some(Err(e)) = self.write_handler(&name, &value, cx) {
                        cx.error_line(&format!("While calling '{}.{}':\n  {}", cx.name(), name, e));
                    }
                }
            }
        }
    }

    fn update(&mut self, p: &Packet, frozen: bool, cx: &Ctx) -> bool {
        if !self.active {
            return false;
        }
        let agg = p.anno().u32_at(AGGREGATE_ANNO_OFFSET);
        let Some(n) = self.find_node(agg, frozen) else {
            return false;
        };
        let amount = if !self.bytes {
            let extra = if self.use_packet_count {
                p.anno().u32_at(EXTRA_PACKETS_ANNO_OFFSET)
            } else {
                0
            };
            1u32.wrapping_add(extra)
        } else {
            let extra = if self.use_extra_length {
                p.anno().u32_at(EXTRA_LENGTH_ANNO_OFFSET)
            } else {
                0
            };
            let mut a = (p.len() as u32).wrapping_add(extra);
            if self.ip_bytes {
                if let Some(off) = p.network_header_offset() {
                    a = a.wrapping_sub(off as u32);
                }
            }
            a
        };
        if amount != 0 && self.nodes[n as usize].count == 0 {
            if self.num_nonzero >= self.call_nnz {
                self.call_nnz = NONE;
                if let Some(c) = self.call_nnz_h.clone() {
                    self.run_call(c, cx);
                }
                // the call may have changed our state
                let f = frozen || self.frozen;
                return self.update(p, f, cx);
            }
            self.num_nonzero += 1;
        }
        let node = &mut self.nodes[n as usize];
        node.count = node.count.wrapping_add(amount);
        self.count = self.count.wrapping_add(u64::from(amount));
        if self.count >= self.call_count {
            self.call_count = u64::MAX;
            if let Some(c) = self.call_count_h.clone() {
                self.run_call(c, cx);
            }
        }
        true
    }

    /// The nonzero counts, in increasing aggregate order (the trie's
    /// preorder), or with `all` every node's.
    fn walk(&self, all: bool) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let mut stack = alloc::vec![self.root];
        while let Some(n) = stack.pop() {
            let node = self.nodes[n as usize];
            if all || node.count > 0 {
                out.push((node.aggregate, node.count));
            }
            if node.child[0] != NONE {
                stack.push(node.child[1]);
                stack.push(node.child[0]);
            }
        }
        out
    }

    fn reaggregate(&mut self) {
        let counts = self.walk(true);
        self.clear();
        for (_, c) in counts {
            if let Some(n) = self.find_node(c, false) {
                let node = &mut self.nodes[n as usize];
                if node.count == 0 {
                    self.num_nonzero += 1;
                }
                node.count = node.count.wrapping_add(1);
                self.count += 1;
            }
        }
    }

    fn render(&self, format: Format) -> Vec<u8> {
        let mut out: Vec<u8> = Vec::new();
        out.extend_from_slice(b"!IPAggregate 1.0\n");
        out.extend_from_slice(self.banner.as_bytes());
        if !self.banner.is_empty() && !self.banner.ends_with('\n') {
            out.push(b'\n');
        }
        out.extend_from_slice(format!("!num_nonzero {}\n", self.num_nonzero).as_bytes());
        match format {
            Format::Binary => out.extend_from_slice(b"!packed_le\n"),
            Format::Ip => out.extend_from_slice(b"!ip\n"),
            _ => {}
        }
        for (a, c) in self.walk(false) {
            match format {
                Format::Binary => {
                    out.extend_from_slice(&a.to_le_bytes());
                    out.extend_from_slice(&c.to_le_bytes());
                }
                Format::Text => out.extend_from_slice(format!("{} {}\n", a, c).as_bytes()),
                Format::Ip => out.extend_from_slice(
                    format!("{} {}\n", core::net::Ipv4Addr::from(a), c).as_bytes(),
                ),
                Format::Pdf => out.extend_from_slice(
                    format!(
                        "{} {}\n",
                        a,
                        unparse::fmt_double(f64::from(c) / self.count as f64)
                    )
                    .as_bytes(),
                ),
            }
        }
        out
    }

    fn write_out(&self, value: &str, format: Format, cx: &Ctx) -> HandlerResult<()> {
        let words = args::split_words(&handlers::clean(value));
        let [file] = words.as_slice() else {
            return Err("argument should be filename".into());
        };
        let file = args::unquote(file);
        if file.is_empty() {
            return Err("argument should be filename".into());
        }
        let data = self.render(format);
        if file == "-" {
            cx.stdout_bytes(&data);
            Ok(())
        } else {
            cx.write_file_bytes(&file, false, &data)
        }
    }
}

fn parse_call(v: &str, what: &str) -> Result<(u64, String), String> {
    let mut rest = handlers::clean(v);
    let n = args::shift_word(&mut rest);
    match args::parse_u64(&n) {
        Ok(n) if !rest.trim().is_empty() => Ok((n, rest.trim().into())),
        _ => Err(what.into()),
    }
}

impl Element for AggregateCounter {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let bytes = a.read::<bool>("BYTES")?.unwrap_or(false);
        let ip_bytes = a.read::<bool>("IP_BYTES")?.unwrap_or(false);
        let packet_count = a.read::<bool>("MULTIPACKET")?.unwrap_or(true);
        let extra_length = a.read::<bool>("EXTRA_LENGTH")?.unwrap_or(true);
        let freeze_nnz = a.read::<u32>("AGGREGATE_FREEZE")?;
        let freeze_count = a.read::<u64>("COUNT_FREEZE")?;
        let stop_nnz = a.read::<u32>("AGGREGATE_STOP")?;
        let stop_count = a.read::<u64>("COUNT_STOP")?;
        let call_nnz = a.read::<RawString>("AGGREGATE_CALL")?.map(|r| r.0);
        let call_count = a.read::<RawString>("COUNT_CALL")?.map(|r| r.0);
        let banner = a.read::<String>("BANNER")?.unwrap_or_default();
        a.complete()?;
        let n = |x: bool| usize::from(x);
        if n(freeze_nnz.is_some()) + n(stop_nnz.is_some()) + n(call_nnz.is_some()) > 1 {
            return Err(
                "'AGGREGATE_FREEZE', 'AGGREGATE_STOP', and 'AGGREGATE_CALL' are mutually exclusive"
                    .into(),
            );
        }
        let (nnz, nnz_h) = if let Some(v) = freeze_nnz {
            (v, Some(Call::Freeze))
        } else if let Some(v) = stop_nnz {
            (v, Some(Call::Stop))
        } else if let Some(c) = call_nnz {
            let (v, h) = parse_call(
                &c,
                "AGGREGATE_CALL first word should be unsigned (number of aggregates)",
            )?;
            let v = u32::try_from(v).map_err(|_| {
                String::from("AGGREGATE_CALL first word should be unsigned (number of aggregates)")
            })?;
            (v, Some(Call::Handler(h)))
        } else {
            (NONE, None)
        };
        if n(freeze_count.is_some()) + n(stop_count.is_some()) + n(call_count.is_some()) > 1 {
            return Err(
                "'COUNT_FREEZE', 'COUNT_STOP', and 'COUNT_CALL' are mutually exclusive".into(),
            );
        }
        let (cnt, cnt_h) = if let Some(v) = freeze_count {
            (v, Some(Call::Freeze))
        } else if let Some(v) = stop_count {
            (v, Some(Call::Stop))
        } else if let Some(c) = call_count {
            let (v, h) = parse_call(&c, "COUNT_CALL first word should be unsigned (count)")?;
            (v, Some(Call::Handler(h)))
        } else {
            (u64::MAX, None)
        };
        *self = AggregateCounter {
            bytes,
            ip_bytes,
            use_packet_count: packet_count,
            use_extra_length: extra_length,
            banner,
            call_nnz: nnz,
            call_nnz_h: nnz_h,
            call_count: cnt,
            call_count_h: cnt_h,
            ..AggregateCounter::default()
        };
        Ok(())
    }

    fn push(&mut self, port: usize, p: Packet, cx: &Ctx) {
        let frozen = self.frozen || port == 1;
        let counted = self.update(&p, frozen, cx);
        let out = if cx.noutputs() == 1 {
            0
        } else {
            usize::from(!counted)
        };
        cx.push(out, p);
    }

    fn pull(&mut self, port: usize, cx: &Ctx) -> Option<Packet> {
        let p = cx.pull(if cx.ninputs() == 1 { 0 } else { port })?;
        let frozen = self.frozen || port == 1;
        self.update(&p, frozen, cx);
        Some(p)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        let call_text = |n: u64, h: &Option<Call>, me: &str| match h {
            Some(Call::Freeze) => format!("{} {}.freeze true", n, me),
            Some(Call::Stop) => format!("{} {}.stop", n, me),
            Some(Call::Handler(s)) => format!("{} {}", n, s),
            None => String::new(),
        };
        Some(Ok(match name {
            "freeze" => format!("{}", self.frozen),
            "active" => format!("{}", self.active),
            "banner" => self.banner.clone(),
            "count" => format!("{}", self.count),
            "nagg" => format!("{}", self.num_nonzero),
            "aggregate_call" if self.call_nnz == NONE => String::new(),
            "aggregate_call" => call_text(u64::from(self.call_nnz), &self.call_nnz_h, _cx.name()),
            "count_call" if self.call_count == u64::MAX => String::new(),
            "count_call" => call_text(self.call_count, &self.call_count_h, _cx.name()),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        let format = match name {
            "write_text_file" | "write_ascii_file" => Some(Format::Text),
            "write_file" => Some(Format::Binary),
            "write_ip_file" => Some(Format::Ip),
            "write_pdf_file" => Some(Format::Pdf),
            _ => None,
        };
        if let Some(f) = format {
            return Some(self.write_out(value, f, cx));
        }
        Some(match name {
            "freeze" | "active" => match handlers::parse_bool(value) {
                Some(v) => {
                    if name == "freeze" {
                        self.frozen = v;
                    } else {
                        self.active = v;
                    }
                    Ok(())
                }
                None => Err("type mismatch".into()),
            },
            "stop" => {
                self.active = false;
                cx.please_stop_driver();
                Ok(())
            }
            "reaggregate_counts" | "counts_pdf" => {
                self.reaggregate();
                Ok(())
            }
            "banner" => {
                // raw: the value as written, with a newline added
                self.banner = if value.is_empty() || value == "\n" {
                    String::new()
                } else if value.ends_with('\n') {
                    value.into()
                } else {
                    format!("{}\n", value)
                };
                Ok(())
            }
            "clear" => {
                self.clear();
                Ok(())
            }
            "aggregate_call" => {
                if handlers::clean(value).trim().is_empty() {
                    self.call_nnz = NONE;
                    return Some(Ok(()));
                }
                const E: &str = "argument to 'aggregate_call' should be 'N HANDLER [VALUE]'";
                match parse_call(value, E) {
                    Ok((n, h)) if n < u64::from(NONE) => {
                        self.call_nnz = n as u32;
                        self.call_nnz_h = Some(Call::Handler(h));
                        Ok(())
                    }
                    _ => Err(E.into()),
                }
            }
            "count_call" => {
                if handlers::clean(value).trim().is_empty() {
                    self.call_count = u64::MAX;
                    return Some(Ok(()));
                }
                match parse_call(
                    value,
                    "argument to 'count_call' should be 'N HANDLER [VALUE]'",
                ) {
                    Ok((n, h)) => {
                        self.call_count = n;
                        self.call_count_h = Some(Call::Handler(h));
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            }
            _ => return None,
        })
    }

    crate::element_any!();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insert(ac: &mut AggregateCounter, a: u32, by: u32) {
        let n = ac.find_node(a, false).unwrap();
        if ac.nodes[n as usize].count == 0 {
            ac.num_nonzero += 1;
        }
        ac.nodes[n as usize].count += by;
        ac.count += u64::from(by);
    }

    #[test]
    fn trie_keeps_counts_in_order() {
        let mut ac = AggregateCounter::default();
        let keys = [5u32, 0, 0x8000_0000, 3, 0xFFFF_FFFF, 4, 5, 1 << 20, 0, 7];
        for k in keys {
            insert(&mut ac, k, 1);
        }
        let got = ac.walk(false);
        let mut want: Vec<(u32, u32)> = Vec::new();
        let mut sorted = keys.to_vec();
        sorted.sort();
        for k in sorted {
            match want.last_mut() {
                Some((a, c)) if *a == k => *c += 1,
                _ => want.push((k, 1)),
            }
        }
        assert_eq!(got, want);
        assert_eq!(ac.num_nonzero as usize, want.len());
        // frozen finds only the counted ones
        assert!(ac.find_node(5, true).is_some());
        assert!(ac.find_node(6, true).is_none());
        assert!(ac.find_node(0x7000_0000, true).is_none());
    }

    #[test]
    fn reaggregate_counts_distribution() {
        let mut ac = AggregateCounter::default();
        insert(&mut ac, 1, 2);
        insert(&mut ac, 2, 2);
        insert(&mut ac, 3, 5);
        ac.reaggregate();
        let got = ac.walk(false);
        // counts 2 (twice) and 5 (once); the inner nodes count as 0s
        assert!(got.contains(&(2, 2)));
        assert!(got.contains(&(5, 1)));
    }
}
