"""Load imbalance from trace events: which rank (DDP), stage (PP) or shard (TP) computes
longer than the others, how much of their step the others spend waiting in collectives, and
for pipelines the measured bubble against the ideal (p-1)/(m+p-1).

Stateless over per-rank event lists (as pgdoctor.trace.events reads them), in the manner of
Holistic Trace Analysis. Per rank and step, on the rank's main thread:
  comm    = time in communication ranges (comm.all_reduce, tp.all_reduce, pp.send, pp.recv;
            each of these waits inside its range in the lab);
  compute = step - comm - data, on the thread CPU clock (tdur) when the trace has it;
  wait share = comm / step.
The first steps are warm-up (allocator, DDP bucket rebuild) and are left out; figures are
medians over the remaining steps, which keeps a noisy step from deciding.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from pgdoctor.trace.events import COMM_TID

COMM_RANGES = frozenset({"comm.all_reduce", "tp.all_reduce", "pp.send", "pp.recv"})
WARMUP_STEPS = 2
DEFAULT_RATIO = 1.3  # compute of the slowest / median of the others that counts as imbalance


@dataclass(frozen=True)
class RankStats:
    rank: int
    steps: int
    step_ms: float
    compute_ms: float
    comm_ms: float
    wait_share: float
    pp_compute_ms: float  # pp.fwd + pp.bwd self time (pipelines only)


@dataclass(frozen=True)
class Imbalance:
    strategy: str
    ranks: tuple[RankStats, ...]
    slowest: int
    slowest_compute_ms: float
    median_compute_ms: float  # over all ranks
    others_median_compute_ms: float
    ratio: float  # slowest / median of the others
    others_wait_share: float  # median over the other ranks
    bubble: Optional[float] = None  # pipelines: measured idle fraction
    ideal_bubble: Optional[float] = None

    def compute_of(self, r: RankStats) -> float:
        """The time compared across ranks: a stage's pp.fwd + pp.bwd self time for pipelines,
        step - communication - data otherwise."""
        return r.pp_compute_ms if self.strategy == "pp" else r.compute_ms

    def facts(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rank": self.slowest,
            "compute_ms": round(self.slowest_compute_ms, 3),
            "median_compute_ms": round(self.median_compute_ms, 3),
            "others_median_compute_ms": round(self.others_median_compute_ms, 3),
            "others_ranks": [r.rank for r in self.ranks if r.rank != self.slowest],
            "ratio": round(self.ratio, 3),
            "others_wait_share": round(self.others_wait_share, 4),
            "per_rank": {
                str(r.rank): {
                    "compute_ms": round(self.compute_of(r), 3),
                    "wait_ms": round(r.comm_ms, 3),
                    "comm_ms": round(r.comm_ms, 3),
                    "step_ms": round(r.step_ms, 3),
                    "wait_share": round(r.wait_share, 4),
                }
                for r in self.ranks
            },
        }
        if self.strategy == "pp":
            out["stage"] = self.slowest
        if self.strategy == "tp":
            out["shard"] = self.slowest
        if self.bubble is not None:
            out["bubble"] = round(self.bubble, 4)
            out["ideal_bubble"] = round(self.ideal_bubble or 0.0, 4)
        return out


def ideal_bubble(stages: int, microbatches: int) -> float:
    """Idle fraction of a balanced pipeline flush: (p-1)/(m+p-1), for GPipe and 1F1B alike."""
    return (stages - 1) / (microbatches + stages - 1)


def _within(ev: Mapping[str, Any], step: Mapping[str, Any]) -> bool:
    return bool(step["ts"] <= ev["ts"] <= step["ts"] + step["dur"])


def _step_figures(events: Sequence[Mapping[str, Any]], warmup: int) -> list[dict[str, float]]:
    main = [e for e in events if e.get("tid") != COMM_TID]
    steps = sorted((e for e in main if e["name"] == "step"), key=lambda e: e["ts"])
    cpu = bool(main) and all("tdur" in e for e in main)
    out = []
    for st in steps[warmup:]:
        inside = [e for e in main if e is not st and _within(e, st)]

        def total(
            names: frozenset[str] | tuple[str, ...], clock: str = "dur", inside: list = inside
        ) -> float:
            return float(sum(e[clock] for e in inside if e["name"] in names))

        comm = total(COMM_RANGES)
        data = total(("data",))
        optim = total(("optim",))
        # Compute on the thread's CPU clock when the trace has it: on a shared host a
        # descheduled rank would otherwise look slow. Communication and data are left out
        # on the same clock.
        clock = "tdur" if cpu else "dur"
        step_c = float(st[clock])
        comm_c, data_c = total(COMM_RANGES, clock), total(("data",), clock)
        pp_c = total(("pp.fwd", "pp.bwd"), clock)
        out.append(
            {
                "step": st["dur"],
                "comm": comm,
                "data": data,
                "optim": optim,
                "compute": max(0.0, step_c - comm_c - data_c),
                # Communication nests inside pp.fwd/pp.bwd; their self time is the stage's compute.
                "pp_compute": max(0.0, pp_c - comm_c),
                "pp_compute_wall": max(0.0, total(("pp.fwd", "pp.bwd")) - comm),
            }
        )
    return out


def rank_stats(
    by_rank: Mapping[int, Sequence[Mapping[str, Any]]], warmup: int = WARMUP_STEPS
) -> list[RankStats]:
    stats = []
    for rank in sorted(by_rank):
        figs = _step_figures(by_rank[rank], warmup)
        if not figs:
            continue

        def med(key: str, figs: list[dict[str, float]] = figs) -> float:
            return statistics.median(f[key] for f in figs) / 1000.0

        step = med("step")
        comm = med("comm")
        stats.append(
            RankStats(
                rank=rank,
                steps=len(figs),
                step_ms=step,
                compute_ms=med("compute"),
                comm_ms=comm,
                wait_share=statistics.median(f["comm"] / f["step"] for f in figs if f["step"] > 0),
                pp_compute_ms=med("pp_compute"),
            )
        )
    return stats


def _bubble(by_rank: Mapping[int, Sequence[Mapping[str, Any]]], warmup: int) -> Optional[float]:
    """1 - (compute of all stages) / (stages x pipeline time), per step, median over steps.
    The pipeline time of a step is the longest stage's step minus its data and optimizer time."""
    per_rank = {r: _step_figures(evs, warmup) for r, evs in by_rank.items()}
    n = min((len(f) for f in per_rank.values()), default=0)
    if n == 0 or len(per_rank) < 2:
        return None
    values = []
    for i in range(n):
        span = max(f[i]["step"] - f[i]["data"] - f[i]["optim"] for f in per_rank.values())
        work = sum(f[i]["pp_compute_wall"] for f in per_rank.values())  # same clock as the span
        if span > 0:
            values.append(1.0 - work / (len(per_rank) * span))
    return statistics.median(values) if values else None


def analyse(
    strategy: str,
    by_rank: Mapping[int, Sequence[Mapping[str, Any]]],
    microbatches: int = 0,
    warmup: int = WARMUP_STEPS,
) -> Optional[Imbalance]:
    """Figures for the slowest rank; None when fewer than two ranks have complete steps."""
    stats = rank_stats(by_rank, warmup)
    if len(stats) < 2:
        return None
    key = (lambda s: s.pp_compute_ms) if strategy == "pp" else (lambda s: s.compute_ms)
    slow = max(stats, key=key)
    others = [s for s in stats if s.rank != slow.rank]
    others_med = statistics.median(key(s) for s in others)
    bubble = ideal = None
    if strategy == "pp":
        bubble = _bubble(by_rank, warmup)
        ideal = ideal_bubble(len(stats), microbatches) if microbatches else None
    return Imbalance(
        strategy=strategy,
        ranks=tuple(stats),
        slowest=slow.rank,
        slowest_compute_ms=key(slow),
        median_compute_ms=statistics.median(key(s) for s in stats),
        others_median_compute_ms=others_med,
        ratio=key(slow) / others_med if others_med > 0 else float("inf"),
        others_wait_share=statistics.median(s.wait_share for s in others),
        bubble=bubble,
        ideal_bubble=ideal,
    )
