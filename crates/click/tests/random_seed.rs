//! RandomSeed: Click's shared random() stream (glibc's generator), which
//! every element that chooses at random then draws from. A file of its own:
//! the stream is the process's, as in Click.

mod common;
use click::common::rng::{click_random_seeded, GlibcRandom};
use common::*;

#[test]
fn randomseed_makes_elements_draw_clicks_sequence() {
    clear_collected();
    let r = router(
        "RandomSeed(1);
         Idle -> rs :: RandomSwitch;
         rs[0] -> c0 :: Collect; rs[1] -> c1 :: Collect;
         rs[2] -> c2 :: Collect; rs[3] -> c3 :: Collect;
         sd :: RandomSeed(7);",
    );
    // the later RandomSeed(7) configured last: the stream is srandom(7)'s
    assert!(click_random_seeded());
    assert_eq!(r.read("sd.seed"), "7");
    r.write("sd.seed", "1").unwrap();
    assert_eq!(r.read("sd.seed"), "1");
    assert!(r.write("sd.seed", "-1").is_err());
    let pkts: Vec<_> = (0..40).map(|i| pkt(i, 20)).collect();
    r.inject("rs", 0, &pkts);
    // glibc: srandom(1); random() = 1804289383, 846930886, ...; Click's
    // click_random(0, 3) divides by 2^31 / 4
    let mut g = GlibcRandom::new(1);
    let mut want: [Vec<u16>; 4] = Default::default();
    for i in 0..40 {
        want[(g.random() >> 29) as usize].push(i);
    }
    assert_eq!(want[3][..2], [0, 2]);
    assert_eq!(want[1][0], 1);
    for (k, w) in want.iter().enumerate() {
        assert_eq!(&ids(&collected_data(&format!("c{k}"))), w, "output {k}");
    }
}
