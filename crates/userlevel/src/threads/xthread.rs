//! The hidden elements at the two ends of a cross-thread link. The planner
//! puts them where a pusher on one thread feeds a Queue on another; they
//! are not in `clickos elements` and refuse to run outside a plan.

use super::{spsc, ThreadCtx};
use crate::selector::Host;
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
        .and_then(|t| t.downcast::<ThreadCtx>().ok())
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
    /// Click's full notifier: active while the ring has room.
    full: Option<SignalId>,
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
runs the Queue it stands for; drops (and counts) them when the ring is full. Its full notifier \
is down while the ring cannot take a whole batch (the router's largest), so sources that listen (InfiniteSource) sleep as they would \
before a full Queue.",
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
    /// Whether the ring can take one more batch as large as the router
    /// pushes (a source's whole BURST): the full notifier stays up only
    /// while it can, so a source that honours it never pushes a burst the
    /// ring must partly drop.
    fn room_for_a_batch(prod: &spsc::Producer<SendPacket>, cx: &Ctx) -> bool {
        prod.has_room_for(cx.max_batch())
    }

    /// The ring has no room for another batch: lower the full notifier
    /// until the consumer makes room (it rings this thread's doorbell,
    /// which runs our task).
    fn ring_full(&mut self, ctx: &ThreadCtx, cx: &Ctx) {
        let (Some(full), Some(prod), Some(l)) =
            (self.full, self.producer.as_ref(), ctx.link(self.link))
        else {
            return;
        };
        l.blocked.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if Self::room_for_a_batch(prod, cx) {
            l.blocked.store(false, Ordering::SeqCst);
        } else {
            cx.set_signal(full, false);
        }
    }

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
        ctx.tx_elems.borrow_mut().push(cx.index());
        self.producer = Some(p);
        self.ctx = Some(ctx);
        self.full = Some(cx.new_signal(true));
        Ok(())
    }

    fn full_signal(&self) -> Option<SignalId> {
        self.full
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        // the consumer made room
        let (Some(full), Some(prod), Some(ctx)) =
            (self.full, self.producer.as_ref(), self.ctx.clone())
        else {
            return false;
        };
        if Self::room_for_a_batch(prod, cx) {
            cx.set_signal(full, true);
        } else {
            // not yet room for a batch: wait for the next doorbell
            self.ring_full(&ctx, cx);
        }
        false
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
        if moved == 0
            || !self
                .producer
                .as_ref()
                .is_some_and(|p| Self::room_for_a_batch(p, cx))
        {
            self.ring_full(&ctx, cx);
        }
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
        if moved < k
            || !self
                .producer
                .as_ref()
                .is_some_and(|p| Self::room_for_a_batch(p, cx))
        {
            self.ring_full(&ctx, cx);
        }
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
    /// The full notifiers downstream (the Queue's): while they are all
    /// down the ring is left to fill, so the sender's sources sleep.
    room: Option<UpstreamSignal>,
    ctx: Option<Rc<ThreadCtx>>,
    consumer: Option<spsc::Consumer<SendPacket>>,
    scratch: Vec<SendPacket>,
    /// Taken off the ring but not yet pushed (the Queue filled).
    held: std::collections::VecDeque<Packet>,
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
        self.room = Some(cx.downstream_signal(0));
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
        if self.held.is_empty() {
            self.scratch.clear();
            let k = cons.pop_into(&mut self.scratch, max);
            if k > 0 {
                ctx.notify_room(self.link);
                let pool = cx.pool();
                self.held
                    .extend(self.scratch.drain(..).map(|p| pool.adopt(p)));
            }
        }
        let n = self.held.len();
        let pushed = match &self.room {
            // nothing downstream ever fills: the whole batch at once
            Some(UpstreamSignal::AlwaysActive) | None => {
                match n {
                    0 => {}
                    1 => {
                        if let Some(p) = self.held.pop_front() {
                            cx.push(0, p);
                        }
                    }
                    _ => cx.push_batch(0, self.held.drain(..).collect()),
                }
                n
            }
            // a Queue downstream: only while it has room, as a source
            // that honours its full notifier would
            Some(room) => {
                let mut k = 0;
                while cx.signal_active(room) {
                    let Some(p) = self.held.pop_front() else {
                        break;
                    };
                    cx.push(0, p);
                    k += 1;
                }
                k
            }
        };
        if pushed > 0 {
            self.count += pushed as u64;
            // out of the link only now: held packets still count as work
            ctx.link_packets(-(pushed as isize));
        }
        if !self.held.is_empty() {
            // the Queue is full: its notifier wakes us when it has room
            return false;
        }
        if n < max {
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
