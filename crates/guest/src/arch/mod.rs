//! The x86-64 micro-VM platform: entry, heap, clock, hypercalls, panics.
//!
//! The VMM enters `_start` at CPL3 with RDI = the GPA of the boot
//! information and RSP = the top of the stack. The control region is
//! identity-mapped at GPA 0 *and* aliased at `BootInfo::control_base`
//! (non-null), which is what the runtime gets: Rust must never form
//! pointers by offsetting null.

mod entry;
mod heap;
mod hypercall;
mod mem;
mod panic;
mod platform;
