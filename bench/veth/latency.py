#!/usr/bin/env python3
"""Round-trip latency through a forwarder between two namespaces.

  sudo bench/veth/latency.py [--clickos BIN] [--count N] [--json FILE] [--quick]

Namespaces la (10.99.0.1) and lb (10.99.0.2) on one subnet, each joined by
a veth pair to a middle namespace lm, where one forwarder at a time joins
the two links at layer 2:

  bridge      a Linux bridge (the baseline)
  clickos     `clickos run` with a wire: FromDevice(lma, PROMISC true,
              SNIFFER false) -> Queue -> ToDevice(lmb) and back
  clickos-poll the same wire under `clickos run --poll`: FromDevice polls
              without sleeping, the process at SCHED_IDLE (a CPU kept
              busy; any other task preempts it)
  clickos-vm  `clickos vm run conf/wire.click --vnic lma --vnic lmb`: an
              instance in the path through the switch (needs /dev/kvm)

For each, `ping` runs idle (20 pings a second) and under load (`ping -f`,
the next echo as soon as the reply is back), alternating the forwarders
round by round. Reported: median and mean round trip in µs, and the added
round trip over the bridge measured in the same run. Needs root, ping
and ip; prints a progress line on stderr, a table on stdout and writes
every sample's summary to the JSON file (default bench/results/latency.json).
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sh(cmd, check=True):
    return subprocess.run(cmd, shell=True, check=check, capture_output=True, text=True)


def setup():
    teardown()
    for n in ("la", "lb", "lm"):
        sh(f"ip netns add {n}")
        sh(f"ip -n {n} link set lo up")
    sh("ip link add name lma netns lm type veth peer name eth0 netns la")
    sh("ip link add name lmb netns lm type veth peer name eth0 netns lb")
    for n, ip in (("la", "10.99.0.1"), ("lb", "10.99.0.2")):
        sh(f"ip -n {n} addr add {ip}/24 dev eth0")
        sh(f"ip -n {n} link set eth0 up")
        sh(f"ip netns exec {n} sysctl -qw net.ipv6.conf.all.disable_ipv6=1")
        sh(f"ip netns exec {n} ethtool -K eth0 tx off tso off gso off gro off", check=False)
    for d in ("lma", "lmb"):
        sh(f"ip -n lm link set {d} up")
        sh(f"ip netns exec lm ethtool -K {d} tx off tso off gso off gro off", check=False)
    sh("ip netns exec lm sysctl -qw net.ipv6.conf.all.disable_ipv6=1")
    # Static ARP: the measurement is the data path, not ARP.
    mac = lambda n: sh(f"ip -n {n} -o link show eth0").stdout.split("link/ether ")[1].split()[0]
    sh(f"ip -n la neigh replace 10.99.0.2 lladdr {mac('lb')} dev eth0")
    sh(f"ip -n lb neigh replace 10.99.0.1 lladdr {mac('la')} dev eth0")


def teardown():
    for n in ("la", "lb", "lm"):
        sh(f"ip netns del {n}", check=False)


class Bridge:
    name = "bridge"

    def start(self):
        sh("ip -n lm link add br0 type bridge")
        sh("ip -n lm link set lma master br0")
        sh("ip -n lm link set lmb master br0")
        sh("ip -n lm link set br0 up")

    def stop(self):
        sh("ip -n lm link del br0", check=False)


class Clickos:
    def __init__(self, binary, vm, poll=False):
        self.binary, self.vm, self.poll, self.p = binary, vm, poll, None
        self.name = "clickos-vm" if vm else "clickos-poll" if poll else "clickos"

    def start(self):
        if self.vm:
            cmd = ["ip", "netns", "exec", "lm", self.binary, "vm", "run",
                   os.path.join(ROOT, "conf/wire.click"), "--vnic", "lma", "--vnic", "lmb"]
        else:
            cfg = ("FromDevice(lma, PROMISC true, SNIFFER false) -> Queue -> ToDevice(lmb);"
                   "FromDevice(lmb, PROMISC true, SNIFFER false) -> Queue -> ToDevice(lma);")
            cmd = ["ip", "netns", "exec", "lm", self.binary, "run"] + (["--poll"] if self.poll else []) + ["-e", cfg]
        self.p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Wait until a ping crosses.
        for _ in range(100):
            if sh("ip netns exec la ping -c 1 -W 0.2 10.99.0.2", check=False).returncode == 0:
                return
            if self.p.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.p.returncode}")
        raise RuntimeError(f"{self.name}: no ping crossed")

    def stop(self):
        if self.p:
            self.p.send_signal(2)
            try:
                self.p.wait(5)
            except subprocess.TimeoutExpired:
                self.p.kill()
            self.p = None


def ping(count, flood):
    opt = "-f" if flood else "-i 0.05"
    out = sh(f"ip netns exec la ping -q -c {count} {opt} -W 1 10.99.0.2", check=False).stdout
    m = re.search(r"= ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms", out)
    lost = re.search(r"(\d+)% packet loss", out)
    if not m:
        return None
    return {"min_us": float(m.group(1)) * 1e3, "avg_us": float(m.group(2)) * 1e3,
            "max_us": float(m.group(3)) * 1e3, "loss_pct": float(lost.group(1)) if lost else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clickos", default=os.path.join(ROOT, "target/release/clickos"))
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="bridge,clickos,clickos-poll,clickos-vm")
    ap.add_argument("--json", default=os.path.join(ROOT, "bench/results/latency.json"))
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.quick:
        a.count, a.rounds = 50, 1
    if os.geteuid() != 0:
        sys.exit("latency.py: needs root (network namespaces)")
    fwd = [Bridge(), Clickos(a.clickos, False), Clickos(a.clickos, False, poll=True),
           Clickos(a.clickos, True)]
    only = a.only.split(",")
    fwd = [f for f in fwd if f.name in only]
    if any(f.name == "clickos-vm" for f in fwd) and not os.access("/dev/kvm", os.R_OK | os.W_OK):
        print("latency.py: clickos-vm: no /dev/kvm; skipped", file=sys.stderr)
        fwd = [f for f in fwd if f.name != "clickos-vm"]
    setup()
    samples = {f.name: {"idle": [], "load": []} for f in fwd}
    load0 = os.getloadavg()
    try:
        for r in range(a.rounds):
            for f in fwd:
                for mode in ("idle", "load"):
                    print(f"\rround {r + 1}/{a.rounds}: {f.name} {mode}        ", end="", file=sys.stderr, flush=True)
                    f.start()
                    try:
                        s = ping(a.count, mode == "load")
                    finally:
                        f.stop()
                    if s:
                        samples[f.name][mode].append(s)
    finally:
        teardown()
    print("", file=sys.stderr)
    summary = []
    for f in fwd:
        row = {"forwarder": f.name}
        for mode in ("idle", "load"):
            avgs = [s["avg_us"] for s in samples[f.name][mode]]
            row[mode + "_avg_us"] = statistics.median(avgs) if avgs else None
            row[mode + "_runs"] = avgs
        summary.append(row)
    base = next((r for r in summary if r["forwarder"] == "bridge"), None)
    print("| forwarder | idle RTT µs (20/s) | added over bridge | loaded RTT µs (ping -f) | added over bridge |")
    print("|---|---|---|---|---|")
    for r in summary:
        cells = [r["forwarder"]]
        for mode in ("idle", "load"):
            v = r[mode + "_avg_us"]
            cells.append(f"{v:.0f}" if v is not None else "—")
            if base and v is not None and base[mode + "_avg_us"] is not None and r is not base:
                cells.append(f"{v - base[mode + '_avg_us']:+.0f}")
            else:
                cells.append("—")
        print("| " + " | ".join(cells) + " |")
    doc = {"kind": "latency", "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
           "machine": {"host": platform.node(), "cpus": os.cpu_count(), "kernel": platform.release()},
           "load_before": load0, "load_after": os.getloadavg(), "count": a.count, "rounds": a.rounds,
           "command": " ".join(["bench/veth/latency.py"] + sys.argv[1:]), "results": summary}
    os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
