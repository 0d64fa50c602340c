#!/usr/bin/env python3
"""The veth forwarding benchmark.

Three network namespaces joined by veth pairs:

    generator ns  g0 ==== m0  middle ns  m1 ==== s0  sink ns

A generator (`clickos run`, AF_XDP, on CPU 0) sends UDP frames that the
firewall allows (10.1.0.1 -> 10.2.0.2, destination port 5678: the 9th of
bench/firewall.click's ten rules) into g0: eight flows on g0's queue 0 (on
queues 0 and 1 for the AF_XDP -j 2 forwarder, whose copies serve one
receive queue each). A forwarder in the middle namespace (on CPU 1)
carries them from m0 to m1. m0's receive work (veth NAPI: XDP, AF_PACKET
copies, IP forwarding) runs in kernel threads pinned to CPU 1 at real-time
priority, as a NIC's softirq would preempt the forwarder on its core
(--napi). The sink drops every frame with a tcx ingress program on s0 and
counts nothing itself: what arrived is s0's receive counter, what was
offered is g0's transmit counter (plus what g0 dropped on a full ring).

For each forwarder and frame size it reports, as the median of several
runs: (a) forwarded Mp/s under full offered load (the generator as fast as
it goes), and (b) the highest offered rate carried with < 1 % loss (a short
binary search over the generator's rate).

Usage (root):  bench/veth/run.py [--quick] [--only NAME,...] [--json FILE]
`bench/veth/run.py --list` names the forwarders. Standard library only;
`bench/veth/setup` installs the packages it needs.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

MAC = {
    "g0": "02:00:00:00:01:01",
    "m0": "02:00:00:00:01:02",
    "m1": "02:00:00:00:02:02",
    "s0": "02:00:00:00:02:01",
}
SRC_IP = "10.1.0.1"
DST_IP = "10.2.0.2"
DST_PORT = 5678
FLOWS = 8
GEN_BATCH = 16
SINK_DROP = "tcx"  # --sink
GEN_BUCKET = 128
QUEUES = 2
GEN_CPU = 0
FROMDEVICE_EXTRA = ""  # --fromdevice
NAPI_MODE = "fifo"  # --napi
NICE = -10  # --nice


def nice():
    """The generator and the forwarders run at this nice level, so other
    work on a shared machine disturbs them less."""
    return ["nice", "-n", str(NICE)] if NICE else []
FWD_CPU = 1

# bench/firewall.click's ten rules; the test traffic is allowed by the 9th.
FIREWALL_RULES = [
    "deny src net 192.168.0.0/16",
    "deny dst net 172.16.0.0/12",
    "allow tcp && dst port 80",
    "allow tcp && dst port 443",
    "allow tcp && dst port 22 && src net 10.1.0.0/16",
    "deny udp && dst port 53 && not src net 10.0.0.0/8",
    "allow udp && dst port 123",
    "deny icmp type echo",
    "allow udp && src net 10.0.0.0/8 && dst port 5678",
    "deny all",
]
# The same ten rules for nftables' forward hook, in the same order.
NFT_RULES = [
    "ip saddr 192.168.0.0/16 drop",
    "ip daddr 172.16.0.0/12 drop",
    "tcp dport 80 accept",
    "tcp dport 443 accept",
    "ip saddr 10.1.0.0/16 tcp dport 22 accept",
    "ip saddr != 10.0.0.0/8 udp dport 53 drop",
    "udp dport 123 accept",
    "icmp type echo-request drop",
    "ip saddr 10.0.0.0/8 udp dport 5678 accept",
    "drop",
]


def log(msg):
    sys.stderr.write(f"\r\033[K{msg}\n")
    sys.stderr.flush()


_progress_on = sys.stderr.isatty()


def progress(msg):
    if _progress_on:
        sys.stderr.write(f"\r\033[K{msg[:150]}")
    else:
        sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def sh(*args, check=True, ns=None, input=None, timeout=60):
    """Runs a command (in namespace `ns`), returns stdout; raises with stderr."""
    cmd = list(args)
    if ns:
        cmd = ["ip", "netns", "exec", ns] + cmd
    r = subprocess.run(cmd, capture_output=True, text=True, input=input, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {(r.stderr or r.stdout).strip()}")
    return r.stdout


_libc = None


def die_with_parent():
    """preexec_fn: the child gets SIGTERM when run.py dies, however it dies
    (PR_SET_PDEATHSIG survives the exec of `ip netns exec` and of what it
    runs), so no generator or forwarder outlives the benchmark."""
    global _libc
    import ctypes

    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    _libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG


# ---------------------------------------------------------------- frames


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def frame(size, sport):
    """An Ethernet/IPv4/UDP frame of `size` bytes (no FCS) to m0."""
    ip_len = size - 14
    udp_len = ip_len - 20
    payload = bytes(udp_len - 8)
    src = socket.inet_aton(SRC_IP)
    dst = socket.inet_aton(DST_IP)
    udp = struct.pack("!HHHH", sport, DST_PORT, udp_len, 0) + payload
    pseudo = src + dst + struct.pack("!BBH", 0, 17, udp_len)
    uc = csum(pseudo + udp) or 0xFFFF
    udp = udp[:6] + struct.pack("!H", uc) + udp[8:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, ip_len, 0, 0x4000, 64, 17, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    eth = bytes.fromhex(MAC["m0"].replace(":", "")) + bytes.fromhex(MAC["g0"].replace(":", ""))
    return eth + b"\x08\x00" + ip + udp


# ---------------------------------------------------------------- topology


class Topology:
    """The three namespaces; counters are read from /proc/PID/net/dev of a
    process held in each namespace (no process spawned per reading)."""

    def __init__(self, tag):
        self.g, self.m, self.s = f"{tag}g", f"{tag}m", f"{tag}s"
        self.holders = {}
        self.sinkdrop = None

    def create(self):
        self.napi_before = set(int(p) for p in os.listdir("/proc") if p.isdigit())
        for ns in (self.g, self.m, self.s):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        q = ["numtxqueues", str(QUEUES), "numrxqueues", str(QUEUES)]
        # created from inside the middle namespace: names never meet the root's
        sh("ip", "link", "add", "m0", *q, "type", "veth", "peer", "name", "g0", *q, "netns", self.g, ns=self.m)
        sh("ip", "link", "add", "m1", *q, "type", "veth", "peer", "name", "s0", *q, "netns", self.s, ns=self.m)
        for ns, dev in self.devs():
            sh("ip", "-n", ns, "link", "set", dev, "address", MAC[dev])
            if shutil.which("ethtool"):
                sh("ethtool", "-K", dev, "tx", "off", "tso", "off", "gso", "off", "gro", "off", ns=ns, check=False)
            sh("ip", "-n", ns, "link", "set", dev, "up")
        # The middle's receive work (XDP, AF_PACKET copies, IP forwarding)
        # runs in a NAPI thread pinned to the forwarder's CPU: GRO on puts
        # veth in NAPI mode, `threaded` moves the poll into a kernel thread
        # (see pin_napi). Otherwise it would run on the generator's CPU,
        # inside its sendto.
        if NAPI_MODE != "sender":
            sh("ethtool", "-K", "m0", "gro", "on", ns=self.m, check=False)
            sh("sh", "-c", "echo 1 > /sys/class/net/m0/threaded", ns=self.m)
        sh("ip", "-n", self.g, "addr", "add", f"{SRC_IP}/24", "dev", "g0")
        sh("ip", "-n", self.m, "addr", "add", "10.1.0.254/24", "dev", "m0")
        sh("ip", "-n", self.m, "addr", "add", "10.2.0.254/24", "dev", "m1")
        sh("ip", "-n", self.s, "addr", "add", f"{DST_IP}/24", "dev", "s0")
        self.neighbours()
        for ns in (self.g, self.m, self.s):
            # no IPv6 router solicitations or neighbour discovery in the way
            sh("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", ns=ns, check=False)
            sh("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1", ns=ns, check=False)
        for k in ("all", "default", "m0", "m1"):
            sh("sysctl", "-qw", f"net.ipv4.conf.{k}.rp_filter=0", ns=self.m, check=False)
        self.forwarding(False)
        for ns in (self.g, self.m):
            self.holders[ns] = subprocess.Popen(
                ["ip", "netns", "exec", ns, "sleep", "infinity"],
                preexec_fn=die_with_parent,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        # the sink: a BPF program (tcx or XDP) drops every frame as it arrives
        self.sinkdrop = subprocess.Popen(
            ["ip", "netns", "exec", self.s, sys.executable, os.path.join(HERE, "bpfdrop.py"), "s0", SINK_DROP],
            preexec_fn=die_with_parent,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.sinkdrop.stdout.readline().strip()
        if line != "ready":
            raise RuntimeError(f"sink XDP drop: {self.sinkdrop.stderr.read().strip()}")
        self.holders[self.s] = self.sinkdrop
        time.sleep(0.1)

    def start_sink(self, mode):
        """(Re)attaches the sink's drop program: tcx or xdp (everything), or
        tcx-udp (UDP only: s0 answers pings)."""
        if self.sinkdrop is not None and self.sinkdrop.poll() is None:
            self.sinkdrop.terminate()
            self.sinkdrop.wait(3)
        self.sinkdrop = subprocess.Popen(
            ["ip", "netns", "exec", self.s, sys.executable, os.path.join(HERE, "bpfdrop.py"), "s0", mode],
            preexec_fn=die_with_parent,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.sinkdrop.stdout.readline().strip()
        if line != "ready":
            raise RuntimeError(f"sink drop ({mode}): {self.sinkdrop.stderr.read().strip()}")
        self.holders[self.s] = self.sinkdrop
        time.sleep(0.1)

    def ping_setup(self):
        """For ping: routes both ways, static neighbours everywhere (nothing
        in the instance's path answers ARP), every frame sent by g0 and s0
        on queue 0 (the AF_XDP ports serve queue 0 only), and a sink that
        drops only UDP (the background flow) so that s0 answers."""
        sh("ip", "-n", self.g, "route", "replace", "10.2.0.0/24", "via", "10.1.0.254")
        sh("ip", "-n", self.s, "route", "replace", "10.1.0.0/24", "via", "10.2.0.254")
        self.ping_neighbours()
        for ns, dev in ((self.g, "g0"), (self.s, "s0")):
            for q in range(QUEUES):
                mask = (1 << os.cpu_count()) - 1 if q == 0 else 0
                sh("sh", "-c", f"echo {mask:x} > /sys/class/net/{dev}/queues/tx-{q}/xps_cpus", ns=ns, check=False)
        self.start_sink("tcx-udp")

    def ping_neighbours(self):
        sh("ip", "-n", self.s, "neigh", "replace", "10.2.0.254", "lladdr", MAC["m1"], "dev", "s0", "nud", "permanent")
        sh("ip", "-n", self.m, "neigh", "replace", SRC_IP, "lladdr", MAC["g0"], "dev", "m0", "nud", "permanent")

    def pin_napi(self):
        """Pins m0's NAPI threads (napi/m0-ID, new since create()) to the
        forwarder's CPU; returns how many. Called after each forwarder
        starts, as attaching XDP may recreate them."""
        n = 0
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) in self.napi_before:
                continue
            try:
                with open(f"/proc/{pid}/comm") as f:
                    comm = f.read().strip()
            except OSError:
                continue
            if comm.startswith("napi/m0-"):
                subprocess.run(["taskset", "-pc", str(FWD_CPU), pid], capture_output=True)
                if NAPI_MODE == "fifo":
                    subprocess.run(["chrt", "-f", "-p", "50", pid], capture_output=True)
                n += 1
        return n

    def devs(self):
        return [(self.g, "g0"), (self.m, "m0"), (self.m, "m1"), (self.s, "s0")]

    def forwarding(self, on):
        sh("sysctl", "-qw", f"net.ipv4.ip_forward={1 if on else 0}", ns=self.m)

    def neighbours(self):
        # static: nothing in the path answers ARP (the sink drops everything)
        sh("ip", "-n", self.m, "neigh", "replace", DST_IP, "lladdr", MAC["s0"], "dev", "m1", "nud", "permanent")
        sh("ip", "-n", self.g, "neigh", "replace", "10.1.0.254", "lladdr", MAC["m0"], "dev", "g0", "nud", "permanent")

    def reset(self):
        """Puts the middle back as a forwarder found it. The kernel detaches
        BPF links and frees AF_XDP queues a little after their process
        exits (a tcx drop still attached would eat the next forwarder's
        frames), hence the pause."""
        time.sleep(1.0)
        for dev in ("vbbr", "ovs-netdev"):
            sh("ip", "-n", self.m, "link", "del", dev, check=False)
        # DPDK's net_af_packet takes its interfaces down when it stops (and
        # leaves them promiscuous): a link going down flushes even permanent
        # neighbour entries, so they are put back.
        for dev in ("m0", "m1"):
            sh("ip", "-n", self.m, "link", "set", dev, "promisc", "off", check=False)
            sh("ip", "-n", self.m, "link", "set", dev, "up", check=False)
        self.neighbours()
        self.forwarding(False)

    def release(self):
        """Ends the processes held in the namespaces (the sink's XDP goes)."""
        for p in self.holders.values():
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(3)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()

    def destroy(self):
        self.release()
        for ns in (self.g, self.m, self.s):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)

    def netdev(self, ns):
        """{dev: (rx_packets, rx_drops, tx_packets, tx_drops)} for namespace ns."""
        out = {}
        with open(f"/proc/{self.holders[ns].pid}/net/dev") as f:
            for line in f.readlines()[2:]:
                name, rest = line.split(":", 1)
                v = [int(x) for x in rest.split()]
                out[name.strip()] = (v[1], v[3], v[9], v[11])
        return out

    def counters(self):
        g = self.netdev(self.g)["g0"]
        s = self.netdev(self.s)["s0"]
        m = self.netdev(self.m)
        return {
            "t": time.monotonic(),
            "sent": g[2],
            "sent_drop": g[3],
            "m0_rx": m["m0"][0],
            "m1_tx": m["m1"][2],
            "m1_txdrop": m["m1"][3],
            "recv": s[0],
        }


# ---------------------------------------------------------------- generator


def clickos_bin(args):
    if args.clickos:
        return args.clickos
    return os.path.join(REPO, "target", "release", "clickos")


def generator_config(size, rate, queues):
    """One thread, one AF_XDP ToDevice per g0 queue used, eight flows
    (distinct UDP source ports) taken round robin. rate: packets/s in all,
    or None for as fast as it goes. The rate is kept by RatedUnqueue with a
    bucket of two batches of GEN_BATCH frames, so a generator that falls
    behind (descheduled) does not catch up in a burst larger than a veth
    ring (256 frames). On veth, a
    frame sent on g0's queue k arrives on m0's receive queue k."""
    lines = []
    per_queue = FLOWS // queues
    for q in range(queues):
        dev = f"ToDevice(g0, METHOD XDP, QUEUE {q}, BURST 32)"
        if rate is None:
            lines.append(f"rr{q} :: RoundRobinSched -> {dev};")
        else:
            # one token = GEN_BATCH copies of the next flow's frame, so the
            # generator sends batches, not one frame per timer expiry
            r = max(1, int(rate / queues / GEN_BATCH))
            lines.append(
                f"rr{q} :: RoundRobinSched -> RatedUnqueue(RATE {r}, BURST_SIZE {max(2, GEN_BUCKET // GEN_BATCH)}) -> t{q} :: Tee({GEN_BATCH});"
                f" q{q} :: Queue(256) -> {dev};"
            )
            lines += [f"t{q}[{k}] -> q{q};" for k in range(GEN_BATCH)]
        for f in range(per_queue):
            sport = 1234 + q * per_queue + f
            data = frame(size, sport).hex()
            lines.append(f"InfiniteSource(DATA \\<{data}>, LIMIT -1) -> [{f}]rr{q};")
    return "\n".join(lines)


class Generator:
    def __init__(self, args, topo):
        self.args, self.topo, self.p = args, topo, None

    def start(self, size, rate, queues):
        conf = generator_config(size, rate, queues)
        self.p = subprocess.Popen(
            ["ip", "netns", "exec", self.topo.g, *nice(), "taskset", "-c", str(GEN_CPU), clickos_bin(self.args), "run", "-e", conf],
            preexec_fn=die_with_parent,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    def stop(self):
        if self.p is None:
            return ""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
            try:
                self.p.wait(5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        err = self.p.stderr.read()
        self.p = None
        return err

    def alive(self):
        return self.p is not None and self.p.poll() is None


# ---------------------------------------------------------------- forwarders


class Unavailable(Exception):
    """The forwarder cannot run here; the message says why."""


class Proc:
    """A long-running process in a namespace with its stderr in a file."""

    def __init__(self, ns, argv, name, tmp, stdin=subprocess.DEVNULL, env=None):
        self.name = name
        self.errpath = os.path.join(tmp, f"{name}.log")
        self.err = open(self.errpath, "w")
        self.p = subprocess.Popen(
            ["ip", "netns", "exec", ns, *nice()] + argv, stdin=stdin, stdout=self.err, stderr=subprocess.STDOUT, env=env,
            preexec_fn=die_with_parent,
        )

    def alive(self):
        return self.p.poll() is None

    def output(self):
        self.err.flush()
        with open(self.errpath) as f:
            return f.read()

    def stop(self, sig=signal.SIGINT):
        if self.p.poll() is None:
            try:
                self.p.send_signal(sig)
                self.p.wait(5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.err.close()


def tail(text, n=3):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return " | ".join(lines[-n:])


class Forwarder:
    name = ""
    label = ""
    group = ""  # clickos, linux, dpdk, ovs

    def __init__(self, args, topo, tmp):
        self.args, self.topo, self.tmp = args, topo, tmp
        self.procs = []

    def check(self):
        """Raises Unavailable if a tool is missing."""

    def start(self, size):
        raise NotImplementedError

    def stop(self):
        for p in reversed(self.procs):
            p.stop()
        self.procs = []

    def healthy(self):
        for p in self.procs:
            if not p.alive():
                raise Unavailable(f"{p.name} exited: {tail(p.output())}")

    # g0 queues the generator spreads its flows over: 2 only for the
    # forwarders that serve two receive queues with AF_XDP.
    gen_queues = 1


def require(tool, package):
    if not shutil.which(tool):
        raise Unavailable(f"{tool} not found (Debian package {package}; run bench/veth/setup)")


def clickos_firewall(method):
    """The firewall of bench/firewall.click between m0 and m1. Under
    --replicate, copy k serves m0's queue k (AF_XDP) or joins a fanout
    group (AF_PACKET), and sends on m1's queue k."""
    rules = ",\n    ".join(FIREWALL_RULES)
    extra = f", {FROMDEVICE_EXTRA}" if FROMDEVICE_EXTRA else ""
    return f"""FromDevice(m0, SNIFFER false, METHOD {method}, BURST 32{extra})
  -> CheckIPHeader(OFFSET 14)
  -> IPFilter({rules})
  -> EtherRewrite(SRC {MAC['m1']}, DST {MAC['s0']})
  -> Queue(1024)
  -> ToDevice(m1, METHOD {method}, BURST 32);
"""


class ClickOS(Forwarder):
    group = "clickos"

    def __init__(self, args, topo, tmp, method, threads):
        super().__init__(args, topo, tmp)
        self.method, self.threads = method, threads
        m = "AF_XDP" if method == "XDP" else "AF_PACKET"
        self.name = f"clickos-{method.lower()}" + (f"-j{threads}" if threads > 1 else "")
        self.label = f"clickos firewall, {m}" + (f", -j {threads} --replicate" if threads > 1 else "")
        if method == "XDP" and threads > 1:
            self.gen_queues = threads

    def check(self):
        b = clickos_bin(self.args)
        if not os.access(b, os.X_OK):
            raise Unavailable(f"{b} not built (cargo build --release -p clickos)")

    def start(self, size):
        # One thread serves both m0 queues with one FromDevice each (AF_XDP);
        # with --replicate, copy k's FromDevice serves queue k.
        conf = clickos_firewall(self.method)
        argv = [clickos_bin(self.args), "run", "-e", conf]
        if self.threads > 1:
            argv = ["taskset", "-c", "0-1", *argv[:2], "-j", str(self.threads), "--replicate", "-a", *argv[2:]]
        else:
            argv = ["taskset", "-c", str(FWD_CPU)] + argv
        self.procs.append(Proc(self.topo.m, argv, self.name, self.tmp))
        time.sleep(0.4)
        self.healthy()


class ClickOSVM(Forwarder):
    """bench/fw-vm.click (the same ten rules, FromVNIC(0) -> ... ->
    ToVNIC(1)) in an instance, its vNICs joined to m0 and m1 through the
    software switch: `clickos vm run bench/fw-vm.click --vnic m0 --vnic m1`.
    cpus: where the process (switch thread and vCPU) may run."""

    group = "clickos-vm"

    def __init__(self, args, topo, tmp, cpus):
        super().__init__(args, topo, tmp)
        self.cpus = cpus
        one = cpus == str(FWD_CPU)
        self.name = "clickos-vm" if one else "clickos-vm-cpu01"
        self.label = "clickos firewall in a VM (vm run --vnic m0 --vnic m1)" + (
            "" if one else ", CPUs 0-1"
        )

    def check(self):
        b = clickos_bin(self.args)
        if not os.access(b, os.X_OK):
            raise Unavailable(f"{b} not built (cargo build --release -p clickos)")
        if not os.access("/dev/kvm", os.R_OK | os.W_OK):
            raise Unavailable("no /dev/kvm")

    def start(self, size):
        argv = [
            "taskset", "-c", self.cpus, clickos_bin(self.args), "vm", "run", "-i", self.args.vm_isolation,
            os.path.join(REPO, "bench", "fw-vm.click"), "--vnic", "m0", "--vnic", "m1",
            f"SRC={MAC['m1']}", f"DST={MAC['s0']}",
        ]
        self.procs.append(Proc(self.topo.m, argv, self.name, self.tmp))
        time.sleep(1.0)
        self.healthy()


class Linux(Forwarder):
    group = "linux"

    def __init__(self, args, topo, tmp, nft):
        super().__init__(args, topo, tmp)
        self.nft = nft
        self.name = "linux-nft" if nft else "linux"
        self.label = "Linux forwarding + nftables (10 rules)" if nft else "Linux IP forwarding"

    def check(self):
        if self.nft:
            require("nft", "nftables")

    def start(self, size):
        if self.nft:
            rules = "\n".join(f"    {r}" for r in NFT_RULES)
            ruleset = (
                "table ip vbfw {\n  chain forward {\n    type filter hook forward priority 0; policy accept;\n"
                f"{rules}\n  }}\n}}\n"
            )
            try:
                sh("nft", "-f", "-", ns=self.topo.m, input=ruleset)
            except RuntimeError as e:
                raise Unavailable(f"nft: {e}")
        self.topo.forwarding(True)
        self.rps(1 << FWD_CPU)

    def rps(self, mask):
        # With --napi sender the kernel would forward inside the generator's
        # send, on its CPU; RPS moves the forwarding to the forwarder's CPU.
        if NAPI_MODE != "sender":
            return
        for q in range(QUEUES):
            sh("sh", "-c", f"echo {mask:x} > /sys/class/net/m0/queues/rx-{q}/rps_cpus", ns=self.topo.m)

    def stop(self):
        self.rps(0)
        self.topo.forwarding(False)
        if self.nft:
            sh("nft", "delete", "table", "ip", "vbfw", ns=self.topo.m, check=False)


class ClickOSNat(Forwarder):
    """Source NAT from m0 to m1 (what `nft ... masquerade` does), as Click
    writes it: IPRewriter with a pattern that rewrites the source to m1's
    address and a port from 1024-65535, the TTL decremented as a router
    does, AF_XDP on both sides. Compared in the same run with LinuxMasq."""

    group = "clickos-nat"
    name = "clickos-nat"
    label = "clickos NAT (IPRewriter pattern to m1's address), AF_XDP"

    def check(self):
        b = clickos_bin(self.args)
        if not os.access(b, os.X_OK):
            raise Unavailable(f"{b} not built (cargo build --release -p clickos)")

    def start(self, size):
        conf = f"""FromDevice(m0, SNIFFER false, METHOD XDP, BURST 32)
  -> Strip(14) -> CheckIPHeader
  -> rw :: IPRewriter(pattern 10.2.0.254 1024-65535 - - 0 0)
  -> DecIPTTL
  -> EtherEncap(0x0800, {MAC['m1']}, {MAC['s0']})
  -> Queue(1024)
  -> ToDevice(m1, METHOD XDP, BURST 32);
"""
        argv = ["taskset", "-c", str(FWD_CPU), clickos_bin(self.args), "run", "-e", conf]
        self.procs.append(Proc(self.topo.m, argv, self.name, self.tmp))
        time.sleep(0.4)
        self.healthy()


class LinuxMasq(Linux):
    """Linux IP forwarding with nftables masquerade on m1 (conntrack)."""

    def __init__(self, args, topo, tmp):
        super().__init__(args, topo, tmp, False)
        self.name = "linux-masq"
        self.label = "Linux forwarding + nftables masquerade"

    def check(self):
        require("nft", "nftables")

    def start(self, size):
        ruleset = (
            "table ip vbnat {\n  chain postrouting {\n"
            "    type nat hook postrouting priority 100; policy accept;\n"
            '    oifname "m1" masquerade\n  }\n}\n'
        )
        try:
            sh("nft", "-f", "-", ns=self.topo.m, input=ruleset)
        except RuntimeError as e:
            raise Unavailable(f"nft: {e}")
        super().start(size)

    def stop(self):
        super().stop()
        sh("nft", "delete", "table", "ip", "vbnat", ns=self.topo.m, check=False)
        # the next forwarder starts without the flows this one tracked
        sh("sh", "-c", "command -v conntrack >/dev/null && conntrack -F || true", ns=self.topo.m, check=False)


def hugepages_ok():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("HugePages_Free:"):
                    return int(line.split()[1]) > 0
    except OSError:
        pass
    return False


class Testpmd(Forwarder):
    group = "dpdk"

    def __init__(self, args, topo, tmp, pmd):
        super().__init__(args, topo, tmp)
        self.pmd = pmd
        self.name = f"testpmd-{'xdp' if pmd == 'af_xdp' else 'packet'}"
        self.label = f"DPDK testpmd io, net_{pmd}"
        self.tcx = None

    def check(self):
        require("dpdk-testpmd", "dpdk-dev")
        lib = "librte_net_af_xdp.so" if self.pmd == "af_xdp" else "librte_net_af_packet.so"
        found = any(
            f.startswith(lib) for d in ("/usr/lib/x86_64-linux-gnu",) if os.path.isdir(d) for f in os.listdir(d)
        )
        if not found:
            pkg = "librte-net-af-xdp23" if self.pmd == "af_xdp" else "librte-net-af-packet23"
            raise Unavailable(f"DPDK net_{self.pmd} driver missing (Debian package {pkg})")

    def start(self, size):
        if self.pmd == "af_xdp":
            vdevs = [
                "--vdev", f"net_af_xdp0,iface=m0,start_queue=0,queue_count=1",
                "--vdev", f"net_af_xdp1,iface=m1,start_queue=0,queue_count=1",
            ]
            q = []
        else:
            # 2048-byte frames hold the 1514-byte ones; PACKET_QDISC_BYPASS
            vdevs = [
                "--vdev", "net_af_packet0,iface=m0,qpairs=1,qdisc_bypass=1,framesz=2048,framecnt=4096",
                "--vdev", "net_af_packet1,iface=m1,qpairs=1,qdisc_bypass=1,framesz=2048,framecnt=4096",
            ]
            q = []
            # as clickos's SNIFFER false: the kernel stack ignores m0's frames
            self.tcx = subprocess.Popen(
                ["ip", "netns", "exec", self.topo.m, sys.executable, os.path.join(HERE, "bpfdrop.py"), "m0", "tcx"],
                preexec_fn=die_with_parent,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )
            if self.tcx.stdout.readline().strip() != "ready":
                raise Unavailable(f"tcx drop on m0: {self.tcx.stderr.read().strip()}")
        mem = [] if hugepages_ok() else ["--no-huge", "-m", "1024"]
        argv = [
            "taskset", "-c", str(FWD_CPU), "stdbuf", "-oL", "-eL", "dpdk-testpmd",
            "--lcores", f"0@{FWD_CPU},1@{FWD_CPU}", "--main-lcore", "0", "--no-pci",
            "--file-prefix", f"vb{os.getpid()}", "--log-level", "pmd.net.af_xdp:info", *mem, *vdevs, "--",
            "--forward-mode=io", "--nb-cores=1", "--auto-start", "--stats-period", "0", "--burst=32",
            "--rxd=2048", "--txd=2048", "--total-num-mbufs=32768", *q,
        ]
        # testpmd without -i runs until a line arrives on stdin; the main lcore
        # only waits there; both lcores are on the forwarder's CPU.
        env = dict(os.environ, LIBXDP_SKIP_DISPATCHER="1")
        p = Proc(self.topo.m, argv, self.name, self.tmp, stdin=subprocess.PIPE, env=env)
        self.procs.append(p)
        t0 = time.time()
        while time.time() - t0 < 20:
            out = p.output()
            if "Press enter to exit" in out or "Start automatic packet forwarding" in out:
                break
            if not p.alive():
                raise Unavailable(f"testpmd exited: {tail(out, 4)}")
            time.sleep(0.2)
        else:
            raise Unavailable(f"testpmd did not start: {tail(p.output(), 4)}")
        time.sleep(0.5)
        self.healthy()

    def stop(self):
        for p in self.procs:
            try:
                p.p.stdin.write(b"\n")
                p.p.stdin.flush()
                p.p.wait(5)
            except (BrokenPipeError, subprocess.TimeoutExpired, OSError):
                pass
        super().stop()
        if self.tcx is not None:
            self.tcx.terminate()
            self.tcx.wait()
            self.tcx = None


class OVS(Forwarder):
    group = "ovs"
    name = "ovs-afxdp"
    label = "Open vSwitch netdev datapath, AF_XDP ports"

    def check(self):
        for t in ("ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovs-ofctl", "ovsdb-tool"):
            require(t, "openvswitch-switch")
        if not os.path.exists("/usr/share/openvswitch/vswitch.ovsschema"):
            raise Unavailable("/usr/share/openvswitch/vswitch.ovsschema missing")

    def start(self, size):
        d = os.path.join(self.tmp, "ovs")
        os.makedirs(d, exist_ok=True)
        env = dict(os.environ, OVS_RUNDIR=d, OVS_DBDIR=d, OVS_LOGDIR=d, OVS_SYSCONFDIR=d, LIBXDP_SKIP_DISPATCHER="1")
        self.env = env
        db = os.path.join(d, "conf.db")
        if os.path.exists(db):
            os.unlink(db)
        sh("ovsdb-tool", "create", db, "/usr/share/openvswitch/vswitch.ovsschema")
        sock = os.path.join(d, "db.sock")
        self.procs.append(
            Proc(
                self.topo.m,
                ["ovsdb-server", db, f"--remote=punix:{sock}", f"--pidfile={d}/ovsdb.pid", "--unixctl", f"{d}/ovsdb.ctl"],
                "ovsdb-server", self.tmp, env=env,
            )
        )
        for _ in range(50):
            if os.path.exists(sock):
                break
            time.sleep(0.1)
        self.vsctl = ["ovs-vsctl", f"--db=unix:{sock}", "--timeout=20"]
        sh(*self.vsctl, "--no-wait", "init", ns=self.topo.m)
        sh(*self.vsctl, "--no-wait", "set", "Open_vSwitch", ".",
           f"other_config:pmd-cpu-mask={1 << FWD_CPU:#x}", "other_config:dpdk-init=false", ns=self.topo.m)
        self.procs.append(
            Proc(
                self.topo.m,
                ["taskset", "-c", str(FWD_CPU), "ovs-vswitchd", f"unix:{sock}", "--disable-system",
                 f"--pidfile={d}/vswitchd.pid", "--unixctl", f"{d}/vswitchd.ctl", "-vconsole:warn", "-vnetdev_afxdp:info"],
                "ovs-vswitchd", self.tmp, env=env,
            )
        )
        time.sleep(0.5)
        self.healthy()
        try:
            sh(*self.vsctl, "add-br", "vbbr", "--", "set", "bridge", "vbbr", "datapath_type=netdev", ns=self.topo.m)
            for dev, n in (("m0", 1), ("m1", 1)):
                sh(*self.vsctl, "add-port", "vbbr", dev, "--", "set", "interface", dev, "type=afxdp",
                   f"options:n_rxq={n}", "options:xdp-mode=native", ns=self.topo.m)
            ofctl = ["ovs-ofctl", "del-flows", f"unix:{d}/vbbr.mgmt"]
            sh(*ofctl, ns=self.topo.m)
            sh("ovs-ofctl", "add-flow", f"unix:{d}/vbbr.mgmt", "in_port=m0,actions=output:m1", ns=self.topo.m)
        except RuntimeError as e:
            raise Unavailable(f"ovs: {e} | {tail(self.procs[-1].output())}")
        time.sleep(1.0)
        err = sh(*self.vsctl, "get", "interface", "m0", "error", ns=self.topo.m, check=False).strip()
        if err and err != "[]":
            raise Unavailable(f"ovs: m0: {err} | {tail(self.procs[-1].output())}")
        self.healthy()

    def stop(self):
        super().stop()


def all_forwarders(args, topo, tmp):
    return [
        ClickOS(args, topo, tmp, "XDP", 1),
        ClickOS(args, topo, tmp, "PACKET", 1),
        ClickOS(args, topo, tmp, "XDP", 2),
        ClickOS(args, topo, tmp, "PACKET", 2),
        ClickOSVM(args, topo, tmp, str(FWD_CPU)),
        ClickOSVM(args, topo, tmp, "0-1"),
        Linux(args, topo, tmp, False),
        Linux(args, topo, tmp, True),
        ClickOSNat(args, topo, tmp),
        LinuxMasq(args, topo, tmp),
        Testpmd(args, topo, tmp, "af_xdp"),
        Testpmd(args, topo, tmp, "af_packet"),
        OVS(args, topo, tmp),
    ]


# ---------------------------------------------------------------- measuring


class Bench:
    def __init__(self, args, topo):
        self.args, self.topo = args, topo
        self.gen = Generator(args, topo)

    def start_generator(self, size, rate, queues):
        """Starts the generator and waits until g0 sends. The kernel frees
        an AF_XDP socket's queue a little after its process exits, later on
        a loaded machine than clickos's one-second retry covers: a
        generator that fails with EBUSY is started again."""
        for attempt in range(10):
            sent0 = self.topo.counters()["sent"]
            self.gen.start(size, rate, queues)
            t0 = time.monotonic()
            while time.monotonic() - t0 < 5:
                if not self.gen.alive():
                    break
                if self.topo.counters()["sent"] > sent0:
                    return
                time.sleep(0.02)
            err = self.gen.stop()
            if "busy" not in err:
                raise RuntimeError(f"generator did not send: {tail(err)}")
            time.sleep(0.5 + attempt)
        raise RuntimeError(f"generator: g0's AF_XDP queue stayed busy: {tail(err)}")

    def point(self, fwd, size, rate):
        """Offers `rate` packets/s (None: full load) for the measuring time;
        returns {offered, forwarded, loss} in packets/s."""
        a = self.args
        self.start_generator(size, rate, fwd.gen_queues)
        time.sleep(a.warmup)
        if not self.gen.alive():
            raise RuntimeError(f"generator exited: {tail(self.gen.stop())}")
        c0 = self.topo.counters()
        time.sleep(a.duration)
        c1 = self.topo.counters()
        alive = self.gen.alive()
        err = self.gen.stop()
        if not alive:
            raise RuntimeError(f"generator exited: {tail(err)}")
        fwd.healthy()
        # let the pipeline drain before the next point
        time.sleep(0.2)
        dt = c1["t"] - c0["t"]
        d = {k: (c1[k] - c0[k]) for k in c0 if k != "t"}
        offered = (d["sent"] + d["sent_drop"]) / dt
        forwarded = d["recv"] / dt
        loss = 1.0 - forwarded / offered if offered > 0 else 1.0
        return {
            "target": rate,
            "offered": offered,
            "forwarded": forwarded,
            "loss": loss,
            "g0_tx_dropped": d["sent_drop"] / dt,
            "m0_rx": d["m0_rx"] / dt,
            "m1_tx": d["m1_tx"] / dt,
            "m1_tx_dropped": d["m1_txdrop"] / dt,
        }

    def run_once(self, fwd, size, status):
        """(a) full load, then (b) a binary search for the highest offered
        rate with < 1 % loss."""
        a = self.args
        full = self.point(fwd, size, None)
        if full["forwarded"] * a.duration < 100:
            raise RuntimeError(
                f"forwarded nothing under full load (offered {full['offered'] / 1e6:.3f} Mp/s, "
                f"m0 received {full['m0_rx'] / 1e6:.3f}, m1 sent {full['m1_tx'] / 1e6:.3f})"
            )
        status(f"full load: offered {full['offered'] / 1e6:.3f}, forwarded {full['forwarded'] / 1e6:.3f} Mp/s")
        points = [full]
        best = None
        if full["loss"] < a.loss:
            best = full  # the generator's limit: carried everything
            best_limited = True
        else:
            best_limited = False
            lo, hi = 0.0, full["offered"]
            # start near what it forwarded under overload (often close)
            rate = max(full["forwarded"], hi / 16)
            for _ in range(a.steps):
                p = self.point(fwd, size, rate)
                points.append(p)
                ok = p["loss"] < a.loss
                status(
                    f"search: target {rate / 1e6:.3f} offered {p['offered'] / 1e6:.3f} "
                    f"loss {p['loss'] * 100:.2f}% {'ok' if ok else 'lossy'}"
                )
                if ok:
                    lo = rate
                    if best is None or p["offered"] > best["offered"]:
                        best = p
                else:
                    hi = rate
                rate = (lo + hi) / 2 if lo > 0 else rate / 2
                if lo == 0 and rate < full["offered"] / 256:
                    break
            # The paced generator falls short of high targets on a busy
            # machine: if the best point passed short of its target and no
            # point lost at a higher offered rate, the limit was not found.
            if best is not None and best["offered"] < 0.9 * best["target"]:
                best_limited = not any(
                    q["loss"] >= a.loss and q["offered"] > best["offered"] for q in points[1:]
                )
        return {
            "full_forwarded": full["forwarded"],
            "full_offered": full["offered"],
            "full_loss": full["loss"],
            "no_loss_rate": best["offered"] if best else 0.0,
            "no_loss_generator_limited": best_limited,
            "points": points,
        }


def median(xs):
    return statistics.median(xs) if xs else None


# ---------------------------------------------------------------- ping


class PingLinux(Forwarder):
    name, label, group = "linux", "Linux IP forwarding", "linux"

    def start(self, size):
        self.topo.forwarding(True)

    def stop(self):
        self.topo.forwarding(False)


class PingVM(Forwarder):
    """bench/fwd-vm.click (two-way static forwarding) in an instance
    between m0 and m1, on the forwarder's CPU."""

    group = "clickos-vm"

    def __init__(self, args, topo, tmp, cpus):
        super().__init__(args, topo, tmp)
        self.cpus = cpus
        one = cpus == str(FWD_CPU)
        self.name = "clickos-vm" if one else "clickos-vm-cpu01"
        self.label = "clickos forwarder in a VM (vm run --vnic m0 --vnic m1)" + ("" if one else ", CPUs 0-1")

    def start(self, size):
        argv = [
            "taskset", "-c", self.cpus, clickos_bin(self.args), "vm", "run", "-i", self.args.vm_isolation,
            os.path.join(REPO, "bench", "fwd-vm.click"), "--vnic", "m0", "--vnic", "m1",
            f"A_SRC={MAC['m0']}", f"A_DST={MAC['g0']}", f"B_SRC={MAC['m1']}", f"B_DST={MAC['s0']}",
        ]
        self.procs.append(Proc(self.topo.m, argv, f"ping-{self.name}", self.tmp))
        time.sleep(1.0)
        self.healthy()


def ping(topo, count, interval):
    """RTTs in µs of `count` pings from g to s (lost ones left out)."""
    out = sh(
        "ping", "-n", "-c", str(count), "-i", str(interval), "-W", "1", DST_IP,
        ns=topo.g, check=False, timeout=count * interval + 30,
    )
    rtts = []
    for line in out.splitlines():
        if "time=" in line:
            rtts.append(float(line.split("time=")[1].split()[0]) * 1000.0)
    return {"sent": count, "rtts": rtts}


def ping_phase(args, topo, tmp, bench):
    """Ping RTT through Linux forwarding and through the instance, idle
    (-i 0.2), fast (-i 0.01) and busy (-i 0.01 while the generator sends
    args.ping_rate 60-byte frames/s through the same path); alternately,
    args.runs times."""
    fwds = [PingLinux(args, topo, tmp), PingVM(args, topo, tmp, str(FWD_CPU)), PingVM(args, topo, tmp, "0-1")]
    topo.ping_setup()
    n_idle = 20 if args.quick else 50
    conds = [("idle", n_idle, 0.2, False), ("fast", 200, 0.01, False), ("busy", 200, 0.01, True)]
    res = {f.name: {"label": f.label, **{c[0]: [] for c in conds}} for f in fwds}
    for k in range(args.runs):
        for f in fwds:
            progress(f"ping run {k + 1}/{args.runs}: {f.name}: starting")
            try:
                f.start(60)
                topo.pin_napi()
                for cond, count, interval, busy in conds:
                    progress(f"ping run {k + 1}/{args.runs}: {f.name}: {cond}")
                    if busy:
                        bench.start_generator(60, args.ping_rate, 1)
                        time.sleep(0.5)
                    try:
                        r = ping(topo, count, interval)
                        if busy:
                            c0 = topo.counters()
                            time.sleep(0.5)
                            c1 = topo.counters()
                            dt = c1["t"] - c0["t"]
                            r["background_offered"] = (c1["sent"] - c0["sent"]) / dt
                            r["background_forwarded"] = (c1["recv"] - c0["recv"]) / dt
                    finally:
                        if busy:
                            bench.gen.stop()
                    f.healthy()
                    r["loadavg"] = open("/proc/loadavg").read().split()[0]
                    res[f.name][cond].append(r)
                    rt = r["rtts"]
                    log(
                        f"ping {f.name:12} {cond:5} run {k + 1}: {len(rt)}/{count} replies, median "
                        f"{statistics.median(rt) if rt else float('nan'):.0f} µs  [load {r['loadavg']}]"
                    )
            except (Unavailable, RuntimeError) as e:
                log(f"ping {f.name} run {k + 1}: failed: {e}")
                res[f.name].setdefault("errors", []).append(str(e))
            finally:
                f.stop()
                topo.reset()
                topo.ping_neighbours()
    topo.start_sink(SINK_DROP)
    summary = {}
    for name, r in res.items():
        summary[name] = {"label": r["label"], "errors": r.get("errors", [])}
        for cond, count, interval, busy in conds:
            rtts = [x for u in r[cond] for x in u["rtts"]]
            sent = sum(u["sent"] for u in r[cond])
            summary[name][cond] = {
                "interval": interval,
                "sent": sent,
                "replies": len(rtts),
                "median_us": median(rtts),
                "avg_us": statistics.mean(rtts) if rtts else None,
                "min_us": min(rtts) if rtts else None,
                "p99_us": sorted(rtts)[int(0.99 * (len(rtts) - 1))] if rtts else None,
                "runs": r[cond],
            }
    return summary


def render_ping(summary, args):
    out = [
        "",
        f"Ping RTT g → s through the middle namespace, µs, median / average (replies of sent), {args.runs} run(s) "
        f"alternating between the forwarders: idle = `ping -i 0.2`, fast = `ping -i 0.01`, busy = `ping -i 0.01` "
        f"while the generator sends {args.ping_rate / 1e3:g} kp/s of 60-byte UDP frames through the same path.",
        "",
        "| path | idle (-i 0.2) | fast (-i 0.01) | busy (-i 0.01 + background) |",
        "|---|---|---|---|",
    ]

    def cell(c):
        if not c or c["median_us"] is None:
            return "–"
        return f"{c['median_us']:.0f} / {c['avg_us']:.0f} ({c['replies']}/{c['sent']})"

    for name, r in summary.items():
        out.append(f"| {r['label']} | {cell(r.get('idle'))} | {cell(r.get('fast'))} | {cell(r.get('busy'))} |")
    lin = summary.get("linux")
    for vname in ("clickos-vm", "clickos-vm-cpu01"):
        vm = summary.get(vname)
        if not (lin and vm):
            continue
        cells = []
        for cond in ("idle", "fast", "busy"):
            a, b = vm.get(cond), lin.get(cond)
            if a and b and a["median_us"] and b["median_us"]:
                cells.append(f"{a['median_us'] / b['median_us']:.2f}× (+{a['median_us'] - b['median_us']:.0f} µs)")
            else:
                cells.append("–")
        out.append(f"| {vname} / Linux (medians) | {' | '.join(cells)} |")
    return "\n".join(out)


def fmt_rate(v):
    return "–" if v is None else f"{v / 1e6:.3f}"


def ratio(a, b):
    if a is None or not b:
        return "–"
    return f"{a / b:.2f}×"


def render(results, sizes, meta):
    out = []
    out.append(
        f"Forwarded Mp/s, generator ns → middle ns → sink ns over veth, median of {meta['runs']} "
        f"run(s), {meta['duration']} s per point; (a) under full offered load, (b) the highest "
        f"offered rate carried with < {meta['loss'] * 100:g} % loss (≥: the generator's limit, no loss seen)."
    )
    out.append("")
    head = "| forwarder |"
    sep = "|---|"
    for s in sizes:
        head += f" {s} B (a) full load: forwarded (offered) | {s} B (b) < 1 % loss (runs' range) |"
        sep += "---|---|"
    out += [head, sep]
    for r in results:
        row = f"| {r['label']} |"
        if r.get("unavailable"):
            row += f" not run: {r['unavailable']} |" + " |" * (2 * len(sizes) - 1)
            out.append(row)
            continue
        for s in sizes:
            x = r["sizes"].get(str(s))
            if not x or x.get("error"):
                why = x.get("error", "not measured") if x else "not measured"
                row += f" failed: {why} | |"
                continue
            ge = "≥ " if x["no_loss_generator_limited"] else ""
            bs = [u["no_loss_rate"] for u in x.get("runs", [])]
            spread = f" ({min(bs) / 1e6:.2f}–{max(bs) / 1e6:.2f})" if len(bs) > 1 else ""
            if len(bs) < meta["runs"]:
                spread += f" [{len(bs)} of {meta['runs']} runs]"
            row += (
                f" {fmt_rate(x['full_forwarded'])} ({fmt_rate(x['full_offered'])}) |"
                f" {ge}{fmt_rate(x['no_loss_rate'])}{spread} |"
            )
        out.append(row)

    def best_of(groups, s, key):
        vals = [
            (r["sizes"][str(s)][key], r["sizes"][str(s)].get("no_loss_generator_limited", False))
            for r in results
            if r["group"] in groups and not r.get("unavailable") and r["sizes"].get(str(s), {}).get(key) is not None
        ]
        return max(vals) if vals else (None, False)

    def bratio(num, den):
        """A ratio of (b) figures; a `≥` figure makes the ratio a bound."""
        (x, xl), (y, yl) = num, den
        r = ratio(x, y)
        if r == "–" or xl == yl:
            return r if not (xl and yl) else f"~{r}"
        return f"≥ {r}" if xl else f"≤ {r}"

    def get(name, s, key):
        for r in results:
            if r["name"] == name and not r.get("unavailable"):
                return r["sizes"].get(str(s), {}).get(key)
        return None

    out.append("")
    out.append(
        "Ratios of the clickos firewall to the best of DPDK testpmd and Open vSwitch (target ≥ 1.5×) "
        "and to Linux forwarding + nftables with the same ten rules (≥ / ≤: a bound, where a (b) figure "
        "was the generator's limit; ~: both were):"
    )
    out.append("")
    head = "| clickos firewall |"
    sep = "|---|"
    for s in sizes:
        head += f" {s} B (a) vs testpmd/OVS | {s} B (b) vs testpmd/OVS | {s} B (a) vs nft | {s} B (b) vs nft |"
        sep += "---|---|---|---|"
    out += [head, sep]
    for r in results:
        if r["group"] != "clickos" or r.get("unavailable"):
            continue
        row = f"| {r['label'].replace('clickos firewall, ', '')} |"
        for s in sizes:
            a = get(r["name"], s, "full_forwarded")
            b = (get(r["name"], s, "no_loss_rate"), bool(get(r["name"], s, "no_loss_generator_limited")))
            nft_b = (get("linux-nft", s, "no_loss_rate"), bool(get("linux-nft", s, "no_loss_generator_limited")))
            row += (
                f" {ratio(a, best_of(('dpdk', 'ovs'), s, 'full_forwarded')[0])} |"
                f" {bratio(b, best_of(('dpdk', 'ovs'), s, 'no_loss_rate'))} |"
                f" {ratio(a, get('linux-nft', s, 'full_forwarded'))} |"
                f" {bratio(b, nft_b)} |"
            )
        out.append(row)
    if get("clickos-nat", sizes[0], "full_forwarded") is not None and get("linux-masq", sizes[0], "full_forwarded") is not None:
        out.append("")
        out.append("Source NAT: clickos (IPRewriter pattern) against Linux forwarding + nftables masquerade, same run:")
        out.append("")
        head, sep = "| NAT |", "|---|"
        row = "| clickos-nat / linux-masq |"
        for s in sizes:
            head += f" {s} B (a) | {s} B (b) |"
            sep += "---|---|"
            a = get("clickos-nat", s, "full_forwarded")
            b = (get("clickos-nat", s, "no_loss_rate"), bool(get("clickos-nat", s, "no_loss_generator_limited")))
            m = (get("linux-masq", s, "no_loss_rate"), bool(get("linux-masq", s, "no_loss_generator_limited")))
            row += f" {ratio(a, get('linux-masq', s, 'full_forwarded'))} | {bratio(b, m)} |"
        out += [head, sep, row]
    vms = [r for r in results if r["group"] == "clickos-vm" and not r.get("unavailable")]
    if vms:
        out.append("")
        out.append(
            "The firewall in a VM (`clickos vm run bench/fw-vm.click --vnic m0 --vnic m1`: AF_XDP ports in the "
            "software switch, the instance's vNICs between them) against the same rules run by `clickos run` "
            "on the same veths (clickos-xdp; target ≥ 80 %) and against Linux forwarding + nftables:"
        )
        out.append("")
        head = "| VM forwarder |"
        sep = "|---|"
        for s in sizes:
            head += f" {s} B (a) vs clickos run | {s} B (b) vs clickos run | {s} B (b) vs nft |"
            sep += "---|---|---|"
        out += [head, sep]
        for r in vms:
            row = f"| {r['name']} |"
            for s in sizes:
                a = get(r["name"], s, "full_forwarded")
                b = (get(r["name"], s, "no_loss_rate"), bool(get(r["name"], s, "no_loss_generator_limited")))
                cb = (get("clickos-xdp", s, "no_loss_rate"), bool(get("clickos-xdp", s, "no_loss_generator_limited")))
                nft_b = (get("linux-nft", s, "no_loss_rate"), bool(get("linux-nft", s, "no_loss_generator_limited")))
                row += f" {ratio(a, get('clickos-xdp', s, 'full_forwarded'))} | {bratio(b, cb)} | {bratio(b, nft_b)} |"
            out.append(row)
    loads = [
        float(u["loadavg"])
        for r in results
        for x in r.get("sizes", {}).values()
        for u in x.get("runs", [])
        if "loadavg" in u
    ]
    out.append("")
    out.append(
        f"Setting: --napi {meta['napi']}, --sink {meta['sink']}, nice {meta['nice']}, kernel {meta['kernel']}, "
        f"{meta['cpus']} CPUs"
        + (f"; 1-minute load average during the runs {min(loads):.1f}–{max(loads):.1f}" if loads else "")
        + "."
    )
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1 run, short points, 4 search steps (development)")
    ap.add_argument("--runs", type=int, help="runs per forwarder and size (median); default 3, 1 with --quick")
    ap.add_argument("--duration", type=float, help="seconds measured per point; default 2, 1 with --quick")
    ap.add_argument("--warmup", type=float, help="seconds before measuring; default 0.7, 0.4 with --quick")
    ap.add_argument("--steps", type=int, help="search steps for (b); default 6, 4 with --quick")
    ap.add_argument("--loss", type=float, default=0.01, help="loss bound for (b); default 0.01")
    ap.add_argument("--sizes", default="60,1514", help="frame sizes without FCS; default 60,1514")
    ap.add_argument("--only", help="comma-separated forwarder names (see --list)")
    ap.add_argument("--skip", help="comma-separated forwarder names to leave out")
    ap.add_argument("--list", action="store_true", help="name the forwarders and exit")
    ap.add_argument("--json", default="veth-bench.json", help="where to write the results; default ./veth-bench.json")
    ap.add_argument("--clickos", help="clickos binary; default target/release/clickos of this repository")
    ap.add_argument(
        "--napi",
        choices=("fifo", "thread", "sender"),
        default="fifo",
        help="where m0's receive work runs: fifo (default): a NAPI kernel thread on the forwarder's CPU at "
        "real-time priority, preempting the forwarder as a NIC's softirq does; thread: the same at normal "
        "priority; sender: veth's default, inside the generator's send on its CPU (Linux forwarding then "
        "gets RPS to the forwarder's CPU)",
    )
    ap.add_argument(
        "--sink",
        choices=("tcx", "xdp"),
        default="tcx",
        help="how s0 drops what arrives: tcx (default): a tcx ingress program; xdp: an XDP program (on veth "
        "this makes the forwarder's send copy every frame into a page-pool page first, on its CPU)",
    )
    ap.add_argument("--nice", type=int, default=-10, help="nice level of the generator and forwarders; default -10")
    ap.add_argument("--ping", choices=("yes", "no", "only"), default="yes", help="also measure ping RTT through Linux forwarding and the VM (yes, the default), not (no), or only that (only)")
    ap.add_argument("--ping-rate", type=float, default=100000, help="background packets/s for the busy ping; default 100000")
    ap.add_argument("--vm-isolation", default="vm", choices=("vm", "process", "none"), help="isolation level of the clickos-vm forwarders and the ping instance; default vm")
    ap.add_argument("--keep", action="store_true", help="leave the namespaces and logs (debugging)")
    ap.add_argument(
        "--fromdevice",
        default="",
        metavar="KEYWORDS",
        help="extra keywords for the clickos forwarders' FromDevice, e.g. 'BUSY_POLL 0'",
    )
    args = ap.parse_args()
    global NAPI_MODE, NICE, SINK_DROP, FROMDEVICE_EXTRA
    NAPI_MODE = args.napi
    SINK_DROP = args.sink
    FROMDEVICE_EXTRA = args.fromdevice
    NICE = args.nice
    q = args.quick
    args.runs = args.runs or (1 if q else 3)
    args.duration = args.duration or (1.0 if q else 2.0)
    args.warmup = args.warmup if args.warmup is not None else (0.4 if q else 0.7)
    args.steps = args.steps if args.steps is not None else (4 if q else 6)
    sizes = [int(s) for s in args.sizes.split(",")]
    for s in sizes:
        if not 60 <= s <= 1514:
            ap.error("frame sizes are 60 to 1514 bytes")

    if args.list:
        for f in all_forwarders(args, None, None):
            print(f"{f.name:18} {f.label}")
        return
    if os.geteuid() != 0:
        sys.exit("run.py: needs root (network namespaces, XDP)")
    if os.cpu_count() < 2:
        log("warning: fewer than 2 CPUs; generator and forwarder share one")

    tag = f"vb{os.getpid() % 100000}"
    tmp = tempfile.mkdtemp(prefix=f"{tag}-")
    topo = Topology(tag)
    fwds = all_forwarders(args, topo, tmp)
    if args.only:
        want = args.only.split(",")
        unknown = set(want) - {f.name for f in fwds}
        if unknown:
            ap.error(f"unknown forwarder(s): {', '.join(sorted(unknown))}")
        fwds = [f for f in fwds if f.name in want]
    if args.skip:
        fwds = [f for f in fwds if f.name not in args.skip.split(",")]
    if args.ping == "only":
        fwds = []
    ping_summary = None

    results = []
    interrupted = False

    def on_term(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    bench = None
    try:
        gen_ok = os.access(clickos_bin(args), os.X_OK)
        if not gen_ok:
            sys.exit(f"run.py: the generator needs {clickos_bin(args)} (cargo build --release -p clickos)")
        missing = [t for t in ("ip", "ethtool", "sysctl", "taskset", "chrt", "nice", "stdbuf") if not shutil.which(t)]
        if missing:
            sys.exit(f"run.py: {', '.join(missing)} not found (run bench/veth/setup; sbin directories on PATH?)")
        try:
            topo.create()
        except RuntimeError as e:
            sys.exit(f"run.py: setting up the namespaces: {e}")
        bench = Bench(args, topo)
        total = len(fwds) * len(sizes) * args.runs
        done = 0
        # Runs are interleaved (run 1 of every forwarder, then run 2, ...)
        # so a burst of outside load on the machine touches one run of
        # several forwarders rather than every run of one.
        res = {}
        runs = {}
        for fwd in fwds:
            res[fwd.name] = {"name": fwd.name, "label": fwd.label, "group": fwd.group, "sizes": {}}
            results.append(res[fwd.name])
            runs[fwd.name] = {s: [] for s in sizes}
            try:
                fwd.check()
            except Unavailable as e:
                res[fwd.name]["unavailable"] = str(e)
                log(f"{fwd.name}: not run: {e}")
        for k in range(args.runs):
            for fwd in fwds:
                r = res[fwd.name]
                if r.get("unavailable"):
                    done += len(sizes)
                    continue
                progress(f"[{done}/{total}] {fwd.name}: starting")
                try:
                    for attempt in range(3):
                        try:
                            fwd.start(sizes[0])
                            break
                        except (Unavailable, RuntimeError) as e:
                            # an AF_XDP queue the previous forwarder's socket
                            # held can stay busy for a while on a loaded machine
                            if "busy" not in str(e).lower() or attempt == 2:
                                raise
                            fwd.stop()
                            time.sleep(2)
                except (Unavailable, RuntimeError) as e:
                    fwd.stop()
                    if k == 0:
                        r["unavailable"] = str(e)
                        log(f"{fwd.name}: not run: {e}")
                    else:
                        r.setdefault("errors", []).append(f"run {k + 1}: {e}")
                        log(f"{fwd.name}: run {k + 1} failed to start: {e}")
                    done += len(sizes)
                    continue
                r["napi_threads_pinned"] = topo.pin_napi()
                try:
                    for s in sizes:
                        done += 1
                        pre = f"[{done}/{total}] {fwd.name} {s} B run {k + 1}/{args.runs}"
                        progress(pre)
                        try:
                            u = bench.run_once(fwd, s, lambda m: progress(f"{pre}: {m}"))
                            u["loadavg"] = open("/proc/loadavg").read().split()[0]
                            runs[fwd.name][s].append(u)
                            log(
                                f"{fwd.name:16} {s:5} B run {k + 1}: (a) {fmt_rate(u['full_forwarded'])} Mp/s "
                                f"(offered {fmt_rate(u['full_offered'])}), (b) "
                                f"{'≥ ' if u['no_loss_generator_limited'] else ''}{fmt_rate(u['no_loss_rate'])} Mp/s"
                                f"  [load {u['loadavg']}]"
                            )
                        except (Unavailable, RuntimeError) as e:
                            r.setdefault("errors", []).append(f"{s} B run {k + 1}: {e}")
                            log(f"{fwd.name} {s} B run {k + 1}: failed: {e}")
                finally:
                    fwd.stop()
                    topo.reset()
        for fwd in fwds:
            r = res[fwd.name]
            for s in sizes:
                u = runs[fwd.name][s]
                if u:
                    r["sizes"][str(s)] = {
                        "full_forwarded": median([x["full_forwarded"] for x in u]),
                        "full_offered": median([x["full_offered"] for x in u]),
                        "no_loss_rate": median([x["no_loss_rate"] for x in u]),
                        "no_loss_generator_limited": all(x["no_loss_generator_limited"] for x in u),
                        "runs": u,
                    }
                elif not r.get("unavailable"):
                    r["sizes"][str(s)] = {"error": "; ".join(r.get("errors", ["no run completed"]))[-300:]}
        if args.ping != "no":
            ping_summary = ping_phase(args, topo, tmp, bench)
    except KeyboardInterrupt:
        interrupted = True
        log("interrupted")
    finally:
        if bench is not None:
            bench.gen.stop()
        for f in fwds:
            try:
                f.stop()
            except Exception:
                pass
        if args.keep:
            topo.release()
            log(f"kept namespaces {topo.g} {topo.m} {topo.s} and logs in {tmp}")
        else:
            topo.destroy()
            shutil.rmtree(tmp, ignore_errors=True)
    meta = {
        "runs": args.runs,
        "duration": args.duration,
        "warmup": args.warmup,
        "steps": args.steps,
        "loss": args.loss,
        "sizes": sizes,
        "quick": q,
        "interrupted": interrupted,
        "kernel": os.uname().release,
        "cpus": os.cpu_count(),
        "generator": f"clickos run, AF_XDP, {FLOWS} flows on g0 queue 0 (queues 0 and 1 for AF_XDP -j 2), CPU {GEN_CPU}",
        "forwarder_cpu": FWD_CPU,
        "napi": NAPI_MODE,
        "nice": NICE,
        "sink": SINK_DROP,
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
    with open(args.json, "w") as f:
        json.dump({"meta": meta, "results": results, "ping": ping_summary}, f, indent=1)
    if _progress_on:
        sys.stderr.write("\r\033[K")
    if results:
        print(render(results, sizes, meta))
    if ping_summary:
        print(render_ping(ping_summary, args))
    log(f"JSON: {args.json}")
    if interrupted:
        sys.exit(130)


if __name__ == "__main__":
    main()
