// WR: the wire. Every frame from interface 0 leaves on interface 1 and back,
// unchanged; the paper's baseline middlebox.
//
//   clickos run middleboxes/wr.click DEV0=veth0 DEV1=veth1
//   clickos vm run middleboxes/wr.click --vnic veth0 --vnic veth1
//
// DEV0/DEV1 are Linux interface names under `clickos run` and vNIC numbers
// (the defaults 0 and 1) in an instance.

define($DEV0 0, $DEV1 1)

FromDevice($DEV0) -> c0 :: Counter -> Queue(1000) -> ToDevice($DEV1);
FromDevice($DEV1) -> c1 :: Counter -> Queue(1000) -> ToDevice($DEV0);
