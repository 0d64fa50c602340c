// Two firewall paths, one per thread: Click's way to use two cores.
//   clickos run -j 2 bench/firewall-x2.click N=10000000
//   Stock Click:  click -j 2 bench/firewall-x2.click N=10000000
// Each source sends N packets (2N in all); the DriverManager waits for both.
define($N 10000000, $DATA \<02000000000202000000000108004500003200004000401126b90a0000010a00000204d2162e001e000000000000000000000000000000000000000000000000>)

elementclass Firewall {
  input -> CheckIPHeader(OFFSET 14)
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
  -> output
}

src0 :: InfiniteSource(DATA $DATA, LIMIT $N, BURST 32, STOP true) -> Firewall -> out0 :: Discard;
src1 :: InfiniteSource(DATA $DATA, LIMIT $N, BURST 32, STOP true) -> Firewall -> out1 :: Discard;
StaticThreadSched(src0 0, src1 1);
DriverManager(pause, pause);
