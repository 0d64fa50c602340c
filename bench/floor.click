// Benchmark floor: a source straight into a sink.
// Stock Click runs it too:  click bench/floor.click N=10000000
// (the 1500-byte variant passes DATA=\<...> from bench/udp-1500.hex).
define($N 10000000, $DATA \<02000000000202000000000108004500003200004000401126b90a0000010a00000204d2162e001e000000000000000000000000000000000000000000000000>)

InfiniteSource(DATA $DATA, LIMIT $N, BURST 32, STOP true)
  -> Discard;
