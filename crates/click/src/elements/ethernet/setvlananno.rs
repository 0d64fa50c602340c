//! SetVLANAnno: sets the VLAN TCI annotation.

use crate::prelude::*;
use alloc::format;

/// `SetVLANAnno(VLAN [, VLAN_PCP])`.
#[derive(Default)]
pub struct SetVLANAnno {
    /// The TCI (host order).
    tci: u16,
    config: String,
}

const HANDLERS: &[HandlerDoc] = &[
    HandlerDoc {
        name: "vlan",
        mode: HandlerMode::ReadWrite,
        text: "The VLAN ID; writing it reconfigures the element.",
    },
    HandlerDoc {
        name: "vlan_pcp",
        mode: HandlerMode::ReadWrite,
        text: "The priority code point; writing it reconfigures the element.",
    },
];

pub static SPEC: ClassSpec = ClassSpec {
    name: "SetVLANAnno",
    port_count: "1/1",
    processing: "a/a",
    group: "ethernet",
    signature: "SetVLANAnno(VLAN [, VLAN_PCP])",
    summary: "Sets VLAN annotation.",
    description: "Sets each packet's VLAN TCI annotation (which VLANEncap with `ANNO` puts in \
the tag it adds) to VLAN ID VLAN (0 to 4094) with priority VLAN_PCP (0 to 7, default 0). Does \
not touch the packet data.",
    ports: "one input, one output",
    handlers: HANDLERS,
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(SetVLANAnno::default()),
};

/// Click's old name for the class.
pub static SETVLANANNO_OLD_SPEC: ClassSpec = ClassSpec {
    name: "SetVlanAnno",
    port_count: "1/1",
    processing: "a/a",
    group: "ethernet",
    signature: "SetVlanAnno(VLAN [, VLAN_PCP])",
    summary: "The old name of SetVLANAnno.",
    description: "The old name of SetVLANAnno, which behaves identically; see there.",
    ports: "one input, one output",
    handlers: HANDLERS,
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(SetVLANAnno::default()),
};

fn parse(config: &str, cx: click_lang::ArgContext) -> Result<u16, String> {
    let mut a = Args::with_context(config, cx);
    let vlan = a.read_mp::<i32>("VLAN")?;
    let pcp = a.read_p::<i32>("VLAN_PCP")?.unwrap_or(0);
    a.complete()?;
    if !(0..0x0fff).contains(&vlan) {
        return Err("bad VLAN".into());
    }
    if !(0..=7).contains(&pcp) {
        return Err("bad VLAN_PCP".into());
    }
    Ok((vlan | (pcp << 13)) as u16)
}

impl Element for SetVLANAnno {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        self.tci = parse(config, cx.arg_context())?;
        self.config = config.into();
        Ok(())
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        p.anno_mut().set_vlan_tci(self.tci);
        Some(p)
    }

    #[inline]
    fn push_batch(&mut self, _port: usize, mut batch: Batch, cx: &Ctx) {
        for p in batch.iter_mut() {
            p.anno_mut().set_vlan_tci(self.tci);
        }
        cx.push_batch(0, batch);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "vlan" => Some(Ok(format!("{}", self.tci & 0x0fff))),
            "vlan_pcp" => Some(Ok(format!("{}", self.tci >> 13))),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        let (argno, kw) = match name {
            "vlan" => (0, "VLAN"),
            "vlan_pcp" => (1, "VLAN_PCP"),
            _ => return None,
        };
        let conf =
            click_lang::args::reconfigure_keyword(&self.config, Some(argno), kw, value.trim());
        Some(parse(&conf, cx.arg_context()).map(|tci| {
            self.tci = tci;
            self.config = conf;
        }))
    }

    fn current_config(&self) -> Option<String> {
        Some(self.config.clone())
    }

    crate::element_any!();
}
