//! ARPPrint: pretty-prints ARP packets a la tcpdump.

use crate::prelude::*;
use click_wire::{ArpPacket, EthernetFrame};
use core::fmt::Write as _;

/// `ARPPrint([LABEL, KEYWORDS])`.
pub struct ARPPrint {
    label: String,
    timestamp: bool,
    ether: bool,
    active: bool,
}

impl Default for ARPPrint {
    fn default() -> Self {
        ARPPrint {
            label: String::new(),
            timestamp: true,
            ether: false,
            active: true,
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "ARPPrint",
    port_count: "1/1",
    processing: "a/a",
    group: "arp",
    signature: "ARPPrint([LABEL, KEYWORDS])",
    summary: "Pretty-prints ARP packets a la tcpdump.",
    description: "Expects ARP packets with the network header annotation set to the ARP header \
(CheckARPHeader sets it); packets without the annotation pass silently, as in Click. Prints one \
line per packet on standard error, preceded by the LABEL text, and passes the packet on \
unchanged:\n\n\
- requests: `LABEL: TIMESTAMP: arp who-has TPA [(THA)] tell SPA` (THA only when it is not zero)\n\
- replies: `LABEL: TIMESTAMP: arp reply SPA is-at SHA`\n\
- RARP and InARP requests and replies: `rarp who-is THA tell SHA`, `rarp reply THA at TPA`, \
`invarp who-is THA tell SHA`, `invarp reply THA at TPA`\n\
- other operations: `arp-#OP`; non-IPv4 protocols: \
`arp-#OP for proto #PRO (PLN) hardware #HRD (HLN)`; a non-Ethernet hardware type adds \
` hardware #HRD`; a header shorter than 8 bytes prints `truncated-arp (LENGTH)`.\n\n\
Ethernet addresses print as `00-1A-2B-3C-4D-5E`.\n\n\
Keyword arguments:\n\n\
- `TIMESTAMP` (boolean): print each packet's timestamp. Default true.\n\
- `ETHER` (boolean): print the Ethernet source and destination, `SRC > DST: `, when an \
Ethernet header precedes the ARP header. Default false.\n\
- `ACTIVE` (boolean): if false, print nothing. Default true.",
    ports: "one input, one output",
    handlers: &[HandlerDoc {
        name: "active",
        mode: HandlerMode::ReadWrite,
        text: "The ACTIVE value.",
    }],
    live_reconfigure: true,
    order_sensitive: true,
    make: || Box::new(ARPPrint::default()),
};

impl ARPPrint {
    /// The line for one packet, or `None` when nothing is printed.
    fn line(&self, p: &Packet) -> Option<String> {
        if !self.active {
            return None;
        }
        let nh_off = p.network_header_offset()?;
        let arp = p.network_header()?;
        let mut sa = String::new();
        if !self.label.is_empty() {
            let _ = write!(sa, "{}: ", self.label);
        }
        if self.timestamp {
            let _ = write!(sa, "{}: ", p.timestamp());
        }
        if self.ether {
            // The MAC header if set, else the data start; it must end at or
            // before the network header and inside the packet.
            let mac = p.mac_header_offset().unwrap_or(0);
            if mac >= 0 && mac + 14 <= nh_off && (mac + 14) as usize <= p.len() {
                let e = EthernetFrame::new_unchecked(&p.data()[mac as usize..]);
                let _ = write!(sa, "{} > {}: ", e.src_addr(), e.dst_addr());
            }
        }
        if arp.len() < 8 {
            let _ = write!(sa, "truncated-arp ({})", arp.len());
            return Some(sa);
        }
        let len = arp.len();
        // The 8 bytes before the addresses are there; the addresses are read
        // (below) only from a 28-byte packet.
        let arp = ArpPacket::new_unchecked(arp);
        let hrd = arp.hardware_type();
        let pro = arp.protocol_type();
        let (hln, pln) = (arp.hardware_len(), arp.protocol_len());
        let op = arp.operation();
        // Click reads the four addresses as Ethernet/IPv4 fields.
        if (pro != 0x0800 && pro != 0x1000) || pln != 4 || hln == 0 || len < ArpPacket::<&[u8]>::LEN
        {
            let _ = write!(
                sa,
                "arp-#{} for proto #{} ({}) hardware #{} ({})",
                op, pro, pln, hrd, hln
            );
            return Some(sa);
        }
        if pro == 0x1000 {
            sa.push_str("trailer-");
        }
        let (sha, spa, tha, tpa) = (
            arp.sender_hardware_addr(),
            arp.sender_protocol_addr(),
            arp.target_hardware_addr(),
            arp.target_protocol_addr(),
        );
        match op {
            1 => {
                let _ = write!(sa, "arp who-has {}", tpa);
                // Only the first HLN bytes of the target address count.
                let n = (hln as usize).min(6);
                if tha.0[..n].iter().any(|&b| b != 0) {
                    let _ = write!(sa, " ({})", tha);
                }
                let _ = write!(sa, " tell {}", spa);
            }
            2 => {
                let _ = write!(sa, "arp reply {} is-at {}", spa, sha);
            }
            3 => {
                let _ = write!(sa, "rarp who-is {} tell {}", tha, sha);
            }
            4 => {
                let _ = write!(sa, "rarp reply {} at {}", tha, tpa);
            }
            8 => {
                let _ = write!(sa, "invarp who-is {} tell {}", tha, sha);
            }
            9 => {
                let _ = write!(sa, "invarp reply {} at {}", tha, tpa);
            }
            _ => {
                let _ = write!(sa, "arp-#{}", op);
            }
        }
        if hrd != 1 {
            let _ = write!(sa, " hardware #{}", hrd);
        }
        Some(sa)
    }
}

impl Element for ARPPrint {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let label = a.read_p::<String>("LABEL")?.unwrap_or_default();
        let timestamp = a.read::<bool>("TIMESTAMP")?.unwrap_or(true);
        let ether = a.read::<bool>("ETHER")?.unwrap_or(false);
        let active = a.read::<bool>("ACTIVE")?.unwrap_or(true);
        a.complete()?;
        self.label = label;
        self.timestamp = timestamp;
        self.ether = ether;
        self.active = active;
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    fn simple_action(&mut self, p: Packet, cx: &Ctx) -> Option<Packet> {
        if let Some(l) = self.line(&p) {
            cx.error_line(&l);
        }
        Some(p)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "active" => Some(Ok(self.active.to_string())),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "active" => Some(click_lang::args::parse_bool(value.trim()).map(|v| self.active = v)),
            _ => None,
        }
    }

    crate::element_any!();
}
