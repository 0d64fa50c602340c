// The firewall as ../shared/ANCHORS.md measured Click and FastClick:
// Strip -> CheckIPHeader -> IPFilter (10 rules) -> Unstrip -> Discard.
// (In Click, Unstrip on a packet the source shares forces a copy.)
// Stock Click:  click bench/firewall-strip.click N=10000000
define($N 10000000, $DATA \<02000000000202000000000108004500003200004000401126b90a0000010a00000204d2162e001e000000000000000000000000000000000000000000000000>)

InfiniteSource(DATA $DATA, LIMIT $N, BURST 32, STOP true)
  -> Strip(14)
  -> CheckIPHeader
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
  -> Unstrip(14)
  -> Discard;
