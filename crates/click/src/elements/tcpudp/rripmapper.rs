//! RoundRobinIPMapper, and the mapper element SourceIPHashMapper shares.

use crate::common::iprw::{
    parse_pattern_with_ports, ConsistentHash, InputKind, Mapper, MapperKind, PatRef,
};
use crate::prelude::*;
use alloc::format;
use alloc::rc::Rc;
use core::cell::RefCell;

/// A mapper element (Click's IPMapper): its patterns and how it picks one.
/// The rewriters that name it share the state.
pub struct IPMapperElement {
    round_robin: bool,
    state: Rc<RefCell<Mapper>>,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "RoundRobinIPMapper",
    port_count: "0/0",
    processing: "a/a",
    group: "tcpudp",
    signature: "RoundRobinIPMapper(PATTERN1, ..., PATTERNn)",
    summary: "Round-robin mapper for IPRewriter(n).",
    description: "An IPMapper: a rewriter INPUTSPEC that names this element (`IPRewriter(rr)`) \
asks it for new flows' mappings. Each PATTERN is `SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT` \
(or `NAME FOUTPUT ROUTPUT`, a pattern of IPRewriterPatterns); the patterns are tried in \
round-robin order, starting after the one used last, and the first that maps the flow wins \
(its outputs are the flow's). Useful for load balancing.",
    ports: "none",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(IPMapperElement::new(true)),
};

impl IPMapperElement {
    pub fn new(round_robin: bool) -> IPMapperElement {
        IPMapperElement {
            round_robin,
            state: Rc::new(RefCell::new(Mapper {
                kind: MapperKind::RoundRobin { last: 0 },
                specs: Vec::new(),
            })),
        }
    }

    /// The state the rewriters share.
    pub fn shared(&self) -> Rc<RefCell<Mapper>> {
        self.state.clone()
    }
}

impl Element for IPMapperElement {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut args = click_lang::split_args(config);
        let ac = cx.arg_context();
        let mut errs: Vec<String> = Vec::new();
        let mut kind = MapperKind::RoundRobin { last: 0 };
        let mut ids: Vec<u16> = Vec::new();
        let mut specs = Vec::new();
        if self.round_robin {
            if args.is_empty() {
                return Err("no patterns given".into());
            } else if args.len() == 1 {
                cx.warning("only one pattern given");
            }
        } else {
            if args.is_empty() {
                return Err("no hash seed given".into());
            } else if args.len() == 1 {
                return Err("no patterns given".into());
            } else if args.len() == 2 {
                cx.warning("only one pattern given");
            }
            let params: Vec<String> = click_lang::split_words(&args.remove(0));
            if params.len() != 2 {
                return Err("requires 2 config params: numnodes seed".into());
            }
            let nnodes = match click_lang::parse_i64(&params[0]) {
                Ok(n) if n > 0 && n <= 100_000 => n as usize,
                _ => return Err("number of nodes must be an integer".into()),
            };
            let seed = click_lang::parse_i64(&params[1])
                .map_err(|_| String::from("hash seed must be an integer"))?;
            kind = MapperKind::SourceHash(ConsistentHash::new(&[], 0, seed));
            ids.reserve(args.len());
            for a in &args {
                let mut words: Vec<&str> = a.split_ascii_whitespace().collect();
                let id = words
                    .pop()
                    .and_then(|w| click_lang::parse_i64(w).ok())
                    .filter(|&id| (0..=u16::MAX as i64).contains(&id) && !words.is_empty());
                let Some(id) = id else {
                    errs.push("bad server ID in pattern spec".into());
                    continue;
                };
                match parse_pattern_with_ports(&words.join(" "), &ac) {
                    Ok(is) => {
                        specs.push(is);
                        ids.push(id as u16);
                    }
                    Err(e) => errs.push(e),
                }
            }
            if let MapperKind::SourceHash(h) = &mut kind {
                *h = ConsistentHash::new(&ids, nnodes, seed);
            }
        }
        if self.round_robin {
            for a in &args {
                match parse_pattern_with_ports(a, &ac) {
                    Ok(is) => specs.push(is),
                    Err(e) => errs.push(e),
                }
            }
        }
        if !errs.is_empty() {
            return Err(errs.join("\n"));
        }
        *self.state.borrow_mut() = Mapper { kind, specs };
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let mut st = self.state.borrow_mut();
        for is in st.specs.iter_mut() {
            if let InputKind::Pattern(PatRef::Named(n)) = &is.kind {
                match super::iprwpatterns::find_pattern(cx, n) {
                    Some(p) => is.kind = InputKind::Pattern(PatRef::Literal(p)),
                    None => return Err(format!("no such pattern '{n}'")),
                }
            }
        }
        Ok(())
    }

    crate::element_any!();
}
