//! The runtime's `Platform` in a micro-VM: TSC clock and hypercalls.

use super::hypercall::out;
use super::panic::ConsoleBuf;
use click::prelude::Timestamp;
use clickos_guest::Platform;
use clickos_ring::layout::{port, BOOTINFO_OFF, CONSOLE_SIZE};
use clickos_ring::BootInfo;

#[derive(Clone)]
pub struct VmPlatform {
    /// The boot information page (the control region's alias): its clock
    /// fields are read on every `now`, because the host rewrites them when
    /// it restores the VM from a snapshot (then on another TSC, perhaps
    /// another host's) so that the clock reads the wall clock again.
    boot: usize,
    /// Nanoseconds per TSC tick, 32.32 fixed point.
    ns_per_tick: u64,
}

impl VmPlatform {
    pub fn new(control: *mut u8, bi: &BootInfo) -> VmPlatform {
        VmPlatform {
            boot: control as usize + BOOTINFO_OFF as usize,
            ns_per_tick: ((1_000_000u128 << 32) / bi.tsc_khz as u128) as u64,
        }
    }
}

impl Platform for VmPlatform {
    #[inline]
    fn now(&self) -> Timestamp {
        let bi = self.boot as *const BootInfo;
        // SAFETY: the boot information page is mapped (read-only) for the
        // guest's life; the host writes it only while the guest is stopped.
        let (tsc_base, epoch_ns) = unsafe {
            (
                core::ptr::read_volatile(core::ptr::addr_of!((*bi).tsc_base)),
                core::ptr::read_volatile(core::ptr::addr_of!((*bi).epoch_ns)),
            )
        };
        // SAFETY: `rdtsc` is allowed at CPL3 (CR4.TSD is clear).
        let tsc = unsafe { core::arch::x86_64::_rdtsc() };
        let ticks = tsc.wrapping_sub(tsc_base) as u128;
        let ns = (ticks * self.ns_per_tick as u128) >> 32;
        Timestamp::from_nsec(epoch_ns.saturating_add(ns.min(i64::MAX as u128) as i64))
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
