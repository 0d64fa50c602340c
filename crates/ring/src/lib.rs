//! The one definition of everything a Click instance and its host share:
//!
//! * [`layout`]: the guest-physical memory map, the [`BootInfo`] page, the
//!   hypercall ports;
//! * [`mailbox`]: the control mailbox (handler reads and writes,
//!   configuration installs, stop), its status codes, and both ends of its
//!   protocol ([`HostEnd`], [`GuestEnd`]);
//! * [`ring`]: the single-producer single-consumer vNIC rings (netmap-like
//!   slots, notification suppression).
//!
//! The same layout serves every isolation level: in a KVM micro-VM the
//! control region sits at guest-physical address 0; in a confined process it
//! is a shared memfd mapping; in a thread it is a heap allocation. Everything
//! either side reads from shared memory is validated before use: a
//! misbehaving peer can only hurt itself.
#![no_std]

pub mod layout;
pub mod mailbox;
pub mod ring;

pub use layout::{BootInfo, VnicInfo};
pub use mailbox::{GuestEnd, HostEnd, Mailbox};
