// IDS: an inline intrusion detection and prevention system between two
// links (a bump in the wire): SnortIDS checks IPv4 both ways against a
// small Snort 3 rule set, writes Snort fast-alert lines for what fires
// (to the console; `ids0.alerts` keeps the latest), drops what the drop
// rules name, and passes the rest. ARP and other frames pass unexamined.
//
//   clickos run middleboxes/ids.click DEV0=veth0 DEV1=veth1
//   clickos vm run middleboxes/ids.click --vnic veth0 --vnic veth1 -h ids0.stats
//
// Rules: an HTTP request for /etc/passwd and a NOP sled are dropped;
// directory traversal in a URI and DNS queries for "evil" names alert.

define($DEV0 0, $DEV1 1)

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

FromDevice($DEV0) -> ids0 :: Inspect -> Queue(1000) -> ToDevice($DEV1);
FromDevice($DEV1) -> ids1 :: Inspect -> Queue(1000) -> ToDevice($DEV0);
