#!/usr/bin/env python3
"""Generate the pcap/pcapng test corpus used by the workspace's tests.

Run from anywhere:  python3 tests/data/make_pcaps.py
Requires scapy (>= 2.5).  Output is deterministic (fixed timestamps, no
"now"), so re-running the script reproduces the committed files byte for
byte (except mixed.pcapng, whose exact bytes depend on the scapy version).

Besides the capture files, the script writes manifest.tsv: one line per
record of every file, with the expected timestamp, lengths, link type and
CRC-32 of the captured bytes, computed here independently of any pcap
parser.  The Rust tests compare the readers' output against it.
"""

import os
import struct
import sys
import zlib
from decimal import Decimal

import logging

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from scapy.all import (  # noqa: E402
    ARP,
    DNS,
    DNSQR,
    DNSRR,
    GRE,
    ICMP,
    IP,
    IPv6,
    ICMPv6EchoRequest,
    IPOption_RR,
    IPOption_Router_Alert,
    LLC,
    Dot1Q,
    Dot3,
    Ether,
    NTP,
    Raw,
    TCP,
    UDP,
    fragment,
)
from scapy.utils import RawPcapNgWriter  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

LINKTYPE_NULL = 0
LINKTYPE_EN10MB = 1
LINKTYPE_RAW = 101
LINKTYPE_LINUX_SLL = 113

MAC_A = "52:54:00:00:00:01"
MAC_B = "52:54:00:00:00:02"
BASE = 1700000000  # 2023-11-14T22:13:20Z

manifest = []  # (file, index, sec, nsec, caplen, origlen, linktype, crc, desc)


def note(fname, idx, sec, nsec, data, origlen, linktype, desc):
    manifest.append(
        (fname, idx, sec, nsec, len(data), origlen, linktype,
         "%08x" % (zlib.crc32(data) & 0xFFFFFFFF), desc)
    )


# ---------------------------------------------------------------------------
# Our own tiny classic-pcap writer: full control over byte order, magic and
# per-record caplen/origlen (scapy's writer goes through floats).
# ---------------------------------------------------------------------------
def write_pcap(fname, records, linktype=LINKTYPE_EN10MB, snaplen=65535,
               nano=False, big_endian=False):
    """records: list of (sec, subsec, data, origlen, desc); subsec is in
    microseconds or nanoseconds depending on `nano`."""
    e = ">" if big_endian else "<"
    magic = 0xA1B23C4D if nano else 0xA1B2C3D4
    out = [struct.pack(e + "IHHiIII", magic, 2, 4, 0, 0, snaplen, linktype)]
    for i, (sec, sub, data, origlen, desc) in enumerate(records):
        out.append(struct.pack(e + "IIII", sec, sub, len(data), origlen))
        out.append(data)
        nsec = sub if nano else sub * 1000
        note(fname, i, sec, nsec, data, origlen, linktype, desc)
    with open(os.path.join(HERE, fname), "wb") as f:
        f.write(b"".join(out))


# ---------------------------------------------------------------------------
# udp-64.pcap
# ---------------------------------------------------------------------------
def udp64():
    recs = []
    for i in range(20):
        payload = struct.pack(">I", i) + b"click-udp-64-pad!!"  # 22 bytes
        p = (Ether(src=MAC_A, dst=MAC_B) /
             IP(src="10.0.0.1", dst="10.0.0.2", id=i + 1, ttl=64) /
             UDP(sport=1234, dport=5678) / Raw(payload))
        data = bytes(p)
        assert len(data) == 64, len(data)
        recs.append((BASE + i // 4, (i % 4) * 250000 + i, data, len(data),
                     "udp 10.0.0.1:1234 > 10.0.0.2:5678 seq %d" % i))
    write_pcap("udp-64.pcap", recs)


# ---------------------------------------------------------------------------
# mixed.pcap / mixed.pcapng
# ---------------------------------------------------------------------------
def mixed_packets():
    E = Ether(src=MAC_A, dst=MAC_B)
    Er = Ether(src=MAC_B, dst=MAC_A)
    c, s = "10.0.0.1", "10.0.0.2"
    pk = []  # (bytes, origlen or None, desc)

    def add(p, desc, origlen=None):
        pk.append((bytes(p), origlen, desc))

    add(E / IP(src=c, dst=s) / TCP(sport=40000, dport=80, flags="S", seq=1000),
        "tcp syn 80")
    add(Er / IP(src=s, dst=c) / TCP(sport=80, dport=40000, flags="SA", seq=5000,
                                    ack=1001), "tcp syn-ack 80")
    add(E / IP(src=c, dst=s) / TCP(sport=40000, dport=80, flags="A", seq=1001,
                                   ack=5001), "tcp ack 80")
    add(E / IP(src=c, dst=s) / TCP(sport=40000, dport=80, flags="PA", seq=1001,
                                   ack=5001) /
        Raw(b"GET / HTTP/1.1\r\nHost: 10.0.0.2\r\n\r\n"), "tcp data http get")
    add(E / IP(src=c, dst=s) / TCP(sport=40000, dport=80, flags="FA", seq=1035,
                                   ack=5001), "tcp fin 80")
    add(E / IP(src=c, dst=s) / TCP(sport=40001, dport=22, flags="S", seq=7),
        "tcp syn 22")
    add(E / IP(src=c, dst=s) / TCP(sport=40001, dport=22, flags="PA", seq=8,
                                   ack=1) / Raw(b"SSH-2.0-OpenSSH_9.6\r\n"),
        "tcp data ssh banner")
    add(E / IP(src=c, dst=s) / TCP(sport=40002, dport=443, flags="S", seq=99),
        "tcp syn 443")
    add(E / IP(src=c, dst=s) / TCP(sport=40002, dport=443, flags="PA", seq=100,
                                   ack=1) / Raw(b"\x16\x03\x01\x00\x05hello"),
        "tcp data tls 443")
    add(E / IP(src=c, dst=s) / TCP(sport=40003, dport=8080, flags="R", seq=1),
        "tcp rst 8080")
    add(E / IP(src=c, dst="10.0.0.53") / UDP(sport=33333, dport=53) /
        DNS(id=0x1234, rd=1, qd=DNSQR(qname="example.com")), "udp dns query")
    add(Er / IP(src="10.0.0.53", dst=c) / UDP(sport=53, dport=33333) /
        DNS(id=0x1234, qr=1, rd=1, ra=1, qd=DNSQR(qname="example.com"),
            an=DNSRR(rrname="example.com", rdata="93.184.216.34")),
        "udp dns response")
    add(E / IP(src=c, dst="10.0.0.123") / UDP(sport=123, dport=123) /
        NTP(orig=3908988800, sent=3908988801),
        "udp ntp 123")
    add(E / IP(src=c, dst=s) / UDP(sport=1234, dport=5678) / Raw(b"x" * 32),
        "udp 5678")
    add(E / IP(src=c, dst=s) / UDP(sport=1111, dport=9) / Raw(b"discard"),
        "udp discard 9")
    add(E / IP(src=c, dst=s) / ICMP(type=8, id=1, seq=1) / Raw(b"ping" * 8),
        "icmp echo request")
    add(Er / IP(src=s, dst=c) / ICMP(type=0, id=1, seq=1) / Raw(b"ping" * 8),
        "icmp echo reply")
    inner = IP(src=c, dst=s) / UDP(sport=1234, dport=9999)
    add(Er / IP(src=s, dst=c) / ICMP(type=3, code=3) / bytes(inner)[:28],
        "icmp port unreachable")
    add(Er / IP(src="10.0.0.254", dst=c) / ICMP(type=11, code=0) /
        bytes(inner)[:28], "icmp time exceeded")
    add(Ether(src=MAC_A, dst="ff:ff:ff:ff:ff:ff") /
        ARP(op=1, hwsrc=MAC_A, psrc=c, pdst=s), "arp request")
    add(Ether(src=MAC_B, dst=MAC_A) /
        ARP(op=2, hwsrc=MAC_B, psrc=s, hwdst=MAC_A, pdst=c), "arp reply")
    frags = fragment(IP(src=c, dst=s, id=0x4242) / UDP(sport=5000, dport=6000) /
                     Raw(bytes(range(100))), fragsize=64)
    assert len(frags) == 2
    add(E / frags[0], "ipv4 fragment 1/2 (MF, offset 0)")
    add(E / frags[1], "ipv4 fragment 2/2 (offset 64)")
    add(E / Dot1Q(vlan=10, prio=3) / IP(src=c, dst=s) /
        UDP(sport=1234, dport=5678) / Raw(b"vlan"), "vlan 10 ipv4 udp")
    add(E / IPv6(src="fe80::1", dst="fe80::2") / UDP(sport=546, dport=547) /
        Raw(b"v6"), "ipv6 udp")
    add(E / IPv6(src="2001:db8::1", dst="2001:db8::2") /
        ICMPv6EchoRequest(id=7, seq=1), "ipv6 icmpv6 echo")
    add(E / IP(src=c, dst=s, options=[IPOption_RR(routers=["0.0.0.0"] * 2)]) /
        UDP(sport=1234, dport=5678), "ipv4 record-route option (ihl 7)")
    add(E / IP(src=c, dst=s, options=[IPOption_Router_Alert()]) /
        UDP(sport=1234, dport=5678), "ipv4 router-alert option (ihl 6)")
    add(E / IP(src=c, dst=s, ttl=1) / UDP(sport=1234, dport=5678),
        "ipv4 ttl 1")
    add(E / IP(src=c, dst=s, ttl=0) / UDP(sport=1234, dport=5678),
        "ipv4 ttl 0")
    add(E / IP(src=c, dst=s, chksum=0x1234) / UDP(sport=1234, dport=5678),
        "ipv4 bad header checksum")
    t = bytes(E / IP(src=c, dst=s) / UDP(sport=1234, dport=5678) / Raw(b"y" * 20))
    t = bytearray(t)
    t[16:18] = struct.pack(">H", 1000)  # ip total length 1000 > frame
    hdr = IP(bytes(t[14:34]))
    del hdr.chksum
    t[14:34] = bytes(hdr)[:20]
    add(bytes(t), "ipv4 truncated (total length 1000 > frame)")
    add(bytes.fromhex("52540000000252540000"), "runt frame 10 bytes")
    v5 = bytearray(bytes(E / IP(src=c, dst=s) / UDP(sport=1, dport=2)))
    v5[14] = 0x55
    add(bytes(v5), "ip version 5")
    bad = bytearray(bytes(E / IP(src=c, dst=s) / UDP(sport=1, dport=2)))
    bad[14] = 0x43
    add(bytes(bad), "ipv4 bad ihl 3")
    big = bytearray(bytes(E / IP(src=c, dst=s) / UDP(sport=1, dport=2)))
    big[14] = 0x4F
    add(bytes(big), "ipv4 ihl 15 longer than packet")
    add(Ether(src=MAC_A, dst="ff:ff:ff:ff:ff:ff") /
        IP(src="0.0.0.0", dst="255.255.255.255") / UDP(sport=68, dport=67) /
        Raw(b"\x01" * 16), "udp broadcast dhcp-ish")
    add(Ether(src=MAC_A, dst="01:00:5e:00:00:fb") /
        IP(src=c, dst="224.0.0.251", ttl=255) / UDP(sport=5353, dport=5353) /
        Raw(b"mdns"), "udp multicast mdns")
    add(E / IP(src=c, dst=s) / TCP(sport=40004, dport=80, flags="S", chksum=0xdead),
        "tcp bad checksum")
    add(E / IP(src=c, dst=s) / UDP(sport=1234, dport=5678, chksum=0) /
        Raw(b"nochk"), "udp zero checksum")
    add(E / IP(src=c, dst=s) / UDP(sport=1234, dport=5678) / Raw(b"L" * 1472),
        "udp full size 1514 byte frame")
    add(E / IP(src=c, dst=s) / GRE() / IP(src="192.168.0.1", dst="192.168.0.2") /
        ICMP(), "ipv4 gre (proto 47)")
    add(Ether(src=MAC_A, dst="01:80:c2:00:00:0e", type=0x88CC) / Raw(b"\x02\x07" + b"\x00" * 20),
        "non-ip ethertype 0x88cc")
    add(Dot3(src=MAC_A, dst="01:80:c2:00:00:00") / LLC(dsap=0x42, ssap=0x42, ctrl=3) /
        Raw(b"\x00" * 35), "802.3 length frame with llc")
    add(E / IP(src="192.168.1.10", dst=s) / TCP(sport=50000, dport=443, flags="S"),
        "tcp syn 443 from 192.168.1.10")
    add(E / IP(src="172.16.5.5", dst="8.8.8.8") / UDP(sport=40000, dport=53) /
        DNS(qd=DNSQR(qname="click.test")), "udp dns 172.16.5.5 > 8.8.8.8")
    add(E / IP(src=c, dst="8.8.8.8") / ICMP(type=8, id=2, seq=9),
        "icmp echo to 8.8.8.8")
    add(E / IP(src=c, dst=s) / TCP(sport=40005, dport=80, flags="S",
                                   options=[("MSS", 1460), ("SAckOK", b""),
                                            ("Timestamp", (1, 0)), ("NOP", None),
                                            ("WScale", 7)]),
        "tcp syn with options")
    add(E / IP(src=c, dst=s, flags="DF") / TCP(sport=40006, dport=22, flags="PA") /
        Raw(b"data"), "ipv4 df tcp data")
    add(E / IP(src=c, dst=s) / UDP(sport=1234, dport=5678) / Raw(b"p") /
        Raw(b"\x00" * 17), "udp padded to 60 byte ethernet minimum")
    add(Ether(src=MAC_B, dst="ff:ff:ff:ff:ff:ff") /
        ARP(op=1, hwsrc=MAC_B, psrc=s, pdst=s), "gratuitous arp")
    full = bytes(E / IP(src=c, dst=s) / UDP(sport=1234, dport=5678) / Raw(b"T" * 958))
    pk.append((full[:96], len(full), "udp 1000 byte frame captured with caplen 96"))
    return pk


def mixed():
    pk = mixed_packets()
    recs = []
    times = []
    for i, (data, origlen, desc) in enumerate(pk):
        sec, usec = BASE + 100 + i, (i * 37013) % 1000000
        times.append((sec, usec))
        recs.append((sec, usec, data, origlen or len(data), desc))
    write_pcap("mixed.pcap", recs)

    fname = "mixed.pcapng"
    w = RawPcapNgWriter(os.path.join(HERE, fname))
    w.linktype = LINKTYPE_EN10MB
    w.write_header(None)
    for i, (data, origlen, desc) in enumerate(pk):
        sec, usec = times[i]
        ts = Decimal(sec) + Decimal(usec) / Decimal(1000000)
        ol = origlen or len(data)
        w._write_packet(data, linktype=LINKTYPE_EN10MB, sec=ts,
                        caplen=len(data), wirelen=ol)
        note(fname, i, sec, usec * 1000, data, ol, LINKTYPE_EN10MB, desc)
    w.close()
    return len(pk)


# ---------------------------------------------------------------------------
# nanosec.pcap / bigendian.pcap
# ---------------------------------------------------------------------------
def nanosec():
    recs = []
    for i in range(5):
        p = (Ether(src=MAC_A, dst=MAC_B) / IP(src="10.0.0.1", dst="10.0.0.2") /
             UDP(sport=1000 + i, dport=2000) / Raw(b"n" * (10 * i)))
        recs.append((BASE + i, 123456789 + i * 111, bytes(p), len(bytes(p)),
                     "udp nanosecond timestamp %d" % i))
    write_pcap("nanosec.pcap", recs, nano=True)


def bigendian():
    recs = []
    for i in range(5):
        p = (Ether(src=MAC_A, dst=MAC_B) / IP(src="10.1.2.3", dst="10.3.2.1") /
             TCP(sport=3000 + i, dport=80, flags="S", seq=i))
        recs.append((BASE + 1000 + i, 999990 + i, bytes(p), len(bytes(p)),
                     "tcp syn big-endian file %d" % i))
    write_pcap("bigendian.pcap", recs, big_endian=True)


# ---------------------------------------------------------------------------
# router-in.pcap
# ---------------------------------------------------------------------------
ROUTER_DSTS = [
    "10.0.0.2", "10.0.0.255", "10.1.2.3", "10.255.255.254", "10.200.0.1",
    "192.168.0.1", "192.168.1.1", "192.168.100.200", "192.168.255.255",
    "172.16.0.1", "172.20.1.1", "172.31.255.254", "172.32.0.1",
    "172.15.255.255", "8.8.8.8", "1.1.1.1", "93.184.216.34", "203.0.113.7",
    "198.51.100.1", "11.0.0.1", "192.169.0.1", "9.255.255.255",
    "224.0.0.5", "255.255.255.255", "127.0.0.1", "0.0.0.0",
    "100.64.0.1", "169.254.1.1", "10.0.0.1", "192.168.0.2",
]


def router_in():
    recs = []
    for i, dst in enumerate(ROUTER_DSTS):
        src = "10.0.0.%d" % (10 + i)
        ip = IP(src=src, dst=dst, ttl=64 - (i % 5), id=0x100 + i)
        if i % 3 == 2:
            l4 = TCP(sport=20000 + i, dport=[80, 443, 22][i % 3 - 2], flags="S")
            kind = "tcp"
        else:
            l4 = UDP(sport=20000 + i, dport=5000 + i) / Raw(b"r" * (i + 1))
            kind = "udp"
        p = Ether(src="52:54:00:12:34:56", dst="52:54:00:00:00:fe") / ip / l4
        data = bytes(p)
        recs.append((BASE + 2000 + i, i * 1000, data, len(data),
                     "%s %s > %s" % (kind, src, dst)))
    write_pcap("router-in.pcap", recs)


# ---------------------------------------------------------------------------
# other link types: raw.pcap (101), sll.pcap (113), null.pcap (0)
# ---------------------------------------------------------------------------
def other_linktypes():
    ips = [IP(src="10.0.0.1", dst="10.0.0.%d" % (i + 2)) / UDP(sport=1, dport=2 + i) /
           Raw(b"L" * i) for i in range(3)]
    recs = [(BASE + 3000 + i, i, bytes(p), len(bytes(p)), "raw ipv4 udp %d" % i)
            for i, p in enumerate(ips)]
    write_pcap("raw.pcap", recs, linktype=LINKTYPE_RAW)

    recs = []
    for i, p in enumerate(ips):
        # Linux cooked v1: pkttype, arphrd, addrlen, addr[8], protocol
        sll = struct.pack(">HHH8sH", 0 if i != 1 else 4, 1, 6,
                          bytes.fromhex("525400000001") + b"\x00\x00", 0x0800)
        d = sll + bytes(p)
        recs.append((BASE + 3100 + i, i, d, len(d), "linux sll ipv4 udp %d" % i))
    write_pcap("sll.pcap", recs, linktype=LINKTYPE_LINUX_SLL)

    recs = []
    for i, p in enumerate(ips):
        d = struct.pack("<I", 2) + bytes(p)  # AF_INET, host (little) order
        recs.append((BASE + 3200 + i, i, d, len(d), "null/loopback ipv4 udp %d" % i))
    write_pcap("null.pcap", recs, linktype=LINKTYPE_NULL)


# ---------------------------------------------------------------------------
# multi.pcapng: hand-built pcapng exercising the less common features
# ---------------------------------------------------------------------------
def pad4(b):
    return b + b"\x00" * (-len(b) % 4)


def ng_block(e, btype, body):
    body = pad4(body)
    total = 12 + len(body)
    return struct.pack(e + "II", btype, total) + body + struct.pack(e + "I", total)


def ng_opt(e, code, value):
    return struct.pack(e + "HH", code, len(value)) + pad4(value)


def ng_opts(e, opts):
    if not opts:
        return b""
    return b"".join(ng_opt(e, c, v) for c, v in opts) + struct.pack(e + "HH", 0, 0)


def ng_shb(e, opts=()):
    body = struct.pack(e + "IHHq", 0x1A2B3C4D, 1, 0, -1) + ng_opts(e, list(opts))
    return ng_block(e, 0x0A0D0D0A, body)


def ng_idb(e, linktype, snaplen, opts=()):
    return ng_block(e, 1, struct.pack(e + "HHI", linktype, 0, snaplen) +
                    ng_opts(e, list(opts)))


def ng_epb(e, ifid, units, data, origlen, opts=()):
    body = struct.pack(e + "IIIII", ifid, units >> 32, units & 0xFFFFFFFF,
                       len(data), origlen) + pad4(data) + ng_opts(e, list(opts))
    return ng_block(e, 6, body)


def multi_pcapng():
    fname = "multi.pcapng"
    out = []
    idx = 0

    def rec(sec, nsec, data, origlen, lt, desc):
        nonlocal idx
        note(fname, idx, sec, nsec, data, origlen, lt, desc)
        idx += 1

    eth = bytes(Ether(src=MAC_A, dst=MAC_B) / IP(src="10.0.0.1", dst="10.0.0.2") /
                UDP(sport=7, dport=7) / Raw(b"multi"))
    raw = bytes(IP(src="10.9.9.9", dst="10.8.8.8") / ICMP(type=8))

    # Section 1: little endian.
    e = "<"
    out.append(ng_shb(e, [(4, b"click make_pcaps.py")]))
    # if 0: Ethernet, default resolution (microseconds), snaplen 65535
    out.append(ng_idb(e, LINKTYPE_EN10MB, 65535, [(2, b"eth0")]))
    # if 1: raw IP, nanosecond resolution (if_tsresol = 9)
    out.append(ng_idb(e, LINKTYPE_RAW, 0, [(2, b"tun0"), (9, b"\x09")]))
    sec, usec = BASE + 4000, 250000
    out.append(ng_epb(e, 0, sec * 10**6 + usec, eth, len(eth),
                      [(1, b"a comment"), (2, struct.pack("<I", 1))]))
    rec(sec, usec * 1000, eth, len(eth), LINKTYPE_EN10MB, "epb if0 ethernet usec")
    sec, nsec = BASE + 4001, 987654321
    out.append(ng_epb(e, 1, sec * 10**9 + nsec, raw, len(raw)))
    rec(sec, nsec, raw, len(raw), LINKTYPE_RAW, "epb if1 raw ipv4 nsec")
    # an unknown block type and a custom block (0x40000BAD): must be skipped
    out.append(ng_block(e, 0x0000BEEF, b"unknown block body"))
    out.append(ng_block(e, 0x40000BAD, struct.pack("<I", 32473) + b"custom"))
    # Name Resolution Block and Interface Statistics Block: skipped
    out.append(ng_block(e, 4, struct.pack("<HH", 1, 14) + pad4(b"\x0a\x00\x00\x01host1\x00\x00\x00\x00\x00") +
                        struct.pack("<HH", 0, 0)))
    out.append(ng_block(e, 5, struct.pack("<III", 0, 0, 0)))
    # Simple Packet Block: interface 0, no timestamp, full packet
    out.append(ng_block(e, 3, struct.pack("<I", len(eth)) + eth))
    rec(0, 0, eth, len(eth), LINKTYPE_EN10MB, "spb (no timestamp) ethernet")
    # EPB with caplen < origlen (snapped)
    sec, usec = BASE + 4002, 1
    out.append(ng_epb(e, 0, sec * 10**6 + usec, eth[:20], 1500))
    rec(sec, usec * 1000, eth[:20], 1500, LINKTYPE_EN10MB, "epb snapped caplen 20 origlen 1500")

    # Section 2: big endian, new interface numbering.
    e = ">"
    out.append(ng_shb(e))
    # if 0: Linux SLL, binary resolution 2^-20, if_tsoffset = 100 s
    sll = struct.pack(">HHH8sH", 0, 1, 6, bytes.fromhex("525400000001") + b"\x00\x00",
                      0x0800) + raw
    out.append(ng_idb(e, LINKTYPE_LINUX_SLL, 262144,
                      [(9, b"\x94"), (14, struct.pack(">q", 100))]))
    sec, frac = BASE + 4100, 3 << 18  # 0.75 s
    out.append(ng_epb(e, 0, sec * 2**20 + frac, sll, len(sll)))
    rec(sec + 100, 750000000, sll, len(sll), LINKTYPE_LINUX_SLL,
        "big-endian section, sll, tsresol 2^-20, tsoffset 100")
    # if 1: Ethernet, millisecond resolution
    out.append(ng_idb(e, LINKTYPE_EN10MB, 128, [(9, b"\x03")]))
    sec, msec = BASE + 4200, 5
    out.append(ng_epb(e, 1, sec * 1000 + msec, eth, len(eth)))
    rec(sec, msec * 1000000, eth, len(eth), LINKTYPE_EN10MB, "big-endian section, if1 ethernet msec")
    # SPB on if 0 whose snaplen is 262144
    out.append(ng_block(e, 3, struct.pack(">I", len(sll)) + sll))
    rec(0, 0, sll, len(sll), LINKTYPE_LINUX_SLL, "big-endian spb sll")

    with open(os.path.join(HERE, fname), "wb") as f:
        f.write(b"".join(out))


def main():
    udp64()
    mixed()
    nanosec()
    bigendian()
    router_in()
    other_linktypes()
    multi_pcapng()
    with open(os.path.join(HERE, "manifest.tsv"), "w") as f:
        f.write("# file\tindex\tts_sec\tts_nsec\tcaplen\torig_len\tlinktype\tcrc32\tdescription\n")
        for m in manifest:
            f.write("%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n" % m)
    total = sum(os.path.getsize(os.path.join(HERE, n)) for n in os.listdir(HERE))
    print("wrote %d records, tests/data is %d bytes" % (len(manifest), total),
          file=sys.stderr)


if __name__ == "__main__":
    main()
