//! Issue 11, item 6: a handler that panics, under the call guard a std host
//! gives the router ([`RouterOptions::call_guard`]), is a handler error; the
//! router runs on, its elements not left busy. And whoever builds a
//! handler value, the router refuses one over [`MAX_HANDLER_VALUE`].

mod common;

use click::prelude::*;
use click::router::{CallGuard, MAX_HANDLER_VALUE};
use common::*;

const COUNTER: &str = "c :: Counter; Idle -> c -> Discard;";

fn failed(r: Result<String, HandlerError>) -> String {
    match r {
        Err(HandlerError::Failed(m)) => m,
        other => panic!("expected a handler error, got {other:?}"),
    }
}

// ---- a test element whose handlers panic ---------------------------------

/// `Boom([PANIC])`: read or write `panic` and it panics; write `emit` and
/// it pushes a packet out of output 0; with PANIC, a packet pushed into it
/// panics too. `count`: packets it took.
#[derive(Default)]
struct Boom {
    panic_on_push: bool,
    count: u64,
}

impl Element for Boom {
    fn configure(&mut self, config: &str, _cx: &ConfigureCtx) -> Result<(), String> {
        self.panic_on_push = config.trim() == "PANIC";
        Ok(())
    }
    fn push(&mut self, _port: usize, _p: Packet, _cx: &Ctx) {
        if self.panic_on_push {
            panic!("boom in push");
        }
        self.count += 1;
    }
    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "panic" => panic!("boom in read"),
            "count" => Some(Ok(self.count.to_string())),
            "big" => Some(Ok("x".repeat(MAX_HANDLER_VALUE + 1))),
            _ => None,
        }
    }
    fn read_handler_param(
        &mut self,
        name: &str,
        param: &str,
        _cx: &Ctx,
    ) -> Option<HandlerResult<String>> {
        (name == "panic").then(|| panic!("boom in read {param}"))
    }
    fn write_handler(&mut self, name: &str, _value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "panic" => panic!("boom in write"),
            "emit" => {
                cx.push(0, cx.pool().make(DEFAULT_HEADROOM, &[0u8; 60], 0));
                Some(Ok(()))
            }
            _ => None,
        }
    }
    click::element_any!();
}

static BOOM: ClassSpec = ClassSpec {
    name: "Boom",
    port_count: "0-1/0-1",
    processing: "h/h",
    group: "test",
    signature: "Boom([PANIC])",
    summary: "Panics in its handlers (tests only).",
    description: "",
    ports: "",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Boom::default()),
};

/// What a std host sets as [`RouterOptions::call_guard`].
fn catch(call: &mut dyn FnMut()) -> Result<(), String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)).map_err(|p| {
        p.downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".into())
    })
}

fn boom_router(guard: Option<CallGuard>) -> Router {
    let mut reg = registry();
    reg.add(&BOOM);
    Router::from_config(
        &format!("{COUNTER} a :: Boom; b :: Boom(PANIC); a -> b; s :: Script(TYPE PASSIVE, return $(a.panic))"),
        "boom.click",
        &[],
        &reg,
        Box::new(VirtualClock::new(Timestamp::from_sec_nsec(1_000_000_000, 0))),
        Box::new(BufferConsole::default()),
        RouterOptions {
            call_guard: guard,
            ..RouterOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("configuration failed:\n{}", e.join("\n")))
}

#[test]
fn a_panicking_handler_is_an_error_under_the_call_guard() {
    let r = boom_router(Some(catch));
    assert_eq!(
        r.read_handler("a.panic"),
        Err(HandlerError::Failed(
            "handler panicked: boom in read".into()
        ))
    );
    assert_eq!(
        r.read_handler_param("a.panic", "now"),
        Err(HandlerError::Failed(
            "handler panicked: boom in read now".into()
        ))
    );
    assert_eq!(
        r.write_handler("a.panic", ""),
        Err(HandlerError::Failed(
            "handler panicked: boom in write".into()
        ))
    );
    // the element is not left busy: its other handlers still answer
    assert_eq!(r.read_handler("a.count").unwrap(), "0");
    // a panic further down, in an element the handler pushed to, leaves
    // neither element busy
    assert_eq!(
        r.write_handler("a.emit", ""),
        Err(HandlerError::Failed(
            "handler panicked: boom in push".into()
        ))
    );
    assert_eq!(r.read_handler("b.count").unwrap(), "0");
    assert_eq!(r.read_handler("a.count").unwrap(), "0");
    // a Script calling it sees an error too, and runs on
    assert_eq!(r.read_handler("s.run").unwrap(), "");
    assert_eq!(r.read_handler("c.count").unwrap(), "0");
    // handler values are capped in the router, whoever builds them
    let m = failed(r.read_handler("a.big"));
    assert!(m.contains("too large"), "{m}");
}

#[test]
fn without_a_guard_the_panic_is_the_hosts() {
    // no_std hosts (the micro-VM guest, panic=abort) have no guard: the
    // panic goes to the host, as before
    let r = boom_router(None);
    let caught = catch(&mut || {
        let _ = r.read_handler("a.panic");
    });
    assert_eq!(caught, Err("boom in read".into()));
    // and the router was left consistent for whoever caught it
    assert_eq!(r.read_handler("a.count").unwrap(), "0");
}
