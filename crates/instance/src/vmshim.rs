//! The `vm` level's entry points (crates/instance/src/vm.rs).

pub use crate::vm::{available, launch};
