// Benchmark: Click's classic two-interface IP router (conf/make-ip-conf.pl:
// ARP, every RFC 1812 check, ICMP errors, fragmentation), unchanged but for
// the devices: the source stands in for FromDevice(eth0) and Discard for
// Queue -> ToDevice(eth1); eth1's neighbour is put in the ARP table first.
// The packet (10.0.0.1 -> 10.0.0.2, to eth0's MAC) is routed out eth1.
// Stock Click:  click bench/iprouter.click N=10000000
//   eth0 172.16.0.1/24 02:00:00:00:00:02   eth1 10.0.0.254/24 02:00:00:00:01:01
define($N 10000000, $DATA \<02000000000202000000000108004500003200004000401126b90a0000010a00000204d2162e001e000000000000000000000000000000000000000000000000>)

// Shared IP input path and routing table
tol :: Discard;                        // to the host's stack (ToHost)
t :: Tee(3);
t[2] -> tol;
rt :: StaticIPLookup(
    172.16.0.1/32 0, 172.16.0.255/32 0, 172.16.0.0/32 0,
    10.0.0.254/32 0, 10.0.0.255/32 0, 10.0.0.0/32 0,
    172.16.0.0/24 1, 10.0.0.0/24 2,
    255.255.255.255/32 0, 0.0.0.0/32 0,
    0.0.0.0/0 172.16.0.254 1);
rt[0] -> EtherEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2) -> tol;
ip :: Strip(14)
   -> CheckIPHeader(INTERFACES 172.16.0.1/24 10.0.0.254/24)
   -> GetIPAddress(16)
   -> rt;

// eth0
c0 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
InfiniteSource(DATA $DATA, LIMIT $N, BURST 32, STOP true)
   -> HostEtherFilter(02:00:00:00:00:02, false, false) -> c0;
out0 :: Discard;
arpq0 :: ARPQuerier(172.16.0.1, 02:00:00:00:00:02) -> out0;
c0[0] -> ARPResponder(172.16.0.1 02:00:00:00:00:02) -> out0;
c0[1] -> t;
t[0] -> [1]arpq0;
c0[2] -> Paint(1) -> ip;
c0[3] -> Discard;

// eth1
c1 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
Idle -> HostEtherFilter(02:00:00:00:01:01, false, false) -> c1;
out1 :: Discard;
arpq1 :: ARPQuerier(10.0.0.254, 02:00:00:00:01:01) -> out1;
c1[0] -> ARPResponder(10.0.0.254 02:00:00:00:01:01) -> out1;
c1[1] -> t;
t[1] -> [1]arpq1;
c1[2] -> Paint(2) -> ip;
c1[3] -> Discard;

// Forwarding paths
rt[1] -> DropBroadcasts
      -> cp0 :: PaintTee(1)
      -> gio0 :: IPGWOptions(172.16.0.1)
      -> FixIPSrc(172.16.0.1)
      -> dt0 :: DecIPTTL
      -> fr0 :: IPFragmenter(1500)
      -> [0]arpq0;
dt0[1] -> ICMPError(172.16.0.1, timeexceeded) -> rt;
fr0[1] -> ICMPError(172.16.0.1, unreachable, needfrag) -> rt;
gio0[1] -> ICMPError(172.16.0.1, parameterproblem) -> rt;
cp0[1] -> ICMPError(172.16.0.1, redirect, host) -> rt;

rt[2] -> DropBroadcasts
      -> cp1 :: PaintTee(2)
      -> gio1 :: IPGWOptions(10.0.0.254)
      -> FixIPSrc(10.0.0.254)
      -> dt1 :: DecIPTTL
      -> fr1 :: IPFragmenter(1500)
      -> [0]arpq1;
dt1[1] -> ICMPError(10.0.0.254, timeexceeded) -> rt;
fr1[1] -> ICMPError(10.0.0.254, unreachable, needfrag) -> rt;
gio1[1] -> ICMPError(10.0.0.254, parameterproblem) -> rt;
cp1[1] -> ICMPError(10.0.0.254, redirect, host) -> rt;

Script(write arpq1.insert 10.0.0.2 02:00:00:00:01:05);
