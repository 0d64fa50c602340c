//! One background watchdog for all instances of this process.
//!
//! Every 250 ms it reads (never writes, never wakes) each live instance's
//! mailbox: a state or reply sequence number no correct instance can
//! produce means the mailbox was scribbled over (the instance is crashed);
//! a RUNNING instance whose heartbeat has not moved for its watchdog period
//! is spinning (it is killed). Ended instances are dropped from the list.
//! Idle instances cost one cache line read per tick.

use crate::instance::Inner;
use clickos_ring::mailbox::{self, state};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

pub const TICK: Duration = Duration::from_millis(250);

fn list() -> &'static Mutex<Vec<Weak<Inner>>> {
    static LIST: OnceLock<Mutex<Vec<Weak<Inner>>>> = OnceLock::new();
    LIST.get_or_init(|| {
        std::thread::Builder::new()
            .name("clickos-watchdog".into())
            .spawn(run)
            .expect("spawning the clickos-watchdog thread");
        Mutex::new(Vec::new())
    })
}

pub(crate) fn register(inner: &Arc<Inner>) {
    *inner.wd_since.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    list()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Arc::downgrade(inner));
}

fn run() {
    loop {
        std::thread::sleep(TICK);
        let live: Vec<Arc<Inner>> = {
            let mut l = list().lock().unwrap_or_else(|e| e.into_inner());
            l.retain(|w| w.upgrade().is_some_and(|i| i.ended().is_none()));
            l.iter().filter_map(Weak::upgrade).collect()
        };
        for i in live {
            check(&i);
        }
    }
}

/// One look at one instance.
pub(crate) fn check(i: &Inner) {
    if i.ended().is_some() {
        return;
    }
    let mb = i.mailbox();
    // Reply first, then our own sequence number: a reply can only ever
    // catch up with what we posted before it.
    let resp = mb.resp_seq.load(Ordering::Acquire);
    let posted = i.posted.load(Ordering::SeqCst);
    let checked =
        mailbox::serving(resp, posted).and_then(|serving| Ok((serving, mb.checked_state()?)));
    let (serving, s) = match checked {
        Ok(v) => v,
        Err(c) => {
            i.crash(c.to_string());
            return;
        }
    };
    let hb = mb.heartbeat.load(Ordering::Relaxed);
    let mut since = i.wd_since.lock().unwrap_or_else(|e| e.into_inner());
    // While a request is outstanding its caller times it out (an INSTALL
    // may legitimately take longer than one watchdog period).
    if serving || s != state::RUNNING || hb != i.wd_heartbeat.load(Ordering::Relaxed) {
        i.wd_heartbeat.store(hb, Ordering::Relaxed);
        *since = Instant::now();
        return;
    }
    let stuck = since.elapsed();
    if stuck >= i.watchdog {
        drop(since);
        i.kill(format!(
            "unresponsive: running but its heartbeat stood still for {:.1} s (spinning?)",
            stuck.as_secs_f64()
        ));
    }
}
