//! The scheduler loop and the mailbox server.
//!
//! One loop pass: serve a new mailbox request if there is one (a single
//! cache-line compare), wake `FromVNIC` elements whose ring has frames, run
//! the router's scheduler pass (up to 128 task runs, then the due timers),
//! bump the heartbeat. The pass ends early when a request arrives: the
//! mailbox is looked at again after every task run. With
//! nothing scheduled the instance publishes `state = IDLE`, re-checks the
//! mailbox and rings (so a request or frame posted meanwhile is never
//! missed), and sleeps through [`Platform::idle`] until the next timer or a
//! wake-up.

use crate::vnic::VnicTable;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use click::prelude::*;
use clickos_ring::layout::{BootInfo, BOOTINFO_OFF, FLAG_FAULT_INJECTION};
use clickos_ring::mailbox::{state, GuestEnd, Mailbox, Op, Status};
use core::sync::atomic::{fence, Ordering};

/// What differs between isolation levels. Cheap to clone (the router's
/// clock and console hold copies).
pub trait Platform: Clone + 'static {
    /// Wall-clock time (the guest derives it from the TSC).
    fn now(&self) -> Timestamp;
    /// Sleeps until the host wakes the instance, `deadline` passes, or
    /// spuriously. The runtime has already published its state and
    /// re-checked the mailbox and rings, so no wake-up is lost.
    fn idle(&self, deadline: Option<Timestamp>);
    /// Tells the host a mailbox reply or a state change is ready (CTRL_DONE).
    fn notify_host(&self);
    /// Tells the host that vNIC `k`'s TX ring has frames it asked for (KICK).
    fn kick(&self, vnic: usize);
    /// Console output (error lines and the router's standard output).
    fn console(&self, text: &str);
    /// Whether the instance's memory is bounded, so that allocating until
    /// failure is safe (the `oom` fault).
    fn memory_limited(&self) -> bool;
    /// The router's call guard, on a platform that can catch panics (the
    /// process and thread levels, std and `panic=unwind`): a handler that
    /// panics is then a handler error. The micro-VM is `panic=abort` and
    /// has none; the handler value limit is its defence.
    fn call_guard(&self) -> Option<click::router::CallGuard> {
        None
    }
}

/// How long an instance polls its receive rings after traffic before it
/// sleeps.
pub const RX_SPIN_NS: i64 = 50_000;

/// The element registry inside an instance: the engine's elements,
/// SnortIDS (`click-ids`) and the vNIC elements.
pub fn registry() -> Registry {
    let mut r = Registry::with_builtin();
    click_ids::register(&mut r);
    crate::vnic::register(&mut r);
    r
}

struct PClock<P>(P);
impl<P: Platform> Clock for PClock<P> {
    fn now(&self) -> Timestamp {
        self.0.now()
    }
}

struct PConsole<P>(P);
impl<P: Platform> Console for PConsole<P> {
    fn error_line(&self, line: &str) {
        let mut l = String::with_capacity(line.len() + 1);
        l.push_str(line);
        l.push('\n');
        self.0.console(&l);
    }
    fn stdout(&self, text: &str) {
        self.0.console(text);
    }
}

/// Runs the instance whose control region starts at `control` until a STOP
/// request; returns the exit code.
///
/// # Safety
/// `control` must point to a mapped control region laid out as in
/// `clickos_ring::layout` (boot information already written), valid for
/// the duration of the call; vNIC regions named by the boot information
/// must be mapped at the addresses it gives.
pub unsafe fn run<P: Platform>(control: *mut u8, platform: P) -> u32 {
    // SAFETY: the caller guarantees the control region; BootInfo is read by
    // value once (the host cannot change our copy afterwards).
    let boot: BootInfo =
        unsafe { core::ptr::read_volatile(control.add(BOOTINFO_OFF as usize) as *const BootInfo) };
    if let Err(e) = boot.validate() {
        platform.console(&format!("clickos instance: {e}"));
        return 2;
    }
    // SAFETY: the caller guarantees the whole control region for the call.
    let mailbox = unsafe { GuestEnd::new(control) };
    // SAFETY: the vNIC regions are mapped where the boot information says
    // (the caller's guarantee); the table validates their geometry.
    let vnics = match unsafe { VnicTable::new(&boot, platform.clone()) } {
        Ok(t) => Rc::new(t),
        Err(e) => {
            platform.console(&format!("clickos instance: {e}"));
            return 2;
        }
    };
    let mut rt = Runtime {
        platform,
        mailbox,
        boot,
        registry: registry(),
        router: None,
        vnic_elems: Vec::new(),
        vnics,
        stopped_reported: false,
        spun_at: 0,
    };
    rt.main_loop()
}

/// The status a handler error is answered with: the engine's names and
/// the mailbox's are the same.
pub fn status_of(e: &HandlerError) -> Status {
    match e {
        HandlerError::NoSuchElement(_) => Status::NoSuchElement,
        HandlerError::NoSuchHandler(_) => Status::NoSuchHandler,
        HandlerError::PermissionDenied(_) => Status::PermissionDenied,
        HandlerError::Failed(_) => Status::Failed,
        HandlerError::Busy(_) => Status::Busy,
    }
}

struct Runtime<P: Platform> {
    platform: P,
    mailbox: GuestEnd,
    boot: BootInfo,
    registry: Registry,
    router: Option<Router>,
    /// Indices of the router's `FromVNIC` elements (woken when frames come).
    vnic_elems: Vec<usize>,
    vnics: Rc<VnicTable>,
    stopped_reported: bool,
    /// `frames_in` when the runtime last polled before sleeping.
    spun_at: u64,
}

enum Served {
    Continue,
    Exit(u32),
}

impl<P: Platform> Runtime<P> {
    #[inline]
    fn mb(&self) -> &Mailbox {
        self.mailbox.mailbox()
    }

    fn main_loop(&mut self) -> u32 {
        self.mb().state.store(state::EMPTY, Ordering::Release);
        let mut beat: u64 = 0;
        loop {
            if self.mailbox.pending() {
                if let Served::Exit(code) = self.serve() {
                    self.set_state(state::EXITED);
                    self.platform.notify_host();
                    return code;
                }
            }
            let run = match &self.router {
                None => RunState::Idle(None),
                Some(r) => {
                    if !self.vnic_elems.is_empty() && self.vnics.rx_pending() {
                        for &i in &self.vnic_elems {
                            r.schedule_task_of(i);
                        }
                    }
                    // A request posted meanwhile ends the pass after the
                    // task run under way (one shared-memory load per task
                    // run), so a busy instance answers within one task run,
                    // not a whole pass of up to 128.
                    let mailbox = &self.mailbox;
                    r.run_pass_until(|| mailbox.pending())
                }
            };
            match run {
                RunState::Busy => {
                    beat = beat.wrapping_add(1);
                    self.mb().heartbeat.store(beat, Ordering::Relaxed);
                }
                RunState::Idle(deadline) => self.sleep(deadline),
                RunState::Stopped => {
                    if !self.stopped_reported {
                        self.stopped_reported = true;
                        self.set_state(state::STOPPED);
                        self.platform.notify_host();
                    }
                    self.sleep(None);
                }
            }
        }
    }

    fn set_state(&self, s: u32) {
        self.mb().state.store(s, Ordering::Release);
    }

    /// The state to show while not sleeping.
    fn awake_state(&self) -> u32 {
        match &self.router {
            None => state::EMPTY,
            Some(r) if r.is_stopped() => state::STOPPED,
            Some(_) => state::RUNNING,
        }
    }

    fn sleep(&mut self, deadline: Option<Timestamp>) {
        if self.spin_before_sleep(deadline) {
            return;
        }
        let awake = self.awake_state();
        // A stopped or empty instance keeps saying so while it sleeps; the
        // host wakes any instance that is not RUNNING.
        let sleeping = if awake == state::RUNNING {
            state::IDLE
        } else {
            awake
        };
        self.mb().idle_deadline.store(
            deadline.map_or(0, |t| t.nsec().max(1) as u64),
            Ordering::Relaxed,
        );
        self.set_state(sleeping);
        fence(Ordering::SeqCst);
        let rx = !self.vnic_elems.is_empty() && self.vnics.arm_rx_wakeups();
        if !self.mailbox.pending() && !rx {
            self.platform.idle(deadline);
        }
        self.set_state(awake);
        if let Some(r) = &self.router {
            for &i in &self.vnic_elems {
                r.schedule_task_of(i);
            }
        }
    }

    /// After traffic, polls the receive rings for up to [`RX_SPIN_NS`]
    /// before sleeping: the reply to what was just forwarded usually comes
    /// back within tens of microseconds, and a wake-up from idle costs more
    /// than that (a VM exit, the host's scheduler). True when frames or a
    /// request arrived meanwhile (the caller does not sleep). Without
    /// traffic since the last sleep it returns at once, so an idle
    /// instance burns nothing.
    fn spin_before_sleep(&mut self, deadline: Option<Timestamp>) -> bool {
        let seen = self.vnics.frames_in();
        if seen == self.spun_at || self.vnic_elems.is_empty() || self.router.is_none() {
            return false;
        }
        self.spun_at = seen;
        let mut until = self.platform.now() + Timestamp::from_nsec(RX_SPIN_NS);
        if let Some(d) = deadline {
            until = until.min(d);
        }
        while self.platform.now() < until {
            if self.mailbox.pending() {
                return true;
            }
            if self.vnics.rx_pending() {
                if let Some(r) = &self.router {
                    for &i in &self.vnic_elems {
                        r.schedule_task_of(i);
                    }
                }
                return true;
            }
            core::hint::spin_loop();
        }
        false
    }

    /// Serves the pending request.
    fn serve(&mut self) -> Served {
        let req = match self.mailbox.take() {
            Ok(r) => r,
            Err(r) => {
                self.reply(
                    r.seq,
                    Status::BadRequest,
                    "request name or payload too long",
                );
                return Served::Continue;
            }
        };
        let Ok(name) = core::str::from_utf8(req.name()) else {
            self.reply(req.seq, Status::BadRequest, "handler name is not UTF-8");
            return Served::Continue;
        };
        let name = String::from(name);
        let mut payload = alloc::vec![0u8; req.data_len];
        self.mailbox.read_payload(&req, &mut payload);
        let text = String::from_utf8_lossy(&payload).into_owned();
        let Some(op) = Op::from_code(req.op) else {
            let msg = format!("unknown mailbox operation {}", req.op);
            self.reply(req.seq, Status::BadRequest, &msg);
            return Served::Continue;
        };
        match op {
            Op::Read => {
                let r = match &self.router {
                    None => return self.no_router(req.seq),
                    Some(r) if text.is_empty() => r.read_handler(&name),
                    Some(r) => r.read_handler_param(&name, &text),
                };
                match r {
                    Ok(v) => self.reply(req.seq, Status::Ok, &v),
                    Err(e) => self.reply_err(req.seq, &e),
                }
            }
            Op::Write => {
                let r = match &self.router {
                    None => return self.no_router(req.seq),
                    Some(r) => r.write_handler(&name, &text),
                };
                match r {
                    Ok(()) => self.reply(req.seq, Status::Ok, ""),
                    Err(e) => self.reply_err(req.seq, &e),
                }
            }
            Op::List => self.list(req.seq, &name),
            Op::Install => self.install(req.seq, &name, &text),
            Op::Stop => {
                if let Some(r) = self.router.take() {
                    r.stop();
                    r.cleanup();
                }
                self.reply(req.seq, Status::Ok, "");
                return Served::Exit(0);
            }
            Op::Fault => self.fault(req.seq, &text),
        }
        Served::Continue
    }

    fn no_router(&mut self, seq: u32) -> Served {
        self.reply(seq, Status::NoRouter, "no configuration installed");
        Served::Continue
    }

    fn reply_err(&mut self, seq: u32, e: &HandlerError) {
        self.reply(seq, status_of(e), &format!("{e}"));
    }

    fn reply(&mut self, seq: u32, status: Status, payload: &str) {
        if self.mailbox.reply(seq, status, payload.as_bytes()) {
            self.platform.notify_host();
        }
    }

    fn list(&mut self, seq: u32, name: &str) {
        let Some(r) = &self.router else {
            self.no_router(seq);
            return;
        };
        let mut out = String::new();
        if name.is_empty() {
            for n in r.element_names() {
                out.push_str(n);
                out.push('\n');
            }
        } else {
            let Some(i) = r.element_index(name) else {
                let e = HandlerError::NoSuchElement(name.into());
                self.reply_err(seq, &e);
                return;
            };
            for (h, mode) in r.core().element_handlers(i) {
                out.push_str(&h);
                out.push('\t');
                out.push_str(mode.flags());
                out.push('\n');
            }
        }
        self.reply(seq, Status::Ok, &out);
    }

    /// Installs `config` atomically: the running router is replaced only
    /// once the new one has been built and initialised.
    /// `file` names the configuration in error messages (`file:line: …`).
    fn install(&mut self, seq: u32, file: &str, config: &str) {
        let opts = RouterOptions {
            host: Some(self.vnics.clone() as Rc<dyn core::any::Any>),
            // elements of the same name take the running router's state
            hotswap: self.router.as_ref().map(|r| r.element_classes()),
            // no value larger than the mailbox's data area can leave the
            // instance, and an instance's memory is small (8 MiB by
            // default): values stop there (the micro-VM cannot unwind, so
            // these limits are what keeps a hostile READ from aborting it)
            max_handler_value: clickos_ring::layout::DATA_SIZE,
            call_guard: self.platform.call_guard(),
            ..Default::default()
        };
        let built = Router::from_config(
            config,
            if file.is_empty() { "config" } else { file },
            &[],
            &self.registry,
            Box::new(PClock(self.platform.clone())),
            Box::new(PConsole(self.platform.clone())),
            opts,
        );
        match built {
            Err(errors) => {
                let mut msg = errors.join("\n");
                msg.push_str("\nrouter could not be initialized");
                if self.router.is_some() {
                    msg.push_str("; the previous configuration keeps running");
                }
                self.reply(seq, Status::Config, &msg);
            }
            Ok(new) => {
                if let Some(old) = self.router.take() {
                    new.take_state_from(&old);
                    old.cleanup();
                }
                self.vnic_elems = crate::vnic::element_indices(&new);
                self.router = Some(new);
                self.stopped_reported = false;
                self.mb().generation.fetch_add(1, Ordering::Relaxed);
                self.set_state(self.awake_state());
                // The first scheduler pass belongs to the install: boot time
                // is measured to "configuration installed and first task run".
                if let Some(r) = &self.router {
                    r.run_pass();
                }
                let t = self.platform.now().nsec().max(1) as u64;
                self.mb().first_run.store(t, Ordering::Relaxed);
                self.set_state(self.awake_state());
                self.reply(seq, Status::Ok, "");
            }
        }
    }

    /// Fault injection (tests and benchmarks only).
    fn fault(&mut self, seq: u32, kind: &str) {
        if self.boot.flags & FLAG_FAULT_INJECTION == 0 {
            self.reply(
                seq,
                Status::PermissionDenied,
                "fault injection is not enabled for this instance",
            );
            return;
        }
        match kind.trim() {
            "panic" => panic!("injected fault: panic"),
            "spin" => {
                self.reply(seq, Status::Ok, "");
                self.set_state(state::RUNNING);
                loop {
                    core::hint::spin_loop();
                }
            }
            "oom" => {
                if !self.platform.memory_limited() {
                    self.reply(
                        seq,
                        Status::Failed,
                        "the oom fault needs a memory-limited isolation level",
                    );
                    return;
                }
                self.reply(seq, Status::Ok, "");
                let mut hog: Vec<Vec<u8>> = Vec::new();
                loop {
                    let mut v = Vec::with_capacity(1 << 20);
                    v.resize(1 << 20, 0xA5u8);
                    hog.push(v);
                    core::hint::black_box(&hog);
                }
            }
            "scribble-mailbox" => {
                let mb = self.mb();
                mb.status.store(0xDEAD_BEEF, Ordering::Relaxed);
                mb.resp_len.store(u32::MAX, Ordering::Relaxed);
                mb.state.store(0x7777, Ordering::Relaxed);
                mb.resp_seq
                    .store(seq.wrapping_add(0x1234_5678), Ordering::Release);
                self.mailbox.mark_served(seq);
                self.platform.notify_host();
            }
            "scribble-rings" => {
                self.vnics.scribble();
                self.reply(seq, Status::Ok, "");
                for k in 0..self.vnics.len() {
                    self.platform.kick(k);
                }
            }
            "bad-slot-lengths" => {
                self.vnics.scribble_slot_lengths();
                self.reply(seq, Status::Ok, "");
                for k in 0..self.vnics.len() {
                    self.platform.kick(k);
                }
            }
            other => self.reply(
                seq,
                Status::BadRequest,
                &format!(
                    "unknown fault '{other}' (panic, spin, oom, scribble-mailbox, scribble-rings, \
                     bad-slot-lengths)"
                ),
            ),
        }
    }
}
