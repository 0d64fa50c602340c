// CN: a carrier-grade NAT (NAT444) between the subscribers' link
// (interface 0) and the outside (interface 1): IPRewriter with a
// CGNATMapper, so endpoint-independent mapping and filtering, paired
// address pooling, per-subscriber port blocks, hairpinning and a mapping
// log (RFC 4787, RFC 6888). TCP and UDP through IPRewriter, pings through
// ICMPPingRewriter (sharing the port blocks), ICMP errors about NATed
// flows translated both ways by ICMPRewriter; the NAT is a router too
// (ARP on both links, TTL decrement with time exceeded, pings to its own
// addresses answered). It answers ARP for the pool on the outside link, so
// the pool may be on-link or routed to IP1.
//
//   clickos run middleboxes/cgnat.click DEV0=veth0 DEV1=veth1 MAC0=<veth0's MAC> \
//       MAC1=<veth1's MAC> LOG=/var/log/cgnat.log
//   clickos vm run middleboxes/cgnat.click --vnic veth0 --vnic veth1
//       (in an instance the log lines go to the console)
//
// Subscribers (INSIDE) are on link 0 and use IP0 as their gateway; the
// outside's gateway is GW (destinations in NET1 are reached directly).
// Read the bindings with `cgn.mappings`, the subscribers' blocks with
// `cgn.subscribers`, counters with `cgn.stats`.

define($DEV0 0, $IP0 10.0.0.1, $MAC0 02:00:00:00:01:01,
       $DEV1 1, $IP1 203.0.113.2, $NET1 203.0.113.0/24, $MAC1 02:00:00:00:02:01,
       $GW 203.0.113.1,
       $POOL 198.51.100.0/28, $PORTS 1024-65535, $BLOCK 512, $BLOCKS 4,
       $INSIDE 10.0.0.0/8, $LOG cgnat.log)

cgn :: CGNATMapper(POOL $POOL, PORTS $PORTS, BLOCK $BLOCK, PER_SUBSCRIBER_BLOCKS $BLOCKS,
                   INSIDE $INSIDE, LOG $LOG);
// input 0: from the subscribers, input 1: from the outside;
// output 0: to the outside, output 1: to the subscribers
rw :: IPRewriter(cgn, cgn);
pr :: ICMPPingRewriter(cgn, drop);
err_out :: ICMPRewriter(rw pr);
err_in :: ICMPRewriter(rw pr);

// link 0: the subscribers
c0 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
FromDevice($DEV0) -> c0;
out0 :: Queue(1000) -> ToDevice($DEV0);
arpq0 :: ARPQuerier($IP0, $MAC0) -> out0;
c0[0] -> ARPResponder($IP0 $MAC0) -> out0;
c0[1] -> [1]arpq0;
c0[3] -> Discard;

// link 1: the outside
c1 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
FromDevice($DEV1) -> c1;
out1 :: Queue(1000) -> ToDevice($DEV1);
arpq1 :: ARPQuerier($IP1, $MAC1) -> out1;
c1[0] -> ARPResponder($IP1 $MAC1, $POOL $MAC1) -> out1;
c1[1] -> [1]arpq1;
c1[3] -> Discard;

to_out :: StaticIPLookup($NET1 0, 0.0.0.0/0 $GW 0);
to_out[0] -> arpq1;

// from the subscribers
c0[2] -> Strip(14) -> CheckIPHeader -> GetIPAddress(16)
  -> in_cls :: IPClassifier(dst host $IP0 or dst host $IP1, -);
in_cls[0] -> me0 :: IPClassifier(icmp type echo, -);
me0[0] -> ICMPPingResponder -> GetIPAddress(16) -> arpq0;
me0[1] -> Discard;
in_cls[1] -> dt0 :: DecIPTTL
  -> proto0 :: IPClassifier(tcp or udp, icmp type echo,
                            icmp type 3 or icmp type 4 or icmp type 5 or icmp type 11 or icmp type 12, -);
dt0[1] -> ICMPError($IP0, timeexceeded) -> GetIPAddress(16) -> arpq0;
proto0[0] -> [0]rw;
proto0[1] -> [0]pr;
proto0[2] -> err_out -> to_out;
proto0[3] -> Discard;

// from the outside
c1[2] -> Strip(14) -> CheckIPHeader -> GetIPAddress(16)
  -> out_cls :: IPClassifier(dst host $IP1, tcp or udp, icmp type echo-reply,
                             icmp type 3 or icmp type 4 or icmp type 5 or icmp type 11 or icmp type 12, -);
out_cls[0] -> me1 :: IPClassifier(icmp type echo, -);
me1[0] -> ICMPPingResponder -> GetIPAddress(16) -> to_out;
me1[1] -> Discard;
out_cls[1] -> [1]rw;
out_cls[2] -> [1]pr;
out_cls[3] -> err_in -> arpq0;
out_cls[4] -> Discard;

// NATed: out (and hairpinned flows back in)
rw[0] -> to_out;
pr[0] -> to_out;
rw[1] -> arpq0;
pr[1] -> arpq0;
