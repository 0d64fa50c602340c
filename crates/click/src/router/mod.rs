//! The router: builds a checked element graph from a flat configuration,
//! runs tasks and timers, moves packets along push and pull connections,
//! and serves handlers.
//!
//! Elements live in slots. An element's methods get `&mut self` from its
//! slot and a [`Ctx`] that reaches the rest of the graph through shared
//! references only; a per-slot busy flag guarantees that no element is
//! borrowed twice (a push that loops back into a busy element is deferred
//! until the current one returns, a pull from a busy element yields
//! nothing), so re-entrant graphs stay memory-safe.

use crate::element::{Batch, ClassSpec, ConfigureCtx, Element, HandlerMode};
use crate::packet::Pool;
use crate::registry::Registry;
use crate::time::{Clock, Timestamp};
use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BinaryHeap, VecDeque};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use click_lang::NameTable;
use core::cell::{Cell, RefCell, UnsafeCell};
use core::cmp::Reverse;
use core::fmt::Write as _;

pub use crate::packet::Packet;

/// The version string the `version` handler reports.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where a router's text output goes (Print, handler dumps, ...).
pub trait Console {
    /// One line (or several) for standard error; no trailing newline.
    fn error_line(&self, line: &str);
    /// Bytes for standard output.
    fn stdout(&self, text: &str);
    /// Writes `text` to the file `path` (truncating it first unless
    /// `append`), for Script's `print >FILE`. Consoles without files
    /// refuse.
    fn write_file(&self, _path: &str, _append: bool, _text: &str) -> Result<(), String> {
        Err(String::from("file redirection not supported here"))
    }
    /// Reads the file `path` (Script's `$(cat FILE)`). Consoles without
    /// files refuse.
    fn read_file(&self, _path: &str) -> Result<String, String> {
        Err(String::from("files not supported here"))
    }
    /// Asks the host to catch signal `signo` and hand it to the router
    /// ([`Router::deliver_signal`]); false where there are no signals
    /// (Script's `TYPE SIGNAL`).
    fn catch_signal(&self, _signo: i32) -> bool {
        false
    }
    /// Sends signal `signo` to process `pid` (Script's `$(kill ...)`).
    fn kill(&self, _signo: i32, _pid: i64) -> Result<(), String> {
        Err(String::from("signals not supported here"))
    }
    /// This process's id (Script's `$$`), where there is one.
    fn pid(&self) -> Option<u32> {
        None
    }
}

impl<C: Console + ?Sized> Console for alloc::rc::Rc<C> {
    fn error_line(&self, line: &str) {
        (**self).error_line(line)
    }
    fn stdout(&self, text: &str) {
        (**self).stdout(text)
    }
    fn write_file(&self, path: &str, append: bool, text: &str) -> Result<(), String> {
        (**self).write_file(path, append, text)
    }
    fn read_file(&self, path: &str) -> Result<String, String> {
        (**self).read_file(path)
    }
    fn catch_signal(&self, signo: i32) -> bool {
        (**self).catch_signal(signo)
    }
    fn kill(&self, signo: i32, pid: i64) -> Result<(), String> {
        (**self).kill(signo, pid)
    }
    fn pid(&self) -> Option<u32> {
        (**self).pid()
    }
}

/// A console that collects output in memory (tests, the guest).
#[derive(Default)]
pub struct BufferConsole {
    pub err: RefCell<String>,
    pub out: RefCell<String>,
}

impl Console for BufferConsole {
    fn error_line(&self, line: &str) {
        let mut e = self.err.borrow_mut();
        e.push_str(line);
        e.push('\n');
    }
    fn stdout(&self, text: &str) {
        self.out.borrow_mut().push_str(text);
    }
}

/// A notifier signal, owned by the element that created it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SignalId(pub u32);

/// What a puller learns from the notifiers upstream of one of its inputs.
#[derive(Clone, Debug)]
pub enum UpstreamSignal {
    /// Some upstream path can always produce packets: keep polling.
    AlwaysActive,
    /// Packets can arrive only while one of these signals is active.
    Signals(Vec<SignalId>),
}

struct SignalState {
    active: bool,
    listeners: Vec<usize>,
    /// Signals activated with this one (Click's dependent notifiers: a
    /// PullSwitch's notifier follows the queues upstream of it).
    dependents: Vec<SignalId>,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Proc {
    Agnostic,
    Push,
    Pull,
}

#[derive(Copy, Clone)]
struct Target {
    elem: u32,
    port: u32,
}

struct Slot {
    elem: UnsafeCell<Box<dyn Element>>,
    busy: Cell<bool>,
    spec: &'static ClassSpec,
    name: String,
    landmark: String,
    config: RefCell<String>,
    /// Push outputs: where packets go.
    out_target: Vec<Option<Target>>,
    /// Pull inputs: where packets come from.
    in_source: Vec<Option<Target>>,
    in_push: Vec<bool>,
    out_push: Vec<bool>,
    task_scheduled: Cell<bool>,
    /// The element has a task (it was scheduled at least once): it gets
    /// Click's task handlers `scheduled` and `home_thread`.
    has_task: Cell<bool>,
    /// Pulls on output 0 or 1 answered straight from this input, without
    /// calling the element ([`NO_ROUTE`]: call it): Click's Bypass, which
    /// rewires its neighbours, so a bypass path may loop back into it.
    pull_route: [Cell<u8>; 2],
}

/// No pull route (see `Slot::pull_route`).
const NO_ROUTE: u8 = u8::MAX;

impl Slot {
    fn declaration(&self) -> String {
        format!("{} :: {}", self.name, self.spec.name)
    }
}

/// Outcome of one scheduler pass.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RunState {
    /// Tasks are scheduled: call again at once.
    Busy,
    /// Nothing to do until this time (a timer), or until woken from
    /// outside (`None`).
    Idle(Option<Timestamp>),
    /// The router stopped.
    Stopped,
}

/// Errors from handler calls, with Click's ControlSocket codes in mind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HandlerError {
    NoSuchElement(String),
    NoSuchHandler(String),
    PermissionDenied(String),
    Failed(String),
    Busy(String),
}

impl core::fmt::Display for HandlerError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            HandlerError::NoSuchElement(e) => write!(f, "no element named '{}'", e),
            HandlerError::NoSuchHandler(h) => write!(f, "no handler named '{}'", h),
            HandlerError::PermissionDenied(h) => {
                write!(f, "handler '{}' not accessible this way", h)
            }
            HandlerError::Failed(m) => f.write_str(m),
            HandlerError::Busy(h) => write!(f, "handler '{}' is busy", h),
        }
    }
}

/// Options for building a router.
pub struct RouterOptions {
    /// Largest batch sources may push at once (1 = Click's packet-at-a-time).
    pub max_batch: usize,
    /// Idle buffers the packet pool keeps.
    pub pool_size: usize,
    /// Whatever the host wants its own elements to reach (vNIC rings in an
    /// instance, say); elements get it with [`Ctx::host`].
    pub host: Option<alloc::rc::Rc<dyn core::any::Any>>,
    /// When the driver runs one copy of the configuration per thread
    /// (`clickos run -j N --replicate`): this copy's index (0-based) ...
    pub copy: usize,
    /// ... and the number of copies (1 otherwise). Device elements use
    /// them to share an interface between the copies.
    pub ncopies: usize,
    /// The routers this one runs beside, when one configuration is spread
    /// over several threads; see [`Peers`].
    pub peers: Option<alloc::rc::Rc<dyn Peers>>,
    /// Spare packet buffers shared with those routers' pools.
    pub depot: Option<alloc::sync::Arc<dyn crate::packet::BufferDepot>>,
    /// The thread each element's task runs on, as the `home_thread`
    /// handler reports it (-1: never scheduled); elements not listed run
    /// on thread 0.
    pub home_threads: BTreeMap<String, i64>,
    /// Names for addresses and ports (AddressInfo, PortInfo) that the
    /// elements' arguments may use. `None`: collected from the
    /// configuration being built. A host that builds several routers from
    /// parts of one configuration passes [`name_table`] of the whole, so
    /// every part sees every AddressInfo.
    pub names: Option<NameTable>,
    /// Whether configuration warnings are printed (Click's `-w` turns
    /// them off).
    pub warnings: bool,
    /// When this router is to replace a running one (Click's hot swap):
    /// the running router's element names and classes. Elements see the
    /// class of their namesake with [`Ctx::hotswap_class`] while they
    /// initialize (a ControlSocket leaves its port to be taken over), and
    /// [`Router::take_state_from`] then moves state across.
    pub hotswap: Option<BTreeMap<String, &'static str>>,
    /// Global handlers the host adds (the driver's `hotconfig`).
    pub globals: Option<alloc::rc::Rc<dyn GlobalHandlers>>,
}

/// Global handlers a host adds to a router's own (`version`, `stop`, ...).
pub trait GlobalHandlers {
    /// `(name, mode)` pairs for the `handlers` listing (`"w"`, `"r"`,
    /// `"rw"`).
    fn list(&self) -> Vec<(&'static str, &'static str)>;
    /// A read of `name`, or `None` if the host has no such handler.
    fn read(&self, name: &str) -> Option<Result<String, String>>;
    /// A write of `name`, or `None` if the host has no such handler.
    fn write(&self, name: &str, value: &str) -> Option<Result<(), String>>;
}

/// Initialization order: declaration order, with every element preceded
/// by the elements its pull inputs pull from (depth first; a pull cycle,
/// which the graph check allows through agnostic elements, falls back to
/// declaration order where it closes).
fn init_order(slots: &[Slot]) -> Vec<usize> {
    let n = slots.len();
    let mut state = vec![0u8; n]; // 0 new, 1 on the stack, 2 placed
    let mut order = Vec::with_capacity(n);
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        // (element, next input port to look at)
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        state[root] = 1;
        while let Some(&mut (e, ref mut port)) = stack.last_mut() {
            let s = &slots[e];
            let mut next = None;
            while *port < s.in_source.len() {
                let j = *port;
                *port += 1;
                if s.in_push.get(j).copied().unwrap_or(true) {
                    continue;
                }
                if let Some(t) = s.in_source[j] {
                    let u = t.elem as usize;
                    if u < n && state[u] == 0 {
                        next = Some(u);
                        break;
                    }
                }
            }
            match next {
                Some(u) => {
                    state[u] = 1;
                    stack.push((u, 0));
                }
                None => {
                    state[e] = 2;
                    order.push(e);
                    stack.pop();
                }
            }
        }
    }
    order
}

/// The names (Click's NameInfo) that the configuration's AddressInfo and
/// PortInfo elements define, in configuration order, as Click defines them
/// before configuring any other element. Arguments those elements cannot
/// use are skipped here; configuring them reports the errors.
pub fn name_table(flat: &click_lang::FlatConfig) -> NameTable {
    let mut t = NameTable::new();
    for e in &flat.elements {
        match e.class.as_str() {
            "AddressInfo" => {
                t.define_addresses(&e.name, &click_lang::split_args(&e.config));
            }
            "PortInfo" => {
                t.define_ports(&e.name, &click_lang::split_args(&e.config));
            }
            _ => {}
        }
    }
    t
}

/// The other routers a router runs beside when the host spreads one
/// configuration over several threads (each thread runs a router of its
/// own). Handler calls made on this router — by a Script, a ControlSocket,
/// the host — and stop requests go through the peers, which serve them
/// here ([`Core::read_handler_local`], ...) or on the thread that owns the
/// element. A router without peers is alone and does all of it itself.
pub trait Peers {
    /// A handler read (`param` for read-with-parameter handlers).
    fn read(&self, core: &Core, path: &str, param: Option<&str>) -> Result<String, HandlerError>;
    /// A handler write.
    fn write(&self, core: &Core, path: &str, value: &str) -> Result<(), HandlerError>;
    /// Whether an element of this name exists in any of the routers.
    fn has_element(&self, name: &str) -> bool;
    /// Whether a compound element of this name (elements named
    /// `name/...`) exists in any of the routers.
    fn has_compound(&self, name: &str) -> bool;
    /// Adds `delta` to the run count the routers share and returns the new
    /// value; `None` when each router keeps its own.
    fn runcount_add(&self, delta: i32) -> Option<i32>;
    /// The shared run count fell to zero and no driver manager is in this
    /// router: returns true if the peers took the request (a driver
    /// manager elsewhere was woken); otherwise this router stops.
    fn stop_requested(&self) -> bool;
    /// An element of this router became the driver manager.
    fn driver_manager_here(&self, core: &Core, elem: usize);
}

impl Default for RouterOptions {
    fn default() -> Self {
        RouterOptions {
            max_batch: 32,
            pool_size: 4096,
            host: None,
            copy: 0,
            ncopies: 1,
            peers: None,
            depot: None,
            home_threads: BTreeMap::new(),
            names: None,
            warnings: true,
            hotswap: None,
            globals: None,
        }
    }
}

/// Task runs per scheduler pass before the timers are looked at (Click's
/// `RouterThread` default `tasks_per_iter`).
const TASKS_PER_ITER: usize = 128;

/// (expiry, sequence number, element, timer id)
type TimerEntry = (Timestamp, u64, usize, u32);

/// The shared core that element contexts reach.
pub struct Core {
    slots: Vec<Slot>,
    names: BTreeMap<String, usize>,
    connections: Vec<(usize, usize, usize, usize)>,
    requirements: Vec<String>,
    flat_config: String,
    pool: Pool,
    clock: Box<dyn Clock>,
    console: Box<dyn Console>,
    run_queue: RefCell<VecDeque<usize>>,
    timers: RefCell<BinaryHeap<Reverse<TimerEntry>>>,
    timer_live: RefCell<BTreeMap<(usize, u32), u64>>,
    timer_seq: Cell<u64>,
    signals: RefCell<Vec<SignalState>>,
    deferred: RefCell<VecDeque<(usize, usize, Packet)>>,
    /// Handler writes to an element that was busy (a Script TYPE PACKET
    /// downstream of an Unqueue writing `unqueue.reset`): applied as soon
    /// as the element returns, in order.
    deferred_writes: RefCell<VecDeque<(usize, String, String)>>,
    runcount: Cell<i32>,
    stopped: Cell<bool>,
    driver_manager: Cell<Option<usize>>,
    max_batch: usize,
    host: Option<alloc::rc::Rc<dyn core::any::Any>>,
    copy: usize,
    ncopies: usize,
    peers: Option<alloc::rc::Rc<dyn Peers>>,
    home_threads: BTreeMap<String, i64>,
    name_info: NameTable,
    warnings: bool,
    hotswap: Option<BTreeMap<String, &'static str>>,
    globals: Option<alloc::rc::Rc<dyn GlobalHandlers>>,
    /// (signal, element) pairs waiting for a signal (one-shot, as Click's
    /// master keeps them).
    signal_handlers: RefCell<Vec<(i32, usize)>>,
    /// The clock as read once during the current task run (see
    /// [`Ctx::now_coarse`]); `None` outside task runs or before the first read.
    coarse_now: Cell<Option<Timestamp>>,
    in_task: Cell<bool>,
}

/// A running (or ready-to-run) router.
pub struct Router {
    core: Core,
}

/// Collects the packets a source emits on one output into batches of the
/// router's `max_batch`, so sources need not special-case batching: with
/// `max_batch` 1 (Click's packet-at-a-time order) every packet is pushed at
/// once, otherwise full batches are pushed as they fill and `flush` pushes
/// the rest (a lone packet goes through `push`, without a batch).
pub struct Emitter {
    port: usize,
    max: usize,
    batch: Batch,
}

impl Emitter {
    pub fn new(cx: &Ctx, port: usize) -> Emitter {
        Emitter {
            port,
            max: cx.max_batch().max(1),
            batch: Vec::new(),
        }
    }

    #[inline(always)]
    pub fn emit(&mut self, cx: &Ctx, p: Packet) {
        // the common case, small enough to inline into a source's loop:
        // room in the batch, and it does not fill up with this packet
        let n = self.batch.len();
        if n + 1 < self.max && n < self.batch.capacity() {
            self.batch.push(p);
        } else {
            self.emit_slow(cx, p);
        }
    }

    #[inline(never)]
    fn emit_slow(&mut self, cx: &Ctx, p: Packet) {
        if self.max == 1 {
            cx.push(self.port, p);
            return;
        }
        if self.batch.capacity() == 0 {
            self.batch.reserve_exact(self.max);
        }
        self.batch.push(p);
        if self.batch.len() >= self.max {
            cx.push_batch(self.port, core::mem::take(&mut self.batch));
        }
    }

    /// Pushes whatever is still collected.
    pub fn flush(&mut self, cx: &Ctx) {
        match self.batch.len() {
            0 => {}
            1 => {
                if let Some(p) = self.batch.pop() {
                    cx.push(self.port, p);
                }
            }
            _ => cx.push_batch(self.port, core::mem::take(&mut self.batch)),
        }
    }
}

/// What an element sees of the router while one of its methods runs.
pub struct Ctx<'a> {
    core: &'a Core,
    me: usize,
}

fn parse_range(s: &str) -> Option<(usize, usize)> {
    if s.is_empty() {
        return Some((0, 0));
    }
    if s == "-" {
        return Some((0, usize::MAX));
    }
    if let Some((a, b)) = s.split_once('-') {
        let lo = if a.is_empty() { 0 } else { a.parse().ok()? };
        let hi = if b.is_empty() {
            usize::MAX
        } else {
            b.parse().ok()?
        };
        return Some((lo, hi));
    }
    let n = s.parse().ok()?;
    Some((n, n))
}

fn proc_at(code: &str, port: usize) -> Proc {
    let c = code
        .chars()
        .nth(port)
        .or_else(|| code.chars().last())
        .unwrap_or('a');
    match c {
        'h' => Proc::Push,
        'l' => Proc::Pull,
        _ => Proc::Agnostic,
    }
}

impl Router {
    /// Parses and builds a router. Errors come back as Click prints them,
    /// one string per line, each starting with `FILE:LINE: `.
    pub fn from_config(
        text: &str,
        file: &str,
        defines: &[(String, String)],
        registry: &Registry,
        clock: Box<dyn Clock>,
        console: Box<dyn Console>,
        opts: RouterOptions,
    ) -> Result<Router, Vec<String>> {
        let flat = click_lang::parse_config(text, file, defines)
            .map_err(|errs| errs.iter().map(|e| e.to_string()).collect::<Vec<_>>())?;
        Router::from_flat(&flat, registry, clock, console, opts)
    }

    /// Builds, checks, configures and initialises a router.
    pub fn from_flat(
        flat: &click_lang::FlatConfig,
        registry: &Registry,
        clock: Box<dyn Clock>,
        console: Box<dyn Console>,
        opts: RouterOptions,
    ) -> Result<Router, Vec<String>> {
        let Graph {
            specs,
            nin,
            nout,
            in_push: mut pin,
            out_push: mut pout,
            connections: final_conns,
            mut out_target,
            mut in_source,
        } = check_graph(flat, registry)?;
        let n = specs.len();
        let mut errors: Vec<String> = Vec::new();
        let decl = |i: usize| format!("{} :: {}", flat.elements[i].name, specs[i].name);
        let lm = |i: usize| flat.elements[i].landmark.to_string();

        // 5. configure, with the names of the whole configuration (the
        // host gives them when this router runs only part of it)
        let name_info = match &opts.names {
            Some(t) => t.clone(),
            None => name_table(flat),
        };
        let mut elems: Vec<Box<dyn Element>> = Vec::with_capacity(n);
        for i in 0..n {
            let mut e = (specs[i].make)();
            let cx = ConfigureCtx::new(&flat.elements[i].name, nin[i], nout[i], &name_info);
            let r = e.configure(&flat.elements[i].config, &cx);
            let warnings = cx.warnings.take();
            if !warnings.is_empty() && opts.warnings {
                console.error_line(&format!("{}: While configuring '{}':", lm(i), decl(i)));
                for w in warnings {
                    console.error_line(&format!("{}:   warning: {}", lm(i), w));
                }
            }
            if let Err(msg) = r {
                push_context_error(&mut errors, &lm(i), "While configuring", &decl(i), &msg);
            }
            elems.push(e);
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let order_sensitive = specs.iter().filter(|s| s.order_sensitive).count();
        let slots: Vec<Slot> = elems
            .into_iter()
            .enumerate()
            .map(|(i, e)| Slot {
                elem: UnsafeCell::new(e),
                busy: Cell::new(false),
                spec: specs[i],
                name: flat.elements[i].name.clone(),
                landmark: lm(i),
                config: RefCell::new(flat.elements[i].config.clone()),
                out_target: core::mem::take(&mut out_target[i]),
                in_source: core::mem::take(&mut in_source[i]),
                in_push: core::mem::take(&mut pin[i]),
                out_push: core::mem::take(&mut pout[i]),
                task_scheduled: Cell::new(false),
                has_task: Cell::new(false),
                pull_route: [Cell::new(NO_ROUTE), Cell::new(NO_ROUTE)],
            })
            .collect();
        let names = slots
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), i))
            .collect();
        let core = Core {
            slots,
            names,
            connections: final_conns,
            requirements: flat.requirements.clone(),
            flat_config: click_lang::unparse(flat),
            pool: Pool::with_depot(opts.pool_size, opts.depot.clone()),
            clock,
            console,
            run_queue: RefCell::new(VecDeque::new()),
            timers: RefCell::new(BinaryHeap::new()),
            timer_live: RefCell::new(BTreeMap::new()),
            timer_seq: Cell::new(0),
            signals: RefCell::new(Vec::new()),
            deferred: RefCell::new(VecDeque::new()),
            deferred_writes: RefCell::new(VecDeque::new()),
            runcount: Cell::new(1),
            stopped: Cell::new(false),
            driver_manager: Cell::new(None),
            max_batch: if order_sensitive >= 2 {
                1
            } else {
                opts.max_batch.max(1)
            },
            host: opts.host.clone(),
            copy: opts.copy,
            ncopies: opts.ncopies.max(1),
            peers: opts.peers.clone(),
            home_threads: opts.home_threads.clone(),
            name_info,
            warnings: opts.warnings,
            hotswap: opts.hotswap.clone(),
            globals: opts.globals.clone(),
            signal_handlers: RefCell::new(Vec::new()),
            coarse_now: Cell::new(None),
            in_task: Cell::new(false),
        };
        let router = Router { core };

        // 6. initialize: in declaration order, except that an element's
        // pull sources come first, so notifiers exist (and queues have
        // theirs) when the pullers downstream look for them, as Click's
        // configure-time notifiers do
        for i in init_order(&router.core.slots) {
            let r = router.core.with_elem(i, |e, cx| e.initialize(cx));
            match r {
                Some(Ok(())) => {}
                Some(Err(msg)) => {
                    let s = &router.core.slots[i];
                    push_context_error(
                        &mut errors,
                        &s.landmark,
                        "While initializing",
                        &s.declaration(),
                        &msg,
                    );
                    break;
                }
                None => {}
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(router)
    }

    /// The core, for hosts that need to drive elements directly.
    pub fn core(&self) -> &Core {
        &self.core
    }

    /// Runs due timers, then every scheduled task once.
    pub fn run_pass(&self) -> RunState {
        let c = &self.core;
        if c.stopped.get() {
            return RunState::Stopped;
        }
        // Click's driver loop runs tasks — up to TASKS_PER_ITER task runs,
        // a task that stays scheduled going to the back of the queue, and
        // at least one run of every task queued at the start — then the
        // timers that are due: at start every task runs before a timer (a
        // Script's first step) fires.
        let n = c.run_queue.borrow().len().max(TASKS_PER_ITER);
        for _ in 0..n {
            let Some(i) = c.run_queue.borrow_mut().pop_front() else {
                break;
            };
            let s = &c.slots[i];
            s.task_scheduled.set(false);
            c.in_task.set(true);
            let keep = c.with_elem(i, |e, cx| e.run_task(cx)).unwrap_or(true);
            c.in_task.set(false);
            c.drain_deferred();
            c.coarse_now.set(None);
            if keep && !s.task_scheduled.get() {
                s.task_scheduled.set(true);
                c.run_queue.borrow_mut().push_back(i);
            }
            if c.stopped.get() {
                break;
            }
        }
        if !c.stopped.get() {
            c.run_timers();
        }
        c.state()
    }

    /// Runs until the router stops or goes idle with no timers left.
    /// `advance` is called when only timers remain, with the next expiry;
    /// it should wait (or move a virtual clock) until then.
    pub fn run_until_idle(&self, advance: &mut dyn FnMut(Timestamp)) -> RunState {
        loop {
            match self.run_pass() {
                RunState::Busy => {}
                RunState::Idle(Some(t)) => advance(t),
                other => return other,
            }
        }
    }

    /// Asks the router to stop (the `stop` handler).
    pub fn stop(&self) {
        self.core.stopped.set(true);
    }

    pub fn is_stopped(&self) -> bool {
        self.core.stopped.get()
    }

    /// Calls every element's `cleanup` (flush files and the like).
    pub fn cleanup(&self) {
        for i in 0..self.core.slots.len() {
            self.core.with_elem(i, |e, cx| e.cleanup(cx));
        }
    }

    /// A signal arrived: runs (the `run` write handler of) every element
    /// waiting for it, once — an element that wants the next one asks
    /// again. Returns false if none was waiting (the host then applies the
    /// signal's default action, as Click's driver does).
    pub fn deliver_signal(&self, signo: i32) -> bool {
        let waiting: Vec<usize> = {
            let mut h = self.core.signal_handlers.borrow_mut();
            let w = h
                .iter()
                .filter(|(s, _)| *s == signo)
                .map(|&(_, e)| e)
                .collect();
            h.retain(|(s, _)| *s != signo);
            w
        };
        for &e in &waiting {
            let path = format!("{}.run", self.core.slots[e].name);
            if let Err(err) = self.core.write_handler(&path, "") {
                self.core.console.error_line(&format!("{path}: {err}"));
            }
        }
        !waiting.is_empty()
    }

    /// Whether an element waits for signal `signo`.
    pub fn catches_signal(&self, signo: i32) -> bool {
        self.core
            .signal_handlers
            .borrow()
            .iter()
            .any(|(s, _)| *s == signo)
    }

    /// Every element's name and class, for [`RouterOptions::hotswap`].
    pub fn element_classes(&self) -> BTreeMap<String, &'static str> {
        self.core
            .slots
            .iter()
            .map(|s| (s.name.clone(), s.spec.name))
            .collect()
    }

    /// Click's hot swap: each element of this (new, initialized, not yet
    /// running) router takes the state of its namesake in `old` (which
    /// must not be running either): a Queue its packets, an ARPQuerier
    /// its table, a ControlSocket its port and connections. Elements of
    /// another class are left alone, as each element's
    /// [`Element::take_state`] checks. Call `old.cleanup()` afterwards.
    pub fn take_state_from(&self, old: &Router) {
        for i in init_order(&self.core.slots) {
            let Some(&j) = old.core.names.get(&self.core.slots[i].name) else {
                continue;
            };
            self.core.with_elem(i, |e, cx| {
                old.core.with_elem(j, |oe, _| e.take_state(oe, cx));
            });
        }
    }

    /// Reads `element.handler` or a global handler.
    pub fn read_handler(&self, path: &str) -> Result<String, HandlerError> {
        self.core.read_handler(path)
    }

    /// Writes `element.handler` or a global handler.
    pub fn write_handler(&self, path: &str, value: &str) -> Result<(), HandlerError> {
        self.core.write_handler(path, value)
    }

    /// Reads `element.handler` with a parameter (Click's read-with-parameter
    /// handlers, e.g. `rt.lookup 10.0.0.1`).
    pub fn read_handler_param(&self, path: &str, param: &str) -> Result<String, HandlerError> {
        self.core.read_handler_param(path, param)
    }

    /// Pushes a packet into `element`'s input `port` from outside the graph
    /// (used by hosts for device input and by tests).
    pub fn inject(&self, element: &str, port: usize, p: Packet) -> Result<(), HandlerError> {
        let i = *self
            .core
            .names
            .get(element)
            .ok_or_else(|| HandlerError::NoSuchElement(element.into()))?;
        self.core.push_to(i, port, p);
        self.core.drain_deferred();
        Ok(())
    }

    /// The element object named `name`, for downcasting in tests.
    pub fn with_element<R>(&self, name: &str, f: impl FnOnce(&dyn Element) -> R) -> Option<R> {
        let i = *self.core.names.get(name)?;
        let s = &self.core.slots[i];
        if s.busy.get() {
            return None;
        }
        // SAFETY: the slot is not busy, so no `&mut` to this element exists;
        // we hand out a shared reference for the duration of `f` only, and
        // `f` cannot reach the router to start a mutable borrow.
        let e: &dyn Element = unsafe { &**s.elem.get() };
        Some(f(e))
    }

    pub fn pool(&self) -> &Pool {
        &self.core.pool
    }

    /// The index of element `name`, for [`Router::schedule_task_of`].
    pub fn element_index(&self, name: &str) -> Option<usize> {
        self.core.names.get(name).copied()
    }

    /// Schedules element `i`'s task from outside the graph (a host that was
    /// told new input arrived for a sleeping device element).
    pub fn schedule_task_of(&self, i: usize) {
        if i < self.core.slots.len() {
            self.core.schedule(i);
        }
    }

    /// Takes element `i`'s task off the run queue (a host placing it on no
    /// thread, as StaticThreadSched's thread -1 asks).
    pub fn unschedule_task_of(&self, i: usize) {
        if let Some(s) = self.core.slots.get(i) {
            if s.task_scheduled.replace(false) {
                self.core.run_queue.borrow_mut().retain(|&x| x != i);
            }
        }
    }

    pub fn element_names(&self) -> impl Iterator<Item = &str> {
        self.core.slots.iter().map(|s| s.name.as_str())
    }
}

/// A configuration's element graph, checked: classes found, port counts
/// and push/pull resolved, connections validated. [`Router::from_flat`]
/// builds on it; hosts that split one configuration over several routers
/// (threads) plan with it.
pub struct Graph {
    /// Each element's class.
    pub specs: Vec<&'static ClassSpec>,
    /// Input and output counts.
    pub nin: Vec<usize>,
    pub nout: Vec<usize>,
    /// Whether each input (output) port is push, after agnostic ports
    /// were resolved.
    pub in_push: Vec<Vec<bool>>,
    pub out_push: Vec<Vec<bool>>,
    /// The valid connections: (from, from port, to, to port).
    pub connections: Vec<(usize, usize, usize, usize)>,
    out_target: Vec<Vec<Option<Target>>>,
    in_source: Vec<Vec<Option<Target>>>,
}

/// Checks `flat`'s element graph against `registry`: every error at once,
/// as Click prints them (`FILE:LINE: message`).
pub fn check_graph(
    flat: &click_lang::FlatConfig,
    registry: &Registry,
) -> Result<Graph, Vec<String>> {
    let mut errors: Vec<String> = Vec::new();
    // 1. classes
    let mut specs: Vec<Option<&'static ClassSpec>> = Vec::new();
    for e in &flat.elements {
        match registry.get(&e.class) {
            Some(s) => specs.push(Some(s)),
            None => {
                errors.push(format!(
                    "{}: unknown element class '{}'",
                    e.landmark, e.class
                ));
                specs.push(None);
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let specs: Vec<&'static ClassSpec> = specs.into_iter().map(|s| s.unwrap()).collect();
    let n = specs.len();
    let decl = |i: usize| format!("{} :: {}", flat.elements[i].name, specs[i].name);
    let lm = |i: usize| flat.elements[i].landmark.to_string();

    // 2. port counts
    let mut used_in = vec![0usize; n];
    let mut used_out = vec![0usize; n];
    for c in &flat.connections {
        used_out[c.from] = used_out[c.from].max(c.from_port + 1);
        used_in[c.to] = used_in[c.to].max(c.to_port + 1);
    }
    let mut nin = vec![0usize; n];
    let mut nout = vec![0usize; n];
    for i in 0..n {
        let (ic, oc) = specs[i]
            .port_count
            .split_once('/')
            .unwrap_or((specs[i].port_count, ""));
        let (ilo, ihi) = parse_range(ic).unwrap_or((0, usize::MAX));
        nin[i] = used_in[i].clamp(ilo, ihi);
        if oc == "=" {
            nout[i] = nin[i];
        } else {
            let (olo, ohi) = parse_range(oc).unwrap_or((0, usize::MAX));
            nout[i] = used_out[i].clamp(olo, ohi);
        }
    }
    let mut conns: Vec<(usize, usize, usize, usize, String)> = Vec::new();
    for c in &flat.connections {
        let mut ok = true;
        if c.from_port >= nout[c.from] {
            errors.push(format!(
                "{}: '{}' has no output {}",
                lm(c.from),
                decl(c.from),
                c.from_port
            ));
            ok = false;
        }
        if c.to_port >= nin[c.to] {
            errors.push(format!(
                "{}: '{}' has no input {}",
                lm(c.to),
                decl(c.to),
                c.to_port
            ));
            ok = false;
        }
        if ok
            && !conns
                .iter()
                .any(|x| (x.0, x.1, x.2, x.3) == (c.from, c.from_port, c.to, c.to_port))
        {
            conns.push((c.from, c.from_port, c.to, c.to_port, c.landmark.to_string()));
        }
    }

    // 3. push/pull
    let mut pin: Vec<Vec<Proc>> = (0..n)
        .map(|i| {
            let code = specs[i]
                .processing
                .split_once('/')
                .map(|x| x.0)
                .unwrap_or("a");
            (0..nin[i]).map(|p| proc_at(code, p)).collect()
        })
        .collect();
    let mut pout: Vec<Vec<Proc>> = (0..n)
        .map(|i| {
            let code = specs[i]
                .processing
                .split_once('/')
                .map(|x| x.1)
                .unwrap_or("a");
            (0..nout[i]).map(|p| proc_at(code, p)).collect()
        })
        .collect();
    // Agnostic ports of one element move together.
    let mut elem_mode: Vec<Proc> = vec![Proc::Agnostic; n];
    let mut bad = vec![false; conns.len()];
    loop {
        let mut changed = false;
        for (ci, c) in conns.iter().enumerate() {
            if bad[ci] {
                continue;
            }
            let (f, fp, t, tp) = (c.0, c.1, c.2, c.3);
            let mut pf = pout[f][fp];
            if pf == Proc::Agnostic {
                pf = elem_mode[f];
            }
            let mut pt = pin[t][tp];
            if pt == Proc::Agnostic {
                pt = elem_mode[t];
            }
            match (pf, pt) {
                (Proc::Agnostic, Proc::Agnostic) => {}
                (Proc::Agnostic, m) => {
                    elem_mode[f] = m;
                    changed = true;
                }
                (m, Proc::Agnostic) => {
                    elem_mode[t] = m;
                    changed = true;
                }
                (a, b) if a != b => {
                    let from_agn = pout[f][fp] == Proc::Agnostic;
                    let to_agn = pin[t][tp] == Proc::Agnostic;
                    let kind = |p: Proc| if p == Proc::Push { "push" } else { "pull" };
                    if from_agn || to_agn {
                        // An agnostic element whose inputs resolved to
                        // `a` while its outputs must be `b` (or the
                        // reverse): report it as Click does.
                        let (e, ip, op) = if from_agn { (f, 0, fp) } else { (t, tp, 0) };
                        errors.push(format!(
                            "{}: agnostic '{}' in mixed context: {} input {}, {} output {}",
                            lm(e),
                            decl(e),
                            kind(a),
                            ip,
                            kind(b),
                            op
                        ));
                    } else {
                        errors.push(format!(
                            "{}: '{}' {} output {} connected to '{}' {} input {}",
                            c.4,
                            decl(f),
                            kind(a),
                            fp,
                            decl(t),
                            kind(b),
                            tp
                        ));
                    }
                    bad[ci] = true;
                }
                _ => {}
            }
        }
        if !changed {
            break;
        }
    }
    for i in 0..n {
        let m = if elem_mode[i] == Proc::Agnostic {
            Proc::Push
        } else {
            elem_mode[i]
        };
        for p in pin[i].iter_mut() {
            if *p == Proc::Agnostic {
                *p = m;
            }
        }
        for p in pout[i].iter_mut() {
            if *p == Proc::Agnostic {
                *p = m;
            }
        }
    }

    // 4. completeness
    let mut out_target: Vec<Vec<Option<Target>>> = (0..n).map(|i| vec![None; nout[i]]).collect();
    let mut in_source: Vec<Vec<Option<Target>>> = (0..n).map(|i| vec![None; nin[i]]).collect();
    let mut used_o: Vec<Vec<bool>> = (0..n).map(|i| vec![false; nout[i]]).collect();
    let mut used_i: Vec<Vec<bool>> = (0..n).map(|i| vec![false; nin[i]]).collect();
    let mut final_conns = Vec::new();
    for (ci, c) in conns.iter().enumerate() {
        if bad[ci] {
            continue;
        }
        let (f, fp, t, tp) = (c.0, c.1, c.2, c.3);
        if used_o[f][fp] && pout[f][fp] == Proc::Push {
            errors.push(format!(
                "{}: illegal reuse of '{}' push output {}",
                lm(f),
                decl(f),
                fp
            ));
            continue;
        }
        if used_i[t][tp] && pin[t][tp] == Proc::Pull {
            errors.push(format!(
                "{}: illegal reuse of '{}' pull input {}",
                lm(t),
                decl(t),
                tp
            ));
            continue;
        }
        used_o[f][fp] = true;
        used_i[t][tp] = true;
        if pout[f][fp] == Proc::Push {
            out_target[f][fp] = Some(Target {
                elem: t as u32,
                port: tp as u32,
            });
        } else {
            in_source[t][tp] = Some(Target {
                elem: f as u32,
                port: fp as u32,
            });
        }
        final_conns.push((f, fp, t, tp));
    }
    for (i, ui) in used_i.iter().enumerate() {
        for (p, u) in ui.iter().enumerate() {
            if !u {
                errors.push(format!("{}: '{}' input {} unused", lm(i), decl(i), p));
            }
        }
    }
    for (i, uo) in used_o.iter().enumerate() {
        for (p, u) in uo.iter().enumerate() {
            if !u {
                errors.push(format!("{}: '{}' output {} unused", lm(i), decl(i), p));
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let in_push = pin
        .iter()
        .map(|v| v.iter().map(|p| *p == Proc::Push).collect())
        .collect();
    let out_push = pout
        .iter()
        .map(|v| v.iter().map(|p| *p == Proc::Push).collect())
        .collect();
    Ok(Graph {
        specs,
        nin,
        nout,
        in_push,
        out_push,
        connections: final_conns,
        out_target,
        in_source,
    })
}

fn push_context_error(errors: &mut Vec<String>, landmark: &str, what: &str, decl: &str, msg: &str) {
    errors.push(format!("{}: {} '{}':", landmark, what, decl));
    for line in msg.lines() {
        errors.push(format!("{}:   {}", landmark, line));
    }
}

impl Core {
    /// Runs `f` with a mutable borrow of element `i`, unless it is busy.
    #[inline]
    fn with_elem<R>(&self, i: usize, f: impl FnOnce(&mut dyn Element, &Ctx) -> R) -> Option<R> {
        let s = &self.slots[i];
        if s.busy.replace(true) {
            return None;
        }
        // SAFETY: the busy flag was clear and is now set, so this is the
        // only live reference to the element until we clear it below.
        let e: &mut dyn Element = unsafe { &mut **s.elem.get() };
        let r = f(e, &Ctx { core: self, me: i });
        s.busy.set(false);
        Some(r)
    }

    #[inline]
    fn push_to(&self, i: usize, port: usize, p: Packet) {
        let s = &self.slots[i];
        if s.busy.replace(true) {
            self.deferred.borrow_mut().push_back((i, port, p));
            return;
        }
        // SAFETY: as in `with_elem`: the busy flag makes this borrow unique.
        let e: &mut dyn Element = unsafe { &mut **s.elem.get() };
        e.push(port, p, &Ctx { core: self, me: i });
        s.busy.set(false);
    }

    #[inline]
    fn push_batch_to(&self, i: usize, port: usize, b: Batch) {
        let s = &self.slots[i];
        if s.busy.replace(true) {
            let mut d = self.deferred.borrow_mut();
            for p in b {
                d.push_back((i, port, p));
            }
            return;
        }
        // SAFETY: as in `with_elem`: the busy flag makes this borrow unique.
        let e: &mut dyn Element = unsafe { &mut **s.elem.get() };
        e.push_batch(port, b, &Ctx { core: self, me: i });
        s.busy.set(false);
    }

    fn drain_deferred(&self) {
        loop {
            let next = self.deferred.borrow_mut().pop_front();
            match next {
                Some((i, port, p)) => self.push_to(i, port, p),
                None => {
                    let w = self.deferred_writes.borrow_mut().pop_front();
                    let Some((i, h, value)) = w else {
                        break;
                    };
                    if self.slots[i].busy.get() {
                        // still running (we are inside it): try again later
                        self.deferred_writes.borrow_mut().push_front((i, h, value));
                        break;
                    }
                    let r = self.with_elem(i, |e, cx| e.write_handler(&h, &value, cx));
                    if let Some(Some(Err(msg))) = r {
                        let name = &self.slots[i].name;
                        self.console
                            .error_line(&format!("While calling '{}.{}':\n  {}", name, h, msg));
                    }
                }
            }
        }
    }

    fn run_timers(&self) {
        let now = self.clock.now();
        loop {
            let top = {
                let mut t = self.timers.borrow_mut();
                match t.peek() {
                    Some(Reverse((when, _, _, _))) if *when <= now => t.pop(),
                    _ => None,
                }
            };
            let Some(Reverse((_, seq, elem, id))) = top else {
                break;
            };
            let live = self.timer_live.borrow().get(&(elem, id)).copied();
            if live != Some(seq) {
                continue;
            }
            self.timer_live.borrow_mut().remove(&(elem, id));
            self.with_elem(elem, |e, cx| e.run_timer(id, cx));
            self.drain_deferred();
            if self.stopped.get() {
                break;
            }
        }
    }

    fn next_timer(&self) -> Option<Timestamp> {
        let mut t = self.timers.borrow_mut();
        let live = self.timer_live.borrow();
        while let Some(Reverse((when, seq, elem, id))) = t.peek().copied() {
            if live.get(&(elem, id)) == Some(&seq) {
                return Some(when);
            }
            t.pop();
        }
        None
    }

    fn state(&self) -> RunState {
        if self.stopped.get() {
            RunState::Stopped
        } else if !self.run_queue.borrow().is_empty() {
            RunState::Busy
        } else {
            RunState::Idle(self.next_timer())
        }
    }

    fn find_handler_target(&self, path: &str) -> Result<(Option<usize>, String), HandlerError> {
        match path.rfind('.') {
            Some(dot) => {
                let (ename, h) = (&path[..dot], &path[dot + 1..]);
                let i = *self
                    .names
                    .get(ename)
                    .ok_or_else(|| HandlerError::NoSuchElement(ename.into()))?;
                Ok((Some(i), h.to_string()))
            }
            None => Ok((None, path.to_string())),
        }
    }

    /// Handler names of element `i` with their modes, in Click's order.
    pub fn element_handlers(&self, i: usize) -> Vec<(String, HandlerMode)> {
        let s = &self.slots[i];
        let mut v = vec![
            ("name".to_string(), HandlerMode::Read),
            ("class".to_string(), HandlerMode::Read),
            (
                "config".to_string(),
                if s.spec.live_reconfigure {
                    HandlerMode::ReadWrite
                } else {
                    HandlerMode::Read
                },
            ),
            ("ports".to_string(), HandlerMode::Read),
            ("handlers".to_string(), HandlerMode::Read),
        ];
        for h in s.spec.handlers {
            v.push((h.name.to_string(), h.mode));
        }
        if s.has_task.get() {
            v.push(("scheduled".to_string(), HandlerMode::Read));
            v.push(("home_thread".to_string(), HandlerMode::Read));
        }
        if let Some(extra) = self.with_elem(i, |e, _| e.instance_handlers()) {
            v.extend(extra);
        }
        v
    }

    fn ports_string(&self, i: usize) -> String {
        let s = &self.slots[i];
        let mut out = String::new();
        let plural = |n: usize, w: &str| {
            if n == 1 {
                format!("{} {}", n, w)
            } else {
                format!("{} {}s", n, w)
            }
        };
        let _ = writeln!(out, "{}", plural(s.in_push.len(), "input"));
        for p in 0..s.in_push.len() {
            let mut peers: Vec<String> = Vec::new();
            for &(f, fp, t, tp) in &self.connections {
                if t == i && tp == p {
                    peers.push(format!("{} [{}]", self.slots[f].name, fp));
                }
            }
            let _ = writeln!(
                out,
                "{}\t{}",
                if s.in_push[p] { "push" } else { "pull" },
                peers.join(", ")
            );
        }
        let _ = writeln!(out, "{}", plural(s.out_push.len(), "output"));
        for p in 0..s.out_push.len() {
            let mut peers: Vec<String> = Vec::new();
            for &(f, fp, t, tp) in &self.connections {
                if f == i && fp == p {
                    peers.push(format!("[{}] {}", tp, self.slots[t].name));
                }
            }
            let _ = writeln!(
                out,
                "{}\t{}",
                if s.out_push[p] { "push" } else { "pull" },
                peers.join(", ")
            );
        }
        out
    }

    /// Reads `element.handler` or a global handler, through the peers
    /// when there are any.
    pub fn read_handler(&self, path: &str) -> Result<String, HandlerError> {
        match &self.peers {
            Some(p) => p.read(self, path, None),
            None => self.read_handler_local(path),
        }
    }

    /// Reads a handler of this router itself (peers serve calls with it).
    pub fn read_handler_local(&self, path: &str) -> Result<String, HandlerError> {
        let (elem, h) = self.find_handler_target(path)?;
        let Some(i) = elem else {
            return self.read_global(&h);
        };
        let s = &self.slots[i];
        match h.as_str() {
            "name" => return Ok(s.name.clone()),
            "class" => return Ok(s.spec.name.to_string()),
            "config" => {
                let cur = self.with_elem(i, |e, _| e.current_config()).flatten();
                return Ok(cur.unwrap_or_else(|| s.config.borrow().clone()));
            }
            "ports" => return Ok(self.ports_string(i)),
            "handlers" => {
                let mut out = String::new();
                for (n, m) in self.element_handlers(i) {
                    let _ = writeln!(out, "{}\t{}", n, m.flags());
                }
                return Ok(out);
            }
            // Click's task handlers
            "scheduled" if s.has_task.get() => {
                return Ok(String::from(if s.task_scheduled.get() {
                    "true"
                } else {
                    "false"
                }))
            }
            "home_thread" if s.has_task.get() => {
                let t = self.home_threads.get(&s.name).copied().unwrap_or(0);
                return Ok(format!("{t}"));
            }
            _ => {}
        }
        let doc = s.spec.handlers.iter().find(|d| d.name == h);
        if let Some(d) = doc {
            if !d.mode.readable() {
                return Err(HandlerError::PermissionDenied(path.into()));
            }
        }
        match self.with_elem(i, |e, cx| e.read_handler(&h, cx)) {
            None => Err(HandlerError::Busy(path.into())),
            Some(None) => Err(HandlerError::NoSuchHandler(path.into())),
            Some(Some(r)) => r.map_err(HandlerError::Failed),
        }
    }

    /// Reads an element handler that takes a parameter.
    pub fn read_handler_param(&self, path: &str, param: &str) -> Result<String, HandlerError> {
        match &self.peers {
            Some(p) => p.read(self, path, Some(param)),
            None => self.read_handler_param_local(path, param),
        }
    }

    /// [`Core::read_handler_param`] on this router itself.
    pub fn read_handler_param_local(
        &self,
        path: &str,
        param: &str,
    ) -> Result<String, HandlerError> {
        let (elem, h) = self.find_handler_target(path)?;
        let Some(i) = elem else {
            return Err(HandlerError::NoSuchHandler(path.into()));
        };
        match self.with_elem(i, |e, cx| e.read_handler_param(&h, param, cx)) {
            None => Err(HandlerError::Busy(path.into())),
            Some(None) => Err(HandlerError::NoSuchHandler(path.into())),
            Some(Some(r)) => r.map_err(HandlerError::Failed),
        }
    }

    /// Writes `element.handler` or a global handler, through the peers
    /// when there are any.
    pub fn write_handler(&self, path: &str, value: &str) -> Result<(), HandlerError> {
        match &self.peers {
            Some(p) => p.write(self, path, value),
            None => self.write_handler_local(path, value),
        }
    }

    /// Writes a handler of this router itself.
    pub fn write_handler_local(&self, path: &str, value: &str) -> Result<(), HandlerError> {
        let (elem, h) = self.find_handler_target(path)?;
        let Some(i) = elem else {
            return self.write_global(&h, value);
        };
        let s = &self.slots[i];
        match h.as_str() {
            "config" if s.spec.live_reconfigure => {
                let cx =
                    ConfigureCtx::new(&s.name, s.in_push.len(), s.out_push.len(), &self.name_info);
                let r = self
                    .with_elem(i, |e, _| e.configure(value, &cx))
                    .ok_or(HandlerError::Busy(path.into()))?;
                let warnings = cx.warnings.take();
                if !warnings.is_empty() && self.warnings {
                    self.console
                        .error_line(&format!("While configuring '{}':", s.declaration()));
                    for w in warnings {
                        self.console.error_line(&format!("  warning: {}", w));
                    }
                }
                r.map_err(HandlerError::Failed)?;
                *s.config.borrow_mut() = value.to_string();
                return Ok(());
            }
            "name" | "class" | "config" | "ports" | "handlers" => {
                return Err(HandlerError::PermissionDenied(path.into()))
            }
            _ => {}
        }
        if let Some(d) = s.spec.handlers.iter().find(|d| d.name == h) {
            if !d.mode.writable() {
                return Err(HandlerError::PermissionDenied(path.into()));
            }
        }
        if s.busy.get() {
            // The element is running (this write comes from downstream of
            // it): Click would call the handler right away; apply it as
            // soon as the element returns.
            self.deferred_writes
                .borrow_mut()
                .push_back((i, h, value.to_string()));
            return Ok(());
        }
        let r = match self.with_elem(i, |e, cx| e.write_handler(&h, value, cx)) {
            None => Err(HandlerError::Busy(path.into())),
            Some(None) => Err(HandlerError::NoSuchHandler(path.into())),
            Some(Some(r)) => r.map_err(HandlerError::Failed),
        };
        self.drain_deferred();
        r
    }

    fn read_global(&self, h: &str) -> Result<String, HandlerError> {
        match h {
            "version" => Ok(VERSION.to_string()),
            "driver" => Ok("userlevel".to_string()),
            "config" | "flatconfig" => Ok(self.flat_config.clone()),
            "list" => {
                let mut s = format!("{}\n", self.slots.len());
                for sl in &self.slots {
                    s.push_str(&sl.name);
                    s.push('\n');
                }
                Ok(s)
            }
            "requirements" => Ok(self
                .requirements
                .iter()
                .map(|r| format!("{}\n", r))
                .collect()),
            "classes" => {
                let mut v: Vec<&str> = self.slots.iter().map(|s| s.spec.name).collect();
                v.sort_unstable();
                v.dedup();
                Ok(v.iter().map(|c| format!("{}\n", c)).collect())
            }
            "handlers" => {
                let mut s = String::from(
                    "version\tr\ndriver\tr\nconfig\tr\nflatconfig\tr\nlist\tr\nrequirements\tr\nclasses\tr\nhandlers\tr\nstop\tw\ntimewarp\trw\n",
                );
                if let Some(g) = &self.globals {
                    for (n, m) in g.list() {
                        s.push_str(&format!("{n}\t{m}\n"));
                    }
                }
                Ok(s)
            }
            "stop" => Err(HandlerError::PermissionDenied(h.into())),
            "timewarp" => match self.clock.warp() {
                Some(s) => Ok(crate::time::format_speed(s)),
                None => Err(HandlerError::NoSuchHandler(h.into())),
            },
            _ => match self.globals.as_ref().and_then(|g| g.read(h)) {
                Some(r) => r.map_err(HandlerError::Failed),
                None => Err(HandlerError::NoSuchHandler(h.into())),
            },
        }
    }

    fn write_global(&self, h: &str, value: &str) -> Result<(), HandlerError> {
        match h {
            "stop" => {
                self.stopped.set(true);
                Ok(())
            }
            "timewarp" => {
                if self.clock.warp().is_none() {
                    return Err(HandlerError::NoSuchHandler(h.into()));
                }
                match value.trim().parse::<f64>() {
                    Ok(v) if v > 0.0 && v.is_finite() => {
                        self.clock.set_warp(v).map_err(HandlerError::Failed)
                    }
                    _ => Err(HandlerError::Failed("expected positive double".into())),
                }
            }
            "version" | "driver" | "config" | "flatconfig" | "list" | "requirements"
            | "classes" | "handlers" => Err(HandlerError::PermissionDenied(h.into())),
            _ => match self.globals.as_ref().and_then(|g| g.write(h, value)) {
                Some(r) => r.map_err(HandlerError::Failed),
                None => Err(HandlerError::NoSuchHandler(h.into())),
            },
        }
    }

    fn runcount_add(&self, delta: i32) -> i32 {
        if let Some(rc) = self.peers.as_ref().and_then(|p| p.runcount_add(delta)) {
            return rc;
        }
        let rc = self.runcount.get().saturating_add(delta);
        self.runcount.set(rc);
        rc
    }

    /// The host's peers, if this router runs beside others.
    pub fn peers(&self) -> Option<&alloc::rc::Rc<dyn Peers>> {
        self.peers.as_ref()
    }

    /// Whether an element of this name exists here (or, with peers, in
    /// any of the routers).
    pub fn has_element(&self, name: &str) -> bool {
        self.names.contains_key(name) || self.peers.as_ref().is_some_and(|p| p.has_element(name))
    }

    /// Whether elements named `name/...` (a compound's components) exist.
    pub fn has_compound(&self, name: &str) -> bool {
        has_prefix(&self.names, name) || self.peers.as_ref().is_some_and(|p| p.has_compound(name))
    }

    /// Whether the router has stopped.
    pub fn is_stopped(&self) -> bool {
        self.stopped.get()
    }

    /// Stops this router.
    pub fn stop(&self) {
        self.stopped.set(true);
    }

    fn schedule(&self, i: usize) {
        let s = &self.slots[i];
        s.has_task.set(true);
        if !s.task_scheduled.replace(true) {
            self.run_queue.borrow_mut().push_back(i);
        }
    }
}

impl<'a> Ctx<'a> {
    /// This element's index.
    #[inline]
    pub fn index(&self) -> usize {
        self.me
    }
    /// This element's name.
    pub fn name(&self) -> &'a str {
        &self.core.slots[self.me].name
    }
    /// `name :: Class`, as Click names elements in messages.
    pub fn declaration(&self) -> String {
        self.core.slots[self.me].declaration()
    }
    /// This element's argument context, for handlers that parse addresses
    /// or ports: AddressInfo and PortInfo names work there as in the
    /// configuration.
    pub fn arg_context(&self) -> click_lang::ArgContext<'a> {
        click_lang::ArgContext::new(&self.core.name_info, &self.core.slots[self.me].name)
    }
    /// The configuration's names for addresses and ports.
    pub fn names(&self) -> &'a NameTable {
        &self.core.name_info
    }
    #[inline]
    pub fn ninputs(&self) -> usize {
        self.core.slots[self.me].in_push.len()
    }
    #[inline]
    pub fn noutputs(&self) -> usize {
        self.core.slots[self.me].out_push.len()
    }
    #[inline]
    pub fn output_is_push(&self, port: usize) -> bool {
        self.core.slots[self.me]
            .out_push
            .get(port)
            .copied()
            .unwrap_or(false)
    }
    #[inline]
    pub fn input_is_pull(&self, port: usize) -> bool {
        !self.core.slots[self.me]
            .in_push
            .get(port)
            .copied()
            .unwrap_or(true)
    }

    /// Pushes `p` out of output `port`. Unconnected outputs drop it.
    #[inline]
    pub fn push(&self, port: usize, p: Packet) {
        if let Some(Some(t)) = self.core.slots[self.me].out_target.get(port) {
            self.core.push_to(t.elem as usize, t.port as usize, p);
        }
    }

    /// Pushes a batch out of output `port`.
    #[inline]
    pub fn push_batch(&self, port: usize, b: Batch) {
        if b.is_empty() {
            return;
        }
        if let Some(Some(t)) = self.core.slots[self.me].out_target.get(port) {
            self.core.push_batch_to(t.elem as usize, t.port as usize, b);
        }
    }

    /// Pulls a packet from input `port`.
    #[inline]
    pub fn pull(&self, port: usize) -> Option<Packet> {
        let mut t = (*self.core.slots[self.me].in_source.get(port)?)?;
        // elements that route pulls through (Bypass) are skipped
        let mut hops = 0;
        while let Some(r) = self.core.slots[t.elem as usize]
            .pull_route
            .get(t.port as usize)
        {
            let r = r.get();
            if r == NO_ROUTE || hops > self.core.slots.len() {
                break;
            }
            hops += 1;
            t = (*self.core.slots[t.elem as usize].in_source.get(r as usize)?)?;
        }
        self.core
            .with_elem(t.elem as usize, |e, cx| e.pull(t.port as usize, cx))
            .flatten()
    }

    /// Answers pulls on this element's output `output` (0 or 1) straight
    /// from input `input` without calling the element, or stops doing so
    /// (`None`): for elements that only route pulls (Bypass), which then
    /// work even where a pull path loops back into them.
    pub fn set_pull_route(&self, output: usize, input: Option<usize>) {
        if let Some(c) = self.core.slots[self.me].pull_route.get(output) {
            c.set(match input {
                Some(i) if i < NO_ROUTE as usize => i as u8,
                _ => NO_ROUTE,
            });
        }
    }

    /// The largest batch this router wants sources to emit.
    #[inline]
    pub fn max_batch(&self) -> usize {
        self.core.max_batch
    }

    #[inline]
    pub fn now(&self) -> Timestamp {
        self.core.clock.now()
    }

    /// The time, read at most once per task run: for ages and expiries
    /// that tolerate a batch's worth of staleness (Click's jiffies), so a
    /// per-packet check costs no clock read. Outside task runs (handlers,
    /// timers, injected packets) it reads the clock.
    #[inline]
    pub fn now_coarse(&self) -> Timestamp {
        let c = &self.core;
        match c.coarse_now.get() {
            Some(t) => t,
            None => {
                let t = c.clock.now();
                if c.in_task.get() {
                    c.coarse_now.set(Some(t));
                }
                t
            }
        }
    }

    /// This router's copy index ([`RouterOptions::copy`]).
    #[inline]
    pub fn copy(&self) -> usize {
        self.core.copy
    }

    /// How many copies of this configuration run ([`RouterOptions::ncopies`]).
    #[inline]
    pub fn ncopies(&self) -> usize {
        self.core.ncopies
    }

    #[inline]
    pub fn pool(&self) -> &'a Pool {
        &self.core.pool
    }

    /// Schedules this element's task.
    pub fn schedule_task(&self) {
        self.core.schedule(self.me);
    }
    /// The host context given in [`RouterOptions::host`], if any.
    pub fn host(&self) -> Option<&'a alloc::rc::Rc<dyn core::any::Any>> {
        self.core.host.as_ref()
    }
    /// Waits for signal `signo` (once): the host calls this element's `run`
    /// write handler when it arrives. False where the host has no signals.
    pub fn catch_signal(&self, signo: i32) -> bool {
        if !self.core.console.catch_signal(signo) {
            return false;
        }
        let mut h = self.core.signal_handlers.borrow_mut();
        if !h.contains(&(signo, self.me)) {
            h.push((signo, self.me));
        }
        true
    }
    /// Sends signal `signo` to process `pid` through the host.
    pub fn kill(&self, signo: i32, pid: i64) -> Result<(), String> {
        self.core.console.kill(signo, pid)
    }
    /// This process's id, where there is one.
    pub fn pid(&self) -> Option<u32> {
        self.core.console.pid()
    }
    /// When this router is built to replace a running one (hot swap): the
    /// class of this element's namesake there, if it has one. An element
    /// that would take over a resource its namesake holds (a port, a
    /// socket) leaves it alone in `initialize` and takes it in
    /// [`Element::take_state`].
    pub fn hotswap_class(&self) -> Option<&'static str> {
        self.core
            .hotswap
            .as_ref()?
            .get(&self.core.slots[self.me].name)
            .copied()
    }
    /// Whether this element's task is scheduled.
    pub fn task_scheduled(&self) -> bool {
        self.core.slots[self.me].task_scheduled.get()
    }
    /// Removes this element's task from the run queue.
    pub fn unschedule_task(&self) {
        let s = &self.core.slots[self.me];
        if s.task_scheduled.replace(false) {
            self.core.run_queue.borrow_mut().retain(|&x| x != self.me);
        }
    }

    /// Schedules timer `id` of this element at `when` (replacing any
    /// earlier schedule of the same timer).
    pub fn schedule_timer_at(&self, id: u32, when: Timestamp) {
        let seq = self.core.timer_seq.get() + 1;
        self.core.timer_seq.set(seq);
        self.core.timer_live.borrow_mut().insert((self.me, id), seq);
        self.core
            .timers
            .borrow_mut()
            .push(Reverse((when, seq, self.me, id)));
    }
    /// Schedules timer `id` `ns` nanoseconds from now.
    pub fn schedule_timer_after(&self, id: u32, ns: i64) {
        self.schedule_timer_at(id, self.now().add_nsec(ns));
    }
    pub fn unschedule_timer(&self, id: u32) {
        self.core.timer_live.borrow_mut().remove(&(self.me, id));
    }
    pub fn timer_scheduled(&self, id: u32) -> bool {
        self.core.timer_live.borrow().contains_key(&(self.me, id))
    }

    /// Creates a notifier signal owned by this element.
    pub fn new_signal(&self, active: bool) -> SignalId {
        let mut s = self.core.signals.borrow_mut();
        s.push(SignalState {
            active,
            listeners: Vec::new(),
            dependents: Vec::new(),
        });
        SignalId((s.len() - 1) as u32)
    }
    /// Sets a signal; activating it wakes the tasks listening to it.
    pub fn set_signal(&self, id: SignalId, active: bool) {
        let (wake, deps): (Vec<usize>, Vec<SignalId>) = {
            let mut sigs = self.core.signals.borrow_mut();
            let Some(s) = sigs.get_mut(id.0 as usize) else {
                return;
            };
            let was = s.active;
            s.active = active;
            if active && !was {
                (s.listeners.clone(), s.dependents.clone())
            } else {
                (Vec::new(), Vec::new())
            }
        };
        for i in wake {
            self.core.schedule(i);
        }
        // activation wakes dependents once (an active one stops the chain)
        for d in deps {
            self.set_signal(d, true);
        }
    }
    pub fn signal_active(&self, sig: &UpstreamSignal) -> bool {
        match sig {
            UpstreamSignal::AlwaysActive => true,
            UpstreamSignal::Signals(v) => {
                let sigs = self.core.signals.borrow();
                v.iter()
                    .any(|id| sigs.get(id.0 as usize).map(|s| s.active).unwrap_or(true))
            }
        }
    }
    /// Finds the notifiers upstream of pull input `port` and registers this
    /// element's task to be woken when any of them becomes active.
    pub fn upstream_signal(&self, port: usize) -> UpstreamSignal {
        self.find_upstream_signal(port, true)
    }
    /// Like [`Ctx::upstream_signal`], but instead of this element's task,
    /// signal `dependent` is activated (waking its own listeners) when any
    /// of the upstream signals becomes active: Click's dependent notifier,
    /// for pull elements without a task that relay their inputs' signals
    /// (PullSwitch).
    pub fn upstream_signal_dependent(&self, port: usize, dependent: SignalId) -> UpstreamSignal {
        let u = self.find_upstream_signal(port, false);
        if let UpstreamSignal::Signals(found) = &u {
            let mut sigs = self.core.signals.borrow_mut();
            for id in found {
                if let Some(s) = sigs.get_mut(id.0 as usize) {
                    if *id != dependent && !s.dependents.contains(&dependent) {
                        s.dependents.push(dependent);
                    }
                }
            }
        }
        u
    }
    /// Like [`Ctx::upstream_signal`], but without registering this element
    /// as a listener: for pull elements without a task (PrioSched) that only
    /// look at the signals to skip empty inputs, while the puller downstream
    /// is the one that sleeps and wakes.
    pub fn upstream_signal_passive(&self, port: usize) -> UpstreamSignal {
        self.find_upstream_signal(port, false)
    }
    fn find_upstream_signal(&self, port: usize, listen: bool) -> UpstreamSignal {
        let mut found = Vec::new();
        let mut seen = vec![false; self.core.slots.len()];
        let mut always = false;
        let mut stack: Vec<usize> = Vec::new();
        if let Some(Some(t)) = self.core.slots[self.me].in_source.get(port) {
            stack.push(t.elem as usize);
        } else {
            return UpstreamSignal::AlwaysActive;
        }
        while let Some(u) = stack.pop() {
            if seen[u] {
                continue;
            }
            seen[u] = true;
            let sig = self.core.with_elem(u, |e, _| e.empty_signal()).flatten();
            if let Some(id) = sig {
                found.push(id);
                continue;
            }
            let s = &self.core.slots[u];
            if s.in_source.is_empty() || s.in_push.iter().any(|p| *p) {
                // a pull source, or a push-to-pull boundary without a notifier
                always = true;
                continue;
            }
            for t in s.in_source.iter().flatten() {
                stack.push(t.elem as usize);
            }
        }
        if always || found.is_empty() {
            return UpstreamSignal::AlwaysActive;
        }
        if !listen {
            return UpstreamSignal::Signals(found);
        }
        let mut sigs = self.core.signals.borrow_mut();
        for id in &found {
            if let Some(s) = sigs.get_mut(id.0 as usize) {
                if !s.listeners.contains(&self.me) {
                    s.listeners.push(self.me);
                }
            }
        }
        UpstreamSignal::Signals(found)
    }

    /// Click's downstream full notifier: finds the full notifiers
    /// ([`Element::full_signal`]) downstream of push output `port` and
    /// registers this element's task to be woken when any of them becomes
    /// active (has room again). Elements without one are crossed from
    /// their push outputs; a path that ends anywhere else (a sink such as
    /// Discard) can always take packets, and the answer is
    /// [`UpstreamSignal::AlwaysActive`].
    pub fn downstream_signal(&self, port: usize) -> UpstreamSignal {
        let mut found = Vec::new();
        let mut seen = vec![false; self.core.slots.len()];
        let mut always = false;
        let mut stack: Vec<usize> = Vec::new();
        match self.core.slots[self.me].out_target.get(port) {
            Some(Some(t)) => stack.push(t.elem as usize),
            _ => return UpstreamSignal::AlwaysActive,
        }
        while let Some(d) = stack.pop() {
            if seen[d] {
                continue;
            }
            seen[d] = true;
            if let Some(id) = self.core.with_elem(d, |e, _| e.full_signal()).flatten() {
                found.push(id);
                continue;
            }
            let s = &self.core.slots[d];
            let outs: Vec<usize> = s
                .out_target
                .iter()
                .flatten()
                .map(|t| t.elem as usize)
                .collect();
            if outs.is_empty() {
                always = true;
                continue;
            }
            stack.extend(outs);
        }
        if always || found.is_empty() {
            return UpstreamSignal::AlwaysActive;
        }
        let mut sigs = self.core.signals.borrow_mut();
        for id in &found {
            if let Some(s) = sigs.get_mut(id.0 as usize) {
                if !s.listeners.contains(&self.me) {
                    s.listeners.push(self.me);
                }
            }
        }
        UpstreamSignal::Signals(found)
    }

    /// Click's flow-based router context for `Storage` elements (as RED
    /// uses it): starting at this element's output `port` (`downstream`)
    /// or input `port` (upstream), walks the connections and returns the
    /// nearest elements whose [`Element::queue_len`] answers, not looking
    /// past them. Other elements are crossed from every input to every
    /// output (or back). Element indices, in the order found.
    pub fn nearby_storage(&self, port: usize, downstream: bool) -> Vec<usize> {
        let conns = &self.core.connections;
        let mut seen = vec![false; self.core.slots.len()];
        let mut found = Vec::new();
        let mut stack: Vec<usize> = Vec::new();
        let step = |e: usize, p: Option<usize>, stack: &mut Vec<usize>| {
            for &(f, fp, t, tp) in conns.iter().rev() {
                if downstream && f == e && p.is_none_or(|p| p == fp) {
                    stack.push(t);
                } else if !downstream && t == e && p.is_none_or(|p| p == tp) {
                    stack.push(f);
                }
            }
        };
        step(self.me, Some(port), &mut stack);
        while let Some(u) = stack.pop() {
            if seen[u] {
                continue;
            }
            seen[u] = true;
            if self.storage_len(u).is_some() {
                found.push(u);
                continue;
            }
            step(u, None, &mut stack);
        }
        found
    }
    /// The length element `elem` reports through [`Element::queue_len`]
    /// (`None` if it is not a Storage element, or is busy right now).
    pub fn storage_len(&self, elem: usize) -> Option<usize> {
        if elem >= self.core.slots.len() {
            return None;
        }
        self.core.with_elem(elem, |e, _| e.queue_len()).flatten()
    }
    /// Finds an element by name, relative to this element's compound as
    /// Click's `Router::find(name, context)` does.
    pub fn find_element(&self, name: &str) -> Option<usize> {
        let r = self.resolve(&format!("{}.x", name));
        self.core.names.get(&r[..r.len() - 2]).copied()
    }
    /// Runs `f` on element `elem` of this router (an information element
    /// such as ARPTable whose state another element shares), unless that
    /// element is running right now (`None`).
    pub fn with_element<R>(&self, elem: usize, f: impl FnOnce(&mut dyn Element) -> R) -> Option<R> {
        if elem == self.me || elem >= self.core.slots.len() {
            return None;
        }
        self.core.with_elem(elem, |e, _| f(e))
    }
    /// The name of element `elem`.
    pub fn element_name(&self, elem: usize) -> &'a str {
        self.core
            .slots
            .get(elem)
            .map(|s| s.name.as_str())
            .unwrap_or("")
    }

    /// Click's `please_stop_driver`: one stop request. With a driver
    /// manager present it decides; otherwise the router stops.
    pub fn please_stop_driver(&self) {
        let c = self.core;
        if c.runcount_add(-1) <= 0 {
            match c.driver_manager.get() {
                Some(dm) => c.schedule(dm),
                None => {
                    if !c.peers.as_ref().is_some_and(|p| p.stop_requested()) {
                        c.stopped.set(true)
                    }
                }
            }
        }
    }
    /// The router's run count (stop requests lower it; shared with the
    /// peers when one configuration runs on several threads).
    pub fn runcount(&self) -> i32 {
        self.core.runcount_add(0)
    }
    pub fn adjust_runcount(&self, delta: i32) {
        self.core.runcount_add(delta);
    }
    /// Makes this element the one that manages stop requests.
    pub fn become_driver_manager(&self) {
        self.core.driver_manager.set(Some(self.me));
        if let Some(p) = &self.core.peers {
            p.driver_manager_here(self.core, self.me);
        }
    }
    /// Stops the router now.
    pub fn stop_router(&self) {
        self.core.stopped.set(true);
    }

    /// The router core, for elements that call handlers by absolute name
    /// (ControlSocket): [`Core::read_handler`], [`Core::read_handler_param`],
    /// [`Core::write_handler`]. A call on this element itself returns
    /// [`HandlerError::Busy`], as with [`Ctx::call_read`].
    pub fn core(&self) -> &'a Core {
        self.core
    }

    /// Reads a handler anywhere in the router (for Script and friends).
    pub fn call_read(&self, path: &str) -> Result<String, HandlerError> {
        self.core.read_handler(&self.resolve(path))
    }
    /// Reads a handler that takes a parameter, anywhere in the router.
    pub fn call_read_param(&self, path: &str, param: &str) -> Result<String, HandlerError> {
        self.core.read_handler_param(&self.resolve(path), param)
    }
    /// Writes a handler anywhere in the router.
    pub fn call_write(&self, path: &str, value: &str) -> Result<(), HandlerError> {
        self.core.write_handler(&self.resolve(path), value)
    }
    /// Takes the handler writes addressed to this element that were
    /// deferred because it was running (a handler it called wrote back to
    /// it, as TimeFilter's END_CALL may), in order, as `(handler, value)`.
    /// An element that must see such writes at once (Click calls the
    /// handler right away) applies them itself.
    pub fn take_deferred_writes_to_self(&self) -> Vec<(String, String)> {
        let mut q = self.core.deferred_writes.borrow_mut();
        let mut mine = Vec::new();
        q.retain(|(i, h, v)| {
            if *i == self.me {
                mine.push((h.clone(), v.clone()));
                false
            } else {
                true
            }
        });
        mine
    }
    /// Resolves an element-relative handler name the way Click does inside
    /// compounds: `x.h` from `c/script` tries `c/x.h`, then `x.h`.
    fn resolve(&self, path: &str) -> String {
        let Some(dot) = path.rfind('.') else {
            return path.to_string();
        };
        let ename = &path[..dot];
        let mut prefix = self.name();
        while let Some(slash) = prefix.rfind('/') {
            prefix = &prefix[..slash];
            let cand = format!("{}/{}", prefix, ename);
            if self.core.has_element(&cand) {
                return format!("{}{}", cand, &path[dot..]);
            }
        }
        path.to_string()
    }
    /// Whether an element with this (resolved) name exists.
    pub fn element_exists(&self, name: &str) -> bool {
        let r = self.resolve(&format!("{}.x", name));
        self.core.has_element(&r[..r.len() - 2])
    }

    /// The element or compound `name` refers to, seen from this element's
    /// compound (Click looks in the enclosing compounds, innermost first,
    /// then at the top level), or `None`.
    pub fn resolve_element_or_compound(&self, name: &str) -> Option<String> {
        let mut prefix = self.name();
        while let Some(slash) = prefix.rfind('/') {
            prefix = &prefix[..slash];
            let cand = format!("{}/{}", prefix, name);
            if self.core.has_element(&cand) || self.core.has_compound(&cand) {
                return Some(cand);
            }
        }
        (self.core.has_element(name) || self.core.has_compound(name)).then(|| name.to_string())
    }

    /// A line for standard error.
    pub fn error_line(&self, line: &str) {
        self.core.console.error_line(line);
    }
    /// Text for standard output.
    pub fn stdout(&self, text: &str) {
        self.core.console.stdout(text);
    }
    /// Writes text to a file through the console (Script's `print >FILE`).
    pub fn write_file(&self, path: &str, append: bool, text: &str) -> Result<(), String> {
        self.core.console.write_file(path, append, text)
    }
    /// Reads a file through the console (Script's `$(cat FILE)`).
    pub fn read_file(&self, path: &str) -> Result<String, String> {
        self.core.console.read_file(path)
    }
}

/// Whether some key of `names` starts with `prefix/`.
pub fn has_prefix<V>(names: &BTreeMap<String, V>, prefix: &str) -> bool {
    let start = format!("{prefix}/");
    names
        .range::<str, _>((
            core::ops::Bound::Included(start.as_str()),
            core::ops::Bound::Unbounded,
        ))
        .next()
        .is_some_and(|(k, _)| k.starts_with(&start))
}
