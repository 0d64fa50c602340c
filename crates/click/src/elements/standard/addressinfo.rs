//! AddressInfo: names for IP and Ethernet addresses.

use crate::prelude::*;

/// `AddressInfo(NAME ADDRESS [ADDRESS...], ...)`.
#[derive(Default)]
pub struct AddressInfo;

pub static SPEC: ClassSpec = ClassSpec {
    name: "AddressInfo",
    port_count: "0/0",
    processing: "a/a",
    group: "standard",
    signature: "AddressInfo(NAME ADDRESS [ADDRESS...], ...)",
    summary: "Specifies address information.",
    description: "Gives names to addresses, for the other elements' arguments. Each argument \
is a name followed by one or more addresses: an IPv4 address (`1.0.0.1`), an IPv4 prefix \
(`1.0.0.0/8`; one with host bits, such as `1.0.0.1/8`, also names the address `1.0.0.1`), an \
Ethernet address (`00:0a:95:9d:68:16`), or an IPv6 address or prefix. Empty arguments are \
ignored; a later definition of a name replaces an earlier one.

Every argument that takes an IP address, prefix or Ethernet address accepts a name wherever \
it would take the address (ARPQuerier, ARPResponder, EtherEncap, EtherRewrite, IPEncap, \
UDPIPEncap, CheckIPHeader, FixIPSrc, IPGWOptions, ICMPError, SetIPAddress, HostEtherFilter, \
the IP lookup elements' routes, IPFilter and IPClassifier patterns, and their handlers). A \
name may carry a suffix saying which kind of address it means:

- `NAME:ip` (or `NAME:ip4`): the IP address;
- `NAME:ipnet` (or `NAME:net`, `NAME:ip4net`): the IP prefix;
- `NAME:bcast`: the prefix's broadcast address (host bits all ones);
- `NAME:gw`: the prefix's first host (host part 1), unless `NAME:gw` is itself defined;
- `NAME:eth` (or `NAME:ether`, `NAME:ethernet`): the Ethernet address.

A bare `NAME` means whichever kind the argument wants; for arguments that take either an \
address or a prefix (route destinations, ARPQuerier's IP, ARPResponder's entries), the address \
wins when both are defined, as in Click. Names defined inside a compound element are seen only \
inside that compound (and compounds nested in it), where they hide names defined outside. \
Every AddressInfo's names are known before any other element is configured, including under \
`-j N` where elements run on several threads.

Unlike Click at user level, names of the host's network devices are not looked up.",
    ports: "none",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(AddressInfo),
};

impl Element for AddressInfo {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        // the names were defined before configuration (Router::from_flat);
        // define them again on a scratch table to report what is wrong
        let mut scratch = cx.names.clone();
        let errs = scratch.define_addresses(cx.name, &click_lang::split_args(config));
        if errs.is_empty() {
            Ok(())
        } else {
            Err(errs.join("\n"))
        }
    }

    crate::element_any!();
}
