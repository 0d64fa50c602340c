//! PcapWriter: round trips through PcapReader and through tcpdump.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use click_pcap::{linktype, Format, PcapReader, PcapWriter, Record, TsPrecision, WriterOptions};
use common::*;

fn write_all(recs: &[Record], opts: WriterOptions) -> Vec<u8> {
    let mut w = PcapWriter::with_options(Vec::new(), opts).unwrap();
    for r in recs {
        w.write_record(r).unwrap();
    }
    assert_eq!(w.records_written(), recs.len() as u64);
    w.into_inner().unwrap()
}

#[test]
fn round_trip_all_classic_files() {
    for name in FILES.iter().filter(|n| n.ends_with(".pcap")) {
        let bytes = data(name);
        let r = PcapReader::new(&bytes[..]).unwrap();
        let lt = r.linktype().unwrap();
        let snaplen = r.snaplen().unwrap();
        let recs: Vec<Record> = r.map(Result::unwrap).collect();
        for precision in [TsPrecision::Micro, TsPrecision::Nano] {
            for big_endian in [false, true] {
                let opts = WriterOptions {
                    linktype: lt,
                    snaplen,
                    precision,
                    big_endian,
                };
                let out = write_all(&recs, opts);
                let r2 = PcapReader::new(&out[..]).unwrap();
                assert_eq!(
                    r2.format(),
                    Format::Pcap {
                        nanosecond: precision == TsPrecision::Nano,
                        big_endian,
                        modified: false
                    }
                );
                assert_eq!(r2.linktype(), Some(lt));
                assert_eq!(r2.snaplen(), Some(snaplen));
                let back: Vec<Record> = r2.map(Result::unwrap).collect();
                let mut want = recs.clone();
                if precision == TsPrecision::Micro {
                    for r in &mut want {
                        r.ts_nsec = r.ts_nsec / 1000 * 1000;
                    }
                }
                assert_eq!(back, want, "{name} {opts:?}");
                // Writing what we read from our own output is byte-identical.
                assert_eq!(write_all(&back, opts), out);
            }
        }
        // Files we generated with the script's writer are reproduced exactly.
        if *name != "nanosec.pcap" && *name != "bigendian.pcap" {
            let opts = WriterOptions {
                linktype: lt,
                snaplen,
                ..Default::default()
            };
            assert_eq!(write_all(&recs, opts), bytes, "{name} byte-identical");
        }
    }
}

#[test]
fn pcapng_to_pcap() {
    let (recs, err) = read_all(&data("mixed.pcapng"));
    assert!(err.is_none());
    let out = write_all(&recs, WriterOptions::default());
    let (back, err) = read_all(&out);
    assert!(err.is_none());
    assert_eq!(back, recs);
}

#[test]
fn snaplen_truncates_and_keeps_orig_len() {
    let mut w = PcapWriter::new(Vec::new(), linktype::EN10MB, 100).unwrap();
    let big = vec![0xabu8; 1514];
    w.write_packet(10, 5_000, 0, &big).unwrap();
    w.write_packet(11, 0, 2000, &big[..50]).unwrap();
    // nanoseconds of a second or more carry
    w.write_packet(11, 2_500_000_000, 60, &big[..60]).unwrap();
    let out = w.into_inner().unwrap();
    assert_eq!(out.len(), 24 + 16 + 100 + 16 + 50 + 16 + 60);
    let (recs, err) = read_all(&out);
    assert!(err.is_none());
    assert_eq!(
        (recs[0].caplen, recs[0].orig_len, recs[0].data.len()),
        (100, 1514, 100)
    );
    assert_eq!((recs[0].ts_sec, recs[0].ts_nsec), (10, 5_000));
    assert_eq!((recs[1].caplen, recs[1].orig_len), (50, 2000));
    assert_eq!((recs[2].ts_sec, recs[2].ts_nsec), (13, 500_000_000));
}

#[test]
fn unrepresentable_time_is_an_error() {
    let mut w = PcapWriter::new(Vec::new(), linktype::EN10MB, 0).unwrap();
    let e = w.write_packet(-1, 0, 0, b"x").unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    let e = w.write_packet(1 << 33, 0, 0, b"x").unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert_eq!(w.records_written(), 0);
    // snaplen 0 = unlimited, header says 262144
    let out = w.into_inner().unwrap();
    let r = PcapReader::new(&out[..]).unwrap();
    assert_eq!(r.snaplen(), Some(262_144));
}

fn tcpdump() -> Option<PathBuf> {
    [
        "/usr/bin/tcpdump",
        "/usr/sbin/tcpdump",
        "/usr/local/bin/tcpdump",
        "/usr/local/sbin/tcpdump",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

fn run_tcpdump(tcpdump: &Path, file: &Path, extra: &[&str]) -> Vec<String> {
    let out = Command::new(tcpdump)
        .arg("-r")
        .arg(file)
        .args(["-nn", "-tt"])
        .args(extra)
        .output()
        .expect("running tcpdump");
    assert!(
        out.status.success(),
        "tcpdump failed on {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn tcpdump_reads_our_output() {
    let Some(td) = tcpdump() else {
        common::skip::skip("no tcpdump on this machine (scripts/setup installs it)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("click-pcap-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    // udp-64, microseconds, through PcapWriter::create.
    let (recs, _) = read_all(&data("udp-64.pcap"));
    let f = dir.join("udp64.pcap");
    let mut w = PcapWriter::create(&f, WriterOptions::default()).unwrap();
    for r in &recs {
        w.write_record(r).unwrap();
    }
    w.into_inner().unwrap();
    let lines = run_tcpdump(&td, &f, &[]);
    assert_eq!(lines.len(), 20, "{lines:?}");
    for (l, r) in lines.iter().zip(&recs) {
        let ts = format!("{}.{:06}", r.ts_sec, r.ts_nsec / 1000);
        assert!(l.starts_with(&ts), "{l} should start with {ts}");
        assert!(
            l.contains("IP 10.0.0.1.1234 > 10.0.0.2.5678: UDP, length 22"),
            "{l}"
        );
    }

    // mixed, nanoseconds, big-endian, snaplen 128 (record 40 gets snapped).
    let (recs, _) = read_all(&data("mixed.pcap"));
    let f = dir.join("mixed-ns-be.pcap");
    let opts = WriterOptions {
        snaplen: 128,
        precision: TsPrecision::Nano,
        big_endian: true,
        ..Default::default()
    };
    std::fs::write(&f, write_all(&recs, opts)).unwrap();
    let lines = run_tcpdump(&td, &f, &["--time-stamp-precision=nano"]);
    assert_eq!(lines.len(), recs.len(), "{lines:?}");
    for (l, r) in lines.iter().zip(&recs) {
        let ts = format!("{}.{:09}", r.ts_sec, r.ts_nsec);
        assert!(l.starts_with(&ts), "{l} should start with {ts}");
    }
    assert!(
        lines[0].contains("10.0.0.1.40000 > 10.0.0.2.80: Flags [S]"),
        "{}",
        lines[0]
    );
    assert!(
        lines[19].contains("ARP, Request who-has 10.0.0.2"),
        "{}",
        lines[19]
    );
    // tcpdump sees the on-wire length of the snapped 1514-byte frame.
    let v = run_tcpdump(&td, &f, &["-e"]);
    assert!(v[40].contains("length 1514"), "{}", v[40]);

    // Raw IP link type.
    let (recs, _) = read_all(&data("raw.pcap"));
    let f = dir.join("raw.pcap");
    let opts = WriterOptions {
        linktype: linktype::RAW,
        ..Default::default()
    };
    std::fs::write(&f, write_all(&recs, opts)).unwrap();
    let lines = run_tcpdump(&td, &f, &[]);
    assert_eq!(lines.len(), 3);
    assert!(
        lines[2].contains("IP 10.0.0.1.1 > 10.0.0.4.4: UDP, length 2"),
        "{}",
        lines[2]
    );

    std::fs::remove_dir_all(&dir).ok();
}
