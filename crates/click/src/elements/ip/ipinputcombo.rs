//! IPInputCombo: an IP router's input path (Paint, Strip(14),
//! CheckIPHeader, GetIPAddress(16)) in one element.

use super::checkipheader::{addr_list, interfaces_arg, old_bad_src, CheckIPHeader};
use crate::prelude::*;
use click_lang::args::RawString;

/// `IPInputCombo(COLOR [, BADSRC, KEYWORDS])`.
pub struct IPInputCombo {
    color: u8,
    check: CheckIPHeader,
    drops: u64,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "IPInputCombo",
    port_count: "1/1",
    processing: "a/a",
    group: "ip",
    signature: "IPInputCombo(COLOR [, BADSRC, KEYWORDS])",
    summary: "Input combo for IP routing.",
    description: "A single element encapsulating common tasks on an IP router's input path. \
Effectively equivalent to\n\n\
```\n\
elementclass IPInputCombo { $COLOR, $BADADDRS |\n\
\x20 input[0] -> Paint($COLOR)\n\
\x20       -> Strip(14)\n\
\x20       -> CheckIPHeader($BADADDRS)\n\
\x20       -> GetIPAddress(16)\n\
\x20       -> [0]output;\n\
}\n\
```\n\n\
That is: sets the paint annotation to COLOR (0..255), strips the 14-byte Ethernet header, checks \
the IP header (length, version, header length, total length, checksum, and the source address \
against BADSRC), sets the IP header annotation, shortens the packet to the IP total length, and \
sets the destination IP address annotation to the IP destination address.\n\n\
Invalid packets are dropped and counted; the first one is reported on standard error as `IP \
checksum failed` (whatever the reason, as in Click).\n\n\
BADSRC, given positionally, is a space-separated list of bad source addresses (0.0.0.0 and \
255.255.255.255 are added to it). Keyword arguments correspond to CheckIPHeader's:\n\n\
- `INTERFACES` (space-separated ADDR/MASK): this router's interfaces; sets BADSRC to their \
broadcast addresses plus 0.0.0.0 and 255.255.255.255, and GOODDST to their addresses.\n\
- `BADSRC` (space-separated IP addresses): drop packets with these source addresses (unless \
the destination is in GOODDST).\n\
- `GOODDST` (space-separated IP addresses): destinations exempt from BADSRC.",
    ports: "one input, one output",
    handlers: &[HandlerDoc {
        name: "drops",
        mode: HandlerMode::Read,
        text: "Number of invalid packets dropped.",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || {
        Box::new(IPInputCombo {
            color: 0,
            check: CheckIPHeader::default(),
            drops: 0,
        })
    },
};

impl IPInputCombo {
    /// Paint, Strip(14), CheckIPHeader and GetIPAddress(16) on one packet;
    /// false when the packet is invalid.
    #[inline]
    fn process(&self, p: &mut Packet) -> bool {
        p.anno_mut().set_paint(self.color);
        // Strip(14) on a shorter packet leaves nothing: too small for an
        // IP header either way.
        if !p.pull(14) {
            return false;
        }
        // CheckIPHeader (offset 0) sets the destination IP annotation to
        // the IP destination address, which is GetIPAddress(16)'s work.
        self.check.check(p).is_ok()
    }

    #[cold]
    fn drop_it(&mut self, cx: &Ctx) {
        if self.drops == 0 {
            cx.error_line("IP checksum failed");
        }
        self.drops += 1;
    }
}

impl Element for IPInputCombo {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let ac = cx.arg_context();
        let mut a = cx.args(config);
        let color = a.read_mp::<u8>("COLOR")?;
        let mut bad_src = Vec::new();
        let mut good_dst = Vec::new();
        // Click reads the old BADSRC as "BADSRC*", a keyword no argument
        // can spell: positional only (BADSRC given as a keyword is the new
        // form, read below).
        let mut old = a.read_p::<RawString>("BADSRC*")?;
        if old.is_none() && a.remaining() > 0 {
            // A positional list of address names (`eth0:bcast eth1:bcast`)
            // looks like a keyword argument to the argument parser; Click's
            // keywords are upper case.
            let rest = a.rest();
            let is_kw = |w: &String| {
                w.split_whitespace().next().is_some_and(|k| {
                    k.bytes()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_')
                })
            };
            let (kw, mut pos): (Vec<String>, Vec<String>) = rest.into_iter().partition(is_kw);
            if pos.len() > 1 {
                return Err(String::from("too many arguments"));
            }
            old = pos.pop().map(RawString);
            a = Args::from_vec_in(kw, ac);
        }
        if let Some(s) = old {
            bad_src = old_bad_src(&s.0, &ac)?;
        }
        if let Some(s) = a.read::<RawString>("INTERFACES")? {
            (bad_src, good_dst) = interfaces_arg(&s.0, &ac)?;
        }
        if let Some(s) = a.read::<RawString>("BADSRC")? {
            bad_src = addr_list("BADSRC", &s.0, &ac)?;
        }
        if let Some(s) = a.read::<RawString>("GOODDST")? {
            good_dst = addr_list("GOODDST", &s.0, &ac)?;
        }
        a.complete()?;
        self.color = color;
        self.check = CheckIPHeader::with_addrs(bad_src, good_dst);
        Ok(())
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, cx: &Ctx) -> Option<Packet> {
        if self.process(&mut p) {
            Some(p)
        } else {
            self.drop_it(cx);
            None
        }
    }

    #[inline]
    fn push_batch(&mut self, _port: usize, mut batch: Batch, cx: &Ctx) {
        let before = batch.len();
        batch.retain_mut(|p| self.process(p));
        for _ in batch.len()..before {
            self.drop_it(cx);
        }
        cx.push_batch(0, batch);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "drops" => Some(Ok(self.drops.to_string())),
            _ => None,
        }
    }

    crate::element_any!();
}
