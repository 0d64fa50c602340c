// The firewall cut in two across threads (a pipeline): thread 0 makes and
// checks packets, a Queue hands them to thread 1, which filters them.
// Shows what one hop between cores costs. The source sleeps while the
// Queue (or the ring in front of it) is full, as before a full Queue in Click.
//   clickos run -j 2 bench/firewall-split.click N=10000000
//   Stock Click:  click -j 2 bench/firewall-split.click N=10000000
define($N 10000000, $DATA \<02000000000202000000000108004500003200004000401126b90a0000010a00000204d2162e001e000000000000000000000000000000000000000000000000>)

src :: InfiniteSource(DATA $DATA, LIMIT $N, BURST 32, STOP false)
  -> CheckIPHeader(OFFSET 14)
  -> q :: Queue(4096)
  -> u :: Unqueue(BURST 32)
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
  -> out :: Counter(COUNT_CALL $N stop)   // stops when the last packet is through
  -> Discard;
StaticThreadSched(src 0, u 1);
