//! What the switch needs from a port, and the counters it keeps for each.

use std::os::fd::RawFd;

/// Why a port refused a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// No room now (a full ring): the frame is dropped, never queued.
    Full,
    /// Longer than the port takes.
    Oversize,
    /// The port is down (its instance ended, its interface went away).
    Down,
}

/// Whether a port can carry frames.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Health {
    Up,
    /// It will never carry frames again; why.
    Down(String),
}

/// One switch port. Ports are built on the switch's own thread (see
/// [`crate::PortSpec`]), so they need not be `Send`.
///
/// The switch calls `recv` with a batch size, hands each frame to the
/// forwarding table and `queue`s it on its destination ports (one copy per
/// frame: from the source's buffer into the destination's), and `flush`es
/// every destination once per round. When a round moved nothing for a
/// while, it `arm`s every port and sleeps in `ppoll` on their
/// [`poll_fd`](Port::poll_fd)s.
pub trait Port {
    /// `vnic`, `netdev`, `tap`, `pcap`, `mem`.
    fn kind(&self) -> &'static str;
    /// What the port is attached to, for people (`instance 3 vNIC 0`,
    /// `veth0 (AF_XDP)`).
    fn describe(&self) -> String;
    /// Hands up to `max` received frames to `f`; returns how many.
    fn recv(&mut self, max: usize, f: &mut dyn FnMut(&[u8])) -> usize;
    /// Queues one frame for sending (sent at the latest at `flush`).
    fn queue(&mut self, frame: &[u8]) -> Result<(), Refused>;
    /// Sends what is queued. Returns true when frames are still pending
    /// (the switch flushes again next round and does not sleep).
    fn flush(&mut self) -> bool;
    /// Frames that can be queued now without being refused as `Full`
    /// (`usize::MAX`: no limit known). Patched ports receive at most this
    /// many per round from their source, so a bump-in-the-wire chain is
    /// lossless.
    fn room(&self) -> usize {
        usize::MAX
    }
    /// Longest frame accepted.
    fn max_frame(&self) -> usize;
    /// A descriptor that turns readable when frames may be waiting; `None`
    /// when the port never receives on its own (a sink) or cannot be
    /// polled.
    fn poll_fd(&self) -> Option<RawFd>;
    /// Before the switch sleeps: true when it may (nothing waiting, a
    /// wake-up armed); false when frames are waiting or the port is always
    /// ready (a replay source).
    fn arm(&mut self) -> bool {
        true
    }
    /// After a sleep: resets the port's wake-up descriptor.
    fn after_wake(&mut self) {}
    /// Checked every housekeeping round (about 10 times a second) and when
    /// the descriptor reports an error.
    fn health(&mut self) -> Health {
        Health::Up
    }
    /// Port-specific facts for `stats` (e.g. the instance's own view).
    fn extra(&self) -> Vec<(String, u64)> {
        Vec::new()
    }
    /// Called when the switch stops or the port is removed (a capture
    /// file flushes here).
    fn close(&mut self) {}
}

/// Drop reasons the switch counts per port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Drop {
    /// Output: the destination's ring was full.
    Full,
    /// Output: longer than the destination takes.
    Oversize,
    /// Output: the destination is down.
    Down,
    /// Input: shorter than an Ethernet header.
    Runt,
    /// Input: unicast to an unknown address with flooding off, or no
    /// route from a port with neither patch nor table entry.
    NoRoute,
    /// Input: addressed to the port it came from.
    Hairpin,
}

impl Drop {
    pub const ALL: [Drop; 6] = [
        Drop::Full,
        Drop::Oversize,
        Drop::Down,
        Drop::Runt,
        Drop::NoRoute,
        Drop::Hairpin,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Drop::Full => "full",
            Drop::Oversize => "oversize",
            Drop::Down => "down",
            Drop::Runt => "runt",
            Drop::NoRoute => "no_route",
            Drop::Hairpin => "hairpin",
        }
    }
    fn index(self) -> usize {
        self as usize
    }
}

/// One port's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Frames and bytes received from the port.
    pub rx_packets: u64,
    pub rx_bytes: u64,
    /// Frames and bytes queued to the port.
    pub tx_packets: u64,
    pub tx_bytes: u64,
    drops: [u64; 6],
}

impl Counters {
    pub fn drops(&self, why: Drop) -> u64 {
        self.drops[why.index()]
    }
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
    #[inline]
    pub(crate) fn drop(&mut self, why: Drop) {
        self.drops[why.index()] += 1;
    }
}

/// A port's entry in [`crate::Stats`].
#[derive(Clone, Debug)]
pub struct PortStats {
    pub id: usize,
    pub name: String,
    pub kind: &'static str,
    pub describe: String,
    pub health: Health,
    pub counters: Counters,
    pub extra: Vec<(String, u64)>,
}
