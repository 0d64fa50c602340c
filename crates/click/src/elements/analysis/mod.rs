//! Click's `analysis` group: elements for trace analysis.

use crate::element::ClassSpec;

pub mod adjusttimestamp;
pub mod aggregatecounter;
pub mod aggregateip;
pub mod aggregateipflows;
pub mod ipfixexport;
pub mod ipratemon;
pub mod settimestampdelta;
pub mod timefilter;

pub static SPECS: &[&ClassSpec] = &[
    &adjusttimestamp::SPEC,
    &aggregatecounter::SPEC,
    &aggregateip::SPEC,
    &aggregateipflows::SPEC,
    &ipfixexport::SPEC,
    &ipratemon::SPEC,
    &settimestampdelta::SPEC,
    &timefilter::SPEC,
];
