// BR: a software BRAS (PPPoE, RFC 2516, sessions terminated towards an IP
// uplink) -- NOT YET SHIPPED HERE. Its elements (PPPoE discovery, LCP/IPCP,
// session checks, encapsulation) are being built on a separate branch
// (h-bras) and are not merged yet; this placeholder keeps the ninth slot
// and the same interface conventions (DEV0: the subscribers' PPPoE link,
// DEV1: the uplink), and runs as a counting wire so that it parses and
// runs everywhere the others do. Replace it with the BRAS configuration
// when the PPPoE elements are merged.
//
//   clickos run middleboxes/bras.click DEV0=veth0 DEV1=veth1
//   clickos vm run middleboxes/bras.click --vnic veth0 --vnic veth1

define($DEV0 0, $DEV1 1)

FromDevice($DEV0) -> c0 :: Counter -> Queue(1000) -> ToDevice($DEV1);
FromDevice($DEV1) -> c1 :: Counter -> Queue(1000) -> ToDevice($DEV0);
