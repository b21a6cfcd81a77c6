"""Inline SVG charts for the HTML report: bus bandwidth versus message size, per-rank timeline.

Plain SVG elements with <title> tooltips, no script: the report must render the same in a
browser with JavaScript off and in a mail client's preview.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from pgdoctor.knowledge.units import human_bytes

PALETTE = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#7f7f7f",
    "#bcbd22",
)


def nice_ticks(top: float, count: int = 5) -> list[float]:
    """0 and round steps (1, 2, 5 x 10^k) up to at least `top`."""
    if top <= 0 or not math.isfinite(top):
        return [0.0, 1.0]
    raw = top / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    n = math.ceil(top / step - 1e-9)
    return [round(i * step, 10) for i in range(n + 1)]


def _num(v: float) -> str:
    return f"{v:.1f}"


def bandwidth_plot(
    series: Mapping[str, Sequence[tuple[int, float]]], width: int = 760, height: int = 380
) -> str:
    """One line per collective op: x = message size (log2), y = bus bandwidth in GB/s."""
    points = [(b, bw) for rows in series.values() for b, bw in rows]
    if not points:
        return ""
    left, right, top, bottom = 64, 150, 20, 48
    pw, ph = width - left - right, height - top - bottom
    lo = math.log2(min(b for b, _ in points))
    hi = math.log2(max(b for b, _ in points))
    if hi - lo < 1:
        lo, hi = lo - 1, hi + 1
    yticks = nice_ticks(max(bw for _, bw in points))
    ymax = yticks[-1] or 1.0

    def x(b: float) -> float:
        return left + (math.log2(b) - lo) / (hi - lo) * pw

    def y(bw: float) -> float:
        return top + ph - bw / ymax * ph

    out = [
        f'<svg class="bw-plot" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="bus bandwidth versus message size">',
        f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="#fff" stroke="#999"/>',
    ]
    for t in yticks:
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{_num(y(t))}" y2="{_num(y(t))}" stroke="#eee"/>')
        out.append(f'<text x="{left - 6}" y="{_num(y(t) + 4)}" text-anchor="end" font-size="11">{t:g}</text>')
    # A tick every power of 2 is unreadable over 8 B .. 8 GiB; keep about eight.
    step = max(1, math.ceil((math.floor(hi) - math.ceil(lo)) / 8))
    for e in range(math.ceil(lo), math.floor(hi) + 1, step):
        xe = _num(x(2**e))
        out.append(f'<line x1="{xe}" x2="{xe}" y1="{top}" y2="{top + ph}" stroke="#eee"/>')
        out.append(
            f'<text x="{xe}" y="{top + ph + 16}" text-anchor="middle" font-size="11">'
            f"{escape(human_bytes(2**e))}</text>"
        )
    out.append(
        f'<text x="{left + pw / 2:.1f}" y="{height - 8}" text-anchor="middle" font-size="12">'
        "message size (bytes, log scale)</text>"
    )
    out.append(
        f'<text x="14" y="{top + ph / 2:.1f}" text-anchor="middle" font-size="12" '
        f'transform="rotate(-90 14 {top + ph / 2:.1f})">bus bandwidth (GB/s)</text>'
    )
    for i, (op, rows) in enumerate(series.items()):
        color = PALETTE[i % len(PALETTE)]
        ordered = sorted(rows)
        path = " ".join(f"{_num(x(b))},{_num(y(bw))}" for b, bw in ordered)
        out.append(f'<g class="series" data-op="{escape(op)}">')
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{path}"/>')
        for b, bw in ordered:
            out.append(
                f'<circle cx="{_num(x(b))}" cy="{_num(y(bw))}" r="3" fill="{color}">'
                f"<title>{escape(op)} {escape(human_bytes(b))}: {bw:.3f} GB/s</title></circle>"
            )
        ly = top + 14 + i * 18
        out.append(
            f'<line x1="{left + pw + 12}" x2="{left + pw + 32}" y1="{ly - 4}" y2="{ly - 4}" '
            f'stroke="{color}" stroke-width="2"/>'
        )
        out.append(f'<text x="{left + pw + 38}" y="{ly}" font-size="12">{escape(op)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)


# The NVTX naming convention's ranges get fixed, distinct colours; other names a hashed one.
_KNOWN = {
    "step": "#b0bec5",
    "fwd": "#1f77b4",
    "bwd": "#ff7f0e",
    "optim": "#2ca02c",
    "data": "#8c564b",
    "comm": "#d62728",
    "pp": "#9467bd",
    "tp": "#e377c2",
}


def _color(name: str) -> str:
    # The same range name gets the same colour on every rank, so a late `comm.all_reduce` stands out.
    base = name.split(" ")[0].split("[")[0]
    head = base.split(".")[0]
    if head in _KNOWN:
        return _KNOWN[head] if head != "pp" or not base.endswith(("send", "recv")) else "#17becf"
    return PALETTE[zlib.crc32(base.encode()) % len(PALETTE)]


def _pid_order(pid: Any) -> tuple[int, float, str]:
    if isinstance(pid, (int, float)) and not isinstance(pid, bool):
        return (0, float(pid), "")
    return (1, 0.0, str(pid))


def timeline(
    events: Sequence[Mapping[str, Any]], track_names: Mapping[Any, str], width: int = 1000, lane_h: int = 14
) -> str:
    """Chrome complete events (name, ts, dur in microseconds, pid = rank, optional tid) as one
    band per pid; thread tracks and nested or overlapping ranges stack in lanes inside it."""
    if not events:
        return ""
    left, right, top = 90, 20, 24
    t0 = min(float(e["ts"]) for e in events)
    t1 = max(float(e["ts"]) + float(e["dur"]) for e in events)
    span = max(t1 - t0, 1e-3)
    pw = width - left - right
    by_pid: dict[Any, dict[Any, list[Mapping[str, Any]]]] = {}
    for e in sorted(events, key=lambda e: (float(e["ts"]), -float(e["dur"]))):
        by_pid.setdefault(e["pid"], {}).setdefault(e.get("tid", 0), []).append(e)

    # Per rank, one group of lanes per thread track (the asynchronous comm track apart from the
    # main thread); inside a track, a range that starts before the previous one ends goes a lane down.
    bands: list[tuple[Any, list[tuple[Mapping[str, Any], int]], int]] = []
    for pid in sorted(by_pid, key=_pid_order):
        placed: list[tuple[Mapping[str, Any], int]] = []
        base = 0
        for tid in sorted(by_pid[pid], key=_pid_order):
            open_ends: list[float] = []
            deepest = 0
            for e in by_pid[pid][tid]:
                start, end = float(e["ts"]), float(e["ts"]) + float(e["dur"])
                open_ends = [t for t in open_ends if t > start]
                placed.append((e, base + len(open_ends)))
                deepest = max(deepest, len(open_ends))
                open_ends.append(end)
            base += deepest + 1
        bands.append((pid, placed, base))

    height = top + sum(n * lane_h + 10 for _, _, n in bands) + 30
    out = [
        f'<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="per-rank timeline">'
    ]
    for t in nice_ticks(span / 1000.0, 8):
        xt = left + t * 1000.0 / span * pw
        if xt > left + pw + 0.5:
            break
        out.append(f'<line x1="{xt:.1f}" x2="{xt:.1f}" y1="{top - 4}" y2="{height - 26}" stroke="#eee"/>')
        out.append(f'<text x="{xt:.1f}" y="{top - 8}" text-anchor="middle" font-size="10">{t:g} ms</text>')
    y = top
    for pid, placed, lanes in bands:
        label = track_names.get(pid, f"rank {pid}")
        out.append(f'<g class="track" data-pid="{escape(str(pid))}">')
        out.append(
            f'<text x="{left - 8}" y="{y + lane_h - 3}" text-anchor="end" font-size="11">'
            f"{escape(label)}</text>"
        )
        out.append(
            f'<rect x="{left}" y="{y}" width="{pw}" height="{lanes * lane_h}" fill="#fafafa" stroke="#ddd"/>'
        )
        for e, depth in placed:
            x = left + (float(e["ts"]) - t0) / span * pw
            w = max(float(e["dur"]) / span * pw, 0.5)
            name = str(e["name"])
            out.append(
                f'<rect x="{x:.2f}" y="{y + depth * lane_h + 1}" width="{w:.2f}" height="{lane_h - 2}" '
                f'fill="{_color(name)}"><title>{escape(label)}: {escape(name)} '
                f"{float(e['dur']) / 1000.0:.3f} ms at +{(float(e['ts']) - t0) / 1000.0:.3f} "
                f"ms</title></rect>"
            )
            if w > 7 * len(name):
                out.append(
                    f'<text x="{x + 2:.2f}" y="{y + depth * lane_h + lane_h - 4}" font-size="9" '
                    f'fill="{"#222" if name == "step" else "#fff"}">{escape(name)}</text>'
                )
        out.append("</g>")
        y += lanes * lane_h + 10
    out.append(
        f'<text x="{left + pw / 2:.1f}" y="{height - 8}" text-anchor="middle" font-size="12">'
        "time since the first event (ms)</text>"
    )
    out.append("</svg>")
    return "\n".join(out)
