//! QueueYankTest: Click's test of SimpleQueue's `yank1` and `yank`, run
//! against this implementation's Queue.

use crate::elements::standard::queue::Queue;
use crate::prelude::*;
use alloc::format;

/// `QueueYankTest(QUEUE)`.
#[derive(Default)]
pub struct QueueYankTest {
    queue: String,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "QueueYankTest",
    port_count: "0/0",
    processing: "a/a",
    group: "test",
    signature: "QueueYankTest(QUEUE)",
    summary: "Tests Queue's yank operations.",
    description: "Runs the checks of Click's QueueYankTest (elements/test/queueyanktest.cc) \
against QUEUE, a Queue-family element (Queue, SimpleQueue, NotifierQueue, ...), once, just after \
initialization: it stores one-byte packets in the queue directly and checks what removing the \
first packet that matches (`yank1`) and every packet that matches (`yank`, tail first) leaves \
and returns. Prints `NAME :: QueueYankTest: All tests pass!` to standard error if they do, \
otherwise the first failed check. The queue should be empty and unused (`Idle -> q :: \
Queue(6) -> Idle`): the checks bypass its notifiers.",
    ports: "none",
    handlers: &[],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(QueueYankTest::default()),
};

fn one(c: u8) -> Packet {
    Packet::from_slice(&[c])
}

fn first(p: &Packet) -> u8 {
    p.data().first().copied().unwrap_or(0)
}

/// Click's `Foo`: true for packets whose first byte is one of `set`'s.
fn any_of(set: &'static [u8]) -> impl FnMut(&Packet) -> bool {
    move |p| set.contains(&first(p))
}

/// The checks, in Click's order: `Err(description)` at the first failure.
pub fn run_checks(q: &mut Queue) -> Result<(), String> {
    macro_rules! check {
        ($e:expr) => {
            if !$e {
                return Err(format!("test `{}' failed", stringify!($e)));
            }
        };
    }
    fn pkt(p: Option<Packet>, c: u8, what: &str) -> Result<(), String> {
        match p {
            Some(p) if first(&p) == c => Ok(()),
            p => Err(format!(
                "test '{what}' produced {} packet (expected '{}')",
                if p.is_some() { "wrong" } else { "no" },
                c as char
            )),
        }
    }
    fn deq_all(q: &mut Queue, s: &[u8]) -> Result<(), String> {
        for &c in s {
            pkt(q.deq(), c, "deq")?;
        }
        Ok(())
    }
    fn prepare(q: &mut Queue) -> Result<(), String> {
        for c in *b"abcde" {
            if q.enq(one(c)).is_err() {
                return Err("the queue has no room for 5 packets".into());
            }
        }
        if q.len() != 5 {
            return Err("test `q.len() == 5' failed".into());
        }
        Ok(())
    }

    check!(q.is_empty());
    prepare(q)?;
    deq_all(q, b"abcde")?;

    prepare(q)?;
    pkt(q.yank1(any_of(b"c")), b'c', "yank1(c)")?;
    check!(q.len() == 4);
    deq_all(q, b"abde")?;

    prepare(q)?;
    if q.yank1(any_of(b"f")).is_some() {
        return Err("test 'yank1(f)' produced a packet (expected nothing)".into());
    }
    deq_all(q, b"abcde")?;

    prepare(q)?;
    deq_all(q, b"abcd")?;
    pkt(q.yank1(any_of(b"hgkje")), b'e', "yank1(hgkje)")?;
    check!(q.is_empty());

    let mut v = Vec::new();
    prepare(q)?;
    q.yank(any_of(b"ade"), &mut v);
    check!(v.len() == 3);
    check!(q.len() == 2);
    let mut it = v.drain(..);
    for c in *b"eda" {
        pkt(it.next(), c, "yank(ade)")?;
    }
    drop(it);
    deq_all(q, b"bc")?;

    prepare(q)?;
    q.yank(any_of(b"fhq"), &mut v);
    check!(v.is_empty());
    deq_all(q, b"abcde")?;

    prepare(q)?;
    q.yank(any_of(b"edcba"), &mut v);
    check!(v.len() == 5);
    check!(q.is_empty());
    let mut it = v.drain(..);
    for c in *b"edcba" {
        pkt(it.next(), c, "yank(edcba)")?;
    }
    drop(it);
    check!(q.is_empty());
    Ok(())
}

impl Element for QueueYankTest {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let q: click_lang::args::RawString = a.read_mp("QUEUE")?;
        a.complete()?;
        self.queue = q.0;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        let Some(i) = cx.find_element(&self.queue) else {
            return Err(format!("no element named '{}'", self.queue));
        };
        let is_queue = cx
            .with_element(i, |e| {
                e.as_any_mut()
                    .is_some_and(|a| a.downcast_mut::<Queue>().is_some())
            })
            .unwrap_or(false);
        if !is_queue {
            return Err("QUEUE argument must be a Queue element".into());
        }
        cx.schedule_timer_after(0, 0);
        Ok(())
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        let Some(i) = cx.find_element(&self.queue) else {
            return;
        };
        let r = cx
            .with_element(i, |e| {
                e.as_any_mut()
                    .and_then(|a| a.downcast_mut::<Queue>())
                    .map(run_checks)
            })
            .flatten()
            .unwrap_or_else(|| Err("the queue is unavailable".into()));
        match r {
            Ok(()) => cx.error_line(&format!("{}: All tests pass!", cx.declaration())),
            Err(e) => cx.error_line(&format!("{}: {e}", cx.declaration())),
        }
    }

    crate::element_any!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_pass_on_our_queue() {
        let mut q = Queue::default();
        assert_eq!(run_checks(&mut q), Ok(()));
        assert!(q.is_empty());
        // yank takes tail first, yank1 the match nearest the head
        for c in *b"abcab" {
            q.enq(one(c)).unwrap();
        }
        let mut v = Vec::new();
        assert_eq!(q.yank(any_of(b"a"), &mut v), 2);
        assert_eq!(v.len(), 2);
        assert_eq!(first(&q.yank1(any_of(b"bc")).unwrap()), b'b');
        assert_eq!(q.len(), 2);
        assert_eq!(first(&q.deq().unwrap()), b'c');
        assert_eq!(first(&q.deq().unwrap()), b'b');
    }

    #[test]
    fn checks_fail_on_a_queue_that_is_not_empty() {
        let mut q = Queue::default();
        q.enq(one(b'z')).unwrap();
        assert_eq!(run_checks(&mut q), Err("test `q.is_empty()' failed".into()));
    }
}
