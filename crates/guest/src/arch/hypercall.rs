//! Hypercalls: `out dx, eax` to the ports of `clickos_ring::layout::port`.
//! The port-I/O exit is the only way out of the guest. The guest runs in
//! ring 3 with IOPL 0: the TSS I/O permission bitmap the VMM writes lets it
//! execute `out` to the hypercall ports and to no other port.

use clickos_ring::layout::port;

/// One hypercall. Not `nomem`: the host reads what the guest staged in
/// shared memory (console page, mailbox) before the call, so the compiler
/// must not sink stores past it.
#[inline(always)]
pub fn out(port: u16, value: u32) {
    // SAFETY: `out` to a hypercall port only exits to the VMM (the TSS
    // I/O bitmap allows exactly these ports);
    // it does not touch guest memory or the stack.
    unsafe {
        core::arch::asm!("out dx, eax", in("dx") port, in("eax") value,
                         options(nostack, preserves_flags));
    }
}

/// Leaves the VM for good.
pub fn exit(code: u32) -> ! {
    out(port::EXIT, code);
    // The host never resumes an exited instance; if it does, spin.
    loop {
        core::hint::spin_loop();
    }
}
