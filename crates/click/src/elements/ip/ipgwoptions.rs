//! IPGWOptions: processes the IP options every router must process (Record
//! Route and Timestamp).

use crate::prelude::*;
use click_lang::args::{split_words, RawString};
use click_wire::Ipv4Packet;
use core::net::Ipv4Addr;

const IPOPT_EOL: u8 = 0;
const IPOPT_NOP: u8 = 1;
const IPOPT_RR: u8 = 7;
const IPOPT_TS: u8 = 68;

/// `IPGWOptions(MYADDR [, OTHERADDRS])`.
pub struct IPGWOptions {
    my: [u8; 4],
    /// MYADDR and OTHERADDRS.
    addrs: Vec<[u8; 4]>,
    drops: u64,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "IPGWOptions",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "ip",
    signature: "IPGWOptions(MYADDR [, OTHERADDRS])",
    summary: "Processes router IP options.",
    description: "Processes the IP options that every router must process, not just the \
packet's destination: Record Route and Timestamp. Expects IP packets with the IP header \
annotation set. MYADDR is the router's address on the interface downstream of the element \
(RFC 1812 4.2.2.2: place it on the output path); OTHERADDRS, a space-separated list, holds the \
router's other interface addresses.\n\n\
- Record Route (type 7): if there is room, stores MYADDR at the pointer and advances it by \
4; a full option is left alone.\n\
- Timestamp (type 68): flag 0 stores a timestamp; flag 1 stores MYADDR and a timestamp; flag \
3 (prespecified addresses) stores a timestamp only if the next address is one of MYADDR and \
OTHERADDRS. A full option (flags 0 and 1) increments its overflow count instead. Timestamps \
are milliseconds since midnight UT, from the router's clock.\n\n\
Other options, including the source-route options, are skipped (as in Click). The header \
checksum is recomputed when a Record Route or Timestamp option was seen.\n\n\
A malformed option (bad length, bad pointer, unknown timestamp flag, a full flag-3 option, \
or an overflow count that would pass 15) sends the packet to output 1, or drops it if there is \
none, and counts it. Before that, the ICMP parameter-problem annotation (Click's \
`ICMP_PARAMPROB_ANNO`, annotation byte 17) is set to the offset of the erroneous byte from the \
start of the IP header, so an `ICMPError(ADDR, parameterproblem)` on output 1 can point at it. \
Packets whose IP header is shorter than its length field says go there too, pointing at byte \
0; packets without a readable IP header are dropped and counted. A Timestamp option shorter \
than 4 bytes is reported as a bad length (Click would write its overflow byte past the \
option).",
    ports: "one input; one or two outputs (1: packets with bad options)",
    handlers: &[HandlerDoc {
        name: "drops",
        mode: HandlerMode::Read,
        text: "Number of packets with bad options (or headers).",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || {
        Box::new(IPGWOptions {
            my: [0; 4],
            addrs: Vec::new(),
            drops: 0,
        })
    },
};

/// The outcome of option processing.
pub(crate) enum Verdict {
    Pass,
    /// Bad option: the offset of the erroneous byte.
    Error(u8),
    Drop,
}

impl IPGWOptions {
    /// Options processing for router address `my` and no other addresses
    /// (IPOutputCombo's).
    pub(crate) fn with_addr(my: Ipv4Addr) -> IPGWOptions {
        IPGWOptions {
            my: my.octets(),
            addrs: alloc::vec![my.octets()],
            drops: 0,
        }
    }

    /// Processes the options of one packet in place (shared with
    /// IPOutputCombo); `now` is asked for the time only when needed.
    pub(crate) fn process(&self, p: &mut Packet, now: impl FnOnce() -> Timestamp) -> Verdict {
        let Some(ip) = p.ip_header_mut() else {
            return Verdict::Drop;
        };
        let hlen = usize::from(ip.header_len());
        if hlen <= 20 {
            return Verdict::Pass;
        }
        if ip.check_header_len().is_err() {
            return Verdict::Error(0);
        }
        // The options are walked as bytes (see docs/WRITING-ELEMENTS.md,
        // "Header access"), over the whole buffer: like Click, a pointer
        // byte just past the header is read from the packet.
        let ip = ip.into_inner();
        let now = now();
        let msec = now.sec().rem_euclid(86400) * 1000 + i64::from(now.subsec_nsec() / 1_000_000);
        let ms = (msec as u32).to_be_bytes();
        let byte = |ip: &[u8], i: usize| ip.get(i).copied().unwrap_or(0);
        let mut touched = false;
        let mut oi = 20;
        while oi < hlen {
            let ty = ip[oi];
            if ty == IPOPT_NOP {
                oi += 1;
                continue;
            } else if ty == IPOPT_EOL {
                break;
            }
            let xlen = usize::from(byte(ip, oi + 1));
            if xlen < 2 || oi + xlen > hlen || (ty == IPOPT_TS && xlen < 4) {
                return Verdict::Error((oi + 1) as u8);
            }
            if ty != IPOPT_RR && ty != IPOPT_TS {
                oi += xlen;
                continue;
            }
            touched = true;
            // The pointer is 1-origin.
            let ptr = i64::from(byte(ip, oi + 2)) - 1;
            if ty == IPOPT_RR {
                if ptr >= 3 && ptr as usize + 4 <= xlen {
                    let at = oi + ptr as usize;
                    ip[at..at + 4].copy_from_slice(&self.my);
                    ip[oi + 2] = ip[oi + 2].wrapping_add(4);
                } else if ptr != xlen as i64 {
                    return Verdict::Error((oi + 2) as u8);
                }
            } else {
                let oflw = ip[oi + 3] >> 4;
                let flg = ip[oi + 3] & 0xf;
                let mut overflowed = false;
                if ptr < 4 {
                    return Verdict::Error((oi + 2) as u8);
                }
                let pu = ptr as usize;
                let at = oi + pu;
                if flg == 0 {
                    if pu + 4 <= xlen {
                        ip[at..at + 4].copy_from_slice(&ms);
                        ip[oi + 2] = ip[oi + 2].wrapping_add(4);
                    } else {
                        overflowed = true;
                    }
                } else if flg == 1 {
                    if pu + 8 <= xlen {
                        ip[at..at + 4].copy_from_slice(&self.my);
                        ip[at + 4..at + 8].copy_from_slice(&ms);
                        ip[oi + 2] = ip[oi + 2].wrapping_add(8);
                    } else {
                        overflowed = true;
                    }
                } else if flg == 3 && pu + 8 <= xlen {
                    let a = [ip[at], ip[at + 1], ip[at + 2], ip[at + 3]];
                    if self.addrs.contains(&a) {
                        ip[at + 4..at + 8].copy_from_slice(&ms);
                        ip[oi + 2] = ip[oi + 2].wrapping_add(8);
                    }
                } else {
                    return Verdict::Error((oi + 3) as u8);
                }
                if overflowed {
                    if oflw < 15 {
                        ip[oi + 3] = ((oflw + 1) << 4) | flg;
                    } else {
                        return Verdict::Error((oi + 3) as u8);
                    }
                }
            }
            oi += xlen;
        }
        if touched {
            Ipv4Packet::new_unchecked(ip).fill_checksum();
        }
        Verdict::Pass
    }
}

impl Element for IPGWOptions {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let my = a.read_mp::<Ipv4Addr>("MYADDR")?;
        let mut others = a.read_p::<RawString>("OTHERADDRS")?;
        if others.is_none() && a.remaining() == 1 {
            // A positional address list such as `5.5.5.5 9.9.9.9` looks
            // like a keyword argument to the argument parser.
            others = a.rest().pop().map(RawString);
        }
        a.complete()?;
        let mut addrs = Vec::new();
        if let Some(o) = others {
            for w in split_words(&o.0) {
                let ip = cx
                    .arg_context()
                    .ip(&w)
                    .map_err(|_| String::from("OTHERADDRS: expected list of IP addresses"))?;
                addrs.push(ip.octets());
            }
        }
        addrs.push(my.octets());
        self.my = my.octets();
        self.addrs = addrs;
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, cx: &Ctx) -> Option<Packet> {
        match self.process(&mut p, || cx.now()) {
            Verdict::Pass => Some(p),
            Verdict::Drop => {
                self.drops += 1;
                None
            }
            Verdict::Error(off) => {
                self.drops += 1;
                p.anno_mut().set_icmp_paramprob(off);
                if cx.noutputs() > 1 {
                    cx.push(1, p);
                }
                None
            }
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "drops" => Some(Ok(self.drops.to_string())),
            _ => None,
        }
    }

    crate::element_any!();
}
