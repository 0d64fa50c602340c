//! The `click` driver: options, handler printing, errors, argv[0] mode.

mod common;
use common::*;

#[test]
fn one_handler_prints_bare_value() {
    let cfg = format!(
        "fd :: FromDump({}, STOP true) -> Discard",
        data("mixed.pcap")
    );
    let r = click(&["-e", &cfg, "-h", "fd.count"]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "52\n");
    assert_eq!(r.err, "");
}

#[test]
fn several_handlers_print_headings() {
    let cfg = format!(
        "fd :: FromDump({}, STOP true) -> Discard",
        data("mixed.pcap")
    );
    let r = click(&["-e", &cfg, "-h", "fd.count", "--handler=fd.encap"]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "fd.count:\n52\n\nfd.encap:\nETHER\n\n");
}

#[test]
fn handler_by_class_and_pattern() {
    let cfg = format!(
        "a :: FromDump({0}) -> Discard; b :: FromDump({0}, STOP true) -> Discard",
        data("udp-64.pcap")
    );
    // a class name expands to every element of the class, with headings
    let r = click(&["-e", &cfg, "-h", "FromDump.count"]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "a.count:\n20\n\nb.count:\n20\n\n");
    let r = click(&["-e", &cfg, "-h", "[ab].count"]);
    assert_eq!(r.out, "a.count:\n20\n\nb.count:\n20\n\n");
    let r = click(&["-e", &cfg, "-h", "zz*.count"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.err, "no element matching 'zz*'\n");
}

#[test]
fn handler_errors() {
    let cfg = format!(
        "fd :: FromDump({}, STOP true) -> Discard",
        data("udp-64.pcap")
    );
    let r = click(&["-e", &cfg, "-h", "fd.nonesuch"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.err, "no 'fd.nonesuch' handler\n");
    let r = click(&["-e", &cfg, "-h", "fd.stop"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.err, "'fd.stop' is a write handler\n");
}

#[test]
fn global_handler() {
    let r = click(&[
        "-q",
        "-e",
        "i :: InfiniteSource(LIMIT 1) -> Discard",
        "-h",
        "list",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "2\ni\nDiscard@2\n");
}

#[test]
fn output_flat_config() {
    let dir = tmpdir("output");
    let r = click(&[
        "-q",
        "-e",
        "x :: InfiniteSource(LIMIT 1) -> d :: Discard",
        "-o",
        "-",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(
        r.out,
        "x :: InfiniteSource(LIMIT 1);\nd :: Discard;\n\nx -> d;\n"
    );
    let f = dir.join("flat.click");
    let fs = f.to_string_lossy().into_owned();
    let r = click(&[
        "--quit",
        "--expression=x :: InfiniteSource(LIMIT 1) -> d :: Discard",
        &format!("--output={fs}"),
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(
        std::fs::read_to_string(&f).unwrap(),
        "x :: InfiniteSource(LIMIT 1);\nd :: Discard;\n\nx -> d;\n"
    );
}

#[test]
fn definitions_on_command_line() {
    let cfg = "fd :: FromDump($FILE, STOP true) -> Discard";
    let file = format!("FILE={}", data("udp-64.pcap"));
    let r = click(&[&file, "-e", cfg, "-h", "fd.count"]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "20\n");
    // a file's own `define` is overridden by the command line
    let dir = tmpdir("defines");
    let f = dir.join("c.click");
    std::fs::write(
        &f,
        format!(
            "define($N 1);\nfd :: FromDump({}, STOP true) -> Discard;\n",
            data("nanosec.pcap")
        ),
    )
    .unwrap();
    let fs = f.to_string_lossy().into_owned();
    let r = click(&["-fXXX", "N=2"]);
    assert_ne!(r.code, 0);
    let r = click(&[&fs, "N=2", "-h", "fd.count"]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "5\n");
    let r = click(&[&format!("-f{fs}"), "-h", "fd.filename"]);
    assert_eq!(r.out, format!("{}\n", data("nanosec.pcap")));
}

#[test]
fn argv0_click_mode() {
    let dir = tmpdir("argv0");
    let link = dir.join("click");
    std::os::unix::fs::symlink(bin(), &link).unwrap();
    let cfg = format!(
        "fd :: FromDump({}, STOP true) -> Discard",
        data("udp-64.pcap")
    );
    let r = run_in(
        None,
        link.to_str().unwrap(),
        &["-e", &cfg, "-h", "fd.count"],
    );
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "20\n");
    let r = run_in(None, link.to_str().unwrap(), &["--help"]);
    assert_eq!(r.code, 0);
    assert!(
        r.out.contains("Usage: click [OPTION]... [ROUTERFILE]"),
        "{}",
        r.out
    );
    let r = run_in(None, link.to_str().unwrap(), &["--bogus"]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("Usage: click"), "{}", r.err);
}

#[test]
fn parse_error_exit() {
    let r = click(&["-e", "a :: Discard; a -> -> b"]);
    assert_eq!(r.code, 1);
    assert!(r.err.starts_with("config:1: "), "{}", r.err);
    assert!(
        !r.err.contains("Router could not be initialized!"),
        "{}",
        r.err
    );
}

#[test]
fn unknown_class_exit() {
    // Click's lexer knows every class: a bare unknown word is an
    // undeclared element, a declared element of an unknown class an
    // unknown class
    let r = click(&["-e", "NoSuchThing -> Discard"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.err, "config:1: undeclared element 'NoSuchThing'\n");
    let r = click(&["-e", "x :: NoSuchThing; x -> Discard"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.err, "config:1: unknown element class 'NoSuchThing'\n");
}

#[test]
fn configure_errors_print_as_clicks() {
    // Click's IPRewriter-02 test: a -e configuration is `config`, the
    // context line carries the landmark, each message line is indented
    // under it without one
    let r = click(&[
        "-e",
        "i :: Idle\n\
         rw :: IPAddrRewriter(pattern 1.0.0.1 1x - - 0 1,\n\
           pattern 1.0.0.0 0-255 - - 0 1,\n\
           pattern 1.0.0.0 456-19 - - 0 1,\n\
           pattern 1.0.0.0 456-65536 - - 0 1)\n\
         i -> [0]rw i[1] -> [1]rw i[2] -> [2]rw i[3] -> [3]rw\n\
         rw[0] -> i rw[1] -> i\n",
    ]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.err,
        "config:2: While configuring 'rw :: IPAddrRewriter':\n  \
         input spec 0: bad source port\n  \
         input spec 2: bad source port\n  \
         input spec 3: bad source port\n\
         Router could not be initialized!\n"
    );
}

#[test]
fn configure_error_exit() {
    let r = click(&["-e", "FromDump(nonexistent-file.pcap) -> Discard"]);
    assert_eq!(r.code, 1);
    assert!(
        r.err
            .contains("nonexistent-file.pcap: No such file or directory"),
        "{}",
        r.err
    );
    assert!(
        r.err.ends_with("Router could not be initialized!\n"),
        "{}",
        r.err
    );
    // Click's ContextErrorHandler: the landmark on the context line, the
    // message indented under it
    assert_eq!(
        r.err,
        "config:1: While initializing 'FromDump@1 :: FromDump':\n  \
         nonexistent-file.pcap: No such file or directory\n\
         Router could not be initialized!\n"
    );
    let r = click(&["-e", "FromDump(BOGUS 1) -> Discard"]);
    assert_eq!(r.code, 1);
    assert!(
        r.err.contains("While configuring 'FromDump@1 :: FromDump'"),
        "{}",
        r.err
    );
    assert!(
        r.err.ends_with("Router could not be initialized!\n"),
        "{}",
        r.err
    );
}

#[test]
fn missing_config_file() {
    let r = click(&["/nonexistent/dir/router.click"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.err,
        "/nonexistent/dir/router.click: No such file or directory\n"
    );
    let r = click(&["a.click", "b.click"]);
    assert_eq!(r.code, 1);
    assert!(
        r.err.starts_with("router configuration specified twice\n"),
        "{}",
        r.err
    );
}

#[test]
fn simtime_timing_finishes_at_once() {
    // 52 packets one second apart: TIMING replays them on timers, which
    // simulated time fires at once in time order.
    let cfg = format!(
        "fd :: FromDump({}, STOP true, TIMING true) -> ToIPSummaryDump(-, CONTENTS ts_sec)",
        data("mixed.pcap")
    );
    let t = std::time::Instant::now();
    let r = click(&["--simtime", "-e", &cfg, "-h", "fd.count"]);
    assert!(t.elapsed().as_secs() < 10);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    let secs: Vec<&str> = r.out.lines().filter(|l| !l.starts_with('!')).collect();
    assert_eq!(secs.len(), 53);
    assert_eq!(secs[0], "1700000100");
    assert_eq!(secs[51], "1700000151");
    assert_eq!(secs[52], "52");
}

#[test]
fn exit_handler_and_version() {
    let cfg = format!(
        "fd :: FromDump({}, STOP true) -> Discard",
        data("nanosec.pcap")
    );
    let r = click(&["-e", &cfg, "-x", "fd.count"]);
    assert_eq!(r.code, 5);
    let r = click(&["--version"]);
    assert_eq!(r.code, 0);
    assert!(r.out.starts_with("click (Click) "), "{}", r.out);
}

#[test]
fn elements_listing() {
    let r = run_in(None, bin(), &["elements"]);
    assert_eq!(r.code, 0);
    assert!(
        r.out.lines().any(|l| l.starts_with("FromDump ")),
        "{}",
        r.out
    );
    let r = run_in(None, bin(), &["elements", "ToDump"]);
    assert_eq!(r.code, 0);
    assert!(
        r.out.starts_with("ToDump(FILENAME [, KEYWORDS])"),
        "{}",
        r.out
    );
    let r = run_in(None, bin(), &["elements", "NoSuch"]);
    assert_eq!(r.code, 1);
}

#[test]
fn script_print_redirects_to_files() {
    // print >FILE truncates, >>FILE appends, >- is standard output
    let dir = tmpdir("script-redirect");
    let f = dir.join("out.txt");
    std::fs::write(&f, "old contents\n").unwrap();
    let fs = f.to_string_lossy();
    let cfg = format!(
        "Script(print >{fs} \"one\", print >>{fs} \"two\", printn >>{fs} \"three\", print >- \"four\", stop)"
    );
    let r = click(&["-e", &cfg]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "four\n");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "one\ntwo\nthree");
}

#[test]
fn script_cat_reads_files_privately() {
    // $(cat FILE) gives a file's contents inside a Script; the handler is
    // private (not readable from outside, e.g. with -h)
    let dir = tmpdir("script-cat");
    let f = dir.join("routes.txt");
    std::fs::write(&f, "hello from a file\n").unwrap();
    let cfg = format!(
        "s :: Script(print \"[$(cat {})]\", stop)",
        f.to_string_lossy()
    );
    let r = click(&["-e", &cfg]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "[hello from a file\n]\n");
    let r = click(&["-q", "-e", "s :: Script(TYPE PASSIVE)", "-h", "s.cat"]);
    assert_ne!(r.code, 0);
    assert!(r.err.contains("s.cat"), "{}", r.err);
}

/// The `timewarp` global handler (Click's): the clock runs SPEED times as
/// fast as real time from the write on, so a Script's 3-second wait at
/// speed 20 passes in about 0.15 real seconds while `$(now)` advances 3;
/// bad speeds are refused; under --simtime the value is kept but time
/// jumps from timer to timer anyway.
#[test]
fn timewarp_speeds_up_the_clock() {
    let start = std::time::Instant::now();
    let r = click(&[
        "-e",
        "Script(print $(timewarp), write timewarp 20, print $(timewarp), set a $(now), wait 3s,
                print $(ge $(sub $(now) $a) 3), print $(lt $(sub $(now) $a) 4),
                write timewarp 1, set b $(now), wait 0.05s, print $(lt $(sub $(now) $b) 0.5), stop)",
    ]);
    let real = start.elapsed();
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "1\n20\ntrue\ntrue\ntrue\n");
    // 3 warped seconds; a generous bound (a loaded machine is slower,
    // never faster): without the warp this takes at least 3 s
    assert!(real < std::time::Duration::from_millis(2500), "{real:?}");

    for bad in ["0", "-2", "fast", "inf"] {
        let r = click(&["-e", &format!("Script(write timewarp {bad}, stop)")]);
        assert!(
            r.err.contains("expected positive double"),
            "{bad}: {}",
            r.err
        );
    }
    let r = click(&[
        "--simtime",
        "-e",
        "Script(write timewarp 0.5, print $(timewarp), set a $(now), wait 2, print $(sub $(now) $a), stop)",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "0.5\n2\n");
}

/// Script TYPE SIGNAL (Click's Script-signal tests): every Script waiting
/// for a signal runs when it arrives; signals that arrive before the
/// Script runs count once; a Script that reaches `end` waits for the next
/// one, one that `exit`s does not, and the next such signal has its default
/// effect (USR1 ends the process). `$(kill SIGNO PID)` and `$$` send them.
#[test]
fn script_signal_handlers() {
    use std::os::unix::process::ExitStatusExt;
    let cfg = |end: &str, wait_between: bool| {
        format!(
            "Script(print \"K 1\", set y $(kill USR1 $$), {} print \"K 2\", set y $(kill USR1 $$), wait 0.00001s, stop)
             Script(TYPE SIGNAL USR1, print \"got USR1\", {end})",
            if wait_between { "wait 0.00001s," } else { "" }
        )
    };
    let r = click(&["-e", &cfg("end", false)]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "K 1\nK 2\ngot USR1\n");
    let r = click(&["-e", &cfg("exit", false)]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "K 1\nK 2\ngot USR1\n");
    let r = click(&["-e", &cfg("exit", true)]);
    assert_eq!(
        r.raw.status.signal(),
        Some(libc::SIGUSR1),
        "{:?} {}",
        r.raw.status,
        r.err
    );
    assert_eq!(r.out, "K 1\ngot USR1\nK 2\n");
    let r = click(&["-e", &cfg("end", true)]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "K 1\ngot USR1\nK 2\ngot USR1\n");

    // two Scripts on INT both run; INT does not stop the driver by itself
    let dir = tmpdir("sigint");
    let out = dir.join("OUT");
    let cfg = format!(
        "Script(TYPE SIGNAL INT, print >>{o} 'Hello', end);
         Script(TYPE SIGNAL SIGINT, print >>{o} 'Goodbye', end);
         Script(wait 10ms, set y $(kill INT $$), wait 10ms, print >>{o} 'still', set y $(kill 2 $$), wait 10ms, stop)",
        o = out.display()
    );
    let r = click(&["-e", &cfg]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "Hello\nGoodbye\nstill\nHello\nGoodbye\n"
    );
    for bad in ["TYPE SIGNAL", "TYPE SIGNAL NOSUCH", "TYPE SIGNAL 99"] {
        let r = click(&["-q", "-e", &format!("Script({bad}, end)")]);
        assert_eq!(r.code, 1, "{bad}");
        assert!(r.err.contains("bad"), "{bad}: {}", r.err);
    }
    let r = click(&["-e", "Script(set y $(kill NOSUCH $$), print $y, stop)"]);
    assert!(r.err.contains("bad SIGNO"), "{}", r.err);
}
