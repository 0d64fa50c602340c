//! IPClassifier: classifies IP packets by contents with tcpdump-like
//! patterns, one per output.

use super::ipfilter::IpMatcher;
use crate::prelude::*;
use alloc::format;
use click_classify::Program;
use click_lang::args::{join_args, split_args};

/// `IPClassifier(PATTERN_1, ..., PATTERN_N)`.
#[derive(Default)]
pub struct IPClassifier {
    m: IpMatcher,
    patterns: Vec<String>,
    changed: bool,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "IPClassifier",
    port_count: "1/-",
    processing: "h/h",
    group: "classify",
    signature: "IPClassifier(PATTERN_1, ..., PATTERN_N)",
    summary: "Classifies IP packets by contents.",
    description: "Classifies IP packets with tcpdump-like patterns, one per output. A packet \
goes to the output of the first pattern it matches and is dropped if none matches. Patterns \
combine primitives (`host ADDR`, `net ADDR/LEN`, `src`/`dst` qualifiers, `proto`/`tcp`/`udp`/\
`icmp`, `port N`, `tcp opt syn`, `icmp type echo`, `ip frag`, `ip unfrag`, header fields such \
as `ip ttl`, `ip len`, `ip tos`, `ip hl`, `ip id`, `tcp win`, byte ranges `ip[OFF:LEN]`, \
`transp[...]`, comparisons `= != < > <= >=`, masks `& MASK`) with `and`/`&&`, `or`/`||`, \
`not`/`!` and parentheses. `-`, `any` and `all` match every packet. Ethernet addresses \
(`src 0:1:2:3:4:5`, `ether dst host ADDR`, `ether src & MASK ADDR`) test the MAC header, from \
the MAC header annotation to the network header, as in IPFilter; without one they are false.\n\n\
Input packets must have their IP header annotation set (CheckIPHeader or MarkIPHeader do \
this); packets without one are dropped.",
    ports: "one input; as many outputs as patterns",
    handlers: &[
        HandlerDoc { name: "program", mode: HandlerMode::Read, text: "The compiled decision program." },
        HandlerDoc {
            name: "patternN",
            mode: HandlerMode::ReadWrite,
            text: "`pattern0`, `pattern1`, ...: the pattern for output N; writing one reconfigures the element.",
        },
    ],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(IPClassifier::default()),
};

fn compile(
    patterns: &[String],
    noutputs: usize,
    cx: &click_lang::ArgContext,
) -> Result<Program, String> {
    if patterns.len() != noutputs {
        return Err(format!("need {} arguments, one per output port", noutputs));
    }
    let pats: Vec<&str> = patterns.iter().map(|s| s.as_str()).collect();
    Program::compile_ip_classifier_in(&pats, cx)
}

impl Element for IPClassifier {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let conf = split_args(config);
        let prog = compile(&conf, cx.noutputs, &cx.arg_context())?;
        self.m.prog = Some(prog);
        self.m.noutputs = cx.noutputs;
        self.patterns = conf;
        self.changed = false;
        Ok(())
    }

    #[inline]
    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        self.m.push(p, cx);
    }

    #[inline]
    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        self.m.push_batch(batch, cx);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        if name == "program" {
            return Some(Ok(self.m.program()));
        }
        let i: usize = name.strip_prefix("pattern")?.parse().ok()?;
        self.patterns.get(i).map(|p| Ok(p.clone()))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        let i: usize = name.strip_prefix("pattern")?.parse().ok()?;
        if i >= self.patterns.len() {
            return None;
        }
        let mut pats = self.patterns.clone();
        pats[i] = value.trim().to_string();
        Some(
            compile(&pats, self.m.noutputs, &cx.arg_context()).map(|prog| {
                self.m.prog = Some(prog);
                self.patterns = pats;
                self.changed = true;
            }),
        )
    }

    fn current_config(&self) -> Option<String> {
        self.changed.then(|| join_args(&self.patterns))
    }

    crate::element_any!();
}
