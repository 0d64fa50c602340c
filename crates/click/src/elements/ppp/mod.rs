//! PPP over Ethernet: a PPPoE access concentrator (a software BRAS).

use crate::element::ClassSpec;

pub mod pppoeserver;

pub static SPECS: &[&ClassSpec] = &[&pppoeserver::SPEC];
