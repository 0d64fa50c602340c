//! Tests for the standard element group: real packets in, Click's output
//! and handler values out.

mod common;
use click::prelude::*;
use common::*;

#[test]
fn infinitesource_defaults_and_limit() {
    clear_collected();
    let r = router("s :: InfiniteSource(LIMIT 5, STOP true) -> c :: Counter -> out :: Collect;");
    r.run();
    assert!(r.router.is_stopped());
    let got = collected_data("out");
    assert_eq!(got.len(), 5);
    assert_eq!(
        got[0],
        b"Random bullshit in a packet, at least 64 bytes long. Well, now it is.".to_vec()
    );
    assert_eq!(got[0].len(), 69);
    assert_eq!(r.read("s.count"), "5");
    assert_eq!(r.read("s.limit"), "5");
    assert_eq!(r.read("s.burst"), "1");
    assert_eq!(r.read("s.active"), "true");
    assert_eq!(r.read("s.length"), "-1");
    assert_eq!(r.read("c.count"), "5");
    assert_eq!(r.read("c.byte_count"), "345");
    // timestamps are set by default
    assert!(!collected("out")[0].anno.timestamp.is_zero());
}

#[test]
fn infinitesource_length_burst_and_errors() {
    clear_collected();
    let r = router("InfiniteSource(DATA \\<0a0b>, LIMIT 7, BURST 3, LENGTH 5, TIMESTAMP false) -> out :: Collect;");
    r.run();
    let got = collected("out");
    assert_eq!(got.len(), 7);
    assert_eq!(got[0].data, vec![10, 11, 10, 11, 10]);
    assert!(got[0].anno.timestamp.is_zero());
    let e = try_router("InfiniteSource(BURST 0) -> Discard;")
        .err()
        .unwrap();
    assert!(
        e.iter().any(|l| l.ends_with("burst size must be >= 1")),
        "{:?}",
        e
    );
    let e = try_router("InfiniteSource(FOO 1) -> Discard;")
        .err()
        .unwrap();
    assert!(
        e.iter().any(|l| l.ends_with("FOO: unknown argument")),
        "{:?}",
        e
    );
    let e = try_router("InfiniteSource(STOP true, END_CALL x.y) -> Discard;")
        .err()
        .unwrap();
    assert!(
        e.iter()
            .any(|l| l.ends_with("END_CALL and STOP are mutually exclusive")),
        "{:?}",
        e
    );
}

#[test]
fn discard_counts_and_keywords() {
    let r = router("s :: InfiniteSource(LIMIT 40, BURST 8) -> d :: Discard;");
    r.run();
    assert_eq!(r.read("d.count"), "40");
    r.write("d.reset_counts", "").unwrap();
    assert_eq!(r.read("d.count"), "0");
    let e = try_router("InfiniteSource -> Discard(false);")
        .err()
        .unwrap();
    assert!(
        e.iter().any(|l| l.ends_with("too many arguments")),
        "{:?}",
        e
    );
    let e = try_router("InfiniteSource -> Discard(ACTIVE false);")
        .err()
        .unwrap();
    assert!(
        e.iter()
            .any(|l| l.ends_with("ACTIVE is meaningless in push context")),
        "{:?}",
        e
    );
}

fn print_lines(config: &str, pkts: &[Vec<u8>]) -> Vec<String> {
    let r = router(&format!("Idle -> {}", config));
    r.inject("p", 0, pkts);
    r.stderr().lines().map(String::from).collect()
}

#[test]
fn print_formats_like_click() {
    let pkts = pcap_packets("udp-64.pcap");
    let lines = print_lines("p :: Print(ok) -> Discard;", &pkts[..1]);
    // Ethernet 52:54:00:00:00:02 <- :01, IPv4
    assert_eq!(
        lines[0],
        format!("ok:   64 | {}", hex_groups(&pkts[0][..24]))
    );
    assert!(lines[0].starts_with("ok:   64 | 52540000 00025254 00000001 08004500"));
    let lines = print_lines("p :: Print -> Discard;", &pkts[..1]);
    assert!(lines[0].starts_with("  64 | 52540000"));
    let lines = print_lines("p :: Print(x, 4) -> Discard;", &pkts[..1]);
    assert_eq!(lines[0], "x:   64 | 52540000");
    let lines = print_lines("p :: Print(x, CONTENTS NONE) -> Discard;", &pkts[..1]);
    assert_eq!(lines[0], "x:   64");
    let lines = print_lines(
        "p :: Print(x, 10, CONTENTS ascii) -> Discard;",
        &[b"abcdefgh\x01jk".to_vec()],
    );
    assert_eq!(lines[0], "x:   11 |  abcdefgh .j");
    let lines = print_lines("p :: Print(x, -1) -> Discard;", &[vec![1, 2, 3, 4, 5]]);
    assert_eq!(lines[0], "x:    5 | 01020304 05");
    let lines = print_lines("p :: Print(x, 0) -> Discard;", &[vec![1, 2]]);
    assert_eq!(lines[0], "x:    2");
    let lines = print_lines(
        "p :: Print(h, HEADROOM true, MAXLENGTH 1) -> Discard;",
        &[vec![9]],
    );
    assert!(
        lines[0].starts_with("h:    1 (h64 t") && lines[0].ends_with(") | 09"),
        "{}",
        lines[0]
    );
    let lines = print_lines(
        "p :: Print(a, PRINTANNO true, CONTENTS false) -> Discard;",
        &[vec![9]],
    );
    assert_eq!(lines[0], format!("a:    1 | {}", "00".repeat(48)));
    let lines = print_lines("p :: Print(ACTIVE false) -> Discard;", &[vec![9]]);
    assert!(lines.is_empty());
    let e = try_router("Idle -> Print(CONTENTS bogus) -> Discard;")
        .err()
        .unwrap();
    assert!(e.iter().any(|l| l.ends_with("bad contents value 'BOGUS'; should be 'NONE', 'HEX', or 'ASCII'")), "{:?}", e);
}

#[test]
fn print_timestamp() {
    let r = router("s :: InfiniteSource(DATA \\<01>, LIMIT 1, STOP true) -> Print(t, TIMESTAMP true) -> Discard;");
    r.run();
    assert_eq!(r.stderr(), "t: 1000000000.000000:    1 | 01\n");
}

fn hex_groups(d: &[u8]) -> String {
    let mut s = String::new();
    for (i, b) in d.iter().enumerate() {
        if i > 0 && i % 4 == 0 {
            s.push(' ');
        }
        s.push_str(&format!("{:02x}", b));
    }
    s
}

#[test]
fn counter_rates_and_calls() {
    let r = router("s :: RatedSource(RATE 1000, LIMIT 2000) -> c :: Counter(COUNT_CALL 100 stop) -> a :: AverageCounter -> Discard;");
    r.run();
    assert_eq!(r.read("c.count"), "100");
    assert_eq!(r.read("c.byte_count"), "6900");
    assert_eq!(r.read("a.count"), "100");
    // the bucket (10 tokens) starts full, as in Click: 10 packets at
    // once, then one a millisecond: 100 packets over 90 ms (stock Click
    // prints the same rate)
    assert_eq!(r.read("a.rate"), "1111.11111111");
    let rate: f64 = r.read("c.rate").parse().unwrap();
    assert!(rate > 500.0 && rate <= 1000.0, "{}", rate);
    r.write("c.reset", "").unwrap();
    assert_eq!(r.read("c.count"), "0");
    assert_eq!(r.read("c.rate"), "0");
}

#[test]
fn ratedsource_virtual_time() {
    clear_collected();
    let r = router("s :: RatedSource(RATE 10, LIMIT 5, STOP true) -> out :: Collect;");
    let t0 = r.clock.now();
    r.run();
    assert!(r.router.is_stopped());
    let got = collected("out");
    assert_eq!(got.len(), 5);
    let dt: Vec<i64> = got
        .iter()
        .map(|s| (s.anno.timestamp - t0).nsec() / 1_000_000)
        .collect();
    // as stock Click under --simtime: the bucket (2 tokens) starts full,
    // and a token takes 101 jiffies (10 * (2^32-1)/2 / 1000 units each)
    assert_eq!(dt, vec![0, 0, 101, 201, 301]);
    assert_eq!(r.read("s.rate"), "10");
    assert_eq!(r.read("s.count"), "5");
}

#[test]
fn timedsource_interval() {
    clear_collected();
    let r = router("s :: TimedSource(0.25, \\<abcd>, LIMIT 3, STOP true) -> out :: Collect;");
    let t0 = r.clock.now();
    r.run();
    let got = collected("out");
    assert_eq!(got.len(), 3);
    assert_eq!(got[0].data, vec![0xab, 0xcd]);
    let dt: Vec<i64> = got
        .iter()
        .map(|s| (s.anno.timestamp - t0).nsec() / 1_000_000)
        .collect();
    assert_eq!(dt, vec![250, 500, 750]);
    assert_eq!(r.read("s.interval"), "0.250000");
}

#[test]
fn queue_drops_and_notifier() {
    let pkts = pcap_packets("mixed.pcap");
    let r = router("Idle -> src :: Null -> q :: Queue(5); q -> u :: Unqueue(BURST 2) -> c :: Counter -> Discard;");
    // Nothing queued: the Unqueue must go to sleep.
    for _ in 0..5 {
        r.router.run_pass();
    }
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
    r.inject("src", 0, &pkts[..8]);
    assert_eq!(r.stderr(), "q :: Queue: overflow\n");
    assert_eq!(r.read("q.length"), "5");
    assert_eq!(r.read("q.drops"), "3");
    assert_eq!(r.read("q.highwater_length"), "5");
    assert_eq!(r.read("q.capacity"), "5");
    // the packets woke the Unqueue: one pass (up to 128 task runs, as
    // Click's driver) drains the queue
    r.router.run_pass();
    assert_eq!(r.read("c.count"), "5");
    r.run();
    assert_eq!(r.read("c.count"), "5");
    assert_eq!(r.read("u.count"), "5");
    assert_eq!(r.read("q.length"), "0");
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
    r.write("q.reset_counts", "").unwrap();
    assert_eq!(r.read("q.drops"), "0");
    assert_eq!(r.read("q.highwater_length"), "0");
}

#[test]
fn simplequeue_drop_output() {
    clear_collected();
    let r =
        router("Idle -> src :: Null -> q :: SimpleQueue(2) -> Discard; q[1] -> drops :: Collect;");
    r.inject("src", 0, &pcap_packets("udp-64.pcap")[..5]);
    r.run();
    assert_eq!(collected("drops").len(), 3);
    clear_collected();
    let r = router("Idle -> src :: Null -> q :: SimpleQueue(2); q[1] -> drops :: Collect; Idle -> Discard; q -> PullNull -> d :: Discard(ACTIVE false);");
    r.inject("src", 0, &pcap_packets("udp-64.pcap")[..5]);
    assert_eq!(collected("drops").len(), 3);
    assert_eq!(r.read("q.length"), "2");
    r.write("q.reset", "").unwrap();
    assert_eq!(r.read("q.length"), "0");
}

#[test]
fn tee_paint_switches() {
    clear_collected();
    let r = router(
        "Idle -> src :: Tee(2); src[0] -> Paint(3) -> ps :: PaintSwitch; src[1] -> Paint(1) -> cp :: CheckPaint(1) -> ok :: Collect; cp[1] -> bad :: Collect;
         ps[0] -> p0 :: Collect; ps[1] -> p1 :: Collect; ps[2] -> p2 :: Collect; ps[3] -> p3 :: Collect;",
    );
    r.inject("src", 0, &pcap_packets("udp-64.pcap")[..3]);
    assert_eq!(collected("p3").len(), 3);
    assert_eq!(collected("p3")[0].anno.paint(), 3);
    assert_eq!(collected("ok").len(), 3);
    assert_eq!(collected("bad").len(), 0);
    let e = try_router("i :: Idle -> Tee(3) -> Discard;").err().unwrap();
    assert!(
        e.iter().any(|l| l.ends_with("1 outputs implies 1 arms")),
        "{:?}",
        e
    );
}

#[test]
fn switch_rrswitch_hashswitch() {
    clear_collected();
    let r = router("Idle -> src :: Switch(1); src[0] -> a :: Collect; src[1] -> b :: Collect;
                    Idle -> rr :: RoundRobinSwitch; rr[0] -> c :: Collect; rr[1] -> d :: Collect; rr[2] -> e :: Collect;
                    Idle -> h :: HashSwitch(19, 1); h[0] -> h0 :: Collect; h[1] -> h1 :: Collect; h[2] -> h2 :: Collect;");
    let pkts = pcap_packets("udp-64.pcap");
    r.inject("src", 0, &pkts[..2]);
    r.write("src.switch", "0").unwrap();
    r.inject("src", 0, &pkts[..1]);
    r.write("src.switch", "-1").unwrap();
    r.inject("src", 0, &pkts[..1]);
    assert_eq!((collected("a").len(), collected("b").len()), (1, 2));
    assert_eq!(r.read("src.switch"), "-1");
    r.inject("rr", 0, &pkts[..7]);
    assert_eq!(
        (
            collected("c").len(),
            collected("d").len(),
            collected("e").len()
        ),
        (3, 2, 2)
    );
    // byte 19 is the low byte of IP id 1..6 (the packet sum is the byte itself)
    r.inject("h", 0, &pkts[..6]);
    let n: Vec<usize> = ["h0", "h1", "h2"]
        .iter()
        .map(|x| collected(x).len())
        .collect();
    assert_eq!(n, vec![2, 2, 2]);
    let e = try_router("Idle -> HashSwitch(0, 0) -> Discard;")
        .err()
        .unwrap();
    assert!(
        e.iter().any(|l| l.ends_with("length must be > 0")),
        "{:?}",
        e
    );
}

#[test]
fn strip_unstrip_roundtrip() {
    clear_collected();
    let r = router("Idle -> src :: Strip(14) -> s :: Collect; Idle -> src2 :: Strip(14) -> Unstrip(14) -> u :: Collect;");
    let pkts = pcap_packets("mixed.pcap");
    r.inject("src", 0, &pkts[..3]);
    r.inject("src2", 0, &pkts[..3]);
    assert_eq!(collected("s")[0].data, pkts[0][14..].to_vec());
    assert_eq!(collected("u")[0].data, pkts[0]);
    let e = try_router("Idle -> Strip -> Discard;").err().unwrap();
    assert!(
        e.iter()
            .any(|l| l.ends_with("missing mandatory LENGTH argument")),
        "{:?}",
        e
    );
}

#[test]
fn rrsched_and_pull_elements() {
    clear_collected();
    let r = router("Idle -> a :: Null -> q1 :: Queue; Idle -> b :: Null -> q2 :: Queue;
                    q1 -> [0]rr :: RoundRobinSched; q2 -> [1]rr; rr -> PullNull -> u :: Unqueue(BURST 10) -> out :: Collect;");
    r.inject("a", 0, &[vec![1], vec![1], vec![1]]);
    r.inject("b", 0, &[vec![2], vec![2]]);
    r.run();
    let got: Vec<u8> = collected("out").iter().map(|s| s.data[0]).collect();
    assert_eq!(got, vec![1, 2, 1, 2, 1]);
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
}

#[test]
fn script_basics() {
    let r = router(
        "Script(set x 1, label top, print \"x=$x\", set x $(add $x 1), goto top $(le $x 3), print $(mul 6 7), print $(div 10 4), print $(eq a a), print $(if $(not false) yes no), printn \"nn\", print, stop);",
    );
    r.run();
    assert_eq!(r.stdout(), "x=1\nx=2\nx=3\n42\n2.5\ntrue\nyes\nnn\n");
    assert!(r.router.is_stopped());
}

#[test]
fn script_reads_handlers_and_waits() {
    let r = router(
        "s :: InfiniteSource(LIMIT 3) -> c :: Counter -> Discard;
         sc :: Script(wait 1, print $(c.count), read c.count, write s.limit 5, write s.reset, wait 0.5s, print c.count, write c.nonexistent 1, stop);",
    );
    r.run();
    assert_eq!(r.stdout(), "3\n8\n");
    assert!(r.stderr().contains("c.count:\n3\n"), "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("While executing 'sc :: Script':\n  no 'c.nonexistent' write handler"),
        "{}",
        r.stderr()
    );
}

#[test]
fn script_errors() {
    let e = try_router("Script(frob 1);").err().unwrap();
    assert!(
        e.iter().any(|l| l.ends_with("syntax error at 'frob'")),
        "{:?}",
        e
    );
    let e = try_router("Script(goto nowhere);").err().unwrap();
    assert!(
        e.iter().any(|l| l.ends_with("no such label 'nowhere'")),
        "{:?}",
        e
    );
    let e = try_router("Script(TYPE BOGUS);").err().unwrap();
    assert!(e.iter().any(|l| l.ends_with("bad TYPE")), "{:?}", e);
}

#[test]
fn script_passive_and_step() {
    // A passive script's first step is used up by its first pause.
    let r = router(
        "s :: Script(TYPE PASSIVE, print \"a\", pause, print \"b\", pause, print \"c\", return 7);",
    );
    r.run();
    assert_eq!(r.stdout(), "");
    r.write("s.step", "").unwrap();
    assert_eq!(r.stdout(), "a\nb\n");
    r.write("s.step", "").unwrap();
    assert_eq!(r.stdout(), "a\nb\nc\n");
    assert_eq!(r.read("s.run"), "7");
    // `print NAME` reads a handler, as in Click.
    let r = router("s :: Script(print a);");
    r.run();
    assert_eq!(
        r.stderr(),
        "While executing 's :: Script':\n  no 'a' read handler\n"
    );
}

#[test]
fn drivermanager_default_and_script() {
    // Default DriverManager: first stop request stops.
    let r = router("InfiniteSource(LIMIT 2, STOP true) -> c :: Counter -> Discard; DriverManager;");
    r.run();
    assert!(r.router.is_stopped());
    assert_eq!(r.read("c.count"), "2");
    // Two sources: wait for both.
    let r = router(
        "a :: InfiniteSource(LIMIT 2, STOP true) -> c :: Counter -> Discard;
         b :: RatedSource(RATE 10, LIMIT 3, STOP true) -> c2 :: Counter -> Discard;
         DriverManager(wait_stop 2, print \"done $(c.count) $(c2.count)\", stop);",
    );
    r.run();
    assert!(r.router.is_stopped());
    assert_eq!(r.stdout(), "done 2 3\n");
    // wait_time, then stop.
    let r = router(
        "InfiniteSource(LIMIT 1) -> Discard; DriverManager(wait_time 2s, read version, stop);",
    );
    let t0 = r.clock.now();
    r.run();
    assert!(r.router.is_stopped());
    assert_eq!((r.clock.now() - t0).nsec(), 2_000_000_000);
    assert!(r.stderr().starts_with("version:\n"));
}

#[test]
fn unqueue_idle_sleeps() {
    let r = router("Idle -> Queue -> u :: Unqueue -> Discard;");
    for _ in 0..3 {
        r.router.run_pass();
    }
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
    let r = router("Idle -> d :: Discard;");
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
    let _ = r.read("d.count");
}

/// Script TYPE PACKET runs once per packet: `return N` picks output N,
/// `end` (or the end of the script) output 0, `exit` and out-of-range
/// outputs drop; `init` runs once; `$input` is the input port.
#[test]
fn script_type_packet_routes_by_return_value() {
    let r = router(
        "Idle -> s :: Script(TYPE PACKET, init i 0, set j $i, set i $(if $(eq $i 2) 0 $(add $i 1)), return $j);
         s[0] -> c0 :: Counter -> Discard; s[1] -> c1 :: Counter -> Discard;
         Idle -> e :: Script(TYPE PACKET, end) -> ce :: Counter -> Discard;
         Idle -> x :: Script(TYPE PACKET, exit) -> cx :: Counter -> Discard;
         Idle -> [1] y :: Script(TYPE PACKET, return $input); Idle -> y;
         y[0] -> cy0 :: Counter -> Discard; y[1] -> cy1 :: Counter -> Discard;",
    );
    let pkts: Vec<Vec<u8>> = (0..6u8).map(|i| vec![i; 20]).collect();
    r.inject("s", 0, &pkts);
    assert_eq!(r.read("c0.count"), "2");
    assert_eq!(r.read("c1.count"), "2"); // the two `return 2` packets are dropped
    r.inject("e", 0, &pkts[..3]);
    assert_eq!(r.read("ce.count"), "3");
    r.inject("x", 0, &pkts[..3]);
    assert_eq!(r.read("cx.count"), "0");
    r.inject("y", 1, &pkts[..2]);
    assert_eq!(r.read("cy1.count"), "2");
    assert_eq!(r.read("cy0.count"), "0");
    let e = try_router("Idle -> Script(TYPE PASSIVE, print hi) -> Discard;")
        .err()
        .unwrap();
    assert!(
        e.iter()
            .any(|l| l.ends_with("ports allowed only on PACKET scripts")),
        "{:?}",
        e
    );
}

/// `$(shift VAR)` pops words off a variable; another Script's `run` read
/// handler takes arguments (`$1`...) and yields its `return` value; `read`
/// of a Script's own handler prints the qualified name.
#[test]
fn script_shift_run_with_arguments_and_read_names() {
    let r = router(
        "s0 :: Script(write set v a b c, print $(shift v), print $(shift v), print $(get v),
                      print $(s.run x y), readq length \"abc\", read add 1 2, stop);
         s :: Script(TYPE PASSIVE, return $2-$1);",
    );
    r.run();
    assert_eq!(r.stdout(), "a\nb\nc\ny-x\n");
    assert!(r.stderr().contains("s0.length:\n3\n"), "{}", r.stderr());
    assert!(r.stderr().contains("s0.add:\n3\n"), "{}", r.stderr());
}

/// `print >FILE` needs a console with files; the in-memory one refuses
/// with Click's error (the driver's console writes the file: see the
/// driver tests).
#[test]
fn script_print_to_file_without_files_is_an_error() {
    let r = router("Script(print >out.txt hello, stop);");
    r.run();
    assert!(
        r.stderr().contains("file redirection not supported here"),
        "{}",
        r.stderr()
    );
    assert_eq!(r.stdout(), "");
}

/// A handler written from downstream of a running element (a Script with
/// ports, PACKET by default, writing `unqueue.reset`) takes effect as soon
/// as that element returns, and Unqueue counts packets as it emits them:
/// Unqueue(LIMIT 1) keeps going while each packet resets it.
#[test]
fn handler_write_into_running_element_and_unqueue_reset() {
    let r = router(
        "InfiniteSource(LIMIT 5) -> SimpleQueue -> u :: Unqueue(LIMIT 1)
           -> s :: Script(export n 0, set n $(add $n 1), write u.reset);",
    );
    for _ in 0..50 {
        r.router.run_pass();
    }
    assert_eq!(r.read("s.n"), "5");
    assert_eq!(r.stderr(), "");
    // without the reset, LIMIT 1 stops after one packet
    let r = router("InfiniteSource(LIMIT 5) -> SimpleQueue -> u :: Unqueue(LIMIT 1) -> c :: Counter -> Discard;");
    for _ in 0..50 {
        r.router.run_pass();
    }
    assert_eq!(r.read("c.count"), "1");
    assert_eq!(r.read("u.count"), "1");
}

/// Truncate cuts long packets at the end, leaves short ones alone, and
/// counts what it removed in the extra-length annotation unless told not to.
#[test]
fn truncate_limits_length_and_counts_extra() {
    let r = router(
        "Idle -> t :: Truncate(10) -> a :: Collect; Idle -> u :: Truncate(4, EXTRA_LENGTH false) -> b :: Collect;",
    );
    clear_collected();
    r.inject("t", 0, &[vec![7u8; 30], vec![1u8; 6]]);
    r.inject("u", 0, &[vec![9u8; 8]]);
    let a = collected("a");
    assert_eq!(a[0].data, vec![7u8; 10]);
    assert_eq!(a[1].data, vec![1u8; 6]);
    assert_eq!(
        a[0].anno.u32_at(click::packet::EXTRA_LENGTH_ANNO_OFFSET),
        20
    );
    assert_eq!(a[1].anno.u32_at(click::packet::EXTRA_LENGTH_ANNO_OFFSET), 0);
    let b = collected("b");
    assert_eq!(b[0].data, vec![9u8; 4]);
    assert_eq!(b[0].anno.u32_at(click::packet::EXTRA_LENGTH_ANNO_OFFSET), 0);
    assert_eq!(r.read("t.length"), "10");
    r.write("t.length", "3").unwrap();
    r.inject("t", 0, &[vec![5u8; 8]]);
    assert_eq!(collected("a")[2].data, vec![5u8; 3]);
}

/// ScheduleInfo accepts Click's `ELEMENT TICKETS` arguments (classic
/// configurations carry it) and rejects malformed ones; NotifierQueue and
/// FullNoteQueue are Click's names for Queue.
#[test]
fn scheduleinfo_and_queue_synonyms() {
    let r = router(
        "src :: InfiniteSource(LIMIT 3) -> q :: FullNoteQueue(2) -> u :: Unqueue -> c :: Counter -> Discard;
         Idle -> n :: NotifierQueue -> Discard;
         ScheduleInfo(u 1, src 2.5);",
    );
    for _ in 0..20 {
        r.router.run_pass();
    }
    assert_eq!(r.read("c.count"), "3");
    assert_eq!(r.read("n.capacity"), "1000");
    // A Queue (FullNoteQueue) is a full notifier: a source filling it with
    // nobody pulling goes to sleep; a NotifierQueue is not, so the source
    // keeps pushing and the queue drops (Click's notifier-04).
    let r = router(
        "i1 :: InfiniteSource(LIMIT 15) -> c1 :: Counter -> q1 :: Queue(5) -> Idle;
         i2 :: InfiniteSource(LIMIT 15) -> c2 :: Counter -> q2 :: NotifierQueue(5) -> Idle;",
    );
    for _ in 0..50 {
        r.router.run_pass();
    }
    assert_eq!(r.read("c1.count"), "5");
    assert_eq!(r.read("i1.scheduled"), "false");
    assert_eq!(r.read("c2.count"), "15");
    assert_eq!(r.read("q2.drops"), "10");
    let e = try_router("ScheduleInfo(u);").err().unwrap();
    assert!(
        e.iter()
            .any(|l| l.contains("expected 'ELEMENTNAME PARAM', got 'u'")),
        "{:?}",
        e
    );
}

/// PullSwitch carries Click's notifier: the Unqueue after it sleeps while
/// the selected input's queue is empty (packets arriving on an unselected
/// input do not wake it), and wakes when the switch selects a queue with
/// packets or when the selected queue fills. SimplePullSwitch has none of
/// its own: its puller listens to every input.
#[test]
fn pullswitch_notifier_follows_selected_input() {
    clear_collected();
    let r = router(
        "Idle -> a :: Null -> q0 :: Queue; Idle -> b :: Null -> q1 :: Queue;
         q0 -> [0]ps :: PullSwitch(0); q1 -> [1]ps;
         ps -> u :: Unqueue -> c :: Counter -> out :: Collect;",
    );
    r.run();
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
    // a packet on the unselected input leaves the Unqueue asleep
    r.inject("b", 0, &[vec![2]]);
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
    assert_eq!(r.read("q1.length"), "1");
    // selecting it wakes the Unqueue
    r.write("ps.switch", "1").unwrap();
    r.run();
    assert_eq!(r.read("c.count"), "1");
    assert_eq!(r.read("q1.length"), "0");
    // with no input selected nothing comes through (as in Click, a queue
    // filling may wake the Unqueue once, for a pull that finds nothing)
    r.write("ps.switch", "-1").unwrap();
    r.run();
    r.inject("a", 0, &[vec![1], vec![1]]);
    r.inject("b", 0, &[vec![2]]);
    r.run();
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
    assert_eq!(r.read("c.count"), "1");
    assert_eq!(r.read("q0.length"), "2");
    r.write("ps.switch", "0").unwrap();
    r.run();
    assert_eq!(r.read("c.count"), "3");
    // the selected queue filling wakes it too
    r.inject("a", 0, &[vec![1]]);
    r.run();
    assert_eq!(r.read("c.count"), "4");
    let got: Vec<u8> = collected("out").iter().map(|s| s.data[0]).collect();
    assert_eq!(got, vec![2, 1, 1, 1]);
    // as in Click, an input it does not have selects none; junk is refused
    r.write("ps.switch", "2").unwrap();
    assert_eq!(r.read("ps.switch"), "-1");
    assert!(r.write("ps.switch", "x").is_err());

    // SimplePullSwitch: out-of-range inputs select none, pulls still work
    let r = router(
        "Idle -> a :: Null -> q0 :: Queue; Idle -> b :: Null -> q1 :: Queue;
         q0 -> [0]ps :: SimplePullSwitch(1); q1 -> [1]ps;
         ps -> u :: Unqueue -> c :: Counter -> Discard;",
    );
    r.inject("a", 0, &[vec![1]]);
    r.inject("b", 0, &[vec![2], vec![2]]);
    // (its Unqueue keeps polling while the unselected q0 holds a packet,
    // as Click's does: a bounded number of passes)
    r.run_passes(50);
    assert_eq!(r.read("c.count"), "2");
    assert_eq!(r.router.run_pass(), RunState::Busy);
    r.write("ps.switch", "7").unwrap();
    assert_eq!(r.read("ps.switch"), "-1");
    r.write("ps.switch", "0").unwrap();
    r.run();
    assert_eq!(r.read("c.count"), "3");
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
}

/// StripToNetworkHeader removes the link header MarkIPHeader found, and
/// leaves packets without a network header alone.
#[test]
fn striptonetworkheader_strips_to_ip() {
    clear_collected();
    let r = router(
        "Idle -> src :: MarkIPHeader(14) -> StripToNetworkHeader -> s :: Collect;
         Idle -> raw :: StripToNetworkHeader -> n :: Collect;",
    );
    let pkts = pcap_packets("udp-64.pcap");
    r.inject("src", 0, &pkts[..2]);
    r.inject("raw", 0, &pkts[..1]);
    let s = collected("s");
    assert_eq!(s[0].data, pkts[0][14..].to_vec());
    assert_eq!(s[0].network_header_offset, Some(0));
    assert_eq!(s[1].data, pkts[1][14..].to_vec());
    assert_eq!(collected("n")[0].data, pkts[0]);
    assert!(try_router("Idle -> StripToNetworkHeader(3) -> Discard;").is_err());
}

/// SetTimestamp stores a fixed time or the current one, in the timestamp
/// annotation or, with FIRST, the first-timestamp annotation.
#[test]
fn settimestamp_fixed_current_and_first() {
    clear_collected();
    let r = router(
        "Idle -> f :: SetTimestamp(1234.5) -> a :: Collect;
         Idle -> now :: SetTimestamp -> b :: Collect;
         Idle -> first :: SetTimestamp(99, FIRST true) -> c :: Collect;",
    );
    let pkts = pcap_packets("udp-64.pcap");
    r.inject("f", 0, &pkts[..1]);
    r.clock
        .set(Timestamp::from_sec_nsec(1_000_000_007, 250_000_000));
    r.inject("now", 0, &pkts[..1]);
    r.inject("first", 0, &pkts[..1]);
    assert_eq!(
        collected("a")[0].anno.timestamp,
        Timestamp::from_sec_nsec(1234, 500_000_000)
    );
    assert_eq!(
        collected("b")[0].anno.timestamp,
        Timestamp::from_sec_nsec(1_000_000_007, 250_000_000)
    );
    let c = &collected("c")[0];
    assert_eq!(c.anno.first_timestamp(), Timestamp::from_sec_nsec(99, 0));
    assert_eq!(c.anno.timestamp, Timestamp::default());
    let e = try_router("Idle -> SetTimestamp(DELTA true) -> Discard;")
        .err()
        .unwrap();
    assert!(e.iter().any(|l| l.contains("SetTimestampDelta")), "{:?}", e);
}

/// Bypass: inactive it passes packets straight through; active, a push
/// Bypass sends them around its bypass path (which rejoins at input 1) and
/// a pull Bypass answers pulls from input 1.
#[test]
fn bypass_push_and_pull() {
    clear_collected();
    let r = router(
        "Idle -> src :: Null -> b :: Bypass -> out :: Collect;
         b[1] -> Paint(7) -> [1]b;",
    );
    let pkts = pcap_packets("udp-64.pcap");
    r.inject("src", 0, &pkts[..2]);
    assert_eq!(r.read("b.active"), "false");
    r.write("b.active", "true").unwrap();
    r.inject("src", 0, &pkts[..1]);
    r.write("b.active", "false").unwrap();
    r.inject("src", 0, &pkts[..1]);
    let paints: Vec<u8> = collected("out").iter().map(|s| s.anno.paint()).collect();
    assert_eq!(paints, vec![0, 0, 7, 0]);
    assert_eq!(collected("out")[2].data, pkts[0]);
    assert!(r.write("b.active", "maybe").is_err());

    // pull: the active Bypass answers output 0 from input 1, and output 1
    // (the bypass path's start) from input 0
    let r = router(
        "Idle -> a :: Null -> q0 :: Queue; Idle -> c :: Null -> q1 :: Queue;
         q0 -> b :: Bypass(true) -> u :: Unqueue -> k :: Counter -> Discard; q1 -> [1]b;
         b[1] -> k1 :: Counter -> Discard;",
    );
    r.inject("a", 0, &[vec![1]]);
    r.inject("c", 0, &[vec![2], vec![2]]);
    r.run_passes(20);
    assert_eq!(r.read("k.count"), "2");
    assert_eq!(r.read("k1.count"), "1");
    // inactive, nothing pulls from input 1
    r.write("b.active", "false").unwrap();
    r.inject("c", 0, &[vec![2]]);
    r.inject("a", 0, &[vec![1], vec![1]]);
    r.run_passes(20);
    assert_eq!(r.read("q1.length"), "1");
    assert_eq!(r.read("q0.length"), "0");
    assert_eq!(
        r.read("k.count").parse::<u32>().unwrap() + r.read("k1.count").parse::<u32>().unwrap(),
        5
    );
    // a pull bypass path that loops back into the same Bypass
    clear_collected();
    let r = router(
        "src :: InfiniteSource(DATA \\<11>, LIMIT 4, STOP false) -> PullNull -> b :: Bypass(true)
           -> u :: Unqueue -> out :: Collect;
         b[1] -> Paint(5) -> [1]b;",
    );
    r.run_passes(50);
    let paints: Vec<u8> = collected("out").iter().map(|s| s.anno.paint()).collect();
    assert_eq!(paints, vec![5, 5, 5, 5]);
    assert!(try_router("Idle -> Bypass(true, INLINE true, 3) -> Discard;").is_err());
}

/// Pullers declared before the Queues they pull from still find the
/// Queues' notifiers (sources initialize first) and sleep while empty.
#[test]
fn pullers_declared_before_their_queues_sleep() {
    let r = router(
        "u :: Unqueue; ps :: PullSwitch(0); u2 :: Unqueue;
         Idle -> src :: Null -> q :: Queue -> u -> c :: Counter -> Discard;
         Idle -> a :: Null -> q0 :: Queue -> [0]ps; Idle -> q1 :: Queue -> [1]ps;
         ps -> u2 -> c2 :: Counter -> Discard;",
    );
    r.run_passes(100);
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
    r.inject("src", 0, &[vec![1], vec![2]]);
    r.inject("a", 0, &[vec![3]]);
    r.run_passes(100);
    assert_eq!(r.read("c.count"), "2");
    assert_eq!(r.read("c2.count"), "1");
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
}

/// A packet of `len` bytes with id `id` in bytes 0..2 and `v` at byte 2.
fn pkt_with(id: u16, v: u8, len: usize) -> Vec<u8> {
    let mut d = pkt(id, len);
    d[2] = v;
    d
}

#[test]
fn hashswitch_sends_each_packet_out_the_output_its_sum_names() {
    // Three outputs: `sum % 3`; two and four: `(sum ^ (sum >> 4)) & (N - 1)`.
    // The sum is of bytes 2..4 (byte 3 is 0), so it is the byte at 2.
    clear_collected();
    let r = router(
        "Idle -> h3 :: HashSwitch(2, 2); h3[0] -> a0 :: Collect; h3[1] -> a1 :: Collect; h3[2] -> a2 :: Collect;
         Idle -> h4 :: HashSwitch(2, 2); h4[0] -> b0 :: Collect; h4[1] -> b1 :: Collect; h4[2] -> b2 :: Collect; h4[3] -> b3 :: Collect;",
    );
    let vals: Vec<u8> = vec![0, 1, 2, 3, 4, 5, 17, 200, 255, 16, 33];
    let pk: Vec<Vec<u8>> = vals
        .iter()
        .enumerate()
        .map(|(i, &v)| pkt_with(i as u16, v, 60))
        .collect();
    r.inject("h3", 0, &pk);
    r.inject("h4", 0, &pk);
    for (n, prefix) in [(3usize, "a"), (4, "b")] {
        for out in 0..n {
            let want: Vec<u16> = vals
                .iter()
                .enumerate()
                .filter(|(_, &v)| {
                    let s = v as usize;
                    let o = if n == 4 { (s ^ (s >> 4)) & 3 } else { s % n };
                    o == out
                })
                .map(|(i, _)| i as u16)
                .collect();
            let name = format!("{}{}", prefix, out);
            assert_eq!(
                ids(&collected_data(&name)),
                want,
                "HashSwitch output {}",
                name
            );
        }
    }
    // Too short for OFFSET + LENGTH: output 0.
    clear_collected();
    r.inject("h3", 0, &[pkt_with(99, 2, 3)]);
    assert_eq!(ids(&collected_data("a0")), vec![99]);
    assert!(collected("a2").is_empty());
}

#[test]
fn counter_counts_every_packet_and_byte_of_a_batch() {
    // Unqueue(BURST 32) pushes batches of up to 32 packets into the Counter;
    // packets of different lengths make a missed packet show in byte_count.
    clear_collected();
    let r = router(
        "Idle -> q :: Queue(100) -> u :: Unqueue(BURST 32) -> c :: Counter -> a :: AverageCounter -> out :: Collect;",
    );
    let pk: Vec<Vec<u8>> = (0..70u16).map(|i| pkt(i, 60 + i as usize)).collect();
    let want_bytes: usize = pk.iter().map(|p| p.len()).sum();
    r.inject("q", 0, &pk);
    r.run();
    assert_eq!(ids(&collected_data("out")), (0..70).collect::<Vec<u16>>());
    assert_eq!(r.read("c.count"), "70");
    assert_eq!(r.read("c.byte_count"), want_bytes.to_string());
    assert_eq!(r.read("a.count"), "70");
    assert_eq!(r.read("a.byte_count"), want_bytes.to_string());
    // One packet at a time gives the same counts.
    r.write("c.reset", "").unwrap();
    r.inject("c", 0, &pk[..3]);
    assert_eq!(r.read("c.count"), "3");
    assert_eq!(r.read("c.byte_count"), (60 + 61 + 62).to_string());
}

#[test]
fn counter_batch_of_32_infinite_source_packets() {
    // The figure: 32 packets of 138 bytes in one batch are 4416 bytes.
    let r = router(
        "InfiniteSource(LENGTH 138, LIMIT 32, BURST 32, STOP true) -> c :: Counter -> Discard;",
    );
    r.run();
    assert_eq!(r.read("c.count"), "32");
    assert_eq!(r.read("c.byte_count"), "4416");
}

#[test]
fn staticswitch_output_cannot_be_changed() {
    clear_collected();
    let r = router("Idle -> s :: StaticSwitch(1); s[0] -> a :: Collect; s[1] -> b :: Collect;");
    assert!(r.write("s.switch", "0").is_err());
    assert!(r.router.read_handler("s.switch").is_err());
    r.inject("s", 0, &[pkt(1, 60), pkt(2, 60)]);
    assert_eq!(ids(&collected_data("b")), vec![1, 2]);
    assert!(collected("a").is_empty());
}

#[test]
fn counter_bit_rate_is_eight_times_the_byte_rate() {
    let r = router(
        "s :: RatedSource(RATE 1000, LIMIT 500) -> c :: Counter -> a :: AverageCounter -> Discard;",
    );
    r.run();
    let f = |h: &str| -> f64 { r.read(h).parse().unwrap() };
    let (bytes, bits) = (f("c.byte_rate"), f("c.bit_rate"));
    assert!(bytes > 1000.0, "{bytes}");
    assert!(
        (bits - 8.0 * bytes).abs() <= 8.0,
        "bit_rate {bits}, byte_rate {bytes}"
    );
    let (bytes, bits) = (f("a.byte_rate"), f("a.bit_rate"));
    assert!(bytes > 1000.0, "{bytes}");
    assert!(
        (bits - 8.0 * bytes).abs() <= 8.0,
        "bit_rate {bits}, byte_rate {bytes}"
    );
    // 500 packets of 69 bytes over 499 ms
    assert_eq!(r.read("a.count"), "500");
    assert_eq!(r.read("a.byte_count"), "34500");
    r.write("a.reset", "").unwrap();
    assert_eq!(r.read("a.count"), "0");
    assert_eq!(r.read("a.byte_count"), "0");
}

#[test]
fn counter_count_call_fires_once_when_the_count_reaches_it() {
    // c.count_call calls c2.reset: c2 shows whether (and when) it fired.
    let r = router("Idle -> c :: Counter -> c2 :: Counter -> Discard;");
    let five: Vec<Vec<u8>> = (0..5).map(|i| pkt(i, 60)).collect();
    r.inject("c", 0, &five);
    // A trigger at the current count does not fire on the next packet
    // (Click's Counter fires when the count becomes N).
    r.write("c.count_call", "5 c2.reset").unwrap();
    r.inject("c", 0, &five[..1]);
    assert_eq!(r.read("c2.count"), "6");
    r.write("c.count_call", "8 c2.reset").unwrap();
    assert_eq!(r.read("c.count_call"), "8");
    r.inject("c", 0, &five[..1]);
    assert_eq!(r.read("c2.count"), "7");
    // the 8th packet fires it before passing on: c2 was reset, then counted it
    r.inject("c", 0, &five[..1]);
    assert_eq!(r.read("c2.count"), "1");
    // and only once
    r.inject("c", 0, &five[..2]);
    assert_eq!(r.read("c2.count"), "3");
}

#[test]
fn paint_config_follows_color_writes_and_priosched_takes_no_arguments() {
    let r = router("Idle -> p :: Paint(3) -> Discard; Idle -> q :: Paint(4, 19) -> Discard;");
    assert_eq!(r.read("p.config"), "3");
    assert_eq!(r.read("q.config"), "4, 19");
    r.write("p.color", "7").unwrap();
    assert_eq!(r.read("p.config"), "7");
    assert_eq!(r.read("p.color"), "7");
    let e = config_error("Idle -> Queue -> PrioSched(3) -> Discard;");
    assert!(e.contains("PrioSched"), "{e}");
}

#[test]
fn pulltee_copies_to_its_push_outputs_and_checks_its_argument() {
    clear_collected();
    let r = router(
        "Idle -> q :: Queue -> t :: PullTee(3) -> u :: Unqueue -> out :: Collect;
         t[1] -> c1 :: Collect; t[2] -> c2 :: Collect;",
    );
    r.inject("q", 0, &[pkt(1, 60), pkt(2, 61)]);
    r.run();
    for s in ["out", "c1", "c2"] {
        assert_eq!(ids(&collected_data(s)), vec![1, 2], "{s}");
    }
    let e = config_error(
        "Idle -> Queue -> t :: PullTee(2) -> Unqueue -> Discard; t[1] -> Discard; t[2] -> Discard;",
    );
    assert!(e.contains("3 outputs implies 3 arms"), "{e}");
}

#[test]
fn hashswitch_hashes_a_packet_exactly_offset_plus_length_long() {
    clear_collected();
    let r = router("Idle -> h :: HashSwitch(2, 1); h[0] -> a0 :: Collect; h[1] -> a1 :: Collect; h[2] -> a2 :: Collect;");
    // 3 bytes: byte 2 is the last one; 5 % 3 = 2
    r.inject("h", 0, &[vec![0, 7, 5]]);
    assert_eq!(collected_data("a2"), vec![vec![0, 7, 5]]);
    assert!(collected("a0").is_empty());
}

#[test]
fn switches_config_follows_switch_writes() {
    let r = router(
        "Idle -> s :: Switch(1); s[0] -> Discard; s[1] -> Discard;
         Idle -> q0 :: Queue; Idle -> q1 :: Queue;
         q0 -> [0]ps :: PullSwitch(1); q1 -> [1]ps; ps -> Unqueue -> Discard;
         q0x :: Queue; q1x :: Queue; Idle -> q0x; Idle -> q1x;
         q0x -> [0]sps :: SimplePullSwitch(1); q1x -> [1]sps; sps -> Unqueue -> Discard;",
    );
    for e in ["s", "ps", "sps"] {
        assert_eq!(r.read(&format!("{e}.config")), "1", "{e}");
        r.write(&format!("{e}.switch"), "0").unwrap();
        assert_eq!(r.read(&format!("{e}.config")), "0", "{e}");
        assert_eq!(r.read(&format!("{e}.switch")), "0", "{e}");
    }
}

#[test]
fn pullswitch_pulls_from_a_source_without_a_notifier() {
    clear_collected();
    let r =
        router("InfiniteSource(LENGTH 60, LIMIT 3) -> PullSwitch(0) -> Unqueue -> out :: Collect;");
    r.run_passes(50);
    assert_eq!(collected("out").len(), 3);
}
