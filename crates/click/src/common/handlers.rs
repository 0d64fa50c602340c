//! Handler calls (Click's `HandlerCall`) and handler values.

use crate::prelude::*;
use click_lang::args;

/// Calls a write handler described as `[element.]handler [value]` (Click's
/// HandlerCall), as sources' END_CALL and counters' *_CALL keywords do.
/// The global `stop` handler counts as one stop request.
pub fn call_write_desc(cx: &Ctx, desc: &str) {
    let mut rest = String::from(desc);
    let h = args::shift_word(&mut rest);
    if h == "stop" {
        cx.please_stop_driver();
    } else {
        let _ = cx.call_write(&h, &rest);
    }
}

/// Strips a value for a non-raw write handler (Click's `cp_uncomment`).
pub fn clean(v: &str) -> String {
    args::uncomment(v)
}

/// Parses a handler value with Click's IntArg.
pub fn parse_int(v: &str) -> Option<i64> {
    args::parse_i64(&clean(v)).ok()
}

/// Parses a handler value with Click's BoolArg.
pub fn parse_bool(v: &str) -> Option<bool> {
    args::parse_bool(&clean(v)).ok()
}
