//! Handlers: finding `element.handler` (or a global handler), the
//! standard handlers every element has (`name`, `class`, `config`,
//! `ports`, `handlers`, and a task's `scheduled` and `home_thread`), the
//! router's global handlers (`version`, `list`, `stop`, ...) beside the
//! host's, reads and writes through the peers when the router runs beside
//! others, and element lookup by name for handler calls.

use super::{Core, VERSION};
use crate::element::{ConfigureCtx, HandlerMode};
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::fmt::Write as _;

/// The largest value a handler may return, unless the host sets another
/// ([`RouterOptions::max_handler_value`](super::RouterOptions::max_handler_value)):
/// 16 MiB, far above what handlers answer (a routing table dump reaches it
/// at some 700,000 routes), far below what would exhaust a host's memory
/// when a value is copied a few times on its way out. Elements that build
/// values from their input (Script's `sprintf`, `$(...)` expansions and
/// variables) stop at the router's limit themselves, so the huge string is
/// never built; the router checks every element's value against it too.
pub const MAX_HANDLER_VALUE: usize = 16 << 20;

/// What a host that can catch panics lends the router for handler calls
/// ([`RouterOptions::call_guard`](super::RouterOptions::call_guard)): it
/// runs `call` and returns `Err(message)` if `call` panicked, as a
/// `std::panic::catch_unwind` wrapper does. The router turns that into the
/// handler error "handler panicked: MESSAGE" and runs on; it resets its
/// element slots' busy flags as the panic unwinds through them, and its
/// `RefCell` borrows end with their guards. The engine is `no_std` and
/// cannot catch anything itself; a host built with `panic=abort` (the
/// micro-VM guest) has no guard, and its defence is that handler values
/// are bounded ([`MAX_HANDLER_VALUE`]).
///
/// Only handler calls go through the guard (reads, writes, deferred
/// writes), never the packet path.
pub type CallGuard = fn(call: &mut dyn FnMut()) -> Result<(), String>;

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

impl Core {
    /// Splits `element.handler` into the element's index and the handler
    /// name; a path without a dot names a global handler.
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

    /// Runs one handler call under the host's call guard, if it gave one:
    /// a panic in it becomes a handler error.
    pub(super) fn guarded<R>(
        &self,
        call: impl FnOnce() -> Result<R, HandlerError>,
    ) -> Result<R, HandlerError> {
        let Some(guard) = self.call_guard else {
            return call();
        };
        let mut call = Some(call);
        let mut out = None;
        let caught = guard(&mut || {
            if let Some(c) = call.take() {
                out = Some(c());
            }
        });
        match (caught, out) {
            (Ok(()), Some(r)) => r,
            (Ok(()), None) => Err(HandlerError::Failed("handler was not called".into())),
            (Err(msg), _) => Err(HandlerError::Failed(format!("handler panicked: {msg}"))),
        }
    }

    /// Reads a handler of this router itself (peers serve calls with it).
    pub fn read_handler_local(&self, path: &str) -> Result<String, HandlerError> {
        self.guarded(|| self.read_unguarded(path))
    }

    fn read_unguarded(&self, path: &str) -> Result<String, HandlerError> {
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
            Some(Some(r)) => self.checked_value(r),
        }
    }

    /// An element handler's value, refused when it is over the limit.
    fn checked_value(&self, r: Result<String, String>) -> Result<String, HandlerError> {
        match r {
            Ok(v) if v.len() > self.max_handler_value => Err(HandlerError::Failed(format!(
                "value too large ({} bytes; handler values are limited to {} bytes)",
                v.len(),
                self.max_handler_value
            ))),
            r => r.map_err(HandlerError::Failed),
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
        self.guarded(|| self.read_param_unguarded(path, param))
    }

    fn read_param_unguarded(&self, path: &str, param: &str) -> Result<String, HandlerError> {
        let (elem, h) = self.find_handler_target(path)?;
        let Some(i) = elem else {
            return Err(HandlerError::NoSuchHandler(path.into()));
        };
        match self.with_elem(i, |e, cx| e.read_handler_param(&h, param, cx)) {
            None => Err(HandlerError::Busy(path.into())),
            Some(None) => Err(HandlerError::NoSuchHandler(path.into())),
            Some(Some(r)) => self.checked_value(r),
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
        self.guarded(|| self.write_unguarded(path, value))
    }

    fn write_unguarded(&self, path: &str, value: &str) -> Result<(), HandlerError> {
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
                        self.console.error_line(&format!("  {}", w));
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

    /// Whether an element of this name exists here (or, with peers, in
    /// any of the routers).
    pub fn has_element(&self, name: &str) -> bool {
        self.names.contains_key(name) || self.peers.as_ref().is_some_and(|p| p.has_element(name))
    }

    /// Whether elements named `name/...` (a compound's components) exist.
    pub fn has_compound(&self, name: &str) -> bool {
        has_prefix(&self.names, name) || self.peers.as_ref().is_some_and(|p| p.has_compound(name))
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
