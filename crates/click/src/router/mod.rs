//! The router: builds a checked element graph from a flat configuration,
//! runs tasks and timers, moves packets along push and pull connections,
//! and serves handlers. [`Router`] is the host's handle on all of it.
//!
//! One concern per file:
//!
//! * `ctx.rs`: [`Ctx`], what an element sees of the router (the router's
//!   half of the element API in [`crate::element`]), and [`Emitter`].
//! * `graph.rs`: [`check_graph`] and [`Graph`]: classes, port counts,
//!   push/pull resolution, connection checks, initialization order.
//! * `dispatch.rs`: [`Core`], the element slots, the push and pull paths,
//!   the deferred queue, tasks, timers and stop requests.
//! * `notify.rs`: notifier signals ([`SignalId`], [`UpstreamSignal`]).
//! * `handlers.rs`: handler lookup, reads and writes, the standard and
//!   global handlers, [`HandlerError`].
//! * `console.rs`: [`Console`] and [`BufferConsole`].
//!
//! This module builds routers ([`Router::from_config`],
//! [`Router::from_flat`]) and holds the host-facing API.
//!
//! The router never names element classes: it finds them in the
//! [`Registry`] it is given, so nothing here depends on the element library
//! (`src/elements/`), which depends on the router's [`Ctx`]; the crate's
//! `layering` test keeps it so.

mod console;
mod ctx;
mod dispatch;
mod graph;
mod handlers;
mod notify;

pub use console::{BufferConsole, Console};
pub use ctx::{Ctx, Emitter};
pub use dispatch::{Core, RunState};
pub use graph::{check_graph, Graph};
pub use handlers::{has_prefix, CallGuard, GlobalHandlers, HandlerError, MAX_HANDLER_VALUE};
pub use notify::{SignalId, SignalKind, UpstreamSignal};

pub use crate::packet::Packet;

use crate::element::{ConfigureCtx, Element};
use crate::packet::Pool;
use crate::registry::Registry;
use crate::time::{Clock, Timestamp};
use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BinaryHeap, VecDeque};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use click_lang::NameTable;
use core::cell::{Cell, RefCell, UnsafeCell};
use dispatch::{Slot, NO_ROUTE};
use graph::init_order;

/// The version string the `version` handler reports.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

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
    /// The largest value an element's read handler may return (default
    /// [`MAX_HANDLER_VALUE`]); elements that build values from their input
    /// stop there too ([`Ctx::max_handler_value`]). A host whose replies
    /// are smaller (an instance's mailbox) or whose memory is small sets
    /// less.
    pub max_handler_value: usize,
    /// A host that can catch panics (a std program built with
    /// `panic=unwind`) sets a `catch_unwind` wrapper here, and a handler
    /// that panics is a handler error instead of the end of the process;
    /// see [`CallGuard`].
    pub call_guard: Option<CallGuard>,
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
            max_handler_value: MAX_HANDLER_VALUE,
            call_guard: None,
        }
    }
}

/// A running (or ready-to-run) router.
pub struct Router {
    core: Core,
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
                    console.error_line(&format!("  {}", w));
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
            spare_batch: Cell::new(Vec::new()),
            coarse_now: Cell::new(None),
            in_task: Cell::new(false),
            max_handler_value: opts.max_handler_value,
            call_guard: opts.call_guard,
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

    /// Runs scheduled tasks (up to 128 task runs, and every task queued
    /// at the start at least once), then the timers that are due.
    pub fn run_pass(&self) -> RunState {
        self.core.run_pass()
    }

    /// As [`run_pass`](Self::run_pass), but the task runs end early,
    /// before the due timers run, once `yield_now` returns true; it is
    /// asked after every task run. A host with outside work waiting (an
    /// instance's control request) thus gets the thread back within one
    /// task run instead of one whole pass. The tasks not run yet keep
    /// their place at the front of the queue.
    pub fn run_pass_until(&self, yield_now: impl FnMut() -> bool) -> RunState {
        self.core.run_pass_until(yield_now)
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
        self.core.unschedule(i);
    }

    pub fn element_names(&self) -> impl Iterator<Item = &str> {
        self.core.slots.iter().map(|s| s.name.as_str())
    }
}

/// An error from configuring or initializing an element, as Click prints
/// it: `FILE:LINE: While configuring 'name :: Class':` and the message's
/// lines indented under it, without the landmark (Click's
/// ContextErrorHandler prints the landmark on the context line only).
fn push_context_error(errors: &mut Vec<String>, landmark: &str, what: &str, decl: &str, msg: &str) {
    errors.push(format!("{}: {} '{}':", landmark, what, decl));
    for line in msg.lines() {
        errors.push(format!("  {}", line));
    }
}
