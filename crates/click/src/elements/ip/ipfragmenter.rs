//! IPFragmenter: fragments large IP packets.

use crate::common::rng::Rng;
use crate::prelude::*;
use alloc::format;
use click_wire::ipv4::{FLAG_MF, OFFSET_MASK};
use click_wire::Ipv4Packet;

/// `IPFragmenter(MTU [, HONOR_DF, VERBOSE, HEADROOM])`.
pub struct IPFragmenter {
    mtu: u32,
    honor_df: bool,
    verbose: bool,
    headroom: usize,
    drops: u64,
    fragments: u64,
    fragmented: u64,
    rng: Rng,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "IPFragmenter",
    port_count: "1/1-2",
    processing: "h/h",
    group: "ip",
    signature: "IPFragmenter(MTU [, HONOR_DF, VERBOSE, HEADROOM])",
    summary: "Fragments large IP packets.",
    description: "Expects IP packets with the IP header annotation set. If the IP packet (from \
the IP header to the end of the packet) is at most MTU bytes, emits it unchanged on output 0. \
If it is longer and the don't-fragment bit (DF) is clear, splits it into fragments emitted on \
output 0, in order, starting with the first. If DF is set, sends the packet to output 1 (or \
drops it if there is no output 1); ordinarily output 1 is connected to an \
`ICMPError(ADDR, unreachable, needfrag)`. Packets that cannot be fragmented because MTU leaves \
less than 8 data bytes after the header are treated the same way. Each such packet is reported \
(the first 5 only, unless VERBOSE) as `IPFragmenter(MTU) DF SRC DST len=LENGTH` on standard \
error.\n\n\
Fragment data lengths are multiples of 8 except for the last fragment; offsets and the \
more-fragments bit are set as RFC 791 describes (fragmenting a fragment keeps its offset and MF \
bit). The first fragment keeps the whole original header (and anything before it, such as a MAC \
header); later fragments carry a fresh 20-byte header plus the options whose copied flag is \
set, padded to a multiple of 4 bytes, and all of the original packet's annotations. Every \
fragment's header checksum is recomputed.\n\n\
A packet whose IP length is at most MTU but that is longer because of link-level padding is \
trimmed to its IP length and passed on. Packets whose IP header is malformed (header or total \
length inconsistent with the packet) are dropped and counted in `drops`.\n\n\
Keyword arguments:\n\n\
- `HONOR_DF` (boolean): if false, ignore DF and fragment every packet longer than MTU; such \
fragments get a (pseudo-)random IP ID and DF cleared. Default true.\n\
- `VERBOSE` (boolean): report every DF packet. Default false.\n\
- `HEADROOM` (unsigned): headroom of the second and later fragments. Default 64.",
    ports: "one input; one or two outputs (1: packets that may not be fragmented)",
    handlers: &[
        HandlerDoc {
            name: "drops",
            mode: HandlerMode::Read,
            text: "Number of packets that could not be fragmented (sent to output 1 or dropped).",
        },
        HandlerDoc {
            name: "fragments",
            mode: HandlerMode::Read,
            text: "Number of fragments emitted.",
        },
        HandlerDoc {
            name: "fragmented_count",
            mode: HandlerMode::Read,
            text: "Number of input packets that were fragmented (a ClickOS addition).",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || {
        Box::new(IPFragmenter {
            mtu: 0,
            honor_df: true,
            verbose: false,
            headroom: DEFAULT_HEADROOM,
            drops: 0,
            fragments: 0,
            fragmented: 0,
            rng: Rng::new(0),
        })
    },
};

/// Copies the options of `opts` whose copied flag is set into `out` (when
/// given), padded with end-of-list bytes to a multiple of 4. Returns the
/// copied length.
fn copy_options(opts: &[u8], mut out: Option<&mut [u8]>) -> usize {
    let mut pos = 0;
    let mut i = 0;
    while i < opts.len() {
        let opt = opts[i];
        let len = match opt {
            1 => 1,
            0 => break,
            _ => {
                if i + 1 >= opts.len() {
                    break;
                }
                let l = usize::from(opts[i + 1]);
                if l < 2 || i + l > opts.len() {
                    break;
                }
                l
            }
        };
        if opt & 0x80 != 0 {
            if let Some(o) = out.as_deref_mut() {
                o[pos..pos + len].copy_from_slice(&opts[i..i + len]);
            }
            pos += len;
        }
        i += len;
    }
    while pos & 3 != 0 {
        if let Some(o) = out.as_deref_mut() {
            o[pos] = 0;
        }
        pos += 1;
    }
    pos
}

enum Verdict {
    Pass,
    Fragment { hlen: usize, ip_len: usize },
    CannotFragment,
    Bad,
}

impl IPFragmenter {
    fn classify(&self, p: &mut Packet) -> Verdict {
        let Some(ip) = p.network_header() else {
            return Verdict::Bad;
        };
        let avail = ip.len();
        if avail <= self.mtu as usize {
            return Verdict::Pass;
        }
        // `20 <= hlen <= ip_len <= avail`, or the packet is bad.
        let Ok(ip) = Ipv4Packet::new_checked(ip) else {
            return Verdict::Bad;
        };
        let hlen = usize::from(ip.header_len());
        let ip_len = usize::from(ip.total_len());
        if ip_len <= self.mtu as usize {
            // Only link-level padding makes it too long.
            p.take(avail - ip_len);
            return Verdict::Pass;
        }
        let df = ip.dont_frag();
        let first_dlen = (i64::from(self.mtu) - hlen as i64) & !7;
        if (df && self.honor_df) || first_dlen < 8 {
            return Verdict::CannotFragment;
        }
        Verdict::Fragment { hlen, ip_len }
    }

    fn random_id(&mut self) -> u16 {
        (self.rng.next_u64() >> 48) as u16
    }

    /// Handles one packet; fragments go to `out`.
    fn process(&mut self, mut p: Packet, out: &mut Batch, cx: &Ctx) {
        match self.classify(&mut p) {
            Verdict::Pass => out.push(p),
            Verdict::Bad => self.drops += 1,
            Verdict::CannotFragment => {
                if self.verbose || self.drops < 5 {
                    if let Some(ip) = p.ip_header() {
                        cx.error_line(&format!(
                            "IPFragmenter({}) DF {} {} len={}",
                            self.mtu,
                            ip.src_addr(),
                            ip.dst_addr(),
                            p.len()
                        ));
                    }
                }
                self.drops += 1;
                if cx.noutputs() > 1 {
                    cx.push(1, p);
                }
            }
            Verdict::Fragment { hlen, ip_len } => self.fragment(p, hlen, ip_len, out, cx),
        }
    }

    fn fragment(&mut self, mut p: Packet, hlen: usize, ip_len: usize, out: &mut Batch, cx: &Ctx) {
        let mtu = self.mtu as usize;
        let first_dlen = (mtu - hlen) & !7;
        let in_dlen = ip_len - hlen;
        let new_id = self.random_id();
        let nh_off: isize = p.network_header_offset().unwrap_or(0);
        let anno = p.anno().clone();
        // `classify` checked the lengths: `20 <= hlen <= ip_len <= len`.
        let Some(mut ip) = p.ip_header_mut() else {
            return;
        };
        if ip.dont_frag() {
            // Ignoring DF: the ID cannot be trusted to be unique.
            ip.set_ident(new_id);
            ip.set_dont_frag(false);
        }
        let had_mf = ip.more_frags();
        let orig_flags_off = ip.flags_frag();
        ip.set_total_len((hlen + first_dlen) as u16);
        ip.set_more_frags(true);
        ip.fill_checksum();

        // Template for the later fragments: the base header and the copied
        // options.
        let mut tmpl = [0u8; 60];
        tmpl[..20].copy_from_slice(&ip.header()[..20]);
        let opt_len = copy_options(ip.options(), Some(&mut tmpl[20..]));
        let out_hlen = 20 + opt_len;
        let mut t = Ipv4Packet::new_unchecked(&mut tmpl[..]);
        t.set_version(4);
        t.set_header_len(out_hlen as u8);
        let base_off = orig_flags_off & OFFSET_MASK;
        let flags = (orig_flags_off & !OFFSET_MASK) | FLAG_MF;
        // The payload (`ip_len` is past the new total length now).
        let data = &ip.into_inner()[hlen..];

        let mut rest: Batch = Batch::new();
        let mut off = first_dlen;
        while off < in_dlen {
            let dlen = ((mtu - out_hlen) & !7).min(in_dlen - off);
            let last = off + dlen >= in_dlen;
            let mut q = cx.pool().make_len(self.headroom, out_hlen + dlen, 0);
            {
                let d = q.data_mut();
                d[..out_hlen].copy_from_slice(&tmpl[..out_hlen]);
                d[out_hlen..].copy_from_slice(&data[off..off + dlen]);
                let mut f = Ipv4Packet::new_unchecked(d);
                f.set_total_len((out_hlen + dlen) as u16);
                let mut fo = flags | (base_off.wrapping_add((off >> 3) as u16) & OFFSET_MASK);
                if last && !had_mf {
                    fo &= !FLAG_MF;
                }
                f.set_flags_frag(fo);
                f.fill_checksum();
            }
            q.set_network_header(0, out_hlen);
            *q.anno_mut() = anno.clone();
            rest.push(q);
            off += dlen;
        }
        // The first fragment: the original packet, cut after its data.
        let keep = (nh_off + (hlen + first_dlen) as isize).max(0) as usize;
        let len = p.len();
        p.take(len.saturating_sub(keep));
        self.fragments += 1 + rest.len() as u64;
        self.fragmented += 1;
        out.push(p);
        out.append(&mut rest);
    }
}

impl Element for IPFragmenter {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let mtu = a.read_mp::<u32>("MTU")?;
        let honor_df = a.read_p::<bool>("HONOR_DF")?.unwrap_or(true);
        let verbose = a.read_p::<bool>("VERBOSE")?.unwrap_or(false);
        let headroom = a.read::<usize>("HEADROOM")?.unwrap_or(DEFAULT_HEADROOM);
        a.complete()?;
        if mtu < 8 {
            return Err("MTU must be at least 8".into());
        }
        if headroom > 4096 {
            return Err("HEADROOM too large".into());
        }
        self.mtu = mtu;
        self.honor_df = honor_df;
        self.verbose = verbose;
        self.headroom = headroom;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        // Seeded from the element's name, so runs repeat.
        self.rng = Rng::from_name(cx.name());
        Ok(())
    }

    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        if p.network_header()
            .is_some_and(|h| h.len() <= self.mtu as usize)
        {
            cx.push(0, p);
            return;
        }
        let mut out = Batch::new();
        self.process(p, &mut out, cx);
        if out.len() == 1 {
            if let Some(p) = out.pop() {
                cx.push(0, p);
            }
        } else {
            cx.push_batch(0, out);
        }
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        let mtu = self.mtu as usize;
        if batch
            .iter()
            .all(|p| p.network_header().is_some_and(|h| h.len() <= mtu))
        {
            cx.push_batch(0, batch);
            return;
        }
        let mut out = Batch::with_capacity(batch.len() + 8);
        for p in batch {
            self.process(p, &mut out, cx);
        }
        cx.push_batch(0, out);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "drops" => self.drops.to_string(),
            "fragments" => self.fragments.to_string(),
            "fragmented_count" => self.fragmented.to_string(),
            _ => return None,
        }))
    }

    crate::element_any!();
}

#[cfg(test)]
mod tests {
    use super::copy_options;

    #[test]
    fn option_copying() {
        // NOP, record route (not copied), LSRR (copied), EOL.
        let opts = [1, 7, 7, 4, 0, 0, 0, 0, 0x83, 7, 4, 1, 2, 3, 4, 0];
        let mut out = [0xffu8; 40];
        let n = copy_options(&opts, Some(&mut out));
        assert_eq!(n, 8);
        assert_eq!(&out[..8], &[0x83, 7, 4, 1, 2, 3, 4, 0]);
        assert_eq!(copy_options(&opts, None), 8);
        // Zero-length and overlong options stop the scan.
        assert_eq!(copy_options(&[0x83, 0, 1, 1], None), 0);
        assert_eq!(copy_options(&[0x83, 9, 1, 1], None), 0);
        assert_eq!(copy_options(&[0x83], None), 0);
        assert_eq!(copy_options(&[0x94, 4, 0, 0], None), 4);
    }
}
