//! The Click engine as a Linux program: what `clickos run` (Click's
//! `click`) is made of, as a library that a command line, a daemon or a
//! switch can each use.
//!
//! * [`run`] runs a configuration with [`Options`]: the whole driver, as
//!   one call ([`driver`]).
//! * The run loop's parts: the [`clock`] (real time, warpable), the
//!   [`selector`] (descriptors elements want watched), the scheduler loop
//!   with its hooks and signal handling ([`runloop`]), the [`console`].
//! * [`threads`]: `-j N`, the planner that cuts a configuration over
//!   threads and the machinery that joins them.
//! * [`elements`]: the Linux-facing element classes (pcap and IP summary
//!   dumps, ControlSocket, FromDevice/ToDevice over `clickos-netdev`,
//!   KernelTun/KernelTap) and [`elements::registry`], the engine's
//!   classes plus these.
//!
//! Layering: elements reach the driver only through the router's host
//! object and [`selector::selector`]; the run loop and the elements both
//! use the selector and neither uses the other.

pub mod clock;
pub mod config;
pub mod console;
pub mod driver;
pub mod elements;
pub mod handlers;
mod hotswap;
pub mod options;
pub mod runloop;
pub mod selector;
pub mod sys;
pub mod threads;

pub use console::StdConsole;
pub use driver::run;
pub use options::Options;
