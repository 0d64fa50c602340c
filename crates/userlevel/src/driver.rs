//! The userlevel driver as a library call: [`run`] runs a configuration
//! with [`Options`] as Click's `click` does — parse, plan threads, write
//! `-o`, initialize, run until done or interrupted, print `-t`, `-h` and
//! `-x`. The `clickos run` command line is one caller; a daemon that runs
//! configurations is another.

use crate::clock::SystemClock;
use crate::config::parse_for_driver;
use crate::console::StdConsole;
use crate::handlers::call_read_handlers;
use crate::hotswap::HotSwap;
use crate::options::Options;
use crate::runloop::{catch_signals, drive_with, interrupted, LoopHooks};
use crate::selector::{Host, Selector};
use crate::sys::{cpu_times, io_error_text};
use click::prelude::*;
use click::router::HandlerError;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Instant;

/// Runs the configuration `text` with `options`, as Click's driver runs
/// a configuration file; returns the process exit status Click's driver
/// would (0, 1 for errors, or the `-x` handler's value, masked to 8
/// bits). `file` names the configuration in error messages (a file name,
/// `<stdin>`, `config`). Errors, warnings and `-h` output go to `console`,
/// which is flushed before returning. SIGINT and SIGTERM stop the router
/// (a second one ends the process, as in Click).
///
/// ```
/// use clickos_userlevel::{elements, run, Options, StdConsole};
/// use std::rc::Rc;
///
/// let options = Options {
///     handlers: vec!["c.count".into()],
///     ..Options::default()
/// };
/// let config = "InfiniteSource(LIMIT 5, STOP true) -> c :: Counter -> Discard";
/// let console = Rc::new(StdConsole::default());
/// let status = run(config, "config", &options, &elements::registry(), &console);
/// assert_eq!(status, 0);
/// ```
pub fn run(
    text: &str,
    file: &str,
    options: &Options,
    registry: &Registry,
    console: &Rc<StdConsole>,
) -> i32 {
    let status = run_with(text, file, options, registry, console);
    console.flush();
    status
}

/// `--poll`: every FromDevice without `BUSY_POLL` polls its ring without
/// ever sleeping, and this thread (and the router threads it starts, which
/// inherit it) runs under `SCHED_IDLE`. The CPU it polls on never halts,
/// so a frame is seen without a wake-up (tens of microseconds when a
/// virtual CPU must be woken), while any other task on that CPU preempts
/// the poller at once, and is woken there without an interrupt to an idle
/// CPU. The price is a CPU kept busy, which other work still gets first.
/// Returns why the scheduling policy could not be set (the polling still
/// applies).
pub fn enter_poll_mode() -> std::io::Result<()> {
    use std::sync::atomic::Ordering;
    crate::elements::fromdevice::POLL_FOREVER.store(true, Ordering::Relaxed);
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: sched_setscheduler on the calling thread (pid 0) with a
    // valid sched_param; it reads the struct and changes nothing else.
    let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn run_with(
    text: &str,
    fname: &str,
    o: &Options,
    registry: &Registry,
    console: &Rc<StdConsole>,
) -> i32 {
    let err = |m: &str| console.error_line(m);
    let problems = o.problems();
    if !problems.is_empty() {
        for e in problems {
            err(&e);
        }
        return 1;
    }

    if o.poll && !o.quit {
        if let Err(e) = enter_poll_mode() {
            err(&format!("warning: --poll: {e}; polling at normal priority"));
        }
    }

    // parse (errors here are the lexer's: no "could not be initialized")
    let flat = match parse_for_driver(text, fname, o, registry) {
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
        exit_value = after_run(running.router(), o, console, before, exit_value);
        running.finish();
        return exit_value & 0xff;
    }

    // one thread
    let vclock = o.simtime.map(|start| {
        Rc::new(VirtualClock::new(
            // Click's default simulated start (userlevel/click.cc)
            start.unwrap_or(Timestamp::from_sec_nsec(1_000_000_000, 0)),
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
            call_guard: Some(crate::runloop::catch_handler_panic),
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
    exit_value = after_run(&router, o, console, before, exit_value);
    router.cleanup();
    drop(host);
    exit_value & 0xff
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
