//! CGNATMapper: a carrier-grade NAT as an IPRewriter mapper (RFC 4787,
//! RFC 6888). The bindings, blocks and log are `crate::common::cgnat`.

use crate::common::cgnat::{Cgnat, CgnatConfig};
use crate::common::iprw::{Mapper, MapperKind};
use crate::prelude::*;
use alloc::format;
use alloc::rc::Rc;
use click_lang::IpPrefix;
use core::cell::RefCell;

const FLUSH_TIMER: u32 = 0;
const FLUSH_NS: i64 = 100_000_000;

/// `CGNATMapper`.
pub struct CGNATMapper {
    state: Rc<RefCell<Mapper>>,
    log_file: Option<String>,
    /// The log file could not be written (an instance): the console.
    to_console: bool,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "CGNATMapper",
    port_count: "0/0",
    processing: "a/a",
    group: "tcpudp",
    signature: "CGNATMapper(POOL ADDRS, [PORTS L-H, BLOCK N, PER_SUBSCRIBER_BLOCKS N, INSIDE PREFIXES, KEYWORDS])",
    summary: "Carrier-grade NAT mapper for IPRewriter and ICMPPingRewriter (RFC 4787, RFC 6888).",
    description: "A mapper (as RoundRobinIPMapper is one) that makes an IPRewriter a carrier-grade \
NAT. Name it as the INPUTSPEC of the rewriter's inputs from the subscribers and from the \
outside, and of an ICMPPingRewriter's, so that all three protocols share its port blocks:\n\n\
```\n\
cgn :: CGNATMapper(POOL 198.51.100.0/28, PORTS 1024-65535, BLOCK 512,\n\
                   PER_SUBSCRIBER_BLOCKS 4, INSIDE 10.0.0.0/8, LOG /var/log/cgnat.log);\n\
rw :: IPRewriter(cgn, cgn);       // input 0 from the subscribers, 1 from the outside\n\
pr :: ICMPPingRewriter(cgn, drop);\n\
```\n\n\
What it gives beyond Click's patterns:\n\n\
- **Endpoint-independent mapping** (RFC 4787 REQ-1): a subscriber's internal address and port \
(per protocol) get one external address and port, made by its first flow and kept for every \
destination while any flow uses it (a *binding*).\n\
- **Endpoint-independent filtering** (REQ-8): a packet from any outside host to a bound external \
address and port makes a flow to the internal endpoint (`FILTERING false`: only replies come \
in). Packets to the pool that no binding takes are dropped and counted (`filtered`).\n\
- **Paired address pooling** (REQ-2): every binding of a subscriber (an INSIDE source address) \
uses the same pool address, the one its address hashes to (or the next with a free block).\n\
- **Port blocks** (RFC 6888 REQ-4): external ports are given out BLOCK at a time; a subscriber \
holds at most PER_SUBSCRIBER_BLOCKS blocks (a limit of BLOCK x PER_SUBSCRIBER_BLOCKS ports per \
protocol), ports are taken lowest first, and a block is returned when its last binding goes. A \
binding that finds no port is refused: the packet is dropped and counted (`port_failures`, and \
the rewriter's `mapping_failures`).\n\
- **Hairpinning** (REQ-9): a subscriber sending to another's external address and port reaches \
it (on the ROUTPUT), from its own external address and port.\n\
- **Logging** (RFC 6888 REQ-12): a line when a binding is made and when its last flow goes: \
`SECONDS.MS create|delete PROTO subscriber ADDR internal ADDR:PORT external ADDR:PORT`.\n\n\
A binding lives as long as a flow of the rewriter holds it, so the rewriter's timeouts, \
capacity and `clear` decide when bindings go. ICMP errors about NATed flows are translated by \
an ICMPRewriter naming the rewriters. Across a hot reconfiguration (`hotconfig`) the bindings \
and blocks stay when POOL, PORTS and BLOCK are unchanged (the rewriters keep their flows when \
their INPUTSPECs are).\n\nKeywords:\n\n\
- `POOL` (mandatory, repeatable): public addresses: `A`, `A-B`, or a prefix `A/N` (all but the \
network and broadcast addresses for /30 and shorter).\n\
- `PORTS`: the external port range, default `1024-65535`.\n\
- `BLOCK`: ports per block, default 512.\n\
- `PER_SUBSCRIBER_BLOCKS`: blocks a subscriber may hold, default 4.\n\
- `INSIDE` (repeatable): the subscribers' prefixes, default `10.0.0.0/8`, `100.64.0.0/10`, \
`172.16.0.0/12`, `192.168.0.0/16`. New flows from other sources that are not to the pool are \
dropped (`strangers`).\n\
- `FOUTPUT`, `ROUTPUT`: the rewriter outputs towards the outside and the subscribers, default \
0 and 1.\n\
- `HAIRPIN` (boolean): default true. `FILTERING` (boolean): endpoint-independent filtering, \
default true.\n\
- `LOG`: a file the log lines are appended to (every 100 ms); where no file can be written (in \
an instance), the lines go to the console. Without LOG, the `log` handler has the latest 256.",
    ports: "none",
    handlers: &[
        HandlerDoc {
            name: "mappings",
            mode: HandlerMode::Read,
            text: "The bindings, one a line: `PROTO INTERNAL-ADDR:PORT => EXTERNAL-ADDR:PORT flows N`.",
        },
        HandlerDoc {
            name: "subscribers",
            mode: HandlerMode::Read,
            text: "One line per subscriber holding blocks: `SUBSCRIBER POOL-ADDRESS LO-HI ...` (its blocks).",
        },
        HandlerDoc {
            name: "log",
            mode: HandlerMode::Read,
            text: "The latest 256 log lines.",
        },
        HandlerDoc {
            name: "stats",
            mode: HandlerMode::Read,
            text: "`bindings N`, `subscribers N`, `created N`, `deleted N`, `port_failures N`, `pool_failures N`, `filtered N`, `strangers N`, `hairpins N`, one a line (each is also a handler of its own).",
        },
        HandlerDoc {
            name: "bindings",
            mode: HandlerMode::Read,
            text: "Live mappings (internal endpoint to external address and port).",
        },
        HandlerDoc {
            name: "created",
            mode: HandlerMode::Read,
            text: "Mappings created so far.",
        },
        HandlerDoc {
            name: "deleted",
            mode: HandlerMode::Read,
            text: "Mappings deleted so far (their last flow ended).",
        },
        HandlerDoc {
            name: "port_failures",
            mode: HandlerMode::Read,
            text: "Mappings refused: the subscriber's port blocks were all in use.",
        },
        HandlerDoc {
            name: "pool_failures",
            mode: HandlerMode::Read,
            text: "Mappings refused: no public address had a free port block.",
        },
        HandlerDoc {
            name: "filtered",
            mode: HandlerMode::Read,
            text: "Packets to a pool address dropped: no mapping holds that address and port, filtering (FILTERING false) refused a new outside flow, or hairpinning is off.",
        },
        HandlerDoc {
            name: "strangers",
            mode: HandlerMode::Read,
            text: "Packets neither from an INSIDE address nor to the pool (dropped).",
        },
        HandlerDoc {
            name: "hairpins",
            mode: HandlerMode::Read,
            text: "Packets from inside to a public mapping of another inside host, turned around (hairpinning).",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || {
        Box::new(CGNATMapper {
            state: Rc::new(RefCell::new(Mapper {
                kind: MapperKind::RoundRobin { last: 0 },
                specs: Vec::new(),
            })),
            log_file: None,
            to_console: false,
        })
    },
};

/// Parses one POOL word.
fn pool_addrs(w: &str, ac: &click_lang::ArgContext, out: &mut Vec<u32>) -> Result<(), String> {
    let (lo, hi) = if let Some((a, b)) = w.split_once('-') {
        let a = u32::from(ac.ip(a).map_err(|e| format!("POOL: {e}"))?);
        let b = u32::from(ac.ip(b).map_err(|e| format!("POOL: {e}"))?);
        (a, b)
    } else {
        let (a, m) = ac.prefix(w, true).map_err(|e| format!("POOL: {e}"))?;
        let (a, m) = (u32::from(a), u32::from(m));
        if m.leading_ones() + m.trailing_zeros() != 32 {
            return Err("POOL: bad prefix".into());
        }
        let (net, bcast) = (a & m, (a & m) | !m);
        if m.leading_ones() <= 30 {
            (net + 1, bcast - 1)
        } else {
            (net, bcast)
        }
    };
    if hi < lo || hi - lo >= 65536 || out.len() + ((hi - lo) as usize) >= 65536 {
        return Err("POOL: empty or larger than 65536 addresses".into());
    }
    out.extend(lo..=hi);
    Ok(())
}

impl CGNATMapper {
    /// The state the rewriters share.
    pub fn shared(&self) -> Rc<RefCell<Mapper>> {
        self.state.clone()
    }

    fn with<R>(&self, f: impl FnOnce(&Cgnat) -> R) -> Option<R> {
        match &self.state.borrow().kind {
            MapperKind::Cgnat(c) => Some(f(c)),
            _ => None,
        }
    }

    /// Writes the log lines not yet written.
    fn flush(&mut self, cx: &Ctx) {
        let mut text = match &mut self.state.borrow_mut().kind {
            MapperKind::Cgnat(c) => {
                c.unwritten_lines = 0;
                core::mem::take(&mut c.unwritten)
            }
            _ => return,
        };
        let Some(file) = &self.log_file else {
            return;
        };
        if text.is_empty() {
            return;
        }
        let mut written = false;
        if file != "-" && !self.to_console {
            if cx.write_file(file, true, &text).is_ok() {
                written = true;
            } else {
                self.to_console = true;
                cx.error_line(&format!(
                    "{}: cannot write {file}: logging to the console",
                    cx.name()
                ));
            }
        }
        if !written {
            for l in text.lines() {
                cx.error_line(l);
            }
        }
        // the buffer is used again for the next lines
        text.clear();
        if let MapperKind::Cgnat(c) = &mut self.state.borrow_mut().kind {
            if c.unwritten.is_empty() {
                c.unwritten = text;
            }
        }
    }
}

impl Element for CGNATMapper {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let ac = cx.arg_context();
        let pools: Vec<String> = a.read_all("POOL")?;
        let ports: Option<String> = a.read("PORTS")?;
        let block: u16 = a.read("BLOCK")?.unwrap_or(512);
        let per: u32 = a.read("PER_SUBSCRIBER_BLOCKS")?.unwrap_or(4);
        let inside: Vec<IpPrefix> = a.read_all("INSIDE")?;
        let foutput: i32 = a.read("FOUTPUT")?.unwrap_or(0);
        let routput: i32 = a.read("ROUTPUT")?.unwrap_or(1);
        let hairpin: bool = a.read("HAIRPIN")?.unwrap_or(true);
        let eif: bool = a.read("FILTERING")?.unwrap_or(true);
        let log: Option<String> = a.read("LOG")?;
        a.complete()?;
        let mut pool = Vec::new();
        for p in &pools {
            for w in p.split_ascii_whitespace() {
                pool_addrs(w, &ac, &mut pool)?;
            }
        }
        if pool.is_empty() {
            return Err("POOL: missing mandatory argument".into());
        }
        let (port_lo, port_hi) = match ports {
            None => (1024, 65535),
            Some(s) => {
                let r = s.trim().split_once('-').and_then(|(l, h)| {
                    let l = click_lang::parse_i64(l).ok()?;
                    let h = click_lang::parse_i64(h).ok()?;
                    ((1..=65535).contains(&l) && (l..=65535).contains(&h)).then_some(())?;
                    Some((l as u16, h as u16))
                });
                r.ok_or("PORTS: expected 'LOW-HIGH' within 1-65535")?
            }
        };
        if block == 0 || block as u32 > port_hi as u32 - port_lo as u32 + 1 {
            return Err("BLOCK: must be 1 to the size of PORTS".into());
        }
        if per == 0 {
            return Err("PER_SUBSCRIBER_BLOCKS: must be positive".into());
        }
        let inside: Vec<(u32, u32)> = if inside.is_empty() {
            [
                (0x0A00_0000, 0xFF00_0000),
                (0x6440_0000, 0xFFC0_0000),
                (0xAC10_0000, 0xFFF0_0000),
                (0xC0A8_0000, 0xFFFF_0000),
            ]
            .to_vec()
        } else {
            inside
                .iter()
                .map(|p| (u32::from(p.addr), u32::from(p.mask)))
                .collect()
        };
        let cfg = CgnatConfig {
            pool,
            port_lo,
            port_hi,
            block,
            per_subscriber: per,
            inside,
            foutput,
            routput,
            hairpin,
            eif,
        };
        *self.state.borrow_mut() = Mapper {
            kind: MapperKind::Cgnat(alloc::boxed::Box::new(Cgnat::new(cfg))),
            specs: Vec::new(),
        };
        self.log_file = log;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        if self.log_file.is_some() {
            cx.schedule_timer_after(FLUSH_TIMER, FLUSH_NS);
        }
        Ok(())
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        self.flush(cx);
        cx.schedule_timer_after(FLUSH_TIMER, FLUSH_NS);
    }

    fn cleanup(&mut self, cx: &Ctx) {
        self.flush(cx);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        let v = match name {
            "mappings" => self.with(|c| c.table()),
            "subscribers" => self.with(|c| c.subscriber_table()),
            "log" => self.with(|c| {
                let mut s = String::new();
                for l in &c.recent {
                    s.push_str(l);
                    s.push('\n');
                }
                s
            }),
            "stats" => self.with(|c| {
                format!(
                    "bindings {}\nsubscribers {}\ncreated {}\ndeleted {}\nport_failures {}\npool_failures {}\nfiltered {}\nstrangers {}\nhairpins {}\n",
                    c.len(),
                    c.subscribers(),
                    c.created,
                    c.deleted,
                    c.port_failures,
                    c.pool_failures,
                    c.filtered,
                    c.strangers,
                    c.hairpins
                )
            }),
            "bindings" => self.with(|c| c.len().to_string()),
            "created" => self.with(|c| c.created.to_string()),
            "deleted" => self.with(|c| c.deleted.to_string()),
            "port_failures" => self.with(|c| c.port_failures.to_string()),
            "pool_failures" => self.with(|c| c.pool_failures.to_string()),
            "filtered" => self.with(|c| c.filtered.to_string()),
            "strangers" => self.with(|c| c.strangers.to_string()),
            "hairpins" => self.with(|c| c.hairpins.to_string()),
            _ => return None,
        };
        Some(v.ok_or_else(|| "not configured".into()))
    }

    fn instance_handlers(&self) -> Vec<(String, HandlerMode)> {
        [
            "bindings",
            "created",
            "deleted",
            "port_failures",
            "pool_failures",
            "filtered",
            "strangers",
            "hairpins",
        ]
        .iter()
        .map(|n| (n.to_string(), HandlerMode::Read))
        .collect()
    }

    /// Hot swap: the bindings, blocks and counters of a namesake with the
    /// same POOL, PORTS and BLOCK.
    fn take_state(&mut self, old: &mut dyn Element, _cx: &Ctx) {
        let Some(o) = old
            .as_any_mut()
            .and_then(|a| a.downcast_mut::<CGNATMapper>())
        else {
            return;
        };
        if Rc::ptr_eq(&o.state, &self.state) {
            return;
        }
        let mut theirs = o.state.borrow_mut();
        let mut mine = self.state.borrow_mut();
        if let (MapperKind::Cgnat(m), MapperKind::Cgnat(t)) = (&mut mine.kind, &mut theirs.kind) {
            m.take(t);
        }
    }

    crate::element_any!();
}
