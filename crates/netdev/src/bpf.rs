//! The two BPF programs the receivers need, assembled by hand and loaded
//! with the `bpf(2)` system call:
//!
//! - an XDP program that redirects every frame to the AF_XDP socket of
//!   its receive queue through an XSKMAP (and passes it to the kernel when
//!   no socket serves that queue), attached with a BPF link;
//! - a tcx ingress program that drops every frame (a receiver that is not
//!   a sniffer, with AF_PACKET): packet sockets see frames before tcx
//!   ingress runs, so the receiver still gets them but the kernel stack
//!   does not.
//!
//! Both are attached through BPF links, so the kernel detaches them when
//! the last descriptor closes, even if the process dies.

use crate::last_err;
use clickos_sys::Mapping;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex, Weak};

const BPF_MAP_CREATE: i32 = 0;
const BPF_MAP_UPDATE_ELEM: i32 = 2;
const BPF_MAP_DELETE_ELEM: i32 = 3;
const BPF_PROG_LOAD: i32 = 5;
const BPF_LINK_CREATE: i32 = 28;

const BPF_MAP_TYPE_XSKMAP: u32 = 17;
const BPF_PROG_TYPE_SCHED_CLS: u32 = 3;
const BPF_PROG_TYPE_XDP: u32 = 6;
const BPF_XDP: u32 = 37;
const BPF_TCX_INGRESS: u32 = 46;
const BPF_FUNC_REDIRECT_MAP: i32 = 51;
const XDP_PASS: i32 = 2;
const TCX_DROP: i32 = 2;
/// Entries in the XSKMAP (receive queues served).
const XSKMAP_ENTRIES: u32 = 256;

/// One BPF instruction (`struct bpf_insn`).
#[derive(Clone, Copy)]
#[repr(C)]
struct Insn {
    code: u8,
    regs: u8, // dst in the low nibble, src in the high nibble
    off: i16,
    imm: i32,
}

const fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn {
        code,
        regs: (src << 4) | (dst & 15),
        off,
        imm,
    }
}

/// The bpf(2) system call with a 128-byte attribute block.
fn sys_bpf(cmd: i32, attr: &mut [u8; 128]) -> io::Result<i32> {
    // SAFETY: `attr` is a valid, exclusively borrowed 128-byte bpf_attr
    // (zeroed beyond the fields set), whose embedded pointers point to
    // buffers that outlive the call.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), attr.len()) };
    if r < 0 {
        Err(last_err())
    } else {
        Ok(r as i32)
    }
}

fn put32(a: &mut [u8; 128], off: usize, v: u32) {
    a[off..off + 4].copy_from_slice(&v.to_ne_bytes());
}

fn put64(a: &mut [u8; 128], off: usize, v: u64) {
    a[off..off + 8].copy_from_slice(&v.to_ne_bytes());
}

fn owned(fd: i32) -> OwnedFd {
    // SAFETY: `fd` is a descriptor bpf(2) just returned to us.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// Loads a program; on a verifier error the log's last line is returned.
fn prog_load(prog_type: u32, attach: u32, insns: &[Insn], name: &str) -> Result<OwnedFd, String> {
    let license = b"GPL\0";
    let log = Mapping::anonymous_populated(64 << 10).map_err(|e| format!("mmap: {e}"))?;
    let mut a = [0u8; 128];
    put32(&mut a, 0, prog_type);
    put32(&mut a, 4, insns.len() as u32);
    put64(&mut a, 8, insns.as_ptr() as u64);
    put64(&mut a, 16, license.as_ptr() as u64);
    let n = name.len().min(15);
    a[48..48 + n].copy_from_slice(&name.as_bytes()[..n]);
    put32(&mut a, 68, attach);
    match sys_bpf(BPF_PROG_LOAD, &mut a) {
        Ok(fd) => Ok(owned(fd)),
        Err(e)
            if e.raw_os_error() == Some(libc::EACCES) || e.raw_os_error() == Some(libc::EINVAL) =>
        {
            // again with the verifier log, to say why
            let mut a2 = a;
            put32(&mut a2, 24, 1);
            put32(&mut a2, 28, log.len() as u32);
            put64(&mut a2, 32, log.ptr() as u64);
            let r = sys_bpf(BPF_PROG_LOAD, &mut a2);
            // SAFETY: the log mapping is `len` readable bytes, which the
            // kernel has finished writing.
            let text = unsafe { std::slice::from_raw_parts(log.ptr(), log.len()) };
            let end = text.iter().position(|&c| c == 0).unwrap_or(text.len());
            let msg = String::from_utf8_lossy(&text[..end]);
            let last = msg
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .to_string();
            match r {
                Ok(fd) => Ok(owned(fd)),
                Err(_) if !last.is_empty() => {
                    Err(format!("BPF program load: {}: {last}", crate::err_text(&e)))
                }
                Err(_) => Err(format!("BPF program load: {}", crate::err_text(&e))),
            }
        }
        Err(e) => Err(format!("BPF program load: {}", crate::err_text(&e))),
    }
}

fn link_create(prog: RawFd, ifindex: u32, attach: u32) -> io::Result<OwnedFd> {
    let mut a = [0u8; 128];
    put32(&mut a, 0, prog as u32);
    put32(&mut a, 4, ifindex);
    put32(&mut a, 8, attach);
    sys_bpf(BPF_LINK_CREATE, &mut a).map(owned)
}

/// The XDP redirect program attached to one interface, shared by every
/// AF_XDP socket of this process on it (one per receive queue).
pub struct XdpProg {
    map: OwnedFd,
    _prog: OwnedFd,
    _link: OwnedFd,
}

impl XdpProg {
    /// Directs frames received on `queue` to the AF_XDP socket `xsk`.
    pub fn insert(&self, queue: u32, xsk: RawFd) -> io::Result<()> {
        let key = queue;
        let val = xsk as u32;
        let mut a = [0u8; 128];
        put32(&mut a, 0, self.map.as_raw_fd() as u32);
        put64(&mut a, 8, &key as *const u32 as u64);
        put64(&mut a, 16, &val as *const u32 as u64);
        sys_bpf(BPF_MAP_UPDATE_ELEM, &mut a).map(|_| ())
    }

    /// Stops directing `queue`'s frames (they go to the kernel again).
    pub fn remove(&self, queue: u32) {
        let key = queue;
        let mut a = [0u8; 128];
        put32(&mut a, 0, self.map.as_raw_fd() as u32);
        put64(&mut a, 8, &key as *const u32 as u64);
        let _ = sys_bpf(BPF_MAP_DELETE_ELEM, &mut a);
    }
}

/// Attached programs by interface index (shared by the router's copies).
static XDP_PROGS: Mutex<Vec<(u32, Weak<XdpProg>)>> = Mutex::new(Vec::new());

/// The XDP program on `ifindex`, attaching it on first use.
pub fn xdp_prog(ifindex: u32, dev: &str) -> Result<Arc<XdpProg>, String> {
    let mut progs = XDP_PROGS.lock().unwrap_or_else(|p| p.into_inner());
    progs.retain(|(_, w)| w.strong_count() > 0);
    if let Some(p) = progs
        .iter()
        .find(|(i, _)| *i == ifindex)
        .and_then(|(_, w)| w.upgrade())
    {
        return Ok(p);
    }
    let mut a = [0u8; 128];
    put32(&mut a, 0, BPF_MAP_TYPE_XSKMAP);
    put32(&mut a, 4, 4);
    put32(&mut a, 8, 4);
    put32(&mut a, 12, XSKMAP_ENTRIES);
    let map = sys_bpf(BPF_MAP_CREATE, &mut a)
        .map(owned)
        .map_err(|e| format!("BPF XSKMAP create: {}", crate::err_text(&e)))?;
    let fd = map.as_raw_fd();
    // r2 = ctx->rx_queue_index; r1 = map; r3 = XDP_PASS (action when the
    // queue has no socket); call bpf_redirect_map; exit
    let prog = [
        insn(0x61, 2, 1, 16, 0),
        insn(0x18, 1, 1, 0, fd),
        insn(0x00, 0, 0, 0, 0),
        insn(0xb7, 3, 0, 0, XDP_PASS),
        insn(0x85, 0, 0, 0, BPF_FUNC_REDIRECT_MAP),
        insn(0x95, 0, 0, 0, 0),
    ];
    let prog = prog_load(BPF_PROG_TYPE_XDP, BPF_XDP, &prog, "clickos_xsk")?;
    let link =
        link_create(prog.as_raw_fd(), ifindex, BPF_XDP).map_err(|e| match e.raw_os_error() {
            Some(libc::EBUSY) | Some(libc::EEXIST) => {
                format!("{dev}: another XDP program is attached")
            }
            _ => format!("{dev}: XDP attach: {}", crate::err_text(&e)),
        })?;
    let p = Arc::new(XdpProg {
        map,
        _prog: prog,
        _link: link,
    });
    progs.push((ifindex, Arc::downgrade(&p)));
    Ok(p)
}

/// A tcx ingress program that drops everything, detached on drop.
pub struct TcxDrop {
    _prog: OwnedFd,
    _link: OwnedFd,
}

/// Keeps the kernel from processing frames received on `ifindex`
/// (FromDevice's SNIFFER false with AF_PACKET).
pub fn tcx_drop(ifindex: u32, dev: &str) -> Result<TcxDrop, String> {
    let prog = [insn(0xb7, 0, 0, 0, TCX_DROP), insn(0x95, 0, 0, 0, 0)];
    let prog = prog_load(
        BPF_PROG_TYPE_SCHED_CLS,
        BPF_TCX_INGRESS,
        &prog,
        "clickos_drop",
    )?;
    let link = link_create(prog.as_raw_fd(), ifindex, BPF_TCX_INGRESS)
        .map_err(|e| format!("{dev}: tcx ingress attach: {}", crate::err_text(&e)))?;
    Ok(TcxDrop {
        _prog: prog,
        _link: link,
    })
}
