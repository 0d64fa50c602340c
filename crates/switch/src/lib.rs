//! The ClickOS software switch: the data plane between middlebox
//! instances, Linux interfaces, tap devices and pcap files.
//!
//! A switch is a thread that owns a set of [`Port`]s and moves frames
//! between them in batches, VALE style: it takes up to `burst` frames from
//! a port, looks each one up, copies it once from the source's buffer into
//! the destination's, and publishes every destination once per round, so
//! a busy switch makes no system call, lock or VM exit per frame. Frames go
//!
//! * through a *patch* when their port has one (a bump-in-the-wire: every
//!   frame from port A goes to port B, no MAC configuration; patched
//!   receives are limited to the room in the destination, so chains do not
//!   drop);
//! * else by destination MAC through the [`table`]: static entries
//!   (ClickOS's default, like VALE's `mac-static`), learned ones if
//!   learning is on; broadcast, multicast and (by default) unknown unicast
//!   are flooded to every other unpatched port.
//!
//! A destination that is full drops the frame and counts it (VALE never
//! blocks a sender). Every port has counters (packets, bytes, drops by
//! reason); the table, patches and ports can be read and changed while the
//! switch runs, through its [`SwitchHandle`]. When nothing moves for a
//! short while (`spin`, 50 µs by default) the switch arms every port's
//! wake-up (an instance kicks only when asked) and sleeps in `ppoll`.
//!
//! ```no_run
//! use clickos_switch::{ports::mem::{MemSink, MemSource}, SwitchHandle, SwitchOptions};
//! let sw = SwitchHandle::spawn(SwitchOptions::default())?;
//! let frame = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00];
//! let src = sw.add_port("src", MemSource::new(vec![frame], 1000).spec())?;
//! let sink = MemSink::new(256, 2048, 0);
//! let log = sink.log();
//! let dst = sw.add_port("dst", sink.spec())?;
//! sw.patch(src, Some(dst))?;
//! # Ok::<(), String>(())
//! ```

pub mod attach;
pub mod port;
pub mod ports;
mod switch;
pub mod table;

pub use attach::{wire_chain, wire_instance, Attach, Chain, Wired};
pub use port::{Counters, Drop, Health, Port, PortStats, Refused};
pub use switch::{Event, EventSink, PortSpec, Stats, SwitchHandle, SwitchOptions};
