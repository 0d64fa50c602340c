//! A bounded lock-free ring with one producer and one consumer.
//!
//! The two ends are handles ([`Producer`], [`Consumer`]) that are `Send`
//! but not `Sync` and cannot be cloned, so the single-producer,
//! single-consumer discipline the ring relies on holds by construction.
//! Each end caches the other's index and rereads it (an acquire load of a
//! cache line the other core owns) only when the cached value says the
//! ring is full or empty, so a batch costs one shared-line access per side.

use std::cell::{Cell, UnsafeCell};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Keeps the indices on cache lines of their own.
#[repr(align(128))]
struct Padded<T>(T);

struct Shared<T> {
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    mask: usize,
    /// Next slot to read; written by the consumer only.
    head: Padded<AtomicUsize>,
    /// Next slot to write; written by the producer only.
    tail: Padded<AtomicUsize>,
}

// SAFETY: a slot is written only by the producer while it is outside
// [head, tail) and read only by the consumer while it is inside; the
// release store of `tail` (after the write) and the acquire load of it
// (before the read) order the two, and likewise `head` orders a slot's
// read before its reuse. Values of `T: Send` move between the threads.
unsafe impl<T: Send> Sync for Shared<T> {}
// SAFETY: as above; the ring owns its `T`s, which are `Send`.
unsafe impl<T: Send> Send for Shared<T> {}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        let head = *self.head.0.get_mut();
        let tail = *self.tail.0.get_mut();
        for i in head..tail {
            // SAFETY: slots in [head, tail) hold initialised values that no
            // one else can reach any more (we have `&mut self`).
            unsafe { (*self.slots[i & self.mask].get()).assume_init_drop() };
        }
    }
}

/// The writing end.
pub struct Producer<T> {
    ring: Arc<Shared<T>>,
    tail: Cell<usize>,
    head_cache: Cell<usize>,
}

/// The reading end.
pub struct Consumer<T> {
    ring: Arc<Shared<T>>,
    head: Cell<usize>,
    tail_cache: Cell<usize>,
}

// SAFETY: each handle is the only one of its kind (not Clone, not Sync), so
// moving it to another thread keeps one producer and one consumer.
unsafe impl<T: Send> Send for Producer<T> {}
// SAFETY: as for Producer.
unsafe impl<T: Send> Send for Consumer<T> {}

/// A ring of at least `capacity` slots (rounded up to a power of two).
pub fn ring<T>(capacity: usize) -> (Producer<T>, Consumer<T>) {
    let cap = capacity.max(2).next_power_of_two();
    let slots = (0..cap)
        .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
        .collect();
    let ring = Arc::new(Shared {
        slots,
        mask: cap - 1,
        head: Padded(AtomicUsize::new(0)),
        tail: Padded(AtomicUsize::new(0)),
    });
    (
        Producer {
            ring: ring.clone(),
            tail: Cell::new(0),
            head_cache: Cell::new(0),
        },
        Consumer {
            ring,
            head: Cell::new(0),
            tail_cache: Cell::new(0),
        },
    )
}

impl<T> Producer<T> {
    /// Free slots, rereading the consumer's index only if needed for `want`.
    fn room(&self, want: usize) -> usize {
        let cap = self.ring.mask + 1;
        let tail = self.tail.get();
        let mut free = cap - (tail - self.head_cache.get());
        if free < want {
            self.head_cache
                .set(self.ring.head.0.load(Ordering::Acquire));
            free = cap - (tail - self.head_cache.get());
        }
        free
    }

    /// Moves items from the front of `items` into the ring while there is
    /// room; returns how many moved (the rest stay in `items`).
    pub fn push_from(&self, items: &mut Vec<T>) -> usize {
        let k = self.room(items.len()).min(items.len());
        if k == 0 {
            return 0;
        }
        let tail = self.tail.get();
        for (j, v) in items.drain(..k).enumerate() {
            let slot = &self.ring.slots[(tail + j) & self.ring.mask];
            // SAFETY: slots [tail, tail + k) are free (room() saw the
            // consumer's head at least that far) and only this producer
            // writes them.
            unsafe { (*slot.get()).write(v) };
        }
        self.tail.set(tail + k);
        self.ring.tail.0.store(tail + k, Ordering::Release);
        k
    }

    /// Whether the ring has room for one more item (a fresh look at the
    /// consumer when the cache says it is full).
    pub fn has_room(&self) -> bool {
        self.room(1) > 0
    }

    /// Whether the ring has room for `n` more items (at most its capacity).
    pub fn has_room_for(&self, n: usize) -> bool {
        let n = n.clamp(1, self.ring.mask + 1);
        self.room(n) >= n
    }

    /// Pushes one item; gives it back if the ring is full.
    pub fn push(&self, v: T) -> Result<(), T> {
        if self.room(1) == 0 {
            return Err(v);
        }
        let tail = self.tail.get();
        // SAFETY: as in push_from, for the one slot at `tail`.
        unsafe { (*self.ring.slots[tail & self.ring.mask].get()).write(v) };
        self.tail.set(tail + 1);
        self.ring.tail.0.store(tail + 1, Ordering::Release);
        Ok(())
    }
}

impl<T> Consumer<T> {
    /// Items ready, rereading the producer's index only if the cache says
    /// fewer than `want`.
    fn ready(&self, want: usize) -> usize {
        let head = self.head.get();
        let mut n = self.tail_cache.get() - head;
        if n < want {
            self.tail_cache
                .set(self.ring.tail.0.load(Ordering::Acquire));
            n = self.tail_cache.get() - head;
        }
        n
    }

    /// Moves up to `max` items into `out`; returns how many.
    pub fn pop_into(&self, out: &mut Vec<T>, max: usize) -> usize {
        let k = self.ready(max).min(max);
        if k == 0 {
            return 0;
        }
        let head = self.head.get();
        out.reserve(k);
        for j in 0..k {
            let slot = &self.ring.slots[(head + j) & self.ring.mask];
            // SAFETY: slots [head, head + k) were published by the
            // producer's release store of tail, which ready() acquired;
            // each is read exactly once before head moves past it.
            out.push(unsafe { (*slot.get()).assume_init_read() });
        }
        self.head.set(head + k);
        self.ring.head.0.store(head + k, Ordering::Release);
        k
    }

    /// Whether the ring is empty right now (a fresh look at the producer).
    pub fn is_empty(&self) -> bool {
        self.ready(1) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_and_drains_in_order() {
        let (p, c) = ring::<u32>(4);
        let mut v: Vec<u32> = (0..6).collect();
        assert_eq!(p.push_from(&mut v), 4);
        assert_eq!(v, [4, 5]);
        assert_eq!(p.push(9), Err(9));
        assert!(!p.has_room() && !p.has_room_for(1));
        let mut out = Vec::new();
        assert_eq!(c.pop_into(&mut out, 3), 3);
        assert_eq!(out, [0, 1, 2]);
        assert_eq!(p.push_from(&mut v), 2);
        assert_eq!(c.ready(usize::MAX), 3);
        out.clear();
        assert_eq!(c.pop_into(&mut out, 10), 3);
        assert_eq!(out, [3, 4, 5]);
        assert!(c.is_empty());
    }

    #[test]
    fn drops_what_is_left() {
        let item = Arc::new(());
        let (p, c) = ring::<Arc<()>>(8);
        for _ in 0..5 {
            p.push(item.clone()).unwrap();
        }
        drop(p);
        drop(c);
        assert_eq!(Arc::strong_count(&item), 1);
    }

    #[test]
    fn two_threads_keep_order() {
        const N: u64 = 200_000;
        let (p, c) = ring::<u64>(64);
        let t = std::thread::spawn(move || {
            let mut next = 0;
            let mut batch = Vec::new();
            while next < N {
                batch.extend(next..(next + 17).min(N));
                next = (next + 17).min(N);
                while !batch.is_empty() {
                    if p.push_from(&mut batch) == 0 {
                        std::thread::yield_now();
                    }
                }
            }
        });
        let mut want = 0;
        let mut out = Vec::new();
        while want < N {
            out.clear();
            if c.pop_into(&mut out, 32) == 0 {
                std::thread::yield_now();
            }
            for v in &out {
                assert_eq!(*v, want);
                want += 1;
            }
        }
        t.join().unwrap();
    }
}
