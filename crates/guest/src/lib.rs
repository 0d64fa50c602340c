//! The ClickOS instance runtime.
//!
//! One runtime serves every isolation level. It reads the [`BootInfo`] from
//! the control region, serves the control [`Mailbox`] (handler reads and
//! writes, configuration installs, stop), runs the installed router with a
//! cooperative scheduler, moves frames between the vNIC rings and the
//! `FromVNIC`/`ToVNIC` elements (and their ClickOS names `FromDevice`/
//! `ToDevice`), and idles through its [`Platform`] when
//! nothing is due. The platform is the only thing that differs: hypercalls
//! in the KVM micro-VM (`src/main.rs`, `x86_64-unknown-none`), eventfds in a
//! confined process or a thread.
#![no_std]

extern crate alloc;

pub mod runtime;
pub mod vnic;

pub use runtime::{registry, run, Platform};
