//! Clipboard: copies bytes from one packet into others.

use crate::prelude::*;
use alloc::format;

/// `Clipboard(RANGE1, ..., RANGEn)`.
#[derive(Default)]
pub struct Clipboard {
    /// (offset, length) of each range.
    ranges: Vec<(usize, usize)>,
    clipboard: Vec<u8>,
    /// Packets on input 1 shorter than this pass unchanged.
    min_len: usize,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "Clipboard",
    port_count: "2/2",
    processing: "a/a",
    group: "standard",
    signature: "Clipboard(RANGE1, ..., RANGEn)",
    summary: "Copies data from one packet to another.",
    description: "Takes one or more byte ranges, each written `OFFSET/LENGTH`. A packet \
arriving on input 0 has the bytes of each range copied to the clipboard and leaves unchanged on \
output 0. A packet arriving on input 1 has the clipboard's bytes written back at the same \
ranges and leaves on output 1, so data from one packet can be copied into any number of others \
(or, with Strip and Unstrip, from one place in a packet to another). The clipboard starts out \
zeroed. A packet on input 0 shorter than a range leaves the clipboard bytes it lacks as they \
were; a packet on input 1 shorter than the end of the furthest range passes unchanged. Each \
input/output pair works in push or pull, but both pairs must be the same. Offsets and \
lengths are limited to 65536.",
    ports: "two inputs, two outputs (input i goes to output i)",
    handlers: &[],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(Clipboard::default()),
};

impl Clipboard {
    fn copy(&mut self, p: &Packet) {
        let d = p.data();
        let mut at = 0;
        for &(off, len) in &self.ranges {
            if off < d.len() {
                let n = len.min(d.len() - off);
                self.clipboard[at..at + n].copy_from_slice(&d[off..off + n]);
            }
            at += len;
        }
    }

    fn paste(&self, p: &mut Packet) {
        if p.len() < self.min_len {
            return;
        }
        let d = p.data_mut();
        let mut at = 0;
        for &(off, len) in &self.ranges {
            d[off..off + len].copy_from_slice(&self.clipboard[at..at + len]);
            at += len;
        }
    }

    fn handle(&mut self, port: usize, mut p: Packet) -> Packet {
        if port == 0 {
            self.copy(&p);
        } else {
            self.paste(&mut p);
        }
        p
    }
}

impl Element for Clipboard {
    fn configure(&mut self, config: &str, _cx: &ConfigureCtx) -> Result<(), String> {
        let mut ranges = Vec::new();
        let mut size = 0usize;
        let mut min_len = 0usize;
        for (i, arg) in click_lang::args::split_args(config).iter().enumerate() {
            let slash = arg.find('/');
            let Some(slash) = slash.filter(|&s| s > 0 && s + 1 < arg.len()) else {
                return Err(format!(
                    "range {}: expected '/' between offset and length",
                    i
                ));
            };
            let parse = |s: &str| {
                click_lang::args::parse_u64(s.trim())
                    .ok()
                    .filter(|v| *v <= u64::from(u32::MAX))
            };
            let (Some(off), Some(len)) = (parse(&arg[..slash]), parse(&arg[slash + 1..])) else {
                return Err(format!("range {}: invalid offset or length", i));
            };
            let (off, len) = (off as usize, len as usize);
            if len > 65536 || off > 65536 {
                return Err(format!("range {}: invalid offset or length", i));
            }
            ranges.push((off, len));
            size += len;
            min_len = min_len.max(off + len);
        }
        self.ranges = ranges;
        self.clipboard.resize(size, 0);
        self.min_len = min_len;
        Ok(())
    }

    fn push(&mut self, port: usize, p: Packet, cx: &Ctx) {
        let p = self.handle(port, p);
        cx.push(port, p);
    }

    fn pull(&mut self, port: usize, cx: &Ctx) -> Option<Packet> {
        let p = cx.pull(port)?;
        Some(self.handle(port, p))
    }

    crate::element_any!();
}
