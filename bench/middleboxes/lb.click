// Benchmark of middleboxes/lb.click (LB, the virtual-IP load balancer) in
// memory, one core. Differs from the shipped file: InfiniteSource stands
// in for FromDevice($DEV0) (started once the Script has put the three
// back ends in arpq1's table), Idle for FromDevice($DEV1), Discard for
// each Queue -> ToDevice. One client connection (TCP 10.0.0.5:40000 ->
// VIP:80 carrying an HTTP request): its first packet makes the mapping,
// the rest are rewritten to back end B1.
//   clickos run bench/middleboxes/lb.click N=1000000 -h out1.count -h rw.table_size
define($N 1000000, $DATA \<020000000101020000000a01080045000032000040004006255e0a0000050a0001649c400050000003e8000007d05018ffff53660000474554202f696e646578>,
       $VIP 10.0.1.100, $PORT 80, $MAC0 02:00:00:00:01:01,
       $IP1 10.0.2.1, $MAC1 02:00:00:00:02:01,
       $B1 10.0.2.11, $B2 10.0.2.12, $B3 10.0.2.13)

rr :: RoundRobinIPMapper(- - $B1 - 0 1, - - $B2 - 0 1, - - $B3 - 0 1);
rw :: IPRewriter(rr, drop);

c0 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
src :: InfiniteSource(DATA $DATA, LIMIT $N, BURST 32, STOP true, ACTIVE false) -> c0;
out0 :: Discard;
arpq0 :: ARPQuerier($VIP, $MAC0) -> out0;
c0[0] -> ARPResponder($VIP $MAC0) -> out0;
c0[1] -> [1]arpq0;
c0[3] -> Discard;

c1 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
Idle -> c1;
out1 :: Discard;
arpq1 :: ARPQuerier($IP1, $MAC1) -> out1;
c1[0] -> ARPResponder($IP1 $MAC1) -> out1;
c1[1] -> [1]arpq1;
c1[3] -> Discard;

c0[2] -> Strip(14) -> CheckIPHeader -> GetIPAddress(16)
  -> cls0 :: IPClassifier(dst host $VIP and tcp dst port $PORT, dst host $VIP and icmp type echo, -);
cls0[0] -> [0]rw;
cls0[1] -> ICMPPingResponder -> GetIPAddress(16) -> arpq0;
cls0[2] -> Discard;

c1[2] -> Strip(14) -> CheckIPHeader -> GetIPAddress(16)
  -> cls1 :: IPClassifier(tcp src port $PORT, dst host $IP1 and icmp type echo, -);
cls1[0] -> [1]rw;
cls1[1] -> ICMPPingResponder -> GetIPAddress(16) -> arpq1;
cls1[2] -> Discard;

rw[0] -> arpq1;
rw[1] -> arpq0;

Script(write arpq1.insert $B1 02:00:00:00:02:11, write arpq1.insert $B2 02:00:00:00:02:12,
       write arpq1.insert $B3 02:00:00:00:02:13, write src.active true);
