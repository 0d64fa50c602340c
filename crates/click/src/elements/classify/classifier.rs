//! Classifier: classifies packets by contents (offset/value patterns).

use super::{code_port, dispatch};
use crate::prelude::*;
use alloc::format;
use click_classify::Program;
use click_lang::args::split_args;

/// `Classifier(PATTERN_1, ..., PATTERN_N)`.
pub struct Classifier {
    prog: Option<Program>,
    noutputs: usize,
    ports: Vec<u32>,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "Classifier",
    port_count: "1/-",
    processing: "h/h",
    group: "classify",
    signature: "Classifier(PATTERN_1, ..., PATTERN_N)",
    summary: "Classifies packets by contents.",
    description: "Classifies packets. The Classifier has N outputs, each associated with the \
corresponding pattern. A pattern is a set of space-separated clauses `OFFSET/VALUE` or \
`OFFSET/VALUE%MASK`: the offset is decimal, value and mask are hex with an even number of \
digits (`?` is a don't-care nibble). A clause preceded by `!` must not match. The pattern `-` \
matches every packet. Patterns are tried in order; the packet goes to the output of the first \
matching pattern, and is dropped if none matches.\n\n\
Example: `Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -)` sends ARP requests to \
output 0, ARP replies to 1, IP to 2 and everything else to 3.",
    ports: "one input; as many outputs as patterns",
    handlers: &[HandlerDoc {
        name: "program",
        mode: HandlerMode::Read,
        text: "The compiled decision program (four bytes ANDed with a mask and compared at each step).",
    }],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(Classifier { prog: None, noutputs: 0, ports: Vec::new() }),
};

impl Element for Classifier {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let conf = split_args(config);
        if conf.len() != cx.noutputs {
            return Err(format!(
                "need {} arguments, one per output port",
                cx.noutputs
            ));
        }
        let pats: Vec<&str> = conf.iter().map(|s| s.as_str()).collect();
        let prog = Program::compile_classifier(&pats)?;
        self.prog = Some(prog);
        self.noutputs = cx.noutputs;
        Ok(())
    }

    #[inline]
    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        let Some(prog) = &self.prog else { return };
        if let Some(o) = prog.matches(p.data()) {
            if o < self.noutputs {
                cx.push(o, p);
            }
        }
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        let Some(prog) = &self.prog else { return };
        self.ports.clear();
        let n = self.noutputs as u32;
        self.ports.reserve(batch.len());
        for p in &batch {
            self.ports.push(code_port(prog.code(p.data()), n));
        }
        dispatch(batch, &self.ports, cx);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "program" => Some(Ok(self.prog.as_ref().map(|p| p.dump()).unwrap_or_default())),
            _ => None,
        }
    }

    crate::element_any!();
}
