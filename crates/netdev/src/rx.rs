//! Receiving from an interface: [`Rx`] reads batches of frames over AF_XDP
//! or an AF_PACKET ring, whichever [`RxConfig::method`] asks for (or the
//! fallback `Auto` settles on), with one descriptor to poll and counters.

use crate::afpacket::{PacketRx, RxFrame, RxOptions};
use crate::afxdp::{self, Xsk};
use crate::bpf::{tcx_drop, TcxDrop};
use crate::{fanout_group, DevInfo, Method};
use std::cell::RefCell;
use std::os::fd::RawFd;
use std::rc::Rc;

/// How to receive from an interface.
#[derive(Clone, Debug)]
pub struct RxConfig {
    /// AF_XDP, AF_PACKET, or `Auto`: AF_XDP when `sniffer` is false and
    /// AF_XDP works on the device, else AF_PACKET.
    pub method: Method,
    /// Whether the kernel also receives and processes every frame (as
    /// with a packet sniffer). False: AF_XDP takes the frames away by
    /// itself; with AF_PACKET a tcx ingress program drops them after the
    /// packet socket has seen them.
    pub sniffer: bool,
    /// Put the device in promiscuous mode while open.
    pub promisc: bool,
    /// Longest frame kept (AF_PACKET; AF_XDP frames are whole).
    pub snaplen: usize,
    /// Also receive the frames this host sends (AF_PACKET only).
    pub outbound: bool,
    /// Receive only this Ethernet type; 0 for all (AF_PACKET).
    pub protocol: u16,
    /// The AF_XDP receive queue of copy 0.
    pub queue: u32,
    /// This reader is copy `copy` of `copies` reading the interface in
    /// this process (a router's threads): AF_XDP copy k serves queue
    /// `queue + k`; AF_PACKET copies join one fanout group, so each flow
    /// goes to one copy.
    pub copy: u32,
    /// How many copies read the interface (1: this one alone).
    pub copies: u32,
}

impl Default for RxConfig {
    fn default() -> Self {
        RxConfig {
            method: Method::Auto,
            sniffer: true,
            promisc: false,
            snaplen: 2046,
            outbound: false,
            protocol: 0,
            queue: 0,
            copy: 0,
            copies: 1,
        }
    }
}

/// A received frame, valid during the [`Rx::recv`] callback.
pub struct Frame<'a> {
    /// The frame's bytes (at most the snap length with AF_PACKET).
    pub data: &'a [u8],
    /// Its length on the wire.
    pub len: usize,
    /// The kernel's receive time (seconds, nanoseconds) with AF_PACKET;
    /// `None` with AF_XDP, which has none.
    pub kernel_time: Option<(u32, u32)>,
    /// Linux's (and Click's) packet type: 0 HOST, 1 BROADCAST,
    /// 2 MULTICAST, 3 OTHERHOST, 4 OUTGOING. AF_XDP frames get it from
    /// the destination address (HOST unless multicast or broadcast).
    pub pkttype: u8,
    /// An 802.1Q tag the kernel took off the frame (TPID, TCI).
    pub vlan: Option<(u16, u16)>,
}

/// What an [`Rx`] has counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxStats {
    /// Frames handed to [`Rx::recv`]'s callback.
    pub received: u64,
    /// Frames the kernel dropped before they could be read.
    pub kernel_drops: u64,
}

enum Io {
    Packet(PacketRx),
    /// Shared with a [`crate::Tx`] on the same interface and queue.
    Xdp(Rc<RefCell<Xsk>>),
}

/// A receiving socket on one interface. Fields drop in order: the socket,
/// then the promiscuous-mode socket, then the tcx program.
pub struct Rx {
    io: Io,
    /// AF_XDP with `promisc`: a packet socket whose membership holds the
    /// device in promiscuous mode.
    _promisc_sock: Option<PacketRx>,
    /// AF_PACKET with `sniffer` false: the tcx program that drops frames.
    _tcx: Option<TcxDrop>,
    received: u64,
}

/// Click's packet type for a frame read without the kernel's opinion.
fn ether_type_of(d: &[u8]) -> u8 {
    match d.first() {
        Some(b) if b & 1 != 0 => {
            if d.len() >= 6 && d[..6] == [0xff; 6] {
                1
            } else {
                2
            }
        }
        _ => 0,
    }
}

impl Rx {
    /// Opens a receiving socket on `dev`. `note` hears, in Click's
    /// wording, what the caller may want to tell a person: a fallback to
    /// AF_PACKET and why, a SNIFFER false that could not be had.
    pub fn open(dev: &DevInfo, cfg: &RxConfig, note: &mut dyn FnMut(&str)) -> Result<Rx, String> {
        match cfg.method {
            Method::Packet => Rx::open_packet(dev, cfg, note),
            Method::Xdp => match Rx::short_of_queues(dev, cfg) {
                Some(e) => {
                    note(&format!("using AF_PACKET fanout: {e}"));
                    Rx::open_packet(dev, cfg, note)
                }
                None => Rx::open_xdp(dev, cfg),
            },
            Method::Auto => {
                if cfg.sniffer {
                    return Rx::open_packet(dev, cfg, note);
                }
                match Rx::short_of_queues(dev, cfg).map_or_else(|| Rx::open_xdp(dev, cfg), Err) {
                    Ok(rx) => Ok(rx),
                    Err(e) => {
                        note(&format!("using AF_PACKET, AF_XDP unavailable: {e}"));
                        Rx::open_packet(dev, cfg, note)
                    }
                }
            }
        }
    }

    /// Why AF_XDP cannot serve every copy: the device has too few queues.
    fn short_of_queues(dev: &DevInfo, cfg: &RxConfig) -> Option<String> {
        let n = cfg.copies;
        (n > 1 && dev.rx_queues < cfg.queue + n).then(|| {
            format!(
                "{} has {} RX queue(s), {} threads need {}",
                dev.name,
                dev.rx_queues,
                n,
                cfg.queue + n
            )
        })
    }

    fn open_packet(
        dev: &DevInfo,
        cfg: &RxConfig,
        note: &mut dyn FnMut(&str),
    ) -> Result<Rx, String> {
        let fanout = (cfg.copies > 1).then(|| fanout_group(dev.ifindex));
        let rx = PacketRx::open(
            dev,
            &RxOptions {
                snaplen: cfg.snaplen,
                promisc: cfg.promisc,
                outbound: cfg.outbound,
                protocol: cfg.protocol,
                fanout,
            },
        )?;
        let mut tcx = None;
        if !cfg.sniffer {
            match tcx_drop(dev.ifindex, &dev.name) {
                Ok(t) => tcx = Some(t),
                Err(e) => note(&format!(
                    "warning: SNIFFER false: {e}; the kernel still processes the packets"
                )),
            }
        }
        Ok(Rx {
            io: Io::Packet(rx),
            _promisc_sock: None,
            _tcx: tcx,
            received: 0,
        })
    }

    fn open_xdp(dev: &DevInfo, cfg: &RxConfig) -> Result<Rx, String> {
        let q = cfg.queue + cfg.copy;
        let x = afxdp::socket(dev, q)?;
        x.borrow_mut().start_rx(dev)?;
        let mut promisc_sock = None;
        if cfg.promisc {
            // a packet socket's membership is the portable way to set it
            let s = PacketRx::open(
                dev,
                &RxOptions {
                    snaplen: 64,
                    promisc: true,
                    outbound: false,
                    protocol: 0xffff, // an unused type: receives nothing
                    fanout: None,
                },
            )?;
            promisc_sock = Some(s);
        }
        Ok(Rx {
            io: Io::Xdp(x),
            _promisc_sock: promisc_sock,
            _tcx: None,
            received: 0,
        })
    }

    /// Reads up to `max` frames, calling `f` on each; returns how many.
    /// Never blocks: poll [`Rx::fd`] for `POLLIN` to wait for frames.
    pub fn recv(&mut self, max: usize, mut f: impl FnMut(&Frame)) -> usize {
        let n = match &mut self.io {
            Io::Packet(rx) => rx.recv(max, |r: &RxFrame| {
                f(&Frame {
                    data: r.data,
                    len: r.len,
                    kernel_time: Some((r.sec, r.nsec)),
                    pkttype: r.pkttype,
                    vlan: r.vlan,
                })
            }),
            Io::Xdp(x) => x.borrow_mut().recv(max, |d| {
                f(&Frame {
                    data: d,
                    len: d.len(),
                    kernel_time: None,
                    pkttype: ether_type_of(d),
                    vlan: None,
                })
            }),
        };
        self.received += n as u64;
        n
    }

    /// The descriptor to poll for `POLLIN`.
    pub fn fd(&self) -> RawFd {
        match &self.io {
            Io::Packet(rx) => rx.fd(),
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

    /// With AF_XDP, whether the kernel chose zero-copy (else copy mode).
    pub fn zerocopy(&self) -> Option<bool> {
        match &self.io {
            Io::Packet(_) => None,
            Io::Xdp(x) => Some(x.borrow().zerocopy),
        }
    }

    /// Frames the kernel dropped so far before they could be read.
    pub fn kernel_drops(&mut self) -> u64 {
        match &mut self.io {
            Io::Packet(rx) => rx.kernel_drops(),
            Io::Xdp(x) => x.borrow().kernel_drops(),
        }
    }

    /// The counters.
    pub fn stats(&mut self) -> RxStats {
        RxStats {
            received: self.received,
            kernel_drops: self.kernel_drops(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ether_type_of;

    #[test]
    fn packet_type_from_the_destination() {
        assert_eq!(ether_type_of(&[0xff; 14]), 1);
        assert_eq!(ether_type_of(&[0x01, 0, 0x5e, 0, 0, 1]), 2);
        assert_eq!(ether_type_of(&[0x02, 0, 0, 0, 0, 1]), 0);
        assert_eq!(ether_type_of(&[]), 0);
    }
}
