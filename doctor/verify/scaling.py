"""`pgdoctor bench scaling`: the same entry at each world size, measured step by step, against
the one-process baseline, with the planner's α-β prediction beside it.

Weak scaling (default): every rank trains the one-process micro-batch, so the ideal step time
stays the baseline's; strong (`--strong`): rank r trains data(r, N, step), the entry's share of
a fixed global batch, and the ideal is baseline / N. Per size (medians over steps; a step is
the slowest rank's): step, data, forward, backward, optimizer, communication (launch to
completion of DDP's bucket all-reduces, which overlap the backward) and exposed overhead
(step - ideal: communication not hidden behind compute, plus contention). Speedup is
throughput (samples/s) against the baseline; efficiency is speedup / N.

Prediction: ideal + the planner's ring all-reduce time (pgdoctor.plan.comm) of the gradients
over the link measured by the ranks themselves (busbw and per-message latency of a gloo/NCCL
all-reduce of that size), one message per DDP bucket, with no overlap assumed.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable, Optional

from pgdoctor.checks.codes import verify as codes
from pgdoctor.model import Finding
from pgdoctor.plan.comm import ring_all_reduce_s
from pgdoctor.verify.records import RankRecord

EFFICIENCY_THRESHOLD = 0.7
COMM_BOUND_SHARE = 0.4


@dataclass
class Row:
    nproc: int
    step_s: float
    data_s: float
    fwd_s: float
    bwd_s: float
    optim_s: float
    comm_s: float
    exposed_s: float
    samples: int  # per step, all ranks
    speedup: float = 1.0
    efficiency: float = 1.0
    comm_share: float = 0.0
    predicted_step_s: Optional[float] = None
    predicted_speedup: Optional[float] = None
    busbw_gbps: Optional[float] = None
    latency_us: Optional[float] = None
    buckets: int = 0

    def to_json(self) -> dict[str, Any]:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def row_of(nproc: int, ranks: Sequence[RankRecord]) -> Row:
    per_step = list(zip(*(r["steps"] for r in ranks)))
    if not per_step:
        raise ValueError(f"no timed step at {nproc} rank(s)")
    slowest = [max(recs, key=lambda x: x["step_s"]) for recs in per_step]

    def med(key: str) -> float:
        return statistics.median(s[key] for s in slowest)

    r0 = ranks[0]
    return Row(
        nproc=nproc,
        step_s=med("step_s"),
        data_s=med("data_s"),
        fwd_s=med("fwd_s"),
        bwd_s=med("bwd_s"),
        optim_s=med("optim_s"),
        comm_s=med("comm_s"),
        exposed_s=0.0,
        samples=sum(rec["batch"] for rec in per_step[0]),
        busbw_gbps=r0.get("busbw_gbps"),
        latency_us=r0.get("latency_us"),
        buckets=int(statistics.median(s["buckets"] for s in slowest)),
    )


def analyse(rows: list[Row], grad_bytes: int, strong: bool) -> list[Row]:
    base = rows[0]
    thr0 = base.samples / base.step_s
    for row in rows:
        ideal = base.step_s / row.nproc if strong else base.step_s
        row.exposed_s = max(0.0, row.step_s - ideal)
        row.speedup = (row.samples / row.step_s) / thr0
        row.efficiency = row.speedup / row.nproc
        row.comm_share = min(1.0, row.comm_s / row.step_s) if row.step_s > 0 else 0.0
        if row.nproc > 1 and row.busbw_gbps:
            comm = ring_all_reduce_s(
                grad_bytes, row.nproc, row.busbw_gbps, row.latency_us or 0.0, messages=max(1, row.buckets)
            )
            row.predicted_step_s = ideal + comm
            row.predicted_speedup = (row.samples / row.predicted_step_s) / thr0
        elif row.nproc == 1:
            row.predicted_step_s, row.predicted_speedup = base.step_s, 1.0
    return rows


def findings(rows: Sequence[Row], threshold: float = EFFICIENCY_THRESHOLD) -> list[Finding]:
    out = []
    for row in rows[1:]:
        facts = row.to_json() | {"threshold": threshold}
        comm_bound = row.comm_share >= COMM_BOUND_SHARE or row.comm_s >= 0.5 * row.exposed_s > 0
        reason = (
            "communication outgrows computation: the gradients' all-reduce takes "
            f"{row.comm_s * 1e3:.1f} ms of a {row.step_s * 1e3:.1f} ms step ({row.comm_share:.0%}); "
            "larger buckets (bucket_cap_mb), gradient compression (a bf16/fp16 comm hook), a larger "
            "micro-batch per rank, or a faster link"
            if comm_bound
            else f"compute per rank slows down as ranks are added (forward+backward "
            f"{1e3 * (row.fwd_s + row.bwd_s):.1f} "
            f"ms against {1e3 * (rows[0].fwd_s + rows[0].bwd_s):.1f} ms alone): the ranks share cores, "
            f"memory "
            "bandwidth or a device"
        )
        if row.speedup < 1.0:
            out.append(
                codes.SCALING_SLOWER.finding(
                    f"{row.nproc} ranks train {row.speedup:.2f}x the samples per second of one process "
                    f"(step {row.step_s * 1e3:.1f} ms against {rows[0].step_s * 1e3:.1f} ms): {reason}",
                    facts=facts | {"reason": "communication" if comm_bound else "compute"},
                )
            )
        elif row.efficiency < threshold:
            out.append(
                codes.SCALING_EFFICIENCY_LOW.finding(
                    f"{row.nproc} ranks reach {row.speedup:.2f}x ({row.efficiency:.0%} efficiency, threshold "
                    f"{threshold:.0%}): {reason}",
                    facts=facts | {"reason": "communication" if comm_bound else "compute"},
                )
            )
    return out


def run_scaling(
    entry: str,
    nprocs: Sequence[int],
    steps: int,
    backend: str,
    strong: bool,
    timeout_s: float,
    progress: Optional[Callable[[str], None]] = None,
) -> tuple[list[Row], int]:
    """Run every size in turn (1 first: the baseline); (rows, gradient bytes)."""
    from pgdoctor.verify.launch import launch

    sizes = sorted(set(nprocs) | {1})
    rows: list[Row] = []
    grad_bytes = 0
    for n in sizes:
        if progress:
            progress(f"bench scaling: {n} rank(s), {steps} timed step(s)")
        run = launch(
            entry,
            "scaling",
            n,
            {"steps": steps, "backend": backend, "strong": strong, "pg_timeout_s": 60},
            timeout_s,
            reference=False,
        )
        bad = [r for r, res in enumerate(run.ranks) if not res.get("steps") or res.get("error")]
        if bad:
            res = run.ranks[bad[0]]
            err = res.get("error", {})
            o = run.rank_outcome(bad[0])
            raise RuntimeError(
                f"{n} rank(s): rank {bad[0]} failed: "
                + (
                    f"{err.get('type')}: {err.get('message')}"
                    if err
                    else ("killed at the deadline" if o.timed_out else o.stderr.strip()[-500:])
                )
            )
        grad_bytes = int(run.ranks[0].get("grad_bytes", 0))
        rows.append(row_of(n, run.ranks))
    return analyse(rows, grad_bytes, strong), grad_bytes


def table(rows: Sequence[Row]) -> str:
    head = (
        f"{'ranks':>5} {'step ms':>8} {'fwd':>7} {'bwd':>7} {'optim':>7} {'data':>6} {'comm':>7} "
        f"{'exposed':>8} "
        f"{'comm%':>6} {'speedup':>7} {'eff':>5} {'pred ms':>8} {'pred x':>7}"
    )
    lines = [head]
    for r in rows:
        pred = f"{r.predicted_step_s * 1e3:8.2f}" if r.predicted_step_s is not None else f"{'-':>8}"
        px = f"{r.predicted_speedup:7.2f}" if r.predicted_speedup is not None else f"{'-':>7}"
        lines.append(
            f"{r.nproc:>5} {r.step_s * 1e3:8.2f} {r.fwd_s * 1e3:7.2f} {r.bwd_s * 1e3:7.2f} "
            f"{r.optim_s * 1e3:7.2f} "
            f"{r.data_s * 1e3:6.2f} {r.comm_s * 1e3:7.2f} {r.exposed_s * 1e3:8.2f} {r.comm_share:6.0%} "
            f"{r.speedup:7.2f} {r.efficiency:5.0%} {pred} {px}"
        )
    return "\n".join(lines)


def prediction_note(rows: Sequence[Row]) -> list[str]:
    out = []
    for r in rows[1:]:
        if r.predicted_step_s:
            # 3 significant digits: a loopback gloo link of 0.004 GB/s printed as "0.00 GB/s"
            link = (
                f"link measured {r.busbw_gbps:.3g} GB/s busbw, {r.latency_us:.0f} us per message"
                if (r.busbw_gbps or 0.0) > 0
                else "the link could not be measured"
            )
            out.append(
                f"{r.nproc} ranks: measured step {r.step_s * 1e3:.2f} ms, planner "
                f"{r.predicted_step_s * 1e3:.2f} ms "
                f"({r.step_s / r.predicted_step_s:.2f}x the prediction; {link})"
            )
    return out
