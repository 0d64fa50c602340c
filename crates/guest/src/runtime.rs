//! The scheduler loop and the mailbox server.

use click::prelude::*;

/// What differs between isolation levels. Cheap to clone (the router's
/// clock and console hold copies).
pub trait Platform: Clone + 'static {
    /// Wall-clock time (the guest derives it from the TSC).
    fn now(&self) -> Timestamp;
    /// Sleeps until the host wakes the instance, `deadline` passes, or
    /// spuriously. The runtime has already published `state = IDLE` and
    /// re-checked the mailbox and rings, so no wake-up is lost.
    fn idle(&self, deadline: Option<Timestamp>);
    /// Tells the host a mailbox reply or a state change is ready (CTRL_DONE).
    fn notify_host(&self);
    /// Tells the host that vNIC `k`'s TX ring has frames it asked for (KICK).
    fn kick(&self, vnic: usize);
    /// Console output (error lines and the router's standard output).
    fn console(&self, text: &str);
    /// Whether the instance's memory is bounded, so that allocating until
    /// failure is safe (the `oom` fault).
    fn memory_limited(&self) -> bool;
}

/// The element registry inside an instance: the engine's elements plus the
/// vNIC elements.
pub fn registry() -> Registry {
    let mut r = Registry::with_builtin();
    crate::vnic::register(&mut r);
    r
}

/// Runs the instance whose control region starts at `control` until a STOP
/// request; returns the exit code.
///
/// # Safety
/// `control` must point to a mapped control region laid out as in
/// `clickos_ring::layout` (boot information already written), valid for
/// the duration of the call; vNIC regions named by the boot information
/// must be mapped at the addresses it gives.
pub unsafe fn run<P: Platform>(_control: *mut u8, _platform: P) -> u32 {
    todo!("runtime")
}
