//! Queue, SimpleQueue and FrontDropQueue: store pushed packets for pullers.

use crate::common::handlers;
use crate::prelude::*;
use alloc::collections::VecDeque;
use alloc::format;

/// A FIFO queue with a capacity, drop counting and an empty notifier.
pub struct Queue {
    q: VecDeque<Packet>,
    capacity: usize,
    highwater: usize,
    drops: u64,
    signal: Option<SignalId>,
    signal_on: bool,
    /// Full notifier: active while the queue has room.
    nonfull: Option<SignalId>,
    nonfull_on: bool,
    /// The configuration string, as the `config` handler reports it.
    config: String,
    /// FrontDropQueue: when full, drop the oldest packet, not the new one.
    front_drop: bool,
    /// Whether the queue is a full notifier (not NotifierQueue,
    /// FrontDropQueue and MixedQueue, as in Click).
    full_note: bool,
    /// MixedQueue: input 1 inserts at the head (LIFO), dropping the
    /// packet at the tail when full.
    mixed: bool,
    /// QuickNoteQueue: the empty notifier sleeps as soon as the queue
    /// empties. The others (Click's NotifierQueue and FullNoteQueue) sleep
    /// only after more than [`SLEEPINESS_TRIGGER`] pulls in a row found it
    /// empty, so a puller keeps polling a queue that is refilled as fast
    /// as it drains.
    quick: bool,
    /// Pulls in a row that found the queue empty.
    sleepiness: u8,
}

/// Click's NotifierQueue `SLEEPINESS_TRIGGER`.
const SLEEPINESS_TRIGGER: u8 = 9;

impl Default for Queue {
    fn default() -> Self {
        Queue {
            q: VecDeque::new(),
            capacity: 1000,
            highwater: 0,
            drops: 0,
            signal: None,
            signal_on: false,
            nonfull: None,
            nonfull_on: true,
            config: String::new(),
            front_drop: false,
            full_note: true,
            mixed: false,
            quick: false,
            sleepiness: 0,
        }
    }
}

const DESCRIPTION: &str = "Stores incoming packets in a first-in-first-out queue. Drops incoming \
packets if the queue already holds CAPACITY packets (pushing them out output 1, when it exists); \
the first drop prints `NAME :: CLASS: overflow`. The queue is an empty notifier: pullers \
downstream sleep while it is empty (once ten pulls in a row found it empty, as in Click, so a \
queue refilled as fast as it drains keeps its puller polling); and a full notifier: push sources upstream (InfiniteSource) \
sleep while it is full.\n\nKeyword arguments:\n\n\
- `CAPACITY` (unsigned): maximum queue length. Default 1000.";

const HANDLERS: &[HandlerDoc] = &[
    HandlerDoc {
        name: "length",
        mode: HandlerMode::Read,
        text: "Current number of packets in the queue.",
    },
    HandlerDoc {
        name: "highwater_length",
        mode: HandlerMode::Read,
        text: "Maximum length seen since the last reset.",
    },
    HandlerDoc {
        name: "capacity",
        mode: HandlerMode::ReadWrite,
        text: "The queue's capacity.",
    },
    HandlerDoc {
        name: "drops",
        mode: HandlerMode::Read,
        text: "Packets dropped because the queue was full.",
    },
    HandlerDoc {
        name: "reset_counts",
        mode: HandlerMode::Write,
        text: "Resets `drops` to 0 and `highwater_length` to the current length.",
    },
    HandlerDoc {
        name: "reset",
        mode: HandlerMode::Write,
        text: "Drops every packet in the queue.",
    },
];

pub static SPEC: ClassSpec = ClassSpec {
    name: "Queue",
    port_count: "1/1-2",
    processing: "h/lh",
    group: "standard",
    signature: "Queue([CAPACITY])",
    summary: "Stores packets in a FIFO queue.",
    description: DESCRIPTION,
    ports: "one push input; one pull output and an optional push output for drops",
    handlers: HANDLERS,
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(Queue::default()),
};

pub static SIMPLEQUEUE_SPEC: ClassSpec = ClassSpec {
    name: "SimpleQueue",
    port_count: "1/1-2",
    processing: "h/lh",
    group: "standard",
    signature: "SimpleQueue([CAPACITY])",
    summary: "Stores packets in a FIFO queue.",
    description: DESCRIPTION,
    ports: "one push input; one pull output and an optional push output for drops",
    handlers: HANDLERS,
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(Queue::default()),
};

pub static NOTIFIERQUEUE_SPEC: ClassSpec = ClassSpec {
    name: "NotifierQueue",
    port_count: "1/1-2",
    processing: "h/lh",
    group: "standard",
    signature: "NotifierQueue([CAPACITY])",
    summary: "Stores packets in a FIFO queue.",
    description: NOTIFIER_DESCRIPTION,
    ports: "one push input; one pull output and an optional push output for drops",
    handlers: HANDLERS,
    live_reconfigure: true,
    order_sensitive: false,
    make: || {
        Box::new(Queue {
            full_note: false,
            ..Queue::default()
        })
    },
};

pub static FULLNOTEQUEUE_SPEC: ClassSpec = ClassSpec {
    name: "FullNoteQueue",
    port_count: "1/1-2",
    processing: "h/lh",
    group: "standard",
    signature: "FullNoteQueue([CAPACITY])",
    summary: "Stores packets in a FIFO queue.",
    description: DESCRIPTION,
    ports: "one push input; one pull output and an optional push output for drops",
    handlers: HANDLERS,
    live_reconfigure: true,
    order_sensitive: false,
    make: || Box::new(Queue::default()),
};

pub static QUICKNOTEQUEUE_SPEC: ClassSpec = ClassSpec {
    name: "QuickNoteQueue",
    port_count: "1/1-2",
    processing: "h/lh",
    group: "standard",
    signature: "QuickNoteQueue([CAPACITY])",
    summary: "Stores packets in a FIFO queue.",
    description: QUICKNOTE_DESCRIPTION,
    ports: "one push input; one pull output and an optional push output for drops",
    handlers: HANDLERS,
    live_reconfigure: true,
    order_sensitive: false,
    make: || {
        Box::new(Queue {
            quick: true,
            ..Queue::default()
        })
    },
};

const QUICKNOTE_DESCRIPTION: &str = "Queue with a quicker empty notification (Click's \
QuickNoteQueue): its empty notifier goes inactive the moment the queue empties, so pullers \
downstream sleep at once, where Queue's waits until ten pulls in a row found it empty. Also a \
full notifier. Drops incoming packets if the queue already holds CAPACITY packets (pushing them \
out output 1, when it exists).\n\nKeyword arguments:\n\n\
- `CAPACITY` (unsigned): maximum queue length. Default 1000.";

const NOTIFIER_DESCRIPTION: &str = "Stores incoming packets in a first-in-first-out queue and \
drops incoming packets when it already holds CAPACITY packets, like Queue, but it is only an \
empty notifier (pullers downstream sleep while it is empty, once ten pulls in a row found it \
empty), not a full notifier: push sources \
upstream keep running while it is full, and their packets are dropped (Click's NotifierQueue; \
Queue and FullNoteQueue are both).\n\nKeyword arguments:\n\n\
- `CAPACITY` (unsigned): maximum queue length. Default 1000.";

const FRONTDROP_DESCRIPTION: &str = "Stores incoming packets in a first-in-first-out queue. When \
the queue already holds CAPACITY packets, drops the packet at its head (the oldest) to make room \
for the incoming one, pushing it out output 1 when that exists; the first drop prints `NAME :: \
CLASS: overflow`. Lowering the capacity at run time likewise keeps the newest packets. The queue \
is an empty notifier: pullers downstream sleep while it is empty.\n\nKeyword arguments:\n\n\
- `CAPACITY` (unsigned): maximum queue length. Default 1000.";

pub static FRONTDROPQUEUE_SPEC: ClassSpec = ClassSpec {
    name: "FrontDropQueue",
    port_count: "1/1-2",
    processing: "h/lh",
    group: "standard",
    signature: "FrontDropQueue([CAPACITY])",
    summary: "Stores packets in a drop-from-front FIFO queue.",
    description: FRONTDROP_DESCRIPTION,
    ports: "one push input; one pull output and an optional push output for drops",
    handlers: HANDLERS,
    live_reconfigure: true,
    order_sensitive: false,
    make: || {
        Box::new(Queue {
            front_drop: true,
            full_note: false,
            ..Queue::default()
        })
    },
};

const MIXED_DESCRIPTION: &str = "A queue with a first-in-first-out input and a \
last-in-first-out input. Packets pushed on input 0 join the tail of the queue (when the queue \
already holds CAPACITY packets the new packet is dropped); packets pushed on input 1 go to the \
head, to be pulled next (when full, the packet at the tail is dropped to make room). Dropped \
packets go out output 1 when it exists; the first drop prints `NAME :: CLASS: overflow`. The \
queue is an empty notifier: pullers downstream sleep while it is empty.\n\n\
Keyword arguments:\n\n\
- `CAPACITY` (unsigned): maximum queue length. Default 1000.";

pub static MIXEDQUEUE_SPEC: ClassSpec = ClassSpec {
    name: "MixedQueue",
    port_count: "2/1-2",
    processing: "h/lh",
    group: "standard",
    signature: "MixedQueue([CAPACITY])",
    summary: "Stores packets in a FIFO/LIFO queue.",
    description: MIXED_DESCRIPTION,
    ports:
        "two push inputs (0 FIFO, 1 LIFO); one pull output and an optional push output for drops",
    handlers: HANDLERS,
    live_reconfigure: true,
    order_sensitive: false,
    make: || {
        Box::new(Queue {
            mixed: true,
            full_note: false,
            ..Queue::default()
        })
    },
};

impl Queue {
    /// Packets currently queued (for tests).
    pub fn len(&self) -> usize {
        self.q.len()
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// Click's `SimpleQueue::enq`: appends `p` at the tail if there is
    /// room (else gives it back). Storage only: no drop counting, no
    /// notifier change (another element's direct use, as QueueYankTest's).
    pub fn enq(&mut self, p: Packet) -> Result<(), Packet> {
        if self.q.len() >= self.capacity {
            return Err(p);
        }
        self.q.push_back(p);
        self.highwater = self.highwater.max(self.q.len());
        Ok(())
    }

    /// Click's `SimpleQueue::deq`: the packet at the head (storage only).
    pub fn deq(&mut self) -> Option<Packet> {
        self.q.pop_front()
    }

    /// Click's `SimpleQueue::yank1`: removes and returns the packet nearest
    /// the head for which `filter` is true.
    pub fn yank1(&mut self, mut filter: impl FnMut(&Packet) -> bool) -> Option<Packet> {
        let i = self.q.iter().position(&mut filter)?;
        self.q.remove(i)
    }

    /// Click's `SimpleQueue::yank`: removes every packet for which
    /// `filter` is true, appending them to `out` from the tail of the
    /// queue to its head; how many.
    pub fn yank(
        &mut self,
        mut filter: impl FnMut(&Packet) -> bool,
        out: &mut Vec<Packet>,
    ) -> usize {
        let before = out.len();
        let mut i = self.q.len();
        while i > 0 {
            i -= 1;
            if filter(&self.q[i]) {
                if let Some(p) = self.q.remove(i) {
                    out.push(p);
                }
            }
        }
        out.len() - before
    }

    /// Drops packets beyond the capacity: the newest for Queue, the
    /// oldest for FrontDropQueue.
    fn trim(&mut self) {
        while self.q.len() > self.capacity {
            if self.front_drop {
                self.q.pop_front();
            } else {
                self.q.pop_back();
            }
            self.drops += 1;
        }
    }

    fn overflow(&mut self, cx: &Ctx) {
        if self.drops == 0 && self.capacity > 0 {
            cx.error_line(&format!("{}: overflow", cx.declaration()));
        }
        self.drops += 1;
    }

    #[inline]
    fn enqueue(&mut self, p: Packet, cx: &Ctx) {
        if self.front_drop && self.q.len() >= self.capacity {
            if self.capacity == 0 {
                self.overflow(cx);
                cx.push(1, p);
                return;
            }
            while self.q.len() >= self.capacity {
                self.overflow(cx);
                if let Some(old) = self.q.pop_front() {
                    cx.push(1, old);
                }
            }
            self.q.push_back(p);
            if self.q.len() > self.highwater {
                self.highwater = self.q.len();
            }
            return;
        }
        if self.q.len() < self.capacity {
            self.q.push_back(p);
            if self.q.len() > self.highwater {
                self.highwater = self.q.len();
            }
        } else {
            self.overflow(cx);
            cx.push(1, p);
        }
    }

    /// MixedQueue's input 1: insert at the head; when full, drop the
    /// packet at the tail.
    fn enqueue_front(&mut self, p: Packet, cx: &Ctx) {
        if self.capacity == 0 {
            self.overflow(cx);
            cx.push(1, p);
            return;
        }
        let old = if self.q.len() >= self.capacity {
            self.overflow(cx);
            self.q.pop_back()
        } else {
            None
        };
        self.q.push_front(p);
        if self.q.len() > self.highwater {
            self.highwater = self.q.len();
        }
        self.wake(cx);
        if let Some(old) = old {
            cx.push(1, old);
        }
    }

    #[inline]
    fn wake(&mut self, cx: &Ctx) {
        if !self.signal_on && !self.q.is_empty() {
            if let Some(s) = self.signal {
                self.signal_on = true;
                cx.set_signal(s, true);
            }
        }
    }

    /// Updates the full notifier after the length or capacity changed.
    #[inline]
    fn note_room(&mut self, cx: &Ctx) {
        let room = self.q.len() < self.capacity;
        if room != self.nonfull_on {
            if let Some(s) = self.nonfull {
                self.nonfull_on = room;
                cx.set_signal(s, room);
            }
        }
    }

    #[inline]
    fn sleep(&mut self, cx: &Ctx) {
        if self.signal_on {
            if let Some(s) = self.signal {
                self.signal_on = false;
                cx.set_signal(s, false);
            }
        }
    }
}

impl Element for Queue {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let cap = a.read_p::<u32>("CAPACITY")?.unwrap_or(1000);
        a.complete()?;
        self.capacity = cap as usize;
        self.config = config.to_string();
        self.trim();
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        self.q.reserve(self.capacity.min(4096));
        self.signal = Some(cx.new_signal(false));
        self.signal_on = false;
        if self.full_note {
            self.nonfull_on = self.q.len() < self.capacity;
            self.nonfull = Some(cx.new_full_signal(self.nonfull_on));
        }
        Ok(())
    }

    #[inline]
    fn push(&mut self, port: usize, p: Packet, cx: &Ctx) {
        if port == 1 && self.mixed {
            self.enqueue_front(p, cx);
            return;
        }
        self.enqueue(p, cx);
        self.wake(cx);
        if self.q.len() >= self.capacity {
            self.note_room(cx);
        }
    }

    fn push_batch(&mut self, port: usize, b: Batch, cx: &Ctx) {
        if port == 1 && self.mixed {
            for p in b {
                self.enqueue_front(p, cx);
            }
            return;
        }
        for p in b {
            self.enqueue(p, cx);
        }
        self.wake(cx);
        if self.q.len() >= self.capacity {
            self.note_room(cx);
        }
    }

    #[inline]
    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        let p = self.q.pop_front();
        if self.quick {
            if self.q.is_empty() {
                self.sleep(cx);
            }
        } else if p.is_some() {
            self.sleepiness = 0;
        } else if self.sleepiness >= SLEEPINESS_TRIGGER {
            self.sleep(cx);
        } else {
            self.sleepiness += 1;
        }
        if !self.nonfull_on && p.is_some() {
            self.note_room(cx);
        }
        p
    }

    fn empty_signal(&self) -> Option<SignalId> {
        self.signal
    }

    fn full_signal(&self) -> Option<SignalId> {
        self.nonfull
    }

    /// Hot swap: the new queue starts with the old one's packets (as many
    /// as fit; the rest are dropped with a warning), as Click's queues do.
    fn take_state(&mut self, old: &mut dyn Element, cx: &Ctx) {
        let Some(o) = old.as_any_mut().and_then(|a| a.downcast_mut::<Queue>()) else {
            return;
        };
        if !self.q.is_empty() {
            return;
        }
        let old_len = o.q.len();
        while self.q.len() < self.capacity {
            match o.q.pop_front() {
                Some(p) => self.q.push_back(p),
                None => break,
            }
        }
        if !o.q.is_empty() {
            cx.error_line(&format!(
                "{}: warning: some packets lost (old length {}, new capacity {})",
                cx.declaration(),
                old_len,
                self.capacity
            ));
            o.q.clear();
        }
        self.highwater = self.highwater.max(self.q.len());
        self.wake(cx);
        self.note_room(cx);
    }

    fn queue_len(&self) -> Option<usize> {
        Some(self.q.len())
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "length" => self.q.len().to_string(),
            "highwater_length" => self.highwater.to_string(),
            "capacity" => self.capacity.to_string(),
            "drops" => self.drops.to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        Some(match name {
            "reset_counts" => {
                self.drops = 0;
                self.highwater = self.q.len();
                Ok(())
            }
            "reset" => {
                self.q.clear();
                self.sleep(cx);
                self.note_room(cx);
                Ok(())
            }
            "capacity" => match click_lang::args::parse_u64(&handlers::clean(value)) {
                Ok(c) if c <= u64::from(u32::MAX) => {
                    self.capacity = c as usize;
                    self.config = click_lang::args::reconfigure_keyword(
                        &self.config,
                        Some(0),
                        "CAPACITY",
                        &handlers::clean(value),
                    );
                    self.trim();
                    if self.q.is_empty() {
                        self.sleep(cx);
                    }
                    self.note_room(cx);
                    Ok(())
                }
                Ok(_) => Err("CAPACITY: out of range".into()),
                Err(e) => Err(format!("CAPACITY: {}", e)),
            },
            _ => return None,
        })
    }

    fn current_config(&self) -> Option<String> {
        Some(self.config.clone())
    }

    crate::element_any!();
}
