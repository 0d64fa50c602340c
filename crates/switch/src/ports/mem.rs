//! In-memory ports, for tests and benchmarks: a source that replays a
//! list of frames, and a sink that copies every frame it is sent into a
//! ring of buffers (as a vNIC would) and can keep them for inspection.

use crate::port::{Port, Refused};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Emits `frames` in order, round robin, `total` frames in all
/// (`u64::MAX`: forever).
pub struct MemSource {
    frames: Vec<Vec<u8>>,
    next: usize,
    left: u64,
    sent: Arc<AtomicU64>,
    gate: Option<Arc<std::sync::atomic::AtomicBool>>,
}

impl MemSource {
    pub fn new(frames: Vec<Vec<u8>>, total: u64) -> MemSource {
        MemSource {
            left: if frames.is_empty() { 0 } else { total },
            frames,
            next: 0,
            sent: Arc::new(AtomicU64::new(0)),
            gate: None,
        }
    }

    /// A source that emits nothing until the returned flag is set (so a
    /// test can patch or fill the table first).
    pub fn gated(
        frames: Vec<Vec<u8>>,
        total: u64,
    ) -> (MemSource, Arc<std::sync::atomic::AtomicBool>) {
        let g = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut s = MemSource::new(frames, total);
        s.gate = Some(g.clone());
        (s, g)
    }

    /// Frames emitted so far (readable from any thread).
    pub fn emitted(&self) -> Arc<AtomicU64> {
        self.sent.clone()
    }

    pub fn spec(self) -> crate::PortSpec {
        Box::new(move || Ok(Box::new(self) as Box<dyn Port>))
    }
}

impl Port for MemSource {
    fn kind(&self) -> &'static str {
        "mem"
    }
    fn describe(&self) -> String {
        format!("memory source ({} frames)", self.frames.len())
    }
    fn recv(&mut self, max: usize, f: &mut dyn FnMut(&[u8])) -> usize {
        if self
            .gate
            .as_ref()
            .is_some_and(|g| !g.load(Ordering::Acquire))
        {
            return 0;
        }
        let n = (max as u64).min(self.left) as usize;
        for _ in 0..n {
            f(&self.frames[self.next]);
            self.next += 1;
            if self.next == self.frames.len() {
                self.next = 0;
            }
        }
        self.left -= n as u64;
        self.sent.fetch_add(n as u64, Ordering::Relaxed);
        n
    }
    fn queue(&mut self, _frame: &[u8]) -> Result<(), Refused> {
        Ok(())
    }
    fn flush(&mut self) -> bool {
        false
    }
    fn max_frame(&self) -> usize {
        65535
    }
    fn poll_fd(&self) -> Option<RawFd> {
        None
    }
    fn arm(&mut self) -> bool {
        self.left == 0
            || self
                .gate
                .as_ref()
                .is_some_and(|g| !g.load(Ordering::Acquire))
    }
}

/// What a [`MemSink`] received, shared with the test or benchmark.
#[derive(Default)]
pub struct SinkLog {
    pub frames: AtomicU64,
    pub bytes: AtomicU64,
    /// The frames themselves, when the sink keeps them.
    pub kept: Mutex<Vec<Vec<u8>>>,
}

/// Copies every frame into the next of `slots` buffers of `buf_size`
/// bytes (a ring nobody drains: the copy is the work a real port does),
/// counts them, and keeps up to `keep` of them.
pub struct MemSink {
    bufs: Vec<u8>,
    buf_size: usize,
    slots: usize,
    next: usize,
    keep: usize,
    frames: u64,
    bytes: u64,
    log: Arc<SinkLog>,
}

impl MemSink {
    pub fn new(slots: usize, buf_size: usize, keep: usize) -> MemSink {
        MemSink {
            bufs: vec![0; slots.max(1) * buf_size],
            buf_size,
            slots: slots.max(1),
            next: 0,
            keep,
            frames: 0,
            bytes: 0,
            log: Arc::new(SinkLog::default()),
        }
    }

    pub fn log(&self) -> Arc<SinkLog> {
        self.log.clone()
    }

    pub fn spec(self) -> crate::PortSpec {
        Box::new(move || Ok(Box::new(self) as Box<dyn Port>))
    }
}

impl Port for MemSink {
    fn kind(&self) -> &'static str {
        "mem"
    }
    fn describe(&self) -> String {
        format!("memory sink ({} × {} B)", self.slots, self.buf_size)
    }
    fn recv(&mut self, _max: usize, _f: &mut dyn FnMut(&[u8])) -> usize {
        0
    }
    #[inline]
    fn queue(&mut self, frame: &[u8]) -> Result<(), Refused> {
        if frame.len() > self.buf_size {
            return Err(Refused::Oversize);
        }
        let off = self.next * self.buf_size;
        self.bufs[off..off + frame.len()].copy_from_slice(frame);
        self.next += 1;
        if self.next == self.slots {
            self.next = 0;
        }
        self.frames += 1;
        self.bytes += frame.len() as u64;
        if self.keep > 0 {
            let mut k = self.log.kept.lock().unwrap_or_else(|e| e.into_inner());
            if k.len() < self.keep {
                k.push(frame.to_vec());
            }
        }
        Ok(())
    }
    fn flush(&mut self) -> bool {
        self.log.frames.store(self.frames, Ordering::Relaxed);
        self.log.bytes.store(self.bytes, Ordering::Relaxed);
        false
    }
    fn max_frame(&self) -> usize {
        self.buf_size
    }
    fn poll_fd(&self) -> Option<RawFd> {
        None
    }
}
