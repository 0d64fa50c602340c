// Benchmark of middleboxes/fm.click (FM, the flow monitor) in memory, one
// core. Differs from the shipped file: InfiniteSource stands in for
// FromDevice($DEV0), Discard for the Queues and ToDevices, link 1 is idle.
// One 5-tuple flow, metered by IPFIXExport (its export path is built but
// the timeouts do not fire during a run).
//   clickos run bench/middleboxes/fm.click N=1000000 -h to1.count -h fx0.flows
define($N 1000000, $DATA \<020000000002020000000a0108004500003200004000401126b90a0000010a00000204d2162e001ed0af00000000000000000000000000000000000000000000>,
       $SRC 192.0.2.254, $SRCMAC 02:00:00:00:02:01,
       $COLLECTOR 192.0.2.1, $COLLECTOR_MAC ff:ff:ff:ff:ff:ff, $CPORT 4739,
       $INACTIVE 15s, $ACTIVE 30min)

to1 :: Discard;
to0 :: Discard;
export :: UDPIPEncap($SRC, $CPORT, $COLLECTOR, $CPORT)
  -> EtherEncap(0x0800, $SRCMAC, $COLLECTOR_MAC) -> exported :: Discard;

src :: InfiniteSource(DATA $DATA, LIMIT $N, BURST 32, STOP true) -> c0 :: Classifier(12/0800, -);
c0[0] -> MarkIPHeader(14)
  -> fx0 :: IPFIXExport(OBSERVATION_DOMAIN 0, INACTIVE_TIMEOUT $INACTIVE, ACTIVE_TIMEOUT $ACTIVE)
  -> to1;
fx0[1] -> export;
c0[1] -> to1;

Idle -> c1 :: Classifier(12/0800, -);
c1[0] -> MarkIPHeader(14)
  -> fx1 :: IPFIXExport(OBSERVATION_DOMAIN 1, INACTIVE_TIMEOUT $INACTIVE, ACTIVE_TIMEOUT $ACTIVE)
  -> to0;
fx1[1] -> export;
c1[1] -> to0;
