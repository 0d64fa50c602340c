//! The host side of an instance: creation, the mailbox client, handler
//! calls, vNIC ports. The same code drives every isolation level.

use crate::backend::{Backend, ConsoleSink, Ended, Isolation, LaunchSpec, VnicSpec};
use crate::console::{ConsoleLimits, Gate};
use crate::error::{ConfigError, CreateError, HandlerError};
use crate::watchdog;
use clickos_ring::layout::{DATA_SIZE, MAILBOX_OFF};
use clickos_ring::mailbox::{state, Corruption, HostEnd, Mailbox, Op, PostError, Status, NAME_MAX};
use clickos_ring::ring::{Consumer, Dir, Producer, RingError};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long the host spins for the reply before it blocks. A running
/// guest looks at its mailbox after every task run, so on a CPU of its own
/// it answers within one task run (under a microsecond to a few). When it
/// has no CPU of its own (it shares the caller's: a loaded machine, or
/// fewer cores than busy threads) it cannot answer while the caller spins,
/// so the spin is short and the caller then blocks, letting it run; it
/// notifies (CTRL_DONE) when it replies, which costs ~30–40 µs on a
/// nested-KVM host.
const SPIN_RUNNING: Duration = Duration::from_micros(10);

/// The spin for an instance the host had to wake, once it is seen awake
/// (its vCPU thread running again, or its state back to RUNNING) within
/// [`SPIN_RUNNING`]: it then has a CPU, and waking a vCPU takes ~25–35 µs
/// on a nested-KVM host before the guest answers, so spinning that long
/// saves the notification. One that is not seen awake by then waits for
/// the caller's CPU, and the caller blocks.
const SPIN_WOKEN: Duration = Duration::from_micros(100);

/// How to create an instance.
#[derive(Clone)]
pub struct InstanceOptions {
    pub isolation: Isolation,
    /// Guest RAM (vm) or memory limit (process), bytes. Ignored by `none`.
    pub memory: u64,
    pub vnics: Vec<VnicSpec>,
    /// Allow [`Instance::fault`] (tests and benchmarks only).
    pub fault_injection: bool,
    /// The `clickos` binary for the process level (default: `$CLICKOS_EXE`,
    /// else this executable, which must then be `clickos`).
    pub helper_exe: Option<PathBuf>,
    /// Console output; default: standard error. Called on a process-wide
    /// console thread, never on the instance's: a sink that blocks only
    /// delays (and, past the buffer, drops) console output.
    pub console: Option<ConsoleSink>,
    /// The console's rate limit and buffer; text is stripped of control
    /// characters either way.
    pub console_limits: ConsoleLimits,
    /// A request unanswered this long, or a running instance whose
    /// heartbeat stands still this long, is killed.
    pub watchdog: Duration,
    /// How long the initial configuration may take to boot and install.
    pub boot_timeout: Duration,
    /// The configuration's name in error messages (`file:line: …`);
    /// empty = `config`.
    pub config_file: String,
}

impl Default for InstanceOptions {
    fn default() -> Self {
        InstanceOptions {
            isolation: Isolation::Process,
            memory: 8 << 20,
            vnics: Vec::new(),
            fault_injection: false,
            helper_exe: None,
            console: None,
            console_limits: ConsoleLimits::default(),
            watchdog: Duration::from_secs(2),
            boot_timeout: Duration::from_secs(5),
            config_file: String::new(),
        }
    }
}

impl Default for VnicSpec {
    fn default() -> Self {
        VnicSpec {
            slots: 256,
            buf_size: 2048,
            mac: [0x02, 0, 0, 0, 0, 1],
        }
    }
}

/// Starts a backend (a level's `launch`).
pub(crate) type Launcher<'a> =
    dyn Fn(&LaunchSpec, crate::backend::Prepare) -> Result<Box<dyn Backend>, String> + 'a;

/// What the instance reports about itself (`Mailbox::state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Booting,
    /// A router is running.
    Running,
    /// Waiting for work; costs no CPU.
    Idle,
    /// The router stopped; handlers can still be read.
    Stopped,
    /// No configuration installed.
    Empty,
    /// The instance left its main loop (after `stop`).
    Exited,
    /// The instance has ended (see [`Instance::ended`]).
    Ended,
}

/// The host's endpoints on one vNIC.
pub(crate) struct Port {
    /// Host → instance (the instance's RX ring).
    pub(crate) tx: Producer,
    /// Instance → host (the instance's TX ring).
    pub(crate) rx: Consumer,
}

pub(crate) struct Inner {
    pub(crate) id: u32,
    pub(crate) backend: Box<dyn Backend>,
    /// The host's end of the mailbox (it keeps the trusted copy of the
    /// last sequence number). Held during a whole request.
    client: Mutex<HostEnd>,
    /// Mirror of the client's sequence number for the watchdog.
    pub(crate) posted: AtomicU32,
    /// Why the host ended the instance when that is not a plain kill.
    end_override: Mutex<Option<Ended>>,
    /// `None` while a [`crate::VnicEndpoint`] holds the port.
    pub(crate) ports: Vec<Mutex<Option<Port>>>,
    pub(crate) watchdog: Duration,
    boot_timeout: Duration,
    /// Watchdog bookkeeping: the last heartbeat seen and when it moved.
    pub(crate) wd_heartbeat: AtomicU64,
    pub(crate) wd_since: Mutex<Instant>,
    /// The instance's console (flushed, within a deadline, when it is
    /// destroyed).
    console: Arc<Gate>,
}

/// How long destroying an instance waits for its queued console output to
/// reach the sink.
const CONSOLE_FLUSH: Duration = Duration::from_secs(1);

// The backend's raw pointers are only used through the checked accessors
// below; `Backend` itself is Send + Sync.

/// A running Click instance. Dropping it kills the instance if it still
/// runs.
pub struct Instance {
    inner: Arc<Inner>,
    isolation: Isolation,
    boot_time: Duration,
    vnic_count: usize,
}

/// A validated reply.
struct Reply {
    status: Status,
    payload: String,
}

fn fmt_dur(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.3} s", d.as_secs_f64())
    }
}

impl Inner {
    pub(crate) fn mailbox(&self) -> &Mailbox {
        // SAFETY: the backend maps the control region for its whole life,
        // and the mailbox page lies inside it.
        unsafe { &*(self.backend.control().add(MAILBOX_OFF as usize) as *const Mailbox) }
    }

    pub(crate) fn ended(&self) -> Option<Ended> {
        let o = self
            .end_override
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        o.or_else(|| self.backend.ended())
    }

    /// Ends the instance because it broke the protocol.
    pub(crate) fn crash(&self, why: String) {
        if self.backend.ended().is_some() {
            return;
        }
        {
            let mut o = self.end_override.lock().unwrap_or_else(|e| e.into_inner());
            if o.is_none() {
                *o = Some(Ended::Crashed(why.clone()));
            }
        }
        self.backend.kill(&why);
    }

    pub(crate) fn kill(&self, why: String) {
        self.backend.kill(&why);
    }

    fn ended_err(&self) -> HandlerError {
        HandlerError::Ended(
            self.ended()
                .unwrap_or_else(|| Ended::Crashed("ended".into())),
        )
    }

    /// Ends the instance for a corrupted mailbox; the error to return.
    fn corrupted(&self, c: Corruption) -> HandlerError {
        self.crash(c.to_string());
        self.ended_err()
    }

    /// One request/reply exchange.
    fn request(&self, o: Op, name: &str, data: &[u8]) -> Result<Reply, HandlerError> {
        let local = |e: PostError| match e {
            PostError::NameTooLong => {
                HandlerError::BadRequest(format!("name longer than {NAME_MAX} bytes"))
            }
            PostError::TooLarge => HandlerError::TooLarge,
            PostError::Corrupt(c) => self.corrupted(c),
        };
        HostEnd::check(name.as_bytes(), data).map_err(local)?;
        let mut host = self.client.lock().unwrap_or_else(|e| e.into_inner());
        if self.ended().is_some() {
            return Err(self.ended_err());
        }
        let next = host.next_seq().map_err(|c| self.corrupted(c))?;
        // The watchdog's mirror moves first: it must never see a reply
        // ahead of the request it answers.
        self.posted.store(next, Ordering::SeqCst);
        let posted = host.post(o, name.as_bytes(), data).map_err(local)?;
        if posted.wake {
            self.backend.wake();
        }
        let timeout = if o == Op::Install {
            self.watchdog.max(self.boot_timeout)
        } else {
            self.watchdog
        };
        self.wait_reply(&host, o, name, timeout, posted.wake)
    }

    /// Waits for the reply to the request `host` last posted and validates
    /// it: spins for up to [`SPIN_RUNNING`], or [`SPIN_WOKEN`] once an
    /// instance that had to be woken (`woken`) is seen awake, then blocks
    /// until the instance notifies.
    fn wait_reply(
        &self,
        host: &HostEnd,
        o: Op,
        name: &str,
        timeout: Duration,
        woken: bool,
    ) -> Result<Reply, HandlerError> {
        let t0 = Instant::now();
        let mut answered = false;
        let mut spin = SPIN_RUNNING;
        let mut asleep = woken;
        loop {
            if host.replied().map_err(|c| self.corrupted(c))? {
                answered = true;
                break;
            }
            if asleep {
                asleep = match self.backend.asleep() {
                    Some(a) => a,
                    None => self.raw_state() != state::RUNNING,
                };
                if !asleep {
                    spin = SPIN_WOKEN;
                }
            }
            if t0.elapsed() >= spin {
                break;
            }
            std::hint::spin_loop();
        }
        if !answered {
            self.block_for_reply(host, o, name, timeout, t0)?;
        }
        let reply = host.reply().map_err(|c| self.corrupted(c))?;
        let mut buf = vec![0u8; reply.len];
        host.read_data(&mut buf);
        Ok(Reply {
            status: reply.status,
            payload: String::from_utf8_lossy(&buf).into_owned(),
        })
    }

    /// The slow path of [`wait_reply`](Self::wait_reply): announce that we
    /// block, then sleep on the backend's notification in short slices.
    fn block_for_reply(
        &self,
        host: &HostEnd,
        o: Op,
        name: &str,
        timeout: Duration,
        t0: Instant,
    ) -> Result<(), HandlerError> {
        loop {
            host.announce_wait();
            if host.replied().map_err(|c| self.corrupted(c))? {
                return Ok(());
            }
            if self.ended().is_some() {
                return Err(self.ended_err());
            }
            let waited = t0.elapsed();
            if waited >= timeout {
                let what = if name.is_empty() {
                    o.name().to_string()
                } else {
                    format!("{} {name}", o.name())
                };
                self.kill(format!(
                    "unresponsive: no reply to {what} within {}",
                    fmt_dur(timeout)
                ));
                return Err(self.ended_err());
            }
            self.backend
                .wait_notify((timeout - waited).min(Duration::from_millis(20)));
        }
    }

    fn call(&self, o: Op, name: &str, data: &[u8]) -> Result<String, HandlerError> {
        let r = self.request(o, name, data)?;
        HandlerError::from_reply(r.status, r.payload, name)
    }

    pub(crate) fn raw_state(&self) -> u32 {
        self.mailbox().state.load(Ordering::Acquire)
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if self.backend.ended().is_none() {
            self.backend.kill("destroyed");
        }
        self.console.close(CONSOLE_FLUSH);
    }
}

fn default_console() -> ConsoleSink {
    Arc::new(|_id, text: &str| {
        use std::io::Write;
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    })
}

impl Instance {
    /// Starts an instance at `opts.isolation` with `config_text` installed.
    /// Returns once the configuration is installed and its first scheduler
    /// pass ran.
    pub fn create(
        id: u32,
        config_text: &str,
        opts: &InstanceOptions,
    ) -> Result<Instance, CreateError> {
        Self::create_on(id, config_text, opts, &|spec, prepare| {
            crate::launch_backend(opts.isolation, spec, prepare)
        })
    }

    /// As [`create`](Self::create), with the backend started by `launch`.
    pub(crate) fn create_on(
        id: u32,
        config_text: &str,
        opts: &InstanceOptions,
        launch: &Launcher<'_>,
    ) -> Result<Instance, CreateError> {
        let t0 = Instant::now();
        let cfg = config_text.as_bytes();
        let file = opts.config_file.as_bytes();
        if file.len() > NAME_MAX {
            return Err(CreateError::Launch(format!(
                "configuration file name longer than {NAME_MAX} bytes"
            )));
        }
        if cfg.len() > DATA_SIZE {
            return Err(CreateError::Config(ConfigError::Invalid(vec![format!(
                "configuration too large ({} bytes, at most {DATA_SIZE})",
                cfg.len()
            )])));
        }
        let console = Gate::new(
            id,
            opts.console.clone().unwrap_or_else(default_console),
            opts.console_limits,
        );
        let spec = LaunchSpec {
            id,
            memory: opts.memory,
            vnics: opts.vnics.clone(),
            fault_injection: opts.fault_injection,
            helper_exe: opts.helper_exe.clone(),
            console: console.sink(),
        };
        let mut host = None;
        let mut prepare = |control: *mut u8| {
            // SAFETY: the backend hands us its whole control region, mapped
            // for its whole life, with the mailbox reset, before the
            // instance runs.
            let mut h = unsafe { HostEnd::new(control) };
            // The sizes were checked above and no request is outstanding.
            let _ = h.post(Op::Install, file, cfg);
            host = Some(h);
        };
        let backend = match launch(&spec, &mut prepare) {
            Ok(b) => b,
            Err(e) => {
                console.close(CONSOLE_FLUSH);
                return Err(CreateError::Launch(e));
            }
        };
        let host = host
            .filter(|h| h.seq() == 1)
            .ok_or_else(|| CreateError::Launch("the backend did not prepare the mailbox".into()))?;
        let ports = (0..opts.vnics.len())
            .map(|k| {
                let (base, info) = backend
                    .vnic(k)
                    .ok_or_else(|| CreateError::Launch(format!("vNIC {k} missing")))?;
                // SAFETY: the backend maps the region for its whole life with
                // the geometry it reports; the host is the only producer of
                // the RX ring and the only consumer of the TX ring.
                let port = unsafe {
                    Port {
                        tx: Producer::new(base, &info, Dir::Rx),
                        rx: Consumer::new(base, &info, Dir::Tx),
                    }
                };
                Ok(Mutex::new(Some(port)))
            })
            .collect::<Result<Vec<_>, CreateError>>()?;
        let inner = Arc::new(Inner {
            id,
            backend,
            client: Mutex::new(host),
            posted: AtomicU32::new(1),
            end_override: Mutex::new(None),
            ports,
            watchdog: opts.watchdog,
            boot_timeout: opts.boot_timeout,
            wd_heartbeat: AtomicU64::new(0),
            wd_since: Mutex::new(Instant::now()),
            console,
        });
        let reply = {
            let host = inner.client.lock().unwrap_or_else(|e| e.into_inner());
            inner.wait_reply(&host, Op::Install, "", opts.boot_timeout, true)
        };
        let reply = match reply {
            Ok(r) => r,
            Err(e) => {
                inner.kill("boot failed".into());
                return Err(CreateError::Instance(e));
            }
        };
        match reply.status {
            Status::Ok => {}
            Status::Config | Status::Failed => {
                inner.kill("configuration rejected".into());
                let lines: Vec<String> = reply
                    .payload
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(str::to_string)
                    .collect();
                return Err(CreateError::Config(ConfigError::Invalid(lines)));
            }
            s => {
                inner.kill("configuration rejected".into());
                return Err(CreateError::Instance(HandlerError::BadRequest(format!(
                    "INSTALL answered with status {}: {}",
                    s.code(),
                    reply.payload.trim_end()
                ))));
            }
        }
        let boot_time = t0.elapsed();
        watchdog::register(&inner);
        Ok(Instance {
            inner,
            isolation: opts.isolation,
            boot_time,
            vnic_count: opts.vnics.len(),
        })
    }

    /// Resumes an instance from a snapshot file's bytes (taken by
    /// [`suspend`](Self::suspend) or [`snapshot`](Self::snapshot), here or
    /// in another process or host): the configuration and every element's
    /// state (counters, queues, NAT mappings, ARP tables) are as they were,
    /// and it runs on from there. `opts.isolation` must be `vm`; memory and
    /// vNICs are the snapshot's (`opts.memory` and `opts.vnics` are
    /// ignored). Returns the instance and the note given to `suspend`. A
    /// damaged, truncated or foreign file is refused before anything is
    /// created.
    pub fn resume(
        id: u32,
        snapshot: &[u8],
        opts: &InstanceOptions,
    ) -> Result<(Instance, Vec<u8>), CreateError> {
        Self::prepare_resume(id, snapshot, opts)?.finish(None)
    }

    /// The first half of [`resume`](Self::resume): checks `snapshot` (a
    /// whole snapshot, or the first part of a live migration from
    /// [`precopy`](Self::precopy)) and builds the micro-VM with its memory
    /// written, not yet running. [`PreparedResume::finish`] starts it.
    pub fn prepare_resume(
        id: u32,
        snapshot: &[u8],
        opts: &InstanceOptions,
    ) -> Result<PreparedResume, CreateError> {
        let t0 = Instant::now();
        if opts.isolation != Isolation::Vm {
            return Err(CreateError::Launch(format!(
                "resume needs --isolation vm (asked for {})",
                opts.isolation
            )));
        }
        let snap = clickos_vmm::snapshot::parse(snapshot).map_err(CreateError::Launch)?;
        let vnics: Vec<VnicSpec> = snap
            .vnics()
            .into_iter()
            .map(|(slots, buf_size, mac)| VnicSpec {
                slots,
                buf_size,
                mac,
            })
            .collect();
        let console = Gate::new(
            id,
            opts.console.clone().unwrap_or_else(default_console),
            opts.console_limits,
        );
        let spec = LaunchSpec {
            id,
            memory: snap.memory(),
            vnics: vnics.clone(),
            fault_injection: false,
            helper_exe: None,
            console: console.sink(),
        };
        let vm = match crate::vm::prepare_restore(&snap, &spec) {
            Ok(v) => v,
            Err(e) => {
                console.close(CONSOLE_FLUSH);
                return Err(CreateError::Launch(e));
            }
        };
        Ok(PreparedResume {
            id,
            vm: Some(vm),
            vnics,
            console,
            watchdog: opts.watchdog,
            boot_timeout: opts.boot_timeout,
            note: snap.note().to_vec(),
            prepared: t0.elapsed(),
        })
    }

    fn resumed(
        p: &PreparedResume,
        backend: Box<dyn crate::Backend>,
        t0: Instant,
    ) -> Result<Instance, CreateError> {
        let (id, vnics, console) = (p.id, p.vnics.len(), p.console.clone());
        let (watchdog, boot_timeout, before) = (p.watchdog, p.boot_timeout, p.prepared);
        // SAFETY: the backend maps its whole control region for its life.
        let host = unsafe { HostEnd::new(backend.control()) };
        if host.next_seq().is_err() {
            backend.kill("bad snapshot");
            console.close(CONSOLE_FLUSH);
            return Err(CreateError::Launch(
                "the snapshot was taken in the middle of a request".into(),
            ));
        }
        let ports = (0..vnics)
            .map(|k| {
                let (base, info) = backend
                    .vnic(k)
                    .ok_or_else(|| CreateError::Launch(format!("vNIC {k} missing")))?;
                // SAFETY: as in `create_on`; the rings continue from the
                // indices their shared headers show.
                let port = unsafe {
                    Port {
                        tx: Producer::resume(base, &info, Dir::Rx),
                        rx: Consumer::resume(base, &info, Dir::Tx),
                    }
                };
                Ok(Mutex::new(Some(port)))
            })
            .collect::<Result<Vec<_>, CreateError>>()?;
        let seq = host.seq();
        let inner = Arc::new(Inner {
            id,
            backend,
            client: Mutex::new(host),
            posted: AtomicU32::new(seq),
            end_override: Mutex::new(None),
            ports,
            watchdog,
            boot_timeout,
            wd_heartbeat: AtomicU64::new(0),
            wd_since: Mutex::new(Instant::now()),
            console,
        });
        watchdog::register(&inner);
        Ok(Instance {
            inner,
            isolation: Isolation::Vm,
            boot_time: before + t0.elapsed(),
            vnic_count: vnics,
        })
    }

    /// The first part of a live migration, taken while the instance runs:
    /// its memory as read now, with `note` (see `clickos_vmm::Vm::precopy`).
    /// [`migrate_pause`](Self::migrate_pause) then pauses it and returns
    /// the second part; [`PreparedResume::finish`] on the other side takes
    /// both. Only the `vm` level can.
    pub fn precopy(&self, note: &[u8]) -> Result<Vec<u8>, String> {
        if self.isolation != Isolation::Vm {
            return Err(format!(
                "suspend needs --isolation vm (this instance runs at {})",
                self.isolation
            ));
        }
        if let Some(e) = self.inner.ended() {
            return Err(format!("the instance has ended ({e})"));
        }
        self.inner.backend.precopy(note)
    }

    /// The second part of a live migration: pauses the instance between
    /// requests and returns its registers, `note` and the pages changed
    /// since [`precopy`](Self::precopy). It stays paused: end it with
    /// [`migrate_end`](Self::migrate_end). On failure it runs on. Stop the
    /// host's vNIC endpoints first, as for [`suspend`](Self::suspend).
    pub fn migrate_pause(&self, note: &[u8]) -> Result<Vec<u8>, String> {
        let r = {
            let host = self.inner.client.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(e) = self.inner.ended() {
                Err(format!("the instance has ended ({e})"))
            } else if host.next_seq().is_err() {
                Err("a request is still unanswered".to_string())
            } else {
                self.inner.backend.snapshot_delta(note)
            }
        };
        if r.is_err() {
            self.migrate_end(false);
        }
        r
    }

    /// Ends a migration: `moved` ends the instance (`Killed("migrated")`),
    /// else it runs on from where it was paused.
    pub fn migrate_end(&self, moved: bool) {
        self.inner.backend.end_precopy();
        if moved {
            self.inner.kill("migrated".into());
            return;
        }
        self.inner.backend.unpause();
        *self
            .inner
            .wd_since
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    /// Pauses the instance between requests and snapshots it (with
    /// `note`), leaving it paused; the client lock is held meanwhile so no
    /// request is in flight.
    fn pause_and_snapshot(&self, note: &[u8]) -> Result<Vec<u8>, String> {
        if self.isolation != Isolation::Vm {
            return Err(format!(
                "suspend needs --isolation vm (this instance runs at {})",
                self.isolation
            ));
        }
        let host = self.inner.client.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = self.inner.ended() {
            return Err(format!("the instance has ended ({e})"));
        }
        host.next_seq()
            .map_err(|_| "a request is still unanswered".to_string())?;
        self.inner.backend.snapshot(note)
    }

    /// A snapshot of the running instance (see [`resume`](Self::resume));
    /// it runs on afterwards.
    pub fn snapshot(&self, note: &[u8]) -> Result<Vec<u8>, String> {
        let r = self.pause_and_snapshot(note);
        self.inner.backend.unpause();
        *self
            .inner
            .wd_since
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Instant::now();
        r
    }

    /// Suspends the instance: pauses it, snapshots it (with `note`, given
    /// back by [`resume`](Self::resume)) and ends it (`Killed("suspended")`).
    /// The host's vNIC endpoints should be stopped first, or frames they
    /// move meanwhile may be lost or seen twice. On failure the instance
    /// runs on and the error says why.
    pub fn suspend(&self, note: &[u8]) -> Result<Vec<u8>, String> {
        match self.pause_and_snapshot(note) {
            Ok(b) => {
                self.inner.kill("suspended".into());
                Ok(b)
            }
            Err(e) => {
                self.inner.backend.unpause();
                *self
                    .inner
                    .wd_since
                    .lock()
                    .unwrap_or_else(|e| e.into_inner()) = Instant::now();
                Err(e)
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn control_for_tests(&self) -> *mut u8 {
        self.inner.backend.control()
    }

    #[cfg(test)]
    pub(crate) fn inner_backend_vnic_for_tests(
        &self,
        k: usize,
    ) -> (*mut u8, clickos_ring::VnicInfo) {
        self.inner.backend.vnic(k).expect("the vNIC")
    }

    pub fn id(&self) -> u32 {
        self.inner.id
    }
    pub fn isolation(&self) -> Isolation {
        self.isolation
    }

    /// From the `create` call to the reply to the initial install.
    pub fn boot_time(&self) -> Duration {
        self.boot_time
    }

    /// The backend's start-up phases.
    pub fn phases(&self) -> Vec<(&'static str, Duration)> {
        self.inner.backend.phases()
    }

    /// Host memory attributable to the instance, if the level knows.
    pub fn memory_footprint(&self) -> Option<u64> {
        if self.inner.ended().is_some() {
            return None;
        }
        self.inner.backend.memory_footprint()
    }

    /// Reads handler `name` ("element.handler", compound names allowed).
    pub fn read(&self, name: &str) -> Result<String, HandlerError> {
        self.inner.call(Op::Read, name, b"")
    }

    /// Reads handler `name` with a parameter.
    pub fn read_param(&self, name: &str, param: &str) -> Result<String, HandlerError> {
        self.inner.call(Op::Read, name, param.as_bytes())
    }

    /// Writes `value` to handler `name`.
    pub fn write(&self, name: &str, value: &str) -> Result<(), HandlerError> {
        self.inner
            .call(Op::Write, name, value.as_bytes())
            .map(|_| ())
    }

    /// The elements of the installed configuration.
    pub fn list(&self) -> Result<Vec<String>, HandlerError> {
        let s = self.inner.call(Op::List, "", b"")?;
        Ok(split_list(&s))
    }

    /// The handlers of `element`: (name, flags), flags as Click prints
    /// them (`r`, `w`, `rw`, …).
    pub fn handlers(&self, element: &str) -> Result<Vec<(String, String)>, HandlerError> {
        if element.is_empty() {
            return Err(HandlerError::BadRequest("empty element name".into()));
        }
        let s = self.inner.call(Op::List, element, b"")?;
        Ok(split_list(&s)
            .into_iter()
            .map(|l| match l.split_once('\t') {
                Some((n, f)) => (n.trim().to_string(), f.trim().to_string()),
                None => (l, String::new()),
            })
            .collect())
    }

    /// Replaces the configuration atomically: on error the old one keeps
    /// running and the error says why.
    pub fn install(&self, config: &str) -> Result<(), ConfigError> {
        self.install_as(config, "")
    }

    /// As [`install`](Self::install), naming the configuration `file` in
    /// error messages (`file:line: …`; empty = `config`).
    pub fn install_as(&self, config: &str, file: &str) -> Result<(), ConfigError> {
        self.inner
            .call(Op::Install, file, config.as_bytes())
            .map(|_| ())
            .map_err(ConfigError::from)
    }

    /// Stops the instance cleanly; returns how it ended (normally
    /// `Exited(0)`).
    pub fn stop(&self) -> Result<Ended, HandlerError> {
        match self.inner.call(Op::Stop, "", b"") {
            Ok(_) => {}
            // The instance may exit before we see the reply.
            Err(HandlerError::Ended(e)) => return Ok(e),
            Err(e) => return Err(e),
        }
        let t0 = Instant::now();
        loop {
            if let Some(e) = self.inner.ended() {
                return Ok(e);
            }
            if t0.elapsed() > self.inner.watchdog {
                self.inner.kill(format!(
                    "did not exit within {} of STOP",
                    fmt_dur(self.inner.watchdog)
                ));
                return Ok(self
                    .inner
                    .ended()
                    .unwrap_or(Ended::Killed("did not exit".into())));
            }
            self.inner.backend.wait_notify(Duration::from_millis(10));
        }
    }

    /// Waits until the router stopped by itself (state STOPPED).
    pub fn wait_stopped(&self, timeout: Duration) -> Result<(), HandlerError> {
        let t0 = Instant::now();
        loop {
            if self.inner.ended().is_some() {
                return Err(self.inner.ended_err());
            }
            match self.state() {
                State::Stopped | State::Exited => return Ok(()),
                State::Ended => return Err(self.inner.ended_err()),
                _ => {}
            }
            let waited = t0.elapsed();
            if waited >= timeout {
                return Err(HandlerError::Timeout(format!(
                    "router still {:?} after {}",
                    self.state(),
                    fmt_dur(timeout)
                )));
            }
            self.inner
                .backend
                .wait_notify((timeout - waited).min(Duration::from_millis(10)));
        }
    }

    /// What the instance reports (validated: garbage kills it).
    pub fn state(&self) -> State {
        if self.inner.ended().is_some() {
            return State::Ended;
        }
        match self.inner.raw_state() {
            state::BOOTING => State::Booting,
            state::RUNNING => State::Running,
            state::IDLE => State::Idle,
            state::STOPPED => State::Stopped,
            state::EMPTY => State::Empty,
            state::EXITED => State::Exited,
            s => {
                self.inner.crash(Corruption::State(s).to_string());
                State::Ended
            }
        }
    }

    /// How the instance ended, once it has.
    pub fn ended(&self) -> Option<Ended> {
        self.inner.ended()
    }

    /// Kills the instance if it still runs; returns how it ended.
    pub fn destroy(self) -> Ended {
        self.inner.kill("destroyed".into());
        self.inner
            .ended()
            .unwrap_or_else(|| Ended::Killed("destroyed".into()))
    }

    /// Fault injection (needs `fault_injection`): `panic`, `spin`, `oom`,
    /// `scribble-mailbox`, `scribble-rings`, `bad-slot-lengths` (a full TX
    /// ring of slots whose lengths exceed the buffer). Usually the reply never comes
    /// and the error says how the instance ended.
    pub fn fault(&self, kind: &str) -> Result<String, HandlerError> {
        self.inner.call(Op::Fault, "", kind.as_bytes())
    }

    /// The host's port on vNIC `k`.
    pub fn vnic(&self, k: usize) -> Option<VnicPort> {
        (k < self.vnic_count).then(|| VnicPort {
            inner: self.inner.clone(),
            k,
        })
    }

    /// Takes vNIC `k`'s rings for exclusive, lock-free use (a switch
    /// port): see [`crate::VnicEndpoint`]. Fails when `k` is out of range
    /// or another endpoint holds it; [`VnicPort`] calls on the vNIC find
    /// nothing until the endpoint is dropped.
    pub fn vnic_endpoint(&self, k: usize) -> Result<crate::VnicEndpoint, String> {
        crate::endpoint::VnicEndpoint::take(&self.inner, k, self.vnic_count)
    }

    /// Number of vNICs.
    pub fn vnic_count(&self) -> usize {
        self.vnic_count
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if self.inner.ended().is_none() {
            self.inner.kill("destroyed".into());
        }
        self.inner.console.close(CONSOLE_FLUSH);
    }
}

fn split_list(s: &str) -> Vec<String> {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// The host's end of one vNIC: frames sent here arrive on the instance's
/// `FromVNIC(k)`; frames its `ToVNIC(k)` emits are received here.
#[derive(Clone)]
pub struct VnicPort {
    inner: Arc<Inner>,
    k: usize,
}

impl VnicPort {
    fn port(&self) -> std::sync::MutexGuard<'_, Option<Port>> {
        self.inner.ports[self.k]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    fn corrupt(&self, e: RingError) {
        let RingError::Corrupt(what) = e;
        self.inner
            .crash(format!("corrupted ring: vNIC {}: {what}", self.k));
    }

    /// Queues one frame (visible to the instance after [`flush`](Self::flush)).
    /// False when the ring is full, the frame too long, or the instance ended.
    pub fn send(&self, frame: &[u8]) -> bool {
        if self.inner.ended().is_some() {
            return false;
        }
        let r = match self.port().as_mut() {
            Some(p) => p.tx.push(frame),
            None => return false,
        };
        match r {
            Ok(b) => b,
            Err(e) => {
                self.corrupt(e);
                false
            }
        }
    }

    /// Publishes queued frames, waking the instance if it asked.
    pub fn flush(&self) {
        let kick = self.port().as_mut().is_some_and(|p| p.tx.flush());
        if kick {
            self.inner.backend.wake();
        }
    }

    /// Sends and flushes one frame.
    pub fn send_now(&self, frame: &[u8]) -> bool {
        let ok = self.send(frame);
        self.flush();
        ok
    }

    /// The next frame from the instance, if one is ready. One slot per
    /// call: a malformed slot is corruption (the instance is crashed and
    /// reported), never skipped in a loop the instance could keep busy.
    pub fn recv(&self) -> Option<Vec<u8>> {
        if self.inner.ended().is_some() {
            return None;
        }
        let mut g = self.port();
        let p = g.as_mut()?;
        let mut out = None;
        match p.rx.pop(|d| out = Some(d.to_vec())) {
            Ok(true) => {
                if p.rx.release() {
                    self.inner.backend.wake();
                }
                out
            }
            Ok(false) => None,
            Err(e) => {
                drop(g);
                self.corrupt(e);
                None
            }
        }
    }

    /// Waits up to `timeout` for the next frame.
    pub fn recv_timeout(&self, timeout: Duration) -> Option<Vec<u8>> {
        let t0 = Instant::now();
        loop {
            if let Some(f) = self.recv() {
                return Some(f);
            }
            if self.inner.ended().is_some() {
                return None;
            }
            let waited = t0.elapsed();
            if waited >= timeout {
                return None;
            }
            let r = match self.port().as_mut() {
                Some(p) => p.rx.prepare_to_sleep(),
                None => return None,
            };
            match r {
                Ok(true) => self
                    .inner
                    .backend
                    .wait_vnic(self.k, (timeout - waited).min(Duration::from_millis(20))),
                Ok(false) => {}
                Err(e) => {
                    self.corrupt(e);
                    return None;
                }
            }
        }
    }

    /// Frames the host could not queue because the ring was full.
    pub fn full_drops(&self) -> u64 {
        self.port().as_ref().map_or(0, |p| p.tx.full_drops)
    }
}

/// A resumed instance's micro-VM, built (memory written) but not yet
/// running: [`Instance::prepare_resume`].
pub struct PreparedResume {
    id: u32,
    vm: Option<clickos_vmm::PreparedVm>,
    vnics: Vec<VnicSpec>,
    console: Arc<Gate>,
    watchdog: Duration,
    boot_timeout: Duration,
    note: Vec<u8>,
    prepared: Duration,
}

impl PreparedResume {
    /// The note of the snapshot (or of the migration's first part).
    pub fn note(&self) -> &[u8] {
        &self.note
    }

    /// The number of vNICs.
    pub fn vnic_count(&self) -> usize {
        self.vnics.len()
    }

    /// How long [`Instance::prepare_resume`] took.
    pub fn prepared_in(&self) -> Duration {
        self.prepared
    }

    /// Starts it: a whole snapshot as it was, or a migration's first part
    /// with `delta`, its second part (the note returned is the delta's).
    /// Returns the instance and the note.
    pub fn finish(mut self, delta: Option<&[u8]>) -> Result<(Instance, Vec<u8>), CreateError> {
        let t0 = Instant::now();
        let delta = delta
            .map(clickos_vmm::snapshot::parse)
            .transpose()
            .map_err(CreateError::Launch)?;
        let vm = self.vm.take().expect("finished once");
        let backend = match crate::vm::start_prepared(vm, delta.as_ref()) {
            Ok(b) => b,
            Err(e) => {
                self.console.close(CONSOLE_FLUSH);
                return Err(CreateError::Launch(e));
            }
        };
        let note = match &delta {
            Some(d) => d.note().to_vec(),
            None => std::mem::take(&mut self.note),
        };
        let inst = Instance::resumed(&self, backend, t0)?;
        Ok((inst, note))
    }
}

impl Drop for PreparedResume {
    fn drop(&mut self) {
        if self.vm.is_some() {
            self.console.close(CONSOLE_FLUSH);
        }
    }
}
