// Benchmark of middleboxes/em.click (EM, the Ethernet mirror) in memory,
// one core. Differs from the shipped file: InfiniteSource stands in for
// FromDevice($DEV0) and Discard for Queue -> ToDevice($DEV0).
//   clickos run bench/middleboxes/em.click N=1000000 -h out0.count
define($N 1000000, $DATA \<020000000002020000000a0108004500003200004000401126b90a0000010a00000204d2162e001ed0af00000000000000000000000000000000000000000000>)

src :: InfiniteSource(DATA $DATA, LIMIT $N, BURST 32, STOP true) -> c0 :: Counter -> EtherMirror -> out0 :: Discard;
