#!/usr/bin/env python3
"""SVG line plots of `clickos switch bench --json FILE`.

    bench/plot_switch.py RESULTS.json [OUTDIR]

Writes switch.svg, vnic.svg, chain.svg and fanin.svg (those the JSON has)
into OUTDIR (default docs/plots). Standard library only: the SVG is
written by hand (axes, ticks, grid, one polyline per series, a legend).
"""

import json
import math
import os
import sys

W, H = 640, 400
L, R, T, B = 70, 180, 40, 55  # margins: the legend sits on the right
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]


def esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def nice_ticks(lo, hi, n=6):
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), default=10 * mag)
    start = math.floor(lo / step) * step
    ticks = []
    v = start
    while v <= hi + step * 1e-9:
        ticks.append(round(v, 10))
        v += step
    return ticks


def fmt(v):
    if v == 0:
        return "0"
    if abs(v) >= 100 or float(v).is_integer():
        return f"{v:.0f}"
    if abs(v) >= 1:
        return f"{v:.1f}".rstrip("0").rstrip(".")
    return f"{v:.2g}"


def plot(path, title, xlabel, ylabel, series, logx=False, logy=False, xticks=None, note=""):
    """series: [(name, [(x, y), ...], dashed)]."""
    pts = [(x, y) for _, s, _ in series for x, y in s if y is not None and y == y]
    if not pts:
        return
    fx = (lambda v: math.log2(v)) if logx else (lambda v: v)
    fy = (lambda v: math.log10(v)) if logy else (lambda v: v)
    xs = [fx(x) for x, _ in pts]
    ys = [fy(max(y, 1e-6)) for _, y in pts]
    x0, x1 = min(xs), max(xs)
    if x0 == x1:
        x1 = x0 + 1
    if logy:
        y0, y1 = math.floor(min(ys)), math.ceil(max(ys))
        yt = [10 ** k for k in range(int(y0), int(y1) + 1)]
    else:
        yt = nice_ticks(0, max(ys) * 1.05)
        y0, y1 = 0, yt[-1]
    pw, ph = W - L - R, H - T - B

    def px(v):
        return L + (fx(v) - x0) / (x1 - x0) * pw

    def py(v):
        return T + ph - (fy(max(v, 1e-6)) - y0) / ((y1 - y0) or 1) * ph

    o = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">',
        f'<rect width="{W}" height="{H}" fill="white"/>',
        f'<text x="{L + pw / 2}" y="22" text-anchor="middle" font-size="14" font-weight="bold">{esc(title)}</text>',
    ]
    for t in yt:
        y = py(t)
        o.append(f'<line x1="{L}" y1="{y:.1f}" x2="{L + pw}" y2="{y:.1f}" stroke="#ddd"/>')
        o.append(f'<text x="{L - 6}" y="{y + 4:.1f}" text-anchor="end">{fmt(t)}</text>')
    xt = xticks or sorted({x for x, _ in pts})
    for t in xt:
        x = px(t)
        o.append(f'<line x1="{x:.1f}" y1="{T}" x2="{x:.1f}" y2="{T + ph}" stroke="#eee"/>')
        o.append(f'<text x="{x:.1f}" y="{T + ph + 16}" text-anchor="middle">{fmt(t)}</text>')
    o.append(f'<rect x="{L}" y="{T}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    o.append(f'<text x="{L + pw / 2}" y="{H - 18}" text-anchor="middle">{esc(xlabel)}</text>')
    o.append(
        f'<text x="16" y="{T + ph / 2}" text-anchor="middle" transform="rotate(-90 16 {T + ph / 2})">{esc(ylabel)}</text>'
    )
    for k, (name, s, dashed) in enumerate(series):
        c = COLORS[k % len(COLORS)]
        s = [(x, y) for x, y in s if y is not None and y == y]
        if not s:
            continue
        d = ' stroke-dasharray="6 4"' if dashed else ""
        line = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s)
        o.append(f'<polyline points="{line}" fill="none" stroke="{c}" stroke-width="2"{d}/>')
        for x, y in s:
            o.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{c}"/>')
        ly = T + 10 + k * 18
        o.append(f'<line x1="{L + pw + 12}" y1="{ly}" x2="{L + pw + 36}" y2="{ly}" stroke="{c}" stroke-width="2"{d}/>')
        o.append(f'<text x="{L + pw + 40}" y="{ly + 4}">{esc(name)}</text>')
    if note:
        o.append(f'<text x="{L}" y="{H - 4}" font-size="10" fill="#555">{esc(note)}</text>')
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")
    print(path)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    d = json.load(open(sys.argv[1]))
    out = sys.argv[2] if len(sys.argv) > 2 else "docs/plots"
    os.makedirs(out, exist_ok=True)
    note = f"clickos switch bench, {d.get('date', '')}, {d.get('cpus', '?')} CPUs, isolation {d.get('isolation', '?')}"
    sw = [r for r in d.get("switch", []) if "size" in r]
    if sw:
        plot(
            os.path.join(out, "switch.svg"),
            "The switch alone (memory → switch → memory)",
            "frame size (bytes)",
            "Mp/s (log scale)",
            [
                ("memcpy loop", [(r["size"], r["memcpy_mpps"]) for r in sw], True),
                ("switch, 1 MAC", [(r["size"], r["switch_mpps"]) for r in sw], False),
                ("1 MAC, N frames", [(r["size"], r.get("switch_1mac_nframes_mpps")) for r in sw], False),
                ("100k MACs, N frames", [(r["size"], r["switch_100k_mpps"]) for r in sw], False),
            ],
            logy=True,
            note=note,
        )
    vn = [r for r in d.get("vnic", []) if "slots" in r]
    if vn:
        sizes = sorted({r["size"] for r in vn})
        pick = [s for s in sizes if s in (64, 1500)] or sizes
        series = []
        for s in pick:
            rows = sorted((r for r in vn if r["size"] == s), key=lambda r: r["slots"])
            series.append((f"TX {s} B", [(r["slots"], r["tx_mpps"]) for r in rows], False))
            series.append((f"RX {s} B", [(r["slots"], r["rx_mpps"]) for r in rows], True))
        plot(
            os.path.join(out, "vnic.svg"),
            "One instance's vNIC by ring size",
            "ring size (slots)",
            "Mp/s delivered",
            series,
            logx=True,
            note=note,
        )
    ch = [r for r in d.get("chain", []) if "instances" in r]
    if ch:
        plot(
            os.path.join(out, "chain.svg"),
            "Chains of instances (memory → VM 1 → … → VM N → memory)",
            "instances in the chain",
            "Gb/s delivered",
            [
                ("1500 B", [(r["instances"], r.get("gbps_1500")) for r in ch], False),
                ("64 B", [(r["instances"], r.get("gbps_64")) for r in ch], False),
            ],
            note=note,
        )
    fi = [r for r in d.get("fanin", []) if "instances" in r]
    if fi:
        series = []
        for s in sorted({r["size"] for r in fi}):
            rows = sorted((r for r in fi if r["size"] == s), key=lambda r: r["instances"])
            series.append((f"aggregate {s} B", [(r["instances"], r["aggregate_mpps"]) for r in rows], False))
            series.append(
                (f"min per VM × N, {s} B", [(r["instances"], r["per_instance_min"] * r["instances"]) for r in rows], True)
            )
        plot(
            os.path.join(out, "fanin.svg"),
            "N instances sending into one switch",
            "instances (log scale)",
            "Mp/s",
            series,
            logx=True,
            xticks=sorted({r["instances"] for r in fi}),
            note=note,
        )


if __name__ == "__main__":
    main()
