//! `clickos vm run --vnic` and `clickos chain`: instances put in the path
//! of real traffic through the software switch (`clickos-switch`).

use crate::vmcmd::{self, default_isolation, parse_isolation, parse_size};
use clickos_instance::{HandlerError, Instance};
use clickos_switch::{Attach, Health, Stats, SwitchHandle, SwitchOptions};
use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

fn switch(name: &str) -> Result<SwitchHandle, String> {
    SwitchHandle::spawn(SwitchOptions {
        name: name.into(),
        on_event: Some(Arc::new(|e| eprintln!("clickos: {e}"))),
        ..SwitchOptions::default()
    })
}

/// A switch joining vNIC k of `inst` to `attach[k]`.
pub fn attach_one(inst: &Instance, attach: &[Attach]) -> Result<SwitchHandle, String> {
    let sw = switch("vm")?;
    clickos_switch::wire_instance(&sw, inst, &format!("i{}", inst.id()), attach)?;
    Ok(sw)
}

/// One line per port, on standard error.
pub fn format_stats(st: &Stats) -> String {
    let mut out = String::new();
    for p in &st.ports {
        let c = &p.counters;
        let mut drops: Vec<String> = clickos_switch::Drop::ALL
            .iter()
            .filter(|d| c.drops(**d) > 0)
            .map(|d| format!("{} {}", d.name(), c.drops(*d)))
            .collect();
        if drops.is_empty() {
            drops.push("none".into());
        }
        let health = match &p.health {
            Health::Up => String::new(),
            Health::Down(why) => format!(" [down: {why}]"),
        };
        out.push_str(&format!(
            "port {:<16} rx {} pkts {} B, tx {} pkts {} B, drops {}{}\n",
            p.name,
            c.rx_packets,
            c.rx_bytes,
            c.tx_packets,
            c.tx_bytes,
            drops.join(", "),
            health
        ));
    }
    out
}

/// Stops the switch and prints its counters on standard error.
pub fn report(sw: SwitchHandle) {
    match sw.stop() {
        Ok(st) => eprint!("{}", format_stats(&st)),
        Err(e) => eprintln!("clickos: {e}"),
    }
}

/// Ends a run whose attachments are all pcap files: once every replay
/// is done and the counters have not moved for 200 ms.
pub struct ReplayWatch {
    last: u64,
    since: std::time::Instant,
}

impl ReplayWatch {
    /// `Some` when every attachment is a pcap file.
    pub fn new(attach: &[Attach]) -> Option<ReplayWatch> {
        (!attach.is_empty() && attach.iter().all(|a| matches!(a, Attach::Pcap { .. }))).then(|| {
            ReplayWatch {
                last: u64::MAX,
                since: std::time::Instant::now(),
            }
        })
    }

    pub fn finished(&mut self, sw: &SwitchHandle) -> bool {
        let Ok(st) = sw.stats() else {
            return true;
        };
        let replaying = st
            .ports
            .iter()
            .any(|p| p.extra.iter().any(|(k, v)| k == "replay_left" && *v > 0));
        let moved: u64 = st
            .ports
            .iter()
            .map(|p| p.counters.rx_packets + p.counters.tx_packets + p.counters.total_drops())
            .sum();
        if replaying || moved != self.last {
            self.last = moved;
            self.since = std::time::Instant::now();
            return false;
        }
        self.since.elapsed() >= Duration::from_millis(200)
    }
}

pub fn chain_usage() -> &'static str {
    "Usage: clickos chain [OPTION]... CONFIG... --in ATTACH --out ATTACH

Boots one Click instance per CONFIG, each with two vNICs (0 faces the input,
1 the output), and chains them through the software switch:
ATTACH(in) <-> first.vNIC0, first.vNIC1 <-> second.vNIC0, ..., last.vNIC1 <->
ATTACH(out). Runs until Ctrl-C or until an instance's router stops (or, when both ends are
pcap files, until the replay is done and nothing moves for 200 ms), then prints
the -h handlers and the switch's per-port counters.

ATTACH is a Linux interface name, tap:NAME or pcap:IN[,OUT].

Options:
      --in ATTACH           What the first instance's vNIC 0 joins.
      --out ATTACH          What the last instance's vNIC 1 joins.
  -h, --handler [N:]ELEMENT.H
                            After stopping, print read handler H of ELEMENT
                            of instance N (1-based; default: every instance
                            that has it). May repeat.
  -i, --isolation LEVEL     vm (default where /dev/kvm works), process, none.
  -m, --memory SIZE         Memory per instance (default 8M).
      --ring-slots N        vNIC ring size in slots (default 256).
  -q, --quit                Stop right after everything is wired.
"
}

struct ChainArgs {
    configs: Vec<String>,
    input: Option<Attach>,
    output: Option<Attach>,
    handlers: Vec<String>,
    isolation: Option<clickos_instance::Isolation>,
    memory: Option<u64>,
    slots: u32,
    quit: bool,
}

fn parse_chain(args: &[String]) -> Result<ChainArgs, String> {
    let mut r = ChainArgs {
        configs: Vec::new(),
        input: None,
        output: None,
        handlers: Vec::new(),
        isolation: None,
        memory: None,
        slots: 256,
        quit: false,
    };
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let (opt, inline) = match a.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v.to_string())),
            _ => (a, None),
        };
        let mut val = || -> Result<String, String> {
            if let Some(v) = &inline {
                return Ok(v.clone());
            }
            i += 1;
            args.get(i)
                .cloned()
                .ok_or_else(|| format!("option '{opt}' requires an argument"))
        };
        match opt {
            "--in" => r.input = Some(val()?.parse()?),
            "--out" => r.output = Some(val()?.parse()?),
            "-h" | "--handler" => r.handlers.push(val()?),
            "-i" | "--isolation" => r.isolation = Some(parse_isolation(&val()?)?),
            "-m" | "--memory" => {
                let v = val()?;
                r.memory = Some(
                    parse_size(&v)
                        .filter(|&n| n >= 1 << 20)
                        .ok_or_else(|| format!("bad memory size '{v}' (e.g. 8M; at least 1M)"))?,
                );
            }
            "--ring-slots" => {
                let v = val()?;
                r.slots = v
                    .parse()
                    .ok()
                    .filter(|n: &u32| (64..=4096).contains(n) && n.is_power_of_two())
                    .ok_or_else(|| format!("bad ring size '{v}' (64 to 4096, a power of two)"))?;
            }
            "-q" | "--quit" => r.quit = true,
            "--help" => return Err(String::new()),
            _ if a.starts_with('-') && a.len() > 1 => return Err(format!("unknown option '{a}'")),
            _ => r.configs.push(a.to_string()),
        }
        i += 1;
    }
    if r.configs.is_empty() {
        return Err("no configuration given".into());
    }
    if r.input.is_none() || r.output.is_none() {
        return Err("a chain needs --in ATTACH and --out ATTACH".into());
    }
    Ok(r)
}

/// `clickos chain`.
pub fn chain_main(args: &[String]) -> i32 {
    let ca = match parse_chain(args) {
        Ok(c) => c,
        Err(e) if e.is_empty() => {
            print!("{}", chain_usage());
            return 0;
        }
        Err(e) => {
            eprintln!("clickos chain: {e}");
            eprintln!("Try 'clickos chain --help' for more information.");
            return 1;
        }
    };
    let isolation = ca.isolation.unwrap_or_else(default_isolation);
    let mut insts: Vec<(String, Instance)> = Vec::new();
    // SAFETY: installs a handler that only stores to an atomic.
    unsafe {
        libc::signal(
            libc::SIGINT,
            vmcmd::on_sigint as *const () as libc::sighandler_t,
        );
    }
    for (n, file) in ca.configs.iter().enumerate() {
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{file}: {e}");
                return 1;
            }
        };
        let flat = match click_lang::parse_config(&text, file, &[]) {
            Ok(f) => f,
            Err(errs) => {
                for e in errs {
                    eprintln!("{e}");
                }
                return 1;
            }
        };
        if let Err(e) = vmcmd::check_vnic_use(&flat, 2, &[]) {
            eprintln!("{e}");
            return 1;
        }
        let id = n as u32 + 1;
        let mut opts = vmcmd::base_options(isolation);
        opts.console = Some(vmcmd::stderr_console());
        opts.config_file = file.clone();
        if let Some(m) = ca.memory {
            opts.memory = m;
        }
        opts.vnics = vmcmd::vnic_specs(id, 2, ca.slots);
        match Instance::create(id, &text, &opts) {
            Ok(i) => insts.push((instance_name(file, id), i)),
            Err(e) => {
                eprintln!("{file}: {e}");
                return 1;
            }
        }
    }
    let sw = match switch("chain") {
        Ok(s) => s,
        Err(e) => {
            eprintln!("clickos chain: {e}");
            return 1;
        }
    };
    let members: Vec<(&str, &Instance)> = insts.iter().map(|(n, i)| (n.as_str(), i)).collect();
    let (input, output) = (ca.input.as_ref().unwrap(), ca.output.as_ref().unwrap());
    if let Err(e) = clickos_switch::wire_chain(&sw, &members, input, output) {
        eprintln!("clickos chain: {e}");
        return 1;
    }
    let mut status = 0;
    let mut replay = ReplayWatch::new(&[input.clone(), output.clone()]);
    if !ca.quit {
        'run: loop {
            if vmcmd::INTERRUPTED.load(Ordering::Relaxed) {
                break;
            }
            if replay.as_mut().is_some_and(|w| w.finished(&sw)) {
                break;
            }
            for (name, i) in &insts {
                match i.wait_stopped(Duration::from_millis(20)) {
                    Ok(()) => break 'run,
                    Err(HandlerError::Timeout(_)) => {}
                    Err(e) => {
                        eprintln!("clickos chain: {name} (instance {}): {e}", i.id());
                        status = 1;
                        break 'run;
                    }
                }
            }
        }
    }
    report(sw);
    for spec in &ca.handlers {
        let (which, h) = match spec.split_once(':') {
            Some((n, h)) if n.parse::<usize>().is_ok() => (n.parse::<usize>().ok(), h),
            _ => (None, spec.as_str()),
        };
        let mut found = false;
        for (k, (name, i)) in insts.iter().enumerate() {
            if which.is_some_and(|w| w != k + 1) {
                continue;
            }
            let (out, errs) = vmcmd::read_handlers(i, &[h.to_string()]);
            if errs.is_empty() {
                found = true;
                print!("{}:{name}:{h}: {out}", k + 1);
                if !out.ends_with('\n') {
                    println!();
                }
            } else if which.is_some() {
                for e in errs {
                    eprintln!("{}:{name}: {e}", k + 1);
                }
                status = 1;
                found = true;
            }
        }
        if !found {
            eprintln!("no instance has a '{h}' handler");
            status = 1;
        }
    }
    let _ = std::io::stdout().flush();
    status
}

fn instance_name(file: &str, id: u32) -> String {
    let stem = std::path::Path::new(file)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("instance");
    format!("{stem}#{id}")
}
