// bench/firewall.click's ten rules in an instance between two vNICs:
// vNIC 0 in, vNIC 1 out (bench/veth/run.py's clickos-vm forwarder).
//   clickos vm run bench/fw-vm.click --vnic IN --vnic OUT [SRC=MAC DST=MAC]
// SRC/DST: the Ethernet addresses written on the way out (the out
// interface's and the next hop's).
define($SRC 02:00:00:00:02:02, $DST 02:00:00:00:02:01)

FromVNIC(0, BURST 32)
  -> CheckIPHeader(OFFSET 14)
  -> IPFilter(deny src net 192.168.0.0/16,
              deny dst net 172.16.0.0/12,
              allow tcp && dst port 80,
              allow tcp && dst port 443,
              allow tcp && dst port 22 && src net 10.1.0.0/16,
              deny udp && dst port 53 && not src net 10.0.0.0/8,
              allow udp && dst port 123,
              deny icmp type echo,
              allow udp && src net 10.0.0.0/8 && dst port 5678,
              deny all)
  -> EtherRewrite(SRC $SRC, DST $DST)
  -> ToVNIC(1);
FromVNIC(1) -> Discard;
