"""Per-step arrival of each collective across ranks: which rank comes last.

Each rank gives, per analysed step, the start times of its collectives in order (wall clock,
microseconds): on Nsight exports the communication NVTX ranges of the step thread (pgdoctor's
`comm.*`), else the NCCL kernels. The k-th collective of step s is the same collective on every
rank of a synchronous job, so its arrival skew is the latest start minus the earliest, and the
rank that starts it last is the one the others wait for. Steps whose collective counts differ
across ranks are left out (a rank that skipped one would pair the wrong collectives).
"""

from __future__ import annotations

from collections import Counter
from statistics import median
from typing import Any, Optional


def skew(arrivals: dict[int, list[list[float]]]) -> Optional[dict[str, Any]]:
    """{"collectives", "last_rank", "last_count", "last_by_rank", "median_skew_ms", "max_skew_ms"},
    or None when fewer than two ranks share a comparable step."""
    if len(arrivals) < 2:
        return None
    steps = min(len(a) for a in arrivals.values())
    last: Counter[int] = Counter()
    skews: list[float] = []
    for s in range(steps):
        counts = {len(a[s]) for a in arrivals.values()}
        if len(counts) != 1:
            continue
        for k in range(counts.pop()):
            starts = {r: a[s][k] for r, a in arrivals.items()}
            late = max(starts, key=lambda r: starts[r])
            last[late] += 1
            skews.append(starts[late] - min(starts.values()))
    if not skews:
        return None
    rank, count = last.most_common(1)[0]
    return {
        "collectives": len(skews),
        "last_rank": rank,
        "last_count": count,
        "last_by_rank": {str(r): n for r, n in sorted(last.items())},
        "median_skew_ms": round(median(skews) / 1000.0, 3),
        "max_skew_ms": round(max(skews) / 1000.0, 3),
    }


def story(a: dict[str, Any]) -> str:
    return (
        f"rank {a['last_rank']} arrives last at {a['last_count']} of {a['collectives']} collectives "
        f"(arrival skew median {a['median_skew_ms']} ms, max {a['max_skew_ms']} ms)"
    )
