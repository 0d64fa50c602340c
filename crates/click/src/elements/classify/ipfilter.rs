//! IPFilter: filters IP packets by contents with tcpdump-like rules.

use super::{code_port, dispatch, DROP_PORT};
use crate::prelude::*;
use click_classify::Program;
use click_lang::args::split_args;

/// Packets classified in lockstep (see `Program::matches_n`): their walks
/// are independent chains of dependent loads, which the processor overlaps.
const LANES: usize = 4;

/// Matching core shared by `IPFilter` and `IPClassifier`: a compiled
/// program run on the packet from its network-header annotation.
#[derive(Default)]
pub(crate) struct IpMatcher {
    pub(crate) prog: Option<Program>,
    pub(crate) noutputs: usize,
    ports: Vec<u32>,
}

impl IpMatcher {
    /// The output for `p`, or [`DROP_PORT`]. Packets without a network
    /// header annotation are dropped (Click requires CheckIPHeader or
    /// MarkIPHeader upstream).
    #[inline]
    pub(crate) fn port_for(prog: &Program, noutputs: u32, p: &Packet) -> u32 {
        match p.network_header() {
            Some(d) if prog.needs_mac() => code_port(prog.code_mac(mac_header(p), d), noutputs),
            Some(d) => code_port(prog.code(d), noutputs),
            None => DROP_PORT,
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, p: Packet, cx: &Ctx) {
        let Some(prog) = &self.prog else { return };
        let o = Self::port_for(prog, self.noutputs as u32, &p);
        if o != DROP_PORT {
            cx.push(o as usize, p);
        }
    }

    #[inline]
    pub(crate) fn push_batch(&mut self, batch: Batch, cx: &Ctx) {
        let Some(prog) = &self.prog else { return };
        let n = self.noutputs as u32;
        self.ports.clear();
        self.ports.reserve(batch.len());
        if prog.needs_mac() {
            // Ethernet primitives: the checked walk, one packet at a time
            self.ports
                .extend(batch.iter().map(|p| Self::port_for(prog, n, p)));
            dispatch(batch, &self.ports, cx);
            return;
        }
        // LANES walks at a time (see `Program::codes_n`)
        let mut chunks = batch.chunks_exact(LANES);
        for c in &mut chunks {
            let hs: [Option<&[u8]>; LANES] = core::array::from_fn(|i| c[i].network_header());
            if hs.iter().all(|h| h.is_some()) {
                let r = prog.codes_n(hs.map(|h| h.unwrap_or_default()));
                self.ports.extend(r.map(|r| code_port(r, n)));
            } else {
                self.ports
                    .extend(c.iter().map(|p| Self::port_for(prog, n, p)));
            }
        }
        for p in chunks.remainder() {
            self.ports.push(Self::port_for(prog, n, p));
        }
        dispatch(batch, &self.ports, cx);
    }

    pub(crate) fn program(&self) -> String {
        self.prog.as_ref().map(|p| p.dump()).unwrap_or_default()
    }
}

/// The MAC header Ethernet primitives read: the bytes from the MAC header
/// annotation to the network header; empty if the packet has no MAC header
/// (or it does not come before the network header).
fn mac_header(p: &Packet) -> &[u8] {
    match (
        p.mac_header(),
        p.mac_header_offset(),
        p.network_header_offset(),
    ) {
        (Some(m), Some(mac), Some(net)) if net >= mac => {
            let len = (net - mac) as usize;
            m.get(..len).unwrap_or(m)
        }
        _ => &[],
    }
}

/// `IPFilter(ACTION_1 PATTERN_1, ..., ACTION_N PATTERN_N)`.
#[derive(Default)]
pub struct IPFilter {
    m: IpMatcher,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "IPFilter",
    port_count: "1/-",
    processing: "h/h",
    group: "classify",
    signature: "IPFilter(ACTION_1 PATTERN_1, ..., ACTION_N PATTERN_N)",
    summary: "Filters IP packets by contents.",
    description: "Filters IP packets with ACTION-PATTERN rules, tried in order; the first \
matching rule decides. ACTION is an output port number, `allow` (same as `0`), or `drop` (also \
`deny`). PATTERNs are tcpdump-like expressions as for IPClassifier (`src host 10.0.0.1`, \
`tcp dst port 80`, `icmp type echo`, `ip frag`, `len > 100`, `-`/`all`/`any`, combined with \
`and`, `or`, `not`, parentheses). Packets that match no rule are dropped.\n\n\
Ethernet primitives test the MAC header: a value that is an Ethernet address and not an IP \
address (`src 0:1:2:3:4:5`, `dst 10:20:30:40:50:60`, `host 9:A:B:C:D:E`), or any address after \
the `ether` keyword (`ether src ADDR`, `ether dst host ADDR`, `ether ADDR`), with an optional \
mask (`ether src & ff:ff:ff:0:0:0 0:1:2:0:0:0`) and `=` or `!=`. They read the bytes from the \
MAC header annotation to the network header (set by FromDevice/FromDump or MarkMACHeader); on a \
packet without a MAC header, or one too short for the address, the primitive is false (an \
explicit `not` makes it true). The `program` handler shows their words at offsets below 256, \
counted from 2 bytes before the MAC header, as Click does.\n\n\
Input packets must have their IP header annotation set (CheckIPHeader or MarkIPHeader do \
this); packets without one are dropped.\n\n\
Writing the `config` handler replaces the rules atomically while running; if the new rules \
do not parse, the old ones stay in force.",
    ports: "one input; any number of outputs",
    handlers: &[HandlerDoc {
        name: "program",
        mode: HandlerMode::Read,
        text: "The compiled decision program.",
    }],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(IPFilter::default()),
};

impl Element for IPFilter {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let conf = split_args(config);
        let rules: Vec<&str> = conf.iter().map(|s| s.as_str()).collect();
        let prog = Program::compile_ip_filter_in(&rules, cx.noutputs, &cx.arg_context())?;
        self.m.prog = Some(prog);
        self.m.noutputs = cx.noutputs;
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
        match name {
            "program" => Some(Ok(self.m.program())),
            _ => None,
        }
    }

    crate::element_any!();
}
