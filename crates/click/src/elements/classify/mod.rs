use crate::element::ClassSpec;

pub static SPECS: &[&ClassSpec] = &[];
