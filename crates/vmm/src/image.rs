//! The guest image: parsed once per process from the embedded ELF into a
//! memfd that every VM maps privately over its image range, so text and
//! read-only pages are shared between instances and only pages a guest
//! writes are copied.

use clickos_ring::layout::{IMAGE_GPA, PAGE_SIZE, VNIC_GPA};
use std::os::fd::OwnedFd;
use std::sync::OnceLock;

/// The embedded guest ELF.
pub static GUEST_ELF: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/clickos-guest.elf"));

/// One loadable segment, page-rounded.
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    pub start: u64,
    pub end: u64,
    pub write: bool,
    pub exec: bool,
}

pub struct Image {
    pub fd: OwnedFd,
    pub entry: u64,
    /// Bytes from IMAGE_GPA to the page-aligned end of the last segment.
    pub span: u64,
    pub segments: Vec<Segment>,
    /// Bytes of writable segments (copied on write per instance).
    pub writable: u64,
}

fn u16_at(b: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?))
}

/// A parsed, not yet loaded ELF: entry and (vaddr, memsz, file bytes, flags).
pub struct Elf<'a> {
    pub entry: u64,
    pub loads: Vec<(u64, u64, &'a [u8], u32)>,
}

/// Minimal ELF64 parsing: a static x86-64 executable with PT_LOAD
/// segments at or above IMAGE_GPA.
pub fn parse(b: &[u8]) -> Result<Elf<'_>, String> {
    let bad = |w: &str| format!("guest image: {w}");
    if b.get(0..4) != Some(b"\x7fELF") || b.get(4) != Some(&2) || b.get(5) != Some(&1) {
        return Err(bad("not a little-endian ELF64 file"));
    }
    if u16_at(b, 16) != Some(2) || u16_at(b, 18) != Some(62) {
        return Err(bad("not an x86-64 executable (ET_EXEC)"));
    }
    let entry = u64_at(b, 24).ok_or_else(|| bad("truncated"))?;
    let phoff = u64_at(b, 32).ok_or_else(|| bad("truncated"))? as usize;
    let phentsize = u16_at(b, 54).ok_or_else(|| bad("truncated"))? as usize;
    let phnum = u16_at(b, 56).ok_or_else(|| bad("truncated"))? as usize;
    if phentsize < 56 {
        return Err(bad("bad program header size"));
    }
    let mut loads = Vec::new();
    for i in 0..phnum {
        let o = phoff + i * phentsize;
        let ty = u32_at(b, o).ok_or_else(|| bad("truncated program headers"))?;
        if ty != 1 {
            continue;
        }
        let flags = u32_at(b, o + 4).ok_or_else(|| bad("truncated"))?;
        let off = u64_at(b, o + 8).ok_or_else(|| bad("truncated"))? as usize;
        let vaddr = u64_at(b, o + 16).ok_or_else(|| bad("truncated"))?;
        let filesz = u64_at(b, o + 32).ok_or_else(|| bad("truncated"))? as usize;
        let memsz = u64_at(b, o + 40).ok_or_else(|| bad("truncated"))?;
        let data = b
            .get(off..off.checked_add(filesz).ok_or_else(|| bad("bad segment"))?)
            .ok_or_else(|| bad("segment outside the file"))?;
        if vaddr < IMAGE_GPA
            || memsz < filesz as u64
            || vaddr.checked_add(memsz).is_none_or(|e| e > VNIC_GPA / 2)
        {
            return Err(bad("segment outside the image range"));
        }
        loads.push((vaddr, memsz, data, flags));
    }
    if loads.is_empty() {
        return Err(bad("no loadable segments"));
    }
    Ok(Elf { entry, loads })
}

impl Image {
    pub fn load(elf_bytes: &[u8]) -> Result<Image, String> {
        let elf = parse(elf_bytes)?;
        let end = elf
            .loads
            .iter()
            .map(|l| l.0 + l.1)
            .max()
            .unwrap_or(IMAGE_GPA);
        let span = clickos_ring::layout::align_up(end - IMAGE_GPA, PAGE_SIZE);
        let fd = clickos_sys::memfd(c"clickos-image", span)
            .map_err(|e| format!("guest image: memfd: {e}"))?;
        let mut segments = Vec::new();
        let mut writable = 0;
        let mut sorted: Vec<_> = elf.loads.iter().collect();
        sorted.sort_by_key(|l| l.0);
        let mut prev_end = IMAGE_GPA;
        for &(vaddr, memsz, data, flags) in sorted {
            if vaddr < prev_end {
                return Err("guest image: overlapping segments".into());
            }
            prev_end = vaddr + memsz;
            let off = (vaddr - IMAGE_GPA) as i64;
            let mut done = 0;
            while done < data.len() {
                // SAFETY: pwrite from a valid slice into our memfd.
                let n = unsafe {
                    libc::pwrite(
                        std::os::fd::AsRawFd::as_raw_fd(&fd),
                        data[done..].as_ptr() as *const libc::c_void,
                        data.len() - done,
                        off + done as i64,
                    )
                };
                if n <= 0 {
                    return Err(format!(
                        "guest image: write: {}",
                        std::io::Error::last_os_error()
                    ));
                }
                done += n as usize;
            }
            let seg = Segment {
                start: vaddr & !(PAGE_SIZE - 1),
                end: clickos_ring::layout::align_up(vaddr + memsz, PAGE_SIZE),
                write: flags & 2 != 0,
                exec: flags & 1 != 0,
            };
            if seg.write {
                writable += seg.end - seg.start;
            }
            segments.push(seg);
        }
        for w in segments.windows(2) {
            if w[0].end > w[1].start {
                return Err("guest image: segments share a page".into());
            }
        }
        if !(IMAGE_GPA..IMAGE_GPA + span).contains(&elf.entry) {
            return Err("guest image: entry point outside the image".into());
        }
        Ok(Image {
            fd,
            entry: elf.entry,
            span,
            segments,
            writable,
        })
    }

    /// The embedded guest image, loaded once per process.
    pub fn get() -> Result<&'static Image, String> {
        static IMAGE: OnceLock<Result<Image, String>> = OnceLock::new();
        IMAGE
            .get_or_init(|| Image::load(GUEST_ELF))
            .as_ref()
            .map_err(|e| e.clone())
    }
}
