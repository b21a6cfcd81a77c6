"""The HTML report's section of `pgdoctor bench scaling`: speedup per world size, measured
against ideal and the planner's prediction (inline SVG, no script), and the rows as a table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from pgdoctor.render.svg import nice_ticks

SERIES = (("ideal", "#7f7f7f"), ("measured", "#1f77b4"), ("predicted", "#ff7f0e"))


def speedup_plot(rows: Sequence[Mapping[str, Any]], width: int = 640, height: int = 320) -> str:
    """Grouped bars per world size: ideal (weak: N; strong: N), measured and predicted speedup."""
    if not rows:
        return ""
    left, right, top, bottom = 56, 130, 20, 44
    pw, ph = width - left - right, height - top - bottom
    values = [
        [float(r["nproc"]), float(r.get("speedup") or 0), float(r.get("predicted_speedup") or 0)]
        for r in rows
    ]
    ticks = nice_ticks(max(max(v) for v in values))
    ymax = ticks[-1] or 1.0
    group = pw / len(rows)
    bar = group / 4
    out = [
        f'<svg class="scaling-plot" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="speedup per world size">',
        f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="#fff" stroke="#999"/>',
    ]
    for t in ticks:
        y = top + ph - t / ymax * ph
        out.append(
            f'<line x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{t:g}x</text>'
        )
    for i, (r, vals) in enumerate(zip(rows, values)):
        x0 = left + i * group + bar / 2
        for j, ((name, color), v) in enumerate(zip(SERIES, vals)):
            h = v / ymax * ph
            out.append(
                f'<rect x="{x0 + j * bar:.1f}" y="{top + ph - h:.1f}" width="{bar * 0.9:.1f}" '
                f'height="{h:.1f}" '
                f'fill="{color}"><title>{r["nproc"]} ranks, {name}: {v:.2f}x</title></rect>'
            )
        out.append(
            f'<text x="{left + (i + 0.5) * group:.1f}" y="{top + ph + 16}" text-anchor="middle" '
            f'font-size="11">{r["nproc"]} rank{"s" if r["nproc"] != 1 else ""}</text>'
        )
    for j, (name, color) in enumerate(SERIES):
        y = top + 14 + 18 * j
        out.append(
            f'<rect x="{left + pw + 12}" y="{y - 9}" width="12" height="12" fill="{color}"/>'
            f'<text x="{left + pw + 30}" y="{y + 1}" font-size="12">{name}</text>'
        )
    out.append(
        f'<text x="{left + pw / 2:.1f}" y="{height - 6}" text-anchor="middle" font-size="12">'
        "speedup in samples/s against one process</text></svg>"
    )
    return "".join(out)


def section(extra: Mapping[str, Any]) -> list[str]:
    scaling = extra.get("scaling")
    if not isinstance(scaling, Mapping) or not isinstance(scaling.get("rows"), list):
        return []
    rows = [r for r in scaling["rows"] if isinstance(r, Mapping) and isinstance(r.get("nproc"), int)]
    if not rows:
        return []
    out = [
        '<section id="scaling"><h2>Scaling: speedup per world size</h2>',
        f'<p class="meta">{escape(str(scaling.get("mode", "weak")))} scaling; a step is the slowest rank\'s, '
        "medians over steps; prediction: ideal step + the planner's ring all-reduce over the measured "
        "link</p>",
        speedup_plot(rows),
        "<table><tr><th>ranks</th><th>step (ms)</th><th>comm (ms)</th><th>comm share</th><th>exposed "
        "(ms)</th>"
        "<th>speedup</th><th>efficiency</th><th>predicted step (ms)</th><th>predicted speedup</th></tr>",
    ]
    for r in rows:

        def ms(key: str, row: Mapping[str, Any] = r) -> str:
            v = row.get(key)
            return f"{float(v) * 1e3:.2f}" if isinstance(v, (int, float)) else "-"

        pred = r.get("predicted_speedup")
        out.append(
            f"<tr><td>{r['nproc']}</td><td>{ms('step_s')}</td><td>{ms('comm_s')}</td>"
            f"<td>{float(r.get('comm_share') or 0):.0%}</td><td>{ms('exposed_s')}</td>"
            f"<td>{float(r.get('speedup') or 0):.2f}x</td><td>{float(r.get('efficiency') or 0):.0%}</td>"
            f"<td>{ms('predicted_step_s')}</td><td>"
            f"{f'{float(pred):.2f}x' if isinstance(pred, (int, float)) else '-'}</td></tr>"
        )
    out.append("</table></section>")
    return out
