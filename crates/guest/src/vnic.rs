//! `FromVNIC` and `ToVNIC`: the elements on an instance's vNIC rings.

use click::prelude::*;

pub fn register(_r: &mut Registry) {}
