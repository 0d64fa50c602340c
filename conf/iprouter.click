// Click's classic two-interface IP router (the shape of Click's
// conf/make-ip-conf.pl), on Linux interfaces: ARP in both directions,
// RFC 1812 input checks, ICMP errors (TTL exceeded, fragmentation needed,
// parameter problems, redirects), fragmentation, and pings to the router's
// own addresses answered. Nothing here is specific to clickos: stock Click
// runs it too. Give the interfaces on the command line:
//
//   clickos run conf/iprouter.click IF0=eth0 IP0=10.1.0.254 LEN0=24 ETH0=02:00:00:00:01:fe \
//                                   IF1=eth1 IP1=10.2.0.254 LEN1=24 ETH1=02:00:00:00:02:fe
//
// ETHn must be interface n's own Ethernet address. The host's stack keeps
// out of the way (SNIFFER false): this configuration is the router.

define($IF0 eth0, $IP0 10.1.0.254, $LEN0 24, $ETH0 02:00:00:00:01:fe,
       $IF1 eth1, $IP1 10.2.0.254, $LEN1 24, $ETH1 02:00:00:00:02:fe,
       $MTU 1500)

t :: Tee(3);
t[2] -> Discard;

rt :: StaticIPLookup(
    $IP0/32 0, $IP1/32 0,
    $IP0/$LEN0 1, $IP1/$LEN1 2,
    255.255.255.255/32 0, 0.0.0.0/32 0);

// packets for the router itself: pings are answered, the rest dropped
rt[0] -> tol :: IPClassifier(icmp type echo, -);
tol[0] -> ICMPPingResponder -> Paint(0) -> rt;
tol[1] -> Discard;

ip :: Strip(14)
   -> CheckIPHeader(INTERFACES $IP0/$LEN0 $IP1/$LEN1)
   -> GetIPAddress(16)
   -> rt;

// interface 0
c0 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
FromDevice($IF0, SNIFFER false) -> HostEtherFilter($ETH0, DROP_OWN false, DROP_OTHER true) -> c0;
out0 :: Queue(1000) -> ToDevice($IF0);
arpq0 :: ARPQuerier($IP0, $ETH0) -> out0;
c0[0] -> ARPResponder($IP0 $ETH0) -> out0;
c0[1] -> t;
t[0] -> [1]arpq0;
c0[2] -> Paint(1) -> ip;
c0[3] -> Discard;

// interface 1
c1 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
FromDevice($IF1, SNIFFER false) -> HostEtherFilter($ETH1, DROP_OWN false, DROP_OTHER true) -> c1;
out1 :: Queue(1000) -> ToDevice($IF1);
arpq1 :: ARPQuerier($IP1, $ETH1) -> out1;
c1[0] -> ARPResponder($IP1 $ETH1) -> out1;
c1[1] -> t;
t[1] -> [1]arpq1;
c1[2] -> Paint(2) -> ip;
c1[3] -> Discard;

// forwarding out interface 0
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

// forwarding out interface 1
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
