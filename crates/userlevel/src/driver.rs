//! The `click` userlevel driver: Click's command line, configuration
//! loading, the run loop (real or simulated time) and `-h` handler output.

use crate::console::StdConsole;
use click::prelude::*;
use click::router::HandlerError;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::fd::RawFd;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The system clock, warpable as Click's is (the `timewarp` handler).
pub struct SystemClock;

/// Click's time warp, process-wide as in Click (every thread's router
/// reads one clock): from real time `base_real` on, the clock reads
/// `base_warped + (real - base_real) * speed`.
#[derive(Copy, Clone)]
struct Warp {
    speed: f64,
    base_real: i64,
    base_warped: i64,
}

impl Warp {
    fn at(&self, real: i64) -> i64 {
        self.base_warped + ((real - self.base_real) as f64 * self.speed) as i64
    }
}

/// Set once the clock has been warped (the common case reads no lock).
static WARPED: AtomicBool = AtomicBool::new(false);
static WARP: std::sync::Mutex<Option<Warp>> = std::sync::Mutex::new(None);

fn warp_state() -> Option<Warp> {
    if !WARPED.load(Ordering::Acquire) {
        return None;
    }
    *WARP.lock().unwrap_or_else(|p| p.into_inner())
}

fn real_now() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos().min(i64::MAX as u128) as i64,
        Err(_) => 0,
    }
}

/// The real time until the system clock reads `d` nanoseconds later than
/// now (shorter or longer under a time warp).
pub fn real_wait(d: i64) -> Duration {
    let d = d.max(0);
    match warp_state() {
        Some(w) => Duration::from_nanos((d as f64 / w.speed).ceil() as u64),
        None => Duration::from_nanos(d as u64),
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let real = real_now();
        match warp_state() {
            Some(w) => Timestamp::from_nsec(w.at(real)),
            None => Timestamp::from_nsec(real),
        }
    }
    fn warp(&self) -> Option<f64> {
        Some(warp_state().map_or(1.0, |w| w.speed))
    }
    fn set_warp(&self, speed: f64) -> Result<(), String> {
        let mut g = WARP.lock().unwrap_or_else(|p| p.into_inner());
        let real = real_now();
        let warped = g.map_or(real, |w| w.at(real));
        *g = Some(Warp {
            speed,
            base_real: real,
            base_warped: warped,
        });
        WARPED.store(true, Ordering::Release);
        Ok(())
    }
}

/// Parsed command line.
#[derive(Default, Debug, Clone)]
pub struct Options {
    pub router_file: Option<String>,
    pub file_is_expr: bool,
    pub output_file: Option<String>,
    pub quit: bool,
    pub report_time: bool,
    pub warnings: bool,
    pub handlers: Vec<String>,
    pub exit_handler: Option<String>,
    pub defines: Vec<(String, String)>,
    /// `Some(start)` under `--simtime`; `Some(None)` start = now.
    pub simtime: Option<Option<Timestamp>>,
    /// `-p PORT`: TCP ControlSockets to add.
    pub ports: Vec<String>,
    /// `-u FILE`: UNIX-domain ControlSockets to add.
    pub unix_sockets: Vec<String>,
    /// `-j N`: threads (1 unless given).
    pub threads: usize,
    /// `-a`: pin each thread to a CPU.
    pub affinity: bool,
    /// `--replicate`: one whole copy of the configuration per thread.
    pub replicate: bool,
    /// `-R`: the `hotconfig` handler replaces the running configuration.
    pub reconfigure: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Opt {
    File,
    Expr,
    Handler,
    ExitHandler,
    Output,
    Quit,
    Time,
    Warnings,
    NoWarnings,
    SimTime,
    Help,
    Version,
    Port,
    UnixSocket,
    Reconfig,
    Threads,
    ClickPath,
    Affinity,
    Replicate,
}

/// (long name, short, option, argument: 0 none, 1 required, 2 optional, negatable)
const OPTIONS: &[(&str, Option<char>, Opt, u8)] = &[
    ("affinity", Some('a'), Opt::Affinity, 0),
    ("allow-reconfigure", Some('R'), Opt::Reconfig, 0),
    ("clickpath", Some('C'), Opt::ClickPath, 1),
    ("expression", Some('e'), Opt::Expr, 1),
    ("exit-handler", Some('x'), Opt::ExitHandler, 1),
    ("file", Some('f'), Opt::File, 1),
    ("handler", Some('h'), Opt::Handler, 1),
    ("help", None, Opt::Help, 0),
    ("no-warnings", Some('w'), Opt::NoWarnings, 0),
    ("output", Some('o'), Opt::Output, 1),
    ("port", Some('p'), Opt::Port, 1),
    ("quit", Some('q'), Opt::Quit, 0),
    ("quiet", None, Opt::Quit, 0),
    ("replicate", None, Opt::Replicate, 0),
    ("simtime", None, Opt::SimTime, 2),
    ("threads", Some('j'), Opt::Threads, 1),
    ("time", Some('t'), Opt::Time, 0),
    ("unix-socket", Some('u'), Opt::UnixSocket, 1),
    ("version", Some('v'), Opt::Version, 0),
    ("warnings", None, Opt::Warnings, 0),
];

pub fn short_usage(prog: &str) -> String {
    format!("Usage: {prog} [OPTION]... [ROUTERFILE]\nTry '{prog} --help' for more information.\n")
}

pub fn usage(prog: &str) -> String {
    format!(
        "'Click' runs a Click router configuration at user level. It installs the
configuration, reporting any errors to standard error, and then generally runs
until interrupted.

Usage: {prog} [OPTION]... [ROUTERFILE]

Options:
  -f, --file FILE               Read router configuration from FILE.
  -e, --expression EXPR         Use EXPR as router configuration.
  -h, --handler ELEMENT.H       Call ELEMENT's read handler H after running
                                driver and print result to standard output.
  -x, --exit-handler ELEMENT.H  Use handler ELEMENT.H value for exit status.
  -o, --output FILE             Write flat configuration to FILE.
  -q, --quit                    Do not run driver.
  -t, --time                    Print information on how long driver took.
  -w, --no-warnings             Do not print warnings.
  -p, --port PORT               Listen for control connections on TCP port
                                PORT (on 127.0.0.1 only; see ControlSocket).
  -u, --unix-socket FILE        Listen for control connections on UNIX-domain
                                socket FILE.
      --simtime[=TIME]          Run in simulated time, starting at TIME
                                (seconds since the epoch; default now).
  -j, --threads N               Start N threads. Elements that call each other
                                run on one thread; Queues join threads (see
                                StaticThreadSched for placing them).
  -a, --affinity                Pin threads to CPUs.
      --replicate               With -j N: run N copies of the configuration,
                                one per thread; FromDevice copies share their
                                interface by flow hash, handlers read totals.
  -R, --allow-reconfigure       Provide a writable 'hotconfig' handler: a write
                                replaces the running configuration with the
                                one written, keeping state (queued packets,
                                ARP tables, ControlSocket connections) of
                                elements with the same names. One thread only.
      --help                    Print this message and exit.
  -v, --version                 Print version number and exit.

Arguments of the form NAME=VALUE define configuration parameters ($NAME).
"
    )
}

/// What parsing the command line decided.
pub enum Parsed {
    Run(Options),
    /// Print this to stdout and exit 0.
    Exit(String),
    /// Print these errors (and the short usage) and exit 1.
    Bad(Vec<String>),
}

fn is_define(arg: &str) -> Option<(String, String)> {
    let eq = arg.find('=')?;
    if eq == 0 {
        return None;
    }
    let name = &arg[..eq];
    if name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        Some((name.to_string(), arg[eq + 1..].to_string()))
    } else {
        None
    }
}

/// Parses Click's command line (without the program name).
pub fn parse_args(prog: &str, args: &[String]) -> Parsed {
    let mut o = Options {
        warnings: true,
        threads: 1,
        ..Default::default()
    };
    let mut errors: Vec<String> = Vec::new();
    let mut i = 0;
    let mut only_args = false;
    // (option, argument, spelling)
    let mut items: Vec<(Option<Opt>, Option<String>, String)> = Vec::new();
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if only_args || a == "-" || !a.starts_with('-') {
            items.push((None, Some(a.clone()), a.clone()));
            continue;
        }
        if a == "--" {
            only_args = true;
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, val) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let exact = OPTIONS.iter().find(|x| x.0 == name);
            let cands: Vec<_> = OPTIONS.iter().filter(|x| x.0.starts_with(name)).collect();
            let found = match (exact, cands.len()) {
                (Some(x), _) => Some(x),
                (None, 1) => Some(cands[0]),
                (None, 0) => {
                    errors.push(format!("{prog}: unrecognized option '--{name}'"));
                    None
                }
                _ => {
                    errors.push(format!("{prog}: option '--{name}' is ambiguous"));
                    None
                }
            };
            let Some(&(lname, _, opt, argk)) = found else {
                break;
            };
            match argk {
                0 if val.is_some() => {
                    errors.push(format!("{prog}: '--{lname}' can't take an argument"));
                    break;
                }
                0 | 2 => items.push((Some(opt), val, format!("--{lname}"))),
                _ => {
                    let v = match val {
                        Some(v) => v,
                        None if i < args.len() => {
                            i += 1;
                            args[i - 1].clone()
                        }
                        None => {
                            errors.push(format!("{prog}: '--{lname}' requires an argument"));
                            break;
                        }
                    };
                    items.push((Some(opt), Some(v), format!("--{lname}")));
                }
            }
            continue;
        }
        // short options, possibly clustered
        let chars: Vec<char> = a[1..].chars().collect();
        let mut k = 0;
        while k < chars.len() {
            let c = chars[k];
            k += 1;
            let Some(&(_, _, opt, argk)) = OPTIONS.iter().find(|x| x.1 == Some(c)) else {
                errors.push(format!("{prog}: unrecognized option '-{c}'"));
                break;
            };
            if argk == 1 {
                let rest: String = chars[k..].iter().collect();
                let v = if !rest.is_empty() {
                    rest
                } else if i < args.len() {
                    i += 1;
                    args[i - 1].clone()
                } else {
                    errors.push(format!("{prog}: '-{c}' requires an argument"));
                    break;
                };
                items.push((Some(opt), Some(v), format!("-{c}")));
                break;
            }
            items.push((Some(opt), None, format!("-{c}")));
        }
        if !errors.is_empty() {
            break;
        }
    }
    if !errors.is_empty() {
        return Parsed::Bad(errors);
    }
    for (opt, val, spelling) in items {
        match opt {
            None => {
                let v = val.unwrap_or_default();
                if let Some((n, value)) = is_define(&v) {
                    if o.defines.iter().any(|(x, _)| *x == n) {
                        errors.push(format!("parameter '{n}' multiply defined"));
                    } else {
                        o.defines.push((n, value));
                    }
                    continue;
                }
                if o.router_file.is_some() {
                    errors.push("router configuration specified twice".into());
                    return Parsed::Bad(errors);
                }
                o.router_file = Some(v);
                o.file_is_expr = false;
            }
            Some(Opt::File) | Some(Opt::Expr) => {
                if o.router_file.is_some() {
                    errors.push("router configuration specified twice".into());
                    return Parsed::Bad(errors);
                }
                o.router_file = val;
                o.file_is_expr = opt == Some(Opt::Expr);
            }
            Some(Opt::Output) => {
                if o.output_file.is_some() {
                    errors.push("output file specified twice".into());
                    return Parsed::Bad(errors);
                }
                o.output_file = val;
            }
            Some(Opt::Handler) => o.handlers.push(val.unwrap_or_default()),
            Some(Opt::ExitHandler) => {
                if o.exit_handler.is_some() {
                    errors.push("--exit-handler specified twice".into());
                    return Parsed::Bad(errors);
                }
                o.exit_handler = val;
            }
            Some(Opt::Quit) => o.quit = true,
            Some(Opt::Time) => o.report_time = true,
            Some(Opt::Warnings) => o.warnings = true,
            Some(Opt::NoWarnings) => o.warnings = false,
            Some(Opt::SimTime) => {
                let start = match val {
                    None => None,
                    Some(v) => match click_lang::parse_time_ns(&v) {
                        Ok(ns) => Some(Timestamp::from_nsec(ns)),
                        Err(_) => {
                            errors.push(format!("{prog}: '--simtime' expects a time in seconds, not '{v}'"));
                            return Parsed::Bad(errors);
                        }
                    },
                };
                o.simtime = Some(start);
            }
            Some(Opt::Help) => return Parsed::Exit(usage(prog)),
            Some(Opt::Version) => {
                return Parsed::Exit(format!(
                    "click (Click) {}\nclickos: a Rust re-implementation of the Click modular router.\n",
                    click::router::VERSION
                ))
            }
            Some(Opt::Threads) => {
                let v = val.unwrap_or_default();
                match v.trim().parse::<usize>() {
                    Ok(n) if (1..=1024).contains(&n) => o.threads = n,
                    _ => {
                        errors.push(format!(
                            "{spelling}: expected a number of threads between 1 and 1024, not '{v}'"
                        ));
                        return Parsed::Bad(errors);
                    }
                }
            }
            Some(Opt::Affinity) => o.affinity = true,
            Some(Opt::Replicate) => o.replicate = true,
            Some(Opt::ClickPath) => {}
            Some(Opt::Port) => o.ports.push(val.unwrap_or_default()),
            Some(Opt::UnixSocket) => o.unix_sockets.push(val.unwrap_or_default()),
            Some(Opt::Reconfig) => o.reconfigure = true,
        }
    }
    if o.reconfigure && o.threads > 1 {
        errors.push("-R (hot reconfiguration) works with one thread only, not with -j".into());
    }
    if o.replicate && o.threads < 2 {
        errors.push("--replicate needs -j N with N of 2 or more".into());
    }
    if !errors.is_empty() {
        return Parsed::Bad(errors);
    }
    Parsed::Run(o)
}

fn io_error_text(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Click's `glob_match`: `*`, `?` and `[...]` classes.
pub fn glob_match(s: &str, pat: &str) -> bool {
    fn go(s: &[char], p: &[char]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some('*') => (0..=s.len()).any(|k| go(&s[k..], &p[1..])),
            Some('?') => !s.is_empty() && go(&s[1..], &p[1..]),
            Some('[') => {
                let Some(end) = p.iter().skip(1).position(|&c| c == ']').map(|x| x + 1) else {
                    return !s.is_empty() && s[0] == '[' && go(&s[1..], &p[1..]);
                };
                if s.is_empty() {
                    return false;
                }
                let set = &p[1..end];
                let (neg, set) = match set.first() {
                    Some('^') | Some('!') => (true, &set[1..]),
                    _ => (false, set),
                };
                let mut hit = false;
                let mut j = 0;
                while j < set.len() {
                    if j + 2 < set.len() && set[j + 1] == '-' {
                        if set[j] <= s[0] && s[0] <= set[j + 2] {
                            hit = true;
                        }
                        j += 3;
                    } else {
                        if set[j] == s[0] {
                            hit = true;
                        }
                        j += 1;
                    }
                }
                hit != neg && go(&s[1..], &p[end + 1..])
            }
            Some(&c) => !s.is_empty() && s[0] == c && go(&s[1..], &p[1..]),
        }
    }
    let s: Vec<char> = s.chars().collect();
    let p: Vec<char> = pat.chars().collect();
    go(&s, &p)
}

/// Reads one handler as click.cc's `call_read_handler` does, appending the
/// output to `out`; errors go to `errs`.
fn call_read_handler(
    router: &Router,
    elem: Option<&str>,
    h: &str,
    print_name: bool,
    out: &mut String,
    errs: &mut Vec<String>,
) {
    let full = match elem {
        Some(e) => format!("{e}.{h}"),
        None => h.to_string(),
    };
    match router.read_handler(&full) {
        Ok(mut v) => {
            if print_name {
                out.push_str(&full);
                out.push_str(":\n");
            }
            if !v.is_empty() && !v.ends_with('\n') {
                v.push('\n');
            }
            out.push_str(&v);
            if print_name {
                out.push('\n');
            }
        }
        Err(HandlerError::PermissionDenied(_)) => errs.push(format!("'{full}' is a write handler")),
        Err(HandlerError::NoSuchHandler(_)) | Err(HandlerError::NoSuchElement(_)) => {
            errs.push(format!("no '{full}' handler"))
        }
        Err(e) => errs.push(format!("{full}: {e}")),
    }
}

fn handler_readable(router: &Router, elem: &str, h: &str) -> bool {
    let Ok(list) = router.read_handler(&format!("{elem}.handlers")) else {
        return false;
    };
    list.lines().any(|l| {
        let mut it = l.split('\t');
        it.next() == Some(h) && it.next().is_some_and(|f| f.contains('r'))
    })
}

/// click.cc's `call_read_handlers`: element names, glob patterns, or
/// class names before the dot.
pub fn call_read_handlers(
    router: &Router,
    handlers: &[String],
    out: &mut String,
    errs: &mut Vec<String>,
) {
    let print_names = handlers.len() > 1;
    // the `list` handler names every element, on every thread
    let names: Vec<String> = match router.read_handler("list") {
        Ok(l) => l.lines().skip(1).map(|s| s.to_string()).collect(),
        Err(_) => router.element_names().map(|s| s.to_string()).collect(),
    };
    for spec in handlers {
        let Some(dot) = spec.rfind('.') else {
            call_read_handler(router, None, spec, print_names, out, errs);
            continue;
        };
        let (ename, hname) = (&spec[..dot], &spec[dot + 1..]);
        if names.iter().any(|n| n == ename) {
            call_read_handler(router, Some(ename), hname, print_names, out, errs);
            continue;
        }
        let is_pattern = ename.contains(['?', '*', '[']);
        let mut any = false;
        let mut matched: Vec<&String> = Vec::new();
        for n in &names {
            let hit = if is_pattern {
                glob_match(n, ename)
            } else {
                router
                    .read_handler(&format!("{n}.class"))
                    .is_ok_and(|c| c == ename)
            };
            if hit {
                any = true;
                if handler_readable(router, n, hname) {
                    matched.push(n);
                }
            }
        }
        if !any {
            errs.push(if is_pattern {
                format!("no element matching '{ename}'")
            } else {
                format!("no element '{ename}'")
            });
            continue;
        }
        for n in matched {
            call_read_handler(router, Some(n), hname, true, out, errs);
        }
    }
}

/// User and system CPU seconds of this process, all threads (Linux /proc).
pub fn cpu_times() -> (f64, f64) {
    let Ok(s) = std::fs::read_to_string("/proc/self/stat") else {
        return (0.0, 0.0);
    };
    let Some(rp) = s.rfind(')') else {
        return (0.0, 0.0);
    };
    let f: Vec<&str> = s[rp + 1..].split_whitespace().collect();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let t = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0) / hz;
    (t(11), t(12))
}

/// Runs the driver; returns the process exit status.
pub fn run(prog: &str, args: &[String], registry: &Registry) -> i32 {
    let console = Rc::new(StdConsole::default());
    let status = run_with(prog, args, registry, &console);
    console.flush();
    status
}

fn run_with(prog: &str, args: &[String], registry: &Registry, console: &Rc<StdConsole>) -> i32 {
    let err = |m: &str| console.error_line(m);
    let o = match parse_args(prog, args) {
        Parsed::Run(o) => o,
        Parsed::Exit(text) => {
            console.stdout(&text);
            return 0;
        }
        Parsed::Bad(errs) => {
            for e in errs {
                err(&e);
            }
            console.flush();
            let _ = std::io::stderr().write_all(short_usage(prog).as_bytes());
            return 1;
        }
    };

    // read the configuration
    let (text, fname) = if o.file_is_expr {
        (
            o.router_file.clone().unwrap_or_default(),
            "<expr>".to_string(),
        )
    } else {
        match o.router_file.as_deref() {
            None | Some("-") => {
                let mut s = String::new();
                if let Err(e) = std::io::stdin().read_to_string(&mut s) {
                    err(&format!("<stdin>: {}", io_error_text(&e)));
                    return 1;
                }
                (s, "<stdin>".to_string())
            }
            Some(f) => match std::fs::read(f) {
                Ok(b) => (String::from_utf8_lossy(&b).into_owned(), f.to_string()),
                Err(e) => {
                    err(&format!("{f}: {}", io_error_text(&e)));
                    return 1;
                }
            },
        }
    };

    // parse (errors here are the lexer's: no "could not be initialized")
    let flat = match parse_for_driver(&text, &fname, &o, registry) {
        Ok(f) => f,
        Err(errs) => {
            for e in errs {
                err(&e);
            }
            return 1;
        }
    };

    // plan threads: StaticThreadSched's warnings and thread -1 apply even
    // to one thread, as in Click
    let plan = if o.threads > 1 || flat.elements.iter().any(|e| e.class == "StaticThreadSched") {
        let graph = match click::router::check_graph(&flat, registry) {
            Ok(g) => g,
            Err(errs) => {
                for e in errs {
                    err(&e);
                }
                err("Router could not be initialized!");
                return 1;
            }
        };
        match crate::threads::plan::plan(&flat, &graph, o.threads, o.replicate) {
            Ok(p) => {
                if o.warnings {
                    for w in &p.warnings {
                        err(w);
                    }
                }
                Some(p)
            }
            Err(errs) => {
                for e in errs {
                    err(&e);
                }
                err("Router could not be initialized!");
                return 1;
            }
        }
    } else {
        None
    };
    let max_batch = if flat
        .elements
        .iter()
        .filter(|e| registry.get(&e.class).is_some_and(|c| c.order_sensitive))
        .count()
        >= 2
    {
        1
    } else {
        RouterOptions::default().max_batch
    };

    let mut exit_value = 0;
    if let Some(out) = &o.output_file {
        let s = click_lang::unparse(&flat);
        if out == "-" {
            console.stdout(&s);
        } else if let Err(e) = std::fs::write(out, s.as_bytes()) {
            err(&format!("{out}: {}", io_error_text(&e)));
            exit_value = 1;
        }
    }
    let run = !o.quit && !flat.elements.is_empty();
    if !o.quit && flat.elements.is_empty() && o.warnings {
        err(&format!(
            "warning: {fname}: configuration has no elements, exiting"
        ));
    }

    // Simulated time is one timeline: under --simtime the threads are
    // planned (placement, warnings, home_thread) but run as one.
    if let Some(plan) = plan
        .as_ref()
        .filter(|p| p.nthreads > 1 && o.simtime.is_none())
    {
        // several threads
        let settings = crate::threads::RunSettings {
            affinity: o.affinity,
        };
        let running =
            match crate::threads::start(&flat, plan, registry, console, max_batch, &settings) {
                Ok(r) => r,
                Err(errs) => {
                    for e in errs {
                        err(&e);
                    }
                    err("Router could not be initialized!");
                    return 1;
                }
            };
        let before = (cpu_times(), Instant::now());
        if run {
            catch_signals();
            running.run();
        }
        for p in running.panics() {
            err(&p);
            exit_value = 1;
        }
        let drops = running.link_drops();
        if drops > 0 && o.warnings {
            err(&format!(
                "warning: {drops} packets dropped between threads (a link's ring of {} was full)",
                crate::threads::LINK_CAPACITY
            ));
        }
        exit_value = after_run(running.router(), &o, console, before, exit_value);
        running.finish();
        return exit_value & 0xff;
    }

    // one thread
    let vclock = o.simtime.map(|start| {
        Rc::new(VirtualClock::new(
            start.unwrap_or_else(|| SystemClock.now()),
        ))
    });
    let clock: Box<dyn Clock> = match &vclock {
        Some(v) => Box::new(v.clone()),
        None => Box::new(SystemClock),
    };
    let hotswap = o.reconfigure.then(|| {
        Rc::new_cyclic(|me| HotSwap {
            me: me.clone(),
            options: o.clone(),
            registry: registry.clone(),
            console: console.clone(),
            vclock: vclock.clone(),
            classes: RefCell::new(BTreeMap::new()),
            pending: RefCell::new(None),
        })
    });
    let host = Rc::new(Host {
        selector: Selector::default(),
        thread: None,
    });
    let router = match Router::from_flat(
        &flat,
        registry,
        clock,
        Box::new((**console).clone()),
        RouterOptions {
            host: Some(host.clone() as Rc<dyn std::any::Any>),
            max_batch,
            home_threads: plan
                .as_ref()
                .map(|p| p.home_threads(&flat))
                .unwrap_or_default(),
            warnings: o.warnings,
            globals: hotswap
                .as_ref()
                .map(|h| h.clone() as Rc<dyn click::router::GlobalHandlers>),
            ..RouterOptions::default()
        },
    ) {
        Ok(r) => r,
        Err(errs) => {
            for e in errs {
                err(&e);
            }
            err("Router could not be initialized!");
            return 1;
        }
    };
    for q in plan.iter().flat_map(|p| p.quiescent.iter()) {
        if let Some(i) = router.element_index(q) {
            router.unschedule_task_of(i);
        }
    }
    if o.affinity {
        crate::threads::pin_to_cpu(0);
    }
    let before = (cpu_times(), Instant::now());
    let (mut router, mut host) = (router, host);
    if run {
        catch_signals();
        loop {
            if let Some(h) = &hotswap {
                *h.classes.borrow_mut() = router.element_classes();
            }
            drive_with(
                &router,
                vclock.as_deref(),
                Some(&host.selector),
                hotswap.as_deref().map(|h| h as &dyn LoopHooks),
            );
            // a `hotconfig` write: the new router takes the old one's state
            // and runs in its place
            let next = hotswap.as_ref().and_then(|h| h.pending.borrow_mut().take());
            match next {
                Some((new, new_host)) if !router.is_stopped() && !interrupted() => {
                    new.take_state_from(&router);
                    router.cleanup();
                    router = new;
                    host = new_host;
                }
                Some((new, _)) => {
                    new.cleanup();
                    break;
                }
                None => break,
            }
        }
    }
    exit_value = after_run(&router, &o, console, before, exit_value);
    router.cleanup();
    drop(host);
    exit_value & 0xff
}

/// `-R`: the driver's `hotconfig` handler. A write parses and initializes
/// the new configuration at once (errors go back to the writer, and the
/// running router carries on); the driver loop then stops at the end of the
/// current pass, the new router takes the state of the old one's elements
/// of the same names (Click's hot swap), and runs in its place.
struct HotSwap {
    me: std::rc::Weak<HotSwap>,
    options: Options,
    registry: Registry,
    console: Rc<StdConsole>,
    vclock: Option<Rc<VirtualClock>>,
    /// The running router's element names and classes.
    classes: RefCell<BTreeMap<String, &'static str>>,
    /// A new router waiting to take over, with its host.
    pending: RefCell<Option<(Router, Rc<Host>)>>,
}

impl HotSwap {
    /// Builds the new router. Errors are the lexer's (no "could not be
    /// initialized" line, as in Click) or the router's (with it).
    fn build(&self, text: &str) -> Result<(Router, Rc<Host>), (Vec<String>, bool)> {
        let o = &self.options;
        let flat = parse_for_driver(text, "<hotconfig>", o, &self.registry)
            .map_err(|errs| (errs, false))?;
        let clock: Box<dyn Clock> = match &self.vclock {
            Some(v) => Box::new(v.clone()),
            None => Box::new(SystemClock),
        };
        let host = Rc::new(Host {
            selector: Selector::default(),
            thread: None,
        });
        // (the router itself goes packet-at-a-time for printing elements)
        let router = Router::from_flat(
            &flat,
            &self.registry,
            clock,
            Box::new((*self.console).clone()),
            RouterOptions {
                host: Some(host.clone() as Rc<dyn std::any::Any>),
                warnings: o.warnings,
                hotswap: Some(self.classes.borrow().clone()),
                globals: self
                    .me
                    .upgrade()
                    .map(|h| h as Rc<dyn click::router::GlobalHandlers>),
                ..RouterOptions::default()
            },
        )
        .map_err(|e| (e, true))?;
        Ok((router, host))
    }
}

impl click::router::GlobalHandlers for HotSwap {
    fn list(&self) -> Vec<(&'static str, &'static str)> {
        vec![("hotconfig", "w")]
    }

    fn read(&self, name: &str) -> Option<Result<String, String>> {
        (name == "hotconfig").then(|| Err("'hotconfig' is write-only".to_string()))
    }

    fn write(&self, name: &str, value: &str) -> Option<Result<(), String>> {
        if name != "hotconfig" {
            return None;
        }
        Some(match self.build(value) {
            Ok(new) => {
                if let Some((old, _)) = self.pending.borrow_mut().replace(new) {
                    old.cleanup();
                }
                Ok(())
            }
            Err((mut errs, initializing)) => {
                if initializing {
                    errs.push("Router could not be initialized!".into());
                }
                Err(errs.join("\n"))
            }
        })
    }
}

impl LoopHooks for HotSwap {
    fn check(&self, _router: &Router) -> bool {
        self.pending.borrow().is_none()
    }
    fn idle(&self, _router: &Router) -> bool {
        false
    }
    fn stopped(&self, _router: &Router) {}
    fn before_wait(&self) -> bool {
        self.pending.borrow().is_none()
    }
    fn after_wait(&self) {}
}

/// Parses a configuration as Click's driver does — the lexer knows every
/// class, so a bare word that is neither an element nor a class is an
/// undeclared element — and adds the ControlSockets of `-p` and `-u`.
/// Errors are the lexer's (Click prints no "could not be initialized"
/// after them), unknown classes among them.
fn parse_for_driver(
    text: &str,
    file: &str,
    o: &Options,
    registry: &Registry,
) -> Result<click_lang::FlatConfig, Vec<String>> {
    let is_class = |n: &str| registry.get(n).is_some();
    let popts = click_lang::ParseOptions {
        is_class: Some(&is_class),
    };
    let mut flat = click_lang::parse_config_with(text, file, &o.defines, &popts)
        .map_err(|errs| errs.iter().map(|e| e.to_string()).collect::<Vec<_>>())?;
    add_control_sockets(&mut flat, o);
    let unknown: Vec<String> = flat
        .elements
        .iter()
        .filter(|e| registry.get(&e.class).is_none())
        .map(|e| format!("{}: unknown element class '{}'", e.landmark, e.class))
        .collect();
    if unknown.is_empty() {
        Ok(flat)
    } else {
        Err(unknown)
    }
}

/// After the driver stopped: `-t`, `-h` handlers and `-x`, as click.cc.
fn after_run(
    router: &Router,
    o: &Options,
    console: &StdConsole,
    before: ((f64, f64), Instant),
    mut exit_value: i32,
) -> i32 {
    let err = |m: &str| console.error_line(m);
    if o.report_time {
        let after = cpu_times();
        let wall = before.1.elapsed();
        let cs = (wall.subsec_millis() + 5) / 10;
        console.stdout(&format!(
            "{:.3}u {:.3}s {}:{:02}.{:02}\n",
            after.0 - before.0 .0,
            after.1 - before.0 .1,
            wall.as_secs() / 60,
            wall.as_secs() % 60,
            cs.min(99)
        ));
    }

    if !o.handlers.is_empty() {
        let mut out = String::new();
        let mut errs = Vec::new();
        call_read_handlers(router, &o.handlers, &mut out, &mut errs);
        console.stdout(&out);
        if !errs.is_empty() {
            for e in errs {
                err(&e);
            }
            exit_value = 1;
        }
    }

    if let Some(xh) = &o.exit_handler {
        match router.read_handler(xh) {
            Err(e) => {
                err(&match e {
                    HandlerError::NoSuchHandler(_) | HandlerError::NoSuchElement(_) => {
                        format!("no '{xh}' handler")
                    }
                    HandlerError::PermissionDenied(_) => format!("'{xh}' is a write handler"),
                    other => other.to_string(),
                });
                exit_value = -1;
            }
            Ok(v) => {
                let v = click_lang::uncomment(&v);
                let v = v.trim();
                if let Ok(n) = click_lang::parse_i64(v) {
                    exit_value = n as i32;
                } else if let Ok(b) = click_lang::parse_bool(v) {
                    exit_value = if b { 0 } else { 1 };
                } else {
                    err("exit handler value should be integer");
                    exit_value = -1;
                }
            }
        }
    }
    exit_value
}

/// Adds the ControlSockets of `-p` and `-u`, named as click.cc names
/// them (`click_driver@@ControlSocket`, then `...@1`, `...@2`, ...).
fn add_control_sockets(flat: &mut click_lang::FlatConfig, o: &Options) {
    let configs = o.ports.iter().map(|p| format!("TCP, {p}")).chain(
        o.unix_sockets
            .iter()
            .map(|f| format!("UNIX, {}", click_lang::args::quote(f))),
    );
    for (n, config) in configs.enumerate() {
        let name = if n == 0 {
            "click_driver@@ControlSocket".to_string()
        } else {
            format!("click_driver@@ControlSocket@{n}")
        };
        flat.elements.push(click_lang::FlatElement {
            name,
            class: "ControlSocket".into(),
            config,
            landmark: click_lang::Landmark {
                file: "click".into(),
                line: 0,
                col: 0,
            },
        });
    }
}

/// Set by SIGINT/SIGTERM: the driver stops the router (cleanup and `-h`
/// handlers still run); a second signal kills the process, as in Click.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: libc::c_int) {
    INTERRUPTED.store(true, Ordering::Relaxed);
}

fn catch_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        if crate::console::script_catches(sig) {
            // a Script runs on it instead (and stops the driver or not)
            continue;
        }
        // SAFETY: a zeroed sigaction is a valid starting value; the handler
        // only stores to an atomic, which is async-signal-safe. SA_RESETHAND
        // restores the default action, so a second signal terminates.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESETHAND;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// What the driver hands its routers' elements as the host object
/// ([`Ctx::host`]): the descriptors they want watched, and, when the
/// configuration runs on several threads, this thread's part in that.
pub struct Host {
    pub selector: Selector,
    pub thread: Option<Rc<crate::threads::ThreadCtx>>,
}

/// The selector of the driver that runs this element, if any.
pub fn selector<'a>(cx: &Ctx<'a>) -> Option<&'a Selector> {
    cx.host()?.downcast_ref::<Host>().map(|h| &h.selector)
}

/// Whether SIGINT or SIGTERM arrived.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// What a multi-threaded run adds to the scheduler loop.
pub trait LoopHooks {
    /// Called before every pass (cheap unless another thread rang); false
    /// ends the loop.
    fn check(&self, router: &Router) -> bool;
    /// The router is idle with no timers and nothing holding it. True:
    /// wait for another thread to bring work (the doorbell is among the
    /// selector's descriptors); false: end the loop.
    fn idle(&self, router: &Router) -> bool;
    /// The router stopped by itself (the `stop` handler, a stop request).
    fn stopped(&self, router: &Router);
    /// About to block on the selector: false if work is already waiting
    /// (then the loop does not block).
    fn before_wait(&self) -> bool;
    /// Back from blocking.
    fn after_wait(&self);
    /// Whether this loop delivers signals to its router's Scripts (only
    /// one thread's loop does).
    fn takes_signals(&self) -> bool {
        true
    }
}

/// The file descriptors elements want watched (Click's `add_select`),
/// handed to elements as the router's host object ([`Ctx::host`]). When
/// the router is idle the driver waits on them, with the next timer as
/// deadline, instead of sleeping blind; when busy it polls them about
/// once a millisecond. A ready descriptor schedules its element's task.
#[derive(Default)]
pub struct Selector {
    /// (element index, fd, poll events)
    want: RefCell<Vec<(usize, RawFd, libc::c_short)>>,
    /// Elements that keep the driver running while the router is idle
    /// with no timers (a ControlSocket waiting for clients).
    holders: RefCell<Vec<usize>>,
    scratch: RefCell<(Vec<libc::pollfd>, Vec<usize>)>,
}

impl Selector {
    /// Replaces element `elem`'s watched descriptors.
    pub fn set(&self, elem: usize, fds: &[(RawFd, libc::c_short)]) {
        let mut w = self.want.borrow_mut();
        w.retain(|x| x.0 != elem);
        w.extend(
            fds.iter()
                .filter(|f| f.1 != 0)
                .map(|&(fd, ev)| (elem, fd, ev)),
        );
    }

    /// Whether element `elem` keeps the driver running while idle.
    pub fn hold(&self, elem: usize, on: bool) {
        let mut h = self.holders.borrow_mut();
        h.retain(|&x| x != elem);
        if on {
            h.push(elem);
        }
    }

    pub fn keeps_running(&self) -> bool {
        !self.holders.borrow().is_empty()
    }

    pub fn has_fds(&self) -> bool {
        !self.want.borrow().is_empty()
    }

    /// Waits until a watched descriptor is ready, `timeout` passes
    /// (`None`: no limit) or a signal arrives; calls `ready` with the
    /// element of each ready descriptor.
    pub fn wait(&self, timeout: Option<Duration>, ready: &mut dyn FnMut(usize)) {
        let mut scratch = self.scratch.borrow_mut();
        let (pfds, owners) = &mut *scratch;
        pfds.clear();
        owners.clear();
        for &(elem, fd, events) in self.want.borrow().iter() {
            pfds.push(libc::pollfd {
                fd,
                events,
                revents: 0,
            });
            owners.push(elem);
        }
        if wait_fds(pfds, timeout) > 0 {
            for (p, &e) in pfds.iter().zip(owners.iter()) {
                if p.revents != 0 {
                    ready(e);
                }
            }
        }
    }
}

/// ppoll(2) with a nanosecond timeout; returns its result (-1 on EINTR).
pub fn wait_fds(pfds: &mut [libc::pollfd], timeout: Option<Duration>) -> i32 {
    let ts = timeout.map(|d| libc::timespec {
        tv_sec: d.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    });
    let tsp = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `pfds` is a valid, exclusively borrowed array of `len`
    // pollfds; `tsp` is null or points to a timespec that outlives the
    // call; a null signal mask leaves the mask unchanged.
    unsafe {
        libc::ppoll(
            pfds.as_mut_ptr(),
            pfds.len() as libc::nfds_t,
            tsp,
            std::ptr::null(),
        )
    }
}

/// The scheduler loop without watched descriptors (see [`drive_with`]).
pub fn drive(router: &Router, vclock: Option<&VirtualClock>) {
    drive_with(router, vclock, None, None)
}

/// How many busy passes between looks at the clock for socket polling (a
/// pass is up to 128 task runs, so the clock is read every pass).
const POLL_PASSES: u32 = 1;
/// How often watched descriptors are polled while the router is busy.
const BUSY_POLL: Duration = Duration::from_millis(1);

/// The scheduler loop: run tasks; when only timers remain, wait on the
/// selector's descriptors (or sleep, or move the virtual clock) until the
/// next one; stop when the router stops, a signal arrives, or nothing is
/// left to do (no tasks, timers, or elements holding the driver).
pub fn drive_with(
    router: &Router,
    vclock: Option<&VirtualClock>,
    sel: Option<&Selector>,
    hooks: Option<&dyn LoopHooks>,
) {
    let mut passes = 0u32;
    let mut last_poll = Instant::now();
    let mut schedule = |i: usize| router.schedule_task_of(i);
    // blocks on the selector, telling the hooks (another thread's doorbell
    // must know to wake us)
    let mut block = |s: &Selector, timeout: Option<Duration>| {
        if hooks.is_none_or(|h| h.before_wait()) {
            s.wait(timeout, &mut schedule);
            if let Some(h) = hooks {
                h.after_wait();
            }
        }
    };
    loop {
        // Signals for Script elements (TYPE SIGNAL): each waiting Script
        // runs; with none waiting, INT and TERM stop the driver and any
        // other signal has its default effect. Thread 0 takes them.
        if hooks.is_none_or(|h| h.takes_signals()) {
            let mut pending = crate::console::take_pending_signals();
            while pending != 0 {
                let sig = pending.trailing_zeros() as i32;
                pending &= pending - 1;
                if !router.deliver_signal(sig) {
                    if sig == libc::SIGINT || sig == libc::SIGTERM {
                        INTERRUPTED.store(true, Ordering::Relaxed);
                    } else {
                        crate::console::default_action(sig);
                    }
                }
            }
        }
        if INTERRUPTED.load(Ordering::Relaxed) {
            router.stop();
            break;
        }
        if hooks.is_some_and(|h| !h.check(router)) {
            break;
        }
        match router.run_pass() {
            RunState::Busy => {
                let Some(s) = sel else { continue };
                passes += 1;
                if passes < POLL_PASSES {
                    continue;
                }
                passes = 0;
                if s.has_fds() && last_poll.elapsed() >= BUSY_POLL {
                    s.wait(Some(Duration::ZERO), &mut |i| router.schedule_task_of(i));
                    last_poll = Instant::now();
                }
            }
            RunState::Idle(t) => {
                let held = sel.is_some_and(|s| s.keeps_running());
                match (t, vclock) {
                    (None, _) if !held && !hooks.is_some_and(|h| h.idle(router)) => break,
                    (None, _) => {
                        if let Some(s) = sel {
                            block(s, None);
                        }
                    }
                    (Some(t), Some(v)) => {
                        if let Some(s) = sel.filter(|s| s.has_fds()) {
                            s.wait(Some(Duration::ZERO), &mut |i| router.schedule_task_of(i));
                        }
                        v.set(t);
                    }
                    (Some(t), None) => {
                        let now = SystemClock.now();
                        if t > now {
                            let d = real_wait((t - now).nsec());
                            match sel {
                                Some(s) => block(s, Some(d)),
                                None => {
                                    wait_fds(&mut [], Some(d));
                                }
                            }
                        } else if let Some(s) = sel.filter(|s| s.has_fds()) {
                            s.wait(Some(Duration::ZERO), &mut |i| router.schedule_task_of(i));
                        }
                    }
                }
                passes = 0;
                last_poll = Instant::now();
            }
            RunState::Stopped => {
                if let Some(h) = hooks {
                    h.stopped(router);
                }
                break;
            }
        }
    }
}
