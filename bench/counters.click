// Benchmark: a chain of ten Counters.  Stock Click:  click bench/counters.click N=10000000
define($N 10000000, $DATA \<02000000000202000000000108004500003200004000401126b90a0000010a00000204d2162e001e000000000000000000000000000000000000000000000000>)

InfiniteSource(DATA $DATA, LIMIT $N, BURST 32, STOP true)
  -> Counter -> Counter -> Counter -> Counter -> Counter
  -> Counter -> Counter -> Counter -> Counter -> Counter
  -> Discard;
