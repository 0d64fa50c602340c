//! Paint, PaintSwitch, CheckPaint, PaintTee: the paint annotation.

use crate::common::handlers;
use crate::packet::PAINT_ANNO_OFFSET;
use crate::prelude::*;

/// Click's AnnoArg for a one-byte annotation: an offset or the name PAINT.
fn parse_anno(s: &str) -> Result<usize, String> {
    if s == "PAINT" || s == "PAINT_ANNO" {
        return Ok(PAINT_ANNO_OFFSET);
    }
    match click_lang::args::parse_u64(s) {
        Ok(v) if (v as usize) < crate::packet::ANNO_SIZE => Ok(v as usize),
        _ => Err("expected annotation".into()),
    }
}

fn read_anno(a: &mut Args) -> Result<usize, String> {
    match a.read_p::<click_lang::args::RawString>("ANNO")? {
        Some(s) => parse_anno(&s.0).map_err(|e| alloc::format!("ANNO: {}", e)),
        None => Ok(PAINT_ANNO_OFFSET),
    }
}

/// The `COLOR [, ANNO]` configuration and `color` handler that Paint,
/// CheckPaint and PaintTee share.
#[derive(Default)]
struct ColorAnno {
    color: u8,
    anno: usize,
}

impl ColorAnno {
    fn configure(&mut self, config: &str) -> Result<(), String> {
        let mut a = Args::new(config);
        let color = a.read_mp::<u8>("COLOR")?;
        let anno = read_anno(&mut a)?;
        a.complete()?;
        self.color = color;
        self.anno = anno;
        Ok(())
    }

    /// Whether `p`'s annotation byte holds the color.
    #[inline]
    fn matches(&self, p: &Packet) -> bool {
        p.anno().u8_at(self.anno) == self.color
    }

    fn read_handler(&self, name: &str) -> Option<HandlerResult<String>> {
        (name == "color").then(|| Ok(self.color.to_string()))
    }

    fn write_handler(&mut self, name: &str, value: &str) -> Option<HandlerResult<()>> {
        (name == "color").then(|| match handlers::parse_int(value) {
            Some(c) if (0..=255).contains(&c) => {
                self.color = c as u8;
                Ok(())
            }
            _ => Err("expected integer between 0 and 255".into()),
        })
    }
}

/// `Paint(COLOR [, ANNO])`: sets a packet's paint annotation.
#[derive(Default)]
pub struct Paint {
    c: ColorAnno,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "Paint",
    port_count: "1/1",
    processing: "a/a",
    group: "standard",
    signature: "Paint(COLOR [, ANNO])",
    summary: "Sets packet paint annotations.",
    description: "Sets each packet's paint annotation (or the one-byte annotation at offset ANNO) \
to COLOR, an integer 0..255.",
    ports: "one input, one output",
    handlers: &[HandlerDoc {
        name: "color",
        mode: HandlerMode::ReadWrite,
        text: "The COLOR value.",
    }],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(Paint::default()),
};

impl Element for Paint {
    fn configure(&mut self, config: &str, _cx: &ConfigureCtx) -> Result<(), String> {
        self.c.configure(config)
    }

    #[inline]
    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        p.anno_mut().set_u8_at(self.c.anno, self.c.color);
        Some(p)
    }

    fn push_batch(&mut self, _port: usize, mut b: Batch, cx: &Ctx) {
        for p in b.iter_mut() {
            p.anno_mut().set_u8_at(self.c.anno, self.c.color);
        }
        cx.push_batch(0, b);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        self.c.read_handler(name)
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        self.c.write_handler(name, value)
    }

    fn current_config(&self) -> Option<String> {
        if self.c.anno == PAINT_ANNO_OFFSET {
            Some(self.c.color.to_string())
        } else {
            Some(alloc::format!("{}, {}", self.c.color, self.c.anno))
        }
    }

    crate::element_any!();
}

/// `PaintSwitch([ANNO])`: sends each packet to the output its paint names.
#[derive(Default)]
pub struct PaintSwitch {
    anno: usize,
}

pub static PAINTSWITCH_SPEC: ClassSpec = ClassSpec {
    name: "PaintSwitch",
    port_count: "1/-",
    processing: "h/h",
    group: "standard",
    signature: "PaintSwitch([ANNO])",
    summary: "Sends packet stream to output chosen per-packet.",
    description: "Sends every packet out the output port named by its paint annotation (or the \
one-byte annotation at offset ANNO). Packets whose value names no output are dropped.",
    ports: "one input, one or more outputs",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(PaintSwitch::default()),
};

impl Element for PaintSwitch {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let anno = read_anno(&mut a)?;
        a.complete()?;
        self.anno = anno;
        Ok(())
    }

    #[inline]
    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        let o = p.anno().u8_at(self.anno) as usize;
        if o < cx.noutputs() {
            cx.push(o, p);
        }
    }

    crate::element_any!();
}

/// `CheckPaint(COLOR [, ANNO])`: separates packets of one paint.
#[derive(Default)]
pub struct CheckPaint {
    c: ColorAnno,
}

pub static CHECKPAINT_SPEC: ClassSpec = ClassSpec {
    name: "CheckPaint",
    port_count: "1/1-2",
    processing: "a/ah",
    group: "standard",
    signature: "CheckPaint(COLOR [, ANNO])",
    summary: "Checks packets' paint annotation.",
    description: "Packets whose paint annotation (or one-byte annotation at ANNO) equals COLOR go \
out output 0; others go out output 1 if it exists, and are dropped otherwise.",
    ports: "one input, one or two outputs",
    handlers: &[HandlerDoc {
        name: "color",
        mode: HandlerMode::ReadWrite,
        text: "The COLOR value.",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(CheckPaint::default()),
};

impl Element for CheckPaint {
    fn configure(&mut self, config: &str, _cx: &ConfigureCtx) -> Result<(), String> {
        self.c.configure(config)
    }

    #[inline]
    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        if self.c.matches(&p) {
            cx.push(0, p);
        } else {
            cx.push(1, p);
        }
    }

    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        let p = cx.pull(0)?;
        if self.c.matches(&p) {
            Some(p)
        } else {
            cx.push(1, p);
            None
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        self.c.read_handler(name)
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        self.c.write_handler(name, value)
    }

    crate::element_any!();
}

/// `PaintTee(COLOR [, ANNO])`: copies packets of one paint to output 1.
#[derive(Default)]
pub struct PaintTee {
    c: ColorAnno,
}

pub static PAINTTEE_SPEC: ClassSpec = ClassSpec {
    name: "PaintTee",
    port_count: "1/2",
    processing: "a/ah",
    group: "standard",
    signature: "PaintTee(COLOR [, ANNO])",
    summary: "Duplicates packets with given paint annotation.",
    description: "Sends every packet through output 0. If the packet's paint annotation (or the \
one-byte annotation at offset ANNO) equals COLOR, also sends a copy through output 1 (pushed \
first, as in Click). Intended to produce ICMP redirects for packets that leave on the interface \
they arrived on:\n\n\
```\nFromDevice(eth7) -> Paint(7) -> ...\nrt[7] -> pt :: PaintTee(7) -> ... -> ToDevice(eth7)\n\
pt[1] -> ICMPError(18.26.4.24, redirect, host) -> rt;\n```",
    ports: "one input, two outputs (1: copies of packets with paint COLOR)",
    handlers: &[HandlerDoc {
        name: "color",
        mode: HandlerMode::ReadWrite,
        text: "The COLOR value.",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(PaintTee::default()),
};

impl Element for PaintTee {
    fn configure(&mut self, config: &str, _cx: &ConfigureCtx) -> Result<(), String> {
        self.c.configure(config)
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    fn simple_action(&mut self, p: Packet, cx: &Ctx) -> Option<Packet> {
        if self.c.matches(&p) {
            cx.push(1, p.clone_in(cx.pool()));
        }
        Some(p)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        self.c.read_handler(name)
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        self.c.write_handler(name, value)
    }

    crate::element_any!();
}
