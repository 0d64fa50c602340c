//! VLANEncap, VLANDecap and EnsureEther on real frames.

mod frames;
#[path = "ip_harness.rs"]
mod ip_harness;

use frames::*;
use ip_harness::*;

/// mixed.pcap record 23: VLAN 10, priority 3, IPv4/UDP.
const TAGGED: usize = 23;

fn untag(f: &[u8]) -> Vec<u8> {
    let mut v = f[..12].to_vec();
    v.extend_from_slice(&f[16..]);
    v
}

#[test]
fn vlandecap_strips_into_annotation() {
    let pkts = capture("mixed.pcap");
    let tagged = pkts[TAGGED].clone();
    assert_eq!(&tagged[12..16], &[0x81, 0x00, 0x60, 0x0a]);
    let (r, seen) = run_both(
        "src :: BatchSrc -> d :: VLANDecap -> out :: Collect;",
        &pkts,
        &["out"],
    );
    // Everything but the 10-byte runt comes out.
    assert_eq!(seen[0].len(), pkts.len() - 1);
    assert_eq!(r.read("d.drops"), "1");
    let mut i = 0;
    for (k, p) in pkts.iter().enumerate() {
        if p.len() < 14 {
            continue;
        }
        let s = &seen[0][i];
        i += 1;
        if k == TAGGED {
            assert_eq!(s.data, untag(p));
            assert_eq!(s.anno.vlan_tci(), 0x600a);
        } else {
            assert_eq!(&s.data, p);
            assert_eq!(s.anno.vlan_tci(), 0);
        }
    }
    // ANNO false leaves the annotation alone; another ETHERTYPE leaves
    // 802.1Q frames alone; a tag cut short is dropped.
    clear_collected();
    let r = router(
        "Idle -> d :: VLANDecap(false) -> out :: Collect;
         Idle -> d2 :: VLANDecap(ETHERTYPE 0x88a8) -> out2 :: Collect;",
    );
    r.inject("d", 0, &[tagged.clone(), tagged[..17].to_vec()]);
    assert_eq!(collected_data("out"), vec![untag(&tagged)]);
    assert_eq!(collected("out")[0].anno.vlan_tci(), 0);
    assert_eq!(r.read("d.drops"), "1");
    r.inject("d2", 0, std::slice::from_ref(&tagged));
    assert_eq!(collected_data("out2"), vec![tagged.clone()]);
    let mut qinq = tagged.clone();
    qinq[12] = 0x88;
    qinq[13] = 0xa8;
    r.inject("d2", 0, &[qinq]);
    assert_eq!(collected_data("out2")[1], untag(&tagged));
    assert_eq!(collected("out2")[1].anno.vlan_tci(), 0x600a);
}

#[test]
fn vlanencap_tags() {
    let pkts = capture("mixed.pcap");
    let tagged = pkts[TAGGED].clone();
    let plain = untag(&tagged);
    clear_collected();
    let r = router(
        "Idle -> e1 :: VLANEncap(VLAN_ID 10, VLAN_PCP 3) -> out :: Collect;
         Idle -> e2 :: VLANEncap(0x600a) -> out;
         Idle -> e3 :: VLANEncap(10, 3) -> out;
         Idle -> e4 :: VLANEncap(VLAN_TCI 0x000a, VLAN_PCP 3) -> out;",
    );
    for e in ["e1", "e2", "e3", "e4"] {
        r.inject(e, 0, std::slice::from_ref(&plain));
    }
    assert_eq!(collected_data("out"), vec![tagged.clone(); 4]);
    assert_eq!(r.read("e1.vlan_tci"), "24586");
    assert_eq!(r.read("e1.vlan_id"), "10");
    assert_eq!(r.read("e1.vlan_pcp"), "3");
    assert_eq!(r.read("e1.native_vlan"), "0");
    assert_eq!(r.read("e1.ethertype"), "33024");

    // Handler writes reconfigure.
    clear_collected();
    r.write("e1.vlan_id", "20").unwrap();
    r.write("e1.ethertype", "0x88a8").unwrap();
    assert_eq!(
        r.read("e1.config"),
        "VLAN_ID 20, VLAN_PCP 3, ETHERTYPE 0x88a8"
    );
    r.inject("e1", 0, std::slice::from_ref(&plain));
    assert_eq!(&collected_data("out")[0][12..16], &[0x88, 0xa8, 0x60, 0x14]);
    assert!(r.write("e1.vlan_pcp", "8").is_err());
    assert_eq!(r.read("e1.vlan_pcp"), "3");
    r.write("e2.vlan_tci", "0x0005").unwrap();
    assert_eq!(r.read("e2.vlan_tci"), "5");

    // Native VLAN: VLAN 0 by default, so VLANEncap() leaves frames untagged;
    // NATIVE_VLAN -1 tags VLAN 0 too; NATIVE_VLAN 10 leaves VLAN 10 alone.
    clear_collected();
    let r = router(
        "Idle -> n0 :: VLANEncap -> out :: Collect;
         Idle -> n1 :: VLANEncap(VLAN_ID 0, NATIVE_VLAN -1) -> out;
         Idle -> n2 :: VLANEncap(VLAN_ID 10, VLAN_PCP 3, NATIVE_VLAN 10) -> out;
         Idle -> n3 :: VLANEncap -> out;",
    );
    r.inject("n0", 0, std::slice::from_ref(&plain));
    r.inject("n1", 0, std::slice::from_ref(&plain));
    r.inject("n2", 0, std::slice::from_ref(&plain));
    r.inject("n3", 0, &[plain[..13].to_vec()]);
    let mut zero_tag = plain[..12].to_vec();
    zero_tag.extend_from_slice(&[0x81, 0, 0, 0]);
    zero_tag.extend_from_slice(&plain[12..]);
    assert_eq!(
        collected_data("out"),
        vec![plain.clone(), zero_tag, plain.clone()]
    );
    assert_eq!(r.read("n3.drops"), "1");

    let e = try_router("Idle -> VLANEncap(VLAN_PCP 9) -> Discard;")
        .err()
        .unwrap()
        .join("\n");
    assert!(e.contains("VLAN_PCP: out of range"), "{}", e);
    let e = try_router("Idle -> VLANEncap(VLAN_ID 4096) -> Discard;")
        .err()
        .unwrap()
        .join("\n");
    assert!(e.contains("VLAN_ID: out of range"), "{}", e);
}

#[test]
fn vlan_anno_round_trip() {
    // Decap then encap from the annotation reproduces every frame (the
    // untagged ones carry VLAN 0, the native VLAN, so stay untagged).
    let pkts: Vec<Vec<u8>> = capture("mixed.pcap")
        .into_iter()
        .filter(|p| p.len() >= 14)
        .collect();
    let (_r, seen) = run_both(
        "src :: BatchSrc -> VLANDecap -> VLANEncap(ANNO) -> out :: Collect;",
        &pkts,
        &["out"],
    );
    let got: Vec<Vec<u8>> = seen[0].iter().map(|s| s.data.clone()).collect();
    assert_eq!(got, pkts);
    let r = router("Idle -> e :: VLANEncap(ANNO) -> Discard;");
    assert_eq!(r.read("e.vlan_tci"), "ANNO");
}

#[test]
fn ensureether_cases() {
    let me = [0x00, 0x00, 0xc0, 0xae, 0x67, 0xef];
    let a = [0x52, 0x54, 0, 0, 0, 1];
    let ip = Ip::new([10, 0, 0, 1], [10, 0, 0, 2], 17, &udp(1, 2, b"data")).bytes();
    let frame = eth(me, a, 0x0800, &ip);
    clear_collected();
    let r = router(
        "Idle -> raw :: MarkIPHeader -> e1 :: EnsureEther -> out :: Collect;
         Idle -> stripped :: Strip(14) -> MarkIPHeader -> e2 :: EnsureEther(0x0800, 1:2:3:4:5:6, 6:5:4:3:2:1) -> out;
         Idle -> full :: MarkIPHeader(14) -> e3 :: EnsureEther(0x0800, 1:2:3:4:5:6, 6:5:4:3:2:1) -> out;
         Idle -> nonip :: EnsureEther -> out;
         Idle -> tagged :: MarkIPHeader(18) -> e5 :: EnsureEther(ETHERTYPE 0x0800, SRC 1:2:3:4:5:6, DST 6:5:4:3:2:1) -> out;",
    );
    // Bare IP: the default header 02-..-02, 01-..-01, 0x0800.
    r.inject("raw", 0, std::slice::from_ref(&ip));
    // Stripped: the original header comes back.
    r.inject("stripped", 0, std::slice::from_ref(&frame));
    // Already Ethernet-encapsulated: unchanged.
    r.inject("full", 0, std::slice::from_ref(&frame));
    // No IP header annotation: unchanged.
    let arp = arp_request(a, [10, 0, 0, 1], [10, 0, 0, 2]);
    r.inject("nonip", 0, std::slice::from_ref(&arp));
    // IP behind a VLAN tag: the 18 bytes before it are replaced.
    let mut vframe = frame[..12].to_vec();
    vframe.extend_from_slice(&[0x81, 0, 0, 5, 0x08, 0x00]);
    vframe.extend_from_slice(&ip);
    r.inject("tagged", 0, &[vframe]);
    assert_eq!(
        collected_data("out"),
        vec![
            eth([2; 6], [1; 6], 0x0800, &ip),
            frame.clone(),
            frame.clone(),
            arp,
            eth([6, 5, 4, 3, 2, 1], [1, 2, 3, 4, 5, 6], 0x0800, &ip),
        ]
    );
    // A stripped header that was not IP is not restored.
    clear_collected();
    let odd = eth(me, a, 0x88cc, &ip);
    r.inject("stripped", 0, &[odd]);
    assert_eq!(
        collected_data("out"),
        vec![eth([6, 5, 4, 3, 2, 1], [1, 2, 3, 4, 5, 6], 0x0800, &ip)]
    );
    let e = try_router("Idle -> EnsureEther(0x10000) -> Discard;")
        .err()
        .unwrap()
        .join("\n");
    assert!(e.contains("must be <= 0xFFFF"), "{}", e);
}

/// SetVLANAnno sets the TCI annotation that VLANEncap(ANNO) puts in the
/// tag; its handlers read and reconfigure ID and priority; bad values are
/// refused.
#[test]
fn setvlananno_feeds_vlanencap_anno() {
    clear_collected();
    let r = router(
        "Idle -> s :: SetVLANAnno(100, 5) -> a :: Collect;
         Idle -> t :: SetVLANAnno(7) -> VLANEncap(ANNO) -> e :: Collect;",
    );
    let pkts = pcap_packets("udp-64.pcap");
    r.inject("s", 0, &pkts[..1]);
    r.inject("t", 0, &pkts[..1]);
    let a = &collected("a")[0];
    assert_eq!(a.anno.vlan_tci(), 100 | (5 << 13));
    assert_eq!(a.data, pkts[0]);
    let e = &collected("e")[0];
    assert_eq!(&e.data[12..16], &[0x81, 0x00, 0x00, 0x07]);
    assert_eq!(&e.data[16..], &pkts[0][12..]);
    assert_eq!(r.read("s.vlan"), "100");
    assert_eq!(r.read("s.vlan_pcp"), "5");
    r.write("s.vlan", "200").unwrap();
    r.write("s.vlan_pcp", "1").unwrap();
    r.inject("s", 0, &pkts[..1]);
    assert_eq!(collected("a")[1].anno.vlan_tci(), 200 | (1 << 13));
    assert!(r.write("s.vlan", "5000").is_err());
    assert!(r.write("s.vlan_pcp", "8").is_err());
    assert_eq!(r.read("s.vlan"), "200");
    assert!(try_router("Idle -> SetVLANAnno(4095) -> Discard;").is_err());
    assert!(try_router("Idle -> SetVLANAnno -> Discard;").is_err());
}
