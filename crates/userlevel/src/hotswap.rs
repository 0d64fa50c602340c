//! `-R`: the `hotconfig` handler, which replaces the running configuration
//! with a new one that takes over the old one's state.

use crate::clock::SystemClock;
use crate::config::parse_for_driver;
use crate::console::StdConsole;
use crate::options::Options;
use crate::runloop::LoopHooks;
use crate::selector::{Host, Selector};
use click::prelude::*;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// `-R`: the driver's `hotconfig` handler. A write parses and initializes
/// the new configuration at once (errors go back to the writer, and the
/// running router carries on); the driver loop then stops at the end of the
/// current pass, the new router takes the state of the old one's elements
/// of the same names (Click's hot swap), and runs in its place.
pub(crate) struct HotSwap {
    pub(crate) me: std::rc::Weak<HotSwap>,
    pub(crate) options: Options,
    pub(crate) registry: Registry,
    pub(crate) console: Rc<StdConsole>,
    pub(crate) vclock: Option<Rc<VirtualClock>>,
    /// The running router's element names and classes.
    pub(crate) classes: RefCell<BTreeMap<String, &'static str>>,
    /// A new router waiting to take over, with its host.
    pub(crate) pending: RefCell<Option<(Router, Rc<Host>)>>,
}

impl HotSwap {
    /// Builds the new router. Errors are the lexer's (no "could not be
    /// initialized" line, as in Click) or the router's (with it).
    fn build(&self, text: &str) -> Result<(Router, Rc<Host>), (Vec<String>, bool)> {
        let o = &self.options;
        let flat = parse_for_driver(text, "<hotconfig>", o, &self.registry)
            .map_err(|errs| (errs, false))?;
        let clock: Box<dyn Clock> = match &self.vclock {
            Some(v) => Box::new(v.clone()),
            None => Box::new(SystemClock),
        };
        let host = Rc::new(Host {
            selector: Selector::default(),
            thread: None,
        });
        // (the router itself goes packet-at-a-time for printing elements)
        let router = Router::from_flat(
            &flat,
            &self.registry,
            clock,
            Box::new((*self.console).clone()),
            RouterOptions {
                host: Some(host.clone() as Rc<dyn std::any::Any>),
                warnings: o.warnings,
                call_guard: Some(crate::runloop::catch_handler_panic),
                hotswap: Some(self.classes.borrow().clone()),
                globals: self
                    .me
                    .upgrade()
                    .map(|h| h as Rc<dyn click::router::GlobalHandlers>),
                ..RouterOptions::default()
            },
        )
        .map_err(|e| (e, true))?;
        Ok((router, host))
    }
}

impl click::router::GlobalHandlers for HotSwap {
    fn list(&self) -> Vec<(&'static str, &'static str)> {
        vec![("hotconfig", "w")]
    }

    fn read(&self, name: &str) -> Option<Result<String, String>> {
        (name == "hotconfig").then(|| Err("'hotconfig' is write-only".to_string()))
    }

    fn write(&self, name: &str, value: &str) -> Option<Result<(), String>> {
        if name != "hotconfig" {
            return None;
        }
        Some(match self.build(value) {
            Ok(new) => {
                if let Some((old, _)) = self.pending.borrow_mut().replace(new) {
                    old.cleanup();
                }
                Ok(())
            }
            Err((mut errs, initializing)) => {
                if initializing {
                    errs.push("Router could not be initialized!".into());
                }
                Err(errs.join("\n"))
            }
        })
    }
}

impl LoopHooks for HotSwap {
    fn check(&self, _router: &Router) -> bool {
        self.pending.borrow().is_none()
    }
    fn idle(&self, _router: &Router) -> bool {
        false
    }
    fn stopped(&self, _router: &Router) {}
    fn before_wait(&self) -> bool {
        self.pending.borrow().is_none()
    }
    fn after_wait(&self) {}
}
