//! ScheduleInfo: task scheduling parameters (accepted and checked).

use crate::prelude::*;
use alloc::format;

/// `ScheduleInfo(ELEMENT PARAM, ...)`.
#[derive(Default)]
pub struct ScheduleInfo;

pub static SPEC: ClassSpec = ClassSpec {
    name: "ScheduleInfo",
    port_count: "0/0",
    processing: "a/a",
    group: "standard",
    signature: "ScheduleInfo(ELEMENT PARAM, ...)",
    summary: "Specifies scheduling parameters.",
    description: "Gives tasks relative shares of the CPU: each argument is an element name and a \
real number of tickets (Click's stride scheduling). The arguments are checked, and the \
configuration runs as in Click, but the shares are not enforced: every scheduled task runs once \
per pass of the scheduler, which gives each its turn in order.",
    ports: "none",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(ScheduleInfo),
};

impl Element for ScheduleInfo {
    fn configure(&mut self, config: &str, _cx: &ConfigureCtx) -> Result<(), String> {
        let mut errs: Vec<String> = Vec::new();
        for arg in click_lang::args::split_args(config) {
            let words = click_lang::args::split_words(&arg);
            let ok = words.len() == 2 && click_lang::args::parse_f64(&words[1]).is_ok();
            if !words.is_empty() && !ok {
                errs.push(format!("expected 'ELEMENTNAME PARAM', got '{}'", arg));
            }
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(errs.join("\n"))
        }
    }

    crate::element_any!();
}
