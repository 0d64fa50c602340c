//! Resize: adds or removes bytes at the head and tail of packets.

use crate::common::handlers;
use crate::prelude::*;

/// Bytes Resize adds at one end of a packet at most; a configuration that
/// asks for more drops every packet (and counts it), as Click drops a
/// packet it cannot grow.
pub const MAX_GROW: i64 = 65536;

/// `Resize(HEAD, TAIL)`.
#[derive(Default)]
pub struct Resize {
    head: i32,
    tail: i32,
    drops: u64,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "Resize",
    port_count: "1/1",
    processing: "a/a",
    group: "standard",
    signature: "Resize(HEAD, TAIL)",
    summary: "Adjusts packet length.",
    description: "Adds or removes bytes at the start (HEAD) and end (TAIL) of each packet. A \
positive value adds that many bytes; a negative one removes that many (all of the packet, at \
most). Added bytes are not cleared: bytes added at the head show what lay in the packet's \
headroom (for instance bytes an earlier Strip or Resize removed); bytes added beyond the buffer \
are zero, as are bytes added at the tail. Adding more than 65536 bytes drops the packet.\n\n\
Keyword arguments:\n\n\
- `HEAD` (integer): bytes to add (positive) or remove (negative) at the start. Default 0.\n\
- `TAIL` (integer): bytes to add or remove at the end. Default 0.",
    ports: "one input, one output",
    handlers: &[
        HandlerDoc {
            name: "head",
            mode: HandlerMode::ReadWrite,
            text: "The HEAD value.",
        },
        HandlerDoc {
            name: "tail",
            mode: HandlerMode::ReadWrite,
            text: "The TAIL value.",
        },
        HandlerDoc {
            name: "drops",
            mode: HandlerMode::Read,
            text: "Packets dropped because they would grow too much.",
        },
    ],
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(Resize::default()),
};

impl Element for Resize {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let head = a.read_p::<i32>("HEAD")?.unwrap_or(0);
        let tail = a.read_p::<i32>("TAIL")?.unwrap_or(0);
        a.complete()?;
        self.head = head;
        self.tail = tail;
        Ok(())
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        push_batch_simple(self, batch, cx)
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &Ctx) -> Option<Packet> {
        let (head, tail) = (i64::from(self.head), i64::from(self.tail));
        if head > MAX_GROW || tail > MAX_GROW {
            self.drops += 1;
            return None;
        }
        if head > 0 {
            let n = head as usize;
            // Click's push: uncover the headroom's bytes when they exist
            if n > p.headroom() || !p.shift_head(-(n as isize)) {
                p.push(n);
            }
        } else if head < 0 {
            let n = (head.unsigned_abs() as usize).min(p.len());
            p.pull(n);
        }
        if tail > 0 {
            p.put(tail as usize);
        } else if tail < 0 {
            p.take(tail.unsigned_abs() as usize);
        }
        Some(p)
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "head" => self.head.to_string(),
            "tail" => self.tail.to_string(),
            "drops" => self.drops.to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        let slot = match name {
            "head" => &mut self.head,
            "tail" => &mut self.tail,
            _ => return None,
        };
        Some(
            match handlers::parse_int(value).and_then(|v| i32::try_from(v).ok()) {
                Some(v) => {
                    *slot = v;
                    Ok(())
                }
                None => Err("expected integer".into()),
            },
        )
    }

    crate::element_any!();
}
