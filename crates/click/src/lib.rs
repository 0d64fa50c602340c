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
//!     "<expr>", &[], &reg, clock, Box::new(BufferConsole::default()), Default::default(),
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
        Batch, ClassSpec, ConfigureCtx, Element, HandlerDoc, HandlerMode, HandlerResult,
    };
    pub use crate::packet::{Anno, PacketType, Pool, DEFAULT_HEADROOM};
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
