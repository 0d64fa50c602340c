//! VLANEncap: adds an 802.1Q tag to Ethernet packets.

use crate::common::args::replace_arg;
use crate::prelude::*;
use alloc::format;
use click_lang::args::{parse_i64, RawString};
use click_wire::{EthernetFrame, VlanHeader};

/// `VLANEncap([VLAN_TCI, VLAN_PCP, KEYWORDS])`.
pub struct VLANEncap {
    /// TCI to insert (host order), unless `use_anno`.
    tci: u16,
    use_anno: bool,
    /// VLAN ID sent untagged, or -1.
    native_vlan: i32,
    ethertype: u16,
    config: String,
    drops: u64,
}

impl Default for VLANEncap {
    fn default() -> Self {
        VLANEncap {
            tci: 0,
            use_anno: false,
            native_vlan: 0,
            ethertype: 0x8100,
            config: String::new(),
            drops: 0,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "VLANEncap",
    port_count: "1/1",
    processing: "a/a",
    group: "ethernet",
    signature: "VLANEncap([VLAN_TCI, VLAN_PCP, KEYWORDS])",
    summary: "Adds VLAN information to Ethernet packets.",
    description: "Expects Ethernet packets. Inserts an 802.1Q tag after the source address: \
the packet then looks like an Ethernet packet with type ETHERTYPE (0x8100) whose 4-byte tag \
holds the TCI, followed by the original ethertype and payload. Sets the MAC header annotation. \
Packets shorter than an Ethernet header are dropped (and counted).\n\n\
VLAN_TCI is the 16-bit TCI (VLAN ID in the low 12 bits, priority code point in the top 3); \
VLAN_PCP, if given, is OR'ed into the top bits. VLAN_TCI may also be `ANNO`: the TCI is then \
taken from each packet's VLAN TCI annotation (as VLANDecap sets it). Alternatively give VLAN_ID \
and VLAN_PCP.\n\n\
If the VLAN ID to be sent equals NATIVE_VLAN, no tag is added (the packet leaves as a \
conventional Ethernet packet).\n\n\
Keyword arguments:\n\n\
- `VLAN_TCI` (16-bit integer or `ANNO`).\n\
- `VLAN_ID` (integer 0-0xFFF): used when VLAN_TCI is not given. Default 0.\n\
- `VLAN_PCP` (integer 0-7): priority. Default 0.\n\
- `NATIVE_VLAN` (integer -1-0xFFF): VLAN ID sent untagged; -1 for none. Default 0.\n\
- `ETHERTYPE` (16-bit integer): the tag protocol identifier: 0x8100 (default, 802.1Q), 0x88A8 \
(802.1ad), 0x9100.",
    ports: "one input, one output",
    handlers: &[
        HandlerDoc {
            name: "vlan_tci",
            mode: HandlerMode::ReadWrite,
            text: "The TCI (decimal), or `ANNO`.",
        },
        HandlerDoc {
            name: "vlan_id",
            mode: HandlerMode::ReadWrite,
            text: "The VLAN ID.",
        },
        HandlerDoc {
            name: "vlan_pcp",
            mode: HandlerMode::ReadWrite,
            text: "The priority code point.",
        },
        HandlerDoc {
            name: "native_vlan",
            mode: HandlerMode::ReadWrite,
            text: "The NATIVE_VLAN value.",
        },
        HandlerDoc {
            name: "ethertype",
            mode: HandlerMode::ReadWrite,
            text: "The ETHERTYPE value (decimal).",
        },
        HandlerDoc {
            name: "drops",
            mode: HandlerMode::Read,
            text: "Packets dropped as too short.",
        },
    ],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(VLANEncap::default()),
};

struct Parsed {
    tci: u16,
    use_anno: bool,
    native_vlan: i32,
    ethertype: u16,
}

fn bounded(kw: &str, s: &str, lo: i64, hi: i64) -> Result<i64, String> {
    match parse_i64(s.trim()) {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        Ok(_) => Err(format!("{}: out of range", kw)),
        Err(e) => Err(format!("{}: {}", kw, e)),
    }
}

fn parse(config: &str) -> Result<Parsed, String> {
    let mut a = Args::new(config);
    let tci_word = a.read_p::<RawString>("VLAN_TCI")?.map(|r| r.0);
    let pcp = a.read_p::<RawString>("VLAN_PCP")?.map(|r| r.0);
    let id = a.read::<RawString>("VLAN_ID")?.map(|r| r.0);
    let native = a.read::<RawString>("NATIVE_VLAN")?.map(|r| r.0);
    let ethertype = a.read::<u16>("ETHERTYPE")?.unwrap_or(0x8100);
    a.complete()?;
    let pcp = match pcp {
        Some(s) => bounded("VLAN_PCP", &s, 0, 7)?,
        None => 0,
    };
    let id = match id {
        Some(s) => bounded("VLAN_ID", &s, 0, 0xfff)?,
        None => 0,
    };
    let native_vlan = match native {
        Some(s) => bounded("NATIVE_VLAN", &s, -1, 0xfff)? as i32,
        None => 0,
    };
    let use_anno = tci_word.as_deref().map(str::trim) == Some("ANNO");
    let tci = match tci_word {
        Some(w) if !use_anno => bounded("VLAN_TCI", &w, 0, 0xffff)?,
        _ => -1,
    };
    let base = if tci >= 0 { tci } else { id };
    let tci = (base | (pcp << 13)) as u16;
    Ok(Parsed {
        tci,
        use_anno,
        native_vlan,
        ethertype,
    })
}

impl VLANEncap {
    fn encap(&mut self, mut p: Packet) -> Option<Packet> {
        if p.len() < 14 {
            self.drops += 1;
            return None;
        }
        let tci = if self.use_anno {
            p.anno().vlan_tci()
        } else {
            self.tci
        };
        if i32::from(tci & 0xfff) == self.native_vlan {
            p.set_mac_header(0);
            return Some(p);
        }
        // The addresses move to the front; the old type field becomes the
        // tag's (at least 14 bytes were there).
        let old = EthernetFrame::new_unchecked(p.data());
        let (dst, src) = (old.dst_addr(), old.src_addr());
        p.push(4);
        let mut f = EthernetFrame::new_unchecked(p.data_mut());
        f.set_dst_addr(dst);
        f.set_src_addr(src);
        f.set_ethertype(self.ethertype);
        VlanHeader::new_unchecked(f.payload_mut()).set_tci(tci);
        p.set_mac_header(0);
        Some(p)
    }

    fn reconfigure_kw(&mut self, pos: usize, kw: &str, value: &str) -> HandlerResult<()> {
        let newconf = replace_arg(&self.config, pos, kw, value.trim());
        let v = parse(&newconf)?;
        self.apply(v);
        self.config = newconf;
        Ok(())
    }

    fn apply(&mut self, v: Parsed) {
        self.tci = v.tci;
        self.use_anno = v.use_anno;
        self.native_vlan = v.native_vlan;
        self.ethertype = v.ethertype;
    }
}

impl Element for VLANEncap {
    fn configure(&mut self, config: &str, _cx: &ConfigureCtx) -> Result<(), String> {
        let v = parse(config)?;
        self.apply(v);
        self.config = config.to_string();
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    fn simple_action(&mut self, p: Packet, _cx: &Ctx) -> Option<Packet> {
        self.encap(p)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "vlan_tci" if self.use_anno => "ANNO".into(),
            "vlan_tci" => self.tci.to_string(),
            "vlan_id" => (self.tci & 0xfff).to_string(),
            "vlan_pcp" => (self.tci >> 13).to_string(),
            "native_vlan" => self.native_vlan.to_string(),
            "ethertype" => self.ethertype.to_string(),
            "drops" => self.drops.to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        let (pos, kw) = match name {
            "vlan_tci" => (0, "VLAN_TCI"),
            "vlan_id" => (usize::MAX, "VLAN_ID"),
            "vlan_pcp" => (usize::MAX, "VLAN_PCP"),
            "native_vlan" => (usize::MAX, "NATIVE_VLAN"),
            "ethertype" => (usize::MAX, "ETHERTYPE"),
            _ => return None,
        };
        Some(self.reconfigure_kw(pos, kw, value))
    }

    fn current_config(&self) -> Option<String> {
        Some(self.config.clone())
    }

    crate::element_any!();
}
