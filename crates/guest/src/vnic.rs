//! `FromVNIC` and `ToVNIC`: the elements on an instance's vNIC rings, and
//! the table of ring endpoints the runtime hands them.
//!
//! ClickOS's names for the same elements are registered too, so that
//! configurations written for ClickOS run unchanged in an instance:
//! `FromDevice(DEVID)` / `ToDevice(DEVID [, BURST])` (ClickOS's
//! `elements/minios/`), and the pre-release `FromNetFront` / `ToNetFront`.
//! They are the same two implementations with ClickOS's argument syntax.

use crate::runtime::Platform;
use alloc::format;
use alloc::rc::Rc;
use click::prelude::*;
use click_lang::args::RawString;
use clickos_ring::layout::{vnic_layout, BootInfo, VnicInfo, PAGE_SIZE};
use clickos_ring::ring::{Consumer, Dir, Producer, RingError, RingHeader, HEADER_BYTES};
use core::cell::{Cell, RefCell};
use core::sync::atomic::Ordering;

struct Port {
    base: *mut u8,
    info: VnicInfo,
    /// Host → instance.
    rx: RefCell<Consumer>,
    /// Instance → host.
    tx: RefCell<Producer>,
    /// The host corrupted this vNIC's rings: it is no longer used.
    broken: Cell<bool>,
}

/// The instance's vNICs (the router's host context).
pub struct VnicTable {
    ports: Vec<Port>,
    kick: Box<dyn Fn(usize)>,
    console: Box<dyn Fn(&str)>,
    /// Frames received on any vNIC so far (the runtime polls a little
    /// before sleeping after traffic).
    frames_in: Cell<u64>,
}

impl VnicTable {
    /// # Safety
    /// Every vNIC region named by `boot` must be mapped at its `base` for
    /// the life of the table.
    pub unsafe fn new<P: Platform>(boot: &BootInfo, p: P) -> Result<VnicTable, String> {
        let mut ports = Vec::new();
        for k in 0..boot.nvnics as usize {
            let info = boot.vnics[k];
            // Trust only geometry we can recompute ourselves.
            let expect = vnic_layout(info.slots, info.buf_size, info.mac)
                .ok_or_else(|| format!("vNIC {k}: bad geometry"))?;
            if info.rx_off != expect.rx_off
                || info.tx_off != expect.tx_off
                || info.bufs_off != expect.bufs_off
                || info.nbufs != expect.nbufs
                || info.size < expect.size
                || info.base == 0
                || !info.base.is_multiple_of(PAGE_SIZE)
            {
                return Err(format!("vNIC {k}: inconsistent layout"));
            }
            let base = info.base as usize as *mut u8;
            // SAFETY: the region is mapped (caller) and laid out as checked.
            let (rx, tx) = unsafe {
                (
                    Consumer::new(base, &info, Dir::Rx),
                    Producer::new(base, &info, Dir::Tx),
                )
            };
            ports.push(Port {
                base,
                info,
                rx: RefCell::new(rx),
                tx: RefCell::new(tx),
                broken: Cell::new(false),
            });
        }
        let pk = p.clone();
        Ok(VnicTable {
            ports,
            kick: Box::new(move |k| pk.kick(k)),
            console: Box::new(move |s| p.console(s)),
            frames_in: Cell::new(0),
        })
    }

    pub fn len(&self) -> usize {
        self.ports.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ports.is_empty()
    }

    fn broke(&self, k: usize, e: RingError) {
        if !self.ports[k].broken.replace(true) {
            (self.console)(&format!("vNIC {k}: {e}; vNIC disabled\n"));
        }
    }

    /// Frames received on any vNIC so far.
    pub fn frames_in(&self) -> u64 {
        self.frames_in.get()
    }

    /// Whether any vNIC has frames waiting.
    pub fn rx_pending(&self) -> bool {
        let mut any = false;
        for (k, p) in self.ports.iter().enumerate() {
            if p.broken.get() {
                continue;
            }
            match p.rx.borrow().available() {
                Ok(n) => any |= n > 0,
                Err(e) => self.broke(k, e),
            }
        }
        any
    }

    /// Before sleeping: asks every RX ring for a kick. Returns true when
    /// frames are already waiting (do not sleep).
    pub fn arm_rx_wakeups(&self) -> bool {
        let mut waiting = false;
        for (k, p) in self.ports.iter().enumerate() {
            if p.broken.get() {
                continue;
            }
            match p.rx.borrow_mut().prepare_to_sleep() {
                Ok(empty) => waiting |= !empty,
                Err(e) => self.broke(k, e),
            }
        }
        waiting
    }

    /// Fault injection: writes garbage over every ring header and slot.
    pub fn scribble(&self) {
        for p in &self.ports {
            for off in [p.info.rx_off, p.info.tx_off] {
                // SAFETY: the ring header and its slots lie inside the region.
                unsafe {
                    let h = &*(p.base.add(off as usize) as *const RingHeader);
                    h.head.store(0x8000_0123, Ordering::Relaxed);
                    h.tail.store(0x0BAD_F00D, Ordering::Relaxed);
                    let slots = p.base.add(off as usize + HEADER_BYTES as usize) as *mut u32;
                    for i in 0..(p.info.slots as usize * 2) {
                        slots.add(i).write_volatile(0xFFFF_FFF0 ^ i as u32);
                    }
                }
            }
        }
    }
}

impl VnicTable {
    /// Fault injection: fills every TX ring with slots whose buffer
    /// indices are valid but whose lengths exceed the buffer, and publishes
    /// them all (a well-formed ring carrying impossible frames).
    pub fn scribble_slot_lengths(&self) {
        for p in &self.ports {
            // SAFETY: the TX ring header and its slots lie inside the region.
            unsafe {
                let h = &*(p.base.add(p.info.tx_off as usize) as *const RingHeader);
                let slots = p.base.add(p.info.tx_off as usize + HEADER_BYTES as usize) as *mut u32;
                let tail = h.tail.load(Ordering::Acquire);
                for i in 0..p.info.slots {
                    let k = (tail.wrapping_add(i) & (p.info.slots - 1)) as usize;
                    slots.add(2 * k).write_volatile(p.info.slots + k as u32);
                    slots.add(2 * k + 1).write_volatile(0xFFFF);
                }
                h.head
                    .store(tail.wrapping_add(p.info.slots), Ordering::Release);
            }
        }
    }
}

fn table(cx: &Ctx) -> Result<Rc<VnicTable>, String> {
    cx.host()
        .and_then(|h| h.clone().downcast::<VnicTable>().ok())
        .ok_or_else(|| "vNIC elements run only inside a ClickOS instance".into())
}

/// "2 vNICs (0, 1)", "1 vNIC (0)", "no vNICs".
fn vnic_list(t: &VnicTable) -> String {
    match t.len() {
        0 => "no vNICs".into(),
        1 => "1 vNIC (0)".into(),
        n => {
            let ks: Vec<String> = (0..n).map(|k| k.to_string()).collect();
            format!("{n} vNICs ({})", ks.join(", "))
        }
    }
}

fn fmt_mac(m: &[u8; 6]) -> String {
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )
}

/// Which configuration syntax a class accepts: ours, or one of ClickOS's.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
enum Syntax {
    /// `FromVNIC(VNIC, ...)` / `ToVNIC(VNIC, ...)`.
    #[default]
    Vnic,
    /// ClickOS's `FromDevice(DEVID)` / `ToDevice(DEVID, BURST)`.
    Device,
    /// Pre-release ClickOS's `FromNetFront(DEV, ...)` / `ToNetFront(...)`:
    /// a number or the vNIC's MAC address.
    NetFront,
}

/// The vNIC a configuration names, resolved against the instance's table
/// when the element initialises.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Dev {
    Index(u64),
    Mac([u8; 6]),
    /// Not a number (`FromDevice(eth0)`): always an error, with the list.
    Name(String),
}

impl Default for Dev {
    fn default() -> Dev {
        Dev::Index(0)
    }
}

impl Dev {
    /// Reads the device argument in `syntax` (ours is a mandatory number;
    /// ClickOS's `DEVID` is optional and defaults to 0, as its `read_p` did).
    fn read(a: &mut click_lang::args::Args, syntax: Syntax) -> Result<Dev, String> {
        let raw = match syntax {
            Syntax::Vnic => return Ok(Dev::Index(a.read_mp::<u32>("VNIC")? as u64)),
            Syntax::Device => a.read_p::<RawString>("DEVID")?,
            Syntax::NetFront => {
                let d = a.read_p::<RawString>("DEVID")?;
                match a.read::<[u8; 6]>("MAC")? {
                    Some(m) if d.is_none() => return Ok(Dev::Mac(m)),
                    Some(_) => return Err("give DEVID or MAC, not both".into()),
                    None => d,
                }
            }
        };
        let Some(RawString(s)) = raw else {
            return Ok(Dev::Index(0));
        };
        let s = s.trim();
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        if digits(s) {
            return Ok(Dev::Index(s.parse().unwrap_or(u64::MAX)));
        }
        if let Some(rest) = s.strip_prefix('-') {
            if digits(rest) {
                return Err("DEVID: the device number must be >= 0".into());
            }
        }
        if syntax == Syntax::NetFront {
            if let Ok(m) = click_lang::args::parse_ether(s) {
                return Ok(Dev::Mac(m));
            }
        }
        Ok(Dev::Name(s.into()))
    }

    /// The vNIC index this names in `t`, or an error that lists the
    /// instance's vNICs.
    fn resolve(&self, t: &VnicTable) -> Result<usize, String> {
        match self {
            Dev::Index(k) if (*k as usize) < t.len() && *k <= usize::MAX as u64 => Ok(*k as usize),
            Dev::Index(k) => Err(format!("no vNIC {k}: this instance has {}", vnic_list(t))),
            Dev::Name(n) => Err(format!(
                "no device '{n}': this instance has {} \u{2014} use a number",
                vnic_list(t)
            )),
            Dev::Mac(m) => t
                .ports
                .iter()
                .position(|p| p.info.mac == *m)
                .ok_or_else(|| {
                    let macs: Vec<String> = t
                        .ports
                        .iter()
                        .enumerate()
                        .map(|(k, p)| format!("{k} = {}", fmt_mac(&p.info.mac)))
                        .collect();
                    if macs.is_empty() {
                        format!(
                            "no vNIC with MAC {}: this instance has no vNICs",
                            fmt_mac(m)
                        )
                    } else {
                        format!(
                            "no vNIC with MAC {}: this instance has {} ({})",
                            fmt_mac(m),
                            vnic_list(t),
                            macs.join(", ")
                        )
                    }
                }),
        }
    }
}

/// The element classes, for an instance's registry: ours and ClickOS's.
pub fn register(r: &mut Registry) {
    for s in SPECS {
        r.add(s);
    }
}

/// Every class this module defines.
pub static SPECS: &[&ClassSpec] = &[
    &FROM_SPEC,
    &TO_SPEC,
    &FROM_DEVICE_SPEC,
    &TO_DEVICE_SPEC,
    &FROM_NETFRONT_SPEC,
    &TO_NETFRONT_SPEC,
];

/// For a host that documents the instance's classes beside its own (the
/// `clickos` binary's `elements` reference): a class whose name the host
/// already has (`FromDevice`, `ToDevice` at user level) is added as that
/// name's variant "inside an instance", never replacing the host's class.
pub fn register_documented(r: &mut Registry) {
    for s in SPECS {
        if r.get(s.name).is_some() {
            r.add_variant("inside an instance", s);
        } else {
            r.add(s);
        }
    }
}

/// Indices of `router`'s receiving elements (`FromVNIC` and its ClickOS
/// names, all one type).
pub fn element_indices(router: &Router) -> Vec<usize> {
    let names: Vec<String> = router.element_names().map(String::from).collect();
    names
        .iter()
        .filter(|n| {
            router
                .with_element(n, |e| e.as_any().is::<FromVnic>())
                .unwrap_or(false)
        })
        .filter_map(|n| router.element_index(n))
        .collect()
}

#[derive(Default)]
pub struct FromVnic {
    syntax: Syntax,
    dev: Dev,
    vnic: usize,
    burst: usize,
    active: bool,
    count: u64,
    table: Option<Rc<VnicTable>>,
    scratch: Vec<Packet>,
}

pub static FROM_SPEC: ClassSpec = ClassSpec {
    name: "FromVNIC",
    port_count: "0/1",
    processing: "h/h",
    group: "clickos",
    signature: "FromVNIC(VNIC [, KEYWORDS])",
    summary: "Receives frames from one of the instance's vNICs.",
    description: "Pushes every frame the host (the software switch, or a test) places on vNIC \
`VNIC`'s receive ring, copied into a packet. Polls while frames arrive and sleeps otherwise: the \
instance asks the host for a kick and idles, so a quiet vNIC costs no CPU. A ring slot with an \
impossible length or buffer index, or impossible ring indices, disable the vNIC (reported on the \
console). ClickOS configurations say `FromDevice(N)` (or `FromNetFront`): those names are the same element. Only available inside an instance.\n\n\
Keyword arguments:\n\n\
- `BURST` (unsigned): frames taken per task run. Default 32.\n\
- `ACTIVE` (boolean): whether to receive. Default true.",
    ports: "no inputs; one push output",
    handlers: FROM_HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(FromVnic::default()),
};

static FROM_HANDLERS: &[HandlerDoc] = &[
    HandlerDoc {
        name: "count",
        mode: HandlerMode::Read,
        text: "Frames received.",
    },
    HandlerDoc {
        name: "drops",
        mode: HandlerMode::Read,
        text: "Malformed ring slots seen (the first disables the vNIC).",
    },
    HandlerDoc {
        name: "active",
        mode: HandlerMode::ReadWrite,
        text: "Whether the element receives.",
    },
    HandlerDoc {
        name: "reset_counts",
        mode: HandlerMode::Write,
        text: "Resets `count`.",
    },
];

/// How the ClickOS classes find their vNIC, for their descriptions.
macro_rules! devid_doc {
    () => {
        "`DEVID` is the vNIC's number, 0 for the instance's first vNIC, as ClickOS numbered a \
domain's `device/vif/N`; it may be left out (0). A name such as `eth0` is a configuration error \
that lists the instance's vNICs, as is a number the instance has no vNIC for."
    };
}

pub static FROM_DEVICE_SPEC: ClassSpec = ClassSpec {
    name: "FromDevice",
    port_count: "0/1",
    processing: "h/h",
    group: "clickos",
    signature: "FromDevice([DEVID, KEYWORDS])",
    summary: "Receives frames from the instance's vNIC number DEVID (ClickOS's FromDevice).",
    description: concat!(
        "ClickOS's name for `FromVNIC`, so that configurations written for ClickOS \
(`FromDevice(0) -> ...`) run unchanged; only inside an instance (on the user level, \
`FromDevice` reads a Linux interface). Pushes every frame arriving on the vNIC, polling while \
frames come and sleeping otherwise, exactly as FromVNIC. ",
        devid_doc!(),
        "\n\nKeyword arguments (ClickOS's FromDevice took DEVID only; these are FromVNIC's):\n\n\
- `BURST` (unsigned): frames taken per task run. Default 32.\n\
- `ACTIVE` (boolean): whether to receive. Default true."
    ),
    ports: "no inputs; one push output",
    handlers: FROM_HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || {
        Box::new(FromVnic {
            syntax: Syntax::Device,
            ..FromVnic::default()
        })
    },
};

pub static FROM_NETFRONT_SPEC: ClassSpec = ClassSpec {
    name: "FromNetFront",
    port_count: "0/1",
    processing: "h/h",
    group: "clickos",
    signature: "FromNetFront([DEVID | MAC, KEYWORDS])",
    summary: "Receives frames from one of the instance's vNICs (pre-release ClickOS's name).",
    description: "The name early ClickOS releases gave `FromVNIC` (their Xen \
netfront driver), so that their configurations run unchanged; only inside an instance. The \
first argument is the vNIC's number (0 if left out) or its MAC address \
(`FromNetFront(00:1a:31:a4:60:ff, BURST 256)`), which selects the vNIC created with that MAC; \
a MAC no vNIC has, or a number the instance has no vNIC for, is a configuration error that \
lists the instance's vNICs and their MACs.\n\n\
Keyword arguments:\n\n\
- `MAC` (Ethernet address): the vNIC's MAC, instead of the positional argument.\n\
- `BURST` (unsigned): frames taken per task run. Default 32.\n\
- `ACTIVE` (boolean): whether to receive. Default true.",
    ports: "no inputs; one push output",
    handlers: FROM_HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || {
        Box::new(FromVnic {
            syntax: Syntax::NetFront,
            ..FromVnic::default()
        })
    },
};

impl Element for FromVnic {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let dev = Dev::read(&mut a, self.syntax)?;
        let burst = a.read::<u32>("BURST")?.unwrap_or(32);
        let active = a.read::<bool>("ACTIVE")?.unwrap_or(true);
        a.complete()?;
        if burst == 0 {
            return Err("BURST must be at least 1".into());
        }
        self.dev = dev;
        self.burst = burst as usize;
        self.active = active;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let t = table(cx)?;
        self.vnic = self.dev.resolve(&t)?;
        self.table = Some(t);
        if self.active {
            cx.schedule_task();
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        let Some(t) = self.table.clone() else {
            return false;
        };
        if !self.active || t.ports[self.vnic].broken.get() {
            return false;
        }
        let port = &t.ports[self.vnic];
        let mut got = core::mem::take(&mut self.scratch);
        let mut room_wanted = false;
        {
            let mut rx = port.rx.borrow_mut();
            let pool = cx.pool();
            // One read of the host's index for the whole batch.
            let r = rx.pop_batch(self.burst as u32, |d| {
                got.push(pool.make(DEFAULT_HEADROOM, d, 0))
            });
            if let Err(e) = r {
                drop(rx);
                t.broke(self.vnic, e);
                rx = port.rx.borrow_mut();
            }
            if !got.is_empty() {
                room_wanted = rx.release();
            }
        }
        if room_wanted {
            (t.kick)(self.vnic);
        }
        let n = got.len();
        self.count += n as u64;
        t.frames_in.set(t.frames_in.get() + n as u64);
        let now = cx.now();
        let mut out = Emitter::new(cx, 0);
        for mut p in got.drain(..) {
            p.set_timestamp(now);
            out.emit(cx, p);
        }
        out.flush(cx);
        self.scratch = got;
        // Keep polling while frames come; the runtime wakes us otherwise.
        n > 0
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        let drops = self
            .table
            .as_ref()
            .map(|t| t.ports[self.vnic].rx.borrow().bad_frames)
            .unwrap_or(0);
        Some(Ok(match name {
            "count" => self.count.to_string(),
            "drops" => drops.to_string(),
            "active" => self.active.to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "reset_counts" => {
                self.count = 0;
                Some(Ok(()))
            }
            "active" => Some(match value.trim() {
                "true" | "1" | "yes" => {
                    self.active = true;
                    cx.schedule_task();
                    Ok(())
                }
                "false" | "0" | "no" => {
                    self.active = false;
                    Ok(())
                }
                _ => Err("syntax error: expected boolean".into()),
            }),
            _ => None,
        }
    }

    click::element_any!();
}

#[derive(Default)]
pub struct ToVnic {
    syntax: Syntax,
    dev: Dev,
    vnic: usize,
    burst: usize,
    sent: u64,
    drops: u64,
    pull_mode: bool,
    table: Option<Rc<VnicTable>>,
    signal: Option<UpstreamSignal>,
}

pub static TO_SPEC: ClassSpec = ClassSpec {
    name: "ToVNIC",
    port_count: "1/0",
    processing: "a/a",
    group: "clickos",
    signature: "ToVNIC(VNIC [, KEYWORDS])",
    summary: "Sends packets out of one of the instance's vNICs.",
    description: "Copies each packet onto vNIC `VNIC`'s transmit ring for the host to take, and \
kicks the host only when it asked to be told. In push context packets are sent as they arrive (a \
batch is published at once); in pull context a task pulls up to `BURST` packets per run, sleeping \
while upstream notifiers say nothing can come. Frames that do not fit the ring (full, or longer \
than a ring buffer) are dropped and counted. ClickOS configurations say `ToDevice(N)` (or \
`ToNetFront`): those names are the same element. Only available inside an instance.\n\n\
Keyword arguments:\n\n\
- `BURST` (unsigned): packets pulled per task run in pull context. Default 32.",
    ports: "one input (push or pull); no outputs",
    handlers: TO_HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(ToVnic::default()),
};

static TO_HANDLERS: &[HandlerDoc] = &[
    HandlerDoc {
        name: "count",
        mode: HandlerMode::Read,
        text: "Frames sent (ClickOS's ToDevice had this handler but never counted).",
    },
    HandlerDoc {
        name: "drops",
        mode: HandlerMode::Read,
        text: "Frames dropped (ring full, too long, or vNIC disabled).",
    },
    HandlerDoc {
        name: "reset_counts",
        mode: HandlerMode::Write,
        text: "Resets `count` and `drops`.",
    },
];

pub static TO_DEVICE_SPEC: ClassSpec = ClassSpec {
    name: "ToDevice",
    port_count: "1/0-1",
    processing: "a/h",
    group: "clickos",
    signature: "ToDevice([DEVID, BURST, KEYWORDS])",
    summary: "Sends packets out of the instance's vNIC number DEVID (ClickOS's ToDevice).",
    description: concat!(
        "ClickOS's name for `ToVNIC`, so that configurations written for ClickOS \
(`... -> ToDevice(0)`) run unchanged; only inside an instance (on the user level, `ToDevice` \
writes to a Linux interface). Copies each packet onto the vNIC's transmit ring, in push or pull \
context, exactly as ToVNIC. ",
        devid_doc!(),
        " As in ClickOS, packets that were sent leave on output 0 if it is connected; unlike \
ClickOS's, this ToDevice counts what it sends and what it drops (ring full, frame longer than a \
ring buffer, vNIC disabled).\n\n\
Arguments:\n\n\
- `BURST` (unsigned, positional or keyword, as in ClickOS): packets pulled per task run in pull \
context. Default 32 (ClickOS's was 1)."
    ),
    ports: "one input (push or pull); optional push output for the packets sent",
    handlers: TO_HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || {
        Box::new(ToVnic {
            syntax: Syntax::Device,
            ..ToVnic::default()
        })
    },
};

pub static TO_NETFRONT_SPEC: ClassSpec = ClassSpec {
    name: "ToNetFront",
    port_count: "1/0",
    processing: "a/a",
    group: "clickos",
    signature: "ToNetFront([DEVID | MAC, KEYWORDS])",
    summary: "Sends packets out of one of the instance's vNICs (pre-release ClickOS's name).",
    description: "The name early ClickOS releases gave `ToVNIC`, so that their \
configurations run unchanged; only inside an instance. The first argument is the vNIC's \
number (0 if left out) or its MAC address, which selects the vNIC created with that MAC; a MAC \
no vNIC has, or a number the instance has no vNIC for, is a configuration error that lists the \
instance's vNICs and their MACs. Counts what it sends and drops, as ToVNIC.\n\n\
Keyword arguments:\n\n\
- `MAC` (Ethernet address): the vNIC's MAC, instead of the positional argument.\n\
- `BURST` (unsigned): packets pulled per task run in pull context. Default 32.",
    ports: "one input (push or pull); no outputs",
    handlers: TO_HANDLERS,
    live_reconfigure: false,
    order_sensitive: false,
    make: || {
        Box::new(ToVnic {
            syntax: Syntax::NetFront,
            ..ToVnic::default()
        })
    },
};

impl ToVnic {
    /// Copies `p` onto the ring; whether it was sent (else it is counted
    /// as a drop).
    fn send(&mut self, t: &VnicTable, p: &Packet) -> bool {
        let port = &t.ports[self.vnic];
        if port.broken.get() {
            self.drops += 1;
            return false;
        }
        let r = port.tx.borrow_mut().push(p.data());
        match r {
            Ok(true) => {
                self.sent += 1;
                true
            }
            Ok(false) => {
                self.drops += 1;
                false
            }
            Err(e) => {
                self.drops += 1;
                t.broke(self.vnic, e);
                false
            }
        }
    }

    fn flush(&self, t: &VnicTable) {
        let kick = t.ports[self.vnic].tx.borrow_mut().flush();
        if kick {
            (t.kick)(self.vnic);
        }
    }
}

impl Element for ToVnic {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let dev = Dev::read(&mut a, self.syntax)?;
        // ClickOS's ToDevice read BURST by position too: `ToDevice(0, 32)`.
        let burst = match self.syntax {
            Syntax::Device => a.read_p::<u32>("BURST")?,
            _ => a.read::<u32>("BURST")?,
        };
        a.complete()?;
        if burst == Some(0) && self.syntax == Syntax::Device {
            return Err("BURST must be at least 1".into());
        }
        self.dev = dev;
        self.burst = burst.unwrap_or(32).max(1) as usize;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let t = table(cx)?;
        self.vnic = self.dev.resolve(&t)?;
        self.table = Some(t);
        self.pull_mode = cx.input_is_pull(0);
        if self.pull_mode {
            cx.schedule_task();
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        if let Some(t) = self.table.clone() {
            let sent = self.send(&t, &p);
            self.flush(&t);
            // ClickOS's ToDevice: sent packets leave on the optional output.
            if sent && cx.noutputs() > 0 {
                cx.push(0, p);
            }
        }
    }

    fn push_batch(&mut self, _port: usize, b: Batch, cx: &Ctx) {
        if let Some(t) = self.table.clone() {
            if cx.noutputs() == 0 {
                for p in &b {
                    self.send(&t, p);
                }
                self.flush(&t);
                return;
            }
            let sent: Batch = b.into_iter().filter(|p| self.send(&t, p)).collect();
            self.flush(&t);
            cx.push_batch(0, sent);
        }
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        let Some(t) = self.table.clone() else {
            return false;
        };
        if self.signal.is_none() {
            self.signal = Some(cx.upstream_signal(0));
        }
        let mut n = 0;
        while n < self.burst {
            match cx.pull(0) {
                Some(p) => {
                    if self.send(&t, &p) && cx.noutputs() > 0 {
                        cx.push(0, p);
                    }
                    n += 1;
                }
                None => break,
            }
        }
        if n > 0 {
            self.flush(&t);
            return true;
        }
        match &self.signal {
            Some(sig) => cx.signal_active(sig),
            None => true,
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "count" => self.sent.to_string(),
            "drops" => self.drops.to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, _value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "reset_counts" => {
                self.sent = 0;
                self.drops = 0;
                Some(Ok(()))
            }
            _ => None,
        }
    }

    click::element_any!();
}
