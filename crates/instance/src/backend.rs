//! The contract between the instance layer and an isolation level.
//!
//! A backend owns the instance's execution (a vCPU thread, a child process,
//! or a thread) and its shared memory: a 1 MiB *control region* laid out as
//! in `clickos_ring::layout` (boot information, mailbox, console page, data
//! area) and one region per vNIC. Everything above this trait (the mailbox
//! protocol, the watchdog, handler calls, vNIC ports) is shared by all
//! levels, so behaviour is the same at every level.

use clickos_ring::VnicInfo;
use std::sync::Arc;
use std::time::Duration;

/// Where an instance runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Isolation {
    /// A KVM micro-VM (the default where `/dev/kvm` works).
    Vm,
    /// A child process confined with namespaces, seccomp and a memory limit.
    Process,
    /// A thread in this process (development; no isolation).
    None,
}

/// Receives console output: (instance id, text).
pub type ConsoleSink = Arc<dyn Fn(u32, &str) + Send + Sync>;

/// One vNIC's geometry.
#[derive(Clone, Copy, Debug)]
pub struct VnicSpec {
    pub slots: u32,
    pub buf_size: u32,
    pub mac: [u8; 6],
}

/// What a backend needs to start an instance.
#[derive(Clone)]
pub struct LaunchSpec {
    pub id: u32,
    /// Guest RAM (vm) or memory limit (process) in bytes.
    pub memory: u64,
    pub vnics: Vec<VnicSpec>,
    /// Allow the mailbox FAULT operation (tests and benchmarks only).
    pub fault_injection: bool,
    /// The `clickos` executable, for the process level (it re-executes
    /// itself as `clickos __instance`).
    pub helper_exe: Option<std::path::PathBuf>,
    pub console: ConsoleSink,
}

/// How an instance ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    /// It left cleanly (STOP request) with this code.
    Exited(u32),
    /// The engine panicked; the message (includes "memory allocation …
    /// failed" when it ran out of memory).
    Panicked(String),
    /// It crashed: a fault, a bad hypercall, a signal, a corrupted mailbox
    /// or ring; what happened.
    Crashed(String),
    /// The host killed it (destroy, watchdog); why.
    Killed(String),
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ended::Exited(c) => write!(f, "exited with code {c}"),
            Ended::Panicked(m) => write!(f, "panicked: {m}"),
            Ended::Crashed(m) => write!(f, "crashed: {m}"),
            Ended::Killed(m) => write!(f, "killed: {m}"),
        }
    }
}

/// A running instance at some isolation level.
///
/// Start-up order: the backend maps the control region and the vNIC regions,
/// writes the boot information, calls `prepare(control)` (the instance layer
/// posts the initial INSTALL request there), and only then lets the
/// instance run.
pub trait Backend: Send + Sync {
    /// The host's mapping of the control region (`CONTROL_SIZE` bytes).
    fn control(&self) -> *mut u8;
    /// The host's mapping of vNIC `k` and its geometry (`base` = the
    /// instance-side address).
    fn vnic(&self, k: usize) -> Option<(*mut u8, VnicInfo)>;
    /// Wakes the instance if it is idle (writes its wake eventfd).
    fn wake(&self);
    /// Whether the instance's thread is (still) blocked waiting to be
    /// woken, if the backend can tell cheaply (`None`: it cannot; the
    /// mailbox's state is then the only sign).
    fn asleep(&self) -> Option<bool> {
        None
    }
    /// Blocks until the instance notifies (CTRL_DONE), ends, or `timeout`
    /// passes. May return early; callers re-check the mailbox.
    fn wait_notify(&self, timeout: Duration);
    /// Blocks until vNIC `k`'s TX ring is kicked or `timeout` passes.
    fn wait_vnic(&self, k: usize, timeout: Duration);
    /// The descriptor that becomes readable when vNIC `k`'s TX ring is
    /// kicked (and when the instance ends), for callers that poll many
    /// vNICs at once (the switch). Valid for the life of the backend; the
    /// caller only polls and drains it.
    fn kick_fd(&self, k: usize) -> Option<std::os::fd::RawFd> {
        let _ = k;
        None
    }
    /// `Some` once the instance has ended.
    fn ended(&self) -> Option<Ended>;
    /// Ends the instance now (idempotent); afterwards `ended()` is `Some`
    /// (`Killed(why)` unless it had already ended).
    fn kill(&self, why: &str);
    /// Start-up phases with their durations, for `--time`.
    fn phases(&self) -> Vec<(&'static str, Duration)>;
    /// Host memory attributable to this instance, in bytes, if known.
    fn memory_footprint(&self) -> Option<u64> {
        None
    }
    /// Pauses the instance at a safe point and returns its whole state as
    /// a snapshot file (with `note` in it); it stays paused until
    /// [`unpause`](Self::unpause) or [`kill`](Self::kill). Only the `vm`
    /// level can.
    fn snapshot(&self, note: &[u8]) -> Result<Vec<u8>, String> {
        let _ = note;
        Err("not supported at this isolation level".into())
    }
    /// Lets a paused instance run on.
    fn unpause(&self) {}
    /// The first part of a live migration, taken while it runs (see
    /// `clickos_vmm::Vm::precopy`). Only the `vm` level can.
    fn precopy(&self, note: &[u8]) -> Result<Vec<u8>, String> {
        let _ = note;
        Err("not supported at this isolation level".into())
    }
    /// The second part: pauses it and returns its registers, `note` and
    /// the pages changed since [`precopy`](Self::precopy); it stays paused.
    fn snapshot_delta(&self, note: &[u8]) -> Result<Vec<u8>, String> {
        let _ = note;
        Err("not supported at this isolation level".into())
    }
    /// Forgets what [`precopy`](Self::precopy) kept.
    fn end_precopy(&self) {}
}

/// The preparation hook: called with the control region before the
/// instance runs.
pub type Prepare<'a> = &'a mut dyn FnMut(*mut u8);
