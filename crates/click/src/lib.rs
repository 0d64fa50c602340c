//! The Click modular-router engine, `no_std` + `alloc`.
//!
//! The same code runs inside the micro-VM guest, in a sandboxed process,
//! and in tests. A host supplies a [`time::Clock`] and a
//! [`router::Console`], adds its own I/O element classes to a
//! [`registry::Registry`], builds a [`router::Router`] from configuration
//! text, and drives it with [`router::Router::run_pass`].
//!
//! ```
//! use click::prelude::*;
//! let reg = Registry::with_builtin();
//! let clock = Box::new(VirtualClock::new(Timestamp::ZERO));
//! let r = Router::from_config(
//!     "InfiniteSource(LIMIT 5, STOP true) -> c :: Counter -> Discard",
//!     "config", &[], &reg, clock, Box::new(BufferConsole::default()), Default::default(),
//! ).unwrap();
//! r.run_until_idle(&mut |_| {});
//! assert_eq!(r.read_handler("c.count").unwrap(), "5");
//! ```
#![no_std]

extern crate alloc;

pub mod common;
pub mod element;
pub mod elements;
pub mod packet;
pub mod registry;
pub mod router;
pub mod time;

pub use click_classify as classify;
pub use click_lang as lang;
pub use click_wire as wire;

/// The names most hosts and elements need.
pub mod prelude {
    pub use crate::element::{
        push_batch_simple, Batch, ClassSpec, ConfigureCtx, Element, HandlerDoc, HandlerMode,
        HandlerResult, LlrpcCtx,
    };
    pub use crate::packet::{Anno, PacketType, Pool, SharedData, DEFAULT_HEADROOM};
    pub use crate::registry::Registry;
    pub use crate::router::{
        BufferConsole, Console, Ctx, Emitter, HandlerError, Packet, Router, RouterOptions,
        RunState, SignalId, UpstreamSignal,
    };
    pub use crate::time::{Clock, Timestamp, VirtualClock};
    pub use alloc::boxed::Box;
    pub use alloc::string::{String, ToString};
    pub use alloc::vec::Vec;
    pub use click_lang::args::Args;
}

/// The engine's layering: the element library (`src/elements/`) depends
/// on the element API (`element.rs`, `router::Ctx`) and the packet, never
/// the other way round. This test reads the sources of the modules below
/// the element library and fails if one of them names it, which would
/// close an import circle through every element file.
#[cfg(test)]
mod layering {
    extern crate std;
    use alloc::string::String;
    use alloc::vec::Vec;
    use std::path::PathBuf;

    /// Whether `src` (a Rust source file) refers to the element library:
    /// a `crate::elements` (or `super::`/`self::`) path, or `elements` in a
    /// `use` declaration. Comments are ignored.
    fn names_element_library(src: &str) -> bool {
        let code: Vec<&str> = src
            .lines()
            .map(|l| l.find("//").map_or(l, |i| &l[..i]))
            .collect();
        let code = code.join("\n");
        if ["crate::elements", "super::elements", "self::elements"]
            .iter()
            .any(|p| code.contains(p))
        {
            return true;
        }
        code.split(';').any(|stmt| {
            let stmt = stmt.trim_start();
            let is_use =
                stmt.starts_with("use ") || (stmt.starts_with("pub") && stmt.contains(" use "));
            is_use
                && stmt
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|w| w == "elements")
        })
    }

    #[test]
    fn the_check_sees_a_dependency() {
        assert!(names_element_library("for s in crate::elements::all() {}"));
        assert!(names_element_library(
            "use crate::{\n    element::X,\n    elements::all,\n};"
        ));
        assert!(names_element_library("use super::super::elements;"));
        assert!(!names_element_library(
            "// crate::elements::all()\nfor e in &flat.elements {}"
        ));
    }

    #[test]
    fn router_registry_and_element_api_do_not_depend_on_elements() {
        let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files: Vec<PathBuf> = ["registry.rs", "element.rs", "packet.rs", "time.rs"]
            .iter()
            .map(|f| src.join(f))
            .collect();
        let mut dirs = alloc::vec![src.join("router")];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).expect("src/router") {
                let p = e.expect("src/router entry").path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    files.push(p);
                }
            }
        }
        assert!(files.len() > 5, "router sources not found: {files:?}");
        let offenders: Vec<String> = files
            .iter()
            .filter(|f| {
                let text = std::fs::read_to_string(f).expect("readable source");
                names_element_library(&text)
            })
            .map(|f| alloc::format!("{}", f.display()))
            .collect();
        assert!(
            offenders.is_empty(),
            "these files depend on the element library, closing an import circle \
             through every element file (define what they need beside the \
             elements, as Registry::with_builtin is): {offenders:?}"
        );
    }
}
