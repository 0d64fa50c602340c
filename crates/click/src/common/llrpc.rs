//! Click's low-level RPCs (click/llrpc.h): numbered calls on an element
//! with a small binary argument, which ControlSocket's `LLRPC` command
//! makes. Numbers are in Click's portable ("network") form: bit 31 data
//! in, bit 30 data out, bits 16..28 the data size, bit 15 safe, bit 14
//! flat (no pointers: callable over a socket), bits 0..14 the call. The
//! data are the C values in this machine's byte order, as in Click.

/// Data flow from the caller to the element.
pub const IOC_IN: u32 = 0x8000_0000;
/// Data flow from the element to the caller.
pub const IOC_OUT: u32 = 0x4000_0000;
/// Safe: may run alongside read handlers.
pub const IOC_SAFE: u32 = 0x0000_8000;
/// Flat: the data hold no pointers.
pub const IOC_FLAT: u32 = 0x0000_4000;

/// The data size an LLRPC number carries.
pub const fn size(command: u32) -> usize {
    ((command >> 16) & 0xFFF) as usize
}

const fn iox(dir: u32, n: u32, size: u32) -> u32 {
    dir | (size << 16) | n
}

/// `CLICK_LLRPC_GET_COUNT`: in a u32 (0 packets, 1 bytes), out the count.
pub const GET_COUNT: u32 = iox(IOC_IN | IOC_OUT | IOC_SAFE | IOC_FLAT, 3, 4);
/// `CLICK_LLRPC_GET_SWITCH`: out the i32 output (or input) selected.
pub const GET_SWITCH: u32 = iox(IOC_OUT | IOC_SAFE | IOC_FLAT, 5, 4);
/// `CLICK_LLRPC_SET_SWITCH`: in the i32 output (or input) to select.
pub const SET_SWITCH: u32 = iox(IOC_IN | IOC_FLAT, 6, 4);

/// `EINVAL`, the answer to an LLRPC an element does not implement or
/// data it rejects.
pub const EINVAL: i32 = 22;

/// The i32 at the start of `data` (this machine's byte order).
pub fn get_i32(data: &[u8]) -> Option<i32> {
    Some(i32::from_ne_bytes(data.get(..4)?.try_into().ok()?))
}

/// Stores `v` at the start of `data`; false if `data` is too short.
pub fn put_i32(data: &mut [u8], v: i32) -> bool {
    match data.get_mut(..4) {
        Some(d) => {
            d.copy_from_slice(&v.to_ne_bytes());
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_clicks() {
        // the numbers Click's ControlSocket-llrpc test sends
        assert_eq!(GET_SWITCH, 0x4004_C005);
        assert_eq!(SET_SWITCH, 0x8004_4006);
        assert_eq!(GET_COUNT, 0xC004_C003);
        assert_eq!(size(SET_SWITCH), 4);
        let mut d = [0u8; 4];
        assert!(put_i32(&mut d, -1));
        assert_eq!(get_i32(&d), Some(-1));
        assert_eq!(get_i32(&d[..3]), None);
    }
}
