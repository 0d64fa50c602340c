//! Click's `ip` group: IP header checking and marking, route lookup, TTL,
//! encapsulation, checksums, fragmentation and reassembly, IP options and
//! printing. (Some classes here belong to Click's `tcpudp` and `standard`
//! groups; their specs say so.)

use crate::element::ClassSpec;

pub mod checkipheader;
pub mod checklength;
pub mod checkudpheader;
pub mod decipttl;
pub mod dropbroadcasts;
pub mod fixipsrc;
pub mod getipaddress;
pub mod ipencap;
pub mod ipfragmenter;
pub mod ipgwoptions;
pub mod ipinputcombo;
pub mod ipmirror;
pub mod ipoutputcombo;
pub mod ipprint;
pub mod ipreassembler;
pub mod iproutetable;
pub mod markipce;
pub mod markipheader;
pub mod setipaddress;
pub mod setipchecksum;
pub mod setipdscp;
pub mod settcpchecksum;
pub mod setudpchecksum;
pub mod storeipaddress;
pub mod stripipheader;
pub mod udpipencap;

pub static SPECS: &[&ClassSpec] = &[
    &checkipheader::SPEC,
    &decipttl::SPEC,
    &getipaddress::SPEC,
    &markipheader::SPEC,
    &stripipheader::SPEC,
    &stripipheader::UNSTRIP_SPEC,
    &iproutetable::RADIX_SPEC,
    &iproutetable::DIRECT_SPEC,
    &iproutetable::LINEAR_SPEC,
    &iproutetable::STATIC_SPEC,
    &setipchecksum::SPEC,
    &setudpchecksum::SPEC,
    &settcpchecksum::SPEC,
    &checkudpheader::UDP_SPEC,
    &checkudpheader::TCP_SPEC,
    &checklength::SPEC,
    &setipaddress::SPEC,
    &dropbroadcasts::SPEC,
    &fixipsrc::SPEC,
    &ipencap::SPEC,
    &udpipencap::SPEC,
    &ipfragmenter::SPEC,
    &ipreassembler::SPEC,
    &ipprint::SPEC,
    &ipgwoptions::SPEC,
    &checkipheader::SPEC2,
    &storeipaddress::SPEC,
    &setipdscp::SPEC,
    &markipce::SPEC,
    &ipmirror::SPEC,
    &ipinputcombo::SPEC,
    &ipoutputcombo::SPEC,
    &iproutetable::RANGE_SPEC,
];
