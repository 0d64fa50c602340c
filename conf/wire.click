// ClickOS's wire: a bump in the wire between an instance's two vNICs.
// FromDevice(N) / ToDevice(N) are the instance's vNIC N (ClickOS's syntax).
//   clickos vm run conf/wire.click --vnic veth0 --vnic veth1 -h c0.count -h c1.count
//   clickos vm run conf/wire.click --vnic pcap:IN.pcap --vnic pcap:,OUT.pcap
FromDevice(0) -> c0 :: Counter -> ToDevice(1);
FromDevice(1) -> c1 :: Counter -> ToDevice(0);
