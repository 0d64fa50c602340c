//! SetIPDSCP: sets the DSCP field of IP packets.

use crate::prelude::*;

/// `SetIPDSCP(DSCP)`.
#[derive(Default)]
pub struct SetIPDSCP {
    /// The DSCP value (0..=63).
    dscp: u8,
    config: String,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "SetIPDSCP",
    port_count: "1/1",
    processing: "a/a",
    group: "ip",
    signature: "SetIPDSCP(DSCP)",
    summary: "Sets IP packets' DSCP fields.",
    description: "Expects IP packets with the IP header annotation set. Sets their \
Differentiated Services Code Point (the upper 6 bits of the TOS byte) to DSCP, an integer from \
0 to 63, leaving the ECN bits alone; incrementally updates the IP header checksum (RFC 1624) and \
passes the packet to output 0.\n\n\
Packets without a readable 20-byte IP header are dropped.",
    ports: "one input, one output",
    handlers: &[HandlerDoc {
        name: "dscp",
        mode: HandlerMode::ReadWrite,
        text: "The DSCP value; writing it reconfigures the element.",
    }],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(SetIPDSCP::default()),
};

fn parse(config: &str, cx: click_lang::ArgContext) -> Result<u8, String> {
    let mut a = Args::with_context(config, cx);
    let v = a.read_mp::<u32>("DSCP")?;
    a.complete()?;
    if v > 0x3f {
        return Err("diffserv code point out of range".into());
    }
    Ok(v as u8)
}

impl Element for SetIPDSCP {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        self.dscp = parse(config, cx.arg_context())?;
        self.config = config.into();
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        let mut ip = p.ip_header_mut()?;
        ip.set_dscp_incremental(self.dscp);
        Some(p)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "dscp" => Some(Ok(self.dscp.to_string())),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        if name != "dscp" {
            return None;
        }
        let conf =
            click_lang::args::reconfigure_keyword(&self.config, Some(0), "DSCP", value.trim());
        Some(parse(&conf, cx.arg_context()).map(|d| {
            self.dscp = d;
            self.config = conf;
        }))
    }

    fn current_config(&self) -> Option<String> {
        Some(self.config.clone())
    }

    crate::element_any!();
}
