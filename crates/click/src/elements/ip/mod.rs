//! Click's `ip` group: IP header checking and marking, route lookup, TTL.

use crate::element::ClassSpec;

pub mod checkipheader;
pub mod decipttl;
pub mod getipaddress;
pub mod iproutetable;
pub mod markipheader;
pub mod stripipheader;

pub static SPECS: &[&ClassSpec] = &[
    &checkipheader::SPEC,
    &decipttl::SPEC,
    &getipaddress::SPEC,
    &markipheader::SPEC,
    &stripipheader::SPEC,
    &stripipheader::UNSTRIP_SPEC,
    &iproutetable::RADIX_SPEC,
    &iproutetable::DIRECT_SPEC,
    &iproutetable::LINEAR_SPEC,
    &iproutetable::STATIC_SPEC,
];
