//! EtherVLANEncap and StripEtherVLANHeader on real frames: exact bytes,
//! the VLAN annotation, native VLANs, runts, handlers, Click's old names.

mod common;
use common::*;

/// mixed.pcap record 23: VLAN 10, priority 3, IPv4/UDP.
const TAGGED: usize = 23;
/// mixed.pcap record 32: a 10-byte runt.
const RUNT: usize = 32;

#[test]
fn ethervlanencap_builds_click_headers() {
    clear_collected();
    // Click's EtherVLANEncap-01
    let r = router(
        "Idle -> a :: EtherVLANEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2, 1) -> out_a :: Collect;
         Idle -> s :: StripEtherVLANHeader -> out_s :: Collect;
         Idle -> c :: EtherVLANEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2, ANNO) -> out_c :: Collect;
         Idle -> e :: EtherVLANEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2, ANNO, NATIVE_VLAN 1)
           -> out_e :: Collect;
         Idle -> v :: SetVLANAnno(2, 1) -> e2 :: EtherVLANEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2, ANNO, NATIVE_VLAN 1)
           -> out_v :: Collect;",
    );
    let payload = vec![0xaa, 0xab, 0xac, 0xad];
    r.inject("a", 0, std::slice::from_ref(&payload));
    let tagged = collected_data("out_a")[0].clone();
    let mut want = vec![2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 0x81, 0, 0, 1, 8, 0];
    want.extend_from_slice(&payload);
    assert_eq!(tagged, want);
    r.inject("s", 0, std::slice::from_ref(&tagged));
    let stripped = collected("out_s");
    assert_eq!(stripped[0].data, payload);
    assert_eq!(stripped[0].anno.vlan_tci(), 1);
    // ANNO: the TCI comes from the annotation
    let mut p = r.router.pool().make(64, &payload, 0);
    p.anno_mut().set_vlan_tci(1);
    r.router.inject("c", 0, p).unwrap();
    assert_eq!(collected_data("out_c"), vec![want.clone()]);
    // the native VLAN goes untagged
    let mut p = r.router.pool().make(64, &payload, 0);
    p.anno_mut().set_vlan_tci(1);
    r.router.inject("e", 0, p).unwrap();
    let mut plain = vec![2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 8, 0];
    plain.extend_from_slice(&payload);
    assert_eq!(collected_data("out_e"), vec![plain]);
    r.inject("v", 0, std::slice::from_ref(&payload));
    assert_eq!(&collected_data("out_v")[0][12..16], &[0x81, 0, 0x20, 0x02]);
}

#[test]
fn ethervlanencap_rebuilds_a_captured_tagged_frame() {
    clear_collected();
    let frames = pcap_packets("mixed.pcap");
    let f = &frames[TAGGED];
    assert_eq!(&f[12..16], &[0x81, 0x00, 0x60, 0x0a]);
    let dst = click::wire::EtherAddress::from_bytes(&f[..6]);
    let src = click::wire::EtherAddress::from_bytes(&f[6..12]);
    let r = router(&format!(
        "Idle -> e :: EtherVLANEncap(0x0800, {src}, {dst}, VLAN_ID 10, VLAN_PCP 3) -> out :: Collect;"
    ));
    r.inject("e", 0, &[f[18..].to_vec()]);
    assert_eq!(collected_data("out"), vec![f.clone()]);
    // handlers
    assert_eq!(r.read("e.vlan_tci"), "24586");
    assert_eq!(r.read("e.vlan_id"), "10");
    assert_eq!(r.read("e.vlan_pcp"), "3");
    assert_eq!(r.read("e.ethertype"), "2048");
    assert_eq!(r.read("e.src"), src.to_string());
    assert_eq!(
        r.read("e.config"),
        format!("{src}, {dst}, 2048, VLAN_ID 10, VLAN_PCP 3")
    );
    r.write("e.vlan_id", "20").unwrap();
    assert_eq!(r.read("e.vlan_id"), "20");
    assert_eq!(r.read("e.vlan_pcp"), "3");
    assert!(r.write("e.vlan_pcp", "8").is_err());
    assert_eq!(r.read("e.vlan_pcp"), "3");
    r.write("e.native_vlan", "20").unwrap();
    assert_eq!(r.read("e.native_vlan"), "20");
    r.write("e.ethertype", "0x86dd").unwrap();
    r.inject("e", 0, &[vec![1, 2, 3]]);
    let got = collected_data("out");
    assert_eq!(got[1].len(), 17);
    assert_eq!(&got[1][12..], &[0x86, 0xdd, 1, 2, 3]);
    r.write("e.vlan_tci", "ANNO").unwrap();
    assert_eq!(r.read("e.vlan_tci"), "ANNO");
    assert_eq!(r.read("e.vlan_id"), "");
    assert!(r.write("e.dst", "nowhere").is_err());

    let e =
        config_error("Idle -> EtherVLANEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2, 1, 9) -> Discard;");
    assert!(e.contains("VLAN_PCP"), "{}", e);
    let e = config_error("Idle -> EtherVLANEncap(0x0800, 1:1:1:1:1:1) -> Discard;");
    assert!(e.contains("DST"), "{}", e);
}

#[test]
fn stripethervlanheader_on_a_capture() {
    clear_collected();
    let frames = pcap_packets("mixed.pcap");
    let r = router(
        "Idle -> s :: StripEtherVLANHeader -> out :: Collect; s[1] -> bad :: Collect;
         Idle -> n :: StripEtherVLANHeader(-1) -> out2 :: Collect; n[1] -> bad2 :: Collect;
         Idle -> o :: StripEtherVlanHeader(7) -> out3 :: Collect;",
    );
    r.inject("s", 0, &frames);
    let seen = collected("out");
    assert_eq!(seen.len(), frames.len() - 1);
    assert_eq!(collected_data("bad"), vec![frames[RUNT].clone()]);
    assert_eq!(r.read("s.drops"), "1");
    let mut i = 0;
    for (k, f) in frames.iter().enumerate() {
        if k == RUNT {
            continue;
        }
        let s = &seen[i];
        i += 1;
        if k == TAGGED {
            assert_eq!(s.data, f[18..].to_vec());
            assert_eq!(s.anno.vlan_tci(), 0x600a);
        } else {
            assert_eq!(s.data, f[14..].to_vec(), "record {k}");
            assert_eq!(s.anno.vlan_tci(), 0);
        }
    }
    // no native VLAN: untagged frames are rejected
    r.inject("n", 0, &frames[TAGGED - 1..=TAGGED]);
    assert_eq!(collected("out2").len(), 1);
    assert_eq!(collected_data("bad2"), vec![frames[TAGGED - 1].clone()]);
    assert_eq!(r.read("n.drops"), "0");
    // a tag cut short, and Click's old class name
    let mut short = frames[TAGGED][..16].to_vec();
    r.inject("n", 0, std::slice::from_ref(&short));
    assert_eq!(r.read("n.drops"), "1");
    short.truncate(13);
    r.inject("n", 0, &[short]);
    assert_eq!(r.read("n.drops"), "2");
    r.inject("o", 0, &frames[..1]);
    assert_eq!(collected("out3")[0].anno.vlan_tci(), 7);
    let e = config_error("Idle -> StripEtherVLANHeader(4095) -> Discard;");
    assert!(e.contains("bad NATIVE_VLAN_ID"), "{}", e);
}
