//! IPFIXExport against a real collector: nfcapd (Debian's `nfdump`
//! package, installed by scripts/setup) listens on a localhost UDP port,
//! `clickos run` replays a capture with known flows through IPFIXExport
//! and Socket(UDP) to it, and `nfdump` reads back what nfcapd stored:
//! every flow's addresses, ports, protocol, packets, bytes and duration
//! must be what the capture holds. Without nfcapd the test is skipped
//! (and fails in CI).

mod common;
use common::*;
use std::collections::BTreeMap;
use std::net::UdpSocket;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn checksum(b: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in b.chunks(2) {
        let w = if c.len() == 2 {
            u16::from_be_bytes([c[0], c[1]])
        } else {
            u16::from_be_bytes([c[0], 0])
        };
        s += u32::from(w);
    }
    while s > 0xFFFF {
        s = (s & 0xFFFF) + (s >> 16);
    }
    !(s as u16)
}

/// An IPv4 packet of `total` bytes with a TCP (20-byte) or UDP header.
fn ip_packet(
    proto: u8,
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    dport: u16,
    total: usize,
) -> Vec<u8> {
    let mut p = vec![0u8; total];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[8] = 64;
    p[9] = proto;
    p[12..16].copy_from_slice(&src);
    p[16..20].copy_from_slice(&dst);
    let c = checksum(&p[..20]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p[20..22].copy_from_slice(&sport.to_be_bytes());
    p[22..24].copy_from_slice(&dport.to_be_bytes());
    if proto == 6 {
        p[32] = 0x50; // data offset 5
        p[33] = 0x10; // ACK
    } else {
        p[24..26].copy_from_slice(&((total - 20) as u16).to_be_bytes());
    }
    p
}

struct Flow {
    proto: u8,
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    dport: u16,
    sizes: Vec<usize>,
}

fn flows() -> Vec<Flow> {
    vec![
        Flow {
            proto: 6,
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 2],
            sport: 40001,
            dport: 80,
            sizes: vec![60, 1500, 1500, 52, 400],
        },
        Flow {
            proto: 6,
            src: [10, 0, 0, 2],
            dst: [10, 0, 0, 1],
            sport: 80,
            dport: 40001,
            sizes: vec![60, 40, 40],
        },
        Flow {
            proto: 6,
            src: [192, 168, 1, 7],
            dst: [172, 16, 0, 9],
            sport: 5555,
            dport: 22,
            sizes: vec![100; 7],
        },
        Flow {
            proto: 17,
            src: [10, 0, 0, 1],
            dst: [8, 8, 8, 8],
            sport: 53000,
            dport: 53,
            sizes: vec![71, 90],
        },
        Flow {
            proto: 17,
            src: [10, 1, 2, 3],
            dst: [10, 3, 2, 1],
            sport: 123,
            dport: 123,
            sizes: vec![76],
        },
    ]
}

const T0: i64 = 1_700_000_000;

/// Writes the flows interleaved, flow k's packet j at T0 + k + j * 2.5 s
/// (raw IP link type).
fn write_capture(path: &Path, flows: &[Flow]) {
    let opts = click_pcap::WriterOptions {
        linktype: click_pcap::linktype::RAW,
        ..Default::default()
    };
    let mut recs = Vec::new();
    for (k, f) in flows.iter().enumerate() {
        for (j, &n) in f.sizes.iter().enumerate() {
            let ms = (k as i64) * 1000 + (j as i64) * 2500;
            recs.push((ms, ip_packet(f.proto, f.src, f.dst, f.sport, f.dport, n)));
        }
    }
    recs.sort_by_key(|r| r.0);
    let mut w = click_pcap::PcapWriter::create(path, opts).unwrap();
    for (ms, p) in recs {
        let (s, ns) = (T0 + ms / 1000, ((ms % 1000) * 1_000_000) as u32);
        w.write_packet(s, ns, p.len() as u32, &p).unwrap();
    }
    w.flush().unwrap();
}

fn free_udp_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn ipfix_flows_reach_nfcapd_exactly() {
    if !skip::have_program("nfcapd", "-V") || !skip::have_program("nfdump", "-V") {
        return;
    }
    let dir = tmpdir("ipfix");
    let store = dir.join("flows");
    std::fs::create_dir_all(&store).unwrap();
    let cap = dir.join("flows.pcap");
    let fl = flows();
    write_capture(&cap, &fl);

    let port = free_udp_port();
    let mut nfcapd = Command::new("nfcapd")
        .args([
            "-w",
            store.to_str().unwrap(),
            "-p",
            &port.to_string(),
            "-b",
            "127.0.0.1",
            "-t",
            "60",
        ])
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(dir.join("nfcapd.out")).unwrap())
        .stderr(std::fs::File::create(dir.join("nfcapd.err")).unwrap())
        .spawn()
        .unwrap();
    // nfcapd listens once the port can no longer be bound
    let t = Instant::now();
    while UdpSocket::bind(("127.0.0.1", port)).is_ok() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "nfcapd did not bind its port"
        );
        assert!(nfcapd.try_wait().unwrap().is_none(), "nfcapd exited early");
        std::thread::sleep(Duration::from_millis(50));
    }

    let config = format!(
        "FromDump({}, STOP true, FORCE_IP true)\n\
         -> ipfix :: IPFIXExport(OBSERVATION_DOMAIN 7, MTU 200)\n\
         -> Discard;\n\
         ipfix[1] -> s :: Socket(UDP, 127.0.0.1, {});\n\
         DriverManager(pause, write ipfix.flush, print ipfix.exported, print ipfix.messages, print s.sent, print s.errors, stop);\n",
        cap.display(),
        port
    );
    let out = Command::new(bin())
        .args(["run", "-e", &config])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "clickos failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // 5 records, 3 per 200-byte message (with template room): 2 messages
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        ["5", "2", "2", "0"],
        "exported / messages / sent / errors"
    );

    // nfcapd writes its file when it ends
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: sending SIGTERM to the child we started
    unsafe {
        libc::kill(nfcapd.id() as i32, libc::SIGTERM);
    }
    let status = nfcapd.wait().unwrap();
    assert!(
        status.success() || status.code().is_none(),
        "nfcapd: {status}"
    );
    let file = std::fs::read_dir(&store)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("nfcapd.2")
        })
        .unwrap_or_else(|| panic!("no nfcapd file in {}", store.display()));

    let dump = Command::new("nfdump")
        .args(["-r", file.to_str().unwrap(), "-o", "csv"])
        .output()
        .unwrap();
    assert!(
        dump.status.success(),
        "nfdump: {}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let text = String::from_utf8_lossy(&dump.stdout);
    parse_and_check(&text, &fl);
    let _ = std::fs::remove_dir_all(&dir);
}

fn parse_and_check(text: &str, fl: &[Flow]) {
    // the header line names the columns (nfdump 1.6 and 1.7 differ)
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = loop {
        let l = lines.next().expect("no csv header in nfdump output");
        if l.starts_with("ts,") {
            break l.split(',').collect();
        }
    };
    let col = |n: &str| {
        header
            .iter()
            .position(|h| *h == n)
            .unwrap_or_else(|| panic!("no column {n}"))
    };
    let (sa, da, sp, dp, pr, td, ipkt, ibyt) = (
        col("sa"),
        col("da"),
        col("sp"),
        col("dp"),
        col("pr"),
        col("td"),
        col("ipkt"),
        col("ibyt"),
    );
    let mut got = BTreeMap::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').map(str::trim).collect();
        if f.len() < header.len() || f[0] == "Summary" || f[0].starts_with("flows") {
            continue;
        }
        got.insert(
            (
                f[sa].to_string(),
                f[da].to_string(),
                f[sp].to_string(),
                f[dp].to_string(),
                f[pr].to_string(),
            ),
            (f[ipkt].to_string(), f[ibyt].to_string(), f[td].to_string()),
        );
    }
    let ip = |a: [u8; 4]| format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3]);
    assert_eq!(got.len(), fl.len(), "flows nfdump shows: {got:?}");
    for f in fl {
        let key = (
            ip(f.src),
            ip(f.dst),
            f.sport.to_string(),
            f.dport.to_string(),
            if f.proto == 6 { "TCP" } else { "UDP" }.to_string(),
        );
        let (pk, by, dur) = got
            .get(&key)
            .unwrap_or_else(|| panic!("flow {key:?} missing: {got:?}"));
        assert_eq!(pk, &f.sizes.len().to_string(), "packets of {key:?}");
        assert_eq!(
            by,
            &f.sizes.iter().sum::<usize>().to_string(),
            "bytes of {key:?}"
        );
        let want = format!("{:.3}", (f.sizes.len() - 1) as f64 * 2.5);
        assert_eq!(dur, &want, "duration of {key:?}");
    }
}
