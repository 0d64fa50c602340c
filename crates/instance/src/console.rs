//! Console output between an instance and the host's sink: a bounded,
//! rate-limited, sanitised buffer per instance, drained off the instance's
//! thread.
//!
//! Whoever produces console text (the vCPU thread of a VM, the reaper of a
//! process instance, the thread of a `none` instance) only calls
//! [`Gate::push`], which never blocks on the sink: it strips control
//! characters, charges the text to a token bucket (`rate` bytes per second,
//! `burst` at most) and queues it, up to `buffer` bytes. Text that is over
//! the rate or does not fit is dropped and counted; the next text that
//! gets through is preceded by a line `[N bytes of console output
//! dropped]`, and so is the end of the instance (or a second of silence
//! after the drop). One process-wide thread, `clickos-console`, hands the
//! queued text to the sinks, so a sink that blocks (standard error being a
//! pipe nobody reads) stalls console output, never an instance or a
//! `destroy`.

use crate::backend::ConsoleSink;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

/// How much console output an instance may produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConsoleLimits {
    /// Sustained rate, bytes per second.
    pub rate: u64,
    /// Bytes that may come at once (the bucket's size).
    pub burst: u64,
    /// Bytes queued for a slow sink at most.
    pub buffer: usize,
}

impl Default for ConsoleLimits {
    fn default() -> Self {
        ConsoleLimits {
            rate: 256 << 10,
            burst: 256 << 10,
            buffer: 256 << 10,
        }
    }
}

/// How long drops may go unreported while the instance is silent.
const MARKER_DELAY: Duration = Duration::from_secs(1);

/// One instance's console.
pub(crate) struct Gate {
    id: u32,
    sink: ConsoleSink,
    limits: ConsoleLimits,
    state: Mutex<State>,
    /// Signalled by the drainer when this gate's queue is empty.
    drained: Condvar,
}

struct State {
    queue: VecDeque<String>,
    queued: usize,
    /// Tokens, bytes (fractional: the rate refills continuously).
    tokens: f64,
    refilled: Instant,
    /// Bytes dropped since the last marker, and when the last one was.
    dropped: u64,
    last_drop: Instant,
    /// The drainer holds text of this gate it has not delivered yet.
    delivering: bool,
    /// The gate is on the drainer's list of gates with unreported drops.
    watched: bool,
    /// The gate is on the drainer's ready list.
    ready: bool,
    closed: bool,
}

fn marker(n: u64) -> String {
    format!("[{n} bytes of console output dropped]\n")
}

/// `text` without control characters other than newline and tab (no
/// terminal escape sequence survives without its ESC), ending in a newline.
pub(crate) fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 1);
    out.extend(
        text.chars()
            .filter(|&c| c == '\n' || c == '\t' || !c.is_control()),
    );
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

impl Gate {
    pub(crate) fn new(id: u32, sink: ConsoleSink, limits: ConsoleLimits) -> Arc<Gate> {
        // Started here, on the creating thread: `push` runs on threads that
        // may not start threads (a vCPU thread's seccomp filter).
        drainer();
        let now = Instant::now();
        Arc::new(Gate {
            id,
            sink,
            limits,
            state: Mutex::new(State {
                queue: VecDeque::new(),
                queued: 0,
                tokens: limits.burst as f64,
                refilled: now,
                dropped: 0,
                last_drop: now,
                delivering: false,
                watched: false,
                ready: false,
                closed: false,
            }),
            drained: Condvar::new(),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The sink the isolation level calls: it pushes into this gate.
    pub(crate) fn sink(self: &Arc<Gate>) -> ConsoleSink {
        let g = Arc::downgrade(self);
        Arc::new(move |_id, text: &str| {
            if let Some(g) = g.upgrade() {
                g.push(text)
            }
        })
    }

    /// Queues `text` (sanitised) if the rate and the buffer allow, else
    /// counts it as dropped. Never blocks on the sink.
    pub(crate) fn push(self: &Arc<Gate>, text: &str) {
        if text.is_empty() {
            return;
        }
        let text = sanitize(text);
        let mut st = self.state();
        if st.closed {
            return;
        }
        let now = Instant::now();
        let elapsed = now.duration_since(st.refilled).as_secs_f64();
        st.refilled = now;
        st.tokens = (st.tokens + elapsed * self.limits.rate as f64).min(self.limits.burst as f64);
        let pending = (st.dropped > 0).then(|| marker(st.dropped));
        let need = text.len() + pending.as_ref().map_or(0, String::len);
        if st.tokens >= need as f64 && st.queued + need <= self.limits.buffer {
            st.tokens -= need as f64;
            if let Some(m) = pending {
                st.dropped = 0;
                st.queued += m.len();
                st.queue.push_back(m);
            }
            st.queued += text.len();
            st.queue.push_back(text);
            self.make_ready(&mut st);
        } else {
            st.dropped += text.len() as u64;
            st.last_drop = now;
            if !st.watched {
                st.watched = true;
                drop(st);
                drainer().watch(self);
            }
        }
    }

    fn make_ready(self: &Arc<Gate>, st: &mut State) {
        if !st.ready {
            st.ready = true;
            drainer().ready(self.clone());
        }
    }

    /// Queues the drop marker if drops are pending (and, unless `now`,
    /// were last seen more than [`MARKER_DELAY`] ago). Returns whether
    /// drops remain unreported.
    fn flush_marker(self: &Arc<Gate>, now: bool) -> bool {
        let mut st = self.state();
        if st.dropped > 0 && (now || st.last_drop.elapsed() >= MARKER_DELAY) {
            let m = marker(st.dropped);
            st.dropped = 0;
            st.queued += m.len();
            st.queue.push_back(m);
            self.make_ready(&mut st);
        }
        st.watched = st.dropped > 0;
        st.watched
    }

    /// The instance has ended: no more text is taken; what is queued (and
    /// the drop marker) is delivered. Waits until it was, or `deadline`
    /// passes (the sink is stuck); returns whether everything was
    /// delivered.
    /// Only the first call waits.
    pub(crate) fn close(self: &Arc<Gate>, deadline: Duration) -> bool {
        if self.state().closed {
            let st = self.state();
            return st.queue.is_empty() && !st.delivering;
        }
        self.flush_marker(true);
        let t0 = Instant::now();
        let mut st = self.state();
        st.closed = true;
        while !st.queue.is_empty() || st.delivering {
            let left = deadline.saturating_sub(t0.elapsed());
            if left.is_zero() {
                return false;
            }
            st = self
                .drained
                .wait_timeout(st, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    /// Delivers everything queued (on the drainer thread).
    fn deliver(&self) {
        loop {
            let text = {
                let mut st = self.state();
                match st.queue.pop_front() {
                    Some(t) => {
                        st.queued -= t.len();
                        st.delivering = true;
                        t
                    }
                    None => {
                        st.delivering = false;
                        st.ready = false;
                        self.drained.notify_all();
                        return;
                    }
                }
            };
            (self.sink)(self.id, &text);
        }
    }
}

/// The process-wide thread that hands queued text to the sinks.
struct Drainer {
    state: Mutex<DrainerState>,
    wake: Condvar,
}

#[derive(Default)]
struct DrainerState {
    ready: VecDeque<Arc<Gate>>,
    /// Gates with drops not yet reported.
    lossy: Vec<Weak<Gate>>,
}

fn drainer() -> &'static Drainer {
    static D: OnceLock<Drainer> = OnceLock::new();
    static START: std::sync::Once = std::sync::Once::new();
    let d = D.get_or_init(|| Drainer {
        state: Mutex::new(DrainerState::default()),
        wake: Condvar::new(),
    });
    START.call_once(|| {
        std::thread::Builder::new()
            .name("clickos-console".into())
            .spawn(move || run(d))
            .expect("spawning the clickos-console thread");
    });
    d
}

impl Drainer {
    fn lock(&self) -> std::sync::MutexGuard<'_, DrainerState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn ready(&self, g: Arc<Gate>) {
        self.lock().ready.push_back(g);
        self.wake.notify_one();
    }

    fn watch(&self, g: &Arc<Gate>) {
        self.lock().lossy.push(Arc::downgrade(g));
        self.wake.notify_one();
    }
}

fn run(d: &'static Drainer) {
    loop {
        let next = {
            let mut st = d.lock();
            loop {
                if let Some(g) = st.ready.pop_front() {
                    break Some(g);
                }
                if st.lossy.is_empty() {
                    st = d.wake.wait(st).unwrap_or_else(|e| e.into_inner());
                    continue;
                }
                st = d
                    .wake
                    .wait_timeout(st, MARKER_DELAY / 2)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                if st.ready.is_empty() {
                    break None;
                }
            }
        };
        match next {
            Some(g) => g.deliver(),
            None => {
                // Report drops that went quiet.
                let lossy = std::mem::take(&mut d.lock().lossy);
                let still: Vec<Weak<Gate>> = lossy
                    .into_iter()
                    .filter(|w| w.upgrade().is_some_and(|g| g.flush_marker(false)))
                    .collect();
                d.lock().lossy.extend(still);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink that records what it got, and can be made to block.
    #[derive(Clone, Default)]
    struct Recorder {
        got: Arc<Mutex<Vec<String>>>,
        gate: Arc<(Mutex<bool>, Condvar)>,
    }

    impl Recorder {
        fn sink(&self) -> ConsoleSink {
            let r = self.clone();
            Arc::new(move |_, t: &str| {
                let (m, c) = &*r.gate;
                let mut blocked = m.lock().unwrap();
                while *blocked {
                    blocked = c.wait(blocked).unwrap();
                }
                r.got.lock().unwrap().push(t.to_string());
            })
        }
        fn block(&self, b: bool) {
            *self.gate.0.lock().unwrap() = b;
            self.gate.1.notify_all();
        }
        fn text(&self) -> String {
            self.got.lock().unwrap().concat()
        }
    }

    #[test]
    fn control_characters_are_stripped() {
        assert_eq!(
            sanitize("\x1b[31mred\x1b[0m\tok\r\x07\u{9b}2J\x00"),
            "[31mred[0m\tok2J\n"
        );
        assert_eq!(sanitize("two\nlines\n"), "two\nlines\n");
        assert_eq!(sanitize("héllo ✓"), "héllo ✓\n");
    }

    #[test]
    fn over_the_burst_text_is_dropped_and_reported() {
        let r = Recorder::default();
        let limits = ConsoleLimits {
            rate: 0,
            burst: 100,
            buffer: 1 << 20,
        };
        let g = Gate::new(1, r.sink(), limits);
        for _ in 0..10 {
            g.push("0123456789012345678"); // 20 bytes with the newline
        }
        assert!(g.close(Duration::from_secs(30)));
        let text = r.text();
        assert_eq!(text.matches("0123456789012345678\n").count(), 5, "{text}");
        assert!(
            text.ends_with("[100 bytes of console output dropped]\n"),
            "{text}"
        );
        // Closed: nothing more is taken.
        g.push("late");
        assert!(!r.text().contains("late"));
    }

    #[test]
    fn a_blocked_sink_never_blocks_the_producer() {
        let r = Recorder::default();
        r.block(true);
        let limits = ConsoleLimits {
            rate: 1 << 30,
            burst: 1 << 30,
            buffer: 1000,
        };
        let g = Gate::new(2, r.sink(), limits);
        // Far more than the buffer: all pushes return.
        for i in 0..10_000 {
            g.push(&format!("line {i}"));
        }
        let queued = g.state().queued;
        assert!(queued <= 1000, "{queued} bytes queued");
        assert!(g.state().dropped > 0);
        // The sink is stuck: closing gives up at its deadline.
        assert!(!g.close(Duration::from_millis(100)));
        r.block(false);
        let t0 = Instant::now();
        while !g.close(Duration::ZERO) && t0.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let text = r.text();
        assert!(text.starts_with("line 0\n"), "{text}");
        assert!(text.contains("bytes of console output dropped]"), "{text}");
        assert!(text.len() <= 1000 + 100, "{} bytes delivered", text.len());
    }

    #[test]
    fn drops_are_reported_after_a_silence() {
        let r = Recorder::default();
        let limits = ConsoleLimits {
            rate: 0,
            burst: 10,
            buffer: 1 << 20,
        };
        let g = Gate::new(3, r.sink(), limits);
        g.push("123456789");
        g.push("dropped");
        let t0 = Instant::now();
        while !r.text().contains("dropped]") && t0.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(r.text(), "123456789\n[8 bytes of console output dropped]\n");
    }
}
