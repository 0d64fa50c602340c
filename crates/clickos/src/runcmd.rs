//! `clickos run` (and `click` by argv[0]): Click's command line over the
//! userlevel driver. It parses Click's options, reads the configuration
//! (a file, standard input or `-e`) and hands both to
//! [`clickos_userlevel::run`].

use click::prelude::*;
use click::router::Console;
use clickos_userlevel::sys::io_error_text;
use clickos_userlevel::{Options, StdConsole};
use std::io::{Read, Write};
use std::rc::Rc;

/// Runs `clickos run ARGS`; returns the process exit status.
pub fn main(prog: &str, args: &[String], registry: &Registry) -> i32 {
    let console = Rc::new(StdConsole::default());
    let status = run_with(prog, args, registry, &console);
    console.flush();
    status
}

fn run_with(prog: &str, args: &[String], registry: &Registry, console: &Rc<StdConsole>) -> i32 {
    let err = |m: &str| console.error_line(m);
    let cmd = match parse_args(prog, args) {
        Parsed::Run(cmd) => cmd,
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
    let (text, fname) = if cmd.file_is_expr {
        (
            cmd.router_file.clone().unwrap_or_default(),
            // Click's name for a -e configuration (lib/driver.cc)
            "config".to_string(),
        )
    } else {
        match cmd.router_file.as_deref() {
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
    clickos_userlevel::run(&text, &fname, &cmd.options, registry, console)
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
    SocketReconfig,
    Threads,
    ClickPath,
    Affinity,
    Replicate,
    Poll,
}

/// (long name, short, option, argument: 0 none, 1 required, 2 optional, negatable)
const OPTIONS: &[(&str, Option<char>, Opt, u8)] = &[
    ("affinity", Some('a'), Opt::Affinity, 0),
    ("allow-reconfigure", Some('R'), Opt::Reconfig, 0),
    ("allow-socket-reconfigure", None, Opt::SocketReconfig, 0),
    ("clickpath", Some('C'), Opt::ClickPath, 1),
    ("expression", Some('e'), Opt::Expr, 1),
    ("exit-handler", Some('x'), Opt::ExitHandler, 1),
    ("file", Some('f'), Opt::File, 1),
    ("handler", Some('h'), Opt::Handler, 1),
    ("help", None, Opt::Help, 0),
    ("no-warnings", Some('w'), Opt::NoWarnings, 0),
    ("output", Some('o'), Opt::Output, 1),
    ("poll", None, Opt::Poll, 0),
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
                                socket FILE (made mode 0600; an existing FILE
                                is replaced only if it is a stale socket).
      --simtime[=TIME]          Run in simulated time, starting at TIME
                                (seconds since the epoch; default
                                1000000000, as in Click).
  -j, --threads N               Start N threads. Elements that call each other
                                run on one thread; Queues join threads (see
                                StaticThreadSched for placing them).
  -a, --affinity                Pin threads to CPUs.
      --poll                    Poll network devices without sleeping, at idle
                                CPU priority (SCHED_IDLE): FromDevice never
                                sleeps on an empty ring unless its BUSY_POLL
                                says so; other tasks preempt the poller. The
                                lowest latency for sparse traffic, for a CPU
                                kept busy.
      --replicate               With -j N: run N copies of the configuration,
                                one per thread; FromDevice copies share their
                                interface by flow hash, handlers read totals.
  -R, --allow-reconfigure       Provide a writable 'hotconfig' handler: a write
                                replaces the running configuration with the
                                one written, keeping state (queued packets,
                                ARP tables, ControlSocket connections) of
                                elements with the same names. One thread only.
                                Control sockets refuse it (530) unless:
      --allow-socket-reconfigure
                                With -R: clients of this user (or root) may
                                write 'hotconfig' over the -u sockets (mode
                                0600). Never over TCP: a new configuration
                                can read and write files as this user.
      --help                    Print this message and exit.
  -v, --version                 Print version number and exit.

Arguments of the form NAME=VALUE define configuration parameters ($NAME).
"
    )
}

/// What `clickos run` was asked to run: where the configuration comes
/// from, and the options to run it with.
pub struct RunArgs {
    /// The file (`-f`, or the one argument; `None` or `-`: standard input)
    /// or, with `file_is_expr`, the configuration itself (`-e`).
    pub router_file: Option<String>,
    pub file_is_expr: bool,
    pub options: Options,
}

/// What parsing the command line decided.
pub enum Parsed {
    Run(RunArgs),
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
    let mut o = Options::default();
    let mut router_file: Option<String> = None;
    let mut file_is_expr = false;
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
                if router_file.is_some() {
                    errors.push("router configuration specified twice".into());
                    return Parsed::Bad(errors);
                }
                router_file = Some(v);
                file_is_expr = false;
            }
            Some(Opt::File) | Some(Opt::Expr) => {
                if router_file.is_some() {
                    errors.push("router configuration specified twice".into());
                    return Parsed::Bad(errors);
                }
                router_file = val;
                file_is_expr = opt == Some(Opt::Expr);
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
            Some(Opt::Poll) => o.poll = true,
            Some(Opt::ClickPath) => {}
            Some(Opt::Port) => o.ports.push(val.unwrap_or_default()),
            Some(Opt::UnixSocket) => o.unix_sockets.push(val.unwrap_or_default()),
            Some(Opt::Reconfig) => o.reconfigure = true,
            Some(Opt::SocketReconfig) => o.socket_reconfigure = true,
        }
    }
    errors.extend(o.problems());
    if !errors.is_empty() {
        return Parsed::Bad(errors);
    }
    Parsed::Run(RunArgs {
        router_file,
        file_is_expr,
        options: o,
    })
}
