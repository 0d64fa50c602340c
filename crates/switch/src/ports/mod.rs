//! The port kinds: instance vNICs, Linux interfaces, tap devices, pcap
//! files, and in-memory sources and sinks (tests and benchmarks).

pub mod mem;
pub mod netdev;
pub mod pcap;
pub mod tap;
pub mod vnic;
