//! Click's `arp` group: ARP resolution, answering and checking.

use crate::element::ClassSpec;

pub mod arpprint;
pub mod arpquerier;
pub mod arpresponder;
pub mod arptable;
pub mod checkarpheader;

pub static SPECS: &[&ClassSpec] = &[
    &arpprint::SPEC,
    &arpquerier::SPEC,
    &arpresponder::SPEC,
    &arptable::SPEC,
    &checkarpheader::SPEC,
];
