// EM: the Ethernet mirror. Every frame arriving on interface 0 goes back
// out of it with its source and destination Ethernet addresses swapped
// (the paper's EM; one interface).
//
//   clickos run middleboxes/em.click DEV0=veth0
//   clickos vm run middleboxes/em.click --vnic veth0

define($DEV0 0)

FromDevice($DEV0) -> c0 :: Counter -> EtherMirror -> Queue(1000) -> ToDevice($DEV0);
