//! Click's `icmp` group: ICMP errors, echo replies and header checks.

use crate::element::ClassSpec;

pub mod checkicmpheader;
pub mod icmperror;
pub mod icmpipencap;
pub mod icmppingencap;
pub mod icmppingresponder;

pub static SPECS: &[&ClassSpec] = &[
    &checkicmpheader::SPEC,
    &icmperror::SPEC,
    &icmpipencap::SPEC,
    &icmppingresponder::SPEC,
    &icmppingencap::SPEC,
];
