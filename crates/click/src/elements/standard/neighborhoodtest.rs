//! NeighborhoodTest: lists the elements near it in the router's graph
//! (Click's test of `Router::visit_upstream`/`visit_downstream` with an
//! `ElementNeighborhoodTracker`), through [`Ctx::neighborhood`].

use crate::prelude::*;
use alloc::format;

/// `NeighborhoodTest()`: drops every packet; its handlers walk the graph.
#[derive(Default)]
pub struct NeighborhoodTest {
    ninputs: usize,
    noutputs: usize,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "NeighborhoodTest",
    port_count: "-/-",
    processing: "a/a",
    group: "test",
    signature: "NeighborhoodTest()",
    summary: "Lists the elements near it in the configuration graph.",
    description: "Drops every packet it gets. Its read handlers, which take an optional \
distance D (default 1), list the elements within D connections upstream or downstream of it, one \
name a line, each once, nearest first (at one distance in the order the configuration connects \
them). Every element on the way is crossed from each input to each output (Click's default flow \
`x/x`). The router's own graph walk, the one Click's ElementNeighborhoodTracker does, behind \
Click's regression test standard/neighborhood-01.",
    ports: "any number of inputs and outputs",
    handlers: &[
        HandlerDoc {
            name: "upstream",
            mode: HandlerMode::Read,
            text: "With parameter D (default 1): the elements within D connections upstream of \
any input. `upstreamI` (one per input I): upstream of input I only.",
        },
        HandlerDoc {
            name: "downstream",
            mode: HandlerMode::Read,
            text: "With parameter D (default 1): the elements within D connections downstream of \
any output. `downstreamO` (one per output O): downstream of output O only.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(NeighborhoodTest::default()),
};

impl NeighborhoodTest {
    /// `upstream`, `upstreamI`, `downstream`, `downstreamO`: (downstream,
    /// port) when `name` is one of this element's.
    fn which(&self, name: &str) -> Option<(bool, Option<usize>)> {
        let (down, rest) = if let Some(r) = name.strip_prefix("upstream") {
            (false, r)
        } else {
            (true, name.strip_prefix("downstream")?)
        };
        if rest.is_empty() {
            return Some((down, None));
        }
        if !rest.bytes().all(|b| b.is_ascii_digit()) || (rest.len() > 1 && rest.starts_with('0')) {
            return None;
        }
        let port: usize = rest.parse().ok()?;
        let n = if down { self.noutputs } else { self.ninputs };
        (port < n).then_some((down, Some(port)))
    }

    fn list(&self, name: &str, param: &str, cx: &Ctx) -> Option<HandlerResult<String>> {
        let (down, port) = self.which(name)?;
        let param = click_lang::args::uncomment(param);
        let d = param.trim();
        let diameter = if d.is_empty() {
            1
        } else {
            match d.parse::<i64>() {
                Ok(v) => v.max(0) as usize,
                Err(_) => return Some(Err(String::from("syntax error"))),
            }
        };
        let mut out = String::new();
        for e in cx.neighborhood(port, down, diameter) {
            out.push_str(cx.element_name(e));
            out.push('\n');
        }
        Some(Ok(out))
    }
}

impl Element for NeighborhoodTest {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        self.ninputs = cx.ninputs();
        self.noutputs = cx.noutputs();
        Ok(())
    }

    fn simple_action(&mut self, _p: Packet, _cx: &Ctx) -> Option<Packet> {
        None
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        cx.recycle_batch(batch);
    }

    fn read_handler(&mut self, name: &str, cx: &Ctx) -> Option<HandlerResult<String>> {
        self.list(name, "", cx)
    }

    fn read_handler_param(
        &mut self,
        name: &str,
        param: &str,
        cx: &Ctx,
    ) -> Option<HandlerResult<String>> {
        self.list(name, param, cx)
    }

    fn instance_handlers(&self) -> Vec<(String, HandlerMode)> {
        let ups = (0..self.ninputs).map(|i| (format!("upstream{i}"), HandlerMode::Read));
        let downs = (0..self.noutputs).map(|o| (format!("downstream{o}"), HandlerMode::Read));
        ups.chain(downs).collect()
    }

    crate::element_any!();
}
