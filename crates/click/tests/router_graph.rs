//! The router itself: graph checks with Click's messages, push/pull
//! resolution, handlers, tasks, timers, notifiers and re-entrancy.

mod common;
use click::prelude::*;
use common::*;

fn errors(config: &str) -> Vec<String> {
    match try_router(config) {
        Ok(_) => panic!("configuration unexpectedly accepted: {}", config),
        Err(e) => e,
    }
}

#[test]
fn unknown_class_is_reported_with_its_line() {
    let e = errors("InfiniteSource -> Discard;\nx :: NoSuchThing;\n");
    assert_eq!(
        e,
        vec!["test.click:2: unknown element class 'NoSuchThing'".to_string()]
    );
}

#[test]
fn unused_ports_are_all_reported() {
    let e = errors("a :: Collect;\nb :: InfiniteSource;\n");
    assert!(
        e.contains(&"test.click:1: 'a :: Collect' input 0 unused".to_string()),
        "{:?}",
        e
    );
    assert!(
        e.contains(&"test.click:2: 'b :: InfiniteSource' output 0 unused".to_string()),
        "{:?}",
        e
    );
    assert_eq!(e.len(), 2);
}

#[test]
fn ports_outside_the_spec_are_errors() {
    let e = errors("s :: InfiniteSource -> [1] d :: Discard;");
    assert!(
        e.iter()
            .any(|l| l.contains("'d :: Discard' has no input 1")),
        "{:?}",
        e
    );
    let e = errors("s :: InfiniteSource; s [1] -> Discard; s -> Discard;");
    assert!(
        e.iter()
            .any(|l| l.contains("'s :: InfiniteSource' has no output 1")),
        "{:?}",
        e
    );
}

#[test]
fn push_output_reuse_is_illegal() {
    let e = errors("s :: InfiniteSource; s -> a :: Collect; s -> b :: Collect;");
    assert!(
        e.iter()
            .any(|l| l.contains("illegal reuse of 's :: InfiniteSource' push output 0")),
        "{:?}",
        e
    );
}

#[test]
fn push_output_reuse_leaves_the_other_end_connected() {
    // Click's lexer-03 test: the reused connection's input end counts as
    // used (no "input 0 unused" after the reuse error)
    let e = errors("i :: InfiniteSource -> Print -> d :: Discard;\ni -> p :: Print -> d;");
    assert_eq!(
        e,
        ["test.click:1: illegal reuse of 'i :: InfiniteSource' push output 0"]
    );
}

#[test]
fn configure_errors_carry_context() {
    let e = errors("InfiniteSource(LIMIT nonsense) -> Discard;");
    assert!(
        e[0].starts_with("test.click:1: While configuring 'InfiniteSource@1 :: InfiniteSource':"),
        "{:?}",
        e
    );
    assert!(e[1].starts_with("  "), "{:?}", e);
}

#[test]
fn agnostic_source_in_push_context_runs_its_task() {
    let r = router("s :: InfiniteSource(LIMIT 100, BURST 7, STOP true) -> c :: Collect;");
    clear_collected();
    assert_eq!(r.run(), RunState::Stopped);
    assert_eq!(collected("c").len(), 100);
    assert_eq!(r.read("s.count"), "100");
}

#[test]
fn packet_at_a_time_and_batched_runs_agree() {
    for max_batch in [1, 32] {
        clear_collected();
        let r = try_router_with(
            "InfiniteSource(LIMIT 50, BURST 32, STOP true) -> c :: Collect;",
            RouterOptions {
                max_batch,
                ..Default::default()
            },
        )
        .unwrap();
        r.run();
        assert_eq!(collected("c").len(), 50, "max_batch {}", max_batch);
    }
}

#[test]
fn standard_handlers() {
    let r = router("s :: InfiniteSource(LIMIT 1) -> d :: Discard;");
    assert_eq!(r.read("s.class"), "InfiniteSource");
    assert_eq!(r.read("s.name"), "s");
    assert_eq!(r.read("s.config"), "LIMIT 1");
    let h = r.read("d.handlers");
    assert!(
        h.starts_with("name\tr\nclass\tr\nconfig\tr\nports\tr\nhandlers\tr\n"),
        "{}",
        h
    );
    assert!(h.contains("count\tr\n"), "{}", h);
    let ports = r.read("d.ports");
    assert!(
        ports.starts_with("1 input\npush\ts [0]\n0 outputs\n"),
        "{}",
        ports
    );
    assert_eq!(r.read("list"), "2\ns\nd\n");
    assert!(r.read("classes").contains("Discard\n"));
    assert!(!r.read("version").is_empty());
}

#[test]
fn handler_errors() {
    let r = router("s :: InfiniteSource(LIMIT 1) -> d :: Discard;");
    assert_eq!(
        r.router.read_handler("nope.count"),
        Err(HandlerError::NoSuchElement("nope".into()))
    );
    assert_eq!(
        r.router.read_handler("d.nope"),
        Err(HandlerError::NoSuchHandler("d.nope".into()))
    );
    assert_eq!(
        r.router.read_handler("d.reset_counts"),
        Err(HandlerError::PermissionDenied("d.reset_counts".into()))
    );
    assert_eq!(
        r.router.write_handler("d.count", "1"),
        Err(HandlerError::PermissionDenied("d.count".into()))
    );
    assert!(matches!(
        r.router.write_handler("s.limit", "banana"),
        Err(HandlerError::Failed(_))
    ));
}

#[test]
fn handler_writes_change_a_running_element() {
    let r = router("s :: InfiniteSource(LIMIT 10, STOP true) -> d :: Discard;");
    r.run();
    assert_eq!(r.read("d.count"), "10");
    r.write("d.reset_counts", "").unwrap();
    assert_eq!(r.read("d.count"), "0");
}

#[test]
fn global_stop_handler_stops_the_router() {
    let r = router("InfiniteSource -> Discard;");
    r.run_passes(10);
    r.write("stop", "").unwrap();
    assert_eq!(r.router.run_pass(), RunState::Stopped);
}

#[test]
fn compound_element_names_and_handlers() {
    let r = router(
        "elementclass Src { $n | s :: InfiniteSource(LIMIT $n, STOP true) -> output }\n\
         a :: Src(7) -> c :: Collect;",
    );
    clear_collected();
    r.run();
    assert_eq!(r.read("a/s.count"), "7");
    assert_eq!(collected("c").len(), 7);
}

#[test]
fn unconnected_graph_with_no_work_goes_idle() {
    let r = router("InfiniteSource(ACTIVE false) -> Discard;");
    assert_eq!(r.router.run_pass(), RunState::Idle(None));
}

#[test]
fn push_pull_conflicts_are_reported() {
    let e = errors("InfiniteSource -> q :: Queue -> n :: Null -> t :: Tee -> Discard;");
    assert!(
        e.iter().any(|l| l
            == "test.click:1: agnostic 'n :: Null' in mixed context: pull input 0, push output 0"),
        "{:?}",
        e
    );
    let e = errors("InfiniteSource -> q :: Queue -> t :: Tee -> Discard;");
    assert!(
        e.iter().any(|l| l.ends_with("'q :: Queue' pull output 0 connected to 't :: Tee' push input 0")),
        "{:?}",
        e
    );
}

#[test]
fn a_pass_yields_after_the_task_run_under_way() {
    // A host with outside work waiting (an instance's mailbox request) ends
    // the pass after one task run instead of up to 128; the task not run
    // yet goes first in the next pass.
    let r = router(
        "InfiniteSource(BURST 1) -> a :: Counter -> Discard;\n\
         InfiniteSource(BURST 1) -> b :: Counter -> Discard;",
    );
    let mut asked = 0;
    let state = r.router.run_pass_until(|| {
        asked += 1;
        true
    });
    assert_eq!(state, RunState::Busy);
    assert_eq!(asked, 1);
    assert_eq!(
        (r.read("a.count"), r.read("b.count")),
        ("1".into(), "0".into())
    );
    r.router.run_pass_until(|| true);
    assert_eq!(
        (r.read("a.count"), r.read("b.count")),
        ("1".into(), "1".into())
    );
    // Not yielding: the whole pass (128 task runs, 64 each).
    let mut asked = 0;
    r.router.run_pass_until(|| {
        asked += 1;
        false
    });
    assert_eq!(asked, 128);
    assert_eq!(
        (r.read("a.count"), r.read("b.count")),
        ("65".into(), "65".into())
    );
}

// ---- the graph walk behind NeighborhoodTest (Click's ElementNeighborhoodTracker)

#[test]
fn neighborhood_walks_breadth_first_by_port_and_distance() {
    let r = router(
        "d :: Idle -> c :: Null -> b :: Null -> a :: Null -> n :: NeighborhoodTest;
         n -> x :: Null -> y :: Null -> z :: Idle;
         a2 :: Idle -> [1]n;
         n[1] -> x2 :: Idle;",
    );
    let read = |h: &str, p: &str| r.router.read_handler_param(h, p).unwrap();
    let lines = |s: String| s.lines().map(String::from).collect::<Vec<_>>();
    assert_eq!(
        lines(r.router.read_handler("n.upstream").unwrap()),
        ["a", "a2"]
    );
    assert_eq!(lines(read("n.upstream", "2")), ["a", "a2", "b"]);
    assert_eq!(lines(read("n.upstream", "3")), ["a", "a2", "b", "c"]);
    // far enough to reach the end, and no further
    assert_eq!(lines(read("n.upstream", "10")), ["a", "a2", "b", "c", "d"]);
    assert_eq!(lines(read("n.upstream0", "2")), ["a", "b"]);
    assert_eq!(lines(read("n.upstream1", "2")), ["a2"]);
    assert_eq!(lines(read("n.downstream", "")), ["x", "x2"]);
    assert_eq!(lines(read("n.downstream0", "3")), ["x", "y", "z"]);
    assert_eq!(lines(read("n.downstream1", "5")), ["x2"]);
    assert_eq!(read("n.upstream", "0"), "");
    assert!(r.router.read_handler_param("n.upstream", "two").is_err());
    // ports that do not exist are not handlers
    assert!(r.router.read_handler("n.upstream2").is_err());
    assert!(r.router.read_handler("n.downstream01").is_err());
}

#[test]
fn neighborhood_reaches_each_element_once_around_a_cycle() {
    // n -> p -> q -> n: downstream of n, q's output leads back to n itself.
    let r = router(
        "s :: Idle -> [0]n :: NeighborhoodTest;
         n -> p :: Null -> q :: Tee(2); q[0] -> [1]n; q[1] -> t :: Discard;",
    );
    let got = r.router.read_handler_param("n.downstream", "9").unwrap();
    assert_eq!(got.lines().collect::<Vec<_>>(), ["p", "q", "n", "t"]);
    let up = r.router.read_handler_param("n.upstream1", "2").unwrap();
    assert_eq!(up.lines().collect::<Vec<_>>(), ["q", "p"]);
}
