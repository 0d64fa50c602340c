//! AlignmentInfo: packet alignment information (accepted and ignored).

use crate::prelude::*;
use alloc::format;

/// `AlignmentInfo(ELEMENT [MODULUS OFFSET ...], ...)`.
#[derive(Default)]
pub struct AlignmentInfo;

pub static SPEC: ClassSpec = ClassSpec {
    name: "AlignmentInfo",
    port_count: "0/0",
    processing: "a/a",
    group: "standard",
    signature: "AlignmentInfo(ELEMENT [MODULUS OFFSET ...], ...)",
    summary: "Specifies alignment information.",
    description: "An information element: tells elements what alignment their input packets \
have. Each argument is an element name followed by pairs of integers, MODULUS and OFFSET, one \
pair per input port (`AlignmentInfo(src 4 2)`). Click's click-align tool writes these; this \
router does not need them (packet data may be read at any alignment), so the arguments are \
checked and otherwise ignored.",
    ports: "none",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(AlignmentInfo),
};

impl Element for AlignmentInfo {
    fn configure(&mut self, config: &str, _cx: &ConfigureCtx) -> Result<(), String> {
        let mut errs: Vec<String> = Vec::new();
        for (i, arg) in click_lang::args::split_args(config).iter().enumerate() {
            let words = click_lang::args::split_words(arg);
            if words.is_empty() {
                continue;
            }
            let ints_ok = words[1..]
                .iter()
                .all(|w| click_lang::args::parse_i64(w).is_ok());
            if words.len().is_multiple_of(2) || !ints_ok {
                errs.push(format!(
                    "argument {}: expected 'ELEMENT [MODULUS OFFSET]...'",
                    i + 1
                ));
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
