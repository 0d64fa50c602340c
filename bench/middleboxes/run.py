#!/usr/bin/env python3
"""The nine middleboxes in memory, one core (the ClickOS paper's Figure 13).

Each bench/middleboxes/BOX.click is its middlebox (middleboxes/BOX.click)
with an InfiniteSource in place of the receiving device and Discard in
place of the sending ones; run.py gives it N frames of SIZE bytes
(64 ... 1500) fit for the box (UDP, PPPoE session frames, an HTTP request
in TCP) and runs `clickos run` pinned to one CPU. Figures: packets per
CPU-second of the engine process (user + system, from wait4, so a busy
neighbour costs wall time, not the figure) and packets per wall-clock
second; the median over --rounds alternating rounds. Every run checks
that the box delivered all N packets (a handler) and fails loudly if not.

Also, in the same run:
- the boxes whose elements stock Click has (wr, em, ir, fw, lb) and the
  CGNAT with Click's own NAPT pattern instead of CGNATMapper
  (cn-click.click) under Click too, alternating (--click BIN);
- the CGNAT stress cases: a new flow for every packet (--flows distinct
  flows replayed by FromDump from a pcap in /dev/shm) and lookups with
  that many live mappings (the same flows a second time), with the
  mappings created (cgn.created) and the process's peak RSS; the figure
  is the difference of two runs' CPU time over the packets that differ,
  so start-up and the pcap pass are not counted twice;
- new flows on the Click-compatible NAT under both engines (60,000 flows:
  Click's pattern has one address's 64,512 ports);
- the IDS with 1, 100 and 1,000 generated content rules.

Usage:
  bench/middleboxes/run.py [--click BIN] [--rounds 3] [--n N] [--sizes 64,1500]
                           [--flows 1000000] [--json FILE] [--quick]

Writes bench/results/middleboxes.json (bench/readme_tables.py renders it
into the README; --quick writes to the temporary directory instead) and
prints the table. --quick: one round of 200,000
packets at 64 and 1500 B and 50,000 flows: seconds, for tests and CI.
"""
import argparse
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
import packets  # noqa: E402
from compare import machine, pin_cmd  # noqa: E402  (bench/peers/compare.py)

# box -> (what it is, the handler counting the packets that made it through)
BOXES = {
    "wr": ("WR, wire", "out1.count"),
    "em": ("EM, Ethernet mirror", "out0.count"),
    "ir": ("IR, IP router", "out1.count"),
    "fw": ("FW, firewall", "allowed.count"),
    "cgnat": ("CN, carrier-grade NAT", "out1.count"),
    "bras": ("BR, BRAS (PPPoE upstream)", "out1.count"),
    "ids": ("IDS (4 rules)", "out1.count"),
    "lb": ("LB, load balancer", "out1.count"),
    "fm": ("FM, flow monitor", "to1.count"),
}
CLICK_BOXES = ["wr", "em", "ir", "fw", "lb", "cn-click"]  # only elements stock Click has
EXTRA = {"cn-click": ("CN with Click's NAPT pattern", "out1.count")}
PAPER_64B = {"cgnat": 5.1, "fw": 5.40, "ir": 4.25}  # ClickOS paper, Mp/s per core at 64 B
RULE_COUNTS = [1, 100, 1000]
CLICK_FLOWS = 60000


def run(engine, binary, config, params, handlers, pin):
    """One run; returns cpu and wall seconds, peak RSS (KiB) and the handlers' values."""
    path = os.path.join("bench", "middleboxes", config + ".click")
    cmd = [binary, "run", path] if engine == "clickos" else [binary, path]
    cmd += [f"{k}={v}" for k, v in params.items()]
    for h in handlers:
        cmd += ["-h", h]
    with tempfile.TemporaryFile() as out:
        t0 = time.monotonic()
        p = subprocess.Popen(pin + cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    if p.returncode != 0:
        raise RuntimeError(f"{engine} {config} exited {p.returncode}: {text.strip()[-400:]}")
    vals, cur = {}, None
    for line in text.splitlines():
        if line.endswith(":") and line[:-1] in handlers:
            cur = line[:-1]
            vals[cur] = []
        elif cur is not None:
            vals[cur].append(line)
    vals = {k: "\n".join(v).strip() for k, v in vals.items()}
    missing = [h for h in handlers if h not in vals]
    if missing:
        raise RuntimeError(f"{engine} {config}: no value for {missing}: {text.strip()[-400:]}")
    return {"cpu": ru.ru_utime + ru.ru_stime, "wall": wall, "maxrss_kb": ru.ru_maxrss, "handlers": vals}


def stat_line(text, key):
    for line in text.splitlines():
        w = line.split()
        if len(w) == 2 and w[0] == key:
            return int(w[1])
    raise RuntimeError(f"no {key} in {text!r}")


class Series:
    """The runs of one case under one engine."""

    def __init__(self, results, **key):
        self.row = dict(key, cpu_s=[], wall_s=[], mpps_cpu=[], mpps_wall=[], maxrss_kb=[])
        results.append(self.row)

    def add(self, n, r):
        self.row["cpu_s"].append(r["cpu"])
        self.row["wall_s"].append(r["wall"])
        self.row["mpps_cpu"].append(n / r["cpu"] / 1e6)
        self.row["mpps_wall"].append(n / r["wall"] / 1e6)
        self.row["maxrss_kb"].append(r["maxrss_kb"])

    def add_rate(self, n, cpu):
        """A rate from a difference of two runs' CPU times; a difference
        that noise made zero or negative is no measurement: it is counted
        (`invalid_rounds`) and left out of the median, never a NaN in it."""
        if cpu <= 0:
            self.row["invalid_rounds"] = self.row.get("invalid_rounds", 0) + 1
            return
        self.row["cpu_s"].append(cpu)
        self.row["mpps_cpu"].append(n / cpu / 1e6)

    def fail(self, e):
        self.row["error"] = str(e)

    def finish(self):
        finish(self.row)


def finish(r):
    """Adds the medians (and the peak RSS) to a row; a row whose every
    round was invalid gets an error instead."""
    for k in ("mpps_cpu", "mpps_wall"):
        if r[k]:
            r["median_" + k] = statistics.median(r[k])
    if not r["mpps_cpu"] and r.get("invalid_rounds") and "error" not in r:
        r["error"] = f"every round ({r['invalid_rounds']}) measured no CPU time difference"
    if r["maxrss_kb"]:
        r["peak_rss_kb"] = max(r["maxrss_kb"])


def rules_file(path, k):
    """k content rules on port 80, each a distinct pseudo-random string of
    8 to 16 lowercase letters, digits, '/' and '.' (the bytes an HTTP
    request is made of, so a prefilter cannot skip the payload); none is in
    the benchmark's request."""
    rnd = random.Random(k)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789/."
    with open(path, "w") as f:
        for i in range(1, k + 1):
            while True:
                s = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(8, 16)))
                if s.encode() not in packets.HTTP:
                    break
            f.write(f'alert tcp any any -> any 80 (msg:"generated rule {i}"; content:"{s}"; sid:{1000000 + i};)\n')


def progress(msg):
    print(f"\r{msg[:110]:<110}", end="", file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clickos", default=os.path.join(ROOT, "target/release/clickos"))
    ap.add_argument("--click", help="stock Click's userlevel driver (kohler/click); without it, no Click column")
    ap.add_argument("--rounds", type=int, help="alternating rounds (default 3)")
    ap.add_argument("--n", type=int, help="packets per run (default 2,000,000)")
    ap.add_argument("--sizes", help="frame sizes (default 64,256,512,1024,1500)")
    ap.add_argument("--flows", type=int, help="flows of the CGNAT stress cases (default 1,000,000)")
    ap.add_argument("--boxes", default=",".join(BOXES))
    ap.add_argument("--json", help="where the results go (default bench/results/middleboxes.json; "
                    "with --quick, middleboxes-quick.json in the temporary directory)")
    ap.add_argument("--shm", default="/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir(),
                    help="where the pcap files go (a tmpfs)")
    ap.add_argument("--quick", action="store_true", help="1 round, 200,000 packets, 64 and 1500 B, 50,000 flows")
    a = ap.parse_args()
    if a.json is None:
        a.json = (os.path.join(tempfile.gettempdir(), "middleboxes-quick.json") if a.quick
                  else os.path.join(ROOT, "bench/results/middleboxes.json"))
    # --quick changes the defaults; explicit options still win
    defaults = (1, 200_000, "64,1500", 50_000) if a.quick else (3, 2_000_000, "64,256,512,1024,1500", 1_000_000)
    for k, v in zip(("rounds", "n", "sizes", "flows"), defaults):
        if getattr(a, k) is None:
            setattr(a, k, v)
    if not (os.path.isfile(a.clickos) and os.access(a.clickos, os.X_OK)):
        sys.exit(f"run.py: no clickos binary at {a.clickos} (cargo build --release -p clickos)")
    engines = [("clickos", a.clickos)]
    if a.click:
        if not (os.path.isfile(a.click) and os.access(a.click, os.X_OK)):
            sys.exit(f"run.py: no Click binary at {a.click}")
        engines.append(("click", a.click))
    sizes = [int(s) for s in a.sizes.split(",")]
    boxes = [b for b in a.boxes.split(",") if b]
    pin = pin_cmd()
    load0 = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    results = []
    work = tempfile.mkdtemp(prefix="mbbench-", dir=a.shm)
    try:
        # --- the nine boxes (and the Click-only NAT), every size, alternating engines
        series = {}
        cases = boxes + ["cn-click"]
        for size in sizes:
            for box in cases:
                for kind, _ in engines:
                    if kind == "click" and box not in CLICK_BOXES:
                        continue
                    series[(box, kind, size)] = Series(results, part="boxes", box=box, engine=kind, size=size, n=a.n)
        for rnd in range(a.rounds):
            for size in sizes:
                for box in cases:
                    data = packets.click_hex(packets.frame(box, size))
                    handler = (BOXES.get(box) or EXTRA[box])[1]
                    for kind, binary in engines:
                        s = series.get((box, kind, size))
                        if s is None or "error" in s.row:
                            continue
                        progress(f"round {rnd + 1}/{a.rounds}: {box} {size} B, {kind}")
                        try:
                            r = run(kind, binary, box, {"N": a.n, "DATA": data}, [handler, "src.count"], pin)
                            got = int(r["handlers"][handler])
                            if got != a.n:
                                raise RuntimeError(f"{box} at {size} B under {kind}: {got} of {a.n} packets came out")
                            s.add(a.n, r)
                        except RuntimeError as e:
                            s.fail(e)
        # --- CGNAT stress: a new flow for every packet, then lookups with that many live mappings
        f = a.flows
        once = os.path.join(work, "flows.pcap")
        twice = os.path.join(work, "flows-twice.pcap")
        progress(f"writing {f} flows to {once}")
        packets.write_pcap(once, packets.flow_frames(f))
        packets.write_pcap(twice, itertools.chain(packets.flow_frames(f), packets.flow_frames(f)))
        one = os.path.join(HERE, "one-flow.pcap")
        pool = {"POOL": "198.51.100.0/24"}
        newflow = Series(results, part="cgnat", case="new flow every packet", engine="clickos", size=64, n=f)
        live = Series(results, part="cgnat", case=f"lookups with {f:,} live mappings", engine="clickos", size=64, n=f)
        replay = Series(results, part="cgnat", case="FromDump -> Discard (the replay's own cost)", engine="clickos", size=64, n=2 * f)
        checks = []
        hs = ["out1.count", "cgn.stats", "rw.table_size"]
        for rnd in range(a.rounds):
            progress(f"round {rnd + 1}/{a.rounds}: CGNAT with {f} flows")
            try:
                r0 = run("clickos", a.clickos, "cgnat", dict(pool, SOURCE="dump", PCAP=one), hs, pin)
                r1 = run("clickos", a.clickos, "cgnat", dict(pool, SOURCE="dump", PCAP=once), hs, pin)
                r2 = run("clickos", a.clickos, "cgnat", dict(pool, SOURCE="dump", PCAP=twice), hs, pin)
                rr = run("clickos", a.clickos, "replay", {"PCAP": twice}, ["out.count", "dump.count"], pin)
            except RuntimeError as e:
                newflow.fail(e)
                break
            for r, want in ((r1, f), (r2, 2 * f)):
                got = int(r["handlers"]["out1.count"])
                if got != want:
                    newflow.fail(f"CGNAT with {f} flows: {got} of {want} packets came out")
            newflow.add_rate(f, r1["cpu"] - r0["cpu"])
            live.add_rate(f, r2["cpu"] - r1["cpu"])
            replay.add(2 * f, rr)
            checks.append({
                "created": stat_line(r1["handlers"]["cgn.stats"], "created"),
                "bindings": stat_line(r2["handlers"]["cgn.stats"], "bindings"),
                "table_size": int(r2["handlers"]["rw.table_size"]),
                "port_failures": stat_line(r2["handlers"]["cgn.stats"], "port_failures"),
                "rss_kb_one_flow": r0["maxrss_kb"],
                "rss_kb_live": r2["maxrss_kb"],
            })
        newflow.row["checks"] = checks
        live.row["checks"] = checks
        # --- new flows through the Click-compatible NAT, both engines
        cf = min(CLICK_FLOWS, f)
        cpcap = os.path.join(work, "click-flows.pcap")
        packets.write_pcap(cpcap, packets.flow_frames(cf))
        cser = {k: Series(results, part="cn-click-flows", case="new flow every packet", engine=k, size=64, n=cf)
                for k, _ in engines}
        for rnd in range(a.rounds):
            for kind, binary in engines:
                s = cser[kind]
                if "error" in s.row:
                    continue
                progress(f"round {rnd + 1}/{a.rounds}: Click-compatible NAT, {cf} new flows, {kind}")
                try:
                    r0 = run(kind, binary, "cn-click", {"SOURCE": "dump", "PCAP": one}, ["out1.count", "rw.table_size"], pin)
                    r1 = run(kind, binary, "cn-click", {"SOURCE": "dump", "PCAP": cpcap}, ["out1.count", "rw.table_size"], pin)
                    got = int(r1["handlers"]["out1.count"])
                    if got != cf:
                        raise RuntimeError(f"{kind}: {got} of {cf} packets came out")
                    s.add_rate(cf, r1["cpu"] - r0["cpu"])
                    s.row.setdefault("table_size", []).append(int(r1["handlers"]["rw.table_size"]))
                except RuntimeError as e:
                    s.fail(e)
        # --- the IDS with 1, 100 and 1,000 content rules
        iser = {}
        for k in RULE_COUNTS:
            rules_file(os.path.join(work, f"{k}.rules"), k)
            for size in sorted({sizes[0], sizes[-1]}):
                iser[(k, size)] = Series(results, part="ids-rules", rules=k, engine="clickos", size=size, n=a.n)
        for rnd in range(a.rounds):
            for (k, size), s in iser.items():
                if "error" in s.row:
                    continue
                progress(f"round {rnd + 1}/{a.rounds}: IDS with {k} rules, {size} B")
                try:
                    r = run("clickos", a.clickos, "ids-rules",
                            {"N": a.n, "DATA": packets.click_hex(packets.frame("ids", size)),
                             "RULES": os.path.join(work, f"{k}.rules")},
                            ["out1.count", "ids.rule_count"], pin)
                    if int(r["handlers"]["ids.rule_count"]) != k or int(r["handlers"]["out1.count"]) != a.n:
                        raise RuntimeError(f"IDS with {k} rules: {r['handlers']}")
                    s.add(a.n, r)
                except RuntimeError as e:
                    s.fail(e)
    finally:
        for name in os.listdir(work):
            os.unlink(os.path.join(work, name))
        os.rmdir(work)
    print("", file=sys.stderr)
    for r in results:
        finish(r)
    doc = {
        "kind": "middleboxes",
        "date": started,
        "machine": machine(),
        "load_before": load0,
        "load_after": os.getloadavg(),
        "rounds": a.rounds,
        "n": a.n,
        "flows": a.flows,
        "sizes": sizes,
        "pinned": " ".join(pin) or "no",
        "nftables": "not measured: bench/veth's masquerade setup is not part of this driver yet",
        "paper_64b_mpps": PAPER_64B,
        "command": " ".join(["bench/middleboxes/run.py"] + sys.argv[1:]),
        "results": results,
    }
    os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
    with open(a.json, "w") as fh:
        json.dump(doc, fh, indent=1)
    print(render(doc))
    failed = [r for r in results if "error" in r]
    for r in failed:
        print(f"run.py: FAILED {r.get('box') or r.get('case') or r.get('rules')} {r['engine']}: {r['error']}", file=sys.stderr)
    sys.exit(1 if failed else 0)


def fmt(r, key="median_mpps_cpu"):
    if r is None:
        return "—"
    if "error" in r:
        return "failed"
    v = r.get(key)
    return f"{v:.2f}" if v is not None else "—"


def render(doc):
    """The README's Markdown for a middleboxes JSON document (readme_tables.py calls it)."""
    rows = doc["results"]
    sizes = doc["sizes"]
    get = {}
    for r in rows:
        if r["part"] == "boxes":
            get[(r["box"], r["engine"], r["size"])] = r
    has_click = any(r["engine"] == "click" for r in rows)
    paper = doc.get("paper_64b_mpps", {})
    out = ["Mp/s per CPU-second, one core, by frame size (in brackets: per wall-clock second at 64 B):", ""]
    head = ["middlebox"] + [f"{s} B" for s in sizes] + ["paper 64 B"]
    if has_click:
        head += ["Click 64 B", "clickos / Click 64 B", f"clickos / Click {sizes[-1]} B"]
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    names = dict(BOXES, **EXTRA)
    boxes = []
    for r in rows:
        if r["part"] == "boxes" and r["box"] not in boxes:
            boxes.append(r["box"])
    for b in boxes:
        cells = [f"{names[b][0]} (`{b}`)"]
        for s in sizes:
            r = get.get((b, "clickos", s))
            c = fmt(r)
            if s == sizes[0] and r and "median_mpps_wall" in r:
                c += f" ({r['median_mpps_wall']:.2f})"
            cells.append(c)
        cells.append(f"{paper[b]:.2f}" if b in paper else "—")
        if has_click:
            ck = get.get((b, "click", sizes[0]))
            cells.append(fmt(ck))
            for s in (sizes[0], sizes[-1]):
                mine, theirs = get.get((b, "clickos", s)), get.get((b, "click", s))
                if mine and theirs and "median_mpps_cpu" in mine and "median_mpps_cpu" in theirs:
                    cells.append(f"**{mine['median_mpps_cpu'] / theirs['median_mpps_cpu']:.2f}×**")
                else:
                    cells.append("—")
        out.append("| " + " | ".join(cells) + " |")
    out += ["", "CGNAT stress (64 B, clickos, CGNATMapper, pool 198.51.100.0/24, packets replayed from a pcap by FromDump):", "",
            "| case | Mp/s per CPU-second | mappings | peak RSS |", "|---|---|---|---|"]
    for r in rows:
        if r["part"] != "cgnat":
            continue
        chk = (r.get("checks") or [{}])[-1]
        maps, rss = "—", "—"
        if r["case"].startswith("new flow"):
            maps = f"{chk.get('created', 0):,} created" if chk else "—"
            rss = f"{chk['rss_kb_one_flow'] / 1024:.0f} MiB with one flow" if chk else "—"
        elif "live" in r["case"]:
            maps = f"{chk.get('bindings', 0):,} live" if chk else "—"
            rss = f"{chk['rss_kb_live'] / 1024:.0f} MiB" if chk else "—"
        case = f"lookups with {r['n']:,} live mappings" if "live" in r["case"] else r["case"]
        rng = ""
        if r.get("mpps_cpu") and "error" not in r:
            rng = f" ({min(r['mpps_cpu']):.2f}–{max(r['mpps_cpu']):.2f})"
        out.append(f"| {case} | {fmt(r)}{rng} | {maps} | {rss} |")
    cf = [r for r in rows if r["part"] == "cn-click-flows"]
    if cf:
        by = {r["engine"]: r for r in cf}
        line = f"| CN with Click's pattern, a new flow every packet ({cf[0]['n']:,} flows) | clickos {fmt(by.get('clickos'))}"
        if "click" in by:
            line += f", Click {fmt(by['click'])}"
            mine, theirs = by["clickos"], by["click"]
            if "median_mpps_cpu" in mine and "median_mpps_cpu" in theirs:
                line += f": **{mine['median_mpps_cpu'] / theirs['median_mpps_cpu']:.2f}×**"
        out.append(line + " | — | — |")
    ids = [r for r in rows if r["part"] == "ids-rules"]
    if ids:
        isz = sorted({r["size"] for r in ids})
        out += ["", "IDS with generated content rules (SnortIDS: one multi-pattern pass over the payload for all of them), Mp/s per CPU-second:", "",
                "| content rules | " + " | ".join(f"{s} B" for s in isz) + " |", "|---|" + "---|" * len(isz)]
        for k in sorted({r["rules"] for r in ids}):
            cells = [f"{k:,}"]
            for s in isz:
                cells.append(fmt(next((r for r in ids if r["rules"] == k and r["size"] == s), None)))
            out.append("| " + " | ".join(cells) + " |")
    m = doc["machine"]
    out.append("")
    out.append(f"Measured {doc['date']} on {m['host']} ({m['cpu']}, {m['cpus']} CPUs, Linux {m['kernel']}), "
               f"load {doc['load_before'][0]:.1f} before / {doc['load_after'][0]:.1f} after; "
               f"median of {doc['rounds']} alternating rounds of {doc['n']:,} packets, pinned: {doc['pinned']}; "
               f"`{doc['command']}`.")
    return "\n".join(out)


if __name__ == "__main__":
    main()
