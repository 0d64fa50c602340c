//! Several threads (`clickos run -j N`): one router per thread, built from
//! the [`plan`], joined by lock-free links, doorbells and handler mail.
//!
//! * **Doorbells.** Each thread has an eventfd and a word of pending flags
//!   (mail, link data, driver manager, stop, ...). Ringing sets a flag and
//!   writes the eventfd only when the thread is asleep, so a busy thread
//!   pays one atomic load per scheduler pass.
//! * **Handler mail.** A handler call for an element on another thread is
//!   mailed there and answered between that thread's task runs; the caller
//!   serves its own mail while it waits, so two threads calling each other
//!   cannot deadlock.
//! * **Termination.** `work` counts busy threads, packets in links and
//!   wake-ups in flight (credits in the doorbell word). A
//!   thread with no tasks, timers or holders leaves the count and sleeps;
//!   whoever brings the count to zero ends the run (Click's driver ends
//!   when nothing is left to do; with threads that means on every thread).

pub mod plan;
pub mod spsc;
mod xthread;

use crate::clock::SystemClock;
use crate::console::StdConsole;
use crate::runloop::{self, LoopHooks};
use crate::selector::{Host, Selector};
use click::packet::SendPacket;
use click::prelude::*;
use click::router::{Core, HandlerError, Peers};
use clickos_sys::EventFd;
use plan::Plan;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::os::fd::AsRawFd;
use std::rc::Rc;
use std::sync::atomic::{
    fence, AtomicBool, AtomicI32, AtomicIsize, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use xthread::register_hidden;

/// Doorbell flags.
const MAIL: u32 = 1;
const REPLY: u32 = 2;
const LINKS: u32 = 4;
const DRIVER_MANAGER: u32 = 8;
const STOP: u32 = 16;
const STATE: u32 = 32;
const ROOM: u32 = 64;
/// One wake-up credit in a doorbell word.
const CREDIT: u64 = 1 << 32;

/// Slots in a cross-thread link's ring.
pub const LINK_CAPACITY: usize = 1024;
/// How long a thread watches its doorbell before it blocks.
const SPIN: Duration = Duration::from_micros(100);
/// How long a handler call waits for another thread before giving up.
const MAIL_TIMEOUT: Duration = Duration::from_secs(10);

/// A thread's doorbell.
struct Bell {
    fd: EventFd,
    /// Pending flags (low 32 bits) and wake-ups that carry work (high 32
    /// bits, see [`Shared::ring_with_work`]): one word, so a thread takes
    /// a credit only with its flag.
    pending: AtomicU64,
    sleeping: AtomicBool,
}

impl Bell {
    fn new() -> std::io::Result<Bell> {
        Ok(Bell {
            fd: clickos_sys::eventfd()?,
            pending: AtomicU64::new(0),
            sleeping: AtomicBool::new(false),
        })
    }

    fn ring(&self, flags: u32) {
        self.pending.fetch_or(u64::from(flags), Ordering::SeqCst);
        self.wake();
    }

    /// Rings with a credit: the flag and the credit land together.
    fn ring_credited(&self, flags: u32) {
        let _ = self
            .pending
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |p| {
                Some((p | u64::from(flags)) + CREDIT)
            });
        self.wake();
    }

    fn wake(&self) {
        if self.sleeping.load(Ordering::SeqCst) {
            clickos_sys::signal(&self.fd);
        }
    }

    /// Takes the pending flags and credits.
    fn take(&self) -> (u32, isize) {
        if self.pending.load(Ordering::Relaxed) == 0 {
            return (0, 0);
        }
        let p = self.pending.swap(0, Ordering::SeqCst);
        (p as u32, (p / CREDIT) as isize)
    }

    fn is_pending(&self) -> bool {
        self.pending.load(Ordering::SeqCst) != 0
    }

    /// Marks the thread asleep; false (and awake) if a flag is up. It
    /// first watches the flags for [`SPIN`]: waking a sleeping thread
    /// costs tens of microseconds in a VM, during which a busy sender
    /// overruns the link's ring.
    fn prepare_sleep(&self) -> bool {
        let t0 = Instant::now();
        let mut i = 0u32;
        while self.pending.load(Ordering::Relaxed) == 0 {
            std::hint::spin_loop();
            i = i.wrapping_add(1);
            if i.is_multiple_of(64) {
                if t0.elapsed() >= SPIN {
                    break;
                }
                // if another thread waits for this core (more threads than
                // free cores), let it run instead of spinning in its way
                std::thread::yield_now();
            }
        }
        if self.pending.load(Ordering::Relaxed) != 0 {
            return false;
        }
        self.sleeping.store(true, Ordering::SeqCst);
        if self.pending.load(Ordering::SeqCst) != 0 {
            self.sleeping.store(false, Ordering::SeqCst);
            return false;
        }
        true
    }

    fn woke(&self) {
        self.sleeping.store(false, Ordering::SeqCst);
        clickos_sys::drain(&self.fd);
    }

    /// Sleeps until rung or `timeout` passes.
    fn wait(&self, timeout: Duration) {
        if !self.prepare_sleep() {
            return;
        }
        clickos_sys::wait_readable(&self.fd, Some(timeout));
        self.woke();
    }
}

enum Op {
    Read(Option<String>),
    Write(String),
}

#[derive(Default)]
struct ReplySlot(Mutex<Option<Result<String, HandlerError>>>);

struct Mail {
    path: String,
    op: Op,
    reply: Arc<ReplySlot>,
    from: usize,
}

/// One cross-thread link's shared part; the ends are taken by the hidden
/// elements when they initialize.
pub struct LinkShared {
    from_thread: usize,
    to_thread: usize,
    /// The producer found the ring full and its full notifier is down.
    blocked: AtomicBool,
    producer: Mutex<Option<spsc::Producer<SendPacket>>>,
    consumer: Mutex<Option<spsc::Consumer<SendPacket>>>,
    /// The consumer found the ring empty and waits for a doorbell.
    waiting: AtomicBool,
    drops: AtomicU64,
}

/// Spare packet buffers the threads' pools trade (see
/// [`click::packet::BufferDepot`]).
struct Depot {
    bufs: Mutex<Vec<SendPacket>>,
}

/// Buffers the depot keeps at most (2 KiB each); beyond that, freed.
const DEPOT_CAPACITY: usize = 8192;

impl click::packet::BufferDepot for Depot {
    fn take(&self, n: usize, out: &mut Vec<SendPacket>) {
        if let Ok(mut v) = self.bufs.lock() {
            let at = v.len() - n.min(v.len());
            out.extend(v.drain(at..));
        }
    }

    fn give(&self, bufs: &mut Vec<SendPacket>) {
        if let Ok(mut v) = self.bufs.lock() {
            let k = (DEPOT_CAPACITY - v.len().min(DEPOT_CAPACITY)).min(bufs.len());
            v.extend(bufs.drain(..k));
        }
        // whatever did not fit is freed by the caller, outside the lock
    }
}

/// Build results and the go-ahead.
const GO_WAIT: u8 = 0;
const GO_RUN: u8 = 1;
const GO_ABORT: u8 = 2;

/// A thread's router build: fine, or its errors.
type BuildResult = Result<(), Vec<String>>;

/// What every thread of one run shares.
pub struct Shared {
    nthreads: usize,
    replicate: bool,
    /// Element name → the threads that hold it.
    owners: BTreeMap<String, Vec<usize>>,
    flat_text: String,
    /// The plan in words (the `threads` global handler).
    plan_text: String,
    home_threads: BTreeMap<String, i64>,
    /// The whole configuration's AddressInfo and PortInfo names: every
    /// thread's router configures with them, wherever the AddressInfo sits.
    name_table: click::lang::NameTable,
    names: Vec<String>,
    classes: Vec<String>,
    requirements: Vec<String>,
    bells: Vec<Bell>,
    mail: Vec<Mutex<VecDeque<Mail>>>,
    links: Vec<LinkShared>,
    /// Every thread should leave its scheduler loop.
    stop_all: AtomicBool,
    /// Set after `-h` handlers were read: threads clean up and exit.
    exit: AtomicBool,
    go: AtomicU8,
    built: Mutex<Vec<Option<BuildResult>>>,
    /// Threads that left their scheduler loop (or died).
    finished: AtomicUsize,
    dead: Vec<AtomicBool>,
    runcount: AtomicI32,
    /// (thread, element) of the driver manager, if any.
    driver_manager: Mutex<Option<(usize, usize)>>,
    /// Busy threads plus packets in links plus wake-ups in flight (see
    /// the module docs).
    work: AtomicIsize,
    panics: Mutex<Vec<String>>,
    depot: Arc<Depot>,
}

impl Shared {
    /// Rings thread `t` with work for it (a driver-manager request, room in
    /// a link): counted as work until `t` takes it, so the run cannot end
    /// while the wake-up is on its way.
    ///
    /// The count goes up first (the ringer is busy meanwhile, so the run
    /// cannot end in between); the credit rides in the doorbell word with
    /// its flag, so `t` releases it exactly when it takes the flag. (With
    /// the credit beside the word, `t` could release a credit whose flag
    /// had not landed yet, go idle, and end the run under a sleeping
    /// source that flag was about to wake.)
    fn ring_with_work(&self, t: usize, flags: u32) {
        self.work.fetch_add(1, Ordering::SeqCst);
        self.bells[t].ring_credited(flags);
    }

    fn ring_all(&self, flags: u32) {
        for b in &self.bells {
            b.ring(flags);
        }
    }

    fn stop_everything(&self) {
        self.stop_all.store(true, Ordering::SeqCst);
        self.ring_all(STOP);
    }
}

/// One thread's view: its index, the shared state, and doorbell flags
/// taken while a handler call waited (handed to the loop afterwards).
pub struct ThreadCtx {
    shared: Arc<Shared>,
    me: usize,
    deferred: Cell<u32>,
    /// Local indices of this router's ThreadRx elements...
    rx_elems: RefCell<Vec<usize>>,
    /// ... and of its ThreadTx elements.
    tx_elems: RefCell<Vec<usize>>,
    /// This thread has left the work count (idle with nothing to do).
    idle: Cell<bool>,
}

impl ThreadCtx {
    fn bell(&self) -> &Bell {
        &self.shared.bells[self.me]
    }

    /// Takes the doorbell's flags (with those a handler call's wait put
    /// aside) and releases their credits: the caller is busy, so the run
    /// keeps counting it until the flags are dealt with.
    fn take_flags(&self) -> u32 {
        self.deferred.take() | self.take_bell()
    }

    fn take_bell(&self) -> u32 {
        let (f, c) = self.bell().take();
        if c != 0 {
            self.shared.work.fetch_sub(c, Ordering::SeqCst);
        }
        f
    }

    /// Answers the handler calls other threads mailed here.
    fn serve_mail(&self, core: Option<&Core>) {
        loop {
            let m = match self.shared.mail[self.me].lock() {
                Ok(mut q) => q.pop_front(),
                Err(_) => None,
            };
            let Some(m) = m else { break };
            let r = match core {
                None => Err(HandlerError::Failed(format!(
                    "thread {} has no router",
                    self.me
                ))),
                Some(c) => match &m.op {
                    Op::Read(None) => c.read_handler_local(&m.path),
                    Op::Read(Some(p)) => c.read_handler_param_local(&m.path, p),
                    Op::Write(v) => c.write_handler_local(&m.path, v).map(|()| String::new()),
                },
            };
            if let Ok(mut s) = m.reply.0.lock() {
                *s = Some(r);
            }
            self.shared.bells[m.from].ring(REPLY);
        }
    }

    /// Waits on this thread's doorbell, serving mail, until `done` says so
    /// (checked after each wake-up). Other flags are kept for the loop.
    fn wait_serving(&self, core: Option<&Core>, mut done: impl FnMut() -> bool) {
        loop {
            let f = self.take_bell();
            self.deferred
                .set(self.deferred.get() | (f & !(MAIL | REPLY)));
            self.serve_mail(core);
            if done() {
                return;
            }
            self.bell().wait(Duration::from_millis(50));
        }
    }

    /// Mails a handler call to thread `t` and waits for the answer.
    fn call(&self, core: &Core, t: usize, path: &str, op: Op) -> Result<String, HandlerError> {
        if self.shared.dead[t].load(Ordering::SeqCst) {
            return Err(HandlerError::Failed(format!("thread {t} is gone")));
        }
        let reply = Arc::new(ReplySlot::default());
        match self.shared.mail[t].lock() {
            Ok(mut q) => q.push_back(Mail {
                path: path.to_string(),
                op,
                reply: reply.clone(),
                from: self.me,
            }),
            Err(_) => return Err(HandlerError::Failed(format!("thread {t} is gone"))),
        }
        self.shared.bells[t].ring(MAIL);
        let deadline = Instant::now() + MAIL_TIMEOUT;
        let mut answer = None;
        self.wait_serving(Some(core), || {
            answer = reply.0.lock().ok().and_then(|mut s| s.take());
            answer.is_some()
                || Instant::now() >= deadline
                || self.shared.dead[t].load(Ordering::SeqCst)
        });
        answer.unwrap_or_else(|| {
            Err(HandlerError::Failed(format!(
                "no answer from thread {t} for '{path}'"
            )))
        })
    }

    /// Leaves the work count before sleeping, unless flags wait to be
    /// dealt with (then the loop comes round again); true if that ended
    /// the whole run.
    fn go_idle(&self) -> bool {
        if self.deferred.get() != 0 || self.bell().is_pending() {
            return false;
        }
        self.leave()
    }

    /// Leaves the work count for good (the loop is over).
    fn leave(&self) -> bool {
        if self.idle.replace(true) {
            return false;
        }
        if self.shared.work.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.shared.stop_everything();
            return true;
        }
        false
    }

    fn go_busy(&self) {
        if self.idle.replace(false) {
            self.shared.work.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Accounts packets entering (`n` > 0) or leaving a link.
    pub(crate) fn link_packets(&self, n: isize) {
        self.shared.work.fetch_add(n, Ordering::SeqCst);
    }

    pub(crate) fn link(&self, i: usize) -> Option<&LinkShared> {
        self.shared.links.get(i)
    }

    /// Tells link `i`'s producer that the ring has room, if it waits.
    pub(crate) fn notify_room(&self, i: usize) {
        let Some(l) = self.shared.links.get(i) else {
            return;
        };
        fence(Ordering::SeqCst);
        if l.blocked.load(Ordering::Relaxed) && l.blocked.swap(false, Ordering::SeqCst) {
            self.shared.ring_with_work(l.from_thread, ROOM);
        }
    }

    /// Tells link `i`'s consumer that packets arrived, if it sleeps.
    pub(crate) fn notify_link(&self, i: usize) {
        let Some(l) = self.shared.links.get(i) else {
            return;
        };
        fence(Ordering::SeqCst);
        if l.waiting.load(Ordering::Relaxed) && l.waiting.swap(false, Ordering::SeqCst) {
            self.shared.bells[l.to_thread].ring(LINKS);
        }
    }
}

/// The [`Peers`] of one thread's router.
struct ThreadPeers {
    ctx: Rc<ThreadCtx>,
}

/// Handlers whose values add up across copies under `--replicate`.
const SUMMED: &[&str] = &[
    "count",
    "byte_count",
    "drops",
    "rate",
    "bit_rate",
    "byte_rate",
    "length",
    "dropped",
    "packets",
    "bytes",
    "truncated",
];
/// Handlers whose largest value across copies is reported.
const MAXED: &[&str] = &["highwater_length"];

fn parse_num(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    t.parse::<f64>().ok()
}

/// Combines one handler's values from every copy (see the README).
pub fn combine(handler: &str, values: Vec<(usize, String)>) -> String {
    let nums: Option<Vec<f64>> = values.iter().map(|(_, v)| parse_num(v)).collect();
    if let Some(nums) = nums {
        let all_int = values.iter().all(|(_, v)| v.trim().parse::<i128>().is_ok());
        let pick = if SUMMED.contains(&handler) {
            Some(nums.iter().sum::<f64>())
        } else if MAXED.contains(&handler) {
            nums.iter().cloned().reduce(f64::max)
        } else {
            None
        };
        if let Some(x) = pick {
            if all_int {
                let s: i128 = if SUMMED.contains(&handler) {
                    values
                        .iter()
                        .map(|(_, v)| v.trim().parse::<i128>().unwrap_or(0))
                        .sum()
                } else {
                    values
                        .iter()
                        .map(|(_, v)| v.trim().parse::<i128>().unwrap_or(0))
                        .max()
                        .unwrap_or(0)
                };
                return s.to_string();
            }
            return format!("{x}");
        }
    }
    if values.windows(2).all(|w| w[0].1 == w[1].1) {
        return values.into_iter().next().map(|x| x.1).unwrap_or_default();
    }
    let block = values
        .iter()
        .any(|(_, v)| v.trim_end_matches('\n').contains('\n'));
    let mut out = String::new();
    for (t, v) in values {
        let v = v.trim_end_matches('\n');
        if block {
            out.push_str(&format!("copy {t}:\n{v}\n"));
        } else {
            out.push_str(&format!("copy {t}: {v}\n"));
        }
    }
    out
}

impl ThreadPeers {
    fn global_read(&self, core: &Core, h: &str) -> Result<String, HandlerError> {
        let s = &self.ctx.shared;
        match h {
            "config" | "flatconfig" => Ok(s.flat_text.clone()),
            "list" => {
                let mut out = format!("{}\n", s.names.len());
                for n in &s.names {
                    out.push_str(n);
                    out.push('\n');
                }
                Ok(out)
            }
            "classes" => Ok(s.classes.iter().map(|c| format!("{c}\n")).collect()),
            "requirements" => Ok(s.requirements.iter().map(|r| format!("{r}\n")).collect()),
            "threads" => Ok(s.plan_text.clone()),
            _ => core.read_handler_local(h),
        }
    }

    fn route(&self, core: &Core, path: &str, op: impl Fn() -> Op) -> Result<String, HandlerError> {
        let Some(dot) = path.rfind('.') else {
            return match op() {
                Op::Read(_) => self.global_read(core, path),
                Op::Write(v) => {
                    if path == "stop" {
                        core.stop();
                        self.ctx.shared.stop_everything();
                        Ok(String::new())
                    } else {
                        core.write_handler_local(path, &v).map(|()| String::new())
                    }
                }
            };
        };
        let (ename, h) = (&path[..dot], &path[dot + 1..]);
        let me = self.ctx.me;
        let owners = match self.ctx.shared.owners.get(ename) {
            Some(o) => o.clone(),
            None => vec![me],
        };
        let local = |op: Op| match op {
            Op::Read(None) => core.read_handler_local(path),
            Op::Read(Some(p)) => core.read_handler_param_local(path, &p),
            Op::Write(v) => core.write_handler_local(path, &v).map(|()| String::new()),
        };
        if owners.len() == 1 {
            let t = owners[0];
            return if t == me {
                local(op())
            } else {
                self.ctx.call(core, t, path, op())
            };
        }
        // every copy: writes go to all, reads are combined
        let mut values = Vec::new();
        for t in owners {
            let r = if t == me {
                local(op())
            } else {
                self.ctx.call(core, t, path, op())
            };
            values.push((t, r?));
        }
        match op() {
            Op::Write(_) => Ok(String::new()),
            Op::Read(Some(_)) => Ok(values.swap_remove(0).1),
            Op::Read(None) => Ok(match h {
                // the standard ones are the same in every copy
                "name" | "class" | "config" | "ports" | "handlers" => values.swap_remove(0).1,
                _ => combine(h, values),
            }),
        }
    }
}

impl Peers for ThreadPeers {
    fn read(&self, core: &Core, path: &str, param: Option<&str>) -> Result<String, HandlerError> {
        self.route(core, path, || Op::Read(param.map(|p| p.to_string())))
    }

    fn write(&self, core: &Core, path: &str, value: &str) -> Result<(), HandlerError> {
        self.route(core, path, || Op::Write(value.to_string()))
            .map(|_| ())
    }

    fn has_element(&self, name: &str) -> bool {
        self.ctx.shared.owners.contains_key(name)
    }

    fn has_compound(&self, name: &str) -> bool {
        click::router::has_prefix(&self.ctx.shared.owners, name)
    }

    fn runcount_add(&self, delta: i32) -> Option<i32> {
        if self.ctx.shared.replicate {
            return None;
        }
        let rc = &self.ctx.shared.runcount;
        Some(rc.fetch_add(delta, Ordering::SeqCst).saturating_add(delta))
    }

    fn stop_requested(&self) -> bool {
        let dm = self.ctx.shared.driver_manager.lock().ok().and_then(|d| *d);
        match dm {
            Some((t, _)) if t != self.ctx.me && !self.ctx.shared.replicate => {
                self.ctx.shared.ring_with_work(t, DRIVER_MANAGER);
                true
            }
            _ => false,
        }
    }

    fn driver_manager_here(&self, _core: &Core, elem: usize) {
        if let Ok(mut d) = self.ctx.shared.driver_manager.lock() {
            if d.is_none() || d.is_some_and(|(t, _)| t == self.ctx.me) {
                *d = Some((self.ctx.me, elem));
            }
        }
    }
}

/// The scheduler loop's multi-threaded part.
struct Hooks {
    ctx: Rc<ThreadCtx>,
}

impl LoopHooks for Hooks {
    fn takes_signals(&self) -> bool {
        // Scripts without connections (SIGNAL scripts) run on thread 0
        self.ctx.me == 0
    }

    fn check(&self, router: &Router) -> bool {
        let ctx = &self.ctx;
        ctx.go_busy();
        // now busy: this thread holds the wake-ups it was sent
        let f = ctx.take_flags();
        if f == 0 {
            return !ctx.shared.stop_all.load(Ordering::Relaxed);
        }
        if f & MAIL != 0 {
            ctx.serve_mail(Some(router.core()));
        }
        if f & LINKS != 0 {
            for &i in ctx.rx_elems.borrow().iter() {
                router.schedule_task_of(i);
            }
        }
        if f & ROOM != 0 {
            for &i in ctx.tx_elems.borrow().iter() {
                router.schedule_task_of(i);
            }
        }
        if f & DRIVER_MANAGER != 0 {
            let dm = ctx.shared.driver_manager.lock().ok().and_then(|d| *d);
            if let Some((t, e)) = dm {
                if t == ctx.me {
                    router.schedule_task_of(e);
                }
            }
        }
        !ctx.shared.stop_all.load(Ordering::SeqCst)
    }

    fn idle(&self, _router: &Router) -> bool {
        !self.ctx.go_idle()
    }

    fn stopped(&self, _router: &Router) {
        if self.ctx.shared.replicate {
            self.ctx.leave();
        } else {
            self.ctx.shared.stop_everything();
        }
    }

    fn before_wait(&self) -> bool {
        self.ctx.bell().prepare_sleep()
    }

    fn after_wait(&self) {
        self.ctx.bell().woke();
    }
}

/// Command-line settings a threaded run needs.
pub struct RunSettings {
    pub affinity: bool,
}

/// Pins the calling thread to one CPU.
pub fn pin_to_cpu(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes inside
    // it; sched_setaffinity reads `size_of` bytes from it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

fn cpu_count() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// What the driver needs back from thread 0 once every thread stopped:
/// its router (handlers go through its peers to the others).
pub struct Running {
    shared: Arc<Shared>,
    ctx: Rc<ThreadCtx>,
    host: Rc<Host>,
    router: Router,
    workers: Vec<std::thread::JoinHandle<()>>,
}

/// Builds every thread's router; on success returns thread 0's, with the
/// others built, waiting for [`Running::run`].
pub fn start(
    flat: &click::lang::FlatConfig,
    plan: &Plan,
    registry: &Registry,
    console: &StdConsole,
    max_batch: usize,
    settings: &RunSettings,
) -> Result<Running, Vec<String>> {
    let n = plan.nthreads;
    let mut owners: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (t, c) in plan.configs.iter().enumerate() {
        for e in &c.elements {
            owners.entry(e.name.clone()).or_default().push(t);
        }
    }
    let mut classes: Vec<String> = flat.elements.iter().map(|e| e.class.clone()).collect();
    classes.sort();
    classes.dedup();
    let mut bells = Vec::with_capacity(n);
    for _ in 0..n {
        bells.push(Bell::new().map_err(|e| vec![format!("eventfd: {e}")])?);
    }
    let links = plan
        .links
        .iter()
        .map(|l| {
            let (p, c) = spsc::ring(LINK_CAPACITY);
            LinkShared {
                from_thread: l.from_thread,
                to_thread: l.to_thread,
                blocked: AtomicBool::new(false),
                producer: Mutex::new(Some(p)),
                consumer: Mutex::new(Some(c)),
                waiting: AtomicBool::new(false),
                drops: AtomicU64::new(0),
            }
        })
        .collect();
    let shared = Arc::new(Shared {
        nthreads: n,
        replicate: plan.replicate,
        owners,
        flat_text: click::lang::unparse(flat),
        plan_text: plan.describe(flat),
        home_threads: plan.home_threads(flat),
        name_table: click::router::name_table(flat),
        // the configuration's elements, then the links' hidden ones
        names: flat
            .elements
            .iter()
            .map(|e| e.name.clone())
            .chain(
                plan.links
                    .iter()
                    .flat_map(|l| [l.tx_name.clone(), l.rx_name.clone()]),
            )
            .collect(),
        classes,
        requirements: flat.requirements.clone(),
        bells,
        mail: (0..n).map(|_| Mutex::new(VecDeque::new())).collect(),
        links,
        stop_all: AtomicBool::new(false),
        exit: AtomicBool::new(false),
        go: AtomicU8::new(GO_WAIT),
        built: Mutex::new((0..n).map(|_| None).collect()),
        finished: AtomicUsize::new(0),
        dead: (0..n).map(|_| AtomicBool::new(false)).collect(),
        runcount: AtomicI32::new(1),
        driver_manager: Mutex::new(None),
        work: AtomicIsize::new(n as isize),
        panics: Mutex::new(Vec::new()),
        depot: Arc::new(Depot {
            bufs: Mutex::new(Vec::new()),
        }),
    });
    let mut registry = registry.clone();
    register_hidden(&mut registry);
    let mut workers = Vec::new();
    for t in 1..n {
        let shared = shared.clone();
        let config = plan.configs[t].clone();
        let registry = registry.clone();
        let console = console.clone();
        let quiescent = plan.quiescent.clone();
        let pin = settings.affinity.then(|| t % cpu_count());
        let h = std::thread::Builder::new()
            .name(format!("click-{t}"))
            .spawn(move || {
                if let Some(c) = pin {
                    pin_to_cpu(c);
                }
                worker(shared, t, config, registry, console, max_batch, quiescent)
            })
            .map_err(|e| vec![format!("starting thread {t}: {e}")])?;
        workers.push(h);
    }
    if settings.affinity {
        pin_to_cpu(0);
    }
    let (ctx, host, built) = build(
        &shared,
        0,
        &plan.configs[0],
        &registry,
        console,
        max_batch,
        &plan.quiescent,
    );
    if let Ok(mut b) = shared.built.lock() {
        b[0] = Some(built.as_ref().map(|_| ()).map_err(|e| e.clone()));
    }
    // wait for every thread's build, answering init-time handler calls
    let core = built.as_ref().ok().map(|r| r.core());
    ctx.wait_serving(core, || {
        shared
            .built
            .lock()
            .map(|b| b.iter().all(|x| x.is_some()))
            .unwrap_or(true)
    });
    let mut errors: Vec<String> = Vec::new();
    if let Ok(b) = shared.built.lock() {
        for e in b.iter().flatten().filter_map(|r| r.as_ref().err()) {
            for line in e {
                if !errors.contains(line) {
                    errors.push(line.clone());
                }
            }
        }
    }
    let router = match built {
        Ok(r) if errors.is_empty() => r,
        other => {
            if let Err(e) = other {
                for line in e {
                    if !errors.contains(&line) {
                        errors.push(line);
                    }
                }
            }
            shared.go.store(GO_ABORT, Ordering::SeqCst);
            shared.ring_all(STATE);
            for w in workers {
                let _ = w.join();
            }
            return Err(errors);
        }
    };
    Ok(Running {
        shared,
        ctx,
        host,
        router,
        workers,
    })
}

/// Builds thread `me`'s router.
fn build(
    shared: &Arc<Shared>,
    me: usize,
    config: &click::lang::FlatConfig,
    registry: &Registry,
    console: &StdConsole,
    max_batch: usize,
    quiescent: &[String],
) -> (Rc<ThreadCtx>, Rc<Host>, Result<Router, Vec<String>>) {
    let ctx = Rc::new(ThreadCtx {
        shared: shared.clone(),
        me,
        deferred: Cell::new(0),
        rx_elems: RefCell::new(Vec::new()),
        tx_elems: RefCell::new(Vec::new()),
        idle: Cell::new(false),
    });
    let selector = Selector::default();
    selector.set(
        usize::MAX,
        &[(shared.bells[me].fd.as_raw_fd(), libc::POLLIN)],
    );
    let host = Rc::new(Host {
        selector,
        thread: Some(ctx.clone() as Rc<dyn std::any::Any>),
    });
    let (copy, ncopies) = if shared.replicate {
        (me, shared.nthreads)
    } else {
        (0, 1)
    };
    let home_threads = if shared.replicate {
        config
            .elements
            .iter()
            .map(|e| (e.name.clone(), me as i64))
            .collect()
    } else {
        shared.home_threads.clone()
    };
    let r = Router::from_flat(
        config,
        registry,
        Box::new(SystemClock),
        Box::new(console.clone()),
        RouterOptions {
            host: Some(host.clone() as Rc<dyn std::any::Any>),
            max_batch,
            copy,
            ncopies,
            peers: Some(Rc::new(ThreadPeers { ctx: ctx.clone() })),
            call_guard: Some(crate::runloop::catch_handler_panic),
            // pools trade buffers only where packets cross threads
            home_threads,
            names: Some(shared.name_table.clone()),
            depot: (!shared.links.is_empty())
                .then(|| shared.depot.clone() as Arc<dyn click::packet::BufferDepot>),
            ..RouterOptions::default()
        },
    );
    if let Ok(r) = &r {
        for q in quiescent {
            if let Some(i) = r.element_index(q) {
                r.unschedule_task_of(i);
            }
        }
    }
    (ctx, host, r)
}

/// Marks a worker finished (and its thread dead if it panicked) however it
/// leaves.
struct WorkerGuard {
    shared: Arc<Shared>,
    me: usize,
    counted: bool,
}

impl Drop for WorkerGuard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.shared.dead[self.me].store(true, Ordering::SeqCst);
            if let Ok(mut p) = self.shared.panics.lock() {
                p.push(format!("thread {} panicked; stopping", self.me));
            }
            if let Ok(mut b) = self.shared.built.lock() {
                if b[self.me].is_none() {
                    b[self.me] = Some(Err(vec![format!("thread {} panicked", self.me)]));
                }
            }
            self.shared.stop_everything();
            if !self.counted {
                self.shared.finished.fetch_add(1, Ordering::SeqCst);
            }
            self.shared.bells[0].ring(STATE);
        }
    }
}

fn worker(
    shared: Arc<Shared>,
    me: usize,
    config: click::lang::FlatConfig,
    registry: Registry,
    console: StdConsole,
    max_batch: usize,
    quiescent: Vec<String>,
) {
    let mut guard = WorkerGuard {
        shared: shared.clone(),
        me,
        counted: false,
    };
    let (ctx, host, built) = build(
        &shared, me, &config, &registry, &console, max_batch, &quiescent,
    );
    if let Ok(mut b) = shared.built.lock() {
        b[me] = Some(built.as_ref().map(|_| ()).map_err(|e| e.clone()));
    }
    shared.bells[0].ring(STATE);
    let core = built.as_ref().ok().map(|r| r.core());
    ctx.wait_serving(core, || shared.go.load(Ordering::SeqCst) != GO_WAIT);
    let Ok(router) = built else {
        return;
    };
    if shared.go.load(Ordering::SeqCst) == GO_RUN {
        let hooks = Hooks { ctx: ctx.clone() };
        runloop::drive_with(&router, None, Some(&host.selector), Some(&hooks));
        if runloop::interrupted() {
            shared.stop_everything();
        }
        ctx.leave();
        shared.finished.fetch_add(1, Ordering::SeqCst);
        guard.counted = true;
        shared.bells[0].ring(STATE);
        ctx.wait_serving(Some(router.core()), || shared.exit.load(Ordering::SeqCst));
    }
    router.cleanup();
}

impl Running {
    /// Runs thread 0's loop (the others start with it) until every thread
    /// stopped.
    pub fn run(&self) {
        let sh = &self.shared;
        sh.go.store(GO_RUN, Ordering::SeqCst);
        sh.ring_all(STATE);
        let hooks = Hooks {
            ctx: self.ctx.clone(),
        };
        runloop::drive_with(&self.router, None, Some(&self.host.selector), Some(&hooks));
        if runloop::interrupted() {
            sh.stop_everything();
        }
        self.ctx.leave();
        sh.finished.fetch_add(1, Ordering::SeqCst);
        self.ctx.wait_serving(Some(self.router.core()), || {
            sh.finished.load(Ordering::SeqCst) >= sh.nthreads
        });
    }

    /// Thread 0's router: its handler calls reach every thread.
    pub fn router(&self) -> &Router {
        &self.router
    }

    /// Messages about threads that panicked.
    pub fn panics(&self) -> Vec<String> {
        self.shared
            .panics
            .lock()
            .map(|p| p.clone())
            .unwrap_or_default()
    }

    /// Lets the other threads clean up and exit, then cleans up here.
    pub fn finish(self) {
        // never run (-q): the other threads still wait for the go-ahead
        let _ =
            self.shared
                .go
                .compare_exchange(GO_WAIT, GO_ABORT, Ordering::SeqCst, Ordering::SeqCst);
        self.shared.exit.store(true, Ordering::SeqCst);
        self.shared.ring_all(STATE);
        for w in self.workers {
            let _ = w.join();
        }
        self.router.cleanup();
    }

    /// Drops on links (rings full), for the record.
    pub fn link_drops(&self) -> u64 {
        self.shared
            .links
            .iter()
            .map(|l| l.drops.load(Ordering::Relaxed))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::combine;

    fn v(xs: &[&str]) -> Vec<(usize, String)> {
        xs.iter()
            .enumerate()
            .map(|(i, s)| (i, s.to_string()))
            .collect()
    }

    #[test]
    fn copies_combine() {
        assert_eq!(combine("count", v(&["3", "4"])), "7");
        assert_eq!(combine("count", v(&["3", "3"])), "6");
        assert_eq!(combine("rate", v(&["1.5", "2"])), "3.5");
        assert_eq!(combine("highwater_length", v(&["3", "9"])), "9");
        assert_eq!(combine("capacity", v(&["1000", "1000"])), "1000");
        assert_eq!(
            combine("active", v(&["true", "false"])),
            "copy 0: true\ncopy 1: false\n"
        );
        assert_eq!(
            combine("table", v(&["a\nb\n", "c\n"])),
            "copy 0:\na\nb\ncopy 1:\nc\n"
        );
        // not numbers: the same in every copy, or one line per copy
        assert_eq!(combine("count", v(&["x", "x"])), "x");
    }
}
