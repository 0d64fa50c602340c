// BR: a software BRAS. PPPoE subscribers (RFC 2516) on DEV0 are
// terminated by PPPoEServer (discovery, LCP, IPCP with addresses from
// $POOL, no authentication) and routed to the uplink on DEV1; packets for
// subscribers go back into their sessions. The same file as
// conf/bras.click with the devices as DEV0/DEV1 so that it runs both ways:
//
//   clickos run middleboxes/bras.click DEV0=veth0 DEV1=veth1 UPLINK_IP=192.0.2.1 GW=192.0.2.2
//   clickos vm run middleboxes/bras.click --vnic veth0 --vnic veth1
//
// Under `clickos run`, leave the two interfaces without IP addresses (the
// host's stack sees the frames too). Read the sessions with
// `bras.sessions`, the drop counters with `bras.stats`.

define($DEV0 0, $DEV1 1, $ACCESS_ETH 02:00:00:00:01:fe,
       $UPLINK_IP 192.0.2.1, $UPLINK_LEN 24,
       $UPLINK_ETH 02:00:00:00:02:fe, $GW 192.0.2.2,
       $LOCAL 100.64.0.1, $POOL 100.64.0.0/24,
       $AC clickos-bras, $SERVICE internet)

bras :: PPPoEServer(ETH $ACCESS_ETH, LOCAL $LOCAL, POOL $POOL,
                    AC_NAME $AC, SERVICE_NAME $SERVICE, MRU 1492);

// access link: PPPoE discovery and sessions, nothing else
FromDevice($DEV0)
    -> HostEtherFilter($ACCESS_ETH, DROP_OWN true, DROP_OTHER true)
    -> ac :: Classifier(12/8863, 12/8864, -);
ac[0] -> [0]bras;
ac[1] -> [0]bras;
ac[2] -> Discard;
bras[0] -> Queue(1000) -> ToDevice($DEV0);

// routing: 0 = the BRAS itself, 1 = subscribers, 2 = uplink
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

rt[2] -> dt2 :: DecIPTTL -> aq :: ARPQuerier($UPLINK_IP, $UPLINK_ETH) -> uq :: Queue(1000) -> ToDevice($DEV1);
dt2[1] -> ICMPError($LOCAL, timeexceeded) -> rt;

// uplink: ARP and IPv4
FromDevice($DEV1)
    -> HostEtherFilter($UPLINK_ETH, DROP_OWN true, DROP_OTHER true)
    -> uc :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
uc[0] -> ARPResponder($UPLINK_IP $UPLINK_ETH) -> uq;
uc[1] -> [1]aq;
uc[2] -> Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> rt;
uc[3] -> Discard;
