#!/usr/bin/env python3
"""Attach a drop-everything BPF program to an interface and hold it.

    bpfdrop.py DEV xdp|tcx|tcx-udp

`xdp` attaches an XDP program returning XDP_DROP (native mode: on veth
the frames are freed in the receiving NAPI poll, before the stack sees
them); `tcx` attaches a tcx ingress program returning TC_ACT_SHOT (packet
sockets still see the frames, the stack does not); `tcx-udp` drops only
IPv4 UDP frames and passes the rest (so that the sink answers pings while
a UDP flow runs, for run.py's ping measurements). Both are BPF links:
the kernel detaches them when this process exits, however it exits.
Prints "ready" once attached, then waits until standard input closes or
a signal arrives. Standard library only (bpf(2) through ctypes); run it
inside the interface's namespace (`ip netns exec NS bpfdrop.py ...`).
"""
import ctypes
import os
import signal
import socket
import sys

SYS_BPF = 321  # x86_64
BPF_PROG_LOAD = 5
BPF_LINK_CREATE = 28
BPF_PROG_TYPE_SCHED_CLS = 3
BPF_PROG_TYPE_XDP = 6
BPF_XDP = 37
BPF_TCX_INGRESS = 46
XDP_DROP = 1
TC_ACT_SHOT = 2

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def bpf(cmd, attr):
    r = libc.syscall(ctypes.c_long(SYS_BPF), ctypes.c_int(cmd), attr, ctypes.c_uint(len(attr)))
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


def put(attr, off, fmt_size, value):
    attr[off:off + fmt_size] = value.to_bytes(fmt_size, "little")


def insn(code, regs, off, imm):
    """One BPF instruction: opcode, dst | src << 4, offset, immediate."""
    return bytes([code, regs]) + off.to_bytes(2, "little", signed=True) + imm.to_bytes(4, "little", signed=True)


def attach(dev, kind):
    ifindex = socket.if_nametoindex(dev)
    ret = XDP_DROP if kind == "xdp" else TC_ACT_SHOT
    if kind == "tcx-udp":
        insns = b"".join(
            [
                insn(0xBF, 0x16, 0, 0),  # r6 = r1 (LD_ABS needs the context in r6)
                insn(0x28, 0, 0, 12),  # r0 = ntohs(ethertype)
                insn(0x55, 0, 4, 0x0800),  # if r0 != IPv4 goto pass
                insn(0x30, 0, 0, 23),  # r0 = IP protocol
                insn(0x55, 0, 2, 17),  # if r0 != UDP goto pass
                insn(0xB7, 0, 0, TC_ACT_SHOT),
                insn(0x95, 0, 0, 0),
                insn(0xB7, 0, 0, 0),  # pass: TCX_PASS
                insn(0x95, 0, 0, 0),
            ]
        )
    else:
        # mov r0, ret; exit
        insns = insn(0xB7, 0, 0, ret) + insn(0x95, 0, 0, 0)
    insn_buf = ctypes.create_string_buffer(insns, len(insns))
    lic = ctypes.create_string_buffer(b"GPL")
    prog_type, attach_type = (
        (BPF_PROG_TYPE_XDP, BPF_XDP) if kind == "xdp" else (BPF_PROG_TYPE_SCHED_CLS, BPF_TCX_INGRESS)
    )
    a = bytearray(128)
    put(a, 0, 4, prog_type)
    put(a, 4, 4, len(insns) // 8)
    put(a, 8, 8, ctypes.addressof(insn_buf))
    put(a, 16, 8, ctypes.addressof(lic))
    name = b"vb_drop"
    a[48:48 + len(name)] = name
    put(a, 68, 4, attach_type)
    ab = (ctypes.c_char * 128).from_buffer(a)
    prog = bpf(BPF_PROG_LOAD, ab)
    b = bytearray(128)
    put(b, 0, 4, prog)
    put(b, 4, 4, ifindex)
    put(b, 8, 4, attach_type)
    link = bpf(BPF_LINK_CREATE, (ctypes.c_char * 128).from_buffer(b))
    return prog, link


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("xdp", "tcx", "tcx-udp"):
        sys.exit("usage: bpfdrop.py DEV xdp|tcx|tcx-udp")
    try:
        fds = attach(sys.argv[1], sys.argv[2])
    except OSError as e:
        sys.exit(f"bpfdrop: {sys.argv[1]}: {sys.argv[2]} attach: {e.strerror}")
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    print("ready", flush=True)
    while os.read(0, 4096):
        pass
    for fd in fds:
        os.close(fd)


if __name__ == "__main__":
    main()
