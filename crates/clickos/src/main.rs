//! `clickos`: the one binary, a command line over the library crates.
//!
//! * `clickos run [ARGS]` behaves as Click's `click` command; so does the
//!   binary when invoked under the name `click` (e.g. through a symlink).
//!   The driver itself is `clickos-userlevel`.
//! * `clickos elements [NAME | --markdown]` prints the element reference.
//! * `clickos vm ...` runs and benchmarks instances (`clickos-instance`).

mod ctlcmd;
mod datapath;
mod runcmd;
mod swbench;
mod vmbench;
mod vmcmd;

use std::io::Write;

fn top_usage() -> &'static str {
    "Usage: clickos run [CLICK OPTIONS] [ROUTERFILE] [NAME=VALUE]...
       clickos elements [CLASS | --markdown]
       clickos vm run [OPTIONS] CONFIG [NAME=VALUE]...
       clickos vm bench [OPTIONS]
       clickos chain [OPTIONS] CONFIG... --in ATTACH --out ATTACH
       clickos switch bench [OPTIONS]
       clickos daemon [--state DIR] [--socket PATH] [--listen ADDR:PORT] [--tokens FILE]
       clickos create|list|show|install|read|write|handlers|console|stop|start|
               destroy|top|events|completions ...
       clickos --help | --version

Commands:
  run        Run a Click configuration, exactly like Click's 'click' driver
             ('clickos run --help' lists its options). Invoking this binary
             as 'click' (a symlink) is the same as 'clickos run'.
  vm run     Boot one Click instance (a KVM micro-VM by default) with CONFIG,
             run it until its router stops, print -h handlers, destroy it.
  vm bench   Boot time, density, handler latency and in-instance speed.
  chain      Boot one instance per CONFIG and chain them through the software
             switch between two interfaces (or tap devices, or pcap files).
  switch bench
             The data plane: the switch alone against memcpy, one instance's
             vNIC by ring size, chains of 1-9 instances, 1-100 instances into
             one switch (speed and fairness).
  daemon     Run the control plane: a fleet of instances kept across restarts,
             an HTTP/JSON API on a UNIX socket ('clickos daemon --help').
  create ... The fleet verbs, talking to the daemon ('clickos list --help'
             lists them with their exit codes).
  elements   List the element classes with their summaries; with CLASS, print
             that class's reference; with --markdown, the whole reference.
"
}

/// The classes this binary knows: the engine's, the userlevel driver's,
/// and the vNIC elements, documented here too though they initialise
/// only inside an instance. The instance's `FromDevice`/`ToDevice`
/// (ClickOS's names for its vNIC elements) are documented as variants
/// "inside an instance": here those names stay the user level's.
fn registry() -> click::registry::Registry {
    let mut r = clickos_userlevel::elements::registry();
    clickos_guest::vnic::register_documented(&mut r);
    r
}

fn elements_cmd(args: &[String]) -> i32 {
    let reg = registry();
    let mut out = std::io::stdout().lock();
    match args.first().map(|s| s.as_str()) {
        None => {
            let all = reg.documented();
            let width = all.iter().map(|(t, _)| t.len()).max().unwrap_or(0);
            for (title, s) in &all {
                let _ = writeln!(out, "{title:width$}  {}", s.summary);
            }
            0
        }
        Some("--markdown") => {
            let _ = out.write_all(reg.reference_markdown().as_bytes());
            0
        }
        Some("--help") | Some("-h") => {
            let _ = out.write_all(top_usage().as_bytes());
            0
        }
        Some(name) if reg.get(name).is_some() || !reg.variants_of(name).is_empty() => {
            let mut text = String::new();
            if let Some(spec) = reg.get(name) {
                text.push_str(&click::registry::element_text(spec));
            }
            for (host, spec) in reg.variants_of(name) {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&format!("{name} ({host}):\n\n"));
                text.push_str(&click::registry::element_text(spec));
            }
            let _ = out.write_all(text.as_bytes());
            0
        }
        Some(name) => {
            let lower = name.to_ascii_lowercase();
            let near: Vec<&str> = reg
                .iter()
                .filter(|s| s.name.to_ascii_lowercase().contains(&lower))
                .map(|s| s.name)
                .collect();
            let mut msg = format!("clickos elements: no element class '{name}'");
            if !near.is_empty() {
                msg.push_str(&format!(" (did you mean: {}?)", near.join(", ")));
            }
            eprintln!("{msg}");
            1
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let argv0 = args.first().cloned().unwrap_or_default();
    let base = std::path::Path::new(&argv0)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let code = if base == "click" {
        runcmd::main("click", &args[1..], &registry())
    } else {
        match args.get(1).map(|s| s.as_str()) {
            Some("__instance") => clickos_instance::process::child_main(&args[2..]),
            Some("run") => runcmd::main("clickos run", &args[2..], &registry()),
            Some("elements") => elements_cmd(&args[2..]),
            Some("vm") => vmcmd::main(&args[2..]),
            Some("chain") => datapath::chain_main(&args[2..]),
            Some("switch") => match args.get(2).map(|s| s.as_str()) {
                Some("bench") => swbench::bench(&args[3..]),
                Some("--help") | Some("-h") => {
                    print!("{}", swbench::usage());
                    0
                }
                _ => {
                    eprintln!("clickos switch: expected 'bench'");
                    eprint!("{}", swbench::usage());
                    1
                }
            },
            Some("daemon") => ctlcmd::daemon_main(&args[2..]),
            Some(v) if ctlcmd::VERBS.contains(&v) || v == "fault" => ctlcmd::main(v, &args[2..]),
            Some("--help") | Some("-h") | Some("help") => {
                print!("{}", top_usage());
                0
            }
            Some("--version") | Some("-v") => {
                println!("clickos {}", click::router::VERSION);
                0
            }
            Some(g) if g.starts_with("--") && ctlcmd::split_global(&args[1..]).is_some() => {
                let (verb, rest) = ctlcmd::split_global(&args[1..]).unwrap_or_default();
                ctlcmd::main(&verb, &rest)
            }
            Some(other) => {
                eprintln!("clickos: unknown command '{other}'");
                eprint!("{}", top_usage());
                1
            }
            None => {
                eprint!("{}", top_usage());
                1
            }
        }
    };
    let _ = std::io::stdout().flush();
    std::process::exit(code);
}
