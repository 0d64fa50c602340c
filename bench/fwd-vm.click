// A two-way IP forwarder with static next hops in an instance between two
// vNICs (bench/veth/run.py's ping measurements: replies must come back,
// which bench/fw-vm.click's one-way firewall does not let through).
//   clickos vm run bench/fwd-vm.click --vnic A --vnic B A_SRC=.. A_DST=.. B_SRC=.. B_DST=..
// Frames from vNIC 0 leave on vNIC 1 with B_SRC/B_DST, and back.
define($A_SRC 02:00:00:00:01:02, $A_DST 02:00:00:00:01:01,
       $B_SRC 02:00:00:00:02:02, $B_DST 02:00:00:00:02:01)

FromVNIC(0) -> EtherRewrite(SRC $B_SRC, DST $B_DST) -> ToVNIC(1);
FromVNIC(1) -> EtherRewrite(SRC $A_SRC, DST $A_DST) -> ToVNIC(0);
