//! SetPacketType: sets the packet-type annotation.

use crate::prelude::*;
use alloc::format;

/// `SetPacketType(TYPE)`.
#[derive(Default)]
pub struct SetPacketType {
    ptype: PacketType,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "SetPacketType",
    port_count: "1/1",
    processing: "a/a",
    group: "standard",
    signature: "SetPacketType(TYPE)",
    summary: "Sets packet type annotation.",
    description: "Sets each packet's packet-type annotation to TYPE, one of `HOST`, \
`BROADCAST`, `MULTICAST`, `OTHERHOST`, `OUTGOING`, `LOOPBACK` or `FASTROUTE` (in any case). \
Elements such as ICMPError and HostEtherFilter look at the annotation; FromDevice sets it.\n\n\
Keyword arguments:\n\n\
- `TYPE` (word): the packet type. Mandatory.",
    ports: "one input, one output",
    handlers: &[HandlerDoc {
        name: "type",
        mode: HandlerMode::Read,
        text: "The TYPE, in capitals.",
    }],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(SetPacketType::default()),
};

impl Element for SetPacketType {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let word = a.read_mp::<click_lang::args::RawString>("TYPE")?.0;
        a.complete()?;
        let word = click_lang::args::parse_word(&word).map_err(|e| format!("TYPE: {}", e))?;
        self.ptype = PacketType::from_name(&word)
            .ok_or_else(|| format!("unrecognized packet type '{}'", word))?;
        Ok(())
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        p.anno_mut().packet_type = self.ptype;
        Some(p)
    }

    fn push_batch(&mut self, _port: usize, mut batch: Batch, cx: &Ctx) {
        for p in batch.iter_mut() {
            p.anno_mut().packet_type = self.ptype;
        }
        cx.push_batch(0, batch);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        (name == "type").then(|| Ok(self.ptype.name().to_string()))
    }

    crate::element_any!();
}
