//! The switch thread and its handle.

use crate::port::{Counters, Drop, Health, Port, PortStats, Refused};
use crate::table::{Table, TableRow};
use clickos_sys::{drain, eventfd, signal, EventFd};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Builds a port on the switch's thread (ports need not be `Send`).
pub type PortSpec = Box<dyn FnOnce() -> Result<Box<dyn Port>, String> + Send>;

/// Receives events on the switch thread.
pub type EventSink = Arc<dyn Fn(&Event) + Send + Sync>;

/// Something that happened to a port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub switch: String,
    pub port: usize,
    pub port_name: String,
    pub what: String,
}

impl std::fmt::Display for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "switch {}: port {} ({}): {}",
            self.switch, self.port, self.port_name, self.what
        )
    }
}

/// How a switch behaves.
#[derive(Clone)]
pub struct SwitchOptions {
    /// For threads, events and errors.
    pub name: String,
    /// Frames taken from one port per round (VALE's `bridge_batch`).
    pub burst: usize,
    /// Largest number of MAC table entries.
    pub table_capacity: usize,
    /// Largest number of ports.
    pub max_ports: usize,
    /// Learn source addresses (off: static entries only, ClickOS's
    /// default).
    pub learning: bool,
    /// Flood broadcast, multicast and unknown unicast to every other
    /// unpatched port (off: drop them as `no_route`; broadcast is still
    /// flooded).
    pub flood_unknown: bool,
    /// How long the thread keeps polling without traffic before it arms
    /// every port's wake-up and sleeps.
    pub spin: Duration,
    /// Pin the thread to this CPU.
    pub cpu: Option<usize>,
    /// Called on the switch thread for every event (also kept for
    /// [`SwitchHandle::events`]).
    pub on_event: Option<EventSink>,
}

impl Default for SwitchOptions {
    fn default() -> Self {
        SwitchOptions {
            name: "sw0".into(),
            burst: 64,
            table_capacity: 1 << 20,
            max_ports: 4096,
            learning: false,
            flood_unknown: true,
            spin: Duration::from_micros(50),
            cpu: None,
            on_event: None,
        }
    }
}

/// A snapshot of a switch's counters.
#[derive(Clone, Debug)]
pub struct Stats {
    pub ports: Vec<PortStats>,
    pub table_entries: usize,
    pub learn_refused: u64,
    /// Rounds in which the switch went to sleep.
    pub sleeps: u64,
}

impl Stats {
    pub fn port(&self, id: usize) -> Option<&PortStats> {
        self.ports.iter().find(|p| p.id == id)
    }
    pub fn by_name(&self, name: &str) -> Option<&PortStats> {
        self.ports.iter().find(|p| p.name == name)
    }
}

enum Cmd {
    AddPort(String, PortSpec, bool, Sender<Result<usize, String>>),
    Enable(usize, Sender<Result<(), String>>),
    RemovePort(usize, Sender<Result<(), String>>),
    Patch(usize, Option<usize>, Sender<Result<(), String>>),
    Insert([u8; 6], usize, Sender<Result<(), String>>),
    Remove([u8; 6], Sender<bool>),
    Table(Sender<Vec<TableRow>>),
    Stats(Sender<Stats>),
    Learning(bool),
    Hold(bool),
    Stop(Sender<Stats>),
}

struct Control {
    cmds: Mutex<Vec<Cmd>>,
    pending: AtomicBool,
    bell: EventFd,
    events: Mutex<Vec<Event>>,
    stopped: AtomicBool,
}

/// A running switch. Dropping the handle stops the switch.
pub struct SwitchHandle {
    ctl: Arc<Control>,
    name: String,
    thread: Option<std::thread::JoinHandle<()>>,
}

struct Slot {
    name: String,
    port: Option<Box<dyn Port>>,
    up: bool,
    /// Receives (a port added disabled waits for `enable`, so that a
    /// topology can be wired before any frame moves).
    enabled: bool,
    /// Where every frame received here goes (bypasses the table).
    patch: Option<u16>,
    /// Takes part in flooding (present, up, not a patch source).
    floods: bool,
    touched: bool,
    c: Counters,
}

struct Core {
    name: String,
    slots: Vec<Slot>,
    table: Table,
    learning: bool,
    flood_unknown: bool,
    burst: usize,
    max_ports: usize,
    touched: Vec<u16>,
    /// Flushes left pending by a port (do not sleep).
    unflushed: bool,
    /// Forwarding stopped by [`SwitchHandle::hold`]; commands still run.
    held: bool,
    sleeps: u64,
    ctl: Arc<Control>,
    on_event: Option<EventSink>,
}

const BROADCAST_BIT: u8 = 1;

impl Core {
    fn event(&self, port: usize, what: String) {
        let e = Event {
            switch: self.name.clone(),
            port,
            port_name: self
                .slots
                .get(port)
                .map(|s| s.name.clone())
                .unwrap_or_default(),
            what,
        };
        if let Some(cb) = &self.on_event {
            cb(&e);
        }
        self.ctl
            .events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(e);
    }

    fn refresh_flood(&mut self) {
        for s in &mut self.slots {
            s.floods = s.port.is_some() && s.up && s.patch.is_none();
        }
    }

    #[inline]
    fn deliver(&mut self, d: usize, f: &[u8]) {
        let s = &mut self.slots[d];
        let r = match s.port.as_mut() {
            Some(p) if s.up => p.queue(f),
            _ => Err(Refused::Down),
        };
        match r {
            Ok(()) => {
                s.c.tx_packets += 1;
                s.c.tx_bytes += f.len() as u64;
                if !s.touched {
                    s.touched = true;
                    self.touched.push(d as u16);
                }
            }
            Err(Refused::Full) => s.c.drop(Drop::Full),
            Err(Refused::Oversize) => s.c.drop(Drop::Oversize),
            Err(Refused::Down) => s.c.drop(Drop::Down),
        }
    }

    fn flood(&mut self, i: usize, f: &[u8]) {
        let mut any = false;
        for d in 0..self.slots.len() {
            if d != i && self.slots[d].floods {
                self.deliver(d, f);
                any = true;
            }
        }
        if !any {
            self.slots[i].c.drop(Drop::NoRoute);
        }
    }

    #[inline]
    fn route(&mut self, i: usize, f: &[u8]) {
        let s = &mut self.slots[i];
        s.c.rx_packets += 1;
        s.c.rx_bytes += f.len() as u64;
        if let Some(d) = s.patch {
            self.deliver(d as usize, f);
            return;
        }
        if f.len() < 14 {
            s.c.drop(Drop::Runt);
            return;
        }
        if self.learning && f[6] & BROADCAST_BIT == 0 {
            self.table.learn(&f[6..12], i);
        }
        if f[0] & BROADCAST_BIT != 0 {
            self.flood(i, f);
            return;
        }
        match self.table.lookup(&f[..6]) {
            Some(d) if d == i => self.slots[i].c.drop(Drop::Hairpin),
            Some(d) if d < self.slots.len() => self.deliver(d, f),
            _ if self.flood_unknown => self.flood(i, f),
            _ => self.slots[i].c.drop(Drop::NoRoute),
        }
    }

    fn forward(&mut self, i: usize) -> usize {
        let Some(mut src) = self.slots[i].port.take() else {
            return 0;
        };
        if !self.slots[i].up || !self.slots[i].enabled {
            self.slots[i].port = Some(src);
            return 0;
        }
        let mut max = self.burst;
        if let Some(d) = self.slots[i].patch {
            let d = &self.slots[d as usize];
            if let (Some(p), true) = (d.port.as_ref(), d.up) {
                max = max.min(p.room());
            }
        }
        let n = if max == 0 {
            0
        } else {
            src.recv(max, &mut |f| self.route(i, f))
        };
        self.slots[i].port = Some(src);
        n
    }

    fn flush_touched(&mut self) {
        self.unflushed = false;
        let mut keep = Vec::new();
        for &d in &self.touched {
            let s = &mut self.slots[d as usize];
            s.touched = false;
            if let Some(p) = s.port.as_mut() {
                if p.flush() {
                    keep.push(d);
                }
            }
        }
        self.touched.clear();
        for d in keep {
            self.slots[d as usize].touched = true;
            self.touched.push(d);
            self.unflushed = true;
        }
    }

    fn check_health(&mut self, only: Option<usize>) {
        let mut changed = false;
        for i in 0..self.slots.len() {
            if only.is_some_and(|o| o != i) {
                continue;
            }
            let s = &mut self.slots[i];
            if !s.up {
                continue;
            }
            let Some(p) = s.port.as_mut() else { continue };
            if let Health::Down(why) = p.health() {
                s.up = false;
                changed = true;
                self.event(i, format!("down: {why}"));
            }
        }
        if changed {
            self.refresh_flood();
        }
    }

    fn stats(&mut self) -> Stats {
        Stats {
            ports: self
                .slots
                .iter_mut()
                .enumerate()
                .filter_map(|(id, s)| {
                    let p = s.port.as_mut()?;
                    Some(PortStats {
                        id,
                        name: s.name.clone(),
                        kind: p.kind(),
                        describe: p.describe(),
                        health: if s.up { Health::Up } else { p.health() },
                        counters: s.c.clone(),
                        extra: p.extra(),
                    })
                })
                .collect(),
            table_entries: self.table.len(),
            learn_refused: self.table.learn_refused,
            sleeps: self.sleeps,
        }
    }

    fn port_ok(&self, id: usize) -> Result<(), String> {
        match self.slots.get(id) {
            Some(s) if s.port.is_some() => Ok(()),
            _ => Err(format!("switch {}: no port {id}", self.name)),
        }
    }

    /// Runs the queued commands; true on Stop.
    fn commands(&mut self) -> bool {
        let cmds = std::mem::take(&mut *self.ctl.cmds.lock().unwrap_or_else(|e| e.into_inner()));
        for c in cmds {
            match c {
                Cmd::AddPort(name, spec, enabled, reply) => {
                    let r = self.add_port(name, spec, enabled);
                    let _ = reply.send(r);
                }
                Cmd::Enable(id, reply) => {
                    let r = self.port_ok(id).map(|()| self.slots[id].enabled = true);
                    let _ = reply.send(r);
                }
                Cmd::RemovePort(id, reply) => {
                    let r = self.port_ok(id).map(|()| {
                        if let Some(mut p) = self.slots[id].port.take() {
                            p.close();
                        }
                        self.slots[id].up = false;
                        self.table.forget_port(id);
                        for s in &mut self.slots {
                            if s.patch == Some(id as u16) {
                                s.patch = None;
                            }
                        }
                        self.slots[id].patch = None;
                        self.refresh_flood();
                    });
                    let _ = reply.send(r);
                }
                Cmd::Patch(from, to, reply) => {
                    let r = self.port_ok(from).and_then(|()| {
                        if let Some(t) = to {
                            self.port_ok(t)?;
                            if t == from {
                                return Err("a port cannot be patched to itself".into());
                            }
                        }
                        self.slots[from].patch = to.map(|t| t as u16);
                        self.refresh_flood();
                        Ok(())
                    });
                    let _ = reply.send(r);
                }
                Cmd::Insert(mac, port, reply) => {
                    let r = self
                        .port_ok(port)
                        .and_then(|()| self.table.insert(mac, port));
                    let _ = reply.send(r);
                }
                Cmd::Remove(mac, reply) => {
                    let _ = reply.send(self.table.remove(mac));
                }
                Cmd::Table(reply) => {
                    let _ = reply.send(self.table.rows());
                }
                Cmd::Stats(reply) => {
                    let _ = reply.send(self.stats());
                }
                Cmd::Learning(on) => self.learning = on,
                Cmd::Hold(on) => self.held = on,
                Cmd::Stop(reply) => {
                    self.flush_touched();
                    let st = self.stats();
                    for s in &mut self.slots {
                        if let Some(p) = s.port.as_mut() {
                            p.close();
                        }
                    }
                    let _ = reply.send(st);
                    return true;
                }
            }
        }
        false
    }

    fn add_port(&mut self, name: String, spec: PortSpec, enabled: bool) -> Result<usize, String> {
        if self
            .slots
            .iter()
            .any(|s| s.port.is_some() && s.name == name)
        {
            return Err(format!(
                "switch {}: a port named '{name}' exists",
                self.name
            ));
        }
        let id = match self.slots.iter().position(|s| s.port.is_none()) {
            Some(i) => i,
            None if self.slots.len() < self.max_ports => {
                self.slots.push(Slot {
                    name: String::new(),
                    port: None,
                    up: false,
                    enabled: false,
                    patch: None,
                    floods: false,
                    touched: false,
                    c: Counters::default(),
                });
                self.slots.len() - 1
            }
            None => {
                return Err(format!(
                    "switch {}: all {} ports in use",
                    self.name, self.max_ports
                ))
            }
        };
        let p = spec().map_err(|e| format!("port '{name}': {e}"))?;
        self.slots[id] = Slot {
            name,
            port: Some(p),
            up: true,
            enabled,
            patch: None,
            floods: false,
            touched: false,
            c: Counters::default(),
        };
        self.refresh_flood();
        Ok(id)
    }

    /// Arms every port and sleeps until one may have frames, a command
    /// arrives, or the housekeeping timeout.
    fn sleep(&mut self, pfds: &mut Vec<libc::pollfd>, owners: &mut Vec<usize>) {
        for s in &mut self.slots {
            if let (Some(p), true) = (s.port.as_mut(), s.up) {
                if !p.arm() {
                    return;
                }
            }
        }
        pfds.clear();
        owners.clear();
        pfds.push(libc::pollfd {
            fd: self.ctl.bell.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        });
        owners.push(usize::MAX);
        for (i, s) in self.slots.iter().enumerate() {
            if let (Some(p), true) = (s.port.as_ref(), s.up) {
                if let Some(fd) = p.poll_fd() {
                    pfds.push(libc::pollfd {
                        fd,
                        events: libc::POLLIN,
                        revents: 0,
                    });
                    owners.push(i);
                }
            }
        }
        if self.ctl.pending.load(Ordering::Acquire) {
            return;
        }
        self.sleeps += 1;
        let _ = clickos_sys::ppoll(pfds, Some(Duration::from_millis(100)));
        drain(&self.ctl.bell);
        let mut errs = Vec::new();
        for (k, pfd) in pfds.iter().enumerate().skip(1) {
            if pfd.revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
                errs.push(owners[k]);
            }
        }
        for s in &mut self.slots {
            if let (Some(p), true) = (s.port.as_mut(), s.up) {
                p.after_wake();
            }
        }
        for i in errs {
            self.check_health(Some(i));
        }
    }

    fn run(&mut self, spin: Duration) {
        let mut pfds = Vec::new();
        let mut owners = Vec::new();
        let mut idle_since: Option<Instant> = None;
        let mut last_health = Instant::now();
        let mut round: u64 = 0;
        loop {
            if self.ctl.pending.load(Ordering::Acquire) {
                self.ctl.pending.store(false, Ordering::Release);
                if self.commands() {
                    return;
                }
            }
            if self.held {
                // Only commands (which ring the bell) end a hold.
                let mut bell = [libc::pollfd {
                    fd: self.ctl.bell.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                }];
                if !self.ctl.pending.load(Ordering::Acquire) {
                    let _ = clickos_sys::ppoll(&mut bell, Some(Duration::from_millis(100)));
                }
                drain(&self.ctl.bell);
                continue;
            }
            let mut moved = 0;
            for i in 0..self.slots.len() {
                moved += self.forward(i);
            }
            if !self.touched.is_empty() {
                self.flush_touched();
            }
            round = round.wrapping_add(1);
            if moved == 0 && !self.unflushed {
                let now = Instant::now();
                let since = *idle_since.get_or_insert(now);
                if now.duration_since(last_health) >= Duration::from_millis(100) {
                    last_health = now;
                    self.check_health(None);
                }
                if now.duration_since(since) >= spin {
                    self.sleep(&mut pfds, &mut owners);
                    idle_since = None;
                } else {
                    // Poll again soon, but let anything else runnable on
                    // this CPU (an instance's vCPU, the sender of the next
                    // frame) run first: on a small machine a pure spin
                    // starves the very traffic it waits for.
                    std::thread::yield_now();
                }
            } else {
                idle_since = None;
                if round % 4096 == 0 {
                    let now = Instant::now();
                    if now.duration_since(last_health) >= Duration::from_millis(100) {
                        last_health = now;
                        self.check_health(None);
                    }
                }
            }
        }
    }
}

impl SwitchHandle {
    /// Starts an empty switch on a thread of its own.
    pub fn spawn(opts: SwitchOptions) -> Result<SwitchHandle, String> {
        if opts.burst == 0 {
            return Err("switch burst must be at least 1".into());
        }
        if opts.max_ports == 0 || opts.max_ports > u16::MAX as usize {
            return Err(format!("switch max_ports must be 1 to {}", u16::MAX));
        }
        let ctl = Arc::new(Control {
            cmds: Mutex::new(Vec::new()),
            pending: AtomicBool::new(false),
            bell: eventfd().map_err(|e| format!("eventfd: {e}"))?,
            events: Mutex::new(Vec::new()),
            stopped: AtomicBool::new(false),
        });
        let o = opts.clone();
        let ctl2 = ctl.clone();
        let make = move || Core {
            name: o.name.clone(),
            slots: Vec::new(),
            table: Table::new(o.table_capacity),
            learning: o.learning,
            flood_unknown: o.flood_unknown,
            burst: o.burst,
            max_ports: o.max_ports,
            touched: Vec::new(),
            unflushed: false,
            held: false,
            sleeps: 0,
            ctl: ctl2,
            on_event: o.on_event.clone(),
        };
        let spin = opts.spin;
        let cpu = opts.cpu;
        let thread = std::thread::Builder::new()
            .name(format!("switch-{}", opts.name))
            .spawn(move || {
                if let Some(c) = cpu {
                    pin_to(c);
                }
                let mut core = make();
                core.run(spin);
                core.ctl.stopped.store(true, Ordering::Release);
            })
            .map_err(|e| format!("switch thread: {e}"))?;
        Ok(SwitchHandle {
            ctl,
            name: opts.name,
            thread: Some(thread),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    fn send(&self, c: Cmd) {
        self.ctl
            .cmds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(c);
        self.ctl.pending.store(true, Ordering::Release);
        signal(&self.ctl.bell);
    }

    fn ask<T>(&self, make: impl FnOnce(Sender<T>) -> Cmd) -> Result<T, String> {
        if self.ctl.stopped.load(Ordering::Acquire) {
            return Err(format!("switch {} has stopped", self.name));
        }
        let (tx, rx) = channel();
        self.send(make(tx));
        rx.recv()
            .map_err(|_| format!("switch {} has stopped", self.name))
    }

    /// Adds a port built by `spec` on the switch thread; its id. It
    /// receives at once.
    pub fn add_port(&self, name: &str, spec: PortSpec) -> Result<usize, String> {
        self.ask(|r| Cmd::AddPort(name.to_string(), spec, true, r))?
    }

    /// Adds a port that receives nothing until [`enable`](Self::enable)
    /// (it can be sent to): wire a topology, then enable its ports.
    pub fn add_port_disabled(&self, name: &str, spec: PortSpec) -> Result<usize, String> {
        self.ask(|r| Cmd::AddPort(name.to_string(), spec, false, r))?
    }

    /// Lets a port added disabled receive.
    pub fn enable(&self, id: usize) -> Result<(), String> {
        self.ask(|r| Cmd::Enable(id, r))?
    }

    /// Removes a port (its table entries and the patches to it go too).
    pub fn remove_port(&self, id: usize) -> Result<(), String> {
        self.ask(|r| Cmd::RemovePort(id, r))?
    }

    /// Sends every frame received on `from` to `to` (`None`: back to the
    /// table), bypassing the MAC table.
    pub fn patch(&self, from: usize, to: Option<usize>) -> Result<(), String> {
        self.ask(|r| Cmd::Patch(from, to, r))?
    }

    /// Patches `a` to `b` and `b` to `a`: a wire.
    pub fn wire(&self, a: usize, b: usize) -> Result<(), String> {
        self.patch(a, Some(b))?;
        self.patch(b, Some(a))
    }

    /// Adds or replaces a static MAC table entry.
    pub fn insert(&self, mac: [u8; 6], port: usize) -> Result<(), String> {
        self.ask(|r| Cmd::Insert(mac, port, r))?
    }

    /// Removes a MAC table entry; whether there was one.
    pub fn remove(&self, mac: [u8; 6]) -> Result<bool, String> {
        self.ask(|r| Cmd::Remove(mac, r))
    }

    /// The MAC table, sorted by address.
    pub fn table(&self) -> Result<Vec<TableRow>, String> {
        self.ask(Cmd::Table)
    }

    /// Every port's counters.
    pub fn stats(&self) -> Result<Stats, String> {
        self.ask(Cmd::Stats)
    }

    pub fn set_learning(&self, on: bool) {
        self.send(Cmd::Learning(on));
    }

    /// Stops all forwarding (`true`) until called with `false`; commands
    /// are still carried out (a pause; to wire new ports into a running
    /// switch without stopping the others, add them with
    /// [`add_port_disabled`](Self::add_port_disabled) and enable them once
    /// patched).
    pub fn hold(&self, on: bool) -> Result<(), String> {
        if self.ctl.stopped.load(Ordering::Acquire) {
            return Err(format!("switch {} has stopped", self.name));
        }
        // Commands run in order: whatever is asked after this sees it.
        self.send(Cmd::Hold(on));
        Ok(())
    }

    /// Events so far (taken: each is returned once).
    pub fn events(&self) -> Vec<Event> {
        std::mem::take(&mut *self.ctl.events.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Stops the switch after flushing what is queued, closes every port
    /// (capture files are complete afterwards) and returns the final
    /// counters.
    pub fn stop(mut self) -> Result<Stats, String> {
        let r = self.ask(Cmd::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        r
    }
}

impl std::ops::Drop for SwitchHandle {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            if !self.ctl.stopped.load(Ordering::Acquire) {
                let (tx, _rx) = channel();
                self.send(Cmd::Stop(tx));
            }
            let _ = t.join();
        }
    }
}

fn pin_to(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET writes inside it;
    // sched_setaffinity reads it for this thread (0).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}
