//! EtherRewrite: rewrites the Ethernet source and destination addresses.

use super::etherencap::replace_arg;
use crate::prelude::*;
use alloc::format;
use click_wire::EtherAddress;

/// `EtherRewrite(SRC, DST)`.
#[derive(Default)]
pub struct EtherRewrite {
    /// DST then SRC, as in the header.
    addrs: [u8; 12],
    config: Option<String>,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "EtherRewrite",
    port_count: "1/1",
    processing: "a/a",
    group: "ethernet",
    signature: "EtherRewrite(SRC, DST)",
    summary: "Rewrites Ethernet packet source and destination.",
    description: "Rewrites the source and destination Ethernet addresses of the packet's MAC \
header (the MAC header annotation, or the start of the packet when it is not set). Packets too \
short to hold the addresses pass unchanged.",
    ports: "one input, one output",
    handlers: &[
        HandlerDoc {
            name: "src",
            mode: HandlerMode::ReadWrite,
            text: "The source address.",
        },
        HandlerDoc {
            name: "dst",
            mode: HandlerMode::ReadWrite,
            text: "The destination address.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(EtherRewrite::default()),
};

fn parse(config: &str, cx: click_lang::ArgContext) -> Result<[u8; 12], String> {
    let mut a = Args::with_context(config, cx);
    let src = a.read_mp::<[u8; 6]>("SRC")?;
    let dst = a.read_mp::<[u8; 6]>("DST")?;
    a.complete()?;
    let mut h = [0u8; 12];
    h[..6].copy_from_slice(&dst);
    h[6..].copy_from_slice(&src);
    Ok(h)
}

impl Element for EtherRewrite {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        self.addrs = parse(config, cx.arg_context())?;
        self.config = None;
        Ok(())
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        let off = p.mac_header_offset().unwrap_or(0);
        if off >= 0 {
            if let Some(h) = p.data_mut().get_mut(off as usize..off as usize + 12) {
                h.copy_from_slice(&self.addrs);
            }
        }
        Some(p)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "src" => Some(Ok(EtherAddress::from_bytes(&self.addrs[6..]).to_string())),
            "dst" => Some(Ok(EtherAddress::from_bytes(&self.addrs[..6]).to_string())),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        let (pos, kw) = match name {
            "src" => (0, "SRC"),
            "dst" => (1, "DST"),
            _ => return None,
        };
        let cur = self.config.clone().unwrap_or_else(|| {
            cx.call_read(&format!("{}.config", cx.name()))
                .unwrap_or_default()
        });
        let newconf = replace_arg(&cur, pos, kw, value.trim());
        Some(parse(&newconf, cx.arg_context()).map(|a| {
            self.addrs = a;
            self.config = Some(newconf);
        }))
    }

    fn current_config(&self) -> Option<String> {
        self.config.clone()
    }

    crate::element_any!();
}
