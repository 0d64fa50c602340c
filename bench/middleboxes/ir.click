// Benchmark of middleboxes/ir.click (IR, Click's two-interface IP router)
// in memory, one core. Differs from the shipped file: InfiniteSource
// stands in for FromDevice($DEV0) (it starts once the Script has put
// link 1's host in arpq1's table), Idle for FromDevice($DEV1), Discard
// for each Queue -> ToDevice. The packet (UDP 10.1.0.1 -> 10.2.0.5, to
// MAC0) is routed out of link 1.
//   clickos run bench/middleboxes/ir.click N=1000000 -h out1.count
define($N 1000000, $DATA \<0200000001fe020000000a0108004500003200004000401126b30a0100010a02000504d2162e001ed0a900000000000000000000000000000000000000000000>,
       $IP0 10.1.0.254, $LEN0 24, $MAC0 02:00:00:00:01:fe,
       $IP1 10.2.0.254, $LEN1 24, $MAC1 02:00:00:00:02:fe,
       $MTU 1500)

t :: Tee(3);
t[2] -> Discard;

rt :: StaticIPLookup(
    $IP0/32 0, $IP1/32 0,
    $IP0/$LEN0 1, $IP1/$LEN1 2,
    255.255.255.255/32 0, 0.0.0.0/32 0);

rt[0] -> tol :: IPClassifier(icmp type echo, -);
tol[0] -> ICMPPingResponder -> Paint(0) -> rt;
tol[1] -> Discard;

ip :: Strip(14)
   -> CheckIPHeader(INTERFACES $IP0/$LEN0 $IP1/$LEN1)
   -> GetIPAddress(16)
   -> rt;

// interface 0
c0 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
src :: InfiniteSource(DATA $DATA, LIMIT $N, BURST 32, STOP true, ACTIVE false)
  -> HostEtherFilter($MAC0, DROP_OWN false, DROP_OTHER true) -> c0;
out0 :: Discard;
arpq0 :: ARPQuerier($IP0, $MAC0) -> out0;
c0[0] -> ARPResponder($IP0 $MAC0) -> out0;
c0[1] -> t;
t[0] -> [1]arpq0;
c0[2] -> Paint(1) -> ip;
c0[3] -> Discard;

// interface 1
c1 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
Idle -> HostEtherFilter($MAC1, DROP_OWN false, DROP_OTHER true) -> c1;
out1 :: Discard;
arpq1 :: ARPQuerier($IP1, $MAC1) -> out1;
c1[0] -> ARPResponder($IP1 $MAC1) -> out1;
c1[1] -> t;
t[1] -> [1]arpq1;
c1[2] -> Paint(2) -> ip;
c1[3] -> Discard;

rt[1] -> DropBroadcasts
      -> cp0 :: PaintTee(1)
      -> gio0 :: IPGWOptions($IP0)
      -> FixIPSrc($IP0)
      -> dt0 :: DecIPTTL
      -> fr0 :: IPFragmenter($MTU)
      -> [0]arpq0;
dt0[1] -> ICMPError($IP0, timeexceeded) -> rt;
fr0[1] -> ICMPError($IP0, unreachable, needfrag) -> rt;
gio0[1] -> ICMPError($IP0, parameterproblem) -> rt;
cp0[1] -> ICMPError($IP0, redirect, host) -> rt;

rt[2] -> DropBroadcasts
      -> cp1 :: PaintTee(2)
      -> gio1 :: IPGWOptions($IP1)
      -> FixIPSrc($IP1)
      -> dt1 :: DecIPTTL
      -> fr1 :: IPFragmenter($MTU)
      -> [0]arpq1;
dt1[1] -> ICMPError($IP1, timeexceeded) -> rt;
fr1[1] -> ICMPError($IP1, unreachable, needfrag) -> rt;
gio1[1] -> ICMPError($IP1, parameterproblem) -> rt;
cp1[1] -> ICMPError($IP1, redirect, host) -> rt;

Script(write arpq1.insert 10.2.0.5 02:00:00:00:02:05, write src.active true);
