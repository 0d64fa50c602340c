// example.click -- the ClickOS "main job": summarise a packet trace.
//
// Reads tests/data/mixed.pcap (52 assorted frames: TCP, UDP, ICMP, ARP,
// IPv6, fragments, malformed IPv4 headers, ...), keeps the IPv4 packets
// whose headers check out, classifies them by protocol, counts each class,
// writes one line per IP packet in Click's IP summary dump format, and
// stops at the end of the file. From the repository root:
//
//   cargo run --release -p clickos -- run conf/example.click
//
// Read the counters after the run with -h (several handlers print with
// NAME: headings, as Click does), and send the summary to a file instead of
// standard output with a definition:
//
//   cargo run --release -p clickos -- run conf/example.click SUMMARY=/tmp/summary.txt \
//       -h tcp.count -h udp.count -h icmp.count -h other.count -h bad.count -h nonip.count

define($TRACE tests/data/mixed.pcap, $SUMMARY -);

src :: FromDump($TRACE, STOP true);     // stops the driver at end of file

summary :: ToIPSummaryDump($SUMMARY,
    CONTENTS timestamp ip_src ip_dst ip_proto sport dport ip_len tcp_flags);

// Ethernet type 0x0800 is IPv4; everything else (ARP, IPv6, LLDP, 802.3,
// runts) leaves on output 1.
eth :: Classifier(12/0800, -);

// CheckIPHeader drops packets with a bad version, header length, total
// length or checksum -- unless they go to its second output, as here.
check :: CheckIPHeader;

proto :: IPClassifier(tcp, udp, icmp, -);

src -> eth;
eth[0] -> Strip(14) -> check -> proto;
eth[1] -> nonip :: Counter -> Discard;
check[1] -> bad :: Counter -> Discard;

proto[0] -> tcp :: Counter -> summary;
proto[1] -> udp :: Counter -> summary;
proto[2] -> icmp :: Counter -> summary;
proto[3] -> other :: Counter -> summary;
