// Benchmark IPv4 router: CheckIPHeader -> RadixIPLookup (10 routes)
// -> DecIPTTL -> EtherEncap.  Stock Click:  click bench/router.click N=10000000
define($N 10000000, $DATA \<02000000000202000000000108004500003200004000401126b90a0000010a00000204d2162e001e000000000000000000000000000000000000000000000000>)

InfiniteSource(DATA $DATA, LIMIT $N, BURST 32, STOP true)
  -> Strip(14)
  -> CheckIPHeader
  -> GetIPAddress(16)
  -> rt :: RadixIPLookup(10.0.0.0/24 0,
                         10.0.1.0/24 0,
                         10.0.2.0/24 10.0.2.1 0,
                         10.1.0.0/16 0,
                         10.2.0.0/16 0,
                         172.16.0.0/12 0,
                         192.168.0.0/16 0,
                         192.168.1.0/24 0,
                         1.0.0.0/8 0,
                         0.0.0.0/0 10.0.0.254 0)
  -> DecIPTTL
  -> EtherEncap(0x0800, 02:00:00:00:00:01, 02:00:00:00:00:02)
  -> Discard;
