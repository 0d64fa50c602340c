//! ARPResponder: answers ARP queries.

use crate::common::unparse::unparse_with_mask;
use crate::prelude::*;
use alloc::format;
use click_lang::args::split_words;
use click_lang::ArgContext;
use click_wire::arp::{OP_REPLY, OP_REQUEST};
use click_wire::{ethertype, ArpPacket, EtherAddress, EthernetFrame};
use core::net::Ipv4Addr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    dst: u32,
    mask: u32,
    eth: [u8; 6],
}

/// `ARPResponder(IP/MASK [IP/MASK...] ETH, ...)`.
#[derive(Default)]
pub struct ARPResponder {
    /// Most specific prefixes first.
    entries: Vec<Entry>,
    /// Requests answered.
    replies: u64,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "ARPResponder",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "arp",
    signature: "ARPResponder(IP/MASK [IP/MASK...] ETH, IP2/MASK2 ETH2, ...)",
    summary: "Generates responses to ARP queries.",
    description: "Input should be ARP request packets, including the Ethernet header. If the \
requested IP address matches one of the IP/MASK arguments, ARPResponder emits an ARP reply on \
output 0 giving the corresponding Ethernet address (from that address to the requester's \
Ethernet and IP addresses); otherwise the packet leaves on output 1, if it exists, and is \
dropped if not. Packets that are not Ethernet/IPv4 ARP requests (including truncated ones) are \
treated the same way. It can answer for the host's own addresses and do proxy ARP for whole \
networks.\n\n\
Each argument is a space-separated list of IP addresses or prefixes (`18.26.7.0/24`, \
`18.26.7.0/255.255.255.0`, or a bare address meaning /32) and exactly one Ethernet address. \
When several prefixes match, the most specific wins; of two identical prefixes, the later one \
wins (with a warning at configuration time).\n\n\
Replies carry the VLAN TCI annotation of the query they answer.",
    ports: "one input; one or two outputs (1: queries not answered)",
    handlers: &[
        HandlerDoc {
            name: "table",
            mode: HandlerMode::Read,
            text: "The current table, one `IP/MASK ETH` entry per line.",
        },
        HandlerDoc {
            name: "lookup",
            mode: HandlerMode::Read,
            text: "Read with a parameter: takes an IP address and returns the Ethernet address \
ARPResponder would answer with, or an empty string.",
        },
        HandlerDoc {
            name: "add",
            mode: HandlerMode::Write,
            text: "Adds entries, given as `IP/MASK [IP/MASK...] ETH`.",
        },
        HandlerDoc {
            name: "remove",
            mode: HandlerMode::Write,
            text: "Removes the entry for one `IP/MASK`.",
        },
    ],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(ARPResponder::default()),
};

/// Parses one `IP/MASK [IP/MASK...] ETH` argument, appending its entries.
/// Words may be AddressInfo names; a name for both an IP address and an
/// Ethernet address (`ARPResponder(eth0)`) gives both, as in Click.
fn add_entries(v: &mut Vec<Entry>, arg: &str, cx: &ArgContext) -> Result<(), String> {
    let mut new: Vec<(u32, u32)> = Vec::new();
    let mut eth: Option<[u8; 6]> = None;
    let words = split_words(arg);
    for w in &words {
        if let Ok((a, m)) = cx.prefix(w, true) {
            let (a, m) = (u32::from(a), u32::from(m));
            new.push((a & m, m));
        } else if let Ok(e) = cx.ether(w) {
            if eth.is_some() {
                return Err("more than one ETH".into());
            }
            eth = Some(e);
        } else {
            return Err("expected IP/MASK ETH".into());
        }
    }
    // a word that was taken as an address may also be an Ethernet address
    if eth.is_none() {
        eth = words.iter().find_map(|w| cx.ether(w).ok());
    }
    if new.is_empty() {
        return Err("missing IP/MASK".into());
    }
    let Some(eth) = eth else {
        return Err("missing ETH".into());
    };
    v.extend(new.into_iter().map(|(dst, mask)| Entry { dst, mask, eth }));
    Ok(())
}

/// Orders entries most specific first, keeping only the last of identical
/// prefixes. Returns the duplicates that were dropped.
fn normalize(v: &mut Vec<Entry>) -> Vec<(u32, u32)> {
    let mut dups = Vec::new();
    let mut out: Vec<Entry> = Vec::with_capacity(v.len());
    for e in v.drain(..).rev() {
        if out.iter().any(|o| o.dst == e.dst && o.mask == e.mask) {
            dups.push((e.dst, e.mask));
        } else {
            out.push(e);
        }
    }
    out.reverse();
    // Longer masks (more specific) first; the sort is stable.
    out.sort_by_key(|e| core::cmp::Reverse(e.mask.count_ones()));
    *v = out;
    dups
}

impl ARPResponder {
    /// The Ethernet address to answer with for `ip`.
    pub fn lookup(&self, ip: u32) -> Option<[u8; 6]> {
        self.entries
            .iter()
            .find(|e| ip & e.mask == e.dst)
            .map(|e| e.eth)
    }

    /// The reply for an ARP request, or `None` when this is not a request
    /// we answer.
    fn respond(&self, p: &Packet, cx: &Ctx) -> Option<Packet> {
        let f = EthernetFrame::new_checked(p.data()).ok()?;
        if f.ethertype() != ethertype::ARP {
            return None;
        }
        let a = ArpPacket::new_checked(f.payload()).ok()?;
        if !a.is_ethernet_ipv4() || a.operation() != OP_REQUEST {
            return None;
        }
        let tpa = a.target_protocol_addr();
        let me = self.lookup(u32::from(tpa))?;
        Some(make_reply(
            cx,
            a.sender_hardware_addr(),
            a.sender_protocol_addr(),
            EtherAddress(me),
            tpa,
            p,
        ))
    }
}

/// An Ethernet ARP reply from `src` to `target`, with annotations taken from
/// the query `q`.
pub(crate) fn make_reply(
    cx: &Ctx,
    target_eth: EtherAddress,
    target_ip: Ipv4Addr,
    src_eth: EtherAddress,
    src_ip: Ipv4Addr,
    q: &Packet,
) -> Packet {
    let mut r = cx.pool().make_len(DEFAULT_HEADROOM, 42, 0);
    {
        let d = r.data_mut();
        let mut f = EthernetFrame::new_unchecked(&mut d[..]);
        f.set_dst_addr(target_eth);
        f.set_src_addr(src_eth);
        f.set_ethertype(ethertype::ARP);
        let mut a = ArpPacket::new_unchecked(f.payload_mut());
        a.set_ethernet_ipv4();
        a.set_operation(OP_REPLY);
        a.set_sender_hardware_addr(src_eth);
        a.set_sender_protocol_addr(src_ip);
        a.set_target_hardware_addr(target_eth);
        a.set_target_protocol_addr(target_ip);
    }
    // Click's set_ether_header: the MAC header, and the network header
    // (the ARP header) right after it
    r.set_mac_header(0);
    r.set_network_header(14, 28);
    let tci = q.anno().vlan_tci();
    r.anno_mut().set_vlan_tci(tci);
    r
}

impl Element for ARPResponder {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let args = click_lang::args::split_args(config);
        let ac = cx.arg_context();
        let mut v = Vec::new();
        let mut errs = Vec::new();
        for (i, a) in args.iter().enumerate() {
            if let Err(e) = add_entries(&mut v, a, &ac) {
                errs.push(format!("argument {}: {}", i, e));
            }
        }
        if !errs.is_empty() {
            return Err(errs.join("\n"));
        }
        // the later of two entries for one prefix wins, with Click's warning
        for (a, m) in normalize(&mut v) {
            cx.warning(&format!("multiple entries for {}", unparse_with_mask(a, m)));
        }
        self.entries = v;
        Ok(())
    }

    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        match self.respond(&p, cx) {
            Some(r) => {
                self.replies += 1;
                drop(p);
                cx.push(0, r);
            }
            None => {
                if cx.noutputs() > 1 {
                    cx.push(1, p);
                }
            }
        }
    }

    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        let p = cx.pull(0)?;
        match self.respond(&p, cx) {
            Some(r) => {
                self.replies += 1;
                Some(r)
            }
            None => {
                if cx.noutputs() > 1 {
                    cx.push(1, p);
                }
                None
            }
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "table" => {
                let mut s = String::new();
                for e in &self.entries {
                    s.push_str(&format!(
                        "{} {}\n",
                        unparse_with_mask(e.dst, e.mask),
                        EtherAddress(e.eth)
                    ));
                }
                Some(Ok(s))
            }
            "lookup" => Some(Err("expected IP address".into())),
            _ => None,
        }
    }

    fn read_handler_param(
        &mut self,
        name: &str,
        param: &str,
        cx: &Ctx,
    ) -> Option<HandlerResult<String>> {
        if name != "lookup" {
            return None;
        }
        Some(match cx.arg_context().ip(param.trim()) {
            Ok(a) => Ok(self
                .lookup(u32::from(a))
                .map(|e| EtherAddress(e).to_string())
                .unwrap_or_default()),
            Err(_) => Err("expected IP address".into()),
        })
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "add" => {
                let mut v = self.entries.clone();
                Some(add_entries(&mut v, value, &cx.arg_context()).map(|()| {
                    normalize(&mut v);
                    self.entries = v;
                }))
            }
            "remove" => {
                let Ok((a, m)) = cx.arg_context().prefix(value.trim(), true) else {
                    return Some(Err("expected IP/MASK".into()));
                };
                let (m, a) = (u32::from(m), u32::from(a));
                let a = a & m;
                Some(
                    match self.entries.iter().position(|e| e.dst == a && e.mask == m) {
                        Some(i) => {
                            self.entries.remove(i);
                            Ok(())
                        }
                        None => Err(format!("{} not found", unparse_with_mask(a, m))),
                    },
                )
            }
            _ => None,
        }
    }

    crate::element_any!();
}
