"""Console views of a collective sweep: one table per op, a busbw-versus-size bar plot, and a
summary of each op's peak busbw, latency and correctness."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TextIO

from rich.console import Console
from rich.table import Table

from pgdoctor.knowledge import terminal
from pgdoctor.knowledge.collectives import SIZE_CONVENTION, Row, latency, plateau, small_rows
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
        t = Table(
            title=f"{op} ({n} rank{'s' if n != 1 else ''})", title_justify="left", box=None, pad_edge=False
        )
        for col in (
            "size",
            "time us",
            "min us",
            "max us",
            "algbw GB/s",
            "busbw GB/s",
            "correct",
            "iters",
            "slowest rank",
        ):
            t.add_column(col, justify="left" if col in ("size", "correct") else "right")
        for r in mine:
            slow = (
                max(range(len(r.rank_time_us)), key=lambda i: r.rank_time_us[i]) if r.rank_time_us else None
            )
            slowest = (
                f"{slow} ({r.rank_time_us[slow]:.1f} us)"
                if slow is not None and len(r.rank_time_us) > 1
                else "-"
            )
            ok = "yes" if r.correct else "NO: rank " + ",".join(str(w["rank"]) for w in r.wrong)
            t.add_row(
                human_bytes(r.bytes),
                f"{r.time_us:.1f}",
                f"{r.time_min_us:.1f}",
                f"{r.time_max_us:.1f}",
                f"{r.algbw_gbps:.3f}",
                f"{r.busbw_gbps:.3f}",
                ok,
                str(r.iters or "-"),
                slowest,
            )
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


def _ranks(ranks: Sequence[int]) -> str:
    return f"rank{'s' if len(ranks) > 1 else ''} {','.join(str(r) for r in ranks)}"


def summary(rows: Sequence[Row], planned: Mapping[str, int] | None = None) -> Table:
    """One line per op: the highest busbw and the size it was reached at, the op's latency (the
    small-message plateau, as `collectives.<op>.latency_us`, with the sizes it was taken over),
    and whether every element of every
    rank's result was right. `planned` (op -> sizes the sweep meant to run) makes an op that
    stopped early, or never ran, say so instead of looking complete."""
    by_op = _by_op(rows)
    ops = list(dict.fromkeys([*(planned or {}), *by_op]))
    t = Table(
        title="summary (every element of every rank's result checked)",
        title_justify="left",
        box=None,
        pad_edge=False,
    )
    for col in ("op", "peak busbw GB/s", "at size", "latency us", "over sizes", "correct"):
        t.add_column(col, justify="right" if col.endswith(("GB/s", "us")) else "left")
    for op in ops:
        mine = by_op.get(op, [])
        want = (planned or {}).get(op, len(mine))
        peak, first = plateau(mine, op), latency(mine, op)
        if peak is None or first is None:
            t.add_row(
                op, "-", "-", "-", "-", f"not measured: 0 of {want} sizes ran" if want else "not measured"
            )
            continue
        wrong_ranks = sorted({int(w["rank"]) for r in mine for w in r.wrong})
        bad = sum(1 for r in mine if not r.correct)
        if wrong_ranks:
            verdict = f"WRONG on {_ranks(wrong_ranks)} ({bad} of {len(mine)} sizes)"
        else:
            verdict = f"ok ({len(mine)} size{'s' if len(mine) != 1 else ''})"
        if len(mine) < want:
            verdict += f"; {want - len(mine)} of {want} sizes never ran"
        top = f"{peak.busbw_gbps:.3f}" if peak.busbw_gbps > 0 else "0 (1 rank)"
        small = small_rows(mine, op)
        span = human_bytes(small[0].bytes) + (f"-{human_bytes(small[-1].bytes)}" if len(small) > 1 else "")
        t.add_row(
            op,
            top,
            human_bytes(peak.bytes) if peak.busbw_gbps > 0 else "-",
            f"{first.time_us:.1f}",
            span,
            verdict,
        )
    return t


def render(
    rows: Sequence[Row], header: str, out: TextIO, color: bool, planned: Mapping[str, int] | None = None
) -> None:
    """Header, size convention, per-op tables, the plot, then the summary last: it is what a
    reader looks for, so it sits right above the findings that the caller prints next."""
    console = Console(
        file=out,
        force_terminal=color,
        no_color=not color,
        highlight=False,
        width=terminal.width(120),
        soft_wrap=not terminal.fit(),
    )
    console.print(header)
    console.print(SIZE_CONVENTION, style="dim")
    for t in tables(rows):
        console.print()
        console.print(t)
    console.print()
    for line in plot(rows):
        console.print(line, markup=False)
    console.print()
    console.print(summary(rows, planned))
