// A bump-in-the-wire firewall for an instance between two links: IPv4 from
// vNIC 0 (the outside) goes through the ten rules of bench/firewall.click
// plus ICMP echo (allowed here, for ping); what they deny is counted on
// output 1. ARP passes both ways; everything from vNIC 1 (the inside) passes.
//   clickos vm run conf/firewall-vnic.click --vnic veth0 --vnic veth1 -h allowed.count -h denied.count
out :: ToDevice(1);
in  :: ToDevice(0);

FromDevice(0)
  -> cl :: Classifier(12/0806, 12/0800, -);
cl[0] -> out;
cl[1] -> CheckIPHeader(OFFSET 14)
  -> fw :: IPFilter(allow icmp type echo,
                    allow icmp type echo-reply,
                    1 src net 192.168.0.0/16,
                    1 dst net 172.16.0.0/12,
                    allow tcp && dst port 80,
                    allow tcp && dst port 443,
                    allow tcp && dst port 22 && src net 10.1.0.0/16,
                    1 udp && dst port 53 && not src net 10.0.0.0/8,
                    allow udp && dst port 123,
                    allow udp && src net 10.0.0.0/8 && dst port 5678,
                    1 all)
  -> allowed :: Counter
  -> out;
fw[1] -> denied :: Counter -> Discard;
cl[2] -> other :: Counter -> Discard;

FromDevice(1) -> inside :: Counter -> in;
