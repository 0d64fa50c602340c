// Benchmark of middleboxes/ids.click (the inline IDS) in memory, one core.
// Differs from the shipped file: InfiniteSource stands in for
// FromDevice($DEV0), Idle for FromDevice($DEV1), Discard for each
// Queue -> ToDevice. The packet is an HTTP request in an established TCP
// connection (10.0.0.1:40000 -> 10.0.0.2:80, ACK|PSH), the text repeated to
// fill the frame; no rule fires, so every packet is inspected and passes.
//   clickos run bench/middleboxes/ids.click N=1000000 -h out1.count -h ids0/ids.count
define($N 1000000, $DATA \<020000000002020000000a0108004500003200004000400626c40a0000010a0000029c400050000003e8000007d05018ffff54cc0000474554202f696e646578>)

elementclass Inspect {
  input -> c :: Classifier(12/0800, -);
  c[0] -> MarkIPHeader(14)
    -> ids :: SnortIDS(
         RULES 'drop tcp any any -> any any (msg:"HTTP request for /etc/passwd"; flow:to_server,established; content:"/etc/passwd"; classtype:attempted-recon; sid:1000001;)',
         RULES 'drop tcp any any -> any any (msg:"x86 NOP sled"; content:"|90 90 90 90 90 90 90 90|"; classtype:shellcode-detect; sid:1000002;)',
         RULES 'alert tcp any any -> any any (msg:"directory traversal in a URI"; flow:to_server,established; content:"GET "; depth:4; content:"../"; sid:1000003;)',
         RULES 'alert udp any any -> any 53 (msg:"DNS query for an evil name"; pcre:"/\\x04evil/i"; sid:1000004;)')
    -> output;
  ids[1] -> dropped :: Counter -> Discard;
  c[1] -> output;
}

src :: InfiniteSource(DATA $DATA, LIMIT $N, BURST 32, STOP true) -> ids0 :: Inspect -> out1 :: Discard;
Idle -> ids1 :: Inspect -> out0 :: Discard;
