//! InfiniteSource sends packets that share one read-only data buffer
//! (as Click's clones do): an element that writes a packet gets its own
//! copy, and never changes the packets sent after it or beside it.

mod common;
use common::*;

const UDP64: &str = "02000000000202000000000108004500003200004000401126b90a0000010a00000204d2162e001e000000000000000000000000000000000000000000000000";

fn orig() -> Vec<u8> {
    (0..UDP64.len() / 2)
        .map(|i| u8::from_str_radix(&UDP64[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

#[test]
fn writers_do_not_change_the_source_data() {
    clear_collected();
    let r = router(&format!(
        "InfiniteSource(DATA \\<{UDP64}>, LIMIT 5, BURST 2)
           -> Strip(14) -> CheckIPHeader -> DecIPTTL -> Unstrip(14)
           -> StoreData(0, \\<ff>)
           -> t :: Tee -> a :: Collect;
         t[1] -> EtherEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2) -> b :: Collect;"
    ));
    r.run();
    let o = orig();
    let mut want = o.clone();
    want[0] = 0xff;
    want[14 + 8] = 63; // TTL
                       // the checksum, updated
    let ck = u16::from_be_bytes([o[24], o[25]]) + 0x0100;
    want[24..26].copy_from_slice(&ck.to_be_bytes());
    let a = collected_data("a");
    assert_eq!(a.len(), 5);
    for d in &a {
        assert_eq!(d, &want, "every packet decremented once, from 64");
    }
    let b = collected_data("b");
    assert_eq!(b.len(), 5);
    for d in &b {
        assert_eq!(&d[14..], &want[..]);
    }
}

#[test]
fn readers_see_the_data_unchanged() {
    clear_collected();
    let r = router(&format!(
        "InfiniteSource(DATA \\<{UDP64}>, LIMIT 3, BURST 3)
           -> CheckIPHeader(OFFSET 14) -> IPFilter(allow udp, deny all) -> a :: Collect;"
    ));
    r.run();
    assert_eq!(collected_data("a"), vec![orig(); 3]);
}
