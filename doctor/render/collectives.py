"""Console views of a collective sweep: one table per op and a busbw-versus-size bar plot."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TextIO

from rich.console import Console
from rich.table import Table

from pgdoctor.knowledge.collectives import SIZE_CONVENTION, Row
from pgdoctor.knowledge.units import human_bytes


def _by_op(rows: Sequence[Row]) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = {}
    for r in rows:
        out.setdefault(r.op, []).append(r)
    return out


def tables(rows: Sequence[Row]) -> list[Table]:
    out = []
    for op, mine in _by_op(rows).items():
        n = mine[0].world_size
        t = Table(title=f"{op} ({n} rank{'s' if n != 1 else ''})", title_justify="left", box=None, pad_edge=False)
        for col in ("size", "time us", "min us", "max us", "algbw GB/s", "busbw GB/s", "correct", "iters",
                    "slowest rank"):
            t.add_column(col, justify="left" if col in ("size", "correct") else "right")
        for r in mine:
            slow = max(range(len(r.rank_time_us)), key=lambda i: r.rank_time_us[i]) if r.rank_time_us else None
            slowest = f"{slow} ({r.rank_time_us[slow]:.1f} us)" if slow is not None and len(r.rank_time_us) > 1 else "-"
            ok = "yes" if r.correct else "NO: rank " + ",".join(str(w["rank"]) for w in r.wrong)
            t.add_row(human_bytes(r.bytes), f"{r.time_us:.1f}", f"{r.time_min_us:.1f}", f"{r.time_max_us:.1f}",
                      f"{r.algbw_gbps:.3f}", f"{r.busbw_gbps:.3f}", ok, str(r.iters or "-"), slowest)
        out.append(t)
    return out


def plot(rows: Sequence[Row], width: int = 50) -> list[str]:
    """busbw versus size, one bar per size, log-scaled bars so small sizes stay visible."""
    lines = []
    for op, mine in _by_op(rows).items():
        top = max((r.busbw_gbps for r in mine), default=0.0)
        lines.append(f"busbw vs size: {op} (peak {top:.3f} GB/s; bar length ~ log busbw)")
        if top <= 0:
            lines.append("  (busbw is 0: one rank moves no data)")
            continue
        floor = top / 1e4
        for r in mine:
            frac = 0.0 if r.busbw_gbps <= floor else math.log(r.busbw_gbps / floor) / math.log(top / floor)
            bar = "#" * max(0, round(frac * width))
            lines.append(f"  {human_bytes(r.bytes):>9} |{bar:<{width}} {r.busbw_gbps:.3f}")
    return lines


def render(rows: Sequence[Row], header: str, out: TextIO, color: bool) -> None:
    console = Console(file=out, force_terminal=color, no_color=not color, highlight=False, width=120, soft_wrap=True)
    console.print(header)
    console.print(SIZE_CONVENTION, style="dim")
    for t in tables(rows):
        console.print()
        console.print(t)
    console.print()
    for line in plot(rows):
        console.print(line, markup=False)
