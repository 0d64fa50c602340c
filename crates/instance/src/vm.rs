//! The `vm` isolation level: a KVM micro-VM per instance (`clickos-vmm`).
//!
//! The guest image (the instance runtime built for `x86_64-unknown-none`)
//! runs in ring 3 of its own VM; the control region is guest RAM at GPA 0
//! and each vNIC is its own memfd-backed memslot. See `clickos_vmm`.

use crate::backend::{Backend, Ended, LaunchSpec, Prepare};
use clickos_ring::VnicInfo;
use clickos_vmm::{Exit, Vm, VmConfig, VnicConfig};
use std::time::Duration;

/// Whether `/dev/kvm` works here (opens it and creates a VM).
pub fn available() -> Result<(), String> {
    clickos_vmm::available()
}

/// Boots an instance in a micro-VM.
pub fn launch(spec: &LaunchSpec, prepare: Prepare) -> Result<Box<dyn Backend>, String> {
    let console = spec.console.clone();
    let cfg = VmConfig {
        id: spec.id,
        memory: if spec.memory == 0 {
            clickos_vmm::DEFAULT_MEMORY
        } else {
            spec.memory
        },
        vnics: spec
            .vnics
            .iter()
            .map(|v| VnicConfig {
                slots: v.slots,
                buf_size: v.buf_size,
                mac: v.mac,
            })
            .collect(),
        fault_injection: spec.fault_injection,
        console: std::sync::Arc::new(move |id, text| console(id, text)),
    };
    let vm = Vm::create(&cfg, prepare)?;
    Ok(Box::new(VmBackend { vm }))
}

/// Builds an instance's micro-VM from a parsed snapshot or a migration's
/// first part, not yet running.
pub fn prepare_restore(
    snap: &clickos_vmm::snapshot::Snapshot,
    spec: &LaunchSpec,
) -> Result<clickos_vmm::PreparedVm, String> {
    let console = spec.console.clone();
    Vm::prepare_restore(
        snap,
        spec.id,
        std::sync::Arc::new(move |id, text| console(id, text)),
    )
}

/// Starts a prepared micro-VM (after a migration's first part, with its
/// second).
pub fn start_prepared(
    p: clickos_vmm::PreparedVm,
    delta: Option<&clickos_vmm::snapshot::Snapshot>,
) -> Result<Box<dyn Backend>, String> {
    Ok(Box::new(VmBackend {
        vm: p.start(delta)?,
    }))
}

struct VmBackend {
    vm: Vm,
}

impl Backend for VmBackend {
    fn control(&self) -> *mut u8 {
        self.vm.control()
    }
    fn vnic(&self, k: usize) -> Option<(*mut u8, VnicInfo)> {
        self.vm.vnic(k)
    }
    fn wake(&self) {
        self.vm.wake()
    }
    fn asleep(&self) -> Option<bool> {
        Some(self.vm.asleep())
    }
    fn wait_notify(&self, timeout: Duration) {
        self.vm.wait_notify(timeout)
    }
    fn wait_vnic(&self, k: usize, timeout: Duration) {
        self.vm.wait_vnic(k, timeout)
    }
    fn kick_fd(&self, k: usize) -> Option<std::os::fd::RawFd> {
        self.vm.kick_fd(k)
    }
    fn ended(&self) -> Option<Ended> {
        self.vm.exit().map(|e| match e {
            Exit::Exited(c) => Ended::Exited(c),
            Exit::Panicked(m) => Ended::Panicked(m),
            Exit::Crashed(m) => Ended::Crashed(m),
            Exit::Killed(m) => Ended::Killed(m),
        })
    }
    fn kill(&self, why: &str) {
        self.vm.kill(why)
    }
    fn phases(&self) -> Vec<(&'static str, Duration)> {
        self.vm.phases()
    }
    fn memory_footprint(&self) -> Option<u64> {
        Some(self.vm.memory_footprint())
    }
    fn snapshot(&self, note: &[u8]) -> Result<Vec<u8>, String> {
        self.vm.snapshot(note)
    }
    fn unpause(&self) {
        self.vm.unpause()
    }
    fn precopy(&self, note: &[u8]) -> Result<Vec<u8>, String> {
        self.vm.precopy(note)
    }
    fn snapshot_delta(&self, note: &[u8]) -> Result<Vec<u8>, String> {
        self.vm.snapshot_delta(note)
    }
    fn end_precopy(&self) {
        self.vm.end_precopy()
    }
}
