//! EtherRewrite: rewrites the Ethernet source and destination addresses.

use crate::common::args::replace_arg;
use crate::prelude::*;
use alloc::format;
use click_wire::{EtherAddress, EthernetFrame};

/// `EtherRewrite(SRC, DST)`.
#[derive(Default)]
pub struct EtherRewrite {
    /// DST then SRC, as in the header.
    /// SRC and DST.
    addrs: [EtherAddress; 2],
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

/// (SRC, DST).
fn parse(config: &str, cx: click_lang::ArgContext) -> Result<[EtherAddress; 2], String> {
    let mut a = Args::with_context(config, cx);
    let src = a.read_mp::<[u8; 6]>("SRC")?;
    let dst = a.read_mp::<[u8; 6]>("DST")?;
    a.complete()?;
    Ok([EtherAddress(src), EtherAddress(dst)])
}

impl Element for EtherRewrite {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        self.addrs = parse(config, cx.arg_context())?;
        self.config = None;
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        let off = p.mac_header_offset().unwrap_or(0);
        if off >= 0 {
            // Click rewrites a MAC header cut after the addresses too.
            let h = p.data_mut().get_mut(off as usize..);
            if let Some(mut f) = h.and_then(|h| EthernetFrame::new_addrs_checked(h).ok()) {
                let [src, dst] = self.addrs;
                f.set_dst_addr(dst);
                f.set_src_addr(src);
            }
        }
        Some(p)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "src" => Some(Ok(self.addrs[0].to_string())),
            "dst" => Some(Ok(self.addrs[1].to_string())),
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
