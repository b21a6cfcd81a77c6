"""The HTML report's section for per-rank profiler traces (`report.extra["traces"]`): one
stacked bar per rank (compute, non-compute, idle, in % of its analysed window) and the step
timeline (each rank's analysed steps on a shared time axis), as inline SVG with <title>
tooltips and no script, and the per-rank table."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from pgdoctor.render.svg import nice_ticks

PARTS = (
    ("compute_pct", "compute", "#2ca02c"),
    ("non_compute_pct", "non-compute", "#ff7f0e"),
    ("idle_pct", "idle", "#c7c7c7"),
)
MAX_BARS = 128
STEP_COLORS = ("#1f77b4", "#6baed6")


def _num(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


def breakdown_bars(ranks: Mapping[str, Mapping[str, Any]], straggler: Any, width: int = 760) -> str:
    rows = sorted(ranks.items(), key=lambda kv: int(kv[0]))[:MAX_BARS]
    if not rows:
        return ""
    left, right, top, bottom = 48, 120, 16, 40
    pw, height = width - left - right, 260
    ph = height - top - bottom
    slot = pw / len(rows)
    bar = max(min(slot * 0.8, 40.0), 1.0)
    out = [
        f'<svg class="trace-bars" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="time breakdown per rank">',
        f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="#fff" stroke="#999"/>',
    ]
    for t in (0, 25, 50, 75, 100):
        y = top + ph - t / 100 * ph
        out.append(
            f'<line x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{t}%</text>'
        )
    for i, (rank, s) in enumerate(rows):
        x = left + i * slot + (slot - bar) / 2
        y = float(top + ph)
        for key, label, color in PARTS:
            h = _num(s.get(key)) / 100 * ph
            y -= h
            out.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="{color}">'
                f"<title>rank {escape(rank)}: {label} {_num(s.get(key)):.1f}%</title></rect>"
            )
        if str(straggler) == rank:
            out.append(
                f'<text x="{x + bar / 2:.1f}" y="{top - 3}" text-anchor="middle" font-size="11" '
                f'fill="#d62728">straggler</text>'
            )
        if len(rows) <= 32 or i % max(len(rows) // 16, 1) == 0:
            out.append(
                f'<text x="{x + bar / 2:.1f}" y="{top + ph + 14}" text-anchor="middle" font-size="11">'
                f"{escape(rank)}</text>"
            )
    out.append(
        f'<text x="{left + pw / 2:.1f}" y="{height - 6}" text-anchor="middle" font-size="12">rank</text>'
    )
    for j, (_, label, color) in enumerate(PARTS):
        y = top + 10 + j * 18
        out.append(
            f'<rect x="{left + pw + 12}" y="{y - 9}" width="12" height="12" fill="{color}"/>'
            f'<text x="{left + pw + 30}" y="{y + 1}" font-size="12">{label}</text>'
        )
    out.append("</svg>")
    return "\n".join(out)


def step_timeline(ranks: Mapping[str, Mapping[str, Any]], straggler: Any, width: int = 760) -> str:
    rows = [
        (r, s)
        for r, s in sorted(ranks.items(), key=lambda kv: int(kv[0]))[:MAX_BARS]
        if s.get("step_spans_ms")
    ]
    if not rows:
        return ""
    t0 = min(span[0] for _, s in rows for span in s["step_spans_ms"])
    t1 = max(span[0] + span[1] for _, s in rows for span in s["step_spans_ms"])
    left, right, top, row_h = 56, 20, 12, 14 if len(rows) <= 32 else 4
    pw = width - left - right
    height = top + row_h * len(rows) + 36
    ticks = nice_ticks(max(t1 - t0, 1e-3))
    scale = pw / (ticks[-1] or 1.0)
    out = [
        f'<svg class="trace-steps" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="steps per rank over time">'
    ]
    for t in ticks:
        x = left + t * scale
        out.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + row_h * len(rows)}" stroke="#eee"/>'
            f'<text x="{x:.1f}" y="{top + row_h * len(rows) + 14}" text-anchor="middle" '
            f'font-size="11">{t:g}</text>'
        )
    for i, (rank, s) in enumerate(rows):
        y = top + i * row_h
        mark = "#d62728" if str(straggler) == rank else None
        if row_h >= 10:
            fill = f' fill="{mark}"' if mark else ""
            out.append(
                f'<text x="{left - 6}" y="{y + row_h - 3}" text-anchor="end" font-size="11"{fill}>'
                f"rank {escape(rank)}</text>"
            )
        for k, (start, dur) in enumerate(s["step_spans_ms"]):
            color = mark or STEP_COLORS[k % 2]
            out.append(
                f'<rect x="{left + (start - t0) * scale:.1f}" y="{y + 1}" '
                f'width="{max(dur * scale, 0.5):.1f}" '
                f'height="{row_h - 2}" fill="{color}"><title>rank {escape(rank)} step {k}: {dur:.2f} ms'
                f"</title></rect>"
            )
    out.append(
        f'<text x="{left + pw / 2:.1f}" y="{height - 4}" text-anchor="middle" font-size="12">'
        f"ms since the first step</text></svg>"
    )
    return "\n".join(out)


def section(extra: Mapping[str, Any]) -> list[str]:
    traces = extra.get("traces")
    if not isinstance(traces, Mapping) or not traces.get("ranks"):
        return []
    ranks = traces["ranks"]
    straggler = (traces.get("straggler") or {}).get("rank")
    out = ['<section id="traces"><h2>Profiler traces: where each rank\'s time goes</h2>']
    s = traces.get("straggler")
    if s:
        out.append(
            f'<p class="verdict">Straggler: rank {escape(str(s["rank"]))}, cause {escape(str(s["cause"]))} '
            f"&middot; waits {s['wait_ms']:.1f} ms per step, the others {s['others_wait_ms']:.1f} ms</p>"
        )
    else:
        out.append("<p>No straggler: the ranks wait for each other within noise.</p>")
    stopped = traces.get("stopped")
    if isinstance(stopped, Mapping) and stopped.get("story"):
        out.append(f'<p class="verdict">Stopped: {escape(str(stopped["story"]))}</p>')
    for note in traces.get("notes") or []:
        out.append(f'<p class="meta">{escape(note)}</p>')
    out.append(breakdown_bars(ranks, straggler))
    out.append(step_timeline(ranks, straggler))
    out.append(
        "<details><summary>Per-rank figures</summary><table><tr><th>rank</th><th>steps</th><th>step ms</th>"
        "<th>compute %</th><th>non-compute %</th><th>idle %</th><th>overlap %</th><th>wait ms</th>"
        "<th>data ms</th></tr>"
    )
    for rank, r in sorted(ranks.items(), key=lambda kv: int(kv[0])):
        cls = ' class="bad"' if str(straggler) == rank else ""
        cells = "".join(
            f"<td>{escape(str(r.get(k, '')))}</td>"
            for k in (
                "steps",
                "step_ms",
                "compute_pct",
                "non_compute_pct",
                "idle_pct",
                "comm_comp_overlap_pct",
                "wait_ms",
                "data_ms",
            )
        )
        out.append(f"<tr{cls}><td>{escape(rank)}</td>{cells}</tr>")
    out.append("</table></details></section>")
    return out
