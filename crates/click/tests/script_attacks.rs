//! Issue 11, item 6, the engine's side: what an outsider can do with
//! Script's handlers through [`Router::read_handler_param`] (what a
//! ControlSocket `READ s.h ARGS` calls).
//!
//! Each test here failed before the hardening: `s.kill` sent the signal,
//! `%9223372036854775808d` overflowed (a 9 EB allocation and an abort),
//! `add` wrapped around, `$x$x` doubled until the allocator gave up and
//! `$(run)` recursed until the stack did.

mod common;

use click::prelude::*;
use common::*;
use std::cell::RefCell;
use std::rc::Rc;

/// A console that records the signals a Script asks for instead of
/// sending them, and serves one made-up file.
#[derive(Default)]
struct Recorder {
    text: BufferConsole,
    signals: RefCell<Vec<(i32, i64)>>,
}

impl Console for Recorder {
    fn error_line(&self, line: &str) {
        self.text.error_line(line)
    }
    fn stdout(&self, text: &str) {
        self.text.stdout(text)
    }
    fn read_file(&self, path: &str, _max: usize) -> Result<String, String> {
        Ok(format!("contents of {path}"))
    }
    fn kill(&self, signo: i32, pid: i64) -> Result<(), String> {
        self.signals.borrow_mut().push((signo, pid));
        Ok(())
    }
}

fn recorded(config: &str, opts: RouterOptions) -> (Router, Rc<Recorder>) {
    let console = Rc::new(Recorder::default());
    let router = Router::from_config(
        config,
        "attack.click",
        &[],
        &registry(),
        Box::new(VirtualClock::new(Timestamp::from_sec_nsec(
            1_000_000_000,
            0,
        ))),
        Box::new(console.clone()),
        opts,
    )
    .unwrap_or_else(|e| panic!("configuration failed:\n{}", e.join("\n")));
    (router, console)
}

fn failed(r: Result<String, HandlerError>) -> String {
    match r {
        Err(HandlerError::Failed(m)) => m,
        other => panic!("expected a handler error, got {other:?}"),
    }
}

const COUNTER: &str = "c :: Counter; Idle -> c -> Discard;";

#[test]
fn kill_and_cat_are_private_to_the_script() {
    let (r, console) = recorded(
        &format!("{COUNTER} s :: Script(TYPE PASSIVE, return $(kill 15 4242)$(cat /secret))"),
        RouterOptions::default(),
    );
    // from outside, as a ControlSocket READ (with and without arguments)
    // or `clickos run -h` asks: Click's "no handler named" (h_read_private)
    for (h, p) in [
        ("s.kill", "15 4243"),
        ("s.kill", "9 -1"),
        ("s.cat", "/etc/passwd"),
    ] {
        assert_eq!(
            r.read_handler_param(h, p),
            Err(HandlerError::NoSuchHandler(h.into())),
            "READ {h} {p}"
        );
        assert_eq!(
            r.read_handler(h),
            Err(HandlerError::NoSuchHandler(h.into()))
        );
    }
    assert!(console.signals.borrow().is_empty(), "no signal was sent");
    let listing = r.read_handler("s.handlers").unwrap();
    assert!(
        !listing.contains("kill") && !listing.contains("cat"),
        "{listing}"
    );
    // from inside the configuration, the script itself still can
    assert_eq!(r.read_handler("s.run").unwrap(), "contents of /secret");
    assert_eq!(*console.signals.borrow(), vec![(15, 4242)]);
    assert_eq!(r.read_handler("c.count").unwrap(), "0");
}

#[test]
fn sprintf_widths_and_precisions_are_capped() {
    let t = router(&format!("{COUNTER} s :: Script(TYPE PASSIVE)"));
    let r = &t.router;
    for fmt in [
        "%9223372036854775808d 1",
        "%18446744073709551616d 1",
        "%99999999999d 1",
        "%-99999999999s x",
        "%099999999999x 1",
        "%.99999999999s x",
        "%.9223372036854775808s x",
        "%4097d 1",
        "%.4097s x",
    ] {
        let m = failed(r.read_handler_param("s.sprintf", fmt));
        assert!(m.contains("too large"), "sprintf {fmt}: {m}");
    }
    // the largest width is served
    let v = r.read_handler_param("s.sprintf", "%4096d 7").unwrap();
    assert_eq!((v.len(), v.trim_start()), (4096, "7"));
    assert_eq!(
        r.read_handler_param("s.sprintf", "%-5s| %05d %x %.2s").ok(),
        None,
        "missing arguments are a syntax error"
    );
    assert_eq!(
        r.read_handler_param("s.sprintf", "\"%-5s|%05d|%x|%.2s\" ab -42 255 xyz")
            .unwrap(),
        "ab   |-0042|ff|xy"
    );
    // a number's precision is its least number of digits (C, Click)
    assert_eq!(
        r.read_handler_param("s.sprintf", "\"%.3d|%5.3d|%-6.4x|%.0s|\" 7 -7 255 x")
            .unwrap(),
        "007| -007|00ff  ||"
    );
    // and many conversions together cannot build more than a handler
    // value may hold
    let mut param = String::from("\"");
    param.push_str(&"%4096d".repeat(4200));
    param.push('"');
    param.push_str(&" 1".repeat(4200));
    let m = failed(r.read_handler_param("s.sprintf", &param));
    assert!(m.contains("too large"), "{m}");
    assert_eq!(t.read("c.count"), "0");
}

#[test]
fn arithmetic_is_checked() {
    let t = router(&format!("{COUNTER} s :: Script(TYPE PASSIVE)"));
    let r = &t.router;
    let ok = |h: &str, p: &str| {
        r.read_handler_param(&format!("s.{h}"), p)
            .unwrap_or_else(|e| panic!("{h} {p}: {e}"))
    };
    // overflowing integers go on in floating point (as Click's userlevel
    // Script does for numbers that do not fit), instead of wrapping
    assert_eq!(ok("add", "9223372036854775807 1"), "9.22337203685e+18");
    assert_eq!(ok("sub", "-9223372036854775808 1"), "-9.22337203685e+18");
    assert_eq!(ok("mul", "4294967296 4294967296"), "1.84467440737e+19");
    assert_eq!(ok("mul", "0x100000000 0x100000000"), "1.84467440737e+19");
    assert_eq!(ok("neg", "-9223372036854775808"), "9.22337203685e+18");
    assert_eq!(ok("abs", "-9223372036854775808"), "9.22337203685e+18");
    assert_eq!(ok("add", "1 2 3"), "6");
    assert_eq!(ok("mul", "-3 7"), "-21");
    assert_eq!(ok("mod", "-9223372036854775808 -1"), "0");
    assert_eq!(ok("mod", "-7 3"), "-1");
    assert_eq!(ok("div", "1 0"), "inf");
    assert_eq!(ok("idiv", "7 2"), "3");
    for (h, p) in [
        ("mod", "5 0"),
        ("rem", "5 0"),
        ("idiv", "1 0"),
        ("idiv", "1e300 1"),
        ("idiv", "-9223372036854775808 -0.5"),
    ] {
        let m = failed(r.read_handler_param(&format!("s.{h}"), p));
        assert!(
            m.contains("division by zero") || m.contains("out of range"),
            "{h} {p}: {m}"
        );
    }
    // integers beyond i64 compare exactly, not through doubles
    assert_eq!(ok("lt", "9223372036854775807 9223372036854775808"), "true");
    assert_eq!(
        ok("eq", "18446744073709551615 18446744073709551614"),
        "false"
    );
    assert_eq!(
        ok("gt", "18446744073709551615 -9223372036854775808"),
        "true"
    );
    assert_eq!(
        ok("lt", "1e999 2"),
        "true",
        "not a number: compared as strings"
    );
    assert_eq!(ok("eq", "0x10 16"), "true");
    assert_eq!(t.read("c.count"), "0");
}

#[test]
fn script_values_cannot_grow_without_bound() {
    let t = router(&format!(
        "{COUNTER} d :: Script(TYPE PASSIVE, set x 0123456789abcdef, set n 0, label l, \
         set x $x$x, set n $(add $n 1), goto l $(lt $n 40), return $(length $x)); \
         r :: Script(TYPE PASSIVE, return $(run))"
    ));
    // the doubling stops at the value cap with an error, not at the
    // allocator's limit
    let n: usize = t.read("d.run").parse().unwrap();
    assert!(n <= 16 << 20, "{n}");
    assert!(t.stderr().contains("too large"), "{}", t.stderr());
    // self-recursion ends with an error, not a stack overflow
    assert_eq!(t.read("r.run"), "");
    assert!(t.stderr().contains("nested too deeply"), "{}", t.stderr());
    assert_eq!(t.read("c.count"), "0");
}
