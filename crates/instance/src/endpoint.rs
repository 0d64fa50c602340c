//! [`VnicEndpoint`]: the host's end of one vNIC taken for exclusive use,
//! with a batch API and no locks: what a software switch port is built on.
//!
//! One call moves a batch: [`VnicEndpoint::recv`] reads the instance's
//! producer index once, hands every frame to the caller straight from the
//! shared buffer, and publishes the consumer index once;
//! [`VnicEndpoint::queue`] copies a frame into the instance's receive ring
//! without publishing it, and [`VnicEndpoint::flush`] publishes the batch
//! and wakes the instance only if it asked (its `FromVNIC` sleeps with a
//! kick request armed). In the other direction the instance kicks
//! [`VnicEndpoint::kick_fd`] only when [`VnicEndpoint::arm`] asked it to,
//! just before the caller sleeps. A busy pair of rings therefore costs no
//! system call, exit or lock per frame, nor per batch.
//!
//! An instance that corrupts its rings (impossible indices, buffer indices
//! or lengths) is crashed and reported, and the endpoint turns dead: it
//! drops what is queued to it and receives nothing. Its peers lose nothing.

use crate::backend::Ended;
use crate::instance::{Inner, Port};
use clickos_ring::ring::RingError;
use std::os::fd::RawFd;
use std::sync::Arc;

/// Counters of one endpoint (host's view).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VnicStats {
    /// Frames and bytes taken from the instance.
    pub rx_frames: u64,
    pub rx_bytes: u64,
    /// Frames and bytes queued to the instance.
    pub tx_frames: u64,
    pub tx_bytes: u64,
    /// Frames refused: the instance's receive ring was full.
    pub tx_full: u64,
    /// Frames refused: longer than a ring buffer.
    pub tx_oversize: u64,
    /// Wake-ups sent to the instance (it was asleep and asked).
    pub wakes: u64,
}

/// Why [`VnicEndpoint::queue`] refused a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueError {
    /// The instance's receive ring is full.
    Full,
    /// The frame is longer than a ring buffer.
    Oversize,
    /// The instance ended or broke its rings.
    Dead,
}

/// The host's end of vNIC `k`, held exclusively (see the module docs).
/// Dropping it gives the rings back to [`crate::Instance::vnic`].
pub struct VnicEndpoint {
    inner: Arc<Inner>,
    k: usize,
    port: Option<Port>,
    buf_size: usize,
    broken: Option<String>,
    stats: VnicStats,
}

impl VnicEndpoint {
    pub(crate) fn take(inner: &Arc<Inner>, k: usize, count: usize) -> Result<VnicEndpoint, String> {
        if k >= count {
            return Err(format!(
                "no vNIC {k}: instance {} has {count} vNIC{}",
                inner.id,
                if count == 1 { "" } else { "s" }
            ));
        }
        let port = inner.ports[k]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| format!("vNIC {k} of instance {} is already attached", inner.id))?;
        let buf_size = port.tx.buf_size() as usize;
        Ok(VnicEndpoint {
            inner: inner.clone(),
            k,
            port: Some(port),
            buf_size,
            broken: None,
            stats: VnicStats::default(),
        })
    }

    /// The instance's id and the vNIC's index.
    pub fn id(&self) -> (u32, usize) {
        (self.inner.id, self.k)
    }

    /// The longest frame the instance's ring takes.
    pub fn buf_size(&self) -> usize {
        self.buf_size
    }

    pub fn stats(&self) -> VnicStats {
        self.stats
    }

    /// Why the endpoint is dead (the instance corrupted its rings), if it
    /// is.
    pub fn broken(&self) -> Option<&str> {
        self.broken.as_deref()
    }

    /// How the instance ended, once it has.
    pub fn ended(&self) -> Option<Ended> {
        self.inner.ended()
    }

    fn corrupt(&mut self, e: RingError) {
        let RingError::Corrupt(what) = e;
        let why = format!("corrupted ring: vNIC {}: {what}", self.k);
        self.inner.crash(why.clone());
        self.broken = Some(why);
    }

    /// Hands up to `max` frames the instance sent to `f`, each borrowed
    /// straight from the shared buffer; returns how many.
    pub fn recv(&mut self, max: usize, mut f: impl FnMut(&[u8])) -> usize {
        if self.broken.is_some() {
            return 0;
        }
        let Some(p) = self.port.as_mut() else {
            return 0;
        };
        let mut bytes = 0u64;
        let r = p.rx.pop_batch(max.min(u32::MAX as usize) as u32, |d| {
            bytes += d.len() as u64;
            f(d)
        });
        let wake = p.rx.release();
        match r {
            Ok(n) => {
                if wake {
                    self.inner.backend.wake();
                    self.stats.wakes += 1;
                }
                self.stats.rx_frames += n as u64;
                self.stats.rx_bytes += bytes;
                n as usize
            }
            Err(e) => {
                self.corrupt(e);
                0
            }
        }
    }

    /// Frames that fit the instance's receive ring now.
    pub fn room(&self) -> usize {
        match (&self.broken, &self.port) {
            (None, Some(p)) => p.tx.free().unwrap_or(0) as usize,
            _ => 0,
        }
    }

    /// Copies `frame` into the instance's receive ring, unpublished until
    /// [`flush`](Self::flush).
    pub fn queue(&mut self, frame: &[u8]) -> Result<(), QueueError> {
        if self.broken.is_some() {
            return Err(QueueError::Dead);
        }
        if frame.len() > self.buf_size {
            self.stats.tx_oversize += 1;
            return Err(QueueError::Oversize);
        }
        let Some(p) = self.port.as_mut() else {
            return Err(QueueError::Dead);
        };
        match p.tx.push(frame) {
            Ok(true) => {
                self.stats.tx_frames += 1;
                self.stats.tx_bytes += frame.len() as u64;
                Ok(())
            }
            Ok(false) => {
                self.stats.tx_full += 1;
                Err(QueueError::Full)
            }
            Err(e) => {
                self.corrupt(e);
                Err(QueueError::Dead)
            }
        }
    }

    /// Publishes the queued frames; wakes the instance if it asked.
    pub fn flush(&mut self) {
        if let Some(p) = self.port.as_mut() {
            if p.tx.flush() {
                self.inner.backend.wake();
                self.stats.wakes += 1;
            }
        }
    }

    /// Before the caller sleeps: asks the instance to kick
    /// [`kick_fd`](Self::kick_fd) when it sends. True when nothing is
    /// waiting (safe to sleep); false when frames arrived meanwhile.
    pub fn arm(&mut self) -> bool {
        if self.broken.is_some() {
            return true;
        }
        let Some(p) = self.port.as_mut() else {
            return true;
        };
        match p.rx.prepare_to_sleep() {
            Ok(empty) => empty,
            Err(e) => {
                self.corrupt(e);
                true
            }
        }
    }

    /// The descriptor that turns readable when the instance kicks (or
    /// ends). Drain it with [`drain_kick`](Self::drain_kick).
    pub fn kick_fd(&self) -> Option<RawFd> {
        self.inner.backend.kick_fd(self.k)
    }

    /// Resets the kick descriptor after a wake-up.
    pub fn drain_kick(&self) {
        if let Some(fd) = self.kick_fd() {
            let mut v = 0u64;
            // SAFETY: an 8-byte read into a local from an eventfd the
            // backend keeps open for its life (non-blocking: EAGAIN when
            // already zero, which is fine).
            unsafe {
                libc::read(fd, &mut v as *mut u64 as *mut libc::c_void, 8);
            }
        }
    }
}

impl Drop for VnicEndpoint {
    fn drop(&mut self) {
        if let Some(p) = self.port.take() {
            *self.inner.ports[self.k]
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = Some(p);
        }
    }
}
