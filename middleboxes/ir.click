// IR: an IP router between two links: Click's classic two-interface router
// (conf/iprouter.click, the shape of Click's make-ip-conf.pl): ARP both
// ways, RFC 1812 input checks, TTL decrement with ICMP time exceeded,
// fragmentation, redirects, and pings to the router's own addresses.
//
//   clickos run middleboxes/ir.click DEV0=veth0 DEV1=veth1 \
//       IP0=10.1.0.254 MAC0=<veth0's MAC> IP1=10.2.0.254 MAC1=<veth1's MAC>
//   clickos vm run middleboxes/ir.click --vnic veth0 --vnic veth1
//
// MACn is the address the router answers ARP with and sends from (under
// `clickos run`, the interface's own, since frames to other addresses are
// filtered out); LENn the prefix length of link n.

define($DEV0 0, $IP0 10.1.0.254, $LEN0 24, $MAC0 02:00:00:00:01:fe,
       $DEV1 1, $IP1 10.2.0.254, $LEN1 24, $MAC1 02:00:00:00:02:fe,
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
FromDevice($DEV0) -> HostEtherFilter($MAC0, DROP_OWN false, DROP_OTHER true) -> c0;
out0 :: Queue(1000) -> ToDevice($DEV0);
arpq0 :: ARPQuerier($IP0, $MAC0) -> out0;
c0[0] -> ARPResponder($IP0 $MAC0) -> out0;
c0[1] -> t;
t[0] -> [1]arpq0;
c0[2] -> Paint(1) -> ip;
c0[3] -> Discard;

// interface 1
c1 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
FromDevice($DEV1) -> HostEtherFilter($MAC1, DROP_OWN false, DROP_OTHER true) -> c1;
out1 :: Queue(1000) -> ToDevice($DEV1);
arpq1 :: ARPQuerier($IP1, $MAC1) -> out1;
c1[0] -> ARPResponder($IP1 $MAC1) -> out1;
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
