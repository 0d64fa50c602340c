// A small firewall to run as an instance:
//   clickos vm run conf/instance.click -h allowed.count -h src.count -t
// 100,000 UDP packets (10.0.0.1:1234 -> 10.0.0.2:5678) go through
// CheckIPHeader and a ten-rule IPFilter; the source stops the router when done.
define($N 100000)

src :: InfiniteSource(DATA \<02000000000202000000000108004500003200004000401126b90a0000010a00000204d2162e001e000000000000000000000000000000000000000000000000>,
                      LIMIT $N, BURST 32, STOP true)
  -> CheckIPHeader(OFFSET 14)
  -> fw :: IPFilter(deny src net 192.168.0.0/16,
                    deny dst net 172.16.0.0/12,
                    allow tcp && dst port 80,
                    allow tcp && dst port 443,
                    allow tcp && dst port 22 && src net 10.1.0.0/16,
                    deny udp && dst port 53 && not src net 10.0.0.0/8,
                    allow udp && dst port 123,
                    deny icmp type echo,
                    allow udp && src net 10.0.0.0/8 && dst port 5678,
                    deny all)
  -> allowed :: Counter
  -> Discard;
