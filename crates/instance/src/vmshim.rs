//! The `vm` level's entry points (crates/instance/src/vm.rs), until it lands.

use crate::backend::{Backend, LaunchSpec, Prepare};

pub fn available() -> Result<(), String> {
    Err("the vm isolation level is not built yet".into())
}

pub fn launch(_spec: &LaunchSpec, _prepare: Prepare) -> Result<Box<dyn Backend>, String> {
    Err(available().unwrap_err())
}
