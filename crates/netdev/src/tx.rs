//! Sending to an interface: [`Tx`] copies frames into an AF_XDP TX ring or
//! an AF_PACKET TX ring and hands each batch to the kernel with one system
//! call, with one descriptor to poll and counters.

use crate::afpacket::{PacketTx, TxError};
use crate::afxdp::{self, Xsk};
use crate::{DevInfo, Method};
use std::cell::RefCell;
use std::io;
use std::os::fd::RawFd;
use std::rc::Rc;

/// How to send to an interface.
#[derive(Clone, Debug)]
pub struct TxConfig {
    /// AF_XDP, AF_PACKET, or `Auto`: AF_XDP when it works on the device,
    /// else AF_PACKET.
    pub method: Method,
    /// The AF_XDP queue of copy 0.
    pub queue: u32,
    /// This writer is copy `copy` of `copies` writing the interface in
    /// this process (a router's threads): AF_XDP copy k uses queue
    /// `queue + k`.
    pub copy: u32,
    /// How many copies write the interface (1: this one alone).
    pub copies: u32,
}

impl Default for TxConfig {
    fn default() -> Self {
        TxConfig {
            method: Method::Auto,
            queue: 0,
            copy: 0,
            copies: 1,
        }
    }
}

/// What a [`Tx`] has counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxStats {
    /// Frames queued for the kernel.
    pub sent: u64,
    /// Frames refused: shorter than an Ethernet header, or longer than the
    /// device takes.
    pub refused: u64,
}

enum Io {
    Packet(PacketTx),
    /// Shared with an [`crate::Rx`] on the same interface and queue.
    Xdp(Rc<RefCell<Xsk>>),
}

/// A sending socket on one interface.
pub struct Tx {
    io: Io,
    sent: u64,
    refused: u64,
}

impl Tx {
    /// Opens a sending socket on `dev`. `note` hears, in Click's wording,
    /// a fallback to AF_PACKET and why.
    pub fn open(dev: &DevInfo, cfg: &TxConfig, note: &mut dyn FnMut(&str)) -> Result<Tx, String> {
        let io = match cfg.method {
            Method::Packet => Io::Packet(PacketTx::open(dev)?),
            Method::Xdp => match Tx::missing_queue(dev, cfg) {
                Some(e) if cfg.copies > 1 => {
                    note(&format!("using AF_PACKET: {e}"));
                    Io::Packet(PacketTx::open(dev)?)
                }
                Some(e) => return Err(e),
                None => Io::Xdp(afxdp::socket(dev, cfg.queue + cfg.copy)?),
            },
            Method::Auto => {
                let xdp = match Tx::missing_queue(dev, cfg) {
                    Some(e) => Err(e),
                    None => afxdp::socket(dev, cfg.queue + cfg.copy),
                };
                match xdp {
                    Ok(x) => Io::Xdp(x),
                    Err(e) => {
                        note(&format!("using AF_PACKET, AF_XDP unavailable: {e}"));
                        Io::Packet(PacketTx::open(dev)?)
                    }
                }
            }
        };
        Ok(Tx {
            io,
            sent: 0,
            refused: 0,
        })
    }

    /// Why AF_XDP cannot serve this copy: the device has no such queue.
    fn missing_queue(dev: &DevInfo, cfg: &TxConfig) -> Option<String> {
        let q = cfg.queue + cfg.copy;
        let n = dev.tx_queues.max(dev.rx_queues);
        (q >= n).then(|| format!("{} has {n} queue(s), this copy needs queue {q}", dev.name))
    }

    /// Copies a frame into the ring; it goes out at the next
    /// [`Tx::flush`]. [`TxError::Full`]: try again once the kernel has
    /// made room (see [`Tx::method`]).
    pub fn queue(&mut self, frame: &[u8]) -> Result<(), TxError> {
        let r = match &mut self.io {
            Io::Packet(tx) => tx.queue(frame),
            Io::Xdp(x) => x.borrow_mut().queue(frame),
        };
        match r {
            Ok(()) => self.sent += 1,
            Err(TxError::BadLength) => self.refused += 1,
            Err(TxError::Full) => {}
        }
        r
    }

    /// Hands the queued frames to the kernel with one system call. An
    /// error leaves them queued for the next call.
    pub fn flush(&mut self) -> io::Result<()> {
        match &mut self.io {
            Io::Packet(tx) => tx.flush(),
            Io::Xdp(x) => x.borrow_mut().flush(),
        }
    }

    /// Frames queued that the kernel has not taken yet. AF_XDP in copy
    /// mode sends at most 32 frames per call, so call [`Tx::flush`] again
    /// while this is nonzero.
    pub fn unsent(&self) -> usize {
        match &self.io {
            Io::Packet(tx) => tx.unsent(),
            Io::Xdp(x) => x.borrow().tx_unsent() as usize,
        }
    }

    /// Sends a batch: queues frames from the front of `frames` until the
    /// ring is full, then flushes once. Returns how many frames were
    /// taken (queued, or refused for their length and counted) and the
    /// kick's result; the rest did not fit.
    pub fn send(&mut self, frames: &[&[u8]]) -> (usize, io::Result<()>) {
        let mut taken = 0;
        for f in frames {
            if self.queue(f) == Err(TxError::Full) {
                break;
            }
            taken += 1;
        }
        (taken, self.flush())
    }

    /// The descriptor to poll: with AF_PACKET, `POLLOUT` says the ring has
    /// room again; AF_XDP frees frames as the kernel completes them (poll
    /// again after a short wait).
    pub fn fd(&self) -> RawFd {
        match &self.io {
            Io::Packet(tx) => tx.fd(),
            Io::Xdp(x) => x.borrow().fd(),
        }
    }

    /// The method in use: [`Method::Xdp`] or [`Method::Packet`].
    pub fn method(&self) -> Method {
        match self.io {
            Io::Packet(_) => Method::Packet,
            Io::Xdp(_) => Method::Xdp,
        }
    }

    /// The counters.
    pub fn stats(&self) -> TxStats {
        TxStats {
            sent: self.sent,
            refused: self.refused,
        }
    }
}
