//! Guest-physical memory map and boot information.
//!
//! | GPA | Size | Contents |
//! |---|---|---|
//! | `0x0000_0000` | 4 KiB | null guard (unmapped) |
//! | `0x0000_1000` | 4 KiB | [`BootInfo`] |
//! | `0x0000_2000` | 4 KiB | control [`Mailbox`](crate::Mailbox) |
//! | `0x0000_3000` | 4 KiB | console / panic staging buffer |
//! | `0x0000_7000` | 4 KiB | GDT + TSS with the I/O permission bitmap (supervisor only) |
//! | `0x0000_8000` | ≤ 32 KiB | page tables (supervisor only) |
//! | `0x0001_0000` | 960 KiB | data area: configuration text, handler payloads |
//! | `0x0010_0000` | image | guest ELF |
//! | after image | heap | heap, then the stack (guard page below) |
//! | `0x4000_0000 + k·16 MiB` | per vNIC | vNIC k: RX ring, TX ring, buffers |
//!
//! The first 1 MiB (up to [`IMAGE_GPA`]) is the *control region*. Outside a
//! VM the same layout is used at some base address, so one runtime serves
//! every isolation level.

/// `BootInfo::magic`: "ClickOS\0" little-endian.
pub const BOOT_MAGIC: u64 = u64::from_le_bytes(*b"ClickOS\0");
/// Bumped on any incompatible change to this crate's layouts.
pub const ABI_VERSION: u32 = 1;

pub const PAGE_SIZE: u64 = 4096;
pub const BOOTINFO_OFF: u64 = 0x1000;
pub const MAILBOX_OFF: u64 = 0x2000;
pub const CONSOLE_OFF: u64 = 0x3000;
pub const CONSOLE_SIZE: usize = 4096;
pub const GDT_GPA: u64 = 0x7000;
/// Page tables start here; the VMM may use up to 0x8000..0x1_0000 (8 pages).
pub const PAGE_TABLE_GPA: u64 = 0x8000;
pub const PAGE_TABLE_SIZE: u64 = 0x8000;
/// Configuration text and handler payloads (both directions).
pub const DATA_OFF: u64 = 0x1_0000;
pub const DATA_SIZE: usize = 0xF_0000;
/// Size of the control region (everything below the image).
pub const CONTROL_SIZE: usize = 0x10_0000;
/// Where the guest image is linked.
pub const IMAGE_GPA: u64 = 0x10_0000;
/// Guest stack size (the page below it is left unmapped as a guard).
pub const STACK_SIZE: u64 = 64 * 1024;
/// First vNIC region; vNIC k lives at `VNIC_GPA + k * VNIC_STRIDE`.
pub const VNIC_GPA: u64 = 0x4000_0000;
pub const VNIC_STRIDE: u64 = 16 << 20;
pub const MAX_VNICS: usize = 8;

/// `BootInfo::flags`: fault-injection elements (the `Crash` element) are
/// available. Set only by tests and benchmarks.
pub const FLAG_FAULT_INJECTION: u32 = 1;

/// Hypercall ports (`out dx, eax`, 32-bit data), Solo5 `hvt` style.
pub mod port {
    /// eax = byte count in the console buffer.
    pub const CONSOLE: u16 = 0x500;
    /// eax = 0; deadline (wall-clock ns since the Unix epoch) in
    /// `Mailbox::idle_deadline`, 0 = none.
    pub const IDLE: u16 = 0x501;
    /// eax = vNIC index (in-kernel ioeventfd).
    pub const KICK: u16 = 0x502;
    /// eax = 0: a mailbox reply or state change is ready (in-kernel ioeventfd).
    pub const CTRL_DONE: u16 = 0x503;
    /// eax = exit code.
    pub const EXIT: u16 = 0x504;
    /// eax = message length in the console buffer.
    pub const PANIC: u16 = 0x505;
    pub const FIRST: u16 = CONSOLE;
    pub const LAST: u16 = PANIC;
}

/// One vNIC as the guest sees it. Offsets are from the vNIC region base.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VnicInfo {
    /// Address of the region (guest-physical in a VM; an address in the
    /// instance's own address space otherwise).
    pub base: u64,
    pub size: u64,
    pub mac: [u8; 6],
    pub _pad: [u8; 2],
    /// Host → guest ring.
    pub rx_off: u32,
    /// Guest → host ring.
    pub tx_off: u32,
    pub slots: u32,
    pub buf_size: u32,
    pub bufs_off: u32,
    pub nbufs: u32,
}

/// The boot information page, written by the host before the first
/// instruction and read-only for the guest afterwards.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BootInfo {
    pub magic: u64,
    pub abi_version: u32,
    pub instance_id: u32,
    /// Where the instance reaches its control region. In a VM the region
    /// sits at GPA 0, and the VMM also maps it at a non-null alias
    /// (`clickos_vmm::CONTROL_ALIAS`) so that the runtime never offsets a
    /// null pointer; this field holds the alias.
    pub control_base: u64,
    /// Guest RAM size in bytes (VM), or the memory limit (process).
    pub mem_size: u64,
    /// Heap placement (the runtime's allocator; 0/0 outside a VM).
    pub heap_start: u64,
    pub heap_size: u64,
    /// TSC frequency in kHz, for the guest clock.
    pub tsc_khz: u64,
    /// The TSC value at which `epoch_ns` was sampled.
    pub tsc_base: u64,
    /// Wall-clock time (ns since the Unix epoch) at `tsc_base`.
    pub epoch_ns: i64,
    pub flags: u32,
    pub nvnics: u32,
    pub vnics: [VnicInfo; MAX_VNICS],
}

impl BootInfo {
    pub const fn empty() -> BootInfo {
        BootInfo {
            magic: BOOT_MAGIC,
            abi_version: ABI_VERSION,
            instance_id: 0,
            control_base: 0,
            mem_size: 0,
            heap_start: 0,
            heap_size: 0,
            tsc_khz: 0,
            tsc_base: 0,
            epoch_ns: 0,
            flags: 0,
            nvnics: 0,
            vnics: [VnicInfo {
                base: 0,
                size: 0,
                mac: [0; 6],
                _pad: [0; 2],
                rx_off: 0,
                tx_off: 0,
                slots: 0,
                buf_size: 0,
                bufs_off: 0,
                nbufs: 0,
            }; MAX_VNICS],
        }
    }

    /// Checks what a guest must be able to trust.
    pub fn validate(&self) -> Result<(), &'static str> {
        if self.magic != BOOT_MAGIC {
            return Err("bad boot magic");
        }
        if self.abi_version != ABI_VERSION {
            return Err("ABI version mismatch");
        }
        if self.nvnics as usize > MAX_VNICS {
            return Err("too many vNICs");
        }
        Ok(())
    }
}

const _: () = assert!(core::mem::size_of::<BootInfo>() <= PAGE_SIZE as usize);

/// The vNIC region layout for `slots` slots of `buf_size` bytes: RX ring,
/// TX ring, then `2 * slots` buffers (RX slot i owns buffer i, TX slot i
/// owns buffer `slots + i`). Returns the filled-in [`VnicInfo`] (base 0).
pub fn vnic_layout(slots: u32, buf_size: u32, mac: [u8; 6]) -> Option<VnicInfo> {
    if !slots.is_power_of_two() || !(64..=4096).contains(&slots) {
        return None;
    }
    if !(256..=65536).contains(&buf_size) || !buf_size.is_multiple_of(64) {
        return None;
    }
    let ring_bytes = crate::ring::ring_bytes(slots);
    let rx_off = 0u32;
    let tx_off = ring_bytes;
    let bufs_off = align_up(2 * ring_bytes as u64, PAGE_SIZE) as u32;
    let nbufs = 2 * slots;
    let size = align_up(bufs_off as u64 + nbufs as u64 * buf_size as u64, PAGE_SIZE);
    if size > VNIC_STRIDE {
        return None;
    }
    Some(VnicInfo {
        base: 0,
        size,
        mac,
        _pad: [0; 2],
        rx_off,
        tx_off,
        slots,
        buf_size,
        bufs_off,
        nbufs,
    })
}

pub const fn align_up(x: u64, a: u64) -> u64 {
    (x + a - 1) & !(a - 1)
}
