//! The runtime's `Platform` in a micro-VM: TSC clock and hypercalls.

use super::hypercall::out;
use super::panic::ConsoleBuf;
use click::prelude::Timestamp;
use clickos_guest::Platform;
use clickos_ring::layout::{port, CONSOLE_SIZE};
use clickos_ring::BootInfo;

#[derive(Clone)]
pub struct VmPlatform {
    tsc_base: u64,
    epoch_ns: i64,
    /// Nanoseconds per TSC tick, 32.32 fixed point.
    ns_per_tick: u64,
}

impl VmPlatform {
    pub fn new(_control: *mut u8, bi: &BootInfo) -> VmPlatform {
        VmPlatform {
            tsc_base: bi.tsc_base,
            epoch_ns: bi.epoch_ns,
            ns_per_tick: ((1_000_000u128 << 32) / bi.tsc_khz as u128) as u64,
        }
    }
}

impl Platform for VmPlatform {
    #[inline]
    fn now(&self) -> Timestamp {
        // SAFETY: `rdtsc` is allowed at CPL3 (CR4.TSD is clear).
        let tsc = unsafe { core::arch::x86_64::_rdtsc() };
        let ticks = tsc.wrapping_sub(self.tsc_base) as u128;
        let ns = (ticks * self.ns_per_tick as u128) >> 32;
        Timestamp::from_nsec(
            self.epoch_ns
                .saturating_add(ns.min(i64::MAX as u128) as i64),
        )
    }

    fn idle(&self, _deadline: Option<Timestamp>) {
        // The runtime has stored the deadline (ns since the epoch, 0 = none)
        // in `Mailbox::idle_deadline`.
        out(port::IDLE, 0);
    }

    fn notify_host(&self) {
        out(port::CTRL_DONE, 0);
    }

    fn kick(&self, vnic: usize) {
        out(port::KICK, vnic as u32);
    }

    fn console(&self, text: &str) {
        let mut rest = text;
        loop {
            let mut n = rest.len().min(CONSOLE_SIZE);
            while !rest.is_char_boundary(n) {
                n -= 1;
            }
            let (chunk, tail) = rest.split_at(n);
            let mut w = ConsoleBuf { len: 0 };
            let _ = core::fmt::Write::write_str(&mut w, chunk);
            out(port::CONSOLE, w.len as u32);
            if tail.is_empty() {
                return;
            }
            rest = tail;
        }
    }

    fn memory_limited(&self) -> bool {
        true
    }
}
