//! Click's `ethernet` group: Ethernet encapsulation and address rewriting,
//! 802.1Q tags.

use crate::element::ClassSpec;

pub mod ensureether;
pub mod etherencap;
pub mod ethermirror;
pub mod etherrewrite;
pub mod hostetherfilter;
pub mod setvlananno;
pub mod storeetheraddress;
pub mod vlandecap;
pub mod vlanencap;

pub static SPECS: &[&ClassSpec] = &[
    &ensureether::SPEC,
    &etherencap::SPEC,
    &ethermirror::SPEC,
    &etherrewrite::SPEC,
    &hostetherfilter::SPEC,
    &setvlananno::SPEC,
    &storeetheraddress::SPEC,
    &vlandecap::SPEC,
    &vlanencap::SPEC,
];
