//! ClickOS instances at every isolation level.
pub mod backend;
pub use backend::{Backend, Ended, Isolation, LaunchSpec, VnicSpec};
