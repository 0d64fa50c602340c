//! The host's std-only elements: pcap and IP summary dumps, ControlSocket,
//! Linux network devices (FromDevice, ToDevice over `clickos-netdev`),
//! KernelTun/KernelTap; and the registry the driver uses. Elements reach
//! the driver only through [`crate::selector`].

use click::element::ClassSpec;
use click::registry::Registry;

pub mod controlsocket;
pub mod fromdevice;
pub mod fromdump;
pub mod fromipsummarydump;
mod ipsumdump;
mod ipsumdump_opt;
mod ipsumdump_parse;
pub mod kerneltun;
pub mod mcastsocket;
pub mod socket;
pub mod todevice;
pub mod todump;
pub mod toipsummarydump;

/// The classes this crate adds.
pub static SPECS: &[&ClassSpec] = &[
    &fromdump::SPEC,
    &todump::SPEC,
    &fromipsummarydump::SPEC,
    &toipsummarydump::SPEC,
    &controlsocket::SPEC,
    &fromdevice::SPEC,
    &todevice::SPEC,
    &kerneltun::SPEC,
    &kerneltun::TAP_SPEC,
    &socket::SPEC,
    &mcastsocket::SPEC,
];

/// The registry the driver uses: the engine's classes, SnortIDS
/// (`click-ids`) and these.
pub fn registry() -> Registry {
    let mut r = Registry::with_builtin();
    click_ids::register(&mut r);
    for s in SPECS {
        r.add(s);
    }
    r
}

pub use crate::sys::io_error_text;

/// Reads the extra-length annotation.
pub fn extra_length(p: &click::packet::Packet) -> u32 {
    p.anno().u32_at(click::packet::EXTRA_LENGTH_ANNO_OFFSET)
}

/// Sets the extra-length annotation.
pub fn set_extra_length(p: &mut click::packet::Packet, v: u32) {
    p.anno_mut()
        .set_u32_at(click::packet::EXTRA_LENGTH_ANNO_OFFSET, v)
}

/// Click's names for link types (`fake_pcap_unparse_dlt`).
pub fn encap_name(lt: u32) -> &'static str {
    use click_pcap::linktype as lt_;
    match lt {
        lt_::EN10MB => "ETHER",
        lt_::RAW | lt_::RAW_DLT12 | lt_::RAW_DLT14 | lt_::IPV4 => "IP",
        lt_::IPV6 => "IP6",
        lt_::LINUX_SLL => "SLL",
        lt_::LINUX_SLL2 => "SLL2",
        lt_::NULL => "NULL",
        lt_::LOOP => "LOOP",
        10 => "FDDI",
        105 => "802_11",
        9 => "PPP",
        104 => "HDLC",
        _ => "UNKNOWN",
    }
}

/// Parses an encapsulation name (`fake_pcap_parse_dlt`).
pub fn parse_encap(s: &str) -> Option<u32> {
    use click_pcap::linktype as lt_;
    Some(match s.to_ascii_uppercase().as_str() {
        "ETHER" | "ETHERNET" | "EN10MB" => lt_::EN10MB,
        "IP" | "RAW" => lt_::RAW,
        "IP6" | "IPV6" => lt_::IPV6,
        "SLL" | "LINUX_SLL" => lt_::LINUX_SLL,
        "SLL2" | "LINUX_SLL2" => lt_::LINUX_SLL2,
        "NULL" => lt_::NULL,
        "LOOP" => lt_::LOOP,
        "FDDI" => 10,
        "802_11" => 105,
        "PPP" => 9,
        "HDLC" => 104,
        _ => return None,
    })
}
