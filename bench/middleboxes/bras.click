// Benchmark of middleboxes/bras.click (BR, the software BRAS) in memory,
// one core, upstream: PPPoE session frames from one subscriber are
// checked, decapsulated, routed and sent to the uplink. Differs from the
// shipped file: the access link's frames come from InfiniteSources (first
// the five frames a client sends to bring session 1 up: PADR, LCP
// Configure-Request and Configure-Ack, IPCP Configure-Request and
// Configure-Ack, 10 ms apart; then N session frames of DATA: UDP from
// 100.64.0.2 to 198.18.0.10, beyond the gateway), so PPPoEServer has
// COOKIE false (a PADR without a PADI's cookie); Idle stands in for
// FromDevice($DEV1), Discard for each Queue -> ToDevice; the uplink's
// gateway is put in aq's table.
//   clickos run bench/middleboxes/bras.click N=1000000 -h out1.count -h bras.sessions
define($N 1000000, $DATA \<0200000001fe020000000a01886411000001002c00214500002a000040004011106564400002c612000a9c40162e001622f50000000000000000000000000000>,
       $H0 \<0200000001fe020000000a01886311190000000c01010008696e7465726e6574>, $H1 \<0200000001fe020000000a018864110000010010c0210101000e010405d4050611223344>, $H2 \<0200000001fe020000000a01886411000001000ac02102010008010405d4>, $H3 \<0200000001fe020000000a01886411000001000c80210101000a030664400002>, $H4 \<0200000001fe020000000a01886411000001000c80210201000a030664400001>,
       $ACCESS_ETH 02:00:00:00:01:fe,
       $UPLINK_IP 192.0.2.1, $UPLINK_LEN 24,
       $UPLINK_ETH 02:00:00:00:02:fe, $GW 192.0.2.2,
       $LOCAL 100.64.0.1, $POOL 100.64.0.0/24,
       $AC clickos-bras, $SERVICE internet)

bras :: PPPoEServer(ETH $ACCESS_ETH, LOCAL $LOCAL, POOL $POOL,
                    AC_NAME $AC, SERVICE_NAME $SERVICE, MRU 1492, COOKIE false);

// access link: PPPoE discovery and sessions, nothing else
access :: HostEtherFilter($ACCESS_ETH, DROP_OWN true, DROP_OTHER true)
    -> ac :: Classifier(12/8863, 12/8864, -);
h0 :: InfiniteSource(DATA $H0, LIMIT 1, ACTIVE false) -> access;
h1 :: InfiniteSource(DATA $H1, LIMIT 1, ACTIVE false) -> access;
h2 :: InfiniteSource(DATA $H2, LIMIT 1, ACTIVE false) -> access;
h3 :: InfiniteSource(DATA $H3, LIMIT 1, ACTIVE false) -> access;
h4 :: InfiniteSource(DATA $H4, LIMIT 1, ACTIVE false) -> access;
src :: InfiniteSource(DATA $DATA, LIMIT $N, BURST 32, STOP true, ACTIVE false) -> access;
ac[0] -> [0]bras;
ac[1] -> [0]bras;
ac[2] -> Discard;
bras[0] -> out0 :: Discard;

rt :: StaticIPLookup($LOCAL/32 0, $UPLINK_IP/32 0,
                     $POOL 1,
                     $UPLINK_IP/$UPLINK_LEN 2, 0.0.0.0/0 $GW 2);

bras[1] -> CheckIPHeader -> GetIPAddress(16) -> rt;
bras[2] -> ICMPError($LOCAL, unreachable, host) -> rt;

rt[0] -> me :: IPClassifier(icmp type echo, -);
me[0] -> ICMPPingResponder -> GetIPAddress(16) -> rt;
me[1] -> Discard;

rt[1] -> dt1 :: DecIPTTL -> frag :: IPFragmenter(1492) -> [1]bras;
dt1[1] -> ICMPError($LOCAL, timeexceeded) -> rt;
frag[1] -> ICMPError($LOCAL, unreachable, needfrag) -> rt;

rt[2] -> dt2 :: DecIPTTL -> aq :: ARPQuerier($UPLINK_IP, $UPLINK_ETH) -> out1 :: Discard;
dt2[1] -> ICMPError($LOCAL, timeexceeded) -> rt;

// uplink (idle): ARP and IPv4
Idle
    -> HostEtherFilter($UPLINK_ETH, DROP_OWN true, DROP_OTHER true)
    -> uc :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
uc[0] -> ARPResponder($UPLINK_IP $UPLINK_ETH) -> out1;
uc[1] -> [1]aq;
uc[2] -> Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> rt;
uc[3] -> Discard;

Script(write aq.insert $GW 02:00:00:00:02:02,
       write h0.active true, wait 10ms, write h1.active true, wait 10ms,
       write h2.active true, wait 10ms, write h3.active true, wait 10ms,
       write h4.active true, wait 10ms, write src.active true);
