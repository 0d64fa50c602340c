// Benchmark of middleboxes/wr.click (WR, the wire) in memory, one core.
// Differs from the shipped file: InfiniteSource stands in for
// FromDevice($DEV0) and Discard for Queue -> ToDevice($DEV1); link 1's
// side is idle. The run.py driver passes N and DATA (the frame, 64-1500 B).
//   clickos run bench/middleboxes/wr.click N=1000000 -h out1.count
define($N 1000000, $DATA \<020000000002020000000a0108004500003200004000401126b90a0000010a00000204d2162e001ed0af00000000000000000000000000000000000000000000>)

src :: InfiniteSource(DATA $DATA, LIMIT $N, BURST 32, STOP true) -> c0 :: Counter -> out1 :: Discard;
Idle -> c1 :: Counter -> out0 :: Discard;
