//! Suspend, resume and migrate (issue 15, item 6): an instance's whole
//! state (configuration, counters, NAT mappings, queued packets) survives
//! a snapshot, in this process and through the daemon. The vm level only;
//! without KVM every test records a skip, which fails in CI.

mod common;

use clickos_instance::{CreateError, Instance, InstanceOptions, Isolation, VnicPort, VnicSpec};
use std::time::Duration;

/// A NAT: UDP from the inside gets source 1.0.0.1:1024-65535 and comes
/// back out of the same vNIC; everything counted.
const NAT: &str = "FromVNIC(0) -> in :: Counter -> Strip(14) -> CheckIPHeader
    -> rw :: IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, MAPPING_CAPACITY 100000)
    -> EtherEncap(0x0800, 2:0:0:0:0:2, 2:0:0:0:0:1) -> out :: Counter -> ToVNIC(0);
    rw[1] -> Discard;
    TimedSource(INTERVAL 0.01) -> t :: Counter -> Discard;";

fn csum(data: &[u8]) -> u16 {
    let mut s = 0u32;
    for c in data.chunks(2) {
        s += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// A UDP frame from 10.0.(n/60000).x:(n%60000 + 1024) to 8.8.8.8:53.
fn udp(n: u32) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00];
    let src = [10, 0, (n / 60000) as u8, 1];
    let sport = (n % 60000 + 1024) as u16;
    let mut ip = vec![0x45, 0, 0, 36, 0, 0, 0, 0, 64, 17, 0, 0];
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&[8, 8, 8, 8]);
    let c = csum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&53u16.to_be_bytes());
    f.extend_from_slice(&16u16.to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(b"query!!!");
    f
}

/// Sends flows `from..to` through the NAT, `batch` at a time, and takes
/// every frame back.
fn push_flows(port: &VnicPort, from: u32, to: u32) {
    let mut n = from;
    while n < to {
        let end = (n + 128).min(to);
        for k in n..end {
            assert!(port.send(&udp(k)), "ring full at flow {k}");
        }
        port.flush();
        for k in n..end {
            port.recv_timeout(Duration::from_secs(5))
                .unwrap_or_else(|| panic!("flow {k}: no frame back"));
        }
        n = end;
    }
}

fn opts() -> InstanceOptions {
    InstanceOptions {
        isolation: Isolation::Vm,
        vnics: vec![VnicSpec::default()],
        console: Some(std::sync::Arc::new(|_, _| {})),
        ..InstanceOptions::default()
    }
}

/// The NAT's UDP table without the expiry times (they count down).
fn mappings_of(i: &Instance) -> String {
    let t = i.read("rw.udp_mappings").unwrap();
    let lines: Vec<String> = t
        .lines()
        .map(|l| {
            l.split_whitespace()
                .filter(|w| !w.starts_with("exp"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert!(lines.len() >= 500, "{} lines", lines.len());
    lines.join("\n")
}

fn num(i: &Instance, h: &str) -> u64 {
    i.read(h).unwrap().trim().parse().unwrap()
}

#[test]
fn a_nat_instance_suspends_and_resumes_with_its_mappings_and_counters() {
    if !common::can_use_kvm() {
        return;
    }
    let i = Instance::create(901, NAT, &opts()).unwrap();
    push_flows(&i.vnic(0).unwrap(), 0, 500);
    let mappings = mappings_of(&i);
    assert_eq!(num(&i, "rw.table_size"), 500);
    assert_eq!(num(&i, "in.count"), 500);
    assert_eq!(num(&i, "out.count"), 500);
    // A snapshot of a running instance: it runs on.
    let checkpoint = i.snapshot(b"checkpoint").unwrap();
    assert_eq!(num(&i, "rw.table_size"), 500);
    let snap = match i.suspend(b"hello") {
        Ok(s) => s,
        Err((_, e)) => panic!("suspend: {e}"),
    };
    println!("snapshot: {} bytes", snap.len());
    let (r, note) = Instance::resume(902, &snap, &opts()).unwrap();
    assert_eq!(note, b"hello");
    assert_eq!(num(&r, "rw.table_size"), 500);
    assert_eq!(mappings_of(&r), mappings);
    assert_eq!(num(&r, "in.count"), 500);
    assert_eq!(num(&r, "out.count"), 500);
    // It keeps counting and translating: old flows reuse their mappings,
    // new ones add to them; its timers run.
    let port = r.vnic(0).unwrap();
    push_flows(&port, 250, 750);
    assert_eq!(num(&r, "rw.table_size"), 750);
    assert_eq!(num(&r, "in.count"), 1000);
    assert_eq!(num(&r, "out.count"), 1000);
    let t0 = num(&r, "t.count");
    std::thread::sleep(Duration::from_millis(200));
    assert!(num(&r, "t.count") > t0 + 5, "timers stalled");
    // The checkpoint resumes too, with what it had then.
    drop(r);
    let (c, note) = Instance::resume(903, &checkpoint, &opts()).unwrap();
    assert_eq!(note, b"checkpoint");
    assert_eq!(num(&c, "rw.table_size"), 500);
}

#[test]
fn damaged_snapshots_are_refused_and_other_levels_cannot_suspend() {
    if !common::can_use_kvm() {
        return;
    }
    let i = Instance::create(911, NAT, &opts()).unwrap();
    let snap = i.snapshot(b"").unwrap();
    let refused = |b: &[u8]| match Instance::resume(912, b, &opts()) {
        Err(CreateError::Launch(m)) => m,
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("a damaged snapshot was resumed"),
    };
    assert!(refused(&snap[..snap.len() / 2]).contains("truncated"));
    let mut bad = snap.clone();
    bad[snap.len() / 2] ^= 0x40;
    assert!(refused(&bad).contains("checksum"));
    let mut v = snap.clone();
    v[16] = 99;
    assert!(refused(&v).contains("version 99 is not supported"));
    assert!(refused(b"#!/bin/sh\n").contains("not a ClickOS snapshot"));
    // The original is untouched.
    assert_eq!(num(&i, "rw.table_size"), 0);
    let thread = Instance::create(
        913,
        "Idle -> c :: Counter -> Discard;",
        &InstanceOptions {
            isolation: Isolation::None,
            ..InstanceOptions::default()
        },
    )
    .unwrap();
    let e = thread.snapshot(b"").unwrap_err();
    assert!(e.contains("suspend needs --isolation vm"), "{e}");
    let e = match Instance::resume(
        914,
        &snap,
        &InstanceOptions {
            isolation: Isolation::Process,
            ..InstanceOptions::default()
        },
    ) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("resumed at the process level"),
    };
    assert!(e.contains("resume needs --isolation vm"), "{e}");
}
