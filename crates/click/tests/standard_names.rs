//! AddressInfo and PortInfo: names for addresses and ports in every
//! element's arguments and handlers, scoped by compound elements.

mod common;
mod frames;

use click::prelude::*;
use common::*;
use frames::*;

#[test]
fn names_in_arguments_and_handlers() {
    clear_collected();
    let r = router(
        "AddressInfo(eth0 10.0.0.1 10.0.0.0/24 00:00:c0:00:00:01, gw 10.0.0.254 52:54:00:00:00:fe);
         Idle -> s :: SetIPAddress(gw) -> a :: Collect;
         Idle -> e :: EtherEncap(0x0800, eth0, gw) -> b :: Collect;
         Idle -> rt :: RadixIPLookup(eth0:ipnet 0, 0/0 gw 1, eth0:bcast 0) -> c :: Collect;
         rt[1] -> d :: Collect;",
    );
    assert_eq!(r.read("s.addr"), "10.0.0.254");
    r.inject("e", 0, &[vec![0xaa; 4]]);
    let mut want = vec![0x52, 0x54, 0, 0, 0, 0xfe, 0, 0, 0xc0, 0, 0, 1, 8, 0];
    want.extend_from_slice(&[0xaa; 4]);
    assert_eq!(collected_data("b"), vec![want]);
    // handlers take names too
    r.write("s.addr", "eth0:ip").unwrap();
    assert_eq!(r.read("s.addr"), "10.0.0.1");
    r.write("e.dst", "eth0").unwrap();
    assert_eq!(r.read("e.dst"), "00-00-C0-00-00-01");
    assert!(r.write("s.addr", "nosuch").is_err());
    assert_eq!(r.router.read_handler_param("rt.lookup", "gw").unwrap(), "0");
    assert_eq!(
        r.router.read_handler_param("rt.lookup", "8.8.8.8").unwrap(),
        "1 10.0.0.254"
    );
    r.write("rt.add", "gw/32 1").unwrap();
    assert_eq!(r.router.read_handler_param("rt.lookup", "gw").unwrap(), "1");
    // the `bcast` route is a host route to 10.0.0.255
    assert_eq!(
        r.router
            .read_handler_param("rt.lookup", "eth0:bcast")
            .unwrap(),
        "0"
    );
}

/// Click's rule for arguments that take an address or a prefix: a bare
/// name that is both means the address (a host route, ARPQuerier's IP with
/// an all-ones broadcast), `NAME:ipnet` the prefix.
#[test]
fn address_or_prefix_prefers_the_address() {
    let r = router(
        "AddressInfo(eth0 10.0.0.1 10.0.0.0/24 00:00:c0:00:00:01, eth1 2.0.0.1/8 00:00:c0:00:00:02);
         Idle -> q0 :: ARPQuerier(eth0, eth0) -> Discard; Idle -> [1]q0;
         Idle -> q1 :: ARPQuerier(eth1:ipnet, eth1) -> Discard; Idle -> [1]q1;
         Idle -> rt :: StaticIPLookup(eth0 0, eth0:ipnet 1) -> Discard; rt[1] -> Discard;",
    );
    assert_eq!(r.read("q0.ipaddr"), "10.0.0.1");
    assert_eq!(r.read("q0.broadcast"), "255.255.255.255");
    // `2.0.0.1/8` names both the address and the prefix (with host bits)
    assert_eq!(r.read("q1.ipaddr"), "2.0.0.1");
    assert_eq!(r.read("q1.broadcast"), "2.255.255.255");
    assert_eq!(
        r.read("rt.table"),
        "10.0.0.1/32\t\t-\t\t0\n10.0.0.0/24\t\t-\t\t1\n"
    );
}

#[test]
fn compound_scopes() {
    let r = router(
        "AddressInfo(a 1.1.1.1, b 3.3.3.3);
         elementclass C {
             AddressInfo(a 2.2.2.2);
             input -> s :: SetIPAddress(a) -> t :: SetIPAddress(b) -> output
         }
         elementclass D { input -> c :: C -> output }
         Idle -> c :: C -> d :: D -> s :: SetIPAddress(a) -> Discard;",
    );
    assert_eq!(r.read("c/s.addr"), "2.2.2.2");
    assert_eq!(r.read("d/c/s.addr"), "2.2.2.2");
    // names from outside are seen inside
    assert_eq!(r.read("c/t.addr"), "3.3.3.3");
    // names from inside are not seen outside
    assert_eq!(r.read("s.addr"), "1.1.1.1");
    assert!(try_router(
        "elementclass C { AddressInfo(inner 2.2.2.2); input -> output }
         Idle -> C -> SetIPAddress(inner) -> Discard;"
    )
    .is_err());
}

#[test]
fn ipfilter_names() {
    clear_collected();
    let r = router(
        "AddressInfo(me 10.0.0.1 10.0.0.0/24, far 192.168.0.0/16);
         PortInfo(myport 7777, tport 99/tcp);
         Idle -> m :: MarkIPHeader -> f :: IPFilter(0 src host me, 1 dst net far, 2 dst udp port myport,
                               3 tcp port tport, 4 dst net me, drop all);
         f[0] -> o0 :: Collect; f[1] -> o1 :: Collect; f[2] -> o2 :: Collect;
         f[3] -> o3 :: Collect; f[4] -> o4 :: Collect;",
    );
    let pkt = |src: Ip4, dst: Ip4, proto: u8, dport: u16| {
        Ip::new(src, dst, proto, &udp(1, dport, b"x")).bytes()
    };
    r.inject(
        "m",
        0,
        &[
            pkt([10, 0, 0, 1], [8, 8, 8, 8], 17, 1),
            pkt([8, 8, 8, 8], [192, 168, 3, 4], 17, 1),
            pkt([8, 8, 8, 8], [9, 9, 9, 9], 17, 7777),
            pkt([8, 8, 8, 8], [9, 9, 9, 9], 6, 99),
            pkt([8, 8, 8, 8], [9, 9, 9, 9], 17, 99),
            pkt([8, 8, 8, 8], [10, 0, 0, 9], 17, 1),
        ],
    );
    for (o, n) in [("o0", 1), ("o1", 1), ("o2", 1), ("o3", 1), ("o4", 1)] {
        assert_eq!(collected(o).len(), n, "{o}");
    }
    // PortInfo names are also IPClassifier's
    let r = router(
        "PortInfo(myport 7777/udp);
         Idle -> m :: MarkIPHeader -> c :: IPClassifier(udp port myport, -) -> a :: Collect;
         c[1] -> b :: Collect;",
    );
    clear_collected();
    r.inject("m", 0, &[pkt([1, 1, 1, 1], [2, 2, 2, 2], 17, 7777)]);
    assert_eq!(collected("a").len(), 1);
    // a TCP-only name is no UDP port
    assert!(
        try_router("PortInfo(t 5/tcp); Idle -> IPFilter(allow udp port t) -> Discard;").is_err()
    );
}

#[test]
fn udpipencap_ports_and_addresses() {
    clear_collected();
    let r = router(
        "AddressInfo(src 1.0.0.1, dst 2.0.0.2);
         PortInfo(dns 53, mine 1234/udp);
         Idle -> u :: UDPIPEncap(src, mine, dst, dns) -> o :: Collect;",
    );
    r.inject("u", 0, &[b"hello".to_vec()]);
    let got = collected_data("o");
    assert_eq!(got.len(), 1);
    let ip = &got[0];
    assert_eq!(&ip[12..20], &[1, 0, 0, 1, 2, 0, 0, 2]);
    assert_eq!(&ip[20..24], &[0x04, 0xd2, 0, 53]);
    assert_eq!(r.read("u.sport"), "1234");
    r.write("u.dport", "www").unwrap();
    assert_eq!(r.read("u.dport"), "80");
}

fn config_errors(config: &str) -> Vec<String> {
    match try_router(config) {
        Ok(_) => panic!("configuration should fail"),
        Err(e) => e,
    }
}

#[test]
fn errors() {
    let e = config_errors("AddressInfo(x 1.2.3.4 bogus, y); Idle -> Discard;");
    assert_eq!(
        e,
        vec![
            "test.click:1: While configuring 'AddressInfo@1 :: AddressInfo':".to_string(),
            "  'bogus' is not a recognizable address".to_string(),
            "  expected 'NAME [ADDRS]'".to_string(),
        ]
    );
    let e = config_errors("PortInfo(x y); Idle -> Discard;");
    assert!(e[1].contains("expected 'NAME PORT/PROTO'"), "{e:?}");
    let e = config_errors("Idle -> SetIPAddress(eth0) -> Discard;");
    assert!(e[1].contains("IPADDR: expected IP address"), "{e:?}");
    // a name of the wrong kind
    let e = config_errors("AddressInfo(n 10.0.0.0/8); Idle -> SetIPAddress(n) -> Discard;");
    assert!(e[1].contains("IPADDR: expected IP address"), "{e:?}");
    // names may be used before the AddressInfo that defines them
    assert!(
        try_router("Idle -> SetIPAddress(late) -> Discard; AddressInfo(late 1.2.3.4);").is_ok()
    );
}

/// A router built from part of a configuration (as each thread's under
/// `-j N`) sees the names of the whole when the host passes them.
#[test]
fn names_from_the_host() {
    let whole = click::lang::parse_config(
        "AddressInfo(a 1.2.3.4); Idle -> s :: SetIPAddress(a) -> Discard;",
        "t.click",
        &[],
    )
    .unwrap();
    let names = click::router::name_table(&whole);
    let r = try_router_with(
        "Idle -> s :: SetIPAddress(a) -> Discard;",
        RouterOptions {
            names: Some(names),
            ..RouterOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(r.read("s.addr"), "1.2.3.4");
    assert!(try_router("Idle -> s :: SetIPAddress(a) -> Discard;").is_err());
}
