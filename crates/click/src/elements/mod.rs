//! The element library, grouped as Click groups it. Each group module
//! exports `SPECS`, the classes it defines.

use crate::element::ClassSpec;
use crate::registry::Registry;
use alloc::vec::Vec;

pub mod analysis;
pub mod arp;
pub mod classify;
pub mod ethernet;
pub mod icmp;
pub mod ip;
pub mod ppp;
pub mod standard;
pub mod tcpudp;

impl Registry {
    /// Every element class the engine itself provides.
    ///
    /// Defined here, beside the classes, rather than in `registry.rs`: the
    /// element files depend on the router (through `Ctx`), so the router
    /// and the registry must not depend on them.
    pub fn with_builtin() -> Registry {
        let mut r = Registry::new();
        for s in all() {
            r.add(s);
        }
        r
    }
}

/// Every built-in class.
pub fn all() -> Vec<&'static ClassSpec> {
    let mut v = Vec::new();
    v.extend_from_slice(standard::SPECS);
    v.extend_from_slice(ip::SPECS);
    v.extend_from_slice(ethernet::SPECS);
    v.extend_from_slice(classify::SPECS);
    v.extend_from_slice(arp::SPECS);
    v.extend_from_slice(icmp::SPECS);
    v.extend_from_slice(analysis::SPECS);
    v.extend_from_slice(tcpudp::SPECS);
    v.extend_from_slice(ppp::SPECS);
    v
}
