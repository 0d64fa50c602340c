//! The hidden elements at the two ends of a cross-thread link. The planner
//! puts them where a pusher on one thread feeds a Queue on another; they
//! are not in `clickos elements` and refuse to run outside a plan.

use super::{spsc, ThreadCtx};
use crate::driver::Host;
use click::packet::SendPacket;
use click::prelude::*;
use click::registry::Registry;
use std::rc::Rc;
use std::sync::atomic::{fence, Ordering};

/// Adds the link elements to a registry used for one thread's router.
pub fn register_hidden(r: &mut Registry) {
    r.add(&TX_SPEC);
    r.add(&RX_SPEC);
}

fn thread_ctx(cx: &Ctx) -> Result<Rc<ThreadCtx>, String> {
    cx.host()
        .and_then(|h| h.downcast_ref::<Host>())
        .and_then(|h| h.thread.clone())
        .ok_or_else(|| "only the threaded driver creates this element".to_string())
}

fn link_index(config: &str) -> Result<usize, String> {
    config
        .trim()
        .parse()
        .map_err(|_| format!("bad link '{config}'"))
}

/// The pushing end: packets in, through the ring, out on another thread.
#[derive(Default)]
pub struct ThreadTx {
    link: usize,
    ctx: Option<Rc<ThreadCtx>>,
    producer: Option<spsc::Producer<SendPacket>>,
    scratch: Vec<SendPacket>,
    count: u64,
    drops: u64,
}

pub static TX_SPEC: ClassSpec = ClassSpec {
    name: "ThreadTx",
    port_count: "1/0",
    processing: "h/h",
    group: "threads",
    signature: "ThreadTx(LINK)",
    summary: "The sending end of a cross-thread link (made by the driver).",
    description: "Moves the packets pushed to it through a lock-free ring to the thread that \
runs the Queue it stands for; drops (and counts) them when the ring is full.",
    ports: "one push input",
    handlers: &[
        HandlerDoc {
            name: "count",
            mode: HandlerMode::Read,
            text: "Packets sent through the link.",
        },
        HandlerDoc {
            name: "drops",
            mode: HandlerMode::Read,
            text: "Packets dropped because the ring was full.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(ThreadTx::default()),
};

impl ThreadTx {
    fn sent(&mut self, ctx: &ThreadCtx, offered: usize, moved: usize) {
        let lost = offered - moved;
        if lost > 0 {
            ctx.link_packets(-(lost as isize));
            self.drops += lost as u64;
            if let Some(l) = ctx.link(self.link) {
                l.drops.fetch_add(lost as u64, Ordering::Relaxed);
            }
        }
        self.count += moved as u64;
        if moved > 0 {
            ctx.notify_link(self.link);
        }
    }
}

impl Element for ThreadTx {
    fn configure(&mut self, config: &str, _cx: &ConfigureCtx) -> Result<(), String> {
        self.link = link_index(config)?;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let ctx = thread_ctx(cx)?;
        let p = ctx
            .link(self.link)
            .and_then(|l| l.producer.lock().ok()?.take())
            .ok_or("link already taken")?;
        self.producer = Some(p);
        self.ctx = Some(ctx);
        Ok(())
    }

    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        let (Some(ctx), Some(prod)) = (self.ctx.clone(), self.producer.as_ref()) else {
            return;
        };
        // count the packet in before the consumer can see (and uncount) it
        ctx.link_packets(1);
        let moved = match prod.push(p.into_send()) {
            Ok(()) => 1,
            Err(back) => {
                // the ring is full: the buffer goes back to this pool
                drop(cx.pool().adopt(back));
                0
            }
        };
        self.sent(&ctx, 1, moved);
    }

    fn push_batch(&mut self, _port: usize, batch: Batch, cx: &Ctx) {
        let (Some(ctx), Some(prod)) = (self.ctx.clone(), self.producer.as_ref()) else {
            return;
        };
        let k = batch.len();
        self.scratch.clear();
        self.scratch
            .extend(batch.into_iter().map(Packet::into_send));
        ctx.link_packets(k as isize);
        let moved = prod.push_from(&mut self.scratch);
        // what did not fit goes back to this pool
        let pool = cx.pool();
        for back in self.scratch.drain(..) {
            drop(pool.adopt(back));
        }
        self.sent(&ctx, k, moved);
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "count" => Some(Ok(self.count.to_string())),
            "drops" => Some(Ok(self.drops.to_string())),
            _ => None,
        }
    }

    click::element_any!();
}

/// The receiving end: a task that takes packets off the ring and pushes
/// them into the Queue.
#[derive(Default)]
pub struct ThreadRx {
    link: usize,
    ctx: Option<Rc<ThreadCtx>>,
    consumer: Option<spsc::Consumer<SendPacket>>,
    scratch: Vec<SendPacket>,
    count: u64,
}

pub static RX_SPEC: ClassSpec = ClassSpec {
    name: "ThreadRx",
    port_count: "0/1",
    processing: "h/h",
    group: "threads",
    signature: "ThreadRx(LINK)",
    summary: "The receiving end of a cross-thread link (made by the driver).",
    description: "Its task takes the packets another thread sent through the link's ring and \
pushes them to the Queue; it sleeps while the ring is empty and the sender wakes it.",
    ports: "one push output",
    handlers: &[HandlerDoc {
        name: "count",
        mode: HandlerMode::Read,
        text: "Packets received through the link.",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(ThreadRx::default()),
};

impl Element for ThreadRx {
    fn configure(&mut self, config: &str, _cx: &ConfigureCtx) -> Result<(), String> {
        self.link = link_index(config)?;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let ctx = thread_ctx(cx)?;
        let c = ctx
            .link(self.link)
            .and_then(|l| l.consumer.lock().ok()?.take())
            .ok_or("link already taken")?;
        ctx.rx_elems.borrow_mut().push(cx.index());
        self.consumer = Some(c);
        self.ctx = Some(ctx);
        cx.schedule_task();
        Ok(())
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        let (Some(ctx), Some(cons)) = (self.ctx.clone(), self.consumer.as_ref()) else {
            return false;
        };
        let max = cx.max_batch();
        self.scratch.clear();
        let k = cons.pop_into(&mut self.scratch, max);
        if k > 0 {
            let pool = cx.pool();
            if k == 1 {
                if let Some(p) = self.scratch.pop() {
                    cx.push(0, pool.adopt(p));
                }
            } else {
                let b: Batch = self.scratch.drain(..).map(|p| pool.adopt(p)).collect();
                cx.push_batch(0, b);
            }
            self.count += k as u64;
            ctx.link_packets(-(k as isize));
        }
        if k < max {
            // looks empty: ask for a doorbell, then look once more so a
            // packet that raced the flag is not left behind
            let Some(l) = ctx.link(self.link) else {
                return false;
            };
            l.waiting.store(true, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if cons.is_empty() {
                return false;
            }
            l.waiting.store(false, Ordering::SeqCst);
        }
        true
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        match name {
            "count" => Some(Ok(self.count.to_string())),
            _ => None,
        }
    }

    click::element_any!();
}
