// What replaying a pcap costs by itself: FromDump -> Discard, for the
// CGNAT stress cases (bench/middleboxes/cgnat.click SOURCE=dump), whose
// figures include the replay.
//   clickos run bench/middleboxes/replay.click PCAP=FILE -h out.count -h dump.count
define($PCAP bench/middleboxes/one-flow.pcap)

dump :: FromDump($PCAP, STOP true) -> out :: Discard;
