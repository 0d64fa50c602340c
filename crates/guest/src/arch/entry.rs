//! `_start`: align the stack, call into Rust, never return.

use super::{heap, hypercall, platform::VmPlatform};
use clickos_ring::layout::{IMAGE_GPA, PAGE_SIZE, STACK_SIZE};
use clickos_ring::BootInfo;

// The VMM sets RSP to the stack top; whatever its alignment, realign to 16
// and `call` so that Rust code sees RSP ≡ 8 (mod 16) at function entry as
// the SysV ABI requires. RDI (the boot information) is passed through.
core::arch::global_asm!(
    ".section .text._start,\"ax\",@progbits",
    ".global _start",
    "_start:",
    "    and rsp, -16",
    "    xor ebp, ebp",
    "    call {main}",
    "    ud2",
    main = sym guest_main,
);

unsafe extern "C" {
    static __image_end: u8;
}

/// Rust entry.
///
/// # Safety
/// Called once, by `_start`, with the boot information's address.
unsafe extern "C" fn guest_main(boot: *const BootInfo) -> ! {
    // SAFETY: the VMM maps the boot information page (read-only) at the
    // address it passes; it is read once by value.
    let bi: BootInfo = unsafe { core::ptr::read_volatile(boot) };
    if let Err(e) = bi.validate() {
        panic!("boot information: {e}");
    }
    // SAFETY: only the address of the linker symbol is taken.
    let image_end = core::ptr::addr_of!(__image_end) as u64;
    let heap_end = bi.heap_start.checked_add(bi.heap_size);
    let stack_floor = bi.mem_size.checked_sub(STACK_SIZE + PAGE_SIZE);
    match (heap_end, stack_floor) {
        (Some(he), Some(sf)) if bi.heap_start >= image_end && he <= sf => {}
        _ => panic!(
            "boot information: bad heap {:#x}+{:#x} (image {:#x}..{:#x}, memory {:#x})",
            bi.heap_start, bi.heap_size, IMAGE_GPA, image_end, bi.mem_size
        ),
    }
    if bi.tsc_khz == 0 {
        panic!("boot information: TSC frequency unknown");
    }
    if bi.control_base == 0 || !bi.control_base.is_multiple_of(2 << 20) {
        panic!(
            "boot information: bad control region alias {:#x}",
            bi.control_base
        );
    }
    // SAFETY: the range was checked to lie in RAM between the image and the
    // stack guard page; nothing else uses it.
    unsafe { heap::init(bi.heap_start as usize, bi.heap_size as usize) };
    let control = bi.control_base as *mut u8;
    let platform = VmPlatform::new(control, &bi);
    // SAFETY: the VMM maps the control region at `control_base` (the alias
    // of GPA 0) and every vNIC region at the GPA in the boot information.
    let code = unsafe { clickos_guest::run(control, platform) };
    hypercall::exit(code)
}
