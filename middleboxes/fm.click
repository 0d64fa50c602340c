// FM: a flow monitor in the wire between two links. Frames pass both ways
// unchanged; IPv4 flows (5-tuple, one per direction) are metered with
// packet and octet counts and first/last times, and exported as IPFIX
// (RFC 7011) over UDP to a collector reached out of interface 1 (nfcapd,
// or any IPFIX collector). Observation domain 0 meters link 0 -> 1,
// domain 1 link 1 -> 0.
//
//   clickos run middleboxes/fm.click DEV0=veth0 DEV1=veth1 COLLECTOR=192.0.2.1 \
//       COLLECTOR_MAC=<its MAC> SRC=192.0.2.254 SRCMAC=<veth1's MAC>
//   clickos vm run middleboxes/fm.click --vnic veth0 --vnic veth1 -h fx0.flows
//
// INACTIVE and ACTIVE are the idle and active timeouts; write
// `fx0.flush` / `fx1.flush` to export every flow now.

define($DEV0 0, $DEV1 1,
       $SRC 192.0.2.254, $SRCMAC 02:00:00:00:02:01,
       $COLLECTOR 192.0.2.1, $COLLECTOR_MAC ff:ff:ff:ff:ff:ff, $CPORT 4739,
       $INACTIVE 15s, $ACTIVE 30min)

to1 :: Queue(1000) -> ToDevice($DEV1);
to0 :: Queue(1000) -> ToDevice($DEV0);
export :: UDPIPEncap($SRC, $CPORT, $COLLECTOR, $CPORT)
  -> EtherEncap(0x0800, $SRCMAC, $COLLECTOR_MAC) -> to1;

FromDevice($DEV0) -> c0 :: Classifier(12/0800, -);
c0[0] -> MarkIPHeader(14)
  -> fx0 :: IPFIXExport(OBSERVATION_DOMAIN 0, INACTIVE_TIMEOUT $INACTIVE, ACTIVE_TIMEOUT $ACTIVE)
  -> to1;
fx0[1] -> export;
c0[1] -> to1;

FromDevice($DEV1) -> c1 :: Classifier(12/0800, -);
c1[0] -> MarkIPHeader(14)
  -> fx1 :: IPFIXExport(OBSERVATION_DOMAIN 1, INACTIVE_TIMEOUT $INACTIVE, ACTIVE_TIMEOUT $ACTIVE)
  -> to0;
fx1[1] -> export;
c1[1] -> to0;
