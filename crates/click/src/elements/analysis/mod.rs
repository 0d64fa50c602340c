//! Click's `analysis` group: elements for trace analysis.

use crate::element::ClassSpec;

pub mod aggregatecounter;
pub mod aggregateip;
pub mod aggregateipflows;
pub mod ipfixexport;
pub mod timefilter;

pub static SPECS: &[&ClassSpec] = &[
    &aggregatecounter::SPEC,
    &aggregateip::SPEC,
    &aggregateipflows::SPEC,
    &ipfixexport::SPEC,
    &timefilter::SPEC,
];
