//! PortInfo: names for TCP and UDP ports.

use crate::prelude::*;

/// `PortInfo(NAME PORT[/PROTOCOL], ...)`.
#[derive(Default)]
pub struct PortInfo;

pub static SPEC: ClassSpec = ClassSpec {
    name: "PortInfo",
    port_count: "0/0",
    processing: "a/a",
    group: "standard",
    signature: "PortInfo(NAME PORT[/PROTOCOL], ...)",
    summary: "Stores named TCP/UDP port information.",
    description: "Gives names to TCP and UDP port numbers, for the other elements' \
arguments (UDPIPEncap's SPORT and DPORT, IPFilter and IPClassifier patterns such as \
`dst udp port myport`). Each argument is `NAME PORT`, `NAME PORT/tcp` or `NAME PORT/udp` \
(or another IP protocol), optionally followed by more names for the same port; without a \
protocol the name means the port for both TCP and UDP. A word starting with `#` starts a \
comment that runs to the end of the argument. Like AddressInfo's, names defined inside a \
compound element are seen only inside it.

Click's well-known names (`www`, `domain`, `ssh`, `smtp`, ...) are always available.",
    ports: "none",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(PortInfo),
};

impl Element for PortInfo {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut scratch = cx.names.clone();
        let errs = scratch.define_ports(cx.name, &click_lang::split_args(config));
        if errs.is_empty() {
            Ok(())
        } else {
            Err(errs.join("\n"))
        }
    }

    crate::element_any!();
}
