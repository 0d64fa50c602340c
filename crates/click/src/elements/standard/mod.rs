//! Click's `standard` group: sources, sinks, counters, queues, switches,
//! printing and scripting.

use crate::element::ClassSpec;

pub mod averagecounter;
pub mod counter;
pub mod discard;
pub mod idle;
pub mod infinitesource;
pub mod null;
pub mod paint;
pub mod print;
pub mod queue;
pub mod ratedsource;
pub mod rrsched;
pub mod script;
pub mod strip;
pub mod switch;
pub mod tee;
pub mod timedsource;
pub mod unqueue;
pub mod util;

pub static SPECS: &[&ClassSpec] = &[
    &averagecounter::SPEC,
    &counter::SPEC,
    &discard::SPEC,
    &idle::SPEC,
    &infinitesource::SPEC,
    &null::SPEC,
    &null::PUSHNULL_SPEC,
    &null::PULLNULL_SPEC,
    &paint::SPEC,
    &paint::PAINTSWITCH_SPEC,
    &paint::CHECKPAINT_SPEC,
    &print::SPEC,
    &queue::SPEC,
    &queue::SIMPLEQUEUE_SPEC,
    &ratedsource::SPEC,
    &rrsched::SPEC,
    &script::SPEC,
    &script::DRIVERMANAGER_SPEC,
    &strip::SPEC,
    &strip::UNSTRIP_SPEC,
    &switch::SPEC,
    &switch::STATICSWITCH_SPEC,
    &switch::PULLSWITCH_SPEC,
    &switch::RRSWITCH_SPEC,
    &switch::HASHSWITCH_SPEC,
    &tee::SPEC,
    &tee::PULLTEE_SPEC,
    &timedsource::SPEC,
    &unqueue::SPEC,
];
