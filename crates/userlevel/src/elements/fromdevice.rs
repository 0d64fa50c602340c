//! FromDevice (user level): reads frames from a Linux network interface
//! through AF_XDP or an AF_PACKET RX ring.

use super::set_extra_length;
use click::element_any;
use click::prelude::*;
use click_wire::{ethertype, EthernetFrame, Ipv4Packet, VlanHeader};
use clickos_netdev::{DevInfo, Frame, Method, Rx, RxConfig};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by `clickos run --poll` before the configuration is built: a
/// FromDevice without `BUSY_POLL` then polls its ring without ever
/// sleeping.
pub static POLL_FOREVER: AtomicBool = AtomicBool::new(false);

pub static SPEC: ClassSpec = ClassSpec {
    name: "FromDevice",
    port_count: "0/1-2",
    processing: "h/h",
    group: "userlevel",
    signature: "FromDevice(DEVNAME [, KEYWORDS])",
    summary: "Reads packets from a network device (user level).",
    description: "Reads the frames received on the Linux network interface DEVNAME and pushes \
them out output 0, up to BURST per task run as one batch. Each packet gets the timestamp \
annotation (the kernel's receive time with AF_PACKET, the time the batch was read with \
AF_XDP), the packet type annotation (HOST, BROADCAST, MULTICAST, OTHERHOST, ...), the MAC \
header, and an extra-length annotation when SNAPLEN cut the frame. An 802.1Q tag the kernel \
took off the frame (VLAN offload) is put back.\n\n\
Two methods, chosen by METHOD: **AF_XDP** (a small XDP program, loaded with the bpf(2) system \
call and attached with a BPF link, redirects the queue's frames into an AF_XDP socket; the \
kernel picks zero-copy when the driver supports it, copy mode otherwise — veth is copy mode) \
and **AF_PACKET** (a TPACKET_V2 memory-mapped RX ring). `METHOD AUTO` (the default) uses AF_XDP \
when SNIFFER is false and AF_XDP works on the device, else AF_PACKET; when it wanted AF_XDP \
and could not have it, one line on standard error says why. The `method` handler tells which \
is in use. The element waits for frames with the driver's poll loop (no busy waiting while \
the interface is idle) and keeps its task running while frames keep coming.\n\n\
SNIFFER (Click's sense): with SNIFFER true (the default) the kernel also receives and \
processes every frame, as with a packet sniffer. With SNIFFER false it does not: AF_XDP takes \
the frames away from the kernel by itself; with AF_PACKET, FromDevice attaches a tcx ingress \
BPF program that drops every frame after packet sockets have seen it (Click installs \
iptables DROP rules with KernelFilter instead; the tcx program also stops ARP and is detached \
by the kernel when the process exits, even abnormally). If it cannot be attached FromDevice \
warns and runs as a sniffer, as Click does. An explicit `METHOD XDP` with SNIFFER true warns \
that the kernel will not see the frames of the queues FromDevice serves.\n\n\
Several threads (`clickos run -j N`): each router copy's FromDevice takes a share of the \
flows. AF_XDP: copy k serves receive queue QUEUE+k (the device needs at least N queues, \
else AF_PACKET is used and a note says so); AF_PACKET: the copies' sockets join one \
PACKET_FANOUT hash group (per interface and process), so each flow goes to one copy.\n\n\
Offloads: frames arrive as the kernel has them. A sender on a veth peer or a NIC with \
GRO may hand over frames larger than the MTU (cut to SNAPLEN and counted in `truncated`) or \
with checksums left to offload; turn TSO/GSO/GRO and TX checksum offload off on such links \
(`ethtool -K DEV tso off gso off gro off tx off`) when FromDevice forwards the frames.\n\n\
Keyword arguments:\n\n\
- `SNIFFER` (boolean): whether the kernel also processes the frames. Default true.\n\
- `PROMISC` (boolean): put the device in promiscuous mode (a PACKET_MR_PROMISC membership, \
undone when the socket closes). Default false. With AF_XDP the device is put in promiscuous \
mode the same way.\n\
- `SNAPLEN` (unsigned): longest frame kept (14 to 65535); longer frames are cut, their \
extra-length annotation set and `truncated` counted. Default 2046.\n\
- `FORCE_IP` (boolean): emit only IPv4 packets (the IP header annotation set, link header \
kept) on output 0; others go to output 1 if it exists, else are dropped. Default false.\n\
- `METHOD` (word): `AUTO` (default), `XDP` (or `AF_XDP`), `PACKET` (or `AF_PACKET`, and \
Click's `LINUX` and `PCAP`, which mean AF_PACKET here). `CAPTURE` is Click's old synonym.\n\
- `QUEUE` (unsigned): AF_XDP receive queue (copy k of `-j N` uses QUEUE+k). Default 0. \
Ignored with AF_PACKET, which receives from every queue.\n\
- `BURST` (integer): most frames read per task run. Default 32 (Click: 1).\n\
- `BUSY_POLL` (microseconds): how long to keep polling an empty ring before sleeping until \
the kernel signals new frames, like Linux's busy polling: waking a sleeping thread costs tens \
of microseconds, long enough for a busy link to overflow the ring. 0 sleeps at once. \
Default 200; under `clickos run --poll`, forever (the ring is polled without sleeping).\n\
- `HEADROOM` (unsigned): bytes of headroom in each packet (at most 8190). Default 64.\n\
- `TIMESTAMP` (boolean): set the timestamp annotation. Default true.\n\
- `OUTBOUND` (boolean): also emit frames this host sends on the device (AF_PACKET only; \
AF_XDP sees received frames only). Default false.\n\
- `PROTOCOL` (unsigned): receive only this Ethernet type (AF_PACKET). Default 0 (all).\n\
- `BPF_FILTER` (string): accepted for Click compatibility and ignored with a warning, as \
Click does when not using libpcap; filter with Classifier or IPFilter instead.\n\
- `ENCAP` (word): accepted for Click compatibility (Click ignores it unless METHOD is PCAP); \
an unknown name is an error, any other than the device's own a warning.",
    ports: "no inputs; output 0 pushes received packets; optional output 1 pushes the \
non-IP packets under FORCE_IP",
    handlers: &[
        HandlerDoc {
            name: "count",
            mode: HandlerMode::Read,
            text: "Packets read from the device.",
        },
        HandlerDoc {
            name: "kernel_drops",
            mode: HandlerMode::Read,
            text: "Frames the kernel dropped before FromDevice could read them (AF_PACKET: \
PACKET_STATISTICS drops; AF_XDP: XDP_STATISTICS rx_dropped + rx_ring_full).",
        },
        HandlerDoc {
            name: "encap",
            mode: HandlerMode::Read,
            text: "The link's encapsulation: `ETHER`, `IP`, ...",
        },
        HandlerDoc {
            name: "method",
            mode: HandlerMode::Read,
            text: "`AF_XDP` or `AF_PACKET`: the method in use.",
        },
        HandlerDoc {
            name: "xdp_mode",
            mode: HandlerMode::Read,
            text: "`zerocopy` or `copy` with AF_XDP; empty with AF_PACKET.",
        },
        HandlerDoc {
            name: "truncated",
            mode: HandlerMode::Read,
            text: "Frames longer than SNAPLEN (cut).",
        },
        HandlerDoc {
            name: "reset_counts",
            mode: HandlerMode::Write,
            text: "Resets `count` and `truncated` to zero.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(FromDevice::default()),
};

pub struct FromDevice {
    ifname: String,
    sniffer: bool,
    promisc: bool,
    snaplen: usize,
    force_ip: bool,
    method: Method,
    queue: u32,
    burst: usize,
    /// Nanoseconds to keep polling an empty ring.
    busy_poll_ns: i64,
    headroom: usize,
    timestamp: bool,
    outbound: bool,
    protocol: u16,
    bpf_filter: bool,
    encap: Option<String>,
    // running
    rx: Option<Rx>,
    dev: Option<DevInfo>,
    scratch: Vec<(Packet, u8)>,
    count: u64,
    truncated: u64,
    me: usize,
    has_selector: bool,
    warned_big: bool,
    /// When the ring was first found empty (busy polling).
    empty_since: Option<Timestamp>,
}

impl Default for FromDevice {
    fn default() -> Self {
        FromDevice {
            ifname: String::new(),
            sniffer: true,
            promisc: false,
            snaplen: 2046,
            force_ip: false,
            method: Method::Auto,
            queue: 0,
            burst: 32,
            busy_poll_ns: 200_000,
            headroom: DEFAULT_HEADROOM,
            timestamp: true,
            outbound: false,
            protocol: 0,
            bpf_filter: false,
            encap: None,
            rx: None,
            dev: None,
            scratch: Vec::new(),
            count: 0,
            truncated: 0,
            me: 0,
            has_selector: false,
            warned_big: false,
            empty_since: None,
        }
    }
}

use crate::selector::selector;

impl FromDevice {
    fn make_packet(
        &self,
        cx: &Ctx,
        data: &[u8],
        wire_len: usize,
        vlan: Option<(u16, u16)>,
    ) -> (Packet, bool) {
        let ether = self.dev.as_ref().is_some_and(|d| d.is_ether());
        // A tag goes back after the addresses, if they are there.
        let tag = if ether && data.len() >= EthernetFrame::<&[u8]>::ADDRS_LEN {
            vlan
        } else {
            None
        };
        let full = data.len() + if tag.is_some() { 4 } else { 0 };
        let keep = full.min(self.snaplen);
        let mut p = cx.pool().make_len(self.headroom, keep, 0);
        let d = p.data_mut();
        match tag {
            Some((tpid, tci)) => {
                // The addresses, then the tag the kernel took out (its
                // type field is the frame's, which follows).
                let mut hdr = [0u8; 16];
                let orig = EthernetFrame::new_unchecked(data);
                let mut f = EthernetFrame::new_unchecked(&mut hdr[..]);
                f.set_dst_addr(orig.dst_addr());
                f.set_src_addr(orig.src_addr());
                f.set_ethertype(tpid);
                VlanHeader::new_unchecked(f.payload_mut()).set_tci(tci);
                let h = keep.min(16);
                d[..h].copy_from_slice(&hdr[..h]);
                if keep > 16 {
                    d[16..keep].copy_from_slice(&data[12..keep - 4]);
                }
            }
            None => d.copy_from_slice(&data[..keep]),
        }
        let wire = wire_len.max(data.len()) + full - data.len();
        let cut = wire > keep;
        if cut {
            set_extra_length(&mut p, (wire - keep).min(u32::MAX as usize) as u32);
        }
        p.set_mac_header(0);
        (p, cut)
    }
}

impl Element for FromDevice {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let ifname = a.read_mp::<String>("DEVNAME")?;
        let promisc = a.read_p::<bool>("PROMISC")?.unwrap_or(false);
        let snaplen = a.read_p::<u32>("SNAPLEN")?.unwrap_or(2046);
        let sniffer = a.read::<bool>("SNIFFER")?.unwrap_or(true);
        let force_ip = a.read::<bool>("FORCE_IP")?.unwrap_or(false);
        let method = a.read::<String>("METHOD")?;
        let capture = a.read::<String>("CAPTURE")?;
        let bpf_filter = a.read::<String>("BPF_FILTER")?;
        let protocol = a.read::<u32>("PROTOCOL")?.unwrap_or(0);
        let outbound = a.read::<bool>("OUTBOUND")?.unwrap_or(false);
        let headroom = a
            .read::<u32>("HEADROOM")?
            .unwrap_or(DEFAULT_HEADROOM as u32);
        let encap = a.read::<String>("ENCAP")?;
        let burst = a.read::<i32>("BURST")?.unwrap_or(32);
        let busy_poll = a.read::<u32>("BUSY_POLL")?;
        let timestamp = a.read::<bool>("TIMESTAMP")?.unwrap_or(true);
        let queue = a.read::<u32>("QUEUE")?.unwrap_or(0);
        a.complete()?;
        if !(14..=65535).contains(&snaplen) {
            return Err("SNAPLEN out of range".into());
        }
        if headroom > 8190 {
            return Err("HEADROOM out of range".into());
        }
        if burst <= 0 {
            return Err("BURST out of range".into());
        }
        if protocol > 0xffff {
            return Err("PROTOCOL out of range".into());
        }
        let method = match method.or(capture) {
            None => Method::Auto,
            Some(m) => Method::parse(&m).ok_or("bad METHOD")?,
        };
        if let Some(e) = &encap {
            if super::parse_encap(e).is_none() {
                return Err("bad encapsulation type".into());
            }
        }
        self.ifname = ifname;
        self.promisc = promisc;
        self.snaplen = snaplen as usize;
        self.sniffer = sniffer;
        self.force_ip = force_ip;
        self.method = method;
        self.bpf_filter = bpf_filter.is_some_and(|s| !s.is_empty());
        self.protocol = protocol as u16;
        self.outbound = outbound;
        self.headroom = headroom as usize;
        self.encap = encap;
        self.burst = burst as usize;
        self.busy_poll_ns = match busy_poll {
            Some(us) => i64::from(us) * 1000,
            None if POLL_FOREVER.load(Ordering::Relaxed) => i64::MAX,
            None => 200_000,
        };
        self.timestamp = timestamp;
        self.queue = queue;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        if self.ifname.is_empty() {
            return Err("interface not set".into());
        }
        let dev = DevInfo::lookup(&self.ifname)?;
        let decl = cx.declaration();
        if self.bpf_filter {
            cx.error_line(&format!(
                "{decl}: warning: not using METHOD PCAP, BPF filter ignored"
            ));
        }
        if let Some(e) = &self.encap {
            let want = super::parse_encap(e).map(super::encap_name).unwrap_or("");
            if want != dev.encap() {
                cx.error_line(&format!(
                    "{decl}: warning: ENCAP {e} ignored, {} is {}",
                    dev.name,
                    dev.encap()
                ));
            }
        }
        if self.method == Method::Xdp && self.sniffer {
            cx.error_line(&format!(
                "{decl}: warning: SNIFFER true with METHOD XDP: the kernel does not see the frames FromDevice reads"
            ));
        }
        let cfg = RxConfig {
            method: self.method,
            sniffer: self.sniffer,
            promisc: self.promisc,
            snaplen: self.snaplen,
            outbound: self.outbound,
            protocol: self.protocol,
            queue: self.queue,
            copy: cx.copy() as u32,
            copies: cx.ncopies() as u32,
        };
        let rx = Rx::open(&dev, &cfg, &mut |m| cx.error_line(&format!("{decl}: {m}")))?;
        self.me = cx.index();
        self.scratch = Vec::with_capacity(self.burst.min(1024));
        let fd = rx.fd();
        self.rx = Some(rx);
        if let Some(sel) = selector(cx) {
            sel.set(self.me, &[(fd, libc::POLLIN)]);
            sel.hold(self.me, true);
            self.has_selector = true;
        }
        self.dev = Some(dev);
        cx.schedule_task();
        Ok(())
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        let mut got = std::mem::take(&mut self.scratch);
        let mut wanted_big = 0u64;
        // The socket is taken out while reading, so make_packet can borrow
        // the configuration.
        let mut rx = self.rx.take();
        let ts = self.timestamp;
        let n = match &mut rx {
            None => 0,
            Some(rx) => rx.recv(self.burst, |f: &Frame| {
                let (mut p, cut) = self.make_packet(cx, f.data, f.len, f.vlan);
                if cut {
                    wanted_big += 1;
                }
                if let (true, Some((sec, nsec))) = (ts, f.kernel_time) {
                    p.set_timestamp(Timestamp::from_sec_nsec(i64::from(sec), nsec));
                }
                got.push((p, f.pkttype));
            }),
        };
        let xdp = rx.as_ref().is_some_and(|rx| rx.method() == Method::Xdp);
        self.rx = rx;
        if self.timestamp && xdp {
            let now = cx.now();
            for (p, _) in got.iter_mut() {
                p.set_timestamp(now);
            }
        }
        if wanted_big > 0 {
            self.truncated += wanted_big;
            if !self.warned_big {
                self.warned_big = true;
                cx.error_line(&format!(
                    "{}: frames longer than SNAPLEN {} cut (offloads on the link? see the FromDevice documentation)",
                    cx.declaration(),
                    self.snaplen
                ));
            }
        }
        self.count += n as u64;
        let ether = self.dev.as_ref().is_some_and(|d| d.is_ether());
        let mut out = Emitter::new(cx, 0);
        for (mut p, t) in got.drain(..) {
            p.anno_mut().packet_type = PacketType::from_u8(t);
            if self.force_ip && !force_ip(&mut p, ether) {
                if cx.noutputs() > 1 {
                    cx.push(1, p);
                }
                continue;
            }
            out.emit(cx, p);
        }
        out.flush(cx);
        self.scratch = got;
        if n > 0 || !self.has_selector {
            self.empty_since = None;
            return true;
        }
        // The ring is empty: poll it a while longer (frames arrive every
        // few microseconds on a busy link), then sleep until the driver's
        // poll says the socket is readable.
        let now = cx.now();
        let since = *self.empty_since.get_or_insert(now);
        if (now - since).nsec() < self.busy_poll_ns {
            if let Some(sel) = selector(cx) {
                sel.note_spinning();
            }
            return true;
        }
        self.empty_since = None;
        false
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "count" => self.count.to_string(),
            "truncated" => self.truncated.to_string(),
            "kernel_drops" => match &mut self.rx {
                Some(rx) => rx.kernel_drops().to_string(),
                None => "??".into(),
            },
            "encap" => self.dev.as_ref().map_or("ETHER", |d| d.encap()).to_string(),
            "method" => self
                .rx
                .as_ref()
                .map_or("", |rx| rx.method().name())
                .to_string(),
            "xdp_mode" => match self.rx.as_ref().and_then(|rx| rx.zerocopy()) {
                Some(true) => "zerocopy".into(),
                Some(false) => "copy".into(),
                None => String::new(),
            },
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, _value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "reset_counts" => {
                self.count = 0;
                self.truncated = 0;
                Some(Ok(()))
            }
            _ => None,
        }
    }

    fn cleanup(&mut self, cx: &Ctx) {
        if let Some(sel) = selector(cx) {
            sel.set(self.me, &[]);
            sel.hold(self.me, false);
        }
        self.rx = None;
    }

    element_any!();
}

/// Sets the IP header annotation as Click's `fake_pcap_force_ip` does for
/// Ethernet (optionally 802.1Q-tagged) frames and raw IP links; false when
/// the frame is not IPv4.
fn force_ip(p: &mut Packet, ether: bool) -> bool {
    let d = p.data();
    let off = if !ether {
        0
    } else {
        let Ok(f) = EthernetFrame::new_checked(d) else {
            return false;
        };
        let inner_ip =
            || VlanHeader::new_checked(f.payload()).is_ok_and(|v| v.ethertype() == ethertype::IPV4);
        match f.ethertype() {
            ethertype::IPV4 => 14,
            ethertype::VLAN | ethertype::QINQ if inner_ip() => 18,
            _ => return false,
        }
    };
    let Some(ip) = d
        .get(off..)
        .and_then(|d| Ipv4Packet::new_fixed_checked(d).ok())
    else {
        return false;
    };
    if ip.version() != 4 || ip.check_header_len().is_err() {
        return false;
    }
    let hl = usize::from(ip.header_len());
    p.set_network_header(off, hl);
    true
}
