//! What several elements share, kept beside `elements/` as Click keeps it
//! in `lib/`: number formatting and parsing with Click's conventions
//! (`String(double)`, `cp_unparse_real2`, bandwidths, intervals), the rate
//! estimator (`ewma.hh`), token buckets and gap rates (`tokenbucket.hh`,
//! `gaprate.hh`), handler calls and handler values (`HandlerCall`), the
//! arguments several element families read (DATA, DELAY, rates, IP
//! protocols, ports, annotations), Click's LLRPC numbers, a seeded random
//! generator (and Click's shared `random()`) and the drop
//! accounting of the `Check…Header` elements.
//!
//! An element file holds one element (or a family sharing one `SPEC`
//! file); anything a second element needs goes here.

pub mod args;
pub mod cgnat;
pub mod drops;
pub mod ewma;
pub mod handlers;
pub mod intmap;
pub mod iprw;
pub mod llrpc;
pub mod rate;
pub mod rng;
pub mod unparse;
