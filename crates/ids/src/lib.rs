//! SnortIDS: an intrusion-detection element for ClickOS that matches
//! packets against a documented subset of Snort 3 rules.
//!
//! no_std + alloc, like the engine: it runs inside a micro-VM instance as
//! well as at user level. Content patterns are found with one
//! `aho-corasick` pass per payload; `pcre` runs on `regex-automata`.
//! [`rules`] parses rule text, [`matcher`] compiles and runs it, and
//! [`element`] is the Click element.
#![no_std]

extern crate alloc;

pub mod element;
pub mod matcher;
pub mod rules;

use click::element::ClassSpec;
use click::registry::Registry;

/// The classes this crate adds.
pub static SPECS: &[&ClassSpec] = &[&element::SPEC];

/// Adds this crate's classes to a registry.
pub fn register(r: &mut Registry) {
    for s in SPECS {
        r.add(s);
    }
}
