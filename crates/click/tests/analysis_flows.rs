//! The flow monitor: IPFIXExport's exact IPFIX bytes, timeouts on the
//! virtual clock, the bounded table, malformed packets; AggregateIPFlows'
//! numbering and timeouts; AggregateCounter's dump.

mod common;
use click::packet::{AGGREGATE_ANNO_OFFSET, PAINT_ANNO_OFFSET};
use click::prelude::*;
use common::*;

fn udp(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, total: usize) -> Vec<u8> {
    let mut p = vec![0u8; total];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[8] = 64;
    p[9] = 17;
    p[12..16].copy_from_slice(&src);
    p[16..20].copy_from_slice(&dst);
    p[20..22].copy_from_slice(&sport.to_be_bytes());
    p[22..24].copy_from_slice(&dport.to_be_bytes());
    p
}

const A: [u8; 4] = [10, 0, 0, 1];
const B: [u8; 4] = [10, 0, 0, 2];

fn monitor(kw: &str) -> TestRouter {
    clear_collected();
    router(&format!(
        "Idle -> m :: MarkIPHeader -> f :: IPFIXExport({kw}) -> pass :: Collect; f[1] -> out :: Collect;"
    ))
}

/// The data records of IPFIX messages (template 256), checking the set
/// framing on the way.
fn records(msgs: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for m in msgs {
        assert_eq!(&m[..2], &[0, 10]);
        assert_eq!(usize::from(u16::from_be_bytes([m[2], m[3]])), m.len());
        let mut o = 16;
        while o < m.len() {
            let id = u16::from_be_bytes([m[o], m[o + 1]]);
            let len = usize::from(u16::from_be_bytes([m[o + 2], m[o + 3]]));
            if id == 256 {
                assert_eq!((len - 4) % 45, 0);
                out.extend(m[o + 4..o + len].chunks(45).map(|c| c.to_vec()));
            } else {
                assert_eq!(id, 2);
            }
            o += len;
        }
        assert_eq!(o, m.len());
    }
    out
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn ipfix_message_bytes_for_one_flow() {
    let r = monitor("OBSERVATION_DOMAIN 7");
    r.inject(
        "m",
        0,
        &[udp(A, B, 1000, 2000, 100), udp(A, B, 1000, 2000, 60)],
    );
    assert_eq!(r.read("f.flows"), "1");
    r.write("f.flush", "").unwrap();
    let msgs = collected_data("out");
    assert_eq!(msgs.len(), 1);
    // the virtual clock starts at 1e9 s = 0x3B9ACA00; packets without a
    // timestamp take the clock's time: 1e12 ms = 0xE8D4A51000
    let want = hex("000a 006d 3b9aca00 00000000 00000007
         0002 002c 0100 0009
         0008 0004 000c 0004 0007 0002 000b 0002 0004 0001
         0002 0008 0001 0008 0098 0008 0099 0008
         0100 0031
         0a000001 0a000002 03e8 07d0 11
         0000000000000002 00000000000000a0
         000000e8d4a51000 000000e8d4a51000");
    assert_eq!(msgs[0], want);
    assert_eq!(r.read("f.exported"), "1");
    assert_eq!(r.read("f.template_sent"), "1");
    assert_eq!(r.read("f.sequence"), "1");
    assert_eq!(r.read("f.flows"), "0");
    assert_eq!(collected("pass").len(), 2, "packets pass through");
}

#[test]
fn ipfix_inactive_and_active_timeouts() {
    let r = monitor("INACTIVE_TIMEOUT 5s, ACTIVE_TIMEOUT 20s");
    let t0 = r.clock.now();
    // one packet every 2 s for 30 s: the active timeout splits the flow
    for i in 0..15 {
        r.clock.set(t0.add_nsec(i * 2_000_000_000));
        r.inject("m", 0, &[udp(A, B, 1, 2, 40)]);
    }
    // the idle flow ends 5 s after its last packet (on a 1 s check)
    r.run();
    assert_eq!(r.read("f.flows"), "0");
    assert_eq!(r.read("f.exported"), "2");
    let last = t0.add_nsec(28_000_000_000);
    let ended = r.clock.now().nsec() - last.nsec();
    assert!(
        (5_000_000_000..=6_000_000_000).contains(&ended),
        "exported {ended} ns after"
    );
    let recs = records(&collected_data("out"));
    assert_eq!(recs.len(), 2);
    let rec = |k: usize| recs[k].as_slice();
    let u64_at = |b: &[u8], o: usize| u64::from_be_bytes(b[o..o + 8].try_into().unwrap());
    let t0ms = (t0.nsec() / 1_000_000) as u64;
    assert_eq!(u64_at(rec(0), 13), 10, "packets 0 s..18 s");
    assert_eq!(u64_at(rec(0), 21), 400);
    assert_eq!(u64_at(rec(0), 29), t0ms);
    assert_eq!(u64_at(rec(0), 37), t0ms + 18_000);
    assert_eq!(u64_at(rec(1), 13), 5, "packets 20 s..28 s");
    assert_eq!(u64_at(rec(1), 29), t0ms + 20_000);
    assert_eq!(u64_at(rec(1), 37), t0ms + 28_000);
}

#[test]
fn ipfix_table_is_bounded_and_templates_repeat() {
    let r = monitor("CAPACITY 2, MTU 110, TEMPLATE_INTERVAL 0");
    r.inject(
        "m",
        0,
        &[
            udp(A, B, 1, 1, 40),
            udp(A, B, 2, 2, 40),
            udp(A, B, 3, 3, 40),
            udp(A, B, 1, 1, 40),
        ],
    );
    // flow 1 was evicted for flow 3, then flow 2 for flow 1 again
    assert_eq!(r.read("f.evicted"), "2");
    assert_eq!(r.read("f.flows"), "2");
    r.write("f.flush", "").unwrap();
    let msgs = collected_data("out");
    assert_eq!(msgs.len(), 4, "one record per 110-byte message");
    for (i, m) in msgs.iter().enumerate() {
        assert_eq!(m.len(), 109);
        assert_eq!(
            &m[8..12],
            &(i as u32).to_be_bytes(),
            "sequence numbers count records"
        );
        assert_eq!(&m[16..18], &[0, 2], "template in every message");
    }
    assert_eq!(r.read("f.template_sent"), "4");

    // by default the template goes once per interval
    let r = monitor("MTU 110");
    r.inject("m", 0, &[udp(A, B, 1, 1, 40), udp(A, B, 2, 2, 40)]);
    r.write("f.flush", "").unwrap();
    let msgs = collected_data("out");
    assert_eq!(msgs.len(), 2);
    assert_eq!(&msgs[0][16..18], &[0, 2]);
    assert_eq!(&msgs[1][16..18], &[1, 0], "data set only");
    assert_eq!(msgs[1].len(), 16 + 4 + 45);
    assert_eq!(r.read("f.template_sent"), "1");
}

#[test]
fn ipfix_malformed_packets_are_counted_not_fatal() {
    clear_collected();
    let r = router("Idle -> f :: IPFIXExport -> pass :: Collect; Idle -> m :: MarkIPHeader -> f; f[1] -> out :: Collect;");
    // no network header at all
    r.inject("f", 0, &[vec![0x45; 40]]);
    // too short for an IP header, a wrong version, a header length below 20
    let mut v6 = udp(A, B, 1, 1, 40);
    v6[0] = 0x65;
    let mut short_hl = udp(A, B, 1, 1, 40);
    short_hl[0] = 0x44;
    r.inject("m", 0, &[vec![0x45; 5], vec![0x45; 19], v6, short_hl]);
    // a header length past the end: counted, with no ports
    let mut long_hl = udp(A, B, 7, 7, 24);
    long_hl[0] = 0x4F;
    r.inject("m", 0, &[long_hl]);
    assert_eq!(r.read("f.dropped"), "5");
    assert_eq!(r.read("f.flows"), "1");
    assert_eq!(collected("pass").len(), 6, "every packet passes");
    r.write("f.flush", "").unwrap();
    let m = &collected_data("out")[0];
    assert_eq!(&m[64 + 8..64 + 12], &[0, 0, 0, 0], "ports 0");
}

#[test]
fn ipfix_bad_configurations() {
    for (kw, err) in [
        ("CAPACITY 0", "CAPACITY"),
        ("MTU 100", "MTU"),
        ("TEMPLATE_ID 255", "TEMPLATE_ID"),
        ("INACTIVE_TIMEOUT 0", "timeouts"),
    ] {
        let e = config_error(&format!(
            "Idle -> f :: IPFIXExport({kw}) -> Discard; f[1] -> Discard;"
        ));
        assert!(e.contains(err), "{kw}: {e}");
    }
}

#[test]
fn aggregateipflows_numbers_flows_and_times_out() {
    clear_collected();
    let r = router(
        "Idle -> m :: MarkIPHeader -> a :: AggregateIPFlows(UDP_TIMEOUT 2) -> out :: Collect; a[1] -> bad :: Collect;",
    );
    let t0 = r.clock.now();
    let send = |secs: i64, p: Vec<u8>| {
        let mut q = r.router.pool().make(DEFAULT_HEADROOM, &p, 0);
        q.set_timestamp(t0.add_nsec(secs * 1_000_000_000));
        r.router.inject("m", 0, q).unwrap();
    };
    send(0, udp(A, B, 5, 6, 40));
    send(1, udp(B, A, 6, 5, 40)); // reply: same flow, paint 1
    send(1, udp(A, B, 5, 7, 40)); // another flow
    send(10, udp(A, B, 5, 6, 40)); // after UDP_TIMEOUT: a new number
    send(10, vec![0x45, 0, 0, 20]); // truncated: output 1
    let seen: Vec<(u32, u8)> = collected("out")
        .iter()
        .map(|s| {
            (
                s.anno.u32_at(AGGREGATE_ANNO_OFFSET),
                s.anno.u8_at(PAINT_ANNO_OFFSET),
            )
        })
        .collect();
    assert_eq!(seen, [(1, 0), (1, 1), (2, 0), (3, 0)]);
    assert_eq!(collected("bad").len(), 1);
}

#[test]
fn aggregatecounter_text_dump() {
    clear_collected();
    let r = router("Idle -> ac :: AggregateCounter(BANNER '!hello') -> Discard;");
    for agg in [7u32, 1, 7, 0x8000_0000, 7] {
        let mut p = r.router.pool().make(DEFAULT_HEADROOM, &[0u8; 40], 0);
        p.anno_mut().set_u32_at(AGGREGATE_ANNO_OFFSET, agg);
        r.router.inject("ac", 0, p).unwrap();
    }
    assert_eq!(r.read("ac.nagg"), "3");
    assert_eq!(r.read("ac.count"), "5");
    r.write("ac.write_text_file", "-").unwrap();
    r.write("ac.write_ip_file", "-").unwrap();
    assert_eq!(
        r.stdout(),
        "!IPAggregate 1.0\n!hello\n!num_nonzero 3\n1 1\n7 3\n2147483648 1\n\
         !IPAggregate 1.0\n!hello\n!num_nonzero 3\n!ip\n0.0.0.1 1\n0.0.0.7 3\n128.0.0.0 1\n"
    );
    r.write("ac.freeze", "true").unwrap();
    let mut p = r.router.pool().make(DEFAULT_HEADROOM, &[0u8; 40], 0);
    p.anno_mut().set_u32_at(AGGREGATE_ANNO_OFFSET, 9);
    r.router.inject("ac", 0, p).unwrap();
    assert_eq!(r.read("ac.nagg"), "3", "frozen: no new aggregate");
    r.write("ac.clear", "").unwrap();
    assert_eq!(r.read("ac.count"), "0");
}

#[test]
fn aggregateip_fields() {
    let agg = |field: &str, p: Vec<u8>| -> Option<u32> {
        clear_collected();
        let r = router(&format!(
            "Idle -> m :: CheckIPHeader -> a :: AggregateIP({field}) -> out :: Collect; a[1] -> bad :: Collect;"
        ));
        r.inject("m", 0, &[p]);
        let out = collected("out");
        assert_eq!(out.len() + collected("bad").len(), 1);
        out.first().map(|s| s.anno.u32_at(AGGREGATE_ANNO_OFFSET))
    };
    let mut p = udp([18, 26, 4, 44], B, 1234, 53, 40);
    let c = click::wire::checksum::ip_checksum(&p[..20]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    assert_eq!(agg("ip src/8", p.clone()), Some(18));
    assert_eq!(
        agg("ip src/8, UNSHIFT_IP_ADDR true", p.clone()),
        Some(18 << 24)
    );
    assert_eq!(agg("ip dst", p.clone()), Some(0x0A00_0002));
    assert_eq!(agg("udp dport", p.clone()), Some(53));
    let e = config_error("Idle -> AggregateIP(sport) -> Discard");
    assert!(e.contains("expected 'HEADER"), "{e}");
    assert_eq!(agg("ip sport", p.clone()), Some(1234));
    assert_eq!(agg("tcp sport", p.clone()), None, "not TCP: output 1");
    assert_eq!(agg("ip ttl", p.clone()), Some(64));
    assert_eq!(
        agg("\"ip[8:2] & 0x3F0\"", p.clone()),
        Some((64 << 8 | 17) >> 4 & 0x3F)
    );
    assert_eq!(
        agg("payload [0:4]", p.clone()),
        Some(0),
        "payload: 12 zero bytes"
    );
}
