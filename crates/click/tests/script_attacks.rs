//! Issue 11, item 6, the engine's side: what an outsider can do with
//! Script's handlers through [`Router::read_handler_param`] (what a
//! ControlSocket `READ s.h ARGS` calls).
//!
//! Each test here failed before the hardening: `s.kill` sent the signal.

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
    fn read_file(&self, path: &str) -> Result<String, String> {
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
