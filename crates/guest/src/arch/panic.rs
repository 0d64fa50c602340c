//! The panic handler: "message at file:line" into the console page, then
//! the PANIC hypercall. The host ends the instance; should it ever resume
//! us, spin. Allocation failures arrive here too (the default no_std
//! allocation-error handler panics with "memory allocation of N bytes
//! failed").

use super::hypercall::out;
use clickos_ring::layout::{port, CONSOLE_OFF, CONSOLE_SIZE};
use core::fmt::Write;

/// Truncating writer into the console page (identity-mapped at its GPA).
pub struct ConsoleBuf {
    pub len: usize,
}

impl ConsoleBuf {
    pub fn page() -> *mut u8 {
        CONSOLE_OFF as usize as *mut u8
    }
}

impl Write for ConsoleBuf {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let n = s.len().min(CONSOLE_SIZE - self.len);
        // SAFETY: the console page is mapped read-write at its GPA and only
        // this single-threaded guest writes it; `len + n <= CONSOLE_SIZE`.
        unsafe {
            core::ptr::copy_nonoverlapping(s.as_ptr(), Self::page().add(self.len), n);
        }
        self.len += n;
        Ok(())
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    let mut w = ConsoleBuf { len: 0 };
    let _ = write!(w, "{}", info.message());
    if let Some(l) = info.location() {
        let _ = write!(w, " at {}:{}", l.file(), l.line());
    }
    out(port::PANIC, w.len as u32);
    loop {
        core::hint::spin_loop();
    }
}
