//! The micro-VM guest image (`x86_64-unknown-none`). Built by the VMM's
//! build script (`crates/vmm/build.rs`) and embedded in the monitor; on the
//! host target this binary only explains itself.
//!
//! The architecture part lives in [`arch`]: the `_start` entry (ring 3,
//! entered directly by the VMM), the heap allocator, the TSC clock, the
//! hypercalls and the panic handler. Everything else is the portable
//! runtime in the library (`clickos_guest::run`).
#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

#[cfg(target_os = "none")]
extern crate alloc;

#[cfg(target_os = "none")]
mod arch;

#[cfg(not(target_os = "none"))]
fn main() {
    eprintln!(
        "clickos-guest is the micro-VM image; it is built for x86_64-unknown-none \
         and embedded in the clickos binary (see crates/vmm/build.rs)"
    );
    std::process::exit(2);
}
