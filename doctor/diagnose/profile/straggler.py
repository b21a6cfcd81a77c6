"""The straggler of a synchronous job, from per-rank summaries, and what it spends its time on.

Every rank of a synchronous step waits for the slowest one inside the collectives, so the
largest compute time alone misleads (a rank can compute the most and still wait, when another
is late for a different reason). The straggler is the rank that waits least: on GPU traces the
rank whose communication kernels run shortest (an NCCL kernel spins from its launch until the
last peer arrives), on CPU traces the rank whose step thread spends the least time outside its
own compute and data loading. It is named only when it waits clearly less than the others
(by NOISE_SHARE of the median step, and at least MIN_GAP_MS): a balanced run names none.

The cause is the component of the straggler's own time that exceeds the other ranks' median
the most: compute, data (DataLoader ranges), host (GPU traces: the GPU idles, the CPU side
launches late; CPU traces: the step thread runs no profiled op and no collective is in flight,
e.g. Python code or a sleep between the ops), memory (copies).
"""

from __future__ import annotations

from math import isfinite
from statistics import median
from typing import Any, Optional

NOISE_SHARE = 0.10
MIN_GAP_MS = 0.2
_COMPONENTS = {
    "gpu": (("compute", "compute_ms"), ("host", "idle_ms"), ("data", "data_ms")),
    # host: the step thread's time in no profiled op while no collective is in flight.
    "cpu": (("compute", "compute_ms"), ("host", "idle_ms"), ("data", "data_ms")),
}


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and isfinite(v)


def find(ranks: dict[int, dict[str, Any]], noise_share: float = NOISE_SHARE) -> Optional[dict[str, Any]]:
    """{"rank", "cause", "wait_ms", "others_wait_ms", "gap_ms", "excess_ms", "runner_up", ...} or None."""
    # Only finite figures: "nan% of an inf ms step" never names a straggler.
    usable = {
        r: s
        for r, s in ranks.items()
        if _finite(s.get("wait_ms")) and _finite(s.get("step_ms")) and s["step_ms"] > 0
    }
    kinds = {s.get("kind") for s in usable.values()}
    if len(usable) < 2 or len(kinds) != 1:
        return None
    kind = kinds.pop()
    if kind == "gpu" and all(not s.get("comm_ms") for s in usable.values()):
        return None  # no collective in the traces: nothing couples the ranks
    order = sorted(usable, key=lambda r: (usable[r]["wait_ms"], r))
    s = order[0]
    others = [usable[r]["wait_ms"] for r in order[1:]]
    others_wait = median(others)
    step = median(x["step_ms"] for x in usable.values())
    gap = others_wait - usable[s]["wait_ms"]
    if gap < max(noise_share * step, MIN_GAP_MS):
        return None
    excess: dict[str, float] = {}
    for cause, key in _COMPONENTS[str(kind)]:
        mine = float(usable[s].get(key) or 0.0)
        theirs = median(float(usable[r].get(key) or 0.0) for r in order[1:])
        excess[cause] = round(mine - theirs, 3)
    cause = max(excess, key=lambda k: excess[k])
    if kind == "gpu" and cause == "host" and excess.get("data", 0.0) >= 0.5 * excess["host"]:
        cause = "data"  # the GPU idles while this rank's CPU waits in its DataLoader
    if excess[cause] <= 0:
        cause = "communication"  # nothing of its own is longer: its collectives end first (a faster link)
    return {
        "rank": s,
        "cause": cause,
        "kind": kind,
        "wait_ms": usable[s]["wait_ms"],
        "others_wait_ms": round(others_wait, 3),
        "gap_ms": round(gap, 3),
        "gap_pct_of_step": round(100.0 * gap / step, 1) if step else None,
        "step_ms": round(step, 3),
        "excess_ms": excess,
        "runner_up": order[1],
        "most_compute_rank": max(usable, key=lambda r: (usable[r].get("compute_ms") or 0.0, -r)),
        "noise_share": noise_share,
    }
