// FW: a bump-in-the-wire firewall. IPv4 from interface 0 (the outside)
// goes through ten rules (those of bench/firewall.click, plus ICMP echo
// allowed) and what they allow leaves on interface 1 (the inside); what
// they deny (output 1 of the filter) is counted and dropped. ARP passes;
// everything from the inside passes out.
//
//   clickos run middleboxes/fw.click DEV0=veth0 DEV1=veth1
//   clickos vm run middleboxes/fw.click --vnic veth0 --vnic veth1 -h allowed.count -h denied.count

define($DEV0 0, $DEV1 1)

to_in :: Queue(1000) -> ToDevice($DEV1);
to_out :: Queue(1000) -> ToDevice($DEV0);

FromDevice($DEV0) -> cl :: Classifier(12/0806, 12/0800, -);
cl[0] -> to_in;
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
  -> to_in;
fw[1] -> denied :: Counter -> Discard;
cl[2] -> other :: Counter -> Discard;

FromDevice($DEV1) -> inside :: Counter -> to_out;
