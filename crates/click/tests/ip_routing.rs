//! RadixIPLookup, DirectIPLookup, RangeIPLookup, LinearIPLookup and
//! StaticIPLookup on
//! router-in.pcap: overlapping prefixes, gateways, handlers, errors.

#[path = "ip_harness.rs"]
mod ip_harness;
use ip_harness::*;

const ROUTES: &[(&str, u32, u32, u32, i32)] = &[
    // (text, addr, prefix length, gateway, port)
    ("10.0.0.0/8 0", 0x0a00_0000, 8, 0, 0),
    ("10.0.0.0/24 1", 0x0a00_0000, 24, 0, 1),
    ("10.0.0.2/32 10.9.9.9 5", 0x0a00_0002, 32, 0x0a09_0909, 5),
    ("192.168/16 10.0.0.254 2", 0xc0a8_0000, 16, 0x0a00_00fe, 2),
    ("192.168.0.0/255.255.255.0 - 1", 0xc0a8_0000, 24, 0, 1),
    ("172.16.0.0/12 3", 0xac10_0000, 12, 0, 3),
    ("224.0.0.0/4 6", 0xe000_0000, 4, 0, 6),
    ("0.0.0.0/0 10.0.0.1 4", 0, 0, 0x0a00_0001, 4),
];

fn reference(dst: u32) -> Option<(i32, u32)> {
    ROUTES
        .iter()
        .filter(|r| r.2 == 0 || dst >> (32 - r.2) == r.1 >> (32 - r.2))
        .max_by_key(|r| r.2)
        .map(|r| (r.4, if r.3 != 0 { r.3 } else { dst }))
}

fn config(class: &str) -> String {
    let routes: Vec<&str> = ROUTES.iter().map(|r| r.0).collect();
    let mut c = format!(
        "src :: BatchSrc -> CheckIPHeader(14) -> rt :: {}({});\n",
        class,
        routes.join(", ")
    );
    for i in 0..7 {
        c.push_str(&format!("rt[{}] -> o{} :: Collect;\n", i, i));
    }
    c
}

#[test]
fn overlapping_prefixes_all_lookup_classes() {
    let pkts = capture("router-in.pcap");
    let sinks: Vec<String> = (0..7).map(|i| format!("o{}", i)).collect();
    let sinks: Vec<&str> = sinks.iter().map(|s| s.as_str()).collect();
    let mut expected: Vec<Vec<(Vec<u8>, [u8; 4])>> = vec![Vec::new(); 7];
    for d in &pkts {
        let dst = u32::from_be_bytes([d[30], d[31], d[32], d[33]]);
        let (port, anno) = reference(dst).expect("default route");
        expected[port as usize].push((d.clone(), anno.to_be_bytes()));
    }
    assert!(expected.iter().all(|e| !e.is_empty()), "every output used");
    for class in [
        "RadixIPLookup",
        "DirectIPLookup",
        "RangeIPLookup",
        "LinearIPLookup",
        "StaticIPLookup",
    ] {
        let (r, seen) = run_both(&config(class), &pkts, &sinks);
        for (i, s) in seen.iter().enumerate() {
            let got: Vec<(Vec<u8>, [u8; 4])> = s
                .iter()
                .map(|x| {
                    (
                        x.data.clone(),
                        [
                            x.anno.bytes[0],
                            x.anno.bytes[1],
                            x.anno.bytes[2],
                            x.anno.bytes[3],
                        ],
                    )
                })
                .collect();
            assert_eq!(got, expected[i], "{} output {}", class, i);
        }
        assert_eq!(r.stderr(), "");
    }
}

#[test]
fn table_handler_and_no_route() {
    let pkts = capture("router-in.pcap");
    let r = run_with(
        "src :: BatchSrc -> CheckIPHeader(14) -> rt :: RadixIPLookup(10.0.0.0/8 0, 192.168.1.0/24 192.168.1.1 1, 1.2.3.4 1, 10.0.0.0/8 1) -> o0 :: Collect; rt[1] -> o1 :: Collect;",
        &pkts,
        32,
    );
    assert_eq!(
        r.read("rt.table"),
        "10.0.0.0/8\t\t-\t\t0\n192.168.1.0/24\t\t192.168.1.1\t1\n1.2.3.4/32\t\t-\t\t1\n"
    );
    let tens = pkts.iter().filter(|d| d[30] == 10).count();
    assert_eq!(collected("o0").len(), tens, "first duplicate route wins");
    assert_eq!(collected("o1").len(), 1);
    assert_eq!(collected("o1")[0].anno.bytes[..4], [192, 168, 1, 1]);
    let err = r.stderr();
    assert_eq!(err.lines().count(), 5, "{}", err);
    assert!(
        err.starts_with("IPRouteTable: no route for 192.168.0.1\n"),
        "{}",
        err
    );

    let r = run_with(
        "src :: BatchSrc -> CheckIPHeader(14) -> rt :: LinearIPLookup(10.0.0.0/8 0) -> o0 :: Collect;",
        &pkts,
        1,
    );
    assert!(r
        .stderr()
        .starts_with("LinearIPLookup: no route for 192.168.0.1\n"));
    assert_eq!(r.read("rt.table"), "10.0.0.0/8\t\t-\t\t0\n");
}

fn table_router(class: &str) -> TestRouter {
    run_with(
        &format!(
            "src :: BatchSrc -> CheckIPHeader(14) -> rt :: {}(10.0.0.0/8 0, 192.168.0.0/16 1); rt[1] -> Collect; rt[0] -> Collect; rt[2] -> Collect;",
            class
        ),
        &[],
        32,
    )
}

#[test]
fn add_set_remove_handlers() {
    for class in ["RadixIPLookup", "LinearIPLookup"] {
        let r = table_router(class);
        r.write("rt.add", "172.16.0.0/12 10.0.0.1 2").unwrap();
        let e = r.write("rt.add", "10.0.0.0/8 2").unwrap_err().to_string();
        assert_eq!(e, "conflict with existing route '10.0.0.0/8 - 0'");
        assert_eq!(
            r.write("rt.add", "10.0.0.0/8 3").unwrap_err().to_string(),
            "bad OUTPUT"
        );
        assert_eq!(
            r.write("rt.add", "10.0.0.0/8").unwrap_err().to_string(),
            "expected 'ADDR/MASK [GATEWAY] OUTPUT'"
        );
        r.write("rt.set", "10.0.0.0/8 10.0.0.9 2").unwrap();
        assert_eq!(
            r.write("rt.remove", "1.0.0.0/8").unwrap_err().to_string(),
            "route '1.0.0.0/8 - -1' not found"
        );
        assert_eq!(
            r.write("rt.remove", "192.168.0.0/16 - 0")
                .unwrap_err()
                .to_string(),
            "route '192.168.0.0/16 - 0' not found"
        );
        r.write("rt.remove", "192.168.0.0/16 - 1").unwrap();
        let t = r.read("rt.table");
        if class == "LinearIPLookup" {
            // replaced in place; the removed slot is reused first
            assert_eq!(
                t,
                "10.0.0.0/8\t\t10.0.0.9\t2\n172.16.0.0/12\t\t10.0.0.1\t2\n"
            );
            r.write("rt.add", "1.0.0.0/8 0").unwrap();
            assert_eq!(
                r.read("rt.table"),
                "10.0.0.0/8\t\t10.0.0.9\t2\n1.0.0.0/8\t\t-\t\t0\n172.16.0.0/12\t\t10.0.0.1\t2\n"
            );
        } else {
            // set makes a new slot; freed slots are reused last-freed first
            assert_eq!(
                t,
                "172.16.0.0/12\t\t10.0.0.1\t2\n10.0.0.0/8\t\t10.0.0.9\t2\n"
            );
            r.write("rt.add", "1.0.0.0/8 0").unwrap();
            assert_eq!(
                r.read("rt.table"),
                "1.0.0.0/8\t\t-\t\t0\n172.16.0.0/12\t\t10.0.0.1\t2\n10.0.0.0/8\t\t10.0.0.9\t2\n"
            );
        }
    }
}

#[test]
fn ctrl_is_atomic_and_lookups_follow_updates() {
    let pkts = capture("router-in.pcap");
    let r = table_router("RadixIPLookup");
    let before = r.read("rt.table");
    let e = r
        .write(
            "rt.ctrl",
            "add 1.0.0.0/8 0\nremove 10.0.0.0/8\nbogus 1.2.3.4 0\n",
        )
        .unwrap_err()
        .to_string();
    assert_eq!(e, "bad command 'bogus'");
    assert_eq!(r.read("rt.table"), before);
    let e = r
        .write("rt.ctrl", "set 192.168.0.0/16 2\nadd 10.0.0.0/8 1")
        .unwrap_err()
        .to_string();
    assert_eq!(e, "conflict with existing route '10.0.0.0/8 - 0'");
    assert_eq!(r.read("rt.table"), before);
    r.write(
        "rt.ctrl",
        "add 10.0.0.0/24 2\nremove 192.168.0.0/16\n\nset 0.0.0.0/0 10.0.0.7 1",
    )
    .unwrap();

    // Traffic now follows the new table.
    let c = "src :: BatchSrc -> CheckIPHeader(14) -> rt :: RadixIPLookup(10.0.0.0/8 0, 192.168.0.0/16 1); rt[0] -> a :: Collect; rt[1] -> b :: Collect; rt[2] -> c :: Collect;";
    clear_collected();
    let r = try_build(c, 32).unwrap();
    r.write(
        "rt.ctrl",
        "add 10.0.0.0/24 2\nremove 192.168.0.0/16\nset 0.0.0.0/0 10.0.0.7 1",
    )
    .unwrap();
    for d in &pkts {
        r.inject("rt", 0, std::slice::from_ref(d));
    }
    // inject bypasses CheckIPHeader: the destination annotation is zero,
    // so everything follows the default route.
    assert_eq!(collected("b").len(), pkts.len());
    assert!(collected("b")
        .iter()
        .all(|s| s.anno.bytes[..4] == [10, 0, 0, 7]));
}

#[test]
fn static_has_no_update_handlers_and_config_errors() {
    let r = table_router("StaticIPLookup");
    assert!(r.write("rt.add", "1.0.0.0/8 0").is_err());
    assert!(r.read("rt.table").starts_with("10.0.0.0/8"));
    let e = try_router("InfiniteSource(LIMIT 0) -> rt :: RadixIPLookup(10/8 0, 10.0.0.0/8 zero, 11/8 3) -> Discard;")
        .err()
        .unwrap();
    assert!(
        e.contains(&"  argument 2 should be 'ADDR/MASK [GATEWAY] OUTPUT'".to_string()),
        "{:?}",
        e
    );
    assert!(
        e.contains(&"  argument 3 bad OUTPUT".to_string()),
        "{:?}",
        e
    );
}

#[test]
fn lookup_handler_with_parameter() {
    let r = table_router("RadixIPLookup");
    r.write("rt.add", "0.0.0.0/0 10.0.0.1 2").unwrap();
    assert_eq!(
        r.router
            .read_handler_param("rt.lookup", "10.1.2.3")
            .unwrap(),
        "0"
    );
    assert_eq!(
        r.router.read_handler_param("rt.lookup", "8.8.8.8").unwrap(),
        "2 10.0.0.1"
    );
    r.write("rt.remove", "0.0.0.0/0").unwrap();
    assert_eq!(
        r.router.read_handler_param("rt.lookup", "8.8.8.8").unwrap(),
        "-1"
    );
    let e = r
        .router
        .read_handler_param("rt.lookup", "banana")
        .unwrap_err()
        .to_string();
    assert_eq!(e, "expected IP address");
    assert!(r.router.read_handler("rt.lookup").is_err());
    let s = table_router("StaticIPLookup");
    assert_eq!(
        s.router
            .read_handler_param("rt.lookup", "192.168.3.4")
            .unwrap(),
        "1"
    );
}
