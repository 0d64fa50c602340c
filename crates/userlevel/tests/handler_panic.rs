//! The driver gives its routers a call guard (issue 11, item 6): a handler
//! that panics is a handler error, and the run goes on to its end. No
//! element of the binary panics on purpose, so the registry here has one.
//! Without the guard the panic would come out of `run`, failing the test.

use click::prelude::*;
use clickos_userlevel::runloop::catch_handler_panic;
use clickos_userlevel::{elements, run, Options, StdConsole};
use std::rc::Rc;

/// `Boom`: reading or writing `panic` panics.
struct Boom;

impl Element for Boom {
    fn configure(&mut self, _config: &str, _cx: &ConfigureCtx) -> Result<(), String> {
        Ok(())
    }
    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        (name == "panic").then(|| panic!("boom in read"))
    }
    fn write_handler(&mut self, name: &str, _value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        (name == "panic").then(|| panic!("boom in write"))
    }
    click::element_any!();
}

static BOOM: ClassSpec = ClassSpec {
    name: "Boom",
    port_count: "0/0",
    processing: "a/a",
    group: "test",
    signature: "Boom",
    summary: "Panics in its handlers (tests only).",
    description: "",
    ports: "",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Boom),
};

/// Runs `config` to its end; the exit handler `s.run` gives the status.
fn run_with_boom(threads: usize) -> i32 {
    let mut registry = elements::registry();
    registry.add(&BOOM);
    // the panic is caught at the handler call, in the middle of the
    // Script's run and of the exit handler's read
    let config = "c :: Counter; InfiniteSource(LIMIT 3, STOP true) -> c -> Discard; \
                  a :: Boom; s :: Script(TYPE PASSIVE, write a.panic, return $(a.panic)$(c.count))";
    let options = Options {
        exit_handler: Some("s.run".into()),
        threads,
        ..Options::default()
    };
    run(
        config,
        "<boom>",
        &options,
        &registry,
        &Rc::new(StdConsole::default()),
    )
}

#[test]
fn a_panicking_handler_does_not_end_the_run() {
    assert_eq!(run_with_boom(1), 3);
}

#[test]
fn nor_on_threads() {
    assert_eq!(run_with_boom(2), 3);
}

#[test]
fn the_guard_reports_the_message() {
    assert_eq!(catch_handler_panic(&mut || {}), Ok(()));
    assert_eq!(
        catch_handler_panic(&mut || panic!("plain")),
        Err("plain".into())
    );
    assert_eq!(
        catch_handler_panic(&mut || panic!("formatted {}", 7)),
        Err("formatted 7".into())
    );
    assert_eq!(
        catch_handler_panic(&mut || std::panic::panic_any(7u8)),
        Err("panic with a non-string payload".into())
    );
}
