//! The fleet: instances by name and id, their switches, desired state,
//! console rings, lifecycle events and the supervisor that applies
//! restart policies.

use crate::auth::{Caller, Quota};
use crate::store::{Record, Restart, Store};
use clickos_instance::{
    ConfigError, CreateError, Ended, HandlerError, Instance, InstanceOptions, Isolation, VnicSpec,
};
use clickos_switch::{Attach, SwitchHandle, SwitchOptions};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

mod metrics;
mod migrate;
mod snapshot;
pub use migrate::{Incoming, MigrateRequest};

/// Largest configuration accepted (create and install).
pub const MAX_CONFIG: usize = 16 << 20;
/// Console output kept per instance.
pub const CONSOLE_RING: usize = 64 << 10;
/// Events kept in memory.
const EVENTS_KEPT: usize = 10_000;
/// An instance running this long has its failure count reset.
const STABLE: Duration = Duration::from_secs(10);
const BACKOFF_FIRST: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(30);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// An error for the API: status, stable code, message, config lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
    pub lines: Vec<String>,
}

impl ApiError {
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            lines: Vec::new(),
        }
    }
    pub fn bad(message: impl Into<String>) -> ApiError {
        ApiError::new(400, "bad_request", message)
    }
    pub fn not_found(what: &str) -> ApiError {
        ApiError::new(404, "not_found", format!("no instance '{what}'"))
    }
    pub fn to_json(&self) -> Value {
        let mut v = json!({"error": self.message, "code": self.code});
        if !self.lines.is_empty() {
            v["lines"] = json!(self.lines);
        }
        v
    }
}

fn handler_error(h: &str, e: HandlerError) -> ApiError {
    match e {
        HandlerError::NoSuchElement(m) => {
            ApiError::new(404, "no_such_handler", format!("{h}: no such element: {m}"))
        }
        HandlerError::NoSuchHandler(m) => {
            ApiError::new(404, "no_such_handler", format!("{h}: no such handler: {m}"))
        }
        HandlerError::PermissionDenied(m) => {
            ApiError::new(403, "permission_denied", format!("{h}: {m}"))
        }
        HandlerError::Failed(m) => ApiError::new(422, "handler_failed", format!("{h}: {m}")),
        HandlerError::BadRequest(m) => ApiError::bad(format!("{h}: {m}")),
        HandlerError::TooLarge => ApiError::new(413, "too_large", format!("{h}: {e}")),
        HandlerError::Busy => ApiError::new(503, "busy", format!("{h}: {e}")),
        HandlerError::Timeout(m) => ApiError::new(504, "timeout", format!("{h}: {m}")),
        HandlerError::NoRouter => ApiError::new(409, "not_running", format!("{h}: {e}")),
        HandlerError::Ended(_) => ApiError::new(409, "not_running", format!("{h}: {e}")),
        HandlerError::Config(lines) => ApiError {
            status: 422,
            code: "config_refused",
            message: "configuration refused".into(),
            lines,
        },
    }
}

/// The console's recent output.
#[derive(Default)]
pub struct ConsoleRing {
    text: String,
    total: u64,
}

impl ConsoleRing {
    fn push(&mut self, s: &str) {
        self.total += s.len() as u64 + 1;
        self.text.push_str(s.trim_end_matches('\n'));
        self.text.push('\n');
        if self.text.len() > CONSOLE_RING {
            let mut cut = self.text.len() - CONSOLE_RING;
            while !self.text.is_char_boundary(cut) {
                cut += 1;
            }
            self.text.drain(..cut);
        }
    }
}

/// A lifecycle event.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Event {
    pub seq: u64,
    pub time: f64,
    pub kind: String,
    pub instance: String,
    pub id: u32,
    pub tenant: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<String>,
}

#[derive(Default)]
pub struct Events {
    inner: Mutex<(VecDeque<Event>, u64)>,
    cv: Condvar,
    log: Mutex<Option<std::fs::File>>,
}

impl Events {
    fn push(&self, kind: &str, rec: &Record, message: String, lines: Vec<String>) {
        let time = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        let ev = {
            let mut g = lock(&self.inner);
            g.1 += 1;
            let ev = Event {
                seq: g.1,
                time,
                kind: kind.into(),
                instance: rec.name.clone(),
                id: rec.id,
                tenant: rec.tenant.clone(),
                message,
                lines,
            };
            g.0.push_back(ev.clone());
            while g.0.len() > EVENTS_KEPT {
                g.0.pop_front();
            }
            ev
        };
        self.cv.notify_all();
        if let Some(f) = lock(&self.log).as_mut() {
            use std::io::Write;
            if let Ok(mut line) = serde_json::to_vec(&ev) {
                line.push(b'\n');
                let _ = f.write_all(&line);
            }
        }
    }

    /// Events after `seq` the caller may see, and the last sequence number.
    pub fn since(&self, seq: u64, caller: &Caller) -> (Vec<Event>, u64) {
        let g = lock(&self.inner);
        let evs =
            g.0.iter()
                .filter(|e| e.seq > seq && caller.owns(&e.tenant))
                .cloned()
                .collect();
        (evs, g.1)
    }

    /// Waits until an event after `seq` exists or `timeout` passes.
    pub fn wait(&self, seq: u64, timeout: Duration) {
        let g = lock(&self.inner);
        let r = self.cv.wait_timeout_while(g, timeout, |g| g.1 <= seq);
        drop(r);
    }

    pub fn last(&self) -> u64 {
        lock(&self.inner).1
    }

    fn wake_all(&self) {
        self.cv.notify_all();
    }
}

struct Running {
    inst: Arc<Instance>,
    sw: Option<SwitchHandle>,
    /// Switch port of vNIC k.
    vnic_ports: Vec<usize>,
    since: Instant,
    boot: Duration,
}

impl Running {
    /// Stops the switch, then the instance (cleanly when `clean`).
    fn shut(self, clean: bool) -> Option<Ended> {
        if let Some(sw) = self.sw {
            let _ = sw.stop();
        }
        let end = if clean { self.inst.stop().ok() } else { None };
        drop(self.inst);
        end
    }
}

struct St {
    rec: Record,
    run: Option<Running>,
    state: &'static str,
    restarts: u64,
    failures: u32,
    next_try: Option<Instant>,
    last_end: Option<String>,
    /// Brought back after a daemon restart (the first start is
    /// `recovered`, not `restarted`).
    recovering: bool,
}

impl St {
    /// One more failure: the next restart is tried after the back-off it
    /// earns, which is returned.
    fn schedule_retry(&mut self) -> Duration {
        self.failures += 1;
        let delay = backoff(self.failures);
        self.next_try = Some(Instant::now() + delay);
        self.state = "restarting";
        delay
    }
}

struct Entry {
    /// Serialises lifecycle operations on the instance.
    ops: Mutex<()>,
    st: Mutex<St>,
    console: Arc<Mutex<ConsoleRing>>,
}

impl Entry {
    /// A new instance's entry, about to start (create, or resume as new).
    fn starting(rec: Record) -> Arc<Entry> {
        Arc::new(Entry {
            ops: Mutex::new(()),
            st: Mutex::new(St {
                rec,
                run: None,
                state: "starting",
                restarts: 0,
                failures: 0,
                next_try: None,
                last_end: None,
                recovering: false,
            }),
            console: Arc::default(),
        })
    }
}

/// How the fleet runs instances.
#[derive(Clone)]
pub struct FleetOptions {
    pub helper_exe: Option<PathBuf>,
    pub default_isolation: Isolation,
    pub allow_fault_injection: bool,
    pub boot_timeout: Duration,
}

/// A request to create an instance.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateRequest {
    pub name: String,
    pub config: String,
    #[serde(default)]
    pub config_file: Option<String>,
    #[serde(default)]
    pub vnics: Vec<String>,
    #[serde(default)]
    pub memory: Option<u64>,
    #[serde(default)]
    pub isolation: Option<String>,
    #[serde(default)]
    pub restart: Option<String>,
    #[serde(default)]
    pub fault_injection: bool,
    /// Read handlers (`ELEMENT.HANDLER`) whose values `/metrics` exports.
    #[serde(default)]
    pub metrics: Vec<String>,
}

/// Handlers one instance may export as metrics.
pub const MAX_METRICS: usize = 32;

/// Checks a handler name given for export: `ELEMENT.HANDLER`, printable,
/// no spaces or quotes.
/// An instance that did not start, as an API error.
fn launch_error(e: CreateError, resumed: bool) -> ApiError {
    match e {
        CreateError::Config(ConfigError::Invalid(lines)) => ApiError {
            status: 422,
            code: "config_refused",
            message: "configuration refused".into(),
            lines,
        },
        CreateError::Launch(m) if resumed => {
            ApiError::new(422, "bad_snapshot", format!("cannot resume: {m}"))
        }
        e => ApiError::new(500, "launch_failed", e.to_string()),
    }
}

fn check_metric(h: &str) -> Result<(), ApiError> {
    let ok = h.len() <= 256
        && h.contains('.')
        && !h.starts_with('.')
        && !h.ends_with('.')
        && h.chars()
            .all(|c| c.is_ascii_graphic() && c != '"' && c != '\\');
    if ok {
        Ok(())
    } else {
        Err(ApiError::bad(format!(
            "metric '{}': expected a read handler as ELEMENT.HANDLER",
            h.escape_debug()
        )))
    }
}

/// Suspend: where the snapshot goes besides the daemon's own copy.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuspendRequest {
    /// Also write it to this file (on the daemon's host).
    #[serde(default)]
    pub file: Option<String>,
    /// Return it in the answer (`snapshot`, base64).
    #[serde(default)]
    pub inline: bool,
}

/// Resume a snapshot as a new instance (here or taken by another daemon).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResumeRequest {
    /// A snapshot file on the daemon's host ...
    #[serde(default)]
    pub file: Option<String>,
    /// ... or the snapshot itself, base64.
    #[serde(default)]
    pub snapshot: Option<String>,
    /// The name (default: the one in the snapshot).
    #[serde(default)]
    pub name: Option<String>,
    /// Where its vNICs join on this host (default: as in the snapshot).
    #[serde(default)]
    pub vnics: Option<Vec<String>>,
}

pub struct Fleet {
    store: Store,
    dir: PathBuf,
    entries: Mutex<BTreeMap<String, Arc<Entry>>>,
    pub events: Events,
    opts: FleetOptions,
    shutting: AtomicBool,
}

fn check_name(n: &str) -> Result<(), ApiError> {
    if n.is_empty()
        || n.len() > 64
        || !n
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
        || n.bytes().all(|b| b.is_ascii_digit())
        || n.starts_with('.')
    {
        return Err(ApiError::bad(format!(
            "bad instance name '{}': 1 to 64 of A-Z a-z 0-9 _ . -, not all digits, not starting with '.'",
            n.escape_debug()
        )));
    }
    Ok(())
}

fn vnic_specs(id: u32, n: usize) -> Vec<VnicSpec> {
    (0..n)
        .map(|k| VnicSpec {
            slots: 256,
            buf_size: 2048,
            mac: [
                0x52,
                0x54,
                (id >> 16) as u8,
                (id >> 8) as u8,
                id as u8,
                k as u8,
            ],
        })
        .collect()
}

/// What is sent to the instance: the text itself, or when it is over
/// the instance's data area, its flattened form (comments and layout
/// gone).
fn wire_text(config: &str, file: &str) -> Result<String, ApiError> {
    let room = clickos_ring::layout::DATA_SIZE - 4096;
    if config.len() <= room {
        return Ok(config.to_string());
    }
    let flat = click_lang::parse_config(config, file, &[]).map_err(|errs| ApiError {
        status: 422,
        code: "config_refused",
        message: "configuration refused".into(),
        lines: errs.iter().map(|e| e.to_string()).collect(),
    })?;
    let text = click_lang::unparse(&flat);
    if text.len() > room {
        return Err(ApiError::new(
            413,
            "too_large",
            format!(
                "configuration of {} bytes ({} flattened) is over the {} bytes an instance takes",
                config.len(),
                text.len(),
                room
            ),
        ));
    }
    Ok(text)
}

fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl Fleet {
    /// Opens the state in `dir` and schedules every instance that should
    /// run (the supervisor starts them).
    pub fn open(dir: &std::path::Path, opts: FleetOptions) -> Result<Arc<Fleet>, String> {
        let store = Store::open(dir)?;
        let recs = store.load()?;
        let events = Events::default();
        *lock(&events.log) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("events.log"))
            .ok();
        let mut entries = BTreeMap::new();
        for rec in recs {
            let running = rec.running && !rec.suspended;
            let suspended = rec.suspended;
            entries.insert(
                rec.name.clone(),
                Arc::new(Entry {
                    ops: Mutex::new(()),
                    st: Mutex::new(St {
                        rec,
                        run: None,
                        state: if running {
                            "starting"
                        } else if suspended {
                            "suspended"
                        } else {
                            "stopped"
                        },
                        restarts: 0,
                        failures: 0,
                        next_try: running.then(Instant::now),
                        last_end: None,
                        recovering: true,
                    }),
                    console: Arc::default(),
                }),
            );
        }
        // Parked snapshots of instances that will not come back at once
        // are stale.
        if let Ok(rd) = std::fs::read_dir(dir.join("parked")) {
            for f in rd.flatten() {
                let name = f.file_name();
                let name = name.to_string_lossy();
                let keep = name.strip_suffix(".snap").is_some_and(|n| {
                    entries
                        .get(n)
                        .is_some_and(|e| lock(&e.st).state == "starting")
                });
                if !keep {
                    let _ = std::fs::remove_file(f.path());
                }
            }
        }
        Ok(Arc::new(Fleet {
            store,
            dir: dir.to_path_buf(),
            entries: Mutex::new(entries),
            events,
            opts,
            shutting: AtomicBool::new(false),
        }))
    }

    fn launch(&self, rec: &Record, console: &Arc<Mutex<ConsoleRing>>) -> Result<Running, ApiError> {
        self.launch_from(rec, console, None)
    }

    /// Boots `rec`, or resumes it from `snapshot`, and wires its vNICs.
    fn launch_from(
        &self,
        rec: &Record,
        console: &Arc<Mutex<ConsoleRing>>,
        snapshot: Option<&[u8]>,
    ) -> Result<Running, ApiError> {
        let (opts, attach) = self.instance_options(rec, console)?;
        let t0 = Instant::now();
        let inst = match snapshot {
            None => {
                let text = wire_text(&rec.config, &rec.config_file)?;
                Instance::create(rec.id, &text, &opts)
            }
            Some(b) => Instance::resume(rec.id, b, &opts).map(|(i, _)| i),
        }
        .map_err(|e| launch_error(e, snapshot.is_some()))?;
        let boot = t0.elapsed();
        self.wire(rec, inst, &attach, boot)
    }

    /// The options `rec`'s instance runs with, and its vNICs' attachments.
    fn instance_options(
        &self,
        rec: &Record,
        console: &Arc<Mutex<ConsoleRing>>,
    ) -> Result<(InstanceOptions, Vec<Attach>), ApiError> {
        let isolation: Isolation = rec.isolation.parse().map_err(ApiError::bad)?;
        isolation.available().map_err(|e| {
            ApiError::new(
                400,
                "bad_request",
                format!("isolation level {isolation} unavailable: {e}"),
            )
        })?;
        let attach: Vec<Attach> = rec
            .vnics
            .iter()
            .map(|s| s.parse())
            .collect::<Result<_, String>>()
            .map_err(ApiError::bad)?;
        if attach.len() > clickos_ring::layout::MAX_VNICS {
            return Err(ApiError::bad(format!(
                "{} vNICs; an instance has at most {}",
                attach.len(),
                clickos_ring::layout::MAX_VNICS
            )));
        }
        let ring = console.clone();
        let opts = InstanceOptions {
            isolation,
            memory: rec.memory,
            vnics: vnic_specs(rec.id, attach.len()),
            fault_injection: rec.fault_injection && self.opts.allow_fault_injection,
            helper_exe: self.opts.helper_exe.clone(),
            console: Some(Arc::new(move |_id: u32, text: &str| lock(&ring).push(text))),
            boot_timeout: self.opts.boot_timeout,
            config_file: rec.config_file.clone(),
            ..InstanceOptions::default()
        };
        Ok((opts, attach))
    }

    /// Wires a started instance's vNICs through a switch of its own.
    fn wire(
        &self,
        rec: &Record,
        inst: Instance,
        attach: &[Attach],
        boot: Duration,
    ) -> Result<Running, ApiError> {
        if inst.vnic_count() != attach.len() {
            return Err(ApiError::bad(format!(
                "the snapshot has {} vNICs, {} attachments given",
                inst.vnic_count(),
                attach.len()
            )));
        }
        let (sw, vnic_ports) = if attach.is_empty() {
            (None, Vec::new())
        } else {
            let sw = SwitchHandle::spawn(SwitchOptions {
                name: format!("i{}", rec.id),
                ..SwitchOptions::default()
            })
            .map_err(|e| ApiError::new(500, "switch_failed", e))?;
            let w = clickos_switch::wire_instance(&sw, &inst, &rec.name, attach)
                .map_err(|e| ApiError::bad(format!("wiring: {e}")))?;
            (Some(sw), w.vnics)
        };
        Ok(Running {
            inst: Arc::new(inst),
            sw,
            vnic_ports,
            since: Instant::now(),
            boot,
        })
    }

    fn find(&self, caller: &Caller, key: &str) -> Result<Arc<Entry>, ApiError> {
        let entries = lock(&self.entries);
        let e = match entries.get(key) {
            Some(e) => Some(e.clone()),
            None => key
                .parse::<u32>()
                .ok()
                .and_then(|id| entries.values().find(|e| lock(&e.st).rec.id == id).cloned()),
        };
        match e {
            Some(e) if caller.owns(&lock(&e.st).rec.tenant) => Ok(e),
            _ => Err(ApiError::not_found(key)),
        }
    }

    fn persist(&self, rec: &Record) -> Result<(), ApiError> {
        self.store
            .put(rec)
            .map_err(|e| ApiError::new(500, "internal", e))
    }

    pub fn create(
        &self,
        caller: &Caller,
        quota: Quota,
        req: CreateRequest,
    ) -> Result<Value, ApiError> {
        check_name(&req.name)?;
        if req.config.len() > MAX_CONFIG {
            return Err(ApiError::new(
                413,
                "too_large",
                format!("configuration over {MAX_CONFIG} bytes"),
            ));
        }
        let isolation = match &req.isolation {
            Some(s) => s.parse::<Isolation>().map_err(ApiError::bad)?,
            None => self.opts.default_isolation,
        };
        let restart = match &req.restart {
            Some(s) => Restart::parse(s).map_err(ApiError::bad)?,
            None => Restart::Never,
        };
        let memory = req.memory.unwrap_or(8 << 20);
        if memory < 1 << 20 {
            return Err(ApiError::bad("memory under 1 MiB"));
        }
        for v in &req.vnics {
            v.parse::<Attach>().map_err(ApiError::bad)?;
        }
        if req.metrics.len() > MAX_METRICS {
            return Err(ApiError::bad(format!(
                "at most {MAX_METRICS} handlers as metrics"
            )));
        }
        for h in &req.metrics {
            check_metric(h)?;
        }
        if req.fault_injection && !self.opts.allow_fault_injection {
            return Err(ApiError::new(
                403,
                "forbidden",
                "fault injection is off (start the daemon with --allow-fault-injection)",
            ));
        }
        let tenant = caller.tenant().to_string();
        let entry = {
            let mut entries = lock(&self.entries);
            if entries.contains_key(&req.name) {
                return Err(ApiError::new(
                    409,
                    "conflict",
                    format!("an instance named '{}' exists", req.name),
                ));
            }
            if let Caller::Tenant(_) = caller {
                let mine: Vec<u64> = entries
                    .values()
                    .filter_map(|e| {
                        let st = lock(&e.st);
                        (st.rec.tenant == tenant).then_some(st.rec.memory)
                    })
                    .collect();
                if let Some(max) = quota.instances {
                    if mine.len() as u64 >= max as u64 {
                        return Err(ApiError::new(
                            403,
                            "quota_exceeded",
                            format!("tenant '{tenant}' is at its quota of {max} instances"),
                        ));
                    }
                }
                if let Some(max) = quota.memory {
                    let used: u64 = mine.iter().sum();
                    if used + memory > max {
                        return Err(ApiError::new(
                            403,
                            "quota_exceeded",
                            format!(
                                "tenant '{tenant}' memory quota: {used} + {memory} bytes is over {max}"
                            ),
                        ));
                    }
                }
            }
            let id = self
                .store
                .next_id()
                .map_err(|e| ApiError::new(500, "internal", e))?;
            let rec = Record {
                id,
                name: req.name.clone(),
                tenant,
                config: req.config,
                config_file: req.config_file.unwrap_or_else(|| "config".into()),
                isolation: isolation.name().into(),
                memory,
                vnics: req.vnics,
                restart,
                running: true,
                fault_injection: req.fault_injection,
                suspended: false,
                metrics: req.metrics,
            };
            let entry = Entry::starting(rec);
            entries.insert(req.name.clone(), entry.clone());
            entry
        };
        let _ops = lock(&entry.ops);
        let rec = lock(&entry.st).rec.clone();
        let fail = |e: ApiError| {
            lock(&self.entries).remove(&rec.name);
            if e.code == "config_refused" {
                self.events.push(
                    "config_refused",
                    &rec,
                    "create refused".into(),
                    e.lines.clone(),
                );
            }
            e
        };
        let run = self.launch(&rec, &entry.console).map_err(fail)?;
        self.persist(&rec).map_err(fail)?;
        let boot = run.boot;
        {
            let mut st = lock(&entry.st);
            st.run = Some(run);
            st.state = "running";
        }
        self.events.push(
            "created",
            &rec,
            format!(
                "booted at isolation {} in {:.3} ms",
                rec.isolation,
                boot.as_secs_f64() * 1e3
            ),
            Vec::new(),
        );
        Ok(self.view_entry(&entry, false))
    }

    pub fn list(&self, caller: &Caller) -> Value {
        let entries: Vec<Arc<Entry>> = lock(&self.entries).values().cloned().collect();
        let v: Vec<Value> = entries
            .iter()
            .filter(|e| caller.owns(&lock(&e.st).rec.tenant))
            .map(|e| self.view_entry(e, false))
            .collect();
        json!({ "instances": v })
    }

    pub fn show(&self, caller: &Caller, key: &str) -> Result<Value, ApiError> {
        let e = self.find(caller, key)?;
        Ok(self.view_entry(&e, true))
    }

    fn view_entry(&self, e: &Entry, _detail: bool) -> Value {
        let st = lock(&e.st);
        let r = &st.rec;
        let stats = st
            .run
            .as_ref()
            .and_then(|run| run.sw.as_ref().map(|sw| (sw.stats().ok(), &run.vnic_ports)));
        let vnics: Vec<Value> = r
            .vnics
            .iter()
            .enumerate()
            .map(|(k, a)| {
                let mut v = json!({"index": k, "attach": a});
                if let Some((Some(s), ports)) = &stats {
                    if let Some(p) = ports.get(k).and_then(|&id| s.port(id)) {
                        let c = &p.counters;
                        v["from_instance_packets"] = json!(c.rx_packets);
                        v["from_instance_bytes"] = json!(c.rx_bytes);
                        v["to_instance_packets"] = json!(c.tx_packets);
                        v["to_instance_bytes"] = json!(c.tx_bytes);
                        v["drops"] = json!(c.total_drops());
                    }
                }
                v
            })
            .collect();
        json!({
            "id": r.id,
            "name": r.name,
            "tenant": r.tenant,
            "state": st.state,
            "isolation": r.isolation,
            "memory": r.memory,
            "restart": r.restart.name(),
            "restarts": st.restarts,
            "uptime_seconds": st.run.as_ref().map(|x| x.since.elapsed().as_secs_f64()).unwrap_or(0.0),
            "boot_seconds": st.run.as_ref().map(|x| x.boot.as_secs_f64()).unwrap_or(0.0),
            "config_file": r.config_file,
            "config_bytes": r.config.len(),
            "last_end": st.last_end,
            "vnics": vnics,
        })
    }

    pub fn config(&self, caller: &Caller, key: &str) -> Result<Value, ApiError> {
        let e = self.find(caller, key)?;
        let st = lock(&e.st);
        Ok(json!({"config": st.rec.config, "config_file": st.rec.config_file}))
    }

    fn instance(&self, e: &Entry) -> Result<Arc<Instance>, ApiError> {
        let st = lock(&e.st);
        match &st.run {
            Some(r) => Ok(r.inst.clone()),
            None => Err(ApiError::new(
                409,
                "not_running",
                format!("instance '{}' is {}", st.rec.name, st.state),
            )),
        }
    }

    pub fn install(
        &self,
        caller: &Caller,
        key: &str,
        config: String,
        file: Option<String>,
    ) -> Result<Value, ApiError> {
        if config.len() > MAX_CONFIG {
            return Err(ApiError::new(
                413,
                "too_large",
                format!("configuration over {MAX_CONFIG} bytes"),
            ));
        }
        let e = self.find(caller, key)?;
        let _ops = lock(&e.ops);
        let inst = self.instance(&e)?;
        let mut rec = lock(&e.st).rec.clone();
        let file = file.unwrap_or_else(|| rec.config_file.clone());
        let text = match wire_text(&config, &file) {
            Ok(t) => t,
            Err(err) => {
                if err.code == "config_refused" {
                    self.events.push(
                        "config_refused",
                        &rec,
                        "install refused".into(),
                        err.lines.clone(),
                    );
                }
                return Err(err);
            }
        };
        match inst.install_as(&text, &file) {
            Ok(()) => {}
            Err(ConfigError::Invalid(lines)) => {
                self.events.push(
                    "config_refused",
                    &rec,
                    "install refused; the old configuration keeps running".into(),
                    lines.clone(),
                );
                return Err(ApiError {
                    status: 422,
                    code: "config_refused",
                    message: "configuration refused; the old one keeps running".into(),
                    lines,
                });
            }
            Err(ConfigError::Instance(h)) => return Err(handler_error("install", h)),
        }
        rec.config = config;
        rec.config_file = file;
        self.persist(&rec)?;
        self.events.push(
            "installed",
            &rec,
            format!("{} bytes from {}", rec.config.len(), rec.config_file),
            Vec::new(),
        );
        lock(&e.st).rec = rec;
        Ok(self.view_entry(&e, false))
    }

    pub fn stop(&self, caller: &Caller, key: &str) -> Result<Value, ApiError> {
        let e = self.find(caller, key)?;
        let _ops = lock(&e.ops);
        let (run, rec) = {
            let mut st = lock(&e.st);
            st.rec.running = false;
            st.next_try = None;
            st.state = "stopped";
            (st.run.take(), st.rec.clone())
        };
        self.persist(&rec)?;
        // A stop forgets element state: a parked snapshot is not used.
        let _ = std::fs::remove_file(self.parked_path(&rec.name));
        let how = run.and_then(|r| r.shut(true));
        lock(&e.st).last_end = how.as_ref().map(|h| h.to_string());
        self.events.push(
            "stopped",
            &rec,
            how.map(|h| h.to_string())
                .unwrap_or_else(|| "was not running".into()),
            Vec::new(),
        );
        Ok(self.view_entry(&e, false))
    }

    pub fn start(&self, caller: &Caller, key: &str) -> Result<Value, ApiError> {
        let e = self.find(caller, key)?;
        let _ops = lock(&e.ops);
        if lock(&e.st).rec.suspended {
            return self.resume_entry(&e);
        }
        let mut rec = lock(&e.st).rec.clone();
        if lock(&e.st).run.is_some() {
            return Ok(self.view_entry(&e, false));
        }
        let run = self.launch(&rec, &e.console)?;
        rec.running = true;
        self.persist(&rec)?;
        {
            let mut st = lock(&e.st);
            st.rec = rec.clone();
            st.run = Some(run);
            st.state = "running";
            st.next_try = None;
            st.failures = 0;
        }
        self.events
            .push("started", &rec, "started".into(), Vec::new());
        Ok(self.view_entry(&e, false))
    }

    pub fn destroy(&self, caller: &Caller, key: &str) -> Result<Value, ApiError> {
        let e = self.find(caller, key)?;
        let _ops = lock(&e.ops);
        let view = self.view_entry(&e, false);
        let (run, rec) = {
            let mut st = lock(&e.st);
            st.state = "destroyed";
            (st.run.take(), st.rec.clone())
        };
        self.store
            .delete(&rec.name)
            .map_err(|e| ApiError::new(500, "internal", e))?;
        lock(&self.entries).remove(&rec.name);
        if let Some(r) = run {
            r.shut(false);
        }
        let _ = std::fs::remove_file(self.snapshot_path(&rec.name));
        let _ = std::fs::remove_file(self.parked_path(&rec.name));
        self.events
            .push("destroyed", &rec, "destroyed".into(), Vec::new());
        Ok(view)
    }

    pub fn handlers(&self, caller: &Caller, key: &str) -> Result<Value, ApiError> {
        let e = self.find(caller, key)?;
        let inst = self.instance(&e)?;
        let mut out = Vec::new();
        let elements = inst.list().map_err(|h| handler_error("list", h))?;
        for el in std::iter::once(String::new()).chain(elements) {
            let Ok(hs) = inst.handlers(&el) else {
                continue;
            };
            for (h, mode) in hs {
                let name = if el.is_empty() {
                    h
                } else {
                    format!("{el}.{h}")
                };
                out.push(json!({"name": name, "mode": mode}));
            }
        }
        Ok(json!({ "handlers": out }))
    }

    pub fn read(&self, caller: &Caller, key: &str, h: &str) -> Result<Value, ApiError> {
        let e = self.find(caller, key)?;
        let inst = self.instance(&e)?;
        let v = inst.read(h).map_err(|err| handler_error(h, err))?;
        Ok(json!({"handler": h, "value": v}))
    }

    pub fn write(
        &self,
        caller: &Caller,
        key: &str,
        h: &str,
        value: &str,
    ) -> Result<Value, ApiError> {
        let e = self.find(caller, key)?;
        let inst = self.instance(&e)?;
        inst.write(h, value).map_err(|err| handler_error(h, err))?;
        Ok(json!({"handler": h, "value": ""}))
    }

    pub fn console(&self, caller: &Caller, key: &str) -> Result<Value, ApiError> {
        let e = self.find(caller, key)?;
        let c = lock(&e.console);
        Ok(json!({"text": c.text, "total_bytes": c.total}))
    }

    pub fn fault(&self, caller: &Caller, key: &str, kind: &str) -> Result<Value, ApiError> {
        let e = self.find(caller, key)?;
        if !self.opts.allow_fault_injection || !lock(&e.st).rec.fault_injection {
            return Err(ApiError::new(
                403,
                "forbidden",
                "fault injection is off for this instance",
            ));
        }
        let inst = self.instance(&e)?;
        match inst.fault(kind) {
            Ok(v) => Ok(json!({"handler": "fault", "value": v})),
            Err(HandlerError::Ended(end)) => {
                Ok(json!({"handler": "fault", "value": end.to_string()}))
            }
            Err(err) => Err(handler_error("fault", err)),
        }
    }

    /// One pass of the supervisor: notices ended instances and applies
    /// their restart policy; starts what is due.
    pub fn supervise(&self) {
        let entries: Vec<Arc<Entry>> = lock(&self.entries).values().cloned().collect();
        let mut due_now = Vec::new();
        for e in entries {
            if self.shutting.load(Ordering::Relaxed) {
                return;
            }
            let Ok(_ops) = e.ops.try_lock() else {
                continue;
            };
            let mut st = lock(&e.st);
            if st.state == "destroyed" {
                continue;
            }
            if let Some(run) = &st.run {
                let Some(end) = run.inst.ended() else {
                    if st.failures > 0 && run.since.elapsed() > STABLE {
                        st.failures = 0;
                    }
                    continue;
                };
                let run = st.run.take();
                let again = match st.rec.restart {
                    Restart::Never => false,
                    Restart::OnFailure => !matches!(end, Ended::Exited(0)),
                    Restart::Always => true,
                };
                st.last_end = Some(end.to_string());
                let rec = st.rec.clone();
                if again {
                    let delay = st.schedule_retry();
                    drop(st);
                    self.events.push(
                        "crashed",
                        &rec,
                        format!(
                            "{end}; restarting in {} ms ({})",
                            delay.as_millis(),
                            rec.restart.name()
                        ),
                        Vec::new(),
                    );
                } else {
                    st.state = if matches!(end, Ended::Exited(0)) {
                        "stopped"
                    } else {
                        "crashed"
                    };
                    st.next_try = None;
                    drop(st);
                    self.events.push(
                        "crashed",
                        &rec,
                        format!("{end}; restart policy {}", rec.restart.name()),
                        Vec::new(),
                    );
                }
                if let Some(r) = run {
                    r.shut(false);
                }
                continue;
            }
            let due = st.rec.running && st.next_try.is_some_and(|t| t <= Instant::now());
            if due {
                due_now.push(e.clone());
            }
        }
        // Start what is due, on a few threads (after a daemon restart that
        // is every instance).
        let next = std::sync::atomic::AtomicUsize::new(0);
        let workers = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, 8)
            .min(due_now.len());
        if workers <= 1 {
            for e in &due_now {
                self.start_due(e);
            }
            return;
        }
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(e) = due_now.get(k) else { break };
                    if self.shutting.load(Ordering::Relaxed) {
                        break;
                    }
                    self.start_due(e);
                });
            }
        });
    }

    /// Starts an instance the supervisor found due: after a daemon restart
    /// from the snapshot a clean shutdown parked (its element state kept),
    /// else from its configuration.
    fn start_due(&self, e: &Arc<Entry>) {
        let Ok(_ops) = e.ops.try_lock() else {
            return;
        };
        let st = lock(&e.st);
        let due = st.state != "destroyed"
            && st.run.is_none()
            && st.rec.running
            && st.next_try.is_some_and(|t| t <= Instant::now());
        if !due {
            return;
        }
        let rec = st.rec.clone();
        let recovering = st.recovering;
        drop(st);
        let mut how = String::new();
        let parked = if recovering {
            self.take_parked(&rec)
        } else {
            None
        };
        let res = match parked {
            None => self.launch(&rec, &e.console),
            Some(Ok(snap)) => match self.launch_from(&rec, &e.console, Some(&snap)) {
                Ok(run) => {
                    how = format!(
                        "; element state restored from the snapshot of the clean shutdown in {:.3} ms",
                        run.boot.as_secs_f64() * 1e3
                    );
                    Ok(run)
                }
                Err(err) => {
                    self.events.push(
                        "snapshot_refused",
                        &rec,
                        format!(
                            "the snapshot of the clean shutdown did not resume ({}); booting from the configuration, element state lost",
                            err.message
                        ),
                        Vec::new(),
                    );
                    self.launch(&rec, &e.console)
                }
            },
            Some(Err(why)) => {
                self.events.push(
                    "snapshot_refused",
                    &rec,
                    format!(
                        "the snapshot of the clean shutdown is unusable ({why}); booting from the configuration, element state lost"
                    ),
                    Vec::new(),
                );
                self.launch(&rec, &e.console)
            }
        };
        match res {
            Ok(run) => {
                let mut st = lock(&e.st);
                st.run = Some(run);
                st.state = "running";
                st.next_try = None;
                let kind = if st.recovering {
                    st.recovering = false;
                    "recovered"
                } else {
                    st.restarts += 1;
                    "restarted"
                };
                let n = st.restarts;
                drop(st);
                let msg = if kind == "recovered" {
                    format!("running again after a daemon restart{how}")
                } else {
                    format!("restart {n}")
                };
                self.events.push(kind, &rec, msg, Vec::new());
            }
            Err(err) => {
                let mut st = lock(&e.st);
                let delay = st.schedule_retry();
                drop(st);
                self.events.push(
                    "restart_failed",
                    &rec,
                    format!("{}; next try in {} ms", err.message, delay.as_millis()),
                    err.lines,
                );
            }
        }
    }

    /// Folds the store's journal into its database (see [`Store`]).
    pub fn flush_store(&self) {
        if let Err(err) = self.store.flush() {
            eprintln!("clickos daemon: {err}");
        }
    }

    pub fn shutting_down(&self) -> bool {
        self.shutting.load(Ordering::Relaxed)
    }
}

fn backoff(failures: u32) -> Duration {
    let d = BACKOFF_FIRST.saturating_mul(1u32 << failures.saturating_sub(1).min(16));
    d.min(BACKOFF_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        assert_eq!(backoff(1), Duration::from_millis(100));
        assert_eq!(backoff(2), Duration::from_millis(200));
        assert_eq!(backoff(4), Duration::from_millis(800));
        assert_eq!(backoff(40), BACKOFF_MAX);
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("fw-1.a_b").is_ok());
        for bad in ["", "123", ".x", "a/b", "a b", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_console_ring_keeps_the_tail() {
        let mut c = ConsoleRing::default();
        for i in 0..20000 {
            c.push(&format!("line {i} é"));
        }
        assert!(c.text.len() <= CONSOLE_RING);
        assert!(c.text.ends_with("line 19999 é\n"));
    }
}
