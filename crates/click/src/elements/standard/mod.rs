//! Click's `standard` group: sources, sinks, counters, queues, switches.

use crate::element::ClassSpec;

pub mod discard;
pub mod infinitesource;

pub static SPECS: &[&ClassSpec] = &[&discard::SPEC, &infinitesource::SPEC];
