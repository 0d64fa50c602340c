//! Click's `ethernet` group: Ethernet encapsulation and address rewriting,
//! 802.1Q tags.

use crate::element::ClassSpec;

pub mod ensureether;
pub mod etherencap;
pub mod ethermirror;
pub mod etherrewrite;
pub mod ethervlanencap;
pub mod hostetherfilter;
pub mod setvlananno;
pub mod storeetheraddress;
pub mod stripethervlanheader;
pub mod vlandecap;
pub mod vlanencap;

pub static SPECS: &[&ClassSpec] = &[
    &ensureether::SPEC,
    &etherencap::SPEC,
    &ethermirror::SPEC,
    &etherrewrite::SPEC,
    &ethervlanencap::SPEC,
    &ethervlanencap::ETHERVLANENCAP_OLD_SPEC,
    &hostetherfilter::SPEC,
    &setvlananno::SPEC,
    &setvlananno::SETVLANANNO_OLD_SPEC,
    &storeetheraddress::SPEC,
    &stripethervlanheader::SPEC,
    &stripethervlanheader::STRIPETHERVLANHEADER_OLD_SPEC,
    &vlandecap::SPEC,
    &vlanencap::SPEC,
];
