//! The dispatch core: the element slots and the [`Core`] they share, the
//! push and pull paths between elements, the deferred queue, the task run
//! queue and scheduler pass, timers, and stop requests.
//!
//! Elements live in slots. An element's methods get `&mut self` from its
//! slot and a [`Ctx`] that reaches the rest of the graph through shared
//! references only; a per-slot busy flag guarantees that no element is
//! borrowed twice (a push that loops back into a busy element is deferred
//! until the current one returns, a pull from a busy element yields
//! nothing), so re-entrant graphs stay memory-safe.

use super::graph::Target;
use super::handlers::GlobalHandlers;
use super::notify::SignalState;
use super::{Console, Ctx, Peers};
use crate::element::{Batch, ClassSpec, Element};
use crate::packet::{Packet, Pool};
use crate::time::{Clock, Timestamp};
use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BinaryHeap, VecDeque};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use click_lang::NameTable;
use core::cell::{Cell, RefCell, UnsafeCell};
use core::cmp::Reverse;

/// One element and what the router knows of it.
pub(super) struct Slot {
    pub(super) elem: UnsafeCell<Box<dyn Element>>,
    pub(super) busy: Cell<bool>,
    pub(super) spec: &'static ClassSpec,
    pub(super) name: String,
    pub(super) landmark: String,
    pub(super) config: RefCell<String>,
    /// Push outputs: where packets go.
    pub(super) out_target: Vec<Option<Target>>,
    /// Pull inputs: where packets come from.
    pub(super) in_source: Vec<Option<Target>>,
    pub(super) in_push: Vec<bool>,
    pub(super) out_push: Vec<bool>,
    pub(super) task_scheduled: Cell<bool>,
    /// The element has a task (it was scheduled at least once): it gets
    /// Click's task handlers `scheduled` and `home_thread`.
    pub(super) has_task: Cell<bool>,
    /// Pulls on output 0 or 1 answered straight from this input, without
    /// calling the element ([`NO_ROUTE`]: call it): Click's Bypass, which
    /// rewires its neighbours, so a bypass path may loop back into it.
    pub(super) pull_route: [Cell<u8>; 2],
}

/// No pull route (see `Slot::pull_route`).
pub(super) const NO_ROUTE: u8 = u8::MAX;

impl Slot {
    pub(super) fn declaration(&self) -> String {
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

/// Task runs per scheduler pass before the timers are looked at (Click's
/// `RouterThread` default `tasks_per_iter`).
const TASKS_PER_ITER: usize = 128;

/// (expiry, sequence number, element, timer id)
type TimerEntry = (Timestamp, u64, usize, u32);

/// The shared core that element contexts reach.
pub struct Core {
    pub(super) slots: Vec<Slot>,
    pub(super) names: BTreeMap<String, usize>,
    pub(super) connections: Vec<(usize, usize, usize, usize)>,
    pub(super) requirements: Vec<String>,
    pub(super) flat_config: String,
    pub(super) pool: Pool,
    pub(super) clock: Box<dyn Clock>,
    pub(super) console: Box<dyn Console>,
    pub(super) run_queue: RefCell<VecDeque<usize>>,
    pub(super) timers: RefCell<BinaryHeap<Reverse<TimerEntry>>>,
    pub(super) timer_live: RefCell<BTreeMap<(usize, u32), u64>>,
    pub(super) timer_seq: Cell<u64>,
    pub(super) signals: RefCell<Vec<SignalState>>,
    pub(super) deferred: RefCell<VecDeque<(usize, usize, Packet)>>,
    /// Handler writes to an element that was busy (a Script TYPE PACKET
    /// downstream of an Unqueue writing `unqueue.reset`): applied as soon
    /// as the element returns, in order.
    pub(super) deferred_writes: RefCell<VecDeque<(usize, String, String)>>,
    pub(super) runcount: Cell<i32>,
    pub(super) stopped: Cell<bool>,
    pub(super) driver_manager: Cell<Option<usize>>,
    pub(super) max_batch: usize,
    pub(super) host: Option<alloc::rc::Rc<dyn core::any::Any>>,
    pub(super) copy: usize,
    pub(super) ncopies: usize,
    pub(super) peers: Option<alloc::rc::Rc<dyn Peers>>,
    pub(super) home_threads: BTreeMap<String, i64>,
    pub(super) name_info: NameTable,
    pub(super) warnings: bool,
    pub(super) hotswap: Option<BTreeMap<String, &'static str>>,
    pub(super) globals: Option<alloc::rc::Rc<dyn GlobalHandlers>>,
    /// (signal, element) pairs waiting for a signal (one-shot, as Click's
    /// master keeps them).
    pub(super) signal_handlers: RefCell<Vec<(i32, usize)>>,
    /// An empty batch vector kept for the next batch a source starts
    /// ([`Ctx::recycle_batch`], [`super::Emitter`]): no allocation per batch.
    pub(super) spare_batch: Cell<Batch>,
    /// The clock as read once for up to [`Core::COARSE_TASK_RUNS`] task
    /// runs of the current pass (see [`Ctx::now_coarse`]); `None` outside
    /// task runs or before the first read.
    pub(super) coarse_now: Cell<Option<Timestamp>>,
    pub(super) in_task: Cell<bool>,
    /// [`RouterOptions::max_handler_value`](super::RouterOptions::max_handler_value).
    pub(super) max_handler_value: usize,
    /// [`RouterOptions::call_guard`](super::RouterOptions::call_guard).
    pub(super) call_guard: Option<super::CallGuard>,
}

/// Clears a slot's busy flag when dropped: when the element returns, and
/// also when a panic unwinds out of it (to a host's call guard), which
/// would otherwise leave the element busy, and every packet for it
/// deferred, for ever.
struct Busy<'a>(&'a Cell<bool>);

impl Drop for Busy<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.set(false);
    }
}

impl Core {
    /// Runs `f` with a mutable borrow of element `i`, unless it is busy.
    #[inline]
    pub(super) fn with_elem<R>(
        &self,
        i: usize,
        f: impl FnOnce(&mut dyn Element, &Ctx) -> R,
    ) -> Option<R> {
        let s = &self.slots[i];
        if s.busy.replace(true) {
            return None;
        }
        let _busy = Busy(&s.busy);
        // SAFETY: the busy flag was clear and is now set, so this is the
        // only live reference to the element until `_busy` clears the flag
        // (on return or unwind), after the reference's last use.
        let e: &mut dyn Element = unsafe { &mut **s.elem.get() };
        Some(f(e, &Ctx { core: self, me: i }))
    }

    #[inline]
    pub(super) fn push_to(&self, i: usize, port: usize, p: Packet) {
        let s = &self.slots[i];
        if s.busy.replace(true) {
            self.deferred.borrow_mut().push_back((i, port, p));
            return;
        }
        let _busy = Busy(&s.busy);
        // SAFETY: as in `with_elem`: the busy flag makes this borrow unique.
        let e: &mut dyn Element = unsafe { &mut **s.elem.get() };
        e.push(port, p, &Ctx { core: self, me: i });
    }

    #[inline]
    pub(super) fn push_batch_to(&self, i: usize, port: usize, b: Batch) {
        let s = &self.slots[i];
        if s.busy.replace(true) {
            let mut d = self.deferred.borrow_mut();
            for p in b {
                d.push_back((i, port, p));
            }
            return;
        }
        let _busy = Busy(&s.busy);
        // SAFETY: as in `with_elem`: the busy flag makes this borrow unique.
        let e: &mut dyn Element = unsafe { &mut **s.elem.get() };
        e.push_batch(port, b, &Ctx { core: self, me: i });
    }

    pub(super) fn drain_deferred(&self) {
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
                    let r = self.guarded(|| {
                        match self.with_elem(i, |e, cx| e.write_handler(&h, &value, cx)) {
                            Some(Some(Err(msg))) => Err(super::HandlerError::Failed(msg)),
                            _ => Ok(()),
                        }
                    });
                    if let Err(super::HandlerError::Failed(msg)) = r {
                        let name = &self.slots[i].name;
                        self.console
                            .error_line(&format!("While calling '{}.{}':\n  {}", name, h, msg));
                    }
                }
            }
        }
    }

    /// How many task runs of a pass share one reading of the coarse clock
    /// ([`Ctx::now_coarse`](super::Ctx::now_coarse)): a source that emits
    /// a packet a run would otherwise read the clock for every packet.
    const COARSE_TASK_RUNS: usize = 8;

    /// One scheduler pass ([`Router::run_pass`](super::Router::run_pass)).
    #[inline]
    pub(super) fn run_pass(&self) -> RunState {
        self.run_pass_until(|| false)
    }

    /// One scheduler pass whose task runs end early once `yield_now`
    /// returns true (asked after every task run);
    /// [`Router::run_pass_until`](super::Router::run_pass_until).
    pub(super) fn run_pass_until(&self, mut yield_now: impl FnMut() -> bool) -> RunState {
        let c = self;
        if c.stopped.get() {
            return RunState::Stopped;
        }
        // Click's driver loop runs tasks — up to TASKS_PER_ITER task runs,
        // a task that stays scheduled going to the back of the queue, and
        // at least one run of every task queued at the start — then the
        // timers that are due: at start every task runs before a timer (a
        // Script's first step) fires.
        let n = c.run_queue.borrow().len().max(TASKS_PER_ITER);
        for k in 0..n {
            let Some(i) = c.run_queue.borrow_mut().pop_front() else {
                break;
            };
            let s = &c.slots[i];
            s.task_scheduled.set(false);
            c.in_task.set(true);
            let keep = c.with_elem(i, |e, cx| e.run_task(cx)).unwrap_or(true);
            c.in_task.set(false);
            c.drain_deferred();
            if k % Self::COARSE_TASK_RUNS == Self::COARSE_TASK_RUNS - 1 {
                c.coarse_now.set(None);
            }
            if keep && !s.task_scheduled.get() {
                s.task_scheduled.set(true);
                c.run_queue.borrow_mut().push_back(i);
            }
            if c.stopped.get() || yield_now() {
                break;
            }
        }
        c.coarse_now.set(None);
        if !c.stopped.get() {
            c.run_timers();
        }
        c.state()
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

    /// Puts element `i`'s task on the run queue (once).
    pub(super) fn schedule(&self, i: usize) {
        let s = &self.slots[i];
        s.has_task.set(true);
        if !s.task_scheduled.replace(true) {
            self.run_queue.borrow_mut().push_back(i);
        }
    }

    /// Takes element `i`'s task off the run queue.
    pub(super) fn unschedule(&self, i: usize) {
        if let Some(s) = self.slots.get(i) {
            if s.task_scheduled.replace(false) {
                self.run_queue.borrow_mut().retain(|&x| x != i);
            }
        }
    }

    /// Schedules timer `id` of element `elem` at `when` (replacing any
    /// earlier schedule of the same timer).
    pub(super) fn schedule_timer_at(&self, elem: usize, id: u32, when: Timestamp) {
        let seq = self.timer_seq.get() + 1;
        self.timer_seq.set(seq);
        self.timer_live.borrow_mut().insert((elem, id), seq);
        self.timers
            .borrow_mut()
            .push(Reverse((when, seq, elem, id)));
    }

    pub(super) fn unschedule_timer(&self, elem: usize, id: u32) {
        self.timer_live.borrow_mut().remove(&(elem, id));
    }

    pub(super) fn timer_scheduled(&self, elem: usize, id: u32) -> bool {
        self.timer_live.borrow().contains_key(&(elem, id))
    }

    /// Adds `delta` to the run count (the peers' shared one, if any) and
    /// returns the new value.
    pub(super) fn runcount_add(&self, delta: i32) -> i32 {
        if let Some(rc) = self.peers.as_ref().and_then(|p| p.runcount_add(delta)) {
            return rc;
        }
        let rc = self.runcount.get().saturating_add(delta);
        self.runcount.set(rc);
        rc
    }

    /// Click's `please_stop_driver`: one stop request. With a driver
    /// manager present it decides; otherwise the router stops.
    pub(super) fn please_stop_driver(&self) {
        if self.runcount_add(-1) <= 0 {
            match self.driver_manager.get() {
                Some(dm) => self.schedule(dm),
                None => {
                    if !self.peers.as_ref().is_some_and(|p| p.stop_requested()) {
                        self.stopped.set(true)
                    }
                }
            }
        }
    }

    /// Makes element `elem` the one that manages stop requests.
    pub(super) fn become_driver_manager(&self, elem: usize) {
        self.driver_manager.set(Some(elem));
        if let Some(p) = &self.peers {
            p.driver_manager_here(self, elem);
        }
    }

    /// The host's peers, if this router runs beside others.
    pub fn peers(&self) -> Option<&alloc::rc::Rc<dyn Peers>> {
        self.peers.as_ref()
    }

    /// Whether the router has stopped.
    pub fn is_stopped(&self) -> bool {
        self.stopped.get()
    }

    /// Stops this router.
    pub fn stop(&self) {
        self.stopped.set(true);
    }
}
