// LB: a virtual-IP load balancer. Clients on link 0 reach the virtual
// address VIP:PORT (TCP); each new connection goes to the next of three
// back ends on link 1 (IPRewriter with a RoundRobinIPMapper rewriting the
// destination), and the back ends' replies are rewritten back to come from
// VIP:PORT. The back ends see the clients' own addresses and must route
// them back through IP1. The balancer answers ARP for VIP (link 0) and IP1
// (link 1), and pings to both.
//
//   clickos run middleboxes/lb.click DEV0=veth0 DEV1=veth1 MAC0=<veth0's MAC> MAC1=<veth1's MAC>
//   clickos vm run middleboxes/lb.click --vnic veth0 --vnic veth1 -h rw.tcp_table

define($DEV0 0, $VIP 10.0.1.100, $PORT 80, $MAC0 02:00:00:00:01:01,
       $DEV1 1, $IP1 10.0.2.1, $MAC1 02:00:00:00:02:01,
       $B1 10.0.2.11, $B2 10.0.2.12, $B3 10.0.2.13)

rr :: RoundRobinIPMapper(- - $B1 - 0 1, - - $B2 - 0 1, - - $B3 - 0 1);
// input 0: new connections to VIP:PORT; input 1: the back ends' replies
// (anything not of a balanced connection is dropped)
rw :: IPRewriter(rr, drop);

c0 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
FromDevice($DEV0) -> c0;
out0 :: Queue(1000) -> ToDevice($DEV0);
arpq0 :: ARPQuerier($VIP, $MAC0) -> out0;
c0[0] -> ARPResponder($VIP $MAC0) -> out0;
c0[1] -> [1]arpq0;
c0[3] -> Discard;

c1 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
FromDevice($DEV1) -> c1;
out1 :: Queue(1000) -> ToDevice($DEV1);
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
