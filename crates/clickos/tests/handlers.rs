//! Every element class of the driver's registry, as `clickos elements
//! --markdown` documents it: each is instantiated in a small valid
//! configuration, every handler its documentation lists as readable is
//! read through `clickos run -h`, and each read must succeed. The other
//! way round, every handler the element answers must be documented: the
//! `handlers` handler lists only documented (or generic) names, and reading
//! any handler name that some class documents but this class does not gets
//! "no such handler".
//!
//! A few classes can only be instantiated with a device, a file or inside
//! an instance; [`ARGS`] gives each class's arguments and [`NOT_HERE`] the
//! classes that cannot run in this test, with the reason.

mod common;
use common::*;

use std::collections::{BTreeMap, BTreeSet};

/// Configuration arguments for classes that need them. `{data}` is the
/// repository's `tests/data`, `{tmp}` a directory of this test's own.
const ARGS: &[(&str, &str)] = &[
    ("Align", "4, 0"),
    ("ICMPIPEncap", "10.0.0.1, 10.0.0.2, unreachable, host"),
    ("LinkUnqueue", "1ms, 1Gbps"),
    ("IPRateMonitor", "PACKETS, 1, 100"),
    ("Message", "\"hello from Message\""),
    ("ARPQuerier", "10.0.0.1, 00:01:02:03:04:05"),
    ("ARPResponder", "10.0.0.1 00:01:02:03:04:05"),
    ("AddressInfo", "me 10.0.0.1 00:01:02:03:04:05"),
    ("BandwidthMeter", "1000"),
    ("BandwidthRatedSplitter", "1000"),
    ("BandwidthRatedUnqueue", "1000"),
    ("BandwidthShaper", "1000"),
    ("CheckPaint", "1"),
    ("Burster", "0.1"),
    ("CheckARPHeader", "DETAILS true"),
    ("CheckICMPHeader", "DETAILS true"),
    ("CheckIPHeader", "DETAILS true"),
    ("CheckIPHeader2", "DETAILS true"),
    ("CheckLength", "100"),
    ("CheckTCPHeader", "DETAILS true"),
    ("CheckUDPHeader", "DETAILS true"),
    ("RED", "5, 50, 0.02"),
    ("RandomSample", "0.5"),
    ("RatedUnqueue", "1000"),
    ("SetVLANAnno", "1"),
    ("SetVlanAnno", "1"),
    ("Classifier", "12/0800, -"),
    ("ControlSocket", "TCP, 0, LOCALHOST true"),
    ("DelayShaper", "0.1"),
    ("DelayUnqueue", "0.1"),
    ("DirectIPLookup", "10.0.0.0/8 0, 0/0 0"),
    ("EtherEncap", "0x0800, 00:01:02:03:04:05, 00:01:02:03:04:06"),
    ("EtherRewrite", "00:01:02:03:04:05, 00:01:02:03:04:06"),
    (
        "EtherVLANEncap",
        "0x0800, 00:01:02:03:04:05, 00:01:02:03:04:06, 1",
    ),
    (
        "EtherVlanEncap",
        "0x0800, 00:01:02:03:04:05, 00:01:02:03:04:06, 1",
    ),
    ("FixIPSrc", "10.0.0.1"),
    ("FromDump", "{data}/mixed.pcap, STOP true"),
    ("AggregateIP", "ip src"),
    ("CGNATMapper", "POOL 198.51.100.0/30"),
    ("FromIPSummaryDump", "{tmp}/in.ipsum, STOP true"),
    ("GetIPAddress", "16"),
    ("HashSwitch", "0, 1"),
    ("HostEtherFilter", "00:01:02:03:04:05"),
    ("ICMPError", "10.0.0.1, timeexceeded"),
    ("ICMPPingEncap", "10.0.0.1, 10.0.0.2"),
    ("IPClassifier", "tcp, -"),
    ("IPEncap", "4, 10.0.0.1, 10.0.0.2"),
    ("IPFilter", "allow tcp, deny all"),
    ("IPFragmenter", "1500"),
    ("IPAddrPairRewriter", "drop"),
    ("IPAddrRewriter", "drop"),
    ("IPGWOptions", "10.0.0.1"),
    ("IPInputCombo", "1"),
    ("IPOutputCombo", "1, 10.0.0.1, 1500"),
    ("IPRewriter", "drop"),
    ("ICMPPingRewriter", "drop"),
    ("LinearIPLookup", "10.0.0.0/8 0, 0/0 0"),
    ("Meter", "1000"),
    (
        "PPPoEServer",
        "ETH 00:01:02:03:04:05, LOCAL 10.0.0.1, POOL 10.0.0.0/24",
    ),
    ("Paint", "1"),
    ("PaintSwitch", ""),
    ("PaintTee", "1"),
    ("RadixIPLookup", "10.0.0.0/8 0, 0/0 0"),
    ("RangeIPLookup", "10.0.0.0/8 0, 0/0 0"),
    ("RatedSplitter", "1000"),
    (
        "RoundRobinIPMapper",
        "- - 10.0.0.1 - 0 0, - - 10.0.0.2 - 0 0",
    ),
    ("Socket", "UDP, 127.0.0.1, 9"),
    ("McastSocket", "233.252.0.99, 45999, 127.0.0.1"),
    (
        "SourceIPHashMapper",
        "32 1, - - 10.0.0.1 - 0 0 1, - - 10.0.0.2 - 0 0 2",
    ),
    ("SetIPAddress", "10.0.0.1"),
    ("SetIPDSCP", "1"),
    ("SetPacketType", "HOST"),
    ("Shaper", "1000"),
    ("StaticIPLookup", "10.0.0.0/8 0, 0/0 0"),
    ("StaticSwitch", "0"),
    ("StaticThreadSched", "x 0"),
    ("StoreData", "0, \\<00>"),
    ("StoreEtherAddress", "00:01:02:03:04:05, src"),
    ("StoreIPAddress", "10.0.0.1, src"),
    ("StrideSched", "1"),
    ("StrideSwitch", "1"),
    ("Strip", "14"),
    ("TCPRewriter", "drop"),
    ("TimedSink", "0.1"),
    ("TimedSource", "0.1, LIMIT 2"),
    ("TimedUnqueue", "0.1"),
    ("ToDump", "{tmp}/out.pcap"),
    ("ToIPSummaryDump", "{tmp}/out.ipsum"),
    ("Truncate", "60"),
    ("UDPIPEncap", "10.0.0.1, 1234, 10.0.0.2, 5678"),
    ("UDPRewriter", "drop"),
    ("Unstrip", "14"),
    ("VLANEncap", "1"),
];

/// Port counts for classes whose outputs follow their arguments.
const PORTS: &[(&str, &str)] = &[
    ("Classifier", "1/2"),
    ("IPClassifier", "1/2"),
    ("IPFilter", "1/1"),
    ("DirectIPLookup", "1/1"),
    ("LinearIPLookup", "1/1"),
    ("RadixIPLookup", "1/1"),
    ("RangeIPLookup", "1/1"),
    ("StaticIPLookup", "1/1"),
    ("StaticSwitch", "1/1"),
    ("InputSwitch", "1/1"),
];

/// What classes print on standard error by design when they initialize
/// (a line containing this is not a failure).
const SAYS: &[(&str, &str)] = &[
    ("Message", "hello from Message"),
    ("TokenBucketTest", "All tests pass!"),
    ("QueueYankTest", "All tests pass!"),
    ("ConfParseTest", "All tests pass!"),
    ("TimerTest", "TimerTest"),
];

/// Handlers that exist only in another configuration of the class:
/// (class, that configuration's arguments, its handlers).
const OTHER_CONFIG: &[(&str, &str, &[&str])] =
    &[("ControlSocket", "UNIX, {tmp}/control", &["filename"])];

/// Read handlers that take a parameter, read through a Script:
/// (class, handler, parameter).
const WITH_PARAM: &[(&str, &str, &str)] = &[
    ("ARPResponder", "lookup", "10.0.0.1"),
    ("DirectIPLookup", "lookup", "10.0.0.1"),
    ("LinearIPLookup", "lookup", "10.0.0.1"),
    ("RadixIPLookup", "lookup", "10.0.0.1"),
    ("IPRewriter", "tcp_lookup", "10.0.0.1 1 10.0.0.2 2"),
    ("TCPRewriter", "lookup", "10.0.0.1 1 10.0.0.2 2"),
    ("RangeIPLookup", "lookup", "10.0.0.1"),
    ("StaticIPLookup", "lookup", "10.0.0.1"),
];

/// Handlers described in prose rather than a handler list: (class, how
/// the prose names them, the class whose reference holds the prose). A
/// handler name must appear there as this prefix followed by the name
/// (`tickets0`: `tickets0` or a family `tickets0` ... `ticketsN-1`).
const IN_PROSE: &[(&str, &str, &str)] = &[
    // Script's expression handlers: `$(add ...)`, `$(length ...)`, ...
    ("Script", "$(", "Script"),
    // "A Script of type DRIVER"
    ("DriverManager", "$(", "Script"),
    // `tickets0` ... `ticketsN-1`, one per input
    ("StrideSched", "`", "StrideSched"),
    ("StrideSwitch", "`", "StrideSwitch"),
];

/// Whole configurations for classes that need neighbours; `x` is the
/// element under test.
const CONFIGS: &[(&str, &str)] = &[
    ("RED", "x :: RED(5, 50, 0.02); Idle -> x -> Queue -> Idle;"),
    (
        "ICMPRewriter",
        "rw :: IPRewriter(drop); Idle -> rw -> Idle; x :: ICMPRewriter(rw); Idle -> x -> Idle;",
    ),
    (
        "QueueYankTest",
        "Idle -> q :: Queue(6) -> Idle; x :: QueueYankTest(q);",
    ),
    (
        "FTPPortMapper",
        "rw :: TCPRewriter(drop); Idle -> x :: FTPPortMapper(rw, rw, 0) -> rw -> Idle;",
    ),
];

/// Classes this test cannot instantiate, and why.
const NOT_HERE: &[(&str, &str)] = &[
    (
        "FromVNIC",
        "a vNIC exists only inside an instance (tested in instances.rs and vm_cli.rs)",
    ),
    (
        "ToVNIC",
        "a vNIC exists only inside an instance (tested in instances.rs and vm_cli.rs)",
    ),
    // ClickOS's names for FromVNIC/ToVNIC (tested in instances.rs, clickos_*)
    (
        "FromDevice (inside an instance)",
        "a vNIC exists only inside an instance (tested in instances.rs)",
    ),
    (
        "ToDevice (inside an instance)",
        "a vNIC exists only inside an instance (tested in instances.rs)",
    ),
    (
        "FromNetFront",
        "a vNIC exists only inside an instance (tested in instances.rs)",
    ),
    (
        "ToNetFront",
        "a vNIC exists only inside an instance (tested in instances.rs)",
    ),
];

/// Classes that need a network device: run in a network namespace of
/// their own (`unshare -n`), which needs root.
const NEEDS_NETNS: &[(&str, &str)] = &[
    ("FromDevice", "lo, METHOD PACKET"),
    ("ToDevice", "lo, METHOD PACKET"),
    ("KernelTun", "10.99.0.1/24"),
    ("KernelTap", "10.99.0.1/24"),
];

/// Handlers every element has, documented once for all (Click's).
const GENERIC: &[&str] = &[
    "name",
    "class",
    "config",
    "ports",
    "handlers",
    "scheduled",
    "home_thread",
];

#[derive(Debug, Default)]
struct Class {
    ports: String,
    /// (name, readable)
    handlers: Vec<(String, bool)>,
}

/// The classes of `clickos elements --markdown`, with their port counts and
/// documented handlers.
fn documented_classes() -> BTreeMap<String, Class> {
    let r = run_in(None, bin(), &["elements", "--markdown"]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    let mut out: BTreeMap<String, Class> = BTreeMap::new();
    let mut cur: Option<String> = None;
    let mut in_handlers = false;
    for line in r.out.lines() {
        if let Some(name) = line.strip_prefix("## ") {
            cur = Some(name.trim().to_string());
            in_handlers = false;
            out.insert(name.trim().to_string(), Class::default());
            continue;
        }
        let Some(c) = cur.as_ref().and_then(|n| out.get_mut(n)) else {
            continue;
        };
        if line.starts_with("- **Ports:**") {
            let s = line.rfind("(`").expect("port count");
            c.ports = line[s + 2..line.len() - 2].to_string();
        } else if line == "**Handlers**" {
            in_handlers = true;
        } else if in_handlers && line.starts_with("- `") {
            let rest = &line[3..];
            let end = rest.find('`').unwrap();
            let name = rest[..end].to_string();
            let mode = &rest[end + 1..];
            let readable = mode.starts_with(" (read-only)") || mode.starts_with(" (read/write)");
            assert!(
                readable || mode.starts_with(" (write-only)"),
                "unparsed handler line {line:?}"
            );
            c.handlers.push((name, readable));
        }
    }
    out
}

/// The smallest port counts a port-count string allows: (inputs, outputs).
fn min_ports(spec: &str) -> (usize, usize) {
    let (i, o) = spec.split_once('/').expect("port count");
    let min = |s: &str, other: usize| -> usize {
        match s {
            "=" => other,
            "-" => 0,
            s => s
                .split('-')
                .next()
                .unwrap()
                .parse()
                .unwrap_or_else(|_| panic!("port count {spec}")),
        }
    };
    let ni = min(i, 0);
    (ni, min(o, ni))
}

/// A configuration holding `x :: CLASS(ARGS)` with every port connected
/// to an Idle, and a Script that runs `script` and stops the driver.
fn config(class: &str, args: &str, ports: &str, script: &str) -> String {
    let (ni, no) = min_ports(ports);
    let mut c = format!("x :: {class}({args});\nScript({script}stop);\n");
    for i in 0..ni {
        c.push_str(&format!("Idle -> [{i}]x;\n"));
    }
    for o in 0..no {
        c.push_str(&format!("x[{o}] -> Idle;\n"));
    }
    c
}

/// Handler paths `x.H` whose reads failed, with the driver's message.
fn failed_reads(cfg: &str, names: &[&str], netns: bool) -> (i32, String, String) {
    let mut args: Vec<String> = Vec::new();
    if netns {
        args.extend(["-n".to_string(), bin().to_string()]);
    }
    args.extend(["run".to_string(), "-e".to_string(), cfg.to_string()]);
    // -h x.class first, so the output is always NAME:\nVALUE blocks
    for n in std::iter::once(&"class").chain(names) {
        args.push("-h".into());
        args.push(format!("x.{n}"));
    }
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = if netns {
        run_in(None, "unshare", &a)
    } else {
        run_in(None, bin(), &a)
    };
    (r.code, r.out, r.err)
}

#[test]
fn every_documented_read_handler_of_every_class_reads() {
    let classes = documented_classes();
    assert!(classes.len() > 130, "{} classes", classes.len());
    let tmp = tmpdir("handlers");
    std::fs::write(
        tmp.join("in.ipsum"),
        "!data ip_src ip_dst ip_proto\n10.0.0.1 10.0.0.2 T\n",
    )
    .unwrap();
    let data_dir = root().join("tests/data");
    let args: BTreeMap<&str, &str> = ARGS.iter().copied().collect();
    let netns: BTreeMap<&str, &str> = NEEDS_NETNS.iter().copied().collect();
    let not_here: BTreeMap<&str, &str> = NOT_HERE.iter().copied().collect();
    let ports: BTreeMap<&str, &str> = PORTS.iter().copied().collect();
    for t in ARGS.iter().map(|a| a.0).chain(netns.keys().copied()) {
        assert!(classes.contains_key(t), "table names unknown class {t}");
    }
    // Every name some class documents: each is probed on every class.
    let all_names: BTreeSet<&str> = classes
        .values()
        .flat_map(|c| c.handlers.iter().map(|h| h.0.as_str()))
        .collect();
    let root_ok = netns_ok();
    let mut failures: Vec<String> = Vec::new();
    let mut read = 0;
    for (name, class) in &classes {
        if not_here.contains_key(name.as_str()) {
            continue;
        }
        let in_ns = netns.contains_key(name.as_str());
        if in_ns && !root_ok {
            skip::skip(&format!("{name} needs a network namespace (root)"));
            continue;
        }
        let fill = |a: &str| {
            a.replace("{data}", &data_dir.to_string_lossy())
                .replace("{tmp}", &tmp.to_string_lossy())
        };
        let a = fill(
            args.get(name.as_str())
                .or(netns.get(name.as_str()))
                .copied()
                .unwrap_or(""),
        );
        let port_spec = ports.get(name.as_str()).copied().unwrap_or(&class.ports);
        let params: Vec<(&str, &str)> = WITH_PARAM
            .iter()
            .filter(|w| w.0 == name)
            .map(|w| (w.1, w.2))
            .collect();
        let elsewhere: Vec<&str> = OTHER_CONFIG
            .iter()
            .filter(|o| o.0 == name)
            .flat_map(|o| o.2.iter().copied())
            .collect();
        // Read handlers with a parameter are read by the Script, which
        // prints `x.H:` and the value on standard error.
        let script: String = params
            .iter()
            .map(|(h, v)| format!("read x.{h} {v}, "))
            .collect();
        let cfg = match CONFIGS.iter().find(|c| c.0 == name) {
            Some((_, c)) => format!("{c}\nScript({script}stop);\n"),
            None => config(name, &a, port_spec, &script),
        };

        // 1. Every documented readable handler reads.
        let readable: Vec<String> = class
            .handlers
            .iter()
            .filter(|h| h.1)
            .map(|h| h.0.as_str())
            .filter(|h| !params.iter().any(|p| p.0 == *h) && !elsewhere.contains(h))
            .map(|h| match h.strip_suffix('N') {
                Some(stem) if !stem.is_empty() => format!("{stem}0"),
                _ => h.to_string(),
            })
            .chain(
                GENERIC
                    .iter()
                    .filter(|g| !g.contains("thread") && **g != "scheduled")
                    .map(|g| g.to_string()),
            )
            .collect();
        let readable: Vec<&str> = readable.iter().map(String::as_str).collect();
        let (code, out, err) = failed_reads(&cfg, &readable, in_ns);
        let mut err_rest = err.clone();
        if let Some((_, says)) = SAYS.iter().find(|s| s.0 == name) {
            // its line, and the `While initializing` line Click puts above it
            err_rest = err_rest
                .lines()
                .filter(|l| {
                    !l.contains(says)
                        && !l.contains("While initializing 'x ::")
                        && !l.contains("While configuring 'x ::")
                })
                .map(|l| format!("{l}\n"))
                .collect();
        }
        for (h, _) in &params {
            let head = format!("x.{h}:\n");
            match err_rest.find(&head) {
                // the value's line goes too
                Some(i) => {
                    let end = err_rest[i + head.len()..]
                        .find('\n')
                        .map_or(err_rest.len(), |e| i + head.len() + e + 1);
                    err_rest.replace_range(i..end, "");
                }
                None => failures.push(format!(
                    "{name}: x.{h} (read with a parameter) printed nothing"
                )),
            }
        }
        if code != 0 || !err_rest.is_empty() {
            failures.push(format!(
                "{name}: reading its documented handlers exited {code}:\n{err}\nconfiguration:\n{cfg}"
            ));
            continue;
        }
        for h in &readable {
            if !out.contains(&format!("x.{h}:\n")) {
                failures.push(format!("{name}: x.{h} printed nothing"));
            }
        }
        read += readable.len() + params.len();
        for (c, other, hs) in OTHER_CONFIG.iter().filter(|o| o.0 == name) {
            let cfg = config(c, &fill(other), port_spec, "");
            let (code, out, err) = failed_reads(&cfg, hs, in_ns);
            if code != 0 || hs.iter().any(|h| !out.contains(&format!("x.{h}:\n"))) {
                failures.push(format!(
                    "{name}({other}): reading {hs:?} exited {code}: {err}"
                ));
            }
            read += hs.len();
        }

        // 2. `handlers` lists nothing undocumented.
        let documented: BTreeSet<&str> = class
            .handlers
            .iter()
            .map(|h| h.0.as_str())
            .chain(GENERIC.iter().copied())
            .collect();
        let list = out
            .split("x.handlers:\n")
            .nth(1)
            .unwrap_or("")
            .split("\n\n")
            .next()
            .unwrap_or("");
        let prose = IN_PROSE.iter().find(|p| p.0 == name);
        let reference = prose.map(|p| run_in(None, bin(), &["elements", p.2]).out);
        let prose = prose.map(|p| p.1);
        let in_prose = |h: &str| match (prose, &reference) {
            (Some(p), Some(r)) => {
                let stem = h.trim_end_matches(|c: char| c.is_ascii_digit());
                r.contains(&format!("{p}{h}")) || (stem != h && r.contains(&format!("`{stem}0`")))
            }
            _ => false,
        };
        // a documented `patternN` stands for pattern0, pattern1, ...
        let family = |h: &str| {
            let stem = h.trim_end_matches(|c: char| c.is_ascii_digit());
            stem != h && documented.contains(format!("{stem}N").as_str())
        };
        for l in list.lines() {
            let h = l.split('\t').next().unwrap();
            if !documented.contains(h) && !in_prose(h) && !family(h) {
                failures.push(format!(
                    "{name}: handler `{h}` is listed but not documented"
                ));
            }
        }

        // 3. No undocumented name answers a read.
        let probes: Vec<&str> = all_names
            .iter()
            .copied()
            .filter(|n| !documented.contains(n))
            .collect();
        let (_, out, err) = failed_reads(&cfg, &probes, in_ns);
        for p in &probes {
            if out.contains(&format!("x.{p}:\n")) {
                if in_prose(p) {
                    continue;
                }
                failures.push(format!("{name}: undocumented handler `{p}` answers a read"));
            } else if !err.contains(&format!("no 'x.{p}' handler")) {
                failures.push(format!(
                    "{name}: reading undocumented `{p}` did not say \"no such handler\": {err}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(read > 500, "only {read} handler reads");
}

fn netns_ok() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    root && run_in(None, "unshare", &["-n", "true"]).code == 0
}

#[test]
fn the_tables_name_only_documented_classes() {
    let classes = documented_classes();
    for (c, why) in NOT_HERE {
        assert!(classes.contains_key(*c), "{c} ({why})");
    }
    assert_eq!(min_ports("1/1-2"), (1, 1));
    assert_eq!(min_ports("-/="), (0, 0));
    assert_eq!(min_ports("2/1-"), (2, 1));
}
