#!/usr/bin/env python3
"""Same-run comparison of clickos with Click and FastClick on bench/*.click.

Every configuration runs under each engine in turn (clickos, Click,
FastClick, clickos, Click, ...), pinned to one CPU, and the figure is
packets per CPU-second of the engine process (user + system time, so a
busy neighbour on a shared machine costs wall time, not the figure):
median of --runs runs. With --callgrind, instructions per packet are
counted exactly by valgrind's callgrind: (instructions with N packets -
instructions with 0) / N. Both engines read the same file with the same
N, so every ratio printed is same-run on identical configurations.

Peers are built by bench/peers/build.sh from a checkout you point it at;
a peer whose binary is missing is reported and skipped (nothing is
fetched: CI has no network).

Usage:
  bench/peers/compare.py [--clickos BIN] [--click BIN] [--fastclick BIN]
                         [--configs floor,firewall,...] [--runs 5] [--n N]
                         [--callgrind] [--json FILE] [--quick]

Default peer paths: ~/.cache/clickos-peers/{click,fastclick}/bin/click,
or $CLICK / $FASTCLICK. Output: a Markdown table on stdout, a progress
line on stderr, and every measured run in the JSON file (default
bench/results/peers.json), which bench/readme_tables.py turns into the
README's table.
"""
import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_CONFIGS = ["floor", "firewall", "firewall-strip", "router", "counters", "iprouter"]


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine():
    return {
        "host": platform.node(),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "kernel": platform.release(),
    }


def pin_cmd():
    """taskset on the last CPU when there is more than one."""
    n = os.cpu_count() or 1
    if n > 1 and shutil.which("taskset"):
        return ["taskset", "-c", str(n - 1)]
    return []


def run_cpu(cmd):
    """Runs cmd; returns its CPU seconds (children's rusage delta)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.decode(errors='replace').strip()[-300:]}")
    return (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)


def engine_cmd(kind, binary, config, n):
    path = os.path.join("bench", config + ".click")
    if kind == "clickos":
        return [binary, "run", path, f"N={n}"]
    return [binary, path, f"N={n}"]


def callgrind(kind, binary, config, n):
    def ir(count):
        with tempfile.NamedTemporaryFile(suffix=".cg", delete=False) as t:
            out = t.name
        try:
            subprocess.run(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
                + engine_cmd(kind, binary, config, count),
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, check=True)
            with open(out) as f:
                for line in f:
                    if line.startswith("summary:"):
                        return int(line.split()[1])
        finally:
            os.unlink(out)
        raise RuntimeError("callgrind wrote no summary")
    return (ir(n) - ir(0)) / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clickos", default=os.path.join(ROOT, "target/release/clickos"))
    ap.add_argument("--click", default=os.environ.get("CLICK", os.path.expanduser("~/.cache/clickos-peers/click/bin/click")))
    ap.add_argument("--fastclick", default=os.environ.get("FASTCLICK", os.path.expanduser("~/.cache/clickos-peers/fastclick/bin/click")))
    ap.add_argument("--configs", default=",".join(DEFAULT_CONFIGS))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--n", type=int, default=5_000_000)
    ap.add_argument("--callgrind", action="store_true", help="also count instructions per packet (valgrind)")
    ap.add_argument("--cg-n", type=int, default=200_000, help="packets for the callgrind runs")
    ap.add_argument("--json", default=os.path.join(ROOT, "bench/results/peers.json"))
    ap.add_argument("--quick", action="store_true", help="3 runs of 2M packets")
    a = ap.parse_args()
    if a.quick:
        a.runs, a.n = 3, 2_000_000
    engines = []
    for kind, path in (("clickos", a.clickos), ("click", a.click), ("fastclick", a.fastclick)):
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            engines.append((kind, path))
        elif kind == "clickos":
            sys.exit(f"compare.py: no clickos binary at {path} (cargo build --release -p clickos)")
        else:
            print(f"compare.py: {kind}: no binary at {path}; skipped "
                  f"(build it: bench/peers/build.sh {kind} SOURCE_DIR)", file=sys.stderr)
    if a.callgrind and not shutil.which("valgrind"):
        sys.exit("compare.py: --callgrind needs valgrind")
    configs = [c for c in a.configs.split(",") if c]
    for c in configs:
        if not os.path.isfile(os.path.join(ROOT, "bench", c + ".click")):
            sys.exit(f"compare.py: no bench/{c}.click")
    pin = pin_cmd()
    load0 = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    results = []
    total = len(configs) * a.runs * len(engines)
    done = 0
    for c in configs:
        rates = {k: [] for k, _ in engines}
        failed = {}
        for r in range(a.runs):
            for kind, path in engines:
                done += 1
                print(f"\r[{done}/{total}] {c}: {kind} run {r + 1}/{a.runs}   ", end="", file=sys.stderr, flush=True)
                if kind in failed:
                    continue
                try:
                    secs = run_cpu(pin + engine_cmd(kind, path, c, a.n))
                    rates[kind].append(a.n / secs / 1e6)
                except RuntimeError as e:
                    failed[kind] = str(e)
        for kind, path in engines:
            row = {"config": c, "engine": kind, "binary": path, "n": a.n, "mpps": rates[kind]}
            if kind in failed:
                row["error"] = failed[kind]
            else:
                row["median_mpps"] = statistics.median(rates[kind])
            results.append(row)
    if a.callgrind:
        for c in configs:
            for kind, path in engines:
                print(f"\rcallgrind {c}: {kind}            ", end="", file=sys.stderr, flush=True)
                row = next(x for x in results if x["config"] == c and x["engine"] == kind)
                if "error" in row:
                    continue
                try:
                    row["instr_per_packet"] = callgrind(kind, path, c, a.cg_n)
                except (RuntimeError, subprocess.CalledProcessError) as e:
                    row["callgrind_error"] = str(e)
    print("", file=sys.stderr)
    doc = {
        "kind": "peers",
        "date": started,
        "machine": machine(),
        "load_before": load0,
        "load_after": os.getloadavg(),
        "runs": a.runs,
        "pinned": " ".join(pin) or "no",
        "command": " ".join(["bench/peers/compare.py"] + sys.argv[1:]),
        "results": results,
    }
    os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump(doc, f, indent=1)
    print(render(doc))


def render(doc):
    """The Markdown table for a peers JSON document (also used by readme_tables.py)."""
    rows = doc["results"]
    kinds = []
    for r in rows:
        if r["engine"] not in kinds:
            kinds.append(r["engine"])
    configs = []
    for r in rows:
        if r["config"] not in configs:
            configs.append(r["config"])
    get = {(r["config"], r["engine"]): r for r in rows}
    has_cg = any("instr_per_packet" in r for r in rows)
    head = ["configuration"] + [f"{k} Mp/s" for k in kinds]
    head += [f"clickos / {k}" for k in kinds if k != "clickos"]
    if has_cg:
        head += [f"{k} instr/pkt" for k in kinds]
        head += [f"instr clickos / {k}" for k in kinds if k != "clickos"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in configs:
        cells = [f"`bench/{c}.click`"]
        base = get.get((c, "clickos"), {})
        for k in kinds:
            r = get.get((c, k), {})
            if "median_mpps" in r:
                lo, hi = min(r["mpps"]), max(r["mpps"])
                cells.append(f"{r['median_mpps']:.1f} ({lo:.1f}–{hi:.1f})")
            else:
                cells.append("failed" if "error" in r else "—")
        for k in kinds:
            if k == "clickos":
                continue
            r = get.get((c, k), {})
            if "median_mpps" in r and "median_mpps" in base:
                cells.append(f"**{base['median_mpps'] / r['median_mpps']:.2f}×**")
            else:
                cells.append("—")
        if has_cg:
            for k in kinds:
                r = get.get((c, k), {})
                cells.append(f"{r['instr_per_packet']:.0f}" if "instr_per_packet" in r else "—")
            for k in kinds:
                if k == "clickos":
                    continue
                r = get.get((c, k), {})
                if "instr_per_packet" in r and "instr_per_packet" in base:
                    cells.append(f"{base['instr_per_packet'] / r['instr_per_packet']:.2f}×")
                else:
                    cells.append("—")
        out.append("| " + " | ".join(cells) + " |")
    m = doc["machine"]
    out.append("")
    # say why a column of instruction counts is empty
    for k in kinds:
        errs = [r["callgrind_error"] for r in doc["results"] if r["engine"] == k and "callgrind_error" in r]
        if errs:
            why = (
                "died with SIGILL (FastClick builds with -march=native; valgrind does not emulate every "
                "instruction of this CPU)" if all("SIGILL" in e for e in errs) else errs[0])
            out.append(f"No instruction counts for {k}: under valgrind it {why} "
                       f"({len(errs)} of {len(configs)} configurations).")
            out.append("")
    out.append(f"Measured {doc['date']} on {m['host']} ({m['cpu']}, {m['cpus']} CPUs, Linux {m['kernel']}), "
               f"load {doc['load_before'][0]:.1f} before / {doc['load_after'][0]:.1f} after; "
               f"median of {doc['runs']} alternating runs, packets per CPU-second, pinned: {doc['pinned']}; "
               f"`{doc['command']}`.")
    return "\n".join(out)


if __name__ == "__main__":
    main()
