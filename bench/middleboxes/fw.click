// Benchmark of middleboxes/fw.click (FW, the firewall) in memory, one core.
// Differs from the shipped file: InfiniteSource stands in for
// FromDevice($DEV0), Discard for Queue -> ToDevice (both links), and the
// inside link is idle. The packet (UDP 10.0.0.1:1234 -> 10.0.0.2:5678) is
// allowed by the tenth rule, after nine that do not match.
//   clickos run bench/middleboxes/fw.click N=1000000 -h allowed.count
define($N 1000000, $DATA \<020000000002020000000a0108004500003200004000401126b90a0000010a00000204d2162e001ed0af00000000000000000000000000000000000000000000>)

to_in :: Discard;
to_out :: Discard;

src :: InfiniteSource(DATA $DATA, LIMIT $N, BURST 32, STOP true) -> cl :: Classifier(12/0806, 12/0800, -);
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

Idle -> inside :: Counter -> to_out;
