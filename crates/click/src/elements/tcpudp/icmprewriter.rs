//! ICMPRewriter: rewrites ICMP errors by the mappings of IP rewriters.

use super::iprewriterbase::{fix_zero_checksum, root_flow_set, update_words, Rewriter};
use crate::common::args::parse_anno;
use crate::common::iprw::*;
use crate::prelude::*;
use alloc::format;
use core::cell::Cell;
use core::net::Ipv4Addr;

/// One MAPS element, resolved.
struct MapRef {
    name: String,
    port_offset: i32,
    set: Option<SharedFlowSet>,
    elem: usize,
    /// The member index in `set`, once found.
    member: Cell<usize>,
}

/// `ICMPRewriter`.
pub struct ICMPRewriter {
    maps: Vec<MapRef>,
    annos: u32,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "ICMPRewriter",
    port_count: "1/1-",
    processing: "h/h",
    group: "tcpudp",
    signature: "ICMPRewriter(MAPS [, DST_ANNO, REPLY_ANNO])",
    summary: "Rewrites ICMP errors based on IP rewriter mappings.",
    description: "Lets ICMP errors (destination unreachable, time exceeded, parameter problem, \
source quench, redirect) about rewritten packets pass through a NAT. MAPS is a space-separated \
list of rewriters (IPRewriter, TCPRewriter, UDPRewriter, IPAddrRewriter, IPAddrPairRewriter, \
ICMPPingRewriter). For an error quoting a packet that a rewriter rewrote, ICMPRewriter finds the \
mapping and rewrites the error to look like a response to the original packet: the outer \
destination (when it was the rewritten source), the quoted IP addresses, the quoted TCP/UDP \
ports or ICMP echo identifier, and every checksum involved (outer IP, ICMP, quoted IP, quoted \
TCP/UDP/ICMP) incrementally. The result leaves on output 0, or, for a map written `NAME:OFFSET`, \
on OFFSET plus the mapping's output. Other packets are dropped (as Click 2.1 does, whatever the \
number of outputs).\n\nKeywords:\n\n\
- `DST_ANNO`: set the destination address annotation when the outer destination changes \
(default true).\n\
- `REPLY_ANNO`: set this one-byte annotation from the mapping's recorded value, for errors \
about the reply direction.",
    ports: "one push input, one or more push outputs",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || {
        Box::new(ICMPRewriter {
            maps: Vec::new(),
            annos: 1,
        })
    },
};

fn get16(t: &[u8], o: usize) -> u16 {
    u16::from_be_bytes([t[o], t[o + 1]])
}
fn put16(t: &mut [u8], o: usize, v: u16) {
    t[o..o + 2].copy_from_slice(&v.to_be_bytes());
}

impl ICMPRewriter {
    /// The output for `p` (rewritten in place), or negative to drop it.
    fn handle(&self, p: &mut Packet) -> i32 {
        let Some(ip) = p.ip_header() else {
            return -1;
        };
        if ip.protocol() != IP_PROTO_ICMP {
            return -1;
        }
        let outer_dst = u32::from(ip.dst_addr());
        let hl = ip.header_len() as usize;
        let ihl = p.network_header_length().unwrap_or(hl);
        let Some(nh) = p.network_header() else {
            return -1;
        };
        let Some(icmp) = nh.get(ihl..) else {
            return -1;
        };
        // unreachable, source quench, redirect, time exceeded, parameter problem
        if icmp.len() < 28 || !matches!(icmp[0], 3 | 4 | 5 | 11 | 12) {
            return -1;
        }
        let enc = &icmp[8..];
        let enc_hl = ((enc[0] & 0x0f) as usize) * 4;
        if enc[0] >> 4 != 4 || enc_hl < 20 {
            return -1;
        }
        let enc_p = enc[9];
        let enc_first = get16(enc, 6) & 0x1fff == 0;
        let enc_src = u32::from_be_bytes([enc[12], enc[13], enc[14], enc[15]]);
        let enc_dst = u32::from_be_bytes([enc[16], enc[17], enc[18], enc[19]]);
        let et = enc.get(enc_hl..).unwrap_or(&[]);
        let mut search = FlowId::new(enc_dst, 0, enc_src, 0);
        let mut use_transp = false;
        if matches!(enc_p, IP_PROTO_TCP | IP_PROTO_UDP | IP_PROTO_DCCP) {
            if et.len() >= 8 && enc_first {
                search.sport = get16(et, 2);
                search.dport = get16(et, 0);
                use_transp = true;
            }
        } else if enc_p == IP_PROTO_ICMP && et.len() >= 6 && enc_first && et[0] == 8 {
            search.sport = get16(et, 4);
            use_transp = true;
        }
        // find the mapping
        let mut found = None;
        for (mi, mr) in self.maps.iter().enumerate() {
            let Some(set) = &mr.set else {
                continue;
            };
            let set = set.borrow();
            let mut m = mr.member.get();
            if set.members.get(m).is_none_or(|x| x.elem != mr.elem) {
                match set.member_of(mr.elem) {
                    Some(i) => {
                        m = i;
                        mr.member.set(i);
                    }
                    None => continue,
                }
            }
            let r = set.members[m].get_entry(enc_p, &search, &set.flows);
            if r != NIL {
                let f = &set.flows[eref_flow(r)];
                let dir = eref_dir(r);
                found = Some((mi, f.rewritten(dir), dir, f.out[dir], f.reply_anno));
                break;
            }
        }
        let Some((mi, new, dir, out, reply_anno)) = found else {
            return -1;
        };
        // outer destination
        if outer_dst == search.daddr {
            if let Some(mut ip) = p.ip_header_mut() {
                let old = u32::from(ip.dst_addr());
                ip.set_dst_addr(Ipv4Addr::from(new.daddr));
                let c = update_words(
                    ip.checksum(),
                    &[(old >> 16) as u16, old as u16],
                    &[(new.daddr >> 16) as u16, new.daddr as u16],
                );
                ip.set_checksum(c);
            }
            if self.annos & 1 != 0 {
                p.anno_mut().set_dst_ip(Ipv4Addr::from(new.daddr));
            }
        }
        if dir == 1 && self.annos & 2 != 0 {
            p.anno_mut()
                .set_u8_at((self.annos >> 2) as usize, reply_anno);
        }
        let Some(nh) = p.network_header_mut() else {
            return -1;
        };
        let Some(icmp) = nh.get_mut(ihl..) else {
            return -1;
        };
        let (icmph, enc) = icmp.split_at_mut(8);
        // halfwords that change, for the outer ICMP checksum: the quoted IP
        // checksum, addresses, ports or identifier, transport checksum
        let mut old_hw = [0u16; 8];
        let mut new_hw = [0u16; 8];
        old_hw[0] = get16(enc, 10);
        for k in 0..4 {
            old_hw[1 + k] = get16(enc, 12 + 2 * k);
        }
        enc[12..16].copy_from_slice(&new.daddr.to_be_bytes());
        enc[16..20].copy_from_slice(&new.saddr.to_be_bytes());
        for k in 0..4 {
            new_hw[1 + k] = get16(enc, 12 + 2 * k);
        }
        let c = update_words(old_hw[0], &old_hw[1..5], &new_hw[1..5]);
        put16(enc, 10, c);
        new_hw[0] = c;
        let mut nhw = 5;
        if use_transp {
            let et = &mut enc[enc_hl..];
            if matches!(enc_p, IP_PROTO_TCP | IP_PROTO_UDP | IP_PROTO_DCCP) {
                old_hw[5] = get16(et, 0);
                old_hw[6] = get16(et, 2);
                put16(et, 0, new.dport);
                put16(et, 2, new.sport);
                new_hw[5] = new.dport;
                new_hw[6] = new.sport;
                nhw = 7;
                let csum_off = if enc_p == IP_PROTO_TCP && et.len() >= 18 {
                    Some(16)
                } else if enc_p == IP_PROTO_UDP && et.len() >= 8 && get16(et, 6) != 0 {
                    Some(6)
                } else {
                    None
                };
                if let Some(o) = csum_off {
                    old_hw[7] = get16(et, o);
                    let c = update_words(old_hw[7], &old_hw[1..7], &new_hw[1..7]);
                    put16(et, o, c);
                    new_hw[7] = c;
                    nhw = 8;
                }
            } else {
                old_hw[5] = get16(et, 4);
                new_hw[5] = new.dport;
                put16(et, 4, new.dport);
                old_hw[6] = get16(et, 2);
                let c = update_words(old_hw[6], &old_hw[5..6], &new_hw[5..6]);
                put16(et, 2, c);
                fix_zero_checksum(et, 2);
                new_hw[6] = get16(et, 2);
                nhw = 7;
            }
        }
        let c = update_words(get16(icmph, 2), &old_hw[..nhw], &new_hw[..nhw]);
        put16(icmph, 2, c);
        let off = self.maps[mi].port_offset;
        if off >= 0 {
            off + out as i32
        } else {
            0
        }
    }
}

impl Element for ICMPRewriter {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let maps: click_lang::RawString = a.read_mp("MAPS")?;
        let dst_anno: Option<bool> = a.read("DST_ANNO")?;
        let reply: Option<String> = a.read("REPLY_ANNO")?;
        a.complete()?;
        let reply = reply
            .map(|s| parse_anno(&s, 1).map_err(|e| format!("REPLY_ANNO: {e}")))
            .transpose()?;
        let mut out = Vec::new();
        let mut errs = Vec::new();
        for w in maps.0.split_ascii_whitespace() {
            let (name, off) = match w.split_once(':') {
                Some((n, o)) => match click_lang::parse_i64(o) {
                    Ok(o) if o >= 0 && o <= i32::MAX as i64 => (n, o as i32),
                    _ => {
                        errs.push(format!("{w} not an IP rewriter"));
                        continue;
                    }
                },
                None => (w, -1),
            };
            out.push(MapRef {
                name: name.to_string(),
                port_offset: off,
                set: None,
                elem: usize::MAX,
                member: Cell::new(usize::MAX),
            });
        }
        if !errs.is_empty() {
            return Err(errs.join("\n"));
        }
        if out.is_empty() {
            return Err("no IP rewriters supplied".into());
        }
        self.maps = out;
        self.annos = dst_anno.unwrap_or(true) as u32 | reply.map_or(0, |o| 2 | ((o as u32) << 2));
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let mut errs = Vec::new();
        for mr in self.maps.iter_mut() {
            let found = cx.find_element(&mr.name).and_then(|e| {
                cx.with_element(e, |el| {
                    el.as_any().downcast_ref::<Rewriter>().map(|r| {
                        let nout = cx.element_noutputs(e);
                        (e, r.capacity_link(), nout)
                    })
                })
                .flatten()
            });
            let Some((e, (own, link), nout)) = found else {
                errs.push(format!("{} not an IP rewriter", mr.name));
                continue;
            };
            if mr.port_offset >= 0 && mr.port_offset as usize + nout > cx.noutputs() {
                errs.push(format!(
                    "{}:{} port offset requires more than {} {}",
                    mr.name,
                    mr.port_offset,
                    cx.noutputs(),
                    if cx.noutputs() == 1 {
                        "output"
                    } else {
                        "outputs"
                    }
                ));
                continue;
            }
            mr.elem = e;
            mr.set = Some(match link {
                Some(n) => root_flow_set(cx, &n)?,
                None => own,
            });
        }
        if !errs.is_empty() {
            return Err(errs.join("\n"));
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, mut p: Packet, cx: &Ctx) {
        let out = self.handle(&mut p);
        if out >= 0 && (out as usize) < cx.noutputs() {
            cx.push(out as usize, p);
        }
    }

    crate::element_any!();
}
