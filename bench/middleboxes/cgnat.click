// Benchmark of middleboxes/cgnat.click (CN, the carrier-grade NAT) in
// memory, one core. Differs from the shipped file: the subscribers' frames
// come from InfiniteSource (SOURCE=src, the default: one flow, N packets
// of DATA) or from a pcap file (SOURCE=dump PCAP=FILE: FromDump, e.g. a
// new flow for every packet); Idle stands in for FromDevice($DEV1),
// Discard for each Queue -> ToDevice; the gateway is put in arpq1's table
// before the source starts; the mapping log goes to /dev/null (LOG).
// The NAT (CGNATMapper, IPRewriter, ICMPPingRewriter, ICMPRewriter) is the
// shipped one; the 1M-mapping run passes POOL=198.51.100.0/24 (the shipped
// /28 has 14 x 64512 ports).
//   clickos run bench/middleboxes/cgnat.click N=1000000 -h out1.count -h cgn.stats
define($N 1000000, $DATA \<020000000101020000000a010800450000320000400040116eaf0a000002c000020a9c40162e001e813700000000000000000000000000000000000000000000>,
       $SOURCE src, $PCAP bench/middleboxes/one-flow.pcap,
       $IP0 10.0.0.1, $MAC0 02:00:00:00:01:01,
       $IP1 203.0.113.2, $NET1 203.0.113.0/24, $MAC1 02:00:00:00:02:01,
       $GW 203.0.113.1,
       $POOL 198.51.100.0/28, $PORTS 1024-65535, $BLOCK 512, $BLOCKS 4,
       $INSIDE 10.0.0.0/8, $LOG /dev/null)

cgn :: CGNATMapper(POOL $POOL, PORTS $PORTS, BLOCK $BLOCK, PER_SUBSCRIBER_BLOCKS $BLOCKS,
                   INSIDE $INSIDE, LOG $LOG);
rw :: IPRewriter(cgn, cgn);
pr :: ICMPPingRewriter(cgn, drop);
err_out :: ICMPRewriter(rw pr);
err_in :: ICMPRewriter(rw pr);

// link 0: the subscribers (the source stands in for FromDevice($DEV0))
c0 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
src :: InfiniteSource(DATA $DATA, LIMIT $N, BURST 32, STOP true, ACTIVE false) -> c0;
dump :: FromDump($PCAP, STOP true, ACTIVE false) -> c0;
out0 :: Discard;
arpq0 :: ARPQuerier($IP0, $MAC0) -> out0;
c0[0] -> ARPResponder($IP0 $MAC0) -> out0;
c0[1] -> [1]arpq0;
c0[3] -> Discard;

// link 1: the outside (idle)
c1 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
Idle -> c1;
out1 :: Discard;
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

rw[0] -> to_out;
pr[0] -> to_out;
rw[1] -> arpq0;
pr[1] -> arpq0;

// the gateway's address is known before the source starts
Script(write arpq1.insert $GW 02:00:00:00:02:99, write $SOURCE.active true);
