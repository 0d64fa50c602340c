"""Frames for bench/middleboxes: each middlebox's benchmark packet at a
given frame length (Ethernet header included, no FCS), and pcap files of
many flows for the CGNAT stress cases. Standard library only.

  python3 bench/middleboxes/packets.py BOX SIZE     # the frame, as Click's \\<hex> DATA
"""
import struct
import sys

CLIENT_MAC = "02:00:00:00:0a:01"

# PPPoE handshake constants of bench/middleboxes/bras.click
BRAS_ETH = "02:00:00:00:01:fe"
BRAS_CLIENT_IP = "100.64.0.2"  # the pool's lowest free address (network and LOCAL excluded)
BRAS_LOCAL = "100.64.0.1"
BRAS_SID = 1                    # PPPoEServer's first session id
HTTP = (b"GET /index.html HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: bench/1.0\r\n"
        b"Accept: text/html,application/xhtml+xml\r\nAccept-Language: en-GB,en;q=0.9\r\n"
        b"Connection: keep-alive\r\n\r\n")


def mac(s):
    return bytes(int(x, 16) for x in s.split(":"))


def ip(s):
    return bytes(int(x) for x in s.split("."))


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ipv4(src, dst, proto, l4, ttl=64):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 0, 0x4000, ttl, proto, 0, ip(src), ip(dst))
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h + l4


def pseudo(src, dst, proto, l4):
    return ip(src) + ip(dst) + struct.pack("!BBH", 0, proto, len(l4))


def udp(src, dst, sport, dport, payload):
    u = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    c = csum(pseudo(src, dst, 17, u) + u) or 0xFFFF
    return ipv4(src, dst, 17, u[:6] + struct.pack("!H", c) + u[8:])


def tcp(src, dst, sport, dport, payload, flags=0x18):
    t = struct.pack("!HHIIBBHHH", sport, dport, 1000, 2000, 5 << 4, flags, 65535, 0, 0) + payload
    c = csum(pseudo(src, dst, 6, t) + t)
    return ipv4(src, dst, 6, t[:16] + struct.pack("!H", c) + t[18:])


def eth(dst, src, etype, body):
    return mac(dst) + mac(src) + struct.pack("!H", etype) + body


def fill(n, text=b""):
    """n payload bytes: text, repeated and cut to n (zeros when empty)."""
    if not text:
        return bytes(n)
    return (text * (n // len(text) + 1))[:n]


def ip_frame(dst_mac, src_ip, dst_ip, size, proto="udp", sport=1234, dport=5678, text=b""):
    hl = 20 + (8 if proto == "udp" else 20)
    pay = fill(size - 14 - hl, text)
    body = udp(src_ip, dst_ip, sport, dport, pay) if proto == "udp" else tcp(src_ip, dst_ip, sport, dport, pay)
    return eth(dst_mac, CLIENT_MAC, 0x0800, body)


def pppoe(code, sid, payload, etype):
    return eth(BRAS_ETH, CLIENT_MAC, etype, struct.pack("!BBHH", 0x11, code, sid, len(payload)) + payload)


def ppp_control(proto, code, ident, options):
    return pppoe(0, BRAS_SID, struct.pack("!HBBH", proto, code, ident, 4 + len(options)) + options, 0x8864)


def bras_handshake():
    """PADR, LCP Configure-Request and -Ack, IPCP Configure-Request and -Ack:
    what a client sends to bring session 1 up (COOKIE false, so no PADI)."""
    svc = b"internet"
    padr = pppoe(0x19, 0, struct.pack("!HH", 0x0101, len(svc)) + svc, 0x8863)
    lcp_opts = struct.pack("!BBH", 1, 4, 1492) + struct.pack("!BBI", 5, 6, 0x11223344)
    return [
        padr,
        ppp_control(0xC021, 1, 1, lcp_opts),                                   # our Configure-Request
        ppp_control(0xC021, 2, 1, struct.pack("!BBH", 1, 4, 1492)),            # Ack of the BRAS's (id 1)
        ppp_control(0x8021, 1, 1, struct.pack("!BB", 3, 6) + ip(BRAS_CLIENT_IP)),
        ppp_control(0x8021, 2, 1, struct.pack("!BB", 3, 6) + ip(BRAS_LOCAL)),  # Ack of the BRAS's (id 1)
    ]


def bras_data(size):
    """An upstream session frame of `size` bytes carrying UDP to the outside."""
    pay = fill(size - 22 - 28)
    p = udp(BRAS_CLIENT_IP, "198.18.0.10", 40000, 5678, pay)
    return pppoe(0, BRAS_SID, struct.pack("!H", 0x0021) + p, 0x8864)


def frame(box, size):
    """The benchmark frame of middlebox `box`, `size` bytes long."""
    if box in ("wr", "em", "fw", "fm", "floor"):
        # allowed by the firewall's tenth rule (udp from 10/8 to port 5678)
        return ip_frame("02:00:00:00:00:02", "10.0.0.1", "10.0.0.2", size)
    if box == "ir":
        # to MAC0, routed from link 0's net to a host on link 1's
        return ip_frame("02:00:00:00:01:fe", "10.1.0.1", "10.2.0.5", size)
    if box in ("cgnat", "cn-click"):
        # a subscriber's UDP flow to a host beyond the gateway
        return ip_frame("02:00:00:00:01:01", "10.0.0.2", "192.0.2.10", size, sport=40000, dport=5678)
    if box == "bras":
        return bras_data(size)
    if box.startswith("ids"):
        # an HTTP request in an established connection (no rule matches it)
        return ip_frame("02:00:00:00:00:02", "10.0.0.1", "10.0.0.2", size, "tcp", 40000, 80, HTTP)
    if box == "lb":
        return ip_frame("02:00:00:00:01:01", "10.0.0.5", "10.0.1.100", size, "tcp", 40000, 80, HTTP)
    raise KeyError(box)


def click_hex(b):
    return "\\<" + b.hex() + ">"


def flow_frames(n, subscribers=1024, size=64):
    """n UDP frames from subscribers, a new flow each: frame i comes from
    subscriber i % subscribers (10.0.0.2 and up) and source port
    10000 + i // subscribers, to 192.0.2.10:5678."""
    pay = fill(size - 14 - 28)
    base = struct.unpack("!I", ip("10.0.0.2"))[0]
    head = mac("02:00:00:00:01:01") + mac(CLIENT_MAC) + b"\x08\x00"
    template = udp("10.0.0.2", "192.0.2.10", 10000, 5678, pay)
    for i in range(n):
        s = base + i % subscribers
        sport = 10000 + i // subscribers
        b = bytearray(template)
        b[12:16] = struct.pack("!I", s)
        b[10:12] = b"\0\0"
        b[10:12] = struct.pack("!H", csum(bytes(b[:20])))
        b[20:22] = struct.pack("!H", sport)
        b[26:28] = b"\0\0"  # no UDP checksum: the NAT updates it incrementally either way
        yield head + bytes(b)


def write_pcap(path, frames):
    """A pcap file (Ethernet) of the frames; returns how many."""
    n = 0
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1, i % 1000000, len(fr), len(fr)))
            f.write(fr)
            n += 1
    return n


if __name__ == "__main__":
    print(click_hex(frame(sys.argv[1], int(sys.argv[2]))))
