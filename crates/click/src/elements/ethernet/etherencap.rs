//! EtherEncap: encapsulates packets in an Ethernet header.

use crate::common::args::replace_arg;
use crate::prelude::*;
use alloc::format;
use click_wire::{EtherAddress, EthernetFrame};

/// `EtherEncap(ETHERTYPE, SRC, DST)`.
#[derive(Default)]
pub struct EtherEncap {
    /// The 14-byte header: DST, SRC, ETHERTYPE.
    hdr: [u8; 14],
    config: Option<String>,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "EtherEncap",
    port_count: "1/1",
    processing: "a/a",
    group: "ethernet",
    signature: "EtherEncap(ETHERTYPE, SRC, DST)",
    summary: "Encapsulates packets in Ethernet header.",
    description: "Prepends an Ethernet header with ethertype ETHERTYPE (e.g. `0x0800`), source \
address SRC and destination address DST, and sets the MAC header annotation.\n\n\
Arguments (all mandatory, positional or by keyword):\n\n\
- `ETHERTYPE` (16-bit integer)\n- `SRC` (Ethernet address)\n- `DST` (Ethernet address)",
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
        HandlerDoc {
            name: "ethertype",
            mode: HandlerMode::ReadWrite,
            text: "The ethertype (decimal).",
        },
        HandlerDoc {
            name: "etht",
            mode: HandlerMode::ReadWrite,
            text: "Deprecated synonym for `ethertype`.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(EtherEncap::default()),
};

impl EtherEncap {
    fn reconfigure_kw(&mut self, pos: usize, kw: &str, value: &str, cx: &Ctx) -> HandlerResult<()> {
        let cur = self.config.clone().unwrap_or_else(|| {
            cx.call_read(&format!("{}.config", cx.name()))
                .unwrap_or_default()
        });
        let newconf = replace_arg(&cur, pos, kw, value.trim());
        let hdr = parse(&newconf, cx.arg_context())?;
        self.hdr = hdr;
        self.config = Some(newconf);
        Ok(())
    }
}

fn parse(config: &str, cx: click_lang::ArgContext) -> Result<[u8; 14], String> {
    let mut a = Args::with_context(config, cx);
    let et = a.read_mp::<u16>("ETHERTYPE")?;
    let src = a.read_mp::<[u8; 6]>("SRC")?;
    let dst = a.read_mp::<[u8; 6]>("DST")?;
    a.complete()?;
    let mut h = [0u8; 14];
    let mut f = EthernetFrame::new_unchecked(&mut h[..]);
    f.set_dst_addr(EtherAddress(dst));
    f.set_src_addr(EtherAddress(src));
    f.set_ethertype(et);
    Ok(h)
}

impl Element for EtherEncap {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        self.hdr = parse(config, cx.arg_context())?;
        self.config = None;
        Ok(())
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        p.push(14);
        p.data_mut()[..14].copy_from_slice(&self.hdr);
        p.set_mac_header(0);
        Some(p)
    }

    #[inline]
    fn push_batch(&mut self, _port: usize, mut batch: Batch, cx: &Ctx) {
        for p in batch.iter_mut() {
            p.push(14);
            p.data_mut()[..14].copy_from_slice(&self.hdr);
            p.set_mac_header(0);
        }
        cx.push_batch(0, batch);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        let h = EthernetFrame::new_unchecked(&self.hdr[..]);
        Some(Ok(match name {
            "src" => h.src_addr().to_string(),
            "dst" => h.dst_addr().to_string(),
            "ethertype" | "etht" => h.ethertype().to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        let (pos, kw) = match name {
            "src" => (1, "SRC"),
            "dst" => (2, "DST"),
            "ethertype" | "etht" => (0, "ETHERTYPE"),
            _ => return None,
        };
        Some(self.reconfigure_kw(pos, kw, value, cx))
    }

    fn current_config(&self) -> Option<String> {
        self.config.clone()
    }

    crate::element_any!();
}
