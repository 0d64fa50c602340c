// The IDS benchmark (bench/middleboxes/ids.click) with a generated rule
// file instead of the shipped four rules: RULES=FILE with K content rules
// (run.py writes 1, 100 and 1,000: `alert tcp any any -> any 80
// (msg:"rule I"; content:"...I..."; sid:I;)`, each a distinct string that
// the HTTP request does not contain), one direction only.
//   clickos run bench/middleboxes/ids-rules.click RULES=/tmp/r.rules N=1000000 -h out1.count -h ids.rule_count
define($N 1000000, $DATA \<020000000002020000000a0108004500003200004000400626c40a0000010a0000029c400050000003e8000007d05018ffff54cc0000474554202f696e646578>, $RULES /dev/null)

src :: InfiniteSource(DATA $DATA, LIMIT $N, BURST 32, STOP true)
  -> c :: Classifier(12/0800, -);
c[0] -> MarkIPHeader(14) -> ids :: SnortIDS(FILE $RULES, CONSOLE false) -> out1 :: Discard;
ids[1] -> dropped :: Counter -> Discard;
c[1] -> out1;
