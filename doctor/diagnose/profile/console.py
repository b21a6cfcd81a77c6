"""The traces' part of `pgdoctor diagnose` on the console: a per-rank table (the largest ranks
first past MAX_ROWS) and the straggler's story in two lines."""

from __future__ import annotations

from typing import Any, Optional

from rich.console import Console
from rich.markup import escape

from pgdoctor.diagnose.profile.arrival import story as arrival_story
from pgdoctor.diagnose.profile.findings import story
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import Finding

MAX_ROWS = 16


def _cell(v: Any, width: int = 7) -> str:
    return f"{v:>{width}.1f}" if isinstance(v, (int, float)) else f"{'-':>{width}}"


def section(console: Console, traces: Optional[dict[str, Any]], found: list[Finding]) -> None:
    if not traces:
        return
    if not traces.get("ranks"):  # every trace given was unreadable: say why, one line each
        for s in traces.get("skipped") or []:
            console.print(f"  [yellow]skipped:[/] {escape(s)}")
        return
    ranks = traces["ranks"]
    kind = {s.get("kind") for s in ranks.values()}
    console.print(
        f"\n  Traces: {len(ranks)} rank(s), {'/'.join(sorted(str(k) for k in kind))} "
        f"(time in % of the analysed window)"
    )
    console.print("    rank  steps  step ms  compute  non-comp     idle  overlap   wait ms  data ms")
    straggler = traces.get("straggler") or {}
    rows = sorted(ranks.items(), key=lambda kv: int(kv[0]))
    if len(rows) > MAX_ROWS:
        keep = {str(straggler.get("rank"))} | {k for k, _ in rows[: MAX_ROWS - 1]}
        rows = [kv for kv in rows if kv[0] in keep]
    for r, s in rows:
        mark = " [yellow]<- straggler[/]" if str(straggler.get("rank")) == r else ""
        console.print(
            f"    {r:>4}  {s.get('steps', 0):>5}  {_cell(s.get('step_ms'))}  {_cell(s.get('compute_pct'))}"
            f"   {_cell(s.get('non_compute_pct'))}  {_cell(s.get('idle_pct'))}  "
            f"{_cell(s.get('comm_comp_overlap_pct'))}   {_cell(s.get('wait_ms'))}  {_cell(s.get('data_ms'))}"
            f"{mark}"
        )
    if len(ranks) > len(rows):
        console.print(f"    [dim]... {len(ranks) - len(rows)} more rank(s) in --json[/]")
    if straggler:
        first, second = story(straggler)
        console.print(f"  [yellow]straggler:[/] {escape(first)}")
        console.print(f"             {escape(second)}")
        if any(f.code == "RUN405" for f in found):
            console.print("             [dim]-> pgdoctor explain RUN405[/]")
    elif len(ranks) < 2:  # nothing to compare one rank with: "within noise" would claim a comparison
        console.print("  no straggler: one rank's trace only; a straggler needs two or more")
    else:
        console.print("  no straggler: the ranks wait for each other within noise")
    if traces.get("stopped"):
        console.print(f"  [yellow]stopped:[/] {escape(str(traces['stopped']['story']))}")
    if traces.get("arrival"):
        console.print(f"  [yellow]arrival:[/] {escape(arrival_story(traces['arrival']))}")
    for f in found:
        if f.code != "RUN405":
            console.print(f"    [yellow]-[/] {f.code} {escape(f.title)}")
            console.print(f"      {escape(clip(f.message, 300))}")
            console.print(f"      [dim]-> pgdoctor explain {f.code}[/]")
    for note in traces.get("notes") or []:
        console.print(f"  [blue]note:[/] {escape(note)}")
    for s in traces.get("skipped") or []:
        console.print(f"  [yellow]skipped:[/] {escape(s)}")
