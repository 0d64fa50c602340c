#!/usr/bin/env python3
"""Runs bench/middleboxes/run.py --quick, small, and checks what it wrote
(never a timing): every middlebox at both sizes passed all of its packets
and has a nonzero rate, the CGNAT new-flow run made one mapping per flow
(cgn.created, read from the handler) and kept them all live on the second
pass, the Click-compatible NAT held one mapping per flow, and the IDS
loaded 1, 100 and 1,000 rules. crates/clickos/tests/middleboxes_bench.rs
runs it with the debug build.

  bench/middleboxes/check_quick.py CLICKOS_BIN
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
N, FLOWS = 20000, 3000


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "mb.json")
        p = subprocess.run([sys.executable, os.path.join(HERE, "run.py"), "--quick", "--clickos", binary,
                            "--n", str(N), "--flows", str(FLOWS), "--json", out],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert p.returncode == 0, f"run.py failed ({p.returncode}): {p.stderr[-2000:]}"
        doc = json.load(open(out))
    rows = doc["results"]
    assert doc["kind"] == "middleboxes" and doc["sizes"] == [64, 1500]
    boxes = {(r["box"], r["size"]): r for r in rows if r["part"] == "boxes" and r["engine"] == "clickos"}
    for box in ("wr", "em", "ir", "fw", "cgnat", "bras", "ids", "lb", "fm", "cn-click"):
        for size in (64, 1500):
            r = boxes[(box, size)]
            assert "error" not in r, r
            assert r["median_mpps_cpu"] > 0 and r["median_mpps_wall"] > 0, r
    stress = {r["case"]: r for r in rows if r["part"] == "cgnat"}
    new = stress["new flow every packet"]
    assert "error" not in new, new
    for c in new["checks"]:
        assert c["created"] == FLOWS, c          # one binding per packet of the first pass
        assert c["bindings"] == FLOWS, c         # all still live after the second pass
        assert c["table_size"] == FLOWS, c       # and one rewriter flow each
        assert c["port_failures"] == 0, c
    cn = [r for r in rows if r["part"] == "cn-click-flows"]
    assert cn and all("error" not in r and r["table_size"] == [FLOWS] for r in cn), cn
    ids = {(r["rules"], r["size"]): r for r in rows if r["part"] == "ids-rules"}
    assert sorted({k for k, _ in ids}) == [1, 100, 1000]
    assert all("error" not in r and r["median_mpps_cpu"] > 0 for r in ids.values()), ids
    print("ok")


if __name__ == "__main__":
    main()
