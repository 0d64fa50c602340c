//! `clickos vm run` and `clickos vm bench`: one Click instance in the
//! foreground, and the micro-VM benchmarks.

use clickos_instance::{HandlerError, Instance, InstanceOptions, Isolation};
use clickos_userlevel::handlers::glob_match;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub fn usage() -> &'static str {
    "Usage: clickos vm run [OPTION]... CONFIG [NAME=VALUE]...
       clickos vm bench [--isolation LEVEL] [--runs N] [--instances N] [--quick]
                        [--only boot,density,handlers,speed]

'vm run' boots one Click instance with the configuration CONFIG, runs it in the
foreground until its router stops (or Ctrl-C), then prints the read handlers
named with -h and destroys the instance.

Options for 'vm run':
  -e, --expression EXPR     Use EXPR as the configuration instead of a file.
  -h, --handler ELEMENT.H   After the router stops, print read handler H of
                            ELEMENT (Click's syntax; may repeat).
  -m, --memory SIZE         Guest memory (vm) or memory limit (process), e.g.
                            8M, 64MiB (default 8M).
  -i, --isolation LEVEL     vm (KVM micro-VM; default where /dev/kvm works),
                            process (confined child process; the default
                            otherwise) or none (a thread; no isolation).
      --vnics N             Give the instance N vNICs (default 0, or one per
                            --vnic).
      --vnic ATTACH         Give the instance its next vNIC (0, 1, ...) and join
                            it to ATTACH through the software switch: a Linux
                            interface name, tap:NAME (a tap device, created if
                            missing) or pcap:IN[,OUT] (replay IN into the vNIC,
                            capture what it sends to OUT). May repeat.
      --ring-slots N        vNIC ring size in slots (64 to 4096, power of two;
                            default 256).

With --vnic, 'vm run' prints the switch's per-port counters on standard error
when it stops. When every --vnic is a pcap file, it stops by itself once the
replays are done and nothing has moved for 200 ms.
  -t, --time                Print the boot phases and run time.
  -q, --quit                Stop right after booting (after the first task ran).

'vm bench' measures boot time, density (1000 idle instances: time to start,
memory per instance, CPU while idle), handler latency on busy and idle
instances, and the in-instance speed of bench/firewall.click against the same
configuration run directly (as 'clickos run' does), and prints a table.
"
}

/// Parses sizes like `8M`, `64MiB`, `1G`, `4096`.
pub fn parse_size(s: &str) -> Option<u64> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().ok()?;
    let mul = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(mul)
}

pub fn parse_isolation(s: &str) -> Result<Isolation, String> {
    s.parse()
}

pub fn level_name(l: Isolation) -> &'static str {
    l.name()
}

/// The default level for this host, with a notice when KVM is missing.
pub fn default_isolation() -> Isolation {
    let (level, notice) = Isolation::default_for_host();
    if let Some(n) = notice {
        eprintln!("clickos: {n}");
    }
    level
}

pub(crate) fn base_options(isolation: Isolation) -> InstanceOptions {
    InstanceOptions {
        isolation,
        helper_exe: std::env::current_exe().ok(),
        ..Default::default()
    }
}

struct RunArgs {
    file: Option<String>,
    expr: Option<String>,
    handlers: Vec<String>,
    memory: Option<u64>,
    isolation: Option<Isolation>,
    vnics: u32,
    attach: Vec<clickos_switch::Attach>,
    slots: u32,
    time: bool,
    quit: bool,
    defines: Vec<(String, String)>,
}

fn parse_run_args(args: &[String]) -> Result<RunArgs, String> {
    let mut r = RunArgs {
        file: None,
        expr: None,
        handlers: Vec::new(),
        memory: None,
        isolation: None,
        vnics: 0,
        attach: Vec::new(),
        slots: 256,
        time: false,
        quit: false,
        defines: Vec::new(),
    };
    let mut i = 0;
    let need = |i: &mut usize, opt: &str| -> Result<String, String> {
        *i += 1;
        args.get(*i)
            .cloned()
            .ok_or_else(|| format!("option '{opt}' requires an argument"))
    };
    while i < args.len() {
        let a = args[i].as_str();
        let (opt, inline) = match a.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v.to_string())),
            _ => (a, None),
        };
        let val = |i: &mut usize| -> Result<String, String> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => need(i, opt),
            }
        };
        match opt {
            "-e" | "--expression" => r.expr = Some(val(&mut i)?),
            "-f" | "--file" => r.file = Some(val(&mut i)?),
            "-h" | "--handler" => r.handlers.push(val(&mut i)?),
            "-m" | "--memory" => {
                let v = val(&mut i)?;
                r.memory = Some(
                    parse_size(&v)
                        .filter(|&n| n >= 1 << 20)
                        .ok_or_else(|| format!("bad memory size '{v}' (e.g. 8M; at least 1M)"))?,
                );
            }
            "-i" | "--isolation" => r.isolation = Some(parse_isolation(&val(&mut i)?)?),
            "--vnics" => {
                let v = val(&mut i)?;
                r.vnics = v
                    .parse()
                    .ok()
                    .filter(|&n: &u32| n as usize <= clickos_ring::layout::MAX_VNICS)
                    .ok_or_else(|| {
                        format!(
                            "bad vNIC count '{v}' (0 to {})",
                            clickos_ring::layout::MAX_VNICS
                        )
                    })?;
            }
            "--vnic" => r.attach.push(val(&mut i)?.parse()?),
            "--ring-slots" => {
                let v = val(&mut i)?;
                r.slots = v
                    .parse()
                    .ok()
                    .filter(|n: &u32| (64..=4096).contains(n) && n.is_power_of_two())
                    .ok_or_else(|| format!("bad ring size '{v}' (64 to 4096, a power of two)"))?;
            }
            "-t" | "--time" => r.time = true,
            "-q" | "--quit" => r.quit = true,
            "--help" => return Err(String::new()),
            _ if a.starts_with('-') && a.len() > 1 => return Err(format!("unknown option '{a}'")),
            _ => {
                if let Some((k, v)) = a.split_once('=') {
                    if !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                        r.defines.push((k.to_string(), v.to_string()));
                        i += 1;
                        continue;
                    }
                }
                if r.file.is_some() {
                    return Err(format!("more than one configuration given ('{a}')"));
                }
                r.file = Some(a.to_string());
            }
        }
        i += 1;
    }
    if r.file.is_none() && r.expr.is_none() {
        return Err("no configuration given".into());
    }
    if !r.attach.is_empty() {
        if r.vnics != 0 && r.vnics as usize != r.attach.len() {
            return Err(format!(
                "--vnics {} disagrees with the {} --vnic given",
                r.vnics,
                r.attach.len()
            ));
        }
        if r.attach.len() > clickos_ring::layout::MAX_VNICS {
            return Err(format!(
                "{} --vnic given; an instance has at most {}",
                r.attach.len(),
                clickos_ring::layout::MAX_VNICS
            ));
        }
        r.vnics = r.attach.len() as u32;
    }
    Ok(r)
}

pub(crate) static INTERRUPTED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

pub(crate) extern "C" fn on_sigint(_: libc::c_int) {
    INTERRUPTED.store(true, std::sync::atomic::Ordering::Relaxed);
}

pub(crate) fn stderr_console() -> clickos_instance::backend::ConsoleSink {
    Arc::new(|_id: u32, text: &str| {
        let mut e = std::io::stderr().lock();
        let _ = e.write_all(text.trim_end_matches('\n').as_bytes());
        let _ = e.write_all(b"\n");
    })
}

/// `clickos vm run`.
pub fn run(args: &[String]) -> i32 {
    let ra = match parse_run_args(args) {
        Ok(r) => r,
        Err(e) if e.is_empty() => {
            print!("{}", usage());
            return 0;
        }
        Err(e) => {
            eprintln!("clickos vm run: {e}");
            eprintln!("Try 'clickos vm run --help' for more information.");
            return 1;
        }
    };
    let (file, text) = match (&ra.expr, &ra.file) {
        (Some(e), _) => ("config".to_string(), e.clone()),
        (None, Some(f)) => match std::fs::read_to_string(f) {
            Ok(t) => (f.clone(), t),
            Err(e) => {
                eprintln!("{f}: {e}");
                return 1;
            }
        },
        (None, None) => unreachable!("checked by parse_run_args"),
    };
    // Check the syntax here, where the file name is known, and expand
    // NAME=VALUE definitions; the instance gets the flat configuration.
    let flat = match click_lang::parse_config(&text, &file, &ra.defines) {
        Ok(f) => f,
        Err(errs) => {
            for e in errs {
                eprintln!("{e}");
            }
            return 1;
        }
    };
    let config = if ra.defines.is_empty() {
        text
    } else {
        click_lang::unparse(&flat)
    };
    if let Err(e) = check_vnic_use(&flat, ra.vnics as usize, &ra.attach) {
        eprintln!("{e}");
        return 1;
    }
    let isolation = ra.isolation.unwrap_or_else(default_isolation);
    let mut opts = base_options(isolation);
    opts.console = Some(stderr_console());
    opts.config_file = file.clone();
    if let Some(m) = ra.memory {
        opts.memory = m;
    }
    opts.vnics = vnic_specs(1, ra.vnics as usize, ra.slots);
    // SAFETY: installs a handler that only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t);
    }
    let t0 = Instant::now();
    let inst = match Instance::create(1, &config, &opts) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("{e}");
            return 1;
        }
    };
    let booted = t0.elapsed();
    let mut status = 0;
    let sw = if ra.attach.is_empty() {
        None
    } else {
        match crate::datapath::attach_one(&inst, &ra.attach) {
            Ok(sw) => Some(sw),
            Err(e) => {
                eprintln!("clickos vm run: {e}");
                return 1;
            }
        }
    };
    let mut replay = crate::datapath::ReplayWatch::new(&ra.attach);
    if !ra.quit {
        loop {
            if INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
                break;
            }
            if let (Some(w), Some(sw)) = (replay.as_mut(), sw.as_ref()) {
                if w.finished(sw) {
                    break;
                }
            }
            match inst.wait_stopped(Duration::from_millis(100)) {
                Ok(()) => break,
                Err(HandlerError::Timeout(_)) => {}
                Err(e) => {
                    eprintln!("clickos: instance {}: {e}", inst.id());
                    status = 1;
                    break;
                }
            }
        }
    }
    let ran = t0.elapsed() - booted;
    if let Some(sw) = sw {
        crate::datapath::report(sw);
    }
    if status == 0 {
        let (out, errs) = read_handlers(&inst, &ra.handlers);
        print!("{out}");
        for e in &errs {
            eprintln!("{e}");
        }
        if !errs.is_empty() {
            status = 1;
        }
    }
    if ra.time {
        eprintln!("isolation: {}", level_name(isolation));
        for (name, d) in inst.phases() {
            eprintln!("  {name:<24} {:>9.3} ms", d.as_secs_f64() * 1e3);
        }
        eprintln!(
            "boot (create → installed, first task run): {:.3} ms",
            booted.as_secs_f64() * 1e3
        );
        eprintln!("run: {:.3} s", ran.as_secs_f64());
    }
    let _ = std::io::stdout().flush();
    drop(inst);
    status
}

/// vNIC geometry for instance `id`: `n` vNICs of `slots` 2 KiB slots,
/// MACs 52:54:00:12:ID:K.
pub fn vnic_specs(id: u32, n: usize, slots: u32) -> Vec<clickos_instance::VnicSpec> {
    (0..n)
        .map(|k| clickos_instance::VnicSpec {
            slots,
            buf_size: 2048,
            mac: [0x52, 0x54, 0, 0x12, id as u8, k as u8],
        })
        .collect()
}

/// The vNIC elements, whose first argument is a vNIC number.
const VNIC_CLASSES: &[&str] = &[
    "FromDevice",
    "ToDevice",
    "FromVNIC",
    "ToVNIC",
    "FromNetFront",
    "ToNetFront",
];

/// Checks, before booting, that the configuration uses only vNICs the
/// instance will have, and warns about attached vNICs it never uses.
pub fn check_vnic_use(
    flat: &click_lang::FlatConfig,
    count: usize,
    attach: &[clickos_switch::Attach],
) -> Result<(), String> {
    let mut used = vec![false; count];
    for e in &flat.elements {
        if !VNIC_CLASSES.contains(&e.class.as_str()) {
            continue;
        }
        let args = click_lang::split_args(&e.config);
        let first = args.first().map(|a| a.trim()).unwrap_or("");
        let Ok(k) = first.parse::<usize>() else {
            continue;
        };
        if k >= count {
            let have = if attach.is_empty() {
                format!("{count} vNIC{}", if count == 1 { "" } else { "s" })
            } else {
                let list: Vec<String> = attach
                    .iter()
                    .enumerate()
                    .map(|(i, a)| format!("{i}={a}"))
                    .collect();
                format!(
                    "{count} vNIC{} ({})",
                    if count == 1 { "" } else { "s" },
                    list.join(", ")
                )
            };
            return Err(format!(
                "{}:{}: {} uses vNIC {k}, but the instance has {have}; give one --vnic per vNIC",
                e.landmark.file, e.landmark.line, e.class
            ));
        }
        used[k] = true;
    }
    for (k, a) in attach.iter().enumerate() {
        if !used[k] {
            eprintln!(
                "clickos: warning: vNIC {k} ({a}) is attached but the configuration never uses it"
            );
        }
    }
    Ok(())
}

/// Click's `-h` semantics: exact names, class names and glob patterns
/// before the dot; the name is printed when several handlers are read.
pub(crate) fn read_handlers(inst: &Instance, specs: &[String]) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut errs = Vec::new();
    let elements: Vec<String> = inst.list().unwrap_or_default();
    let print_names = specs.len() > 1;
    let one = |full: &str, named: bool, out: &mut String, errs: &mut Vec<String>| match inst
        .read(full)
    {
        Ok(mut v) => {
            if named {
                out.push_str(full);
                out.push_str(":\n");
            }
            if !v.is_empty() && !v.ends_with('\n') {
                v.push('\n');
            }
            out.push_str(&v);
            if named {
                out.push('\n');
            }
        }
        // Click's wording for the common cases.
        Err(HandlerError::NoSuchElement(_)) | Err(HandlerError::NoSuchHandler(_)) => {
            errs.push(format!("no '{full}' handler"))
        }
        Err(HandlerError::PermissionDenied(_)) => errs.push(format!("'{full}' is a write handler")),
        Err(e) => errs.push(format!("{full}: {e}")),
    };
    for spec in specs {
        let Some(dot) = spec.rfind('.') else {
            one(spec, print_names, &mut out, &mut errs);
            continue;
        };
        let (ename, hname) = (&spec[..dot], &spec[dot + 1..]);
        if elements.iter().any(|n| n == ename) || elements.is_empty() {
            one(spec, print_names, &mut out, &mut errs);
            continue;
        }
        let is_pattern = ename.contains(['?', '*', '[']);
        let matched: Vec<&String> = elements
            .iter()
            .filter(|n| {
                if is_pattern {
                    glob_match(n, ename)
                } else {
                    inst.read(&format!("{n}.class"))
                        .is_ok_and(|c| c.trim() == ename)
                }
            })
            .collect();
        if matched.is_empty() {
            errs.push(format!("no element matching '{ename}'"));
        }
        for n in matched {
            one(&format!("{n}.{hname}"), true, &mut out, &mut errs);
        }
    }
    (out, errs)
}

/// `clickos vm …`
pub fn main(args: &[String]) -> i32 {
    match args.first().map(|s| s.as_str()) {
        Some("run") => run(&args[1..]),
        Some("bench") => crate::vmbench::bench(&args[1..]),
        Some("--help") | Some("-h") | Some("help") | None => {
            print!("{}", usage());
            i32::from(args.is_empty())
        }
        Some(other) => {
            eprintln!("clickos vm: unknown command '{other}' (run, bench)");
            1
        }
    }
}
