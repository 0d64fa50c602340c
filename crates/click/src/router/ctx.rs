//! The element context: [`Ctx`], what an element sees of the router
//! while one of its methods runs (its ports, pushing and pulling packets,
//! its task and timers, notifiers, handler calls on other elements, the
//! console), and [`Emitter`], which collects a source's packets into
//! batches. This is the router's side of the element API in
//! [`crate::element`].

use super::dispatch::NO_ROUTE;
use super::{Core, HandlerError, SignalId, SignalKind, UpstreamSignal};
use crate::element::{Batch, Element};
use crate::packet::{Packet, Pool};
use crate::time::Timestamp;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use click_lang::NameTable;

/// Collects the packets a source emits on one output into batches of the
/// router's `max_batch`, so sources need not special-case batching: with
/// `max_batch` 1 (Click's packet-at-a-time order) every packet is pushed at
/// once, otherwise full batches are pushed as they fill and `flush` pushes
/// the rest. A lone packet is held by itself and goes through `push`,
/// without a batch vector: a source that emits one packet a run (FromDump's
/// default BURST 1) costs no vector at all.
pub struct Emitter {
    port: usize,
    max: usize,
    /// The first packet, while it is the only one (`batch` is then empty).
    first: Option<Packet>,
    batch: Batch,
}

impl Emitter {
    pub fn new(cx: &Ctx, port: usize) -> Emitter {
        Emitter {
            port,
            max: cx.max_batch().max(1),
            first: None,
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
        } else if n == 0 && self.first.is_none() && self.max > 1 {
            self.first = Some(p);
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
        if let Some(first) = self.first.take() {
            // a second packet: now a batch
            if self.batch.capacity() == 0 {
                self.batch = cx.core.spare_batch.take();
                if self.batch.capacity() < self.max {
                    self.batch.reserve_exact(self.max);
                }
            }
            self.batch.push(first);
        }
        self.batch.push(p);
        if self.batch.len() >= self.max {
            cx.push_batch(self.port, core::mem::take(&mut self.batch));
        }
    }

    /// Pushes whatever is still collected.
    #[inline]
    pub fn flush(&mut self, cx: &Ctx) {
        if let Some(p) = self.first.take() {
            cx.push(self.port, p);
        } else if !self.batch.is_empty() {
            cx.push_batch(self.port, core::mem::take(&mut self.batch));
        }
    }
}

/// What an element sees of the router while one of its methods runs.
pub struct Ctx<'a> {
    pub(super) core: &'a Core,
    pub(super) me: usize,
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
    /// Where the element was declared (`FILE:LINE`), for messages.
    pub fn landmark(&self) -> &'a str {
        &self.core.slots[self.me].landmark
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

    /// An empty batch vector for a source to fill (the one a sink last
    /// handed back with [`recycle_batch`](Self::recycle_batch), if any).
    #[inline]
    pub fn take_batch(&self) -> Batch {
        self.core.spare_batch.take()
    }

    /// Drops the packets of a batch that ends here (a sink's
    /// `push_batch`), faster than dropping them one by one, and keeps the
    /// vector for the next batch a source starts.
    #[inline]
    pub fn recycle_batch(&self, mut b: Batch) {
        crate::packet::drop_all(&mut b);
        let spare = self.core.spare_batch.take();
        self.core
            .spare_batch
            .set(if b.capacity() >= spare.capacity() {
                b
            } else {
                spare
            });
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

    /// The time, read at most once per eight task runs of a scheduler
    /// pass: for ages and expiries that tolerate a few batches' worth of
    /// staleness (Click's jiffies), so a per-packet check costs no clock
    /// read. Outside task runs (handlers, timers, injected packets) it
    /// reads the clock.
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

    /// This router's copy index
    /// ([`RouterOptions::copy`](super::RouterOptions::copy)).
    #[inline]
    pub fn copy(&self) -> usize {
        self.core.copy
    }

    /// How many copies of this configuration run
    /// ([`RouterOptions::ncopies`](super::RouterOptions::ncopies)).
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
    /// The host context given in
    /// [`RouterOptions::host`](super::RouterOptions::host), if any.
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
        self.core.unschedule(self.me);
    }

    /// Schedules timer `id` of this element at `when` (replacing any
    /// earlier schedule of the same timer).
    pub fn schedule_timer_at(&self, id: u32, when: Timestamp) {
        self.core.schedule_timer_at(self.me, id, when);
    }
    /// Schedules timer `id` `ns` nanoseconds from now.
    pub fn schedule_timer_after(&self, id: u32, ns: i64) {
        self.schedule_timer_at(id, self.now().add_nsec(ns));
    }
    pub fn unschedule_timer(&self, id: u32) {
        self.core.unschedule_timer(self.me, id);
    }
    pub fn timer_scheduled(&self, id: u32) -> bool {
        self.core.timer_scheduled(self.me, id)
    }

    /// Creates a notifier signal owned by this element.
    pub fn new_signal(&self, active: bool) -> SignalId {
        self.core.new_signal(active, SignalKind::Empty)
    }
    /// Creates a full notifier's signal (active while this element has
    /// room), numbered apart from the empty notifiers' as Click does.
    pub fn new_full_signal(&self, active: bool) -> SignalId {
        self.core.new_signal(active, SignalKind::Full)
    }
    /// A signal as Click's `NotifierSignal::unparse` prints it (see
    /// NotifierDebug): `busy*`, or `empty.W/MASK:VALUE[*]` parts joined
    /// by `+`.
    pub fn unparse_signal(&self, sig: &UpstreamSignal) -> String {
        self.core.unparse_signal(sig)
    }
    /// Sets a signal; activating it wakes the tasks listening to it.
    pub fn set_signal(&self, id: SignalId, active: bool) {
        self.core.set_signal(id, active);
    }
    pub fn signal_active(&self, sig: &UpstreamSignal) -> bool {
        self.core.signal_active(sig)
    }
    /// Finds the notifiers upstream of pull input `port` and registers this
    /// element's task to be woken when any of them becomes active.
    pub fn upstream_signal(&self, port: usize) -> UpstreamSignal {
        self.core.upstream_signal(self.me, port, true)
    }
    /// Like [`Ctx::upstream_signal`], but instead of this element's task,
    /// signal `dependent` is activated (waking its own listeners) when any
    /// of the upstream signals becomes active: Click's dependent notifier,
    /// for pull elements without a task that relay their inputs' signals
    /// (PullSwitch).
    pub fn upstream_signal_dependent(&self, port: usize, dependent: SignalId) -> UpstreamSignal {
        let u = self.core.upstream_signal(self.me, port, false);
        self.core.add_dependent(&u, dependent);
        u
    }
    /// Like [`Ctx::upstream_signal`], but without registering this element
    /// as a listener: for pull elements without a task (PrioSched) that only
    /// look at the signals to skip empty inputs, while the puller downstream
    /// is the one that sleeps and wakes.
    pub fn upstream_signal_passive(&self, port: usize) -> UpstreamSignal {
        self.core.upstream_signal(self.me, port, false)
    }

    /// Click's downstream full notifier: finds the full notifiers
    /// ([`Element::full_signal`]) downstream of push output `port` and
    /// registers this element's task to be woken when any of them becomes
    /// active (has room again). Elements without one are crossed from
    /// their push outputs; a path that ends anywhere else (a sink such as
    /// Discard) can always take packets, and the answer is
    /// [`UpstreamSignal::AlwaysActive`].
    pub fn downstream_signal(&self, port: usize) -> UpstreamSignal {
        self.core.downstream_signal(self.me, port, true)
    }
    /// Like [`Ctx::downstream_signal`], without registering this element
    /// as a listener (for elements that only look at the signals).
    pub fn downstream_signal_passive(&self, port: usize) -> UpstreamSignal {
        self.core.downstream_signal(self.me, port, false)
    }

    /// Click's flow-based router context for `Storage` elements (as RED
    /// uses it): starting at this element's output `port` (`downstream`)
    /// or input `port` (upstream), walks the connections and returns the
    /// nearest elements whose [`Element::queue_len`] answers, not looking
    /// past them. Other elements are crossed from every input to every
    /// output (or back). Element indices, in the order found.
    pub fn nearby_storage(&self, port: usize, downstream: bool) -> Vec<usize> {
        self.core.nearby_storage(self.me, port, downstream)
    }
    /// The elements within `diameter` connections of this element's output
    /// `port` (`downstream`) or input `port`, every port when `port` is
    /// `None`, in the order first reached (Click's
    /// `ElementNeighborhoodTracker`; every element is crossed from each
    /// input to each output). Element indices.
    pub fn neighborhood(
        &self,
        port: Option<usize>,
        downstream: bool,
        diameter: usize,
    ) -> Vec<usize> {
        self.core.neighborhood(self.me, port, downstream, diameter)
    }
    /// The length element `elem` reports through [`Element::queue_len`]
    /// (`None` if it is not a Storage element, or is busy right now).
    pub fn storage_len(&self, elem: usize) -> Option<usize> {
        self.core.storage_len(elem)
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
    /// The elements of class `class`, in declaration order (Click's
    /// `Router::element_cast` scans: IPRewriterPatterns' shared patterns).
    pub fn elements_of_class(&self, class: &str) -> Vec<usize> {
        self.core
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.spec.name == class)
            .map(|(i, _)| i)
            .collect()
    }
    /// The number of outputs of element `elem`.
    pub fn element_noutputs(&self, elem: usize) -> usize {
        self.core.slots.get(elem).map_or(0, |s| s.out_push.len())
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
        self.core.please_stop_driver();
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
        self.core.become_driver_manager(self.me);
    }
    /// Stops the router now.
    pub fn stop_router(&self) {
        self.core.stop();
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
    /// Writes bytes to a file through the console (binary dumps).
    pub fn write_file_bytes(&self, path: &str, append: bool, bytes: &[u8]) -> Result<(), String> {
        self.core.console.write_file_bytes(path, append, bytes)
    }
    /// Raw bytes for standard output.
    pub fn stdout_bytes(&self, bytes: &[u8]) {
        self.core.console.stdout_bytes(bytes);
    }
    /// Reads a file through the console (Script's `$(cat FILE)`); one
    /// larger than [`Ctx::max_handler_value`] is an error.
    pub fn read_file(&self, path: &str) -> Result<String, String> {
        self.core
            .console
            .read_file(path, self.core.max_handler_value)
    }
    /// The largest value a handler may return
    /// ([`RouterOptions::max_handler_value`](super::RouterOptions::max_handler_value)):
    /// an element that builds a value from its input (a string that
    /// grows with a loop, a format with a field width) stops there, with
    /// an error, instead of building a string the router would refuse.
    pub fn max_handler_value(&self) -> usize {
        self.core.max_handler_value
    }
}
