//! The host side of an instance: creation, the mailbox client, handler
//! calls, vNIC ports. The same code drives every isolation level.

use crate::backend::{Backend, ConsoleSink, Ended, Isolation, LaunchSpec, VnicSpec};
use crate::error::{ConfigError, CreateError, HandlerError};
use crate::watchdog;
use clickos_ring::layout::{self, DATA_OFF, DATA_SIZE};
use clickos_ring::mailbox::{op, state, status, Mailbox, NAME_MAX};
use clickos_ring::ring::{Consumer, Dir, Producer, RingError};
use std::path::PathBuf;
use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
    /// Console output; default: standard error.
    pub console: Option<ConsoleSink>,
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
struct Port {
    /// Host → instance (the instance's RX ring).
    tx: Producer,
    /// Instance → host (the instance's TX ring).
    rx: Consumer,
}

pub(crate) struct Inner {
    pub(crate) id: u32,
    pub(crate) backend: Box<dyn Backend>,
    /// The last request sequence number posted (trusted copy; the mailbox's
    /// own `req_seq` is never read back). Held during a whole request.
    client: Mutex<u32>,
    /// Mirror of the client's sequence number for the watchdog.
    pub(crate) posted: AtomicU32,
    /// Why the host ended the instance when that is not a plain kill.
    end_override: Mutex<Option<Ended>>,
    ports: Vec<Mutex<Port>>,
    pub(crate) watchdog: Duration,
    boot_timeout: Duration,
    /// Watchdog bookkeeping: the last heartbeat seen and when it moved.
    pub(crate) wd_heartbeat: AtomicU64,
    pub(crate) wd_since: Mutex<Instant>,
}

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

/// A parsed reply.
struct Reply {
    status: u32,
    payload: String,
}

fn op_name(o: u32) -> &'static str {
    match o {
        op::READ => "READ",
        op::WRITE => "WRITE",
        op::LIST => "LIST",
        op::INSTALL => "INSTALL",
        op::STOP => "STOP",
        op::FAULT => "FAULT",
        _ => "request",
    }
}

fn fmt_dur(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.3} s", d.as_secs_f64())
    }
}

/// Writes a request's name and payload and publishes `seq`.
///
/// # Safety
/// `control` must map a whole control region.
unsafe fn post(control: *mut u8, seq: u32, o: u32, name: &[u8], data: &[u8]) {
    debug_assert!(name.len() <= NAME_MAX && data.len() <= DATA_SIZE);
    // SAFETY: the caller guarantees the region; name and data were checked
    // against the field and area sizes.
    unsafe {
        let mb = &*(control.add(layout::MAILBOX_OFF as usize) as *const Mailbox);
        let name_dst = std::ptr::addr_of!(mb.name) as *mut u8;
        std::ptr::copy_nonoverlapping(name.as_ptr(), name_dst, name.len());
        std::ptr::copy_nonoverlapping(data.as_ptr(), control.add(DATA_OFF as usize), data.len());
        mb.op.store(o, Ordering::Relaxed);
        mb.name_len.store(name.len() as u32, Ordering::Relaxed);
        mb.data_len.store(data.len() as u32, Ordering::Relaxed);
        mb.host_waiting.store(0, Ordering::Relaxed);
        mb.req_seq.store(seq, Ordering::Release);
    }
}

impl Inner {
    pub(crate) fn mailbox(&self) -> &Mailbox {
        // SAFETY: the backend maps the control region for its whole life,
        // and the mailbox page lies inside it.
        unsafe { &*(self.backend.control().add(layout::MAILBOX_OFF as usize) as *const Mailbox) }
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

    /// One request/reply exchange.
    fn request(&self, o: u32, name: &str, data: &[u8]) -> Result<Reply, HandlerError> {
        if name.len() > NAME_MAX {
            return Err(HandlerError::BadRequest(format!(
                "name longer than {NAME_MAX} bytes"
            )));
        }
        if data.len() > DATA_SIZE {
            return Err(HandlerError::TooLarge);
        }
        let mut seq = self.client.lock().unwrap_or_else(|e| e.into_inner());
        if self.ended().is_some() {
            return Err(self.ended_err());
        }
        let next = seq.wrapping_add(1);
        let mb = self.mailbox();
        let prev = mb.resp_seq.load(Ordering::Acquire);
        if prev != *seq {
            let why = format!("corrupted mailbox: resp_seq {prev} before request {next}");
            self.crash(why);
            return Err(self.ended_err());
        }
        *seq = next;
        self.posted.store(next, Ordering::SeqCst);
        // SAFETY: the control region is mapped for the backend's life.
        unsafe { post(self.backend.control(), next, o, name.as_bytes(), data) };
        fence(Ordering::SeqCst);
        if mb.state.load(Ordering::Relaxed) != state::RUNNING {
            self.backend.wake();
        }
        let timeout = if o == op::INSTALL {
            self.watchdog.max(self.boot_timeout)
        } else {
            self.watchdog
        };
        self.wait_reply(next, o, name, timeout)
    }

    /// Waits for the reply to request `seq` and validates it.
    fn wait_reply(
        &self,
        seq: u32,
        o: u32,
        name: &str,
        timeout: Duration,
    ) -> Result<Reply, HandlerError> {
        let mb = self.mailbox();
        let t0 = Instant::now();
        let check = |resp: u32| -> Result<bool, HandlerError> {
            if resp == seq {
                Ok(true)
            } else if resp == seq.wrapping_sub(1) {
                Ok(false)
            } else {
                self.crash(format!(
                    "corrupted mailbox: resp_seq {resp} while request {seq} is outstanding"
                ));
                Err(self.ended_err())
            }
        };
        // Spin briefly: a running instance answers within one scheduler pass.
        let mut answered = false;
        while t0.elapsed() < Duration::from_micros(30) {
            if check(mb.resp_seq.load(Ordering::Acquire))? {
                answered = true;
                break;
            }
            std::hint::spin_loop();
        }
        if !answered {
            self.block_for_reply(o, name, timeout, t0, &check)?;
        }
        self.take_reply()
    }

    /// The slow path of [`wait_reply`](Self::wait_reply): announce that we
    /// block, then sleep on the backend's notification in short slices.
    fn block_for_reply(
        &self,
        o: u32,
        name: &str,
        timeout: Duration,
        t0: Instant,
        check: &dyn Fn(u32) -> Result<bool, HandlerError>,
    ) -> Result<(), HandlerError> {
        let mb = self.mailbox();
        loop {
            mb.host_waiting.store(1, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            if check(mb.resp_seq.load(Ordering::Acquire))? {
                break;
            }
            if self.ended().is_some() {
                return Err(self.ended_err());
            }
            let waited = t0.elapsed();
            if waited >= timeout {
                let what = if name.is_empty() {
                    op_name(o).to_string()
                } else {
                    format!("{} {name}", op_name(o))
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
        Ok(())
    }

    /// Reads and validates the reply now in the mailbox.
    fn take_reply(&self) -> Result<Reply, HandlerError> {
        let mb = self.mailbox();
        let st = mb.status.load(Ordering::Relaxed);
        let len = mb.resp_len.load(Ordering::Relaxed) as usize;
        if st > status::MAX {
            self.crash(format!("corrupted mailbox: status {st}"));
            return Err(self.ended_err());
        }
        if len > DATA_SIZE {
            self.crash(format!("corrupted mailbox: resp_len {len}"));
            return Err(self.ended_err());
        }
        let s = mb.state.load(Ordering::Relaxed);
        if s > state::MAX {
            self.crash(format!("corrupted mailbox: state {s}"));
            return Err(self.ended_err());
        }
        let mut buf = vec![0u8; len];
        // SAFETY: len <= DATA_SIZE, so the copy stays in the data area of the
        // mapped control region. The instance may still scribble over it:
        // that only changes the bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.backend.control().add(DATA_OFF as usize),
                buf.as_mut_ptr(),
                len,
            )
        };
        Ok(Reply {
            status: st,
            payload: String::from_utf8_lossy(&buf).into_owned(),
        })
    }

    fn call(&self, o: u32, name: &str, data: &[u8]) -> Result<String, HandlerError> {
        let r = self.request(o, name, data)?;
        let msg = |p: &str| {
            let p = p.trim_end();
            if p.is_empty() {
                name.to_string()
            } else {
                p.to_string()
            }
        };
        match r.status {
            status::OK => Ok(r.payload),
            status::NO_ELEMENT => Err(HandlerError::NoElement(msg(&r.payload))),
            status::NO_HANDLER => Err(HandlerError::NoHandler(msg(&r.payload))),
            status::PERMISSION => Err(HandlerError::Permission(msg(&r.payload))),
            status::FAILED => Err(HandlerError::Failed(msg(&r.payload))),
            status::CONFIG => Err(HandlerError::Config(
                r.payload
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(str::to_string)
                    .collect(),
            )),
            status::BAD_REQUEST => Err(HandlerError::BadRequest(msg(&r.payload))),
            status::NO_ROUTER => Err(HandlerError::NoRouter),
            status::TOO_LARGE => Err(HandlerError::TooLarge),
            _ => Err(HandlerError::Busy),
        }
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
        let spec = LaunchSpec {
            id,
            memory: opts.memory,
            vnics: opts.vnics.clone(),
            fault_injection: opts.fault_injection,
            helper_exe: opts.helper_exe.clone(),
            console: opts.console.clone().unwrap_or_else(default_console),
        };
        let mut prepare = |control: *mut u8| {
            // SAFETY: the backend hands us its whole control region before
            // the instance runs; the sizes were checked above.
            unsafe { post(control, 1, op::INSTALL, file, cfg) };
        };
        let backend = launch(&spec, &mut prepare).map_err(CreateError::Launch)?;
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
                Ok(Mutex::new(port))
            })
            .collect::<Result<Vec<_>, CreateError>>()?;
        let inner = Arc::new(Inner {
            id,
            backend,
            client: Mutex::new(1),
            posted: AtomicU32::new(1),
            end_override: Mutex::new(None),
            ports,
            watchdog: opts.watchdog,
            boot_timeout: opts.boot_timeout,
            wd_heartbeat: AtomicU64::new(0),
            wd_since: Mutex::new(Instant::now()),
        });
        let reply = {
            let _g = inner.client.lock().unwrap_or_else(|e| e.into_inner());
            inner.wait_reply(1, op::INSTALL, "", opts.boot_timeout)
        };
        let reply = match reply {
            Ok(r) => r,
            Err(e) => {
                inner.kill("boot failed".into());
                return Err(CreateError::Instance(e));
            }
        };
        match reply.status {
            status::OK => {}
            status::CONFIG | status::FAILED => {
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
                    "INSTALL answered with status {s}: {}",
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

    #[cfg(test)]
    pub(crate) fn control_for_tests(&self) -> *mut u8 {
        self.inner.backend.control()
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
        self.inner.call(op::READ, name, b"")
    }

    /// Reads handler `name` with a parameter.
    pub fn read_param(&self, name: &str, param: &str) -> Result<String, HandlerError> {
        self.inner.call(op::READ, name, param.as_bytes())
    }

    /// Writes `value` to handler `name`.
    pub fn write(&self, name: &str, value: &str) -> Result<(), HandlerError> {
        self.inner
            .call(op::WRITE, name, value.as_bytes())
            .map(|_| ())
    }

    /// The elements of the installed configuration.
    pub fn list(&self) -> Result<Vec<String>, HandlerError> {
        let s = self.inner.call(op::LIST, "", b"")?;
        Ok(split_list(&s))
    }

    /// The handlers of `element`: (name, flags), flags as Click prints
    /// them (`r`, `w`, `rw`, …).
    pub fn handlers(&self, element: &str) -> Result<Vec<(String, String)>, HandlerError> {
        if element.is_empty() {
            return Err(HandlerError::BadRequest("empty element name".into()));
        }
        let s = self.inner.call(op::LIST, element, b"")?;
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
            .call(op::INSTALL, file, config.as_bytes())
            .map(|_| ())
            .map_err(ConfigError::from)
    }

    /// Stops the instance cleanly; returns how it ended (normally
    /// `Exited(0)`).
    pub fn stop(&self) -> Result<Ended, HandlerError> {
        match self.inner.call(op::STOP, "", b"") {
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
                self.inner.crash(format!("corrupted mailbox: state {s}"));
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
    /// `scribble-mailbox`, `scribble-rings`. Usually the reply never comes
    /// and the error says how the instance ended.
    pub fn fault(&self, kind: &str) -> Result<String, HandlerError> {
        self.inner.call(op::FAULT, "", kind.as_bytes())
    }

    /// The host's port on vNIC `k`.
    pub fn vnic(&self, k: usize) -> Option<VnicPort> {
        (k < self.vnic_count).then(|| VnicPort {
            inner: self.inner.clone(),
            k,
        })
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
    fn port(&self) -> std::sync::MutexGuard<'_, Port> {
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
        let r = self.port().tx.push(frame);
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
        if self.port().tx.flush() {
            self.inner.backend.wake();
        }
    }

    /// Sends and flushes one frame.
    pub fn send_now(&self, frame: &[u8]) -> bool {
        let ok = self.send(frame);
        self.flush();
        ok
    }

    /// The next frame from the instance, if one is ready.
    pub fn recv(&self) -> Option<Vec<u8>> {
        if self.inner.ended().is_some() {
            return None;
        }
        let mut p = self.port();
        loop {
            let mut out = None;
            match p.rx.pop(|d| out = Some(d.to_vec())) {
                Ok(true) => {
                    if p.rx.release() {
                        self.inner.backend.wake();
                    }
                    if out.is_some() {
                        return out;
                    }
                }
                Ok(false) => return None,
                Err(e) => {
                    drop(p);
                    self.corrupt(e);
                    return None;
                }
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
            let r = self.port().rx.prepare_to_sleep();
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
        self.port().tx.full_drops
    }
}
