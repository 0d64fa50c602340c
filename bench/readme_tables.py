#!/usr/bin/env python3
"""Regenerates the README's benchmark tables from the benchmarks' JSON.

  bench/readme_tables.py [--check]

Each generated table sits between two markers in README.md,
`<!-- BEGIN generated:NAME -->` and `<!-- END generated:NAME -->`, and is
rebuilt from bench/results/NAME.json by the renderer registered for its
"kind". Nothing between the markers is typed by hand: rerun the benchmark
(it writes the JSON), then this script. --check exits 1 when the README
differs from what the JSON gives (a figure edited by hand, or JSON
committed without regenerating).
"""
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
sys.path.insert(0, os.path.join(ROOT, "bench", "veth"))


def render_latency(doc):
    rows = doc["results"]
    base = next((r for r in rows if r["forwarder"] == "bridge"), None)
    out = ["| forwarder | idle RTT µs (20 pings/s) | added over the bridge | loaded RTT µs (`ping -f`) | added over the bridge |",
           "|---|---|---|---|---|"]
    for r in rows:
        cells = [r["forwarder"]]
        for mode in ("idle", "load"):
            v = r.get(mode + "_avg_us")
            cells.append(f"{v:.0f}" if v is not None else "—")
            b = base.get(mode + "_avg_us") if base else None
            cells.append(f"{v - b:+.0f}" if (v is not None and b is not None and r is not base) else "—")
        out.append("| " + " | ".join(cells) + " |")
    m = doc["machine"]
    out.append("")
    out.append(f"Measured {doc['date']} on {m['host']} ({m['cpus']} CPUs, Linux {m['kernel']}), load "
               f"{doc['load_before'][0]:.1f} before / {doc['load_after'][0]:.1f} after; median over "
               f"{doc['rounds']} alternating rounds of {doc['count']} pings each; `{doc['command']}`.")
    return "\n".join(out)


def load(path, name):
    """A module from a file (bench/veth/run.py and bench/middleboxes/run.py share a name)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def render_suspend(doc):
    out = ["| NAT with %d mappings (vm) | median ms |" % doc["mappings"],
           "|---|---|",
           f"| suspend (pause at a safe point, snapshot, end) | {doc['suspend_ms']:.1f} |",
           f"| resume (new VM from the snapshot, running) | {doc['resume_ms']:.1f} |",
           f"| downtime, suspend → resumed, in one process | {doc['downtime_ms']:.1f} |",
           f"| downtime, `clickos migrate` between two daemons ({doc['daemon_mappings']} mappings; pre-copy, daemon to daemon) | {doc['migrate_downtime_ms']:.1f} |"]
    if "migrate_through_cli_downtime_ms" in doc:
        out += [f"| of which the pause and the second part (changed pages, registers) | {doc['migrate_suspend_ms']:.1f} |",
                f"| downtime, `clickos migrate --through-cli` (the whole snapshot through the CLI, before) | {doc['migrate_through_cli_downtime_ms']:.1f} |"]
    out += ["",
           f"Snapshot {doc['snapshot_bytes'] / 1e6:.1f} MB"
           + (f" (a migration's second part {doc['migrate_delta_bytes'] / 1e3:.0f} KB)" if "migrate_delta_bytes" in doc else "")
           + f"; median of {doc['runs']} runs; {doc['profile']} build; "
           f"measured {doc['date']} ({doc['cpus']} CPUs, Linux {doc['kernel']}, load {doc['load']}); "
           f"`{doc['command']}`."]
    return "\n".join(out)


def render_daemon(doc):
    c, f, h, u, r = doc["create"], doc["fleet"], doc["handler_us"], doc["update"], doc["restart"]
    n = f["n"]

    def met(ok):
        return "met" if ok else "**missed**"

    gap = c["api_ms"][0] - c["library_ms"][0]
    gap99 = c["api_ms"][1] - c["library_ms"][1]
    out = [f"| {n} vm instances of `{doc['config']}`, {doc['memory_mib']} MiB each | measured | target |",
           "|---|---|---|",
           f"| create → running, the library (`Instance::create`), median / p99 | {c['library_ms'][0]:.2f} / {c['library_ms'][1]:.2f} ms | — |",
           f"| create → running through the API (`POST /v1/instances` answered), median / p99 | {c['api_ms'][0]:.2f} / {c['api_ms'][1]:.2f} ms | within 1 ms of the library: median {met(gap <= 1.0)} ({gap:+.2f} ms), p99 {met(gap99 <= 1.0)} ({gap99:+.2f} ms) |",
           f"| … of which not the boot (the answer minus the daemon's own boot time), median / p99 | {c['api_minus_boot_ms'][0]:.2f} / {c['api_minus_boot_ms'][1]:.2f} ms | |",
           f"| {n} instances created through the API ({doc['client_threads']} clients) | {f['seconds']:.2f} s | ≤ 5 s: {met(f['seconds'] <= 5)} |",
           f"| memory with {n} running: daemon RSS (guest RAM included) / per instance / MemAvailable drop | {f['daemon_rss_mib']} MiB / {f['rss_per_instance_kib']} KiB / {f['mem_available_drop_mib']} MiB | |",
           f"| one configuration pushed to {u['n']} running instances (`PUT …/config`, {doc['client_threads']} clients) | {u['ms']:.0f} ms | ≤ 1 s: {met(u['ms'] <= 1000)} |",
           f"| handler read round trip (`GET …/handlers/c.count`), median / p99 | {h['read'][0]:.0f} / {h['read'][1]:.0f} µs | ≤ 200 µs median: {met(h['read'][0] <= 200)} |",
           f"| … the library's own read (`Instance::read`, in process), median / p99 | {h['library_read'][0]:.0f} / {h['library_read'][1]:.0f} µs | |",
           f"| handler write round trip (`PUT …/handlers/c.reset`), median / p99 | {h['write'][0]:.0f} / {h['write'][1]:.0f} µs | ≤ 200 µs median: {met(h['write'][0] <= 200)} |",
           f"| daemon restart after `kill -9`: socket answers / all {n} running (from their configurations) | {r['kill9_socket_ms']:.0f} ms / {r['kill9_all_running_s']:.2f} s | |",
           f"| clean stop (SIGTERM; {n} parked, {r['parked_mb']:.0f} MB of snapshots) / start to all {n} running with their state | {r['clean_stop_s']:.2f} s / {r['clean_all_running_s']:.2f} s | |",
           "",
           f"One connection per request over the UNIX socket (`Connection: close`, as the CLI and the Python client do); "
           f"medians and p99 over {doc['rounds']} creates (library and API alternating) and {h['samples']} handler "
           f"reads and writes; {doc['profile']} build; measured {doc['date']} on {doc['cpu'].strip()} "
           f"({doc['cpus']} CPUs, {doc['mem_gib']} GiB, Linux {doc['kernel']}, load {doc['load_before']} before / "
           f"{doc['load_after']} after, shared with other work); `{doc['command']}`."]
    return "\n".join(out)


def renderers():
    import compare  # bench/peers/compare.py
    mb = load("bench/middleboxes/run.py", "middleboxes_run")
    return {"peers": compare.render, "latency": render_latency, "middleboxes": mb.render,
            "suspend": render_suspend, "daemon": render_daemon}


def main():
    check = "--check" in sys.argv[1:]
    path = os.path.join(ROOT, "README.md")
    text = open(path).read()
    rend = renderers()
    pat = re.compile(r"(<!-- BEGIN generated:([\w-]+) -->\n)(.*?)(<!-- END generated:\2 -->)", re.S)

    def sub(m):
        name = m.group(2)
        jpath = os.path.join(ROOT, "bench", "results", name + ".json")
        if not os.path.exists(jpath):
            sys.exit(f"readme_tables.py: README wants {jpath}, which does not exist")
        doc = json.load(open(jpath))
        kind = doc.get("kind")
        if kind not in rend:
            sys.exit(f"readme_tables.py: {jpath}: no renderer for kind {kind!r}")
        return m.group(1) + rend[kind](doc).rstrip("\n") + "\n" + m.group(4)

    new = pat.sub(sub, text)
    if check:
        if new != text:
            print("readme_tables.py: README.md's generated tables differ from bench/results/*.json; "
                  "run bench/readme_tables.py", file=sys.stderr)
            sys.exit(1)
        return
    if new != text:
        open(path, "w").write(new)
        print("README.md: tables regenerated", file=sys.stderr)
    else:
        print("README.md: tables already current", file=sys.stderr)


if __name__ == "__main__":
    main()
