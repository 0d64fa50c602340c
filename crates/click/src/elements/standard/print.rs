//! Print: prints packet contents to standard error.

use crate::prelude::*;
use alloc::format;
use core::fmt::Write as _;

/// `Print([LABEL, MAXLENGTH, KEYWORDS])`.
pub struct Print {
    label: String,
    bytes: i32,
    contents: u8,
    timestamp: bool,
    print_anno: bool,
    headroom: bool,
    cpu: bool,
    active: bool,
    line: String,
}

impl Default for Print {
    fn default() -> Self {
        Print {
            label: String::new(),
            bytes: 24,
            contents: 1,
            timestamp: false,
            print_anno: false,
            headroom: false,
            cpu: false,
            active: true,
            line: String::new(),
        }
    }
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "Print",
    port_count: "1/1",
    processing: "a/a",
    group: "standard",
    signature: "Print([LABEL, MAXLENGTH, KEYWORDS])",
    summary: "Prints packet contents.",
    description: "Prints up to MAXLENGTH bytes of data from each packet, in hex, preceded by the \
LABEL text, as `LABEL: LENGTH | xxxxxxxx xxxxxxxx ...` on standard error.\n\n\
Keyword arguments:\n\n\
- `MAXLENGTH` (integer): maximum number of content bytes to print; negative prints the whole \
packet. Default 24. (`LENGTH` and `NBYTES` are deprecated synonyms.)\n\
- `CONTENTS` (word): `NONE`, `HEX` or `ASCII` (or a boolean). Default `HEX`.\n\
- `TIMESTAMP` (boolean): print each packet's timestamp. Default false.\n\
- `PRINTANNO` (boolean): print the 48 annotation bytes in hex. Default false.\n\
- `CPU` (boolean): print the CPU number, `(0)`, after the label (Click accepts this only in \
its kernel module). Default false.\n\
- `HEADROOM` (boolean): print headroom and tailroom as `(h64 t0)`. Default false.\n\
- `ACTIVE` (boolean): if false, print nothing. Default true.",
    ports: "one input, one output",
    handlers: &[HandlerDoc {
        name: "active",
        mode: HandlerMode::ReadWrite,
        text: "The ACTIVE value.",
    }],
    live_reconfigure: true,
    order_sensitive: true,
    make: || Box::new(Print::default()),
};

const HEX: &[u8; 16] = b"0123456789abcdef";

impl Print {
    fn print(&mut self, p: &Packet, cx: &Ctx) {
        let len = p.len();
        let mut bytes = if self.contents != 0 { self.bytes } else { 0 };
        if bytes < 0 || (len as i64) < i64::from(bytes) {
            bytes = len as i32;
        }
        let bytes = bytes as usize;
        let mut sa = core::mem::take(&mut self.line);
        sa.clear();
        let mut sep = "";
        if !self.label.is_empty() {
            sa.push_str(&self.label);
            sep = ": ";
        }
        if self.cpu {
            sa.push_str("(0)");
            sep = ": ";
        }
        if self.timestamp {
            let _ = write!(sa, "{}{}", sep, p.timestamp());
            sep = ": ";
        }
        let _ = write!(sa, "{}{:4}", sep, len);
        if self.headroom {
            let _ = write!(sa, " (h{} t{})", p.headroom(), p.tailroom());
        }
        if self.print_anno {
            sa.push_str(" | ");
            for b in p.anno().bytes.iter() {
                sa.push(HEX[(b >> 4) as usize] as char);
                sa.push(HEX[(b & 15) as usize] as char);
            }
        }
        if bytes > 0 {
            sa.push_str(" | ");
            let data = &p.data()[..bytes];
            if self.contents == 1 {
                for (i, b) in data.iter().enumerate() {
                    if i > 0 && i % 4 == 0 {
                        sa.push(' ');
                    }
                    sa.push(HEX[(b >> 4) as usize] as char);
                    sa.push(HEX[(b & 15) as usize] as char);
                }
            } else {
                for (i, &b) in data.iter().enumerate() {
                    if i % 8 == 0 {
                        sa.push(' ');
                    }
                    sa.push(if (32..=126).contains(&b) {
                        b as char
                    } else {
                        '.'
                    });
                }
            }
        }
        cx.error_line(&sa);
        self.line = sa;
    }
}

impl Element for Print {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let label = a.read_p::<String>("LABEL")?.unwrap_or_default();
        let mut bytes = a.read_p::<i32>("MAXLENGTH")?.unwrap_or(24);
        if let Some(b) = a.read::<i32>("LENGTH")? {
            bytes = b;
        }
        if let Some(b) = a.read::<i32>("NBYTES")? {
            bytes = b;
        }
        let contents = a.read::<String>("CONTENTS")?;
        let timestamp = a.read::<bool>("TIMESTAMP")?.unwrap_or(false);
        let print_anno = a.read::<bool>("PRINTANNO")?.unwrap_or(false);
        let active = a.read::<bool>("ACTIVE")?.unwrap_or(true);
        let headroom = a.read::<bool>("HEADROOM")?.unwrap_or(false);
        let cpu = a.read::<bool>("CPU")?.unwrap_or(false);
        a.complete()?;
        let contents = match contents {
            None => 1,
            Some(c) => match click_lang::args::parse_bool(&c) {
                Ok(b) => u8::from(b),
                Err(_) => match c.to_ascii_uppercase().as_str() {
                    "NONE" => 0,
                    "HEX" => 1,
                    "ASCII" => 2,
                    u => {
                        return Err(format!(
                            "bad contents value '{}'; should be 'NONE', 'HEX', or 'ASCII'",
                            u
                        ))
                    }
                },
            },
        };
        self.label = label;
        self.bytes = bytes;
        self.contents = contents;
        self.timestamp = timestamp;
        self.print_anno = print_anno;
        self.active = active;
        self.headroom = headroom;
        self.cpu = cpu;
        Ok(())
    }

    #[inline]
    fn simple_action(&mut self, p: Packet, cx: &Ctx) -> Option<Packet> {
        if self.active {
            self.print(&p, cx);
        }
        Some(p)
    }

    fn push_batch(&mut self, _port: usize, b: Batch, cx: &Ctx) {
        if self.active {
            for p in &b {
                self.print(p, cx);
            }
        }
        cx.push_batch(0, b);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "active" => Some(Ok(self.active.to_string())),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "active" => Some(match crate::common::handlers::parse_bool(value) {
                Some(v) => {
                    self.active = v;
                    Ok(())
                }
                None => Err("expected boolean".into()),
            }),
            _ => None,
        }
    }

    crate::element_any!();
}
