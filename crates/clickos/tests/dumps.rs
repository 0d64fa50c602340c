//! FromDump / ToDump / ToIPSummaryDump / FromIPSummaryDump end to end.

mod common;
use click_pcap::PcapReader;
use common::*;
use std::process::Command;

fn records(path: &str) -> Vec<click_pcap::Record> {
    PcapReader::open(path)
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

fn tcpdump(path: &str) -> Option<String> {
    let o = Command::new("tcpdump")
        .args(["-r", path, "-nn"])
        .output()
        .ok()?;
    if !o.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn fromdump_todump_round_trip() {
    let dir = tmpdir("roundtrip");
    let out = dir.join("out.pcap").to_string_lossy().into_owned();
    let cfg = format!(
        "fd :: FromDump({}, STOP true) -> td :: ToDump({out}, SNAPLEN 65535)",
        data("mixed.pcap")
    );
    let r = click(&["-e", &cfg, "-h", "fd.count", "-h", "td.count"]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "fd.count:\n52\n\ntd.count:\n52\n\n");
    // byte for byte: same header (µs, LE, snaplen 65535, EN10MB) and records
    let a = std::fs::read(data("mixed.pcap")).unwrap();
    let b = std::fs::read(&out).unwrap();
    assert_eq!(a, b, "ToDump output differs from the input file");
    let (ra, rb) = (records(&data("mixed.pcap")), records(&out));
    assert_eq!(ra, rb);
    if !skip::have_program("tcpdump", "--version") {
        return;
    }
    let x = tcpdump(&data("mixed.pcap")).expect("tcpdump reads mixed.pcap");
    let y = tcpdump(&out).expect("tcpdump reads ToDump's output");
    assert_eq!(x, y);
    assert_eq!(y.lines().count(), 52);
}

#[test]
fn pcapng_and_pull_path() {
    let dir = tmpdir("pcapng");
    let out = dir.join("out.pcap").to_string_lossy().into_owned();
    // pull path: FromDump pulled by ToDump's task
    let cfg = format!(
        "FromDump({}, STOP true) -> Queue -> td :: ToDump({out})",
        data("mixed.pcapng")
    );
    let r = click(&["-e", &cfg, "-h", "td.count"]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "52\n");
    let ng = records(&data("mixed.pcapng"));
    let pc = records(&data("mixed.pcap"));
    let cfg = format!(
        "FromDump({}, STOP true) -> td :: ToDump({out}, SNAPLEN 65535)",
        data("mixed.pcapng")
    );
    let r = click(&["-e", &cfg, "-h", "td.count"]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "52\n");
    let got = records(&out);
    assert_eq!(got.len(), ng.len());
    for (g, p) in got.iter().zip(pc.iter()) {
        assert_eq!(
            (g.ts_sec, g.ts_nsec, g.orig_len, &g.data),
            (p.ts_sec, p.ts_nsec, p.orig_len, &p.data)
        );
    }
}

#[test]
fn raw_ip_encap_and_force_ip() {
    let dir = tmpdir("rawip");
    let out = dir.join("raw.pcap").to_string_lossy().into_owned();
    // Ethernet in, IP out: FORCE_IP sets the IP header, ENCAP IP writes from it
    let cfg = format!(
        "FromDump({}, STOP true, FORCE_IP true) -> td :: ToDump({out}, ENCAP IP)",
        data("udp-64.pcap")
    );
    let r = click(&["-e", &cfg, "-h", "td.encap"]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "IP\n");
    let got = records(&out);
    let orig = records(&data("udp-64.pcap"));
    assert_eq!(got.len(), 20);
    assert_eq!(got[0].linktype, click_pcap::linktype::RAW);
    assert_eq!(got[3].data, orig[3].data[14..].to_vec());
    // USE_ENCAP_FROM copies the input's link type
    let cfg = format!(
        "fd :: FromDump({}, STOP true) -> td :: ToDump({out}, USE_ENCAP_FROM fd)",
        data("raw.pcap")
    );
    let r = click(&["-e", &cfg, "-h", "td.encap"]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "IP\n");
    assert_eq!(
        records(&out),
        records(&data("raw.pcap"))
            .iter()
            .map(|r| {
                let mut r = r.clone();
                r.linktype = click_pcap::linktype::RAW;
                r
            })
            .collect::<Vec<_>>()
    );
    // FORCE_IP with a second output: non-IP frames of mixed.pcap go there
    let cfg = format!(
        "fd :: FromDump({}, STOP true, FORCE_IP true); fd[0] -> a :: ToDump({out}); fd[1] -> b :: ToDump({}/nonip.pcap)",
        data("mixed.pcap"),
        dir.display()
    );
    let r = click(&["-e", &cfg, "-h", "a.count", "-h", "b.count"]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    let n: Vec<u64> = r.out.lines().filter_map(|l| l.parse().ok()).collect();
    assert_eq!(n.iter().sum::<u64>(), 52, "{}", r.out);
    assert!(n[1] >= 5, "{}", r.out); // ARP x3, IPv6 x2, LLDP, 802.3, runt, ...
}

#[test]
fn truncated_file_reports_one_error() {
    let dir = tmpdir("trunc");
    let mut b = std::fs::read(data("mixed.pcap")).unwrap();
    b.truncate(b.len() - 50);
    let f = dir.join("cut.pcap").to_string_lossy().into_owned();
    std::fs::write(&f, &b).unwrap();
    let cfg = format!("fd :: FromDump({f}, STOP true) -> Discard");
    let r = click(&["-e", &cfg, "-h", "fd.count"]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "51\n");
    assert_eq!(r.err.lines().count(), 1, "{}", r.err);
    assert!(r.err.starts_with("fd :: FromDump: "), "{}", r.err);
    assert!(r.err.contains("truncated"), "{}", r.err);
    // garbage
    std::fs::write(&f, b"this is not a capture file at all").unwrap();
    let r = click(&["-e", &cfg]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("not a tcpdump file"), "{}", r.err);
}

#[test]
fn ipsummary_lines() {
    let cfg = format!(
        "FromDump({}, STOP true, FORCE_IP true) -> ToIPSummaryDump(-, CONTENTS timestamp ip_src ip_dst sport dport ip_proto ip_len ip_id payload_len tcp_flags)",
        data("udp-64.pcap")
    );
    let r = click(&["-e", &cfg]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    let lines: Vec<&str> = r.out.lines().collect();
    assert_eq!(lines[0], "!IPSummaryDump 1.3");
    assert_eq!(
        lines[1],
        "!data timestamp ip_src ip_dst sport dport ip_proto ip_len ip_id payload_len tcp_flags"
    );
    assert_eq!(
        lines[2],
        "1700000000.000000 10.0.0.1 10.0.0.2 1234 5678 U 50 1 22 -"
    );
    assert_eq!(
        lines[3],
        "1700000000.250001 10.0.0.1 10.0.0.2 1234 5678 U 50 2 22 -"
    );
    assert_eq!(lines.len(), 22);

    // TCP flags and synonyms, from the first records of mixed.pcap
    let cfg = format!(
        "FromDump({}, STOP true, FORCE_IP true) -> ToIPSummaryDump(-, CONTENTS ts src dport proto tcp_flags len)",
        data("mixed.pcap")
    );
    let r = click(&["-e", &cfg]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    let lines: Vec<&str> = r.out.lines().collect();
    assert_eq!(
        lines[1],
        "!data timestamp ip_src dport ip_proto tcp_flags ip_len"
    );
    assert_eq!(lines[2], "1700000100.000000 10.0.0.1 80 T S 40");
    assert_eq!(lines[3], "1700000101.037013 10.0.0.2 40000 T SA 40");
    assert_eq!(lines[4], "1700000102.074026 10.0.0.1 80 T A 40");
}

#[test]
fn ipsummary_without_ip_header_prints_dashes() {
    // Without FORCE_IP, Ethernet packets carry no IP header annotation.
    let cfg = format!(
        "FromDump({}, STOP true) -> ToIPSummaryDump(-, CONTENTS ts_sec ip_src sport wire_len)",
        data("udp-64.pcap")
    );
    let r = click(&["-e", &cfg]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out.lines().nth(2), Some("1700000000 - - 64"));
}

#[test]
fn ipsummary_round_trip() {
    let dir = tmpdir("ipsum");
    let f1 = dir.join("a.txt").to_string_lossy().into_owned();
    let f2 = dir.join("b.txt").to_string_lossy().into_owned();
    let contents = "timestamp ip_src ip_dst sport dport ip_proto ip_len ip_id ip_ttl payload_len tcp_flags tcp_seq";
    let cfg = format!(
        "FromDump({}, STOP true, FORCE_IP true) -> ToIPSummaryDump({f1}, CONTENTS {contents})",
        data("router-in.pcap")
    );
    let r = click(&["-e", &cfg]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    let cfg = format!(
        "fi :: FromIPSummaryDump({f1}, STOP true) -> ToIPSummaryDump({f2}, CONTENTS {contents})"
    );
    let r = click(&["-e", &cfg, "-h", "fi.count"]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    assert_eq!(r.out, "30\n");
    let a = std::fs::read_to_string(&f1).unwrap();
    let b = std::fs::read_to_string(&f2).unwrap();
    assert_eq!(a.lines().count(), 32);
    assert_eq!(a, b);
}

#[test]
fn fromipsummarydump_builds_packets() {
    let dir = tmpdir("ipsum-build");
    let f = dir.join("in.txt");
    std::fs::write(
        &f,
        "!IPSummaryDump 1.3\n!data ts ip_src ip_dst ip_proto sport dport ip_len payload\n\
         # comment\n\
         1.5 1.2.3.4 5.6.7.8 U 1234 5678 40 \"hello\"\n\
         2.000001 1.2.3.4 - T 80 - 1000 -\n",
    )
    .unwrap();
    let out = dir.join("out.pcap").to_string_lossy().into_owned();
    let cfg = format!(
        "FromIPSummaryDump({}, STOP true, CHECKSUM true) -> ToDump({out}, ENCAP IP)",
        f.display()
    );
    let r = click(&["-e", &cfg]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    let recs = records(&out);
    assert_eq!(recs.len(), 2);
    assert_eq!((recs[0].ts_sec, recs[0].ts_nsec), (1, 500_000_000));
    // As in Click: an IP length longer than the headers and payload grows
    // the IP header (4 bytes of EOL options here, 3 bytes left over), the
    // payload is written where it started, at 28, inside the UDP header
    // now at 24 (its length field holds "he", the checksum replaces "ll",
    // "o" follows), and CHECKSUM extends the packet to its IP length.
    // Stock Click writes these very bytes.
    assert_eq!(recs[0].data.len(), 40);
    assert_eq!(recs[0].orig_len, 40);
    assert_eq!(recs[0].data[0], 0x46);
    assert_eq!(
        &recs[0].data[24..33],
        [0x04, 0xd2, 0x16, 0x2e, b'h', b'e', 0xfd, 0x64, b'o']
    );
    assert_eq!(recs[1].data.len(), 1000);
    assert_eq!(recs[1].orig_len, 1000);
    assert_eq!(recs[1].data[9], 6);
    assert_eq!(recs[1].data[8], 100, "Click's default TTL");
    if let Some(t) = tcpdump(&out) {
        assert!(t.contains("1.2.3.4.1234 > 5.6.7.8.5678: UDP"), "{t}");
    }
}

#[test]
fn shipped_example_runs() {
    let handlers = ["tcp", "udp", "icmp", "other", "bad", "nonip"];
    let mut args = vec!["run", "conf/example.click"];
    let hs: Vec<String> = handlers.iter().map(|h| format!("{h}.count")).collect();
    for h in &hs {
        args.push("-h");
        args.push(h);
    }
    let r = run_in(Some(&root()), bin(), &args);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    let summary: Vec<&str> = r
        .out
        .lines()
        .take_while(|l| !l.ends_with(".count:"))
        .collect();
    assert_eq!(summary[0], "!IPSummaryDump 1.3");
    assert_eq!(
        summary[2],
        "1700000100.000000 10.0.0.1 10.0.0.2 T 40000 80 40 S"
    );
    let counts: Vec<u64> = r.out.lines().filter_map(|l| l.parse().ok()).collect();
    assert_eq!(counts.len(), 6, "{}", r.out);
    assert_eq!(counts.iter().sum::<u64>(), 52);
    // one summary line per packet that reached the summary
    assert_eq!(summary.len() as u64 - 2, counts[..4].iter().sum::<u64>());
}

#[test]
fn ipsummary_fields_keyword_and_link_field() {
    // FIELDS is Click's current name for CONTENTS; `link` (and `paint`)
    // print the paint annotation as a number, `direction` as > or <.
    let dir = tmpdir("ipsum-link");
    let f = dir.join("in.txt");
    std::fs::write(&f, "!data link sport\n0 1\n1 2\n7 3\n").unwrap();
    let cfg = format!(
        "FromIPSummaryDump({}, STOP true) -> ToIPSummaryDump(-, FIELDS link paint direction sport)",
        f.to_string_lossy()
    );
    let r = click(&["-e", &cfg]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    let body: Vec<&str> = r.out.lines().filter(|l| !l.starts_with('!')).collect();
    assert_eq!(body, ["0 0 > 1", "1 1 < 2", "7 7 7 3"], "{}", r.out);
}

#[test]
fn fromipsummarydump_inline_data() {
    // DATA gives the dump's text in the configuration, no file needed
    let cfg = "FromIPSummaryDump(STOP true, DATA \"!data ip_dst timestamp\n1.0.0.1 1\n1.0.0.2 2\")
               -> ToIPSummaryDump(-, FIELDS ts_sec ip_dst)";
    let r = click(&["-e", cfg]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    let body: Vec<&str> = r.out.lines().filter(|l| !l.starts_with('!')).collect();
    assert_eq!(body, ["1 1.0.0.1", "2 1.0.0.2"], "{}", r.out);
    let r = click(&["-q", "-e", "FromIPSummaryDump(STOP true) -> Discard"]);
    assert!(
        r.err.contains("missing mandatory FILENAME argument"),
        "{}",
        r.err
    );
}

#[test]
fn fromipsummarydump_timing_and_destination_annotation() {
    // TIMING spaces packets as their timestamps (under --simtime, the
    // clock moves to each one); packets carry their destination address
    // as the destination annotation, so ARPQuerier can query for it
    let cfg = "FromIPSummaryDump(STOP true, TIMING true, DATA \"!data timestamp ip_dst\n10 1.0.0.1\n10.5 1.0.0.2\n12 1.0.0.3\")
               -> q :: ARPQuerier(1.0.10.10, 2:1:0:a:a:f) -> ARPPrint(a) -> Discard; Idle -> [1]q;";
    let r = click(&["--simtime=0", "-e", cfg]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    let lines: Vec<&str> = r.err.lines().collect();
    assert_eq!(lines.len(), 3, "{}", r.err);
    assert!(
        lines[0].contains("who-has 1.0.0.1 tell 1.0.10.10"),
        "{}",
        r.err
    );
    assert!(lines[2].contains("who-has 1.0.0.3"), "{}", r.err);
    let r = click(&[
        "--simtime=0",
        "-e",
        &cfg.replace("ARPPrint(a)", "Script(TYPE PACKET, print $(now), return 0)"),
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    let times: Vec<f64> = r.out.lines().map(|l| l.trim().parse().unwrap()).collect();
    assert_eq!(times.len(), 3, "{}", r.out);
    assert!((times[1] - times[0] - 0.5).abs() < 0.01, "{:?}", times);
    assert!((times[2] - times[0] - 2.0).abs() < 0.01, "{:?}", times);
}

/// TimeSortedSched merges timestamp-sorted dumps; FromIPSummaryDump in pull
/// mode has Click's empty notifier (asleep at the end of its file), so
/// TimeSortedSched(STOP true) asks the driver to stop once every input is
/// dry — here twice, a DriverManager turning a third source on in between,
/// whose packets wake the merge through a Queue declared after it.
#[test]
fn timesortedsched_merges_and_stops_when_inputs_are_dry() {
    let d = tmpdir("tss");
    let write = |name: &str, lines: &[(&str, &str)]| {
        let mut s = String::from("!data timestamp ip_src\n");
        for (t, a) in lines {
            s.push_str(&format!("{t} {a}\n"));
        }
        std::fs::write(d.join(name), s).unwrap();
        d.join(name).to_string_lossy().into_owned()
    };
    let d1 = write(
        "d1",
        &[("0.0", "1.0.0.0"), ("0.1", "1.0.0.1"), ("0.2", "1.0.0.2")],
    );
    let d2 = write(
        "d2",
        &[
            ("0.05", "1.0.1.0"),
            ("0.15", "1.0.1.1"),
            ("0.25", "1.0.1.2"),
        ],
    );
    let d3 = write("d3", &[("0.3", "1.0.2.0"), ("0.4", "1.0.2.1")]);
    let cfg = format!(
        "f1 :: FromIPSummaryDump({d1}); f2 :: FromIPSummaryDump({d2});
         f3 :: FromIPSummaryDump({d3}, ACTIVE false);
         tss :: TimeSortedSched(STOP true);
         f1 -> [0]tss; f2 -> [1]tss; f3 -> q :: Queue -> [2]tss;
         tss -> ToIPSummaryDump(-, FIELDS ip_src);
         DriverManager(wait, write f3.active true, wait)"
    );
    let r = click(&["-e", &cfg]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    let body: Vec<&str> = r.out.lines().filter(|l| !l.starts_with('!')).collect();
    assert_eq!(
        body,
        ["1.0.0.0", "1.0.1.0", "1.0.0.1", "1.0.1.1", "1.0.0.2", "1.0.1.2", "1.0.2.0", "1.0.2.1"],
        "{}",
        r.out
    );
    let r = click(&["-q", "-e", "Idle -> TimeSortedSched(STOP maybe) -> Discard"]);
    assert_ne!(r.code, 0);
    assert!(r.err.contains("STOP"), "{}", r.err);
}

/// BUFFER N holds up to N packets per input and offers the earliest, which
/// puts slightly disordered inputs back in order; `well_ordered` says
/// whether every packet left no earlier than the one before it (Click's
/// TimeSortedSched-02). Script's `save HANDLER FILE` writes the value to a
/// file (`-`: standard output), `append` appends.
#[test]
fn timesortedsched_buffer_well_ordered_and_script_save() {
    let d = tmpdir("tssbuf");
    let write = |name: &str, ts: &[&str]| {
        let mut s = String::from("!data timestamp\n");
        for t in ts {
            s.push_str(&format!("{t}\n"));
        }
        std::fs::write(d.join(name), s).unwrap();
        d.join(name).to_string_lossy().into_owned()
    };
    let a = write("a", &["1.0", "0.2", "0.1", "1.2", "5.5"]);
    let b = write("b", &["0.3", "0.8", "0.9", "1.4"]);
    let saved = d.join("saved").to_string_lossy().into_owned();
    let run = |buffer: u32| {
        let cfg = format!(
            "a :: FromIPSummaryDump({a}); b :: FromIPSummaryDump({b});
             a -> t :: TimeSortedSched(BUFFER {buffer}, STOP true) -> ToIPSummaryDump(-, FIELDS timestamp);
             b -> [1]t;
             DriverManager(pause, save t.well_ordered {saved}, append t.well_ordered {saved}, save t.config -)"
        );
        let r = click(&["-e", &cfg]);
        assert_eq!(r.code, 0, "stderr: {}", r.err);
        let lines: Vec<String> = r
            .out
            .lines()
            .filter(|l| !l.starts_with('!'))
            .map(String::from)
            .collect();
        (lines, std::fs::read_to_string(&saved).unwrap())
    };
    let (out, file) = run(3);
    assert_eq!(
        out,
        [
            "0.100000",
            "0.200000",
            "0.300000",
            "0.800000",
            "0.900000",
            "1.000000",
            "1.200000",
            "1.400000",
            "5.500000",
            "BUFFER 3, STOP true"
        ]
    );
    assert_eq!(file, "true\ntrue\n");
    let (out, file) = run(2);
    assert_eq!(&out[..3], ["0.200000", "0.100000", "0.300000"]);
    assert_eq!(file, "false\nfalse\n");
    let r = click(&["-q", "-e", "Idle -> TimeSortedSched(BUFFER 0) -> Discard"]);
    assert_ne!(r.code, 0);
    assert!(r.err.contains("BUFFER"), "{}", r.err);
}

#[test]
fn ipsummary_ecn_field_and_proto_directive() {
    let dir = tmpdir("ipsum-ecn");
    let f = dir.join("in.txt");
    std::fs::write(
        &f,
        "!data timestamp src dst ip_ecn\n!proto 9\n\
         1.1 1.0.0.1 1.0.0.2 no\n\
         1.2 1.0.0.2 1.0.0.3 ect1\n\
         1.3 1.0.0.3 1.0.0.4 ect2\n\
         1.4 1.0.0.4 1.0.0.5 ce\n\
         1.5 1.0.0.5 1.0.0.6 2\n",
    )
    .unwrap();
    let cfg = format!(
        "FromIPSummaryDump({}, STOP true, CHECKSUM true) -> CheckIPHeader -> ToIPSummaryDump(-, FIELDS ip_src ip_proto ip_tos ip_ecn)",
        f.display()
    );
    let r = click(&["-e", &cfg]);
    assert_eq!(r.code, 0, "stderr: {}", r.err);
    let lines: Vec<&str> = r.out.lines().filter(|l| !l.starts_with('!')).collect();
    assert_eq!(
        lines,
        [
            "1.0.0.1 9 0 no",
            "1.0.0.2 9 1 ect1",
            "1.0.0.3 9 2 ect2",
            "1.0.0.4 9 3 ce",
            "1.0.0.5 9 2 ect2"
        ]
    );
}
