//! Click's classic two-interface IP router (conf/make-ip-conf.pl, the SOSP
//! paper's router: ARP, IP forwarding with every RFC 1812 check, ICMP
//! errors), unchanged but for the devices: frames are injected
//! where FromDevice would push them (behind a HostEtherFilter that sets the
//! packet type annotation, as FromDevice does) and collected where
//! Queue -> ToDevice would take them. Every output frame is checked byte
//! for byte against frames built by hand.

mod common;
mod frames;

use common::*;
use frames::*;

const R0: Mac = [0x00, 0x00, 0xc0, 0x00, 0x00, 0x01];
const R1: Mac = [0x00, 0x00, 0xc0, 0x00, 0x01, 0x01];
const H1: Mac = [0x52, 0x54, 0, 0, 0, 0x02];
const H2: Mac = [0x52, 0x54, 0, 0, 0x01, 0x05];
const GW: Mac = [0x52, 0x54, 0, 0, 0, 0xfe];
const R0_IP: Ip4 = [10, 0, 0, 1];
const R1_IP: Ip4 = [192, 168, 1, 1];
const H1_IP: Ip4 = [10, 0, 0, 2];
const H2_IP: Ip4 = [192, 168, 1, 5];
const GW_IP: Ip4 = [10, 0, 0, 254];

/// The per-interface forwarding path of make-ip-conf.pl (with PaintTee, as
/// in Click's SOSP router; the script's CheckPaint predates CheckPaint's
/// current meaning).
fn forwarding(i: usize, ip: &str) -> String {
    let o = i + 1;
    format!(
        "rt[{o}] -> db{i} :: DropBroadcasts
             -> cp{i} :: PaintTee({o})
             -> gio{i} :: IPGWOptions({ip})
             -> FixIPSrc({ip})
             -> dt{i} :: DecIPTTL
             -> fr{i} :: IPFragmenter(1500)
             -> [0]arpq{i};
         dt{i}[1] -> ICMPError({ip}, timeexceeded) -> rt;
         fr{i}[1] -> ICMPError({ip}, unreachable, needfrag) -> rt;
         gio{i}[1] -> ICMPError({ip}, parameterproblem) -> rt;
         cp{i}[1] -> ICMPError({ip}, redirect, host) -> rt;
         c{i}[3] -> Print(xx{i}) -> Discard;
        "
    )
}

fn interface(i: usize, ip: &str, eth: &str) -> String {
    format!(
        "c{i} :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
         Idle -> in{i} :: HostEtherFilter({eth}, false, false) -> c{i};
         out{i} :: Collect;
         arpq{i} :: ARPQuerier({ip}, {eth});
         c{i}[1] -> t;
         t[{i}] -> [1]arpq{i};
         arpq{i} -> out{i};
         ar{i} :: ARPResponder({ip} {eth});
         c{i}[0] -> ar{i} -> out{i};
        "
    )
}

fn router_config() -> String {
    router_config_from(
        "// eth0 10.0.0.1 00:00:C0:00:00:01
         // eth1 192.168.1.1 00:00:C0:00:01:01",
        ["10.0.0.1", "192.168.1.1"],
        ["00:00:C0:00:00:01", "00:00:C0:00:01:01"],
        "10.0.0.1/32 0, 10.0.0.255/32 0, 10.0.0.0/32 0,
         192.168.1.1/32 0, 192.168.1.255/32 0, 192.168.1.0/32 0,
         10.0.0.0/24 1, 192.168.1.0/24 2,
         255.255.255.255/32 0, 0.0.0.0/32 0,
         0.0.0.0/0 10.0.0.254 1",
        "10.0.0.1/24 192.168.1.1/24",
    )
}

/// The same router written with AddressInfo names, as Click's
/// make-ip-conf.pl writes it: the interfaces' addresses, prefixes and
/// Ethernet addresses are named once and every element refers to them
/// (`eth0`, `eth0:ip`, `eth0:ipnet`, `eth0:bcast`, `eth0:eth`, `gw:ip`).
fn router_config_named() -> String {
    router_config_from(
        "AddressInfo(eth0 10.0.0.1 10.0.0.0/24 00:00:C0:00:00:01,
                     eth1 192.168.1.1/24 00:00:C0:00:01:01);
         AddressInfo(gw 10.0.0.254, net0 10.0.0.0, net1 192.168.1.0,
                     anywhere 0.0.0.0/0, nobody 0.0.0.0);",
        ["eth0", "eth1:ip"],
        ["eth0", "eth1:eth"],
        "eth0/32 0, eth0:bcast/32 0, net0/32 0,
         eth1:ip/32 0, eth1:bcast/32 0, net1/32 0,
         eth0:ipnet 1, eth1:net 2,
         255.255.255.255/32 0, nobody/32 0,
         anywhere gw 1",
        "eth0/24 eth1/24",
    )
}

fn router_config_from(
    names: &str,
    ip: [&str; 2],
    eth: [&str; 2],
    routes: &str,
    ifs: &str,
) -> String {
    format!(
        "{names}
         tol :: Collect;
         t :: Tee(3);
         t[2] -> tol;
         {if0}
         {if1}
         rt :: StaticIPLookup({routes});
         // Local delivery: answer pings, hand the rest to the host.
         rt[0] -> local :: IPClassifier(icmp type echo, -);
         local[0] -> ICMPPingResponder -> rt;
         local[1] -> EtherEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2) -> tol;
         ip :: Strip(14)
             -> CheckIPHeader(INTERFACES {ifs})
             -> GetIPAddress(16)
             -> rt;
         c0[2] -> Paint(1) -> ip;
         c1[2] -> Paint(2) -> ip;
         {f0}
         {f1}",
        if0 = interface(0, ip[0], eth[0]),
        if1 = interface(1, ip[1], eth[1]),
        f0 = forwarding(0, ip[0]),
        f1 = forwarding(1, ip[1]),
    )
}

fn query(from_mac: Mac, from_ip: Ip4, want: Ip4) -> Vec<u8> {
    eth(
        BCAST,
        from_mac,
        0x0806,
        &arp(1, from_mac, from_ip, [0; 6], want),
    )
}

fn udp_ip(src: Ip4, dst: Ip4, ttl: u8, id: u16) -> Ip {
    Ip::new(
        src,
        dst,
        17,
        &udp(5000 + id, 53, &id.to_be_bytes().repeat(9)),
    )
    .ttl(ttl)
    .id(id)
}

struct Outs {
    out0: Vec<Vec<u8>>,
    out1: Vec<Vec<u8>>,
    tol: Vec<Vec<u8>>,
}

/// Injects `frames` on interface `i` and returns (and forgets) what came out.
fn send(r: &TestRouter, i: usize, frames: &[Vec<u8>]) -> Outs {
    r.inject(&format!("in{i}"), 0, frames);
    let o = Outs {
        out0: collected_data("out0"),
        out1: collected_data("out1"),
        tol: collected_data("tol"),
    };
    clear_collected();
    o
}

#[test]
fn classic_ip_router() {
    classic_ip_router_on(&router_config());
}

/// Written with AddressInfo names, the router behaves identically: every
/// frame of the literal configuration's run, byte for byte.
#[test]
fn classic_ip_router_with_address_info() {
    classic_ip_router_on(&router_config_named());
}

fn classic_ip_router_on(config: &str) {
    clear_collected();
    let r = router(config);

    // 1. ARP requests for the router's addresses are answered on the
    //    interface they came from; others are ignored.
    let o = send(
        &r,
        0,
        &[
            arp_request(H1, H1_IP, R0_IP),
            arp_request(H1, H1_IP, [10, 0, 0, 77]),
        ],
    );
    assert_eq!(o.out0, vec![arp_reply(R0, R0_IP, H1, H1_IP)]);
    assert!(o.out1.is_empty() && o.tol.is_empty());
    let o = send(&r, 1, &[arp_request(H2, H2_IP, R1_IP)]);
    assert_eq!(o.out1, vec![arp_reply(R1, R1_IP, H2, H2_IP)]);
    assert!(o.out0.is_empty());

    // 2. H1 -> H2: the router does not know H2 yet, so it asks on eth1.
    let a = udp_ip(H1_IP, H2_IP, 64, 1);
    let o = send(&r, 0, &[eth(R0, H1, 0x0800, &a.bytes())]);
    assert_eq!(o.out1, vec![query(R1, R1_IP, H2_IP)]);
    assert!(o.out0.is_empty() && o.tol.is_empty());
    assert_eq!(r.read("arpq1.length"), "1");

    // 3. H2's reply releases the packet, TTL decremented, checksum updated;
    //    the host (tol) sees the reply too.
    let reply = arp_reply(H2, H2_IP, R1, R1_IP);
    let o = send(&r, 1, std::slice::from_ref(&reply));
    assert_eq!(
        o.out1,
        vec![eth(H2, R1, 0x0800, &a.clone().ttl(63).bytes())]
    );
    assert_eq!(o.tol, vec![reply]);
    assert!(o.out0.is_empty());

    // 4. H2 -> H1: query on eth0, then H1's reply releases it.
    let b = udp_ip(H2_IP, H1_IP, 30, 2);
    let o = send(&r, 1, &[eth(R1, H2, 0x0800, &b.bytes())]);
    assert_eq!(o.out0, vec![query(R0, R0_IP, H1_IP)]);
    let o = send(&r, 0, &[arp_reply(H1, H1_IP, R0, R0_IP)]);
    assert_eq!(
        o.out0,
        vec![eth(H1, R0, 0x0800, &b.clone().ttl(29).bytes())]
    );

    // 5. Known neighbours: straight through in both directions.
    let c = udp_ip(H1_IP, H2_IP, 2, 3);
    let o = send(&r, 0, &[eth(R0, H1, 0x0800, &c.bytes())]);
    assert_eq!(o.out1, vec![eth(H2, R1, 0x0800, &c.clone().ttl(1).bytes())]);
    assert!(o.out0.is_empty());

    // 6. TTL 1 from H1 to H2: eth1's DecIPTTL expires it; its ICMPError
    //    (source 192.168.1.1, TTL 200, IP ID 1) quotes the whole packet and
    //    is routed back to H1, where eth0's FixIPSrc makes the source
    //    10.0.0.1 and DecIPTTL takes it to 199.
    let d = udp_ip(H1_IP, H2_IP, 1, 4);
    let o = send(&r, 0, &[eth(R0, H1, 0x0800, &d.bytes())]);
    let te = Ip::new(R0_IP, H1_IP, 1, &icmp(11, 0, [0; 4], &d.bytes()))
        .ttl(199)
        .id(1);
    assert_eq!(o.out0, vec![eth(H1, R0, 0x0800, &te.bytes())]);
    assert!(o.out1.is_empty());
    assert_eq!(r.read("dt1.drops"), "1");

    // 7. Pings to either router address are answered from that address.
    let ping = |dst: Ip4, seq: u16| {
        Ip::new(H1_IP, dst, 1, &echo(0x77, seq, b"abcdefghijklmnop"))
            .ttl(64)
            .id(0x5500 + seq)
    };
    let pong = |src: Ip4, seq: u16| {
        let mut rest = [0, 0x77, 0, 0];
        rest[2..].copy_from_slice(&seq.to_be_bytes());
        Ip::new(src, H1_IP, 1, &icmp(0, 0, rest, b"abcdefghijklmnop"))
            .ttl(254)
            .id(0x5500 + seq)
    };
    let o = send(
        &r,
        0,
        &[
            eth(R0, H1, 0x0800, &ping(R0_IP, 1).bytes()),
            eth(R0, H1, 0x0800, &ping(R1_IP, 2).bytes()),
        ],
    );
    assert_eq!(
        o.out0,
        vec![
            eth(H1, R0, 0x0800, &pong(R0_IP, 1).bytes()),
            eth(H1, R0, 0x0800, &pong(R1_IP, 2).bytes())
        ]
    );
    assert!(o.out1.is_empty() && o.tol.is_empty());
    // ... and from H2 across the router.
    let p2 = Ip::new(H2_IP, R0_IP, 1, &echo(9, 9, b"xy")).id(7);
    let o = send(&r, 1, &[eth(R1, H2, 0x0800, &p2.bytes())]);
    let r2 = Ip::new(R0_IP, H2_IP, 1, &icmp(0, 0, [0, 9, 0, 9], b"xy"))
        .ttl(254)
        .id(7);
    assert_eq!(o.out1, vec![eth(H2, R1, 0x0800, &r2.bytes())]);

    // 8. H1 -> 8.8.8.8: routed back out of eth0 via 10.0.0.254, so PaintTee
    //    asks for a redirect (gateway 10.0.0.254, quoting the packet as it
    //    arrived). The engine defers the error's re-entry into the busy
    //    routing table until the original packet's path has finished, so
    //    the query for the gateway leaves first (Click, recursing, would
    //    send the redirect first).
    let e = udp_ip(H1_IP, [8, 8, 8, 8], 64, 5);
    let o = send(&r, 0, &[eth(R0, H1, 0x0800, &e.bytes())]);
    let redirect = Ip::new(R0_IP, H1_IP, 1, &icmp(5, 1, GW_IP, &e.bytes()))
        .ttl(199)
        .id(1);
    assert_eq!(
        o.out0,
        vec![
            query(R0, R0_IP, GW_IP),
            eth(H1, R0, 0x0800, &redirect.bytes())
        ]
    );
    let o = send(&r, 0, &[arp_reply(GW, GW_IP, R0, R0_IP)]);
    assert_eq!(
        o.out0,
        vec![eth(GW, R0, 0x0800, &e.clone().ttl(63).bytes())]
    );

    // 9. Local broadcast: delivered to the host, not forwarded.
    let f = udp_ip(H1_IP, [10, 0, 0, 255], 64, 6);
    let o = send(&r, 0, &[eth(BCAST, H1, 0x0800, &f.bytes())]);
    assert_eq!(o.tol, vec![eth([2; 6], [1; 6], 0x0800, &f.bytes())]);
    assert!(o.out0.is_empty() && o.out1.is_empty());

    // 10. A link-level broadcast for H2 is not forwarded (DropBroadcasts);
    //     nor are packets with bad IP headers or sources (CheckIPHeader).
    let g = udp_ip(H1_IP, H2_IP, 64, 7);
    let mut bad_sum = g.bytes();
    bad_sum[10] ^= 0xff;
    let o = send(
        &r,
        0,
        &[
            eth(BCAST, H1, 0x0800, &g.bytes()),
            eth(R0, H1, 0x0800, &bad_sum),
            eth(
                R0,
                H1,
                0x0800,
                &udp_ip([10, 0, 0, 255], H2_IP, 64, 8).bytes(),
            ),
        ],
    );
    assert!(o.out0.is_empty() && o.out1.is_empty() && o.tol.is_empty());
    assert_eq!(r.read("db1.drops"), "1");

    // 11. ICMP errors are never sent about ICMP errors: the time-exceeded
    //     message of step 6, sent back in with TTL 1, just dies.
    let h = Ip::new(H1_IP, H2_IP, 1, &icmp(11, 0, [0; 4], &d.bytes())).ttl(1);
    let o = send(&r, 0, &[eth(R0, H1, 0x0800, &h.bytes())]);
    assert!(o.out0.is_empty() && o.out1.is_empty());
    assert_eq!(r.read("dt1.drops"), "2");

    // 12. Other ethertypes are printed and dropped.
    let o = send(&r, 0, &[eth(R0, H1, 0x88cc, &[0u8; 46])]);
    assert!(o.out0.is_empty() && o.out1.is_empty() && o.tol.is_empty());
    assert!(
        r.stderr()
            .contains("xx0:   60 | 0000c000 00015254 00000002 88cc0000"),
        "{}",
        r.stderr()
    );

    // 13. Too big for eth1's 1500-byte MTU: two fragments (1480 data bytes,
    //     then the remaining 120), TTL decremented before fragmenting.
    let big = Ip::new(H1_IP, H2_IP, 17, &udp(7, 7, &[0x5a; 1592])).id(0x0b16);
    let bp = big.bytes()[20..].to_vec();
    assert_eq!(bp.len(), 1600);
    let o = send(&r, 0, &[eth(R0, H1, 0x0800, &big.bytes())]);
    let mut f1 = big.clone().ttl(63).frag(0x2000);
    f1.payload = bp[..1480].to_vec();
    let mut f2 = big.clone().ttl(63).frag(1480 / 8);
    f2.payload = bp[1480..].to_vec();
    assert_eq!(
        o.out1,
        vec![
            eth(H2, R1, 0x0800, &f1.bytes()),
            eth(H2, R1, 0x0800, &f2.bytes())
        ]
    );
    assert_eq!(f1.bytes().len(), 1500);
    assert!(o.out0.is_empty());

    // 14. The same with DF: "fragmentation needed" back to H1 (next-hop MTU
    //     0: the classic configuration gives no PMTU), quoting the first 548
    //     bytes of the packet as the fragmenter saw it (TTL 63).
    let df = big.clone().frag(0x4000);
    let o = send(&r, 0, &[eth(R0, H1, 0x0800, &df.bytes())]);
    let seen = df.clone().ttl(63).bytes();
    let nf = Ip::new(R0_IP, H1_IP, 1, &icmp(3, 4, [0; 4], &seen[..548]))
        .ttl(199)
        .id(1);
    assert_eq!(o.out0, vec![eth(H1, R0, 0x0800, &nf.bytes())]);
    assert!(o.out1.is_empty());

    // 15. Record Route: eth1's IPGWOptions records 192.168.1.1.
    let rr = udp_ip(H1_IP, H2_IP, 64, 9).options(&[7, 7, 4, 0, 0, 0, 0, 1]);
    let o = send(&r, 0, &[eth(R0, H1, 0x0800, &rr.bytes())]);
    let recorded = rr.clone().ttl(63).options(&[7, 7, 8, 192, 168, 1, 1, 1]);
    assert_eq!(o.out1, vec![eth(H2, R1, 0x0800, &recorded.bytes())]);

    // 16. A Record Route pointer below 4 is a parameter problem: the error
    //     points at the pointer byte (offset 22) and quotes the packet as
    //     it arrived.
    let bad_rr = udp_ip(H1_IP, H2_IP, 64, 10).options(&[7, 7, 3, 0, 0, 0, 0, 1]);
    let o = send(&r, 0, &[eth(R0, H1, 0x0800, &bad_rr.bytes())]);
    let pp = Ip::new(
        R0_IP,
        H1_IP,
        1,
        &icmp(12, 0, [22, 0, 0, 0], &bad_rr.bytes()),
    )
    .ttl(199)
    .id(1);
    assert_eq!(o.out0, vec![eth(H1, R0, 0x0800, &pp.bytes())]);
    assert!(o.out1.is_empty());

    // The ARP tables hold what was learned. Through the Tee every querier
    // sees every reply, so both learned all three neighbours.
    let table = "192.168.1.5 1 52-54-00-00-01-05 0.000000\n10.0.0.2 1 52-54-00-00-00-02 0.000000\n10.0.0.254 1 52-54-00-00-00-FE 0.000000\n";
    assert_eq!(r.read("arpq0.table"), table);
    assert_eq!(r.read("arpq1.table"), table);
    assert_eq!(r.read("arpq0.queries"), "2");
    assert_eq!(r.read("arpq1.queries"), "1");
    assert_eq!(r.read("arpq0.drops"), "0");
}

#[test]
fn painttee_copies_one_paint() {
    clear_collected();
    let r = router(
        "Idle -> p :: Paint(3) -> pt :: PaintTee(3) -> a :: Collect; pt[1] -> b :: Collect;
         Idle -> q :: Paint(4) -> pt;",
    );
    r.inject("p", 0, &[vec![1, 2, 3]]);
    r.inject("q", 0, &[vec![4, 5]]);
    assert_eq!(collected_data("a"), vec![vec![1, 2, 3], vec![4, 5]]);
    assert_eq!(collected_data("b"), vec![vec![1, 2, 3]]);
    assert_eq!(collected("b")[0].anno.paint(), 3);
    assert_eq!(r.read("pt.color"), "3");
    r.write("pt.color", "4").unwrap();
    r.inject("q", 0, &[vec![6]]);
    assert_eq!(collected_data("b").len(), 2);
}

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// Truncated, mutated and random frames through every element of the arp,
/// icmp and VLAN families (and the whole router): no panics, and the
/// routers keep working.
#[test]
fn no_panics_on_bad_frames() {
    let mut rng = Lcg(0xa5a5);
    let mut inputs: Vec<Vec<u8>> = Vec::new();
    for pkt in pcap_packets("mixed.pcap") {
        for n in 0..=pkt.len().min(80) {
            inputs.push(pkt[..n].to_vec());
        }
        for _ in 0..20 {
            let mut m = pkt.clone();
            for _ in 0..4 {
                if m.is_empty() {
                    break;
                }
                let i = rng.next() as usize % m.len();
                m[i] = rng.next() as u8;
            }
            inputs.push(m);
        }
    }
    for _ in 0..300 {
        let n = rng.next() as usize % 120;
        inputs.push((0..n).map(|_| rng.next() as u8).collect());
    }
    let pipelines = [
        "Idle -> src :: Null -> c :: Classifier(12/0806, 12/0800, -);
         c[0] -> ch :: CheckARPHeader(14) -> ARPPrint(TIMESTAMP false, ETHER true) -> ar :: ARPResponder(10.0.0.2 1:2:3:4:5:6) -> Discard;
         ch[1] -> Discard; ar[1] -> [1]q :: ARPQuerier(10.0.0.1/8, 1:2:3:4:5:7, CAPACITY 8) -> Discard;
         c[1] -> Strip(14) -> MarkIPHeader -> GetIPAddress(16) -> [0]q;
         c[2] -> ARPPrint -> Discard;",
        "Idle -> src :: Null -> Strip(14) -> MarkIPHeader -> ck :: CheckICMPHeader -> ICMPPingResponder -> e :: ICMPError(10.0.0.1, parameterproblem) -> EnsureEther -> Discard;
         ck[1] -> ICMPError(10.0.0.1, redirect) -> Discard;",
        "Idle -> src :: Null -> MarkIPHeader(14) -> ICMPError(10.0.0.1, unreachable, needfrag, MTU 40) -> Discard;",
        "Idle -> src :: Null -> VLANDecap -> VLANEncap(ANNO) -> VLANEncap(VLAN_ID 5) -> VLANDecap -> EnsureEther -> Discard;",
    ];
    for cfg in pipelines {
        let r = router(cfg);
        r.inject("src", 0, &inputs);
        r.run();
    }
    let r = router(&router_config());
    r.inject("in0", 0, &inputs);
    r.inject("in1", 0, &inputs);
    clear_collected();
    // Still answers ARP afterwards.
    r.inject("in0", 0, &[arp_request(H1, H1_IP, R0_IP)]);
    assert_eq!(
        collected_data("out0"),
        vec![arp_reply(R0, R0_IP, H1, H1_IP)]
    );
    r.run();
}
