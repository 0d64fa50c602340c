//! Click's `standard` group: sources, sinks, counters, queues, switches,
//! printing and scripting, queueing, scheduling and shaping.

use crate::element::ClassSpec;

pub mod addressinfo;
pub mod align;
pub mod alignmentinfo;
pub mod averagecounter;
pub mod bypass;
pub mod clipboard;
pub mod confparsetest;
pub mod counter;
pub mod delayshaper;
pub mod delayunqueue;
pub mod discard;
pub mod hub;
pub mod idle;
pub mod infinitesource;
pub mod inputswitch;
pub mod linkunqueue;
pub mod markmacheader;
pub mod message;
pub mod meter;
pub mod neighborhoodtest;
pub mod notifierdebug;
pub mod null;
pub mod pad;
pub mod paint;
pub mod portinfo;
pub mod print;
pub mod priosched;
pub mod queue;
pub mod queueyanktest;
pub mod randomsample;
pub mod randomseed;
pub mod randomswitch;
pub mod ratedsource;
pub mod ratedsplitter;
pub mod ratedunqueue;
pub mod red;
pub mod resize;
pub mod rrsched;
pub mod scheduleinfo;
pub mod script;
pub mod setpackettype;
pub mod settimestamp;
pub mod shaper;
pub mod staticthreadsched;
pub mod storedata;
pub mod stridesched;
pub mod strip;
pub mod suppressor;
pub mod switch;
pub mod tee;
pub mod timedsink;
pub mod timedsource;
pub mod timedunqueue;
pub mod timertest;
pub mod timesortedsched;
pub mod tokenbuckettest;
pub mod truncate;
pub mod unqueue;

pub static SPECS: &[&ClassSpec] = &[
    &addressinfo::SPEC,
    &align::SPEC,
    &inputswitch::SPEC,
    &linkunqueue::SPEC,
    &markmacheader::SPEC,
    &timertest::SPEC,
    &notifierdebug::SPEC,
    &tokenbuckettest::SPEC,
    &confparsetest::SPEC,
    &randomseed::SPEC,
    &neighborhoodtest::SPEC,
    &queueyanktest::SPEC,
    &message::SPEC,
    &averagecounter::SPEC,
    &counter::SPEC,
    &delayshaper::SPEC,
    &discard::SPEC,
    &idle::SPEC,
    &infinitesource::SPEC,
    &null::SPEC,
    &null::PUSHNULL_SPEC,
    &null::PULLNULL_SPEC,
    &paint::SPEC,
    &paint::PAINTSWITCH_SPEC,
    &paint::CHECKPAINT_SPEC,
    &paint::PAINTTEE_SPEC,
    &portinfo::SPEC,
    &print::SPEC,
    &priosched::SPEC,
    &queue::SPEC,
    &queue::SIMPLEQUEUE_SPEC,
    &queue::FRONTDROPQUEUE_SPEC,
    &queue::NOTIFIERQUEUE_SPEC,
    &queue::FULLNOTEQUEUE_SPEC,
    &queue::QUICKNOTEQUEUE_SPEC,
    &randomswitch::SPEC,
    &ratedsource::SPEC,
    &ratedsplitter::SPEC,
    &ratedsplitter::BANDWIDTHRATEDSPLITTER_SPEC,
    &ratedunqueue::SPEC,
    &ratedunqueue::BANDWIDTHRATEDUNQUEUE_SPEC,
    &red::SPEC,
    &rrsched::SPEC,
    &script::SPEC,
    &script::DRIVERMANAGER_SPEC,
    &shaper::SPEC,
    &shaper::BANDWIDTHSHAPER_SPEC,
    &staticthreadsched::SPEC,
    &bypass::SPEC,
    &timesortedsched::SPEC,
    &strip::SPEC,
    &strip::UNSTRIP_SPEC,
    &strip::STRIPTONETWORKHEADER_SPEC,
    &scheduleinfo::SPEC,
    &settimestamp::SPEC,
    &truncate::SPEC,
    &suppressor::SPEC,
    &switch::SPEC,
    &switch::STATICSWITCH_SPEC,
    &switch::PULLSWITCH_SPEC,
    &switch::SIMPLEPULLSWITCH_SPEC,
    &switch::RRSWITCH_SPEC,
    &switch::HASHSWITCH_SPEC,
    &tee::SPEC,
    &tee::PULLTEE_SPEC,
    &timedsource::SPEC,
    &unqueue::SPEC,
    &alignmentinfo::SPEC,
    &clipboard::SPEC,
    &delayunqueue::SPEC,
    &hub::SPEC,
    &meter::SPEC,
    &meter::BANDWIDTHMETER_SPEC,
    &pad::SPEC,
    &queue::MIXEDQUEUE_SPEC,
    &randomsample::SPEC,
    &resize::SPEC,
    &rrsched::SIMPLERRSCHED_SPEC,
    &setpackettype::SPEC,
    &storedata::SPEC,
    &stridesched::SPEC,
    &stridesched::STRIDESWITCH_SPEC,
    &timedsink::SPEC,
    &timedunqueue::SPEC,
    &timedunqueue::BURSTER_SPEC,
];
