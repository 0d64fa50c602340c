//! ClickOS instances at every isolation level.
//!
//! [`Instance::create`] starts a Click configuration as an instance at one
//! of three levels ([`Isolation`]): a KVM micro-VM (`vm`), a confined child
//! process (`process`), or a thread of this process (`none`). Everything
//! above the [`Backend`] trait (the mailbox client, the watchdog, handler
//! calls, vNIC ports) is shared, so an instance behaves the same at every
//! level.
pub mod backend;
mod console;
mod endpoint;
mod error;
mod instance;
pub mod platform;
pub mod process;
pub mod thread;
pub mod vm;
mod watchdog;

#[cfg(test)]
mod tests;

pub use backend::{Backend, ConsoleSink, Ended, Isolation, LaunchSpec, Prepare, VnicSpec};
pub use console::ConsoleLimits;
pub use endpoint::{QueueError, VnicEndpoint, VnicStats};
pub use error::{ConfigError, CreateError, HandlerError};
pub use instance::{Instance, InstanceOptions, PreparedResume, State, VnicPort};

/// Checks a snapshot file's bytes (as [`Instance::resume`] would) and
/// returns the note it carries, creating nothing.
pub fn snapshot_note(snapshot: &[u8]) -> Result<Vec<u8>, String> {
    clickos_vmm::snapshot::parse(snapshot).map(|s| s.note().to_vec())
}

/// Starts a backend at `level`.
pub fn launch_backend(
    level: Isolation,
    spec: &LaunchSpec,
    prepare: Prepare,
) -> Result<Box<dyn Backend>, String> {
    match level {
        Isolation::Vm => vm::launch(spec, prepare),
        Isolation::Process => process::launch(spec, prepare),
        Isolation::None => thread::launch(spec, prepare),
    }
}

impl Isolation {
    /// `vm` where KVM works, else `process` with a one-line notice saying
    /// why (for the CLI to print).
    pub fn default_for_host() -> (Isolation, Option<String>) {
        match vm::available() {
            Ok(()) => (Isolation::Vm, None),
            Err(why) => (
                Isolation::Process,
                Some(format!(
                    "note: isolation level vm unavailable ({why}); using process"
                )),
            ),
        }
    }

    /// Whether this level can run here (`vm` needs KVM).
    pub fn available(self) -> Result<(), String> {
        match self {
            Isolation::Vm => vm::available(),
            Isolation::Process | Isolation::None => Ok(()),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Isolation::Vm => "vm",
            Isolation::Process => "process",
            Isolation::None => "none",
        }
    }
}

impl std::fmt::Display for Isolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Isolation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "vm" => Ok(Isolation::Vm),
            "process" => Ok(Isolation::Process),
            "none" => Ok(Isolation::None),
            _ => Err(format!(
                "unknown isolation level '{s}' (expected vm, process or none)"
            )),
        }
    }
}
