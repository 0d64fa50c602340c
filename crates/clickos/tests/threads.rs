//! `clickos run -j N`: Click's thread placement (StaticThreadSched and the
//! automatic one), Queues between threads, handlers and stop requests
//! across threads, and `--replicate`.

mod common;
use common::*;

/// The `threads` global handler's line for thread `t`, as a word list.
fn thread_line(threads: &str, t: usize) -> Vec<String> {
    let prefix = format!("thread {t}:");
    threads
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no line for thread {t} in:\n{threads}"))
        .split_whitespace()
        .map(|s| s.to_string())
        .collect()
}

/// Reads `-h` handlers: `name:\nvalue\n\n` blocks.
fn handler_values(out: &str) -> Vec<(String, String)> {
    let mut v = Vec::new();
    let mut lines = out.lines().peekable();
    while let Some(l) = lines.next() {
        if let Some(name) = l.strip_suffix(':') {
            let mut val = Vec::new();
            while let Some(x) = lines.peek() {
                if x.is_empty() {
                    break;
                }
                val.push(lines.next().unwrap().to_string());
            }
            v.push((name.to_string(), val.join("\n")));
        }
    }
    v
}

fn value(out: &str, name: &str) -> String {
    if !out.contains(":\n") {
        // a lone -h handler prints its value without a name
        return out.trim_end().to_string();
    }
    handler_values(out)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no {name} in:\n{out}"))
}

fn num(out: &str, name: &str) -> u64 {
    value(out, name)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{name} not a number in:\n{out}"))
}

#[test]
fn queue_joins_two_threads() {
    // s0's path runs on thread 0, the Queue with its puller on thread 1;
    // 600 packets fit the link's ring and the Queue, so none are lost.
    let r = click(&[
        "-j",
        "2",
        "-e",
        "s0 :: InfiniteSource(LIMIT 600, BURST 8, STOP false) -> c0 :: Counter -> q :: Queue(10000);
         q -> u :: Unqueue -> c1 :: Counter -> Discard;
         StaticThreadSched(s0 0, u 1);",
        "-h",
        "c0.count",
        "-h",
        "c1.count",
        "-h",
        "q.drops",
        "-h",
        "q.highwater_length",
        "-h",
        "threads",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(num(&r.out, "c0.count"), 600);
    assert_eq!(num(&r.out, "c1.count"), 600);
    assert_eq!(num(&r.out, "q.drops"), 0);
    let threads = value(&r.out, "threads");
    let t0 = thread_line(&threads, 0);
    let t1 = thread_line(&threads, 1);
    assert!(
        t0.contains(&"s0".into()) && t0.contains(&"c0".into()),
        "{threads}"
    );
    for e in ["q", "u", "c1"] {
        assert!(
            t1.contains(&e.to_string()),
            "{e} not on thread 1: {threads}"
        );
    }
    assert!(
        threads.contains("link: thread 0 -> thread 1 into q [0]"),
        "{threads}"
    );
}

#[test]
fn overload_between_threads_is_counted() {
    // Two paths on two threads fill one Queue faster than it drains. The
    // far one is pushed by an Unqueue, which (as in Click) ignores full
    // notifiers: every packet is counted out, dropped by the Queue, or
    // dropped at the link (and reported).
    let r = click(&[
        "-j",
        "2",
        "-e",
        "s0 :: InfiniteSource(LIMIT 40000, STOP false) -> Queue(100000) -> u0 :: Unqueue(BURST 64) -> q :: Queue(100);
         s1 :: InfiniteSource(LIMIT 20000, STOP false) -> q;
         q -> u :: Unqueue(BURST 1) -> c :: Counter -> Discard;
         StaticThreadSched(s0 0, s1 1, u 1);",
        "-h",
        "c.count",
        "-h",
        "q.drops",
        "-h",
        "q@@tx0_0.drops",
        "-h",
        "q@@rx0_0.count",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    let out = num(&r.out, "c.count");
    let qdrops = num(&r.out, "q.drops");
    let ldrops = num(&r.out, "q@@tx0_0.drops");
    let through = num(&r.out, "q@@rx0_0.count");
    assert_eq!(out + qdrops + ldrops, 60000, "{}", r.out);
    assert_eq!(through + ldrops, 40000, "{}", r.out);
    if ldrops > 0 {
        assert!(
            r.err.contains(&format!(
                "warning: {ldrops} packets dropped between threads"
            )),
            "stderr: {}",
            r.err
        );
    }
}

#[test]
fn full_queue_on_another_thread_holds_the_source() {
    // InfiniteSource sleeps while the Queue it feeds is full, as in Click,
    // even when the Queue is on another thread: nothing is dropped.
    let r = click(&[
        "-j",
        "2",
        "-e",
        "src :: InfiniteSource(LIMIT 30000, STOP false) -> Paint(3) -> q :: Queue(50);
         q -> u :: Unqueue(BURST 4) -> c :: Counter(COUNT_CALL 30000 stop) -> Discard;
         StaticThreadSched(src 0, u 1);",
        "-h",
        "c.count",
        "-h",
        "q.drops",
        "-h",
        "q@@tx0_0.drops",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(num(&r.out, "c.count"), 30000, "{}", r.out);
    assert_eq!(num(&r.out, "q.drops"), 0);
    assert_eq!(num(&r.out, "q@@tx0_0.drops"), 0);
    assert!(!r.err.contains("dropped"), "{}", r.err);
}

#[test]
fn a_burst_never_overflows_the_ring_between_threads() {
    // The ring between the threads holds 1024 packets; bursts of 24 leave
    // 16 slots free when it is nearly full. The ring's full notifier goes
    // down while it cannot take a whole batch, so the source sleeps instead
    // of pushing a burst the ring would partly drop (it used to drop 3544
    // of these 20000 packets, every run, with the consumer held back to
    // 200000 packets a second).
    let r = click(&[
        "-j",
        "2",
        "-e",
        "src :: InfiniteSource(LENGTH 60, LIMIT 20000, BURST 24, STOP false)
           -> q :: Queue(64) -> u :: RatedUnqueue(RATE 200000)
           -> c :: Counter(COUNT_CALL 20000 stop) -> Discard;
         StaticThreadSched(src 0, u 1);",
        "-h",
        "c.count",
        "-h",
        "q@@tx0_0.drops",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(num(&r.out, "c.count"), 20000, "{}\n{}", r.out, r.err);
    assert_eq!(num(&r.out, "q@@tx0_0.drops"), 0);
    assert!(!r.err.contains("dropped"), "{}", r.err);
}

#[test]
fn automatic_placement_spreads_independent_paths() {
    let r = click(&[
        "-j",
        "2",
        "-e",
        "a :: InfiniteSource(LIMIT 1000, STOP false) -> ca :: Counter -> Discard;
         b :: InfiniteSource(LIMIT 2000, STOP false) -> cb :: Counter -> Discard;",
        "-h",
        "ca.count",
        "-h",
        "cb.count",
        "-h",
        "threads",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(num(&r.out, "ca.count"), 1000);
    assert_eq!(num(&r.out, "cb.count"), 2000);
    let threads = value(&r.out, "threads");
    let (t0, t1) = (thread_line(&threads, 0), thread_line(&threads, 1));
    let on = |t: &Vec<String>, e: &str| t.contains(&e.to_string());
    assert!(
        (on(&t0, "a") && on(&t1, "b")) || (on(&t0, "b") && on(&t1, "a")),
        "{threads}"
    );
    assert!(!threads.contains("link:"), "{threads}");
}

#[test]
fn static_thread_sched_warnings_and_errors() {
    // out of range: Click's warning, thread 0
    let r = click(&[
        "-j",
        "2",
        "-e",
        "s :: InfiniteSource(LIMIT 10, STOP true) -> c :: Counter -> Discard; StaticThreadSched(s 7);",
        "-h",
        "c.count",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert!(
        r.err.contains("warning: thread preference 7 out of range"),
        "{}",
        r.err
    );
    assert_eq!(num(&r.out, "c.count"), 10);
    // two elements placed apart that call each other: one thread, said so
    let r = click(&[
        "-j",
        "2",
        "-e",
        "s :: InfiniteSource(LIMIT 10, STOP true) -> c :: Counter -> Discard; StaticThreadSched(s 0, c 1);",
        "-h",
        "threads",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert!(
        r.err
            .contains("without a Queue between them; both run on thread 0"),
        "{}",
        r.err
    );
    assert!(thread_line(&value(&r.out, "threads"), 0).contains(&"c".into()));
    // thread -1: the task is never scheduled (one thread too, as in Click)
    for j in ["1", "2"] {
        let r = click(&[
            "-j",
            j,
            "-e",
            "s :: InfiniteSource(LIMIT 10, STOP true) -> c :: Counter -> Discard; StaticThreadSched(s -1);",
            "-h",
            "c.count",
        ]);
        assert_eq!(r.code, 0, "-j {j}: stderr: {}", r.err);
        assert_eq!(num(&r.out, "c.count"), 0, "-j {j}");
    }
    // a name that is not there, and bad syntax: configuration errors
    let r = click(&[
        "-j",
        "2",
        "-e",
        "Idle -> Discard; StaticThreadSched(nosuch 1);",
    ]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("no element named 'nosuch'"), "{}", r.err);
    let r = click(&["-e", "Idle -> Discard; StaticThreadSched(justone);"]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("config:1: While configuring"), "{}", r.err);
    assert!(r.err.contains("expected 'ELEMENT THREAD'"), "{}", r.err);
}

#[test]
fn bad_thread_options() {
    for (args, msg) in [
        (
            &["-j", "0", "-e", "Idle"][..],
            "expected a number of threads",
        ),
        (
            &["-j", "lots", "-e", "Idle"][..],
            "expected a number of threads",
        ),
        (&["--replicate", "-e", "Idle"][..], "--replicate needs -j N"),
    ] {
        let r = click(args);
        assert_eq!(r.code, 1, "{args:?}");
        assert!(r.err.contains(msg), "{args:?}: {}", r.err);
    }
}

#[test]
fn stop_requests_are_shared_by_threads() {
    // Click: the first stop request stops the router, on every thread
    let r = click(&[
        "-j",
        "2",
        "-e",
        "a :: InfiniteSource(LIMIT 5, STOP true) -> ca :: Counter -> Discard;
         b :: RatedSource(RATE 10, STOP true) -> cb :: Counter -> Discard;
         StaticThreadSched(a 0, b 1);",
        "-h",
        "ca.count",
        "-h",
        "cb.count",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(num(&r.out, "ca.count"), 5);
    assert!(num(&r.out, "cb.count") < 10, "{}", r.out);
    // a DriverManager on thread 0 takes the stop requests of both threads
    let r = click(&[
        "-j",
        "2",
        "-e",
        "a :: InfiniteSource(LIMIT 300, STOP true) -> ca :: Counter -> Discard;
         b :: InfiniteSource(LIMIT 3000, STOP true) -> cb :: Counter -> Discard;
         StaticThreadSched(a 0, b 1);
         DriverManager(pause, pause, stop);",
        "-h",
        "ca.count",
        "-h",
        "cb.count",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(num(&r.out, "ca.count"), 300);
    assert_eq!(num(&r.out, "cb.count"), 3000);
}

#[test]
fn script_reaches_elements_on_other_threads() {
    let r = click(&[
        "-j",
        "2",
        "-e",
        "b :: InfiniteSource(LIMIT 700, STOP false) -> cb :: Counter -> Discard;
         StaticThreadSched(b 1);
         Script(wait 0.3s, read cb.count, write cb.reset, print cb.count, write stop);",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    // Script's `read` reports on standard error, `print` on standard output
    assert!(r.err.contains("cb.count:\n700\n"), "stderr: {}", r.err);
    assert_eq!(r.out, "0\n", "stderr: {}", r.err);
}

#[test]
fn init_errors_on_any_thread_stop_the_start() {
    let dir = tmpdir("thread-init");
    let missing = dir.join("missing.pcap");
    let cfg = format!(
        "a :: InfiniteSource(LIMIT 5) -> Discard;
         FromDump({}, STOP true) -> Queue -> u :: Unqueue -> Discard;
         StaticThreadSched(a 0, u 1);",
        missing.display()
    );
    let r = click(&["-j", "2", "-e", &cfg]);
    assert_eq!(r.code, 1);
    assert!(
        r.err.contains("Router could not be initialized!"),
        "{}",
        r.err
    );
    assert!(r.err.contains("missing.pcap"), "{}", r.err);
}

#[test]
fn replicate_runs_copies_and_adds_up_their_counts() {
    let r = click(&[
        "-j",
        "2",
        "--replicate",
        "-e",
        "s :: InfiniteSource(LIMIT 1000, STOP true) -> c :: Counter -> q :: Queue(5000) -> u :: Unqueue -> d :: Discard;",
        "-h",
        "c.count",
        "-h",
        "d.count",
        "-h",
        "q.capacity",
        "-h",
        "c.class",
        "-h",
        "threads",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(num(&r.out, "c.count"), 2000);
    assert_eq!(num(&r.out, "d.count"), 2000);
    assert_eq!(num(&r.out, "q.capacity"), 5000);
    assert_eq!(value(&r.out, "c.class"), "Counter");
    assert!(value(&r.out, "threads").contains("2 copies"));
    // the same configuration on one thread counts half
    let r = click(&[
        "-e",
        "s :: InfiniteSource(LIMIT 1000, STOP true) -> c :: Counter -> Discard;",
        "-h",
        "c.count",
    ]);
    assert_eq!(r.out.trim(), "1000");
}

#[test]
fn replicate_refuses_file_elements() {
    let dir = tmpdir("replicate-files");
    let out = dir.join("out.pcap");
    let cfg = format!("InfiniteSource(LIMIT 3) -> ToDump({})", out.display());
    let r = click(&["-j", "2", "--replicate", "-e", &cfg]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("cannot run as 2 copies"), "{}", r.err);
    assert!(!out.exists());
}

#[test]
fn home_thread_handlers_and_simulated_time() {
    // Click's task handlers report the placement; under --simtime the
    // threads are planned but run on one timeline, deterministically
    let cfg = "StaticThreadSched(rs1 0, d1 0, rs2 1, d2 1);
        rs1 :: RatedSource(RATE 10) -> q1 :: Queue -> d1 :: Discard;
        rs2 :: RatedSource(RATE 10) -> q2 :: Queue -> d2 :: Discard;
        Script(wait 1s, print rs1.home_thread, print d1.home_thread,
               print rs2.home_thread, print d2.home_thread, stop)";
    let r = click(&["--simtime", "--threads=2", "-e", cfg]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "0\n0\n1\n1\n");
    let r = click(&["-j", "2", "-e", cfg, "-h", "d2.scheduled"]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert!(
        r.out == "0\n0\n1\n1\ntrue\n" || r.out == "0\n0\n1\n1\nfalse\n",
        "{}",
        r.out
    );
    // elements without a task have no task handlers
    let r = click(&["-j", "2", "-q", "-e", cfg, "-h", "q1.home_thread"]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("no 'q1.home_thread' handler"), "{}", r.err);
}

/// StaticThreadSched names elements as Click does: from its own compound
/// outwards, and a compound's name places every element inside it except
/// those named themselves; with a StaticThreadSched present, unnamed
/// elements stay on thread 0 (Click's StaticThreadSched-02).
#[test]
fn static_thread_sched_compounds() {
    let cfg = "StaticThreadSched(sub0 1);
        sub0, sub1 :: {
            src :: RatedSource -> q :: Queue -> d :: Discard;
            StaticThreadSched(d 0);
        }
        Script(wait 1s, print sub0/src.home_thread, print sub0/d.home_thread,
               print sub1/src.home_thread, print sub1/d.home_thread, stop)";
    let r = click(&["--simtime", "--threads=2", "-e", cfg]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "1\n0\n0\n0\n");
    assert!(!r.err.contains("warning"), "{}", r.err);
    let r = click(&[
        "-q",
        "--threads=2",
        "-e",
        "StaticThreadSched(nosuch 1); Idle -> Discard",
    ]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("no element named 'nosuch'"), "{}", r.err);
}

#[test]
fn quit_without_running() {
    // -q builds every thread's router, reads handlers, and exits
    let r = click(&[
        "-j",
        "2",
        "-q",
        "-e",
        "i :: InfiniteSource(LIMIT 3) -> Queue -> u :: Unqueue -> c :: Counter -> Discard;
         StaticThreadSched(u 1);",
        "-h",
        "c.count",
        "-h",
        "u.home_thread",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(num(&r.out, "c.count"), 0);
    assert_eq!(num(&r.out, "u.home_thread"), 1);
}

/// AddressInfo names reach every thread: the AddressInfo runs on thread 0,
/// the elements that use its names on thread 1, and they configure with them.
#[test]
fn address_info_names_reach_every_thread() {
    let r = click(&[
        "-j",
        "2",
        "-e",
        "a :: AddressInfo(me 10.0.0.1 00:aa:bb:cc:dd:ee, peer 10.0.0.2/24 00:11:22:33:44:55);
         s :: InfiniteSource(LIMIT 5, STOP false) -> q :: Queue;
         q -> u :: Unqueue -> SetIPAddress(peer) -> e :: EtherEncap(0x0800, me, peer) -> c :: Counter -> Discard;
         StaticThreadSched(s 0, u 1, a 0);",
        "-h",
        "threads",
        "-h",
        "c.count",
        "-h",
        "e.src",
        "-h",
        "e.dst",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    let threads = value(&r.out, "threads");
    assert!(
        thread_line(&threads, 0).contains(&"a".to_string()),
        "{threads}"
    );
    assert!(
        thread_line(&threads, 1).contains(&"e".to_string()),
        "{threads}"
    );
    assert_eq!(num(&r.out, "c.count"), 5);
    assert_eq!(value(&r.out, "e.src"), "00-AA-BB-CC-DD-EE");
    assert_eq!(value(&r.out, "e.dst"), "00-11-22-33-44-55");
}
