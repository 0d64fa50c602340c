//! Click's `analysis` group: elements for trace analysis.

use crate::element::ClassSpec;

pub mod timefilter;

pub static SPECS: &[&ClassSpec] = &[&timefilter::SPEC];
