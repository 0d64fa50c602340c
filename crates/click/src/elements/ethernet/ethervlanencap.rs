//! EtherVLANEncap: encapsulates packets in an 802.1Q Ethernet header.

use crate::prelude::*;
use alloc::format;
use click_lang::args::{parse_i64, reconfigure_keyword, RawString};
use click_wire::{ethertype, EtherAddress, EthernetFrame, VlanHeader};

/// `EtherVLANEncap(ETHERTYPE, SRC, DST [, VLAN_TCI, VLAN_PCP, KEYWORDS])`.
#[derive(Default)]
pub struct EtherVLANEncap {
    dst: [u8; 6],
    src: [u8; 6],
    /// The encapsulated ethertype.
    ethertype: u16,
    /// The TCI to insert, unless `use_anno`.
    tci: u16,
    use_anno: bool,
    /// VLAN ID sent untagged, or -1.
    native_vlan: i32,
    /// The configuration as given and changed by keyword writes.
    config: String,
}

const HANDLERS: &[HandlerDoc] = &[
    HandlerDoc {
        name: "src",
        mode: HandlerMode::ReadWrite,
        text: "The SRC address.",
    },
    HandlerDoc {
        name: "dst",
        mode: HandlerMode::ReadWrite,
        text: "The DST address.",
    },
    HandlerDoc {
        name: "ethertype",
        mode: HandlerMode::ReadWrite,
        text: "The ETHERTYPE (decimal).",
    },
    HandlerDoc {
        name: "vlan_tci",
        mode: HandlerMode::ReadWrite,
        text: "The TCI (decimal), or `ANNO`; a write reconfigures VLAN_TCI.",
    },
    HandlerDoc {
        name: "vlan_id",
        mode: HandlerMode::ReadWrite,
        text: "The VLAN ID (empty in ANNO mode); a write reconfigures VLAN_ID.",
    },
    HandlerDoc {
        name: "vlan_pcp",
        mode: HandlerMode::ReadWrite,
        text: "The priority code point (empty in ANNO mode); a write reconfigures VLAN_PCP.",
    },
    HandlerDoc {
        name: "native_vlan",
        mode: HandlerMode::ReadWrite,
        text: "The NATIVE_VLAN (empty when 0); a write reconfigures NATIVE_VLAN.",
    },
];

pub static SPEC: ClassSpec = ClassSpec {
    name: "EtherVLANEncap",
    port_count: "1/1",
    processing: "a/a",
    group: "ethernet",
    signature: "EtherVLANEncap(ETHERTYPE, SRC, DST [, VLAN_TCI, VLAN_PCP, KEYWORDS])",
    summary: "Encapsulates packets in 802.1Q VLAN Ethernet header.",
    description: "Prepends an 802.1Q header: destination DST, source SRC, type 0x8100, the \
tag's TCI, and the encapsulated ethertype ETHERTYPE (host order, e.g. `0x0800`); the result \
looks like an Ethernet packet of type 0x8100. Sets the MAC header annotation.\n\n\
VLAN_TCI is the 16-bit tag control information (VLAN ID in the low 12 bits, priority code \
point in the top 3); VLAN_PCP, if given, is OR'ed into the top bits. Instead of VLAN_TCI, give \
VLAN_ID (and VLAN_PCP). VLAN_TCI may also be `ANNO`: each packet's VLAN TCI annotation (as \
StripEtherVLANHeader or SetVLANAnno set it) is used.\n\n\
If the VLAN ID to be sent equals NATIVE_VLAN, the packet gets a conventional 14-byte Ethernet \
header (type ETHERTYPE) instead. NATIVE_VLAN defaults to 0, so a packet with VLAN ID 0 is sent \
untagged unless NATIVE_VLAN is -1.\n\n\
Keyword arguments:\n\n\
- `ETHERTYPE` (16-bit integer): the encapsulated type. Mandatory.\n\
- `SRC`, `DST` (Ethernet addresses). Mandatory.\n\
- `VLAN_TCI` (16-bit integer or `ANNO`).\n\
- `VLAN_PCP` (integer 0-7): priority. Default 0.\n\
- `VLAN_ID` (integer 0-0xFFF): used when VLAN_TCI is not given. Default 0.\n\
- `NATIVE_VLAN` (integer -1-0xFFF): VLAN ID sent untagged; -1 for none. Default 0.",
    ports: "one input, one output",
    handlers: HANDLERS,
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(EtherVLANEncap::default()),
};

/// Click's old name for the class.
pub static ETHERVLANENCAP_OLD_SPEC: ClassSpec = ClassSpec {
    name: "EtherVlanEncap",
    port_count: "1/1",
    processing: "a/a",
    group: "ethernet",
    signature: "EtherVlanEncap(ETHERTYPE, SRC, DST [, VLAN_TCI, VLAN_PCP, KEYWORDS])",
    summary: "The old name of EtherVLANEncap.",
    description: "The old name of EtherVLANEncap, which behaves identically; see there.",
    ports: "one input, one output",
    handlers: HANDLERS,
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(EtherVLANEncap::default()),
};

fn bounded(kw: &str, s: &str, lo: i64, hi: i64) -> Result<i64, String> {
    match parse_i64(s.trim()) {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        Ok(_) => Err(format!("{}: out of range", kw)),
        Err(e) => Err(format!("{}: {}", kw, e)),
    }
}

impl EtherVLANEncap {
    fn parse(config: &str, cx: click_lang::ArgContext) -> Result<EtherVLANEncap, String> {
        let mut a = Args::with_context(config, cx);
        let ethertype = a.read_mp::<u16>("ETHERTYPE")?;
        let src = a.read_mp::<[u8; 6]>("SRC")?;
        let dst = a.read_mp::<[u8; 6]>("DST")?;
        let tci_word = a.read_p::<RawString>("VLAN_TCI")?.map(|r| r.0);
        let pcp = a.read_p::<RawString>("VLAN_PCP")?.map(|r| r.0);
        let id = a.read::<RawString>("VLAN_ID")?.map(|r| r.0);
        let native = a.read::<RawString>("NATIVE_VLAN")?.map(|r| r.0);
        a.complete()?;
        let pcp = pcp.map_or(Ok(0), |s| bounded("VLAN_PCP", &s, 0, 7))?;
        let id = id.map_or(Ok(0), |s| bounded("VLAN_ID", &s, 0, 0xfff))?;
        let native_vlan = native.map_or(Ok(0), |s| bounded("NATIVE_VLAN", &s, -1, 0xfff))?;
        let use_anno = tci_word.as_deref().map(str::trim) == Some("ANNO");
        let tci = match tci_word {
            Some(w) if !use_anno => bounded("VLAN_TCI", &w, 0, 0xffff)?,
            _ => -1,
        };
        let base = if tci >= 0 { tci } else { id };
        Ok(EtherVLANEncap {
            dst,
            src,
            ethertype,
            tci: (base | (pcp << 13)) as u16,
            use_anno,
            native_vlan: native_vlan as i32,
            config: config.to_string(),
        })
    }

    fn reconfigure(
        &mut self,
        argno: Option<usize>,
        kw: &str,
        value: &str,
        cx: &Ctx,
    ) -> HandlerResult<()> {
        let value = click_lang::args::uncomment(value);
        let newconf = reconfigure_keyword(&self.config, argno, kw, value.trim());
        *self = Self::parse(&newconf, cx.arg_context())?;
        Ok(())
    }

    #[inline]
    fn encap(&self, mut p: Packet) -> Packet {
        let tci = if self.use_anno {
            p.anno().vlan_tci()
        } else {
            self.tci
        };
        let tagged = i32::from(tci & 0xfff) != self.native_vlan;
        p.push(if tagged { 18 } else { 14 });
        let mut f = EthernetFrame::new_unchecked(p.data_mut());
        f.set_dst_addr(EtherAddress(self.dst));
        f.set_src_addr(EtherAddress(self.src));
        if tagged {
            f.set_ethertype(ethertype::VLAN);
            let mut v = VlanHeader::new_unchecked(f.payload_mut());
            v.set_tci(tci);
            v.set_ethertype(self.ethertype);
        } else {
            f.set_ethertype(self.ethertype);
        }
        p.set_mac_header(0);
        p
    }

    fn unparse_config(&self) -> String {
        let mut s = format!(
            "{}, {}, {}",
            EtherAddress::from_bytes(&self.src),
            EtherAddress::from_bytes(&self.dst),
            self.ethertype
        );
        if self.use_anno {
            s.push_str(", ANNO");
        } else {
            s.push_str(&format!(
                ", VLAN_ID {}, VLAN_PCP {}",
                self.tci & 0xfff,
                self.tci >> 13
            ));
        }
        if self.native_vlan != 0 {
            s.push_str(&format!(", NATIVE_VLAN {}", self.native_vlan));
        }
        s
    }
}

impl Element for EtherVLANEncap {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        *self = Self::parse(config, cx.arg_context())?;
        Ok(())
    }

    #[inline]
    fn simple_action(&mut self, p: Packet, _cx: &Ctx) -> Option<Packet> {
        Some(self.encap(p))
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        let out: Batch = batch.into_iter().map(|p| self.encap(p)).collect();
        cx.push_batch(0, out);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        let anno_or = |v: String| if self.use_anno { String::new() } else { v };
        Some(Ok(match name {
            "src" => EtherAddress::from_bytes(&self.src).to_string(),
            "dst" => EtherAddress::from_bytes(&self.dst).to_string(),
            "ethertype" => self.ethertype.to_string(),
            "vlan_tci" if self.use_anno => "ANNO".into(),
            "vlan_tci" => self.tci.to_string(),
            "vlan_id" => anno_or((self.tci & 0xfff).to_string()),
            "vlan_pcp" => anno_or((self.tci >> 13).to_string()),
            "native_vlan" if self.native_vlan == 0 => String::new(),
            "native_vlan" => self.native_vlan.to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        let v = click_lang::args::uncomment(value);
        Some(match name {
            "src" | "dst" => match cx.arg_context().ether(v.trim()) {
                Ok(a) => {
                    if name == "src" {
                        self.src = a;
                    } else {
                        self.dst = a;
                    }
                    Ok(())
                }
                Err(_) => Err("expected Ethernet address".into()),
            },
            "ethertype" => match parse_i64(v.trim()) {
                Ok(t) if (0..=0xffff).contains(&t) => {
                    self.ethertype = t as u16;
                    Ok(())
                }
                _ => Err("expected 16-bit integer".into()),
            },
            "vlan_tci" => self.reconfigure(Some(3), "VLAN_TCI", &v, cx),
            "vlan_id" => self.reconfigure(None, "VLAN_ID", &v, cx),
            "vlan_pcp" => self.reconfigure(None, "VLAN_PCP", &v, cx),
            "native_vlan" => self.reconfigure(None, "NATIVE_VLAN", &v, cx),
            _ => return None,
        })
    }

    fn current_config(&self) -> Option<String> {
        Some(self.unparse_config())
    }

    crate::element_any!();
}
