//! Click's `ethernet` group: Ethernet encapsulation and address rewriting.

use crate::element::ClassSpec;

pub mod etherencap;
pub mod ethermirror;
pub mod etherrewrite;
pub mod hostetherfilter;
pub mod storeetheraddress;

pub static SPECS: &[&ClassSpec] = &[
    &etherencap::SPEC,
    &ethermirror::SPEC,
    &etherrewrite::SPEC,
    &hostetherfilter::SPEC,
    &storeetheraddress::SPEC,
];
