"""Per-rank summaries and the straggler -> findings (RUN405-RUN409), one finding per code with
every rank it concerns, so 128 ranks make five findings, not 640."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from pgdoctor.checks.base import ConfigKey
from pgdoctor.checks.codes import profile as codes
from pgdoctor.model import Evidence, Finding, Scope

# DDP's default 25 MB buckets make a handful of all-reduces per step; dozens are per-tensor calls.
MANY_COLLECTIVES = 32
_CAUSE_TEXT = {
    "compute": "it computes longer than the others",
    "data": "it waits for its DataLoader",
    "host": "its GPU idles between kernels: the CPU side launches its work late",
    "communication": "nothing of its own is longer; its collectives end first",
    # A CPU trace has no GPU: its step thread is outside every profiled op and no collective runs.
    "cpu:host": (
        "its step thread runs no profiled op and no collective between its ops "
        "(Python code, a sleep, I/O outside the DataLoader)"
    ),
}


def story(straggler: dict[str, Any]) -> tuple[str, str]:
    """The straggler in two lines: who and how much; why."""
    s = straggler
    first = (
        f"rank {s['rank']} is the straggler: it waits {s['wait_ms']:.1f} ms per step in communication, the "
        f"others {s['others_wait_ms']:.1f} ms ({s['gap_pct_of_step']:.0f}% of a {s['step_ms']:.1f} ms step)"
    )
    excess = s["excess_ms"].get(s["cause"])
    more = f" (+{excess:.1f} ms per step against the others' median)" if excess and excess > 0 else ""
    text = _CAUSE_TEXT.get(f"{s.get('kind')}:{s['cause']}") or _CAUSE_TEXT.get(s["cause"], s["cause"])
    second = f"cause: {s['cause']}: {text}{more}"
    if s.get("most_compute_rank") not in (None, s["rank"]):
        second += f"; rank {s['most_compute_rank']} has the most compute but waits for it"
    return first, second


def _evidence(summary: dict[str, Any], text: str) -> Evidence:
    return Evidence(text, key=f"traces.ranks.{summary['rank']}", file=str(summary.get("file", "")))


def _ranks_over(ranks: dict[int, dict[str, Any]], key: str, limit: float) -> list[int]:
    return sorted(r for r, s in ranks.items() if (s.get(key) or 0.0) >= limit)


def findings(
    ranks: dict[int, dict[str, Any]],
    straggler: Optional[dict[str, Any]],
    config: Optional[Mapping[str, Any]] = None,
) -> list[Finding]:
    """`config`: the `traces.*` thresholds (`diagnose --config`), their defaults when not given."""

    def limit(key: ConfigKey) -> float:
        return float(config[key.name]) if config is not None and key.name in config else float(key.default)

    exposed_pct, data_pct, idle_pct = (
        limit(codes.EXPOSED_COMM_PCT),
        limit(codes.DATA_STALL_PCT),
        limit(codes.GPU_IDLE_PCT),
    )
    short_pct, launch_idle_pct = limit(codes.SHORT_KERNEL_PCT), limit(codes.LAUNCH_IDLE_PCT)
    out: list[Finding] = []
    base = {"source": "traces"}
    if straggler:
        s = ranks[straggler["rank"]]
        first, second = story(straggler)
        out.append(
            codes.TRACE_STRAGGLER.finding(
                f"{first}; {second}",
                scope=Scope(rank=straggler["rank"]),
                evidence=[
                    _evidence(
                        s,
                        f"rank {s['rank']}: compute {s.get('compute_ms')} ms, data {s.get('data_ms')} ms, "
                        f"idle {s.get('idle_ms')} ms, wait {s.get('wait_ms')} ms per step",
                    )
                ],
                facts={**base, **{k: v for k, v in straggler.items() if k != "noise_share"}},
            )
        )
    exposed = _ranks_over(ranks, "exposed_comm_pct", exposed_pct)
    if exposed:
        worst = max(exposed, key=lambda r: ranks[r]["exposed_comm_pct"])
        w = ranks[worst]
        why = f"; most of it is waiting for rank {straggler['rank']}" if straggler else ""
        calls = w.get("collectives_per_step") or 0.0
        if not straggler and calls >= MANY_COLLECTIVES and w.get("comm_ms"):
            why = (
                f"; {calls:g} collectives per step, {w['comm_ms'] / calls:.2f} ms each on average: many "
                f"small collectives, each paying the backend's fixed latency (bucket or coalesce them)"
            )
        out.append(
            codes.TRACE_EXPOSED_COMM.finding(
                f"{len(exposed)} of {len(ranks)} rank(s) spend {exposed_pct:g}% or more of the analysed "
                f"time in communication that no compute overlaps (worst: rank {worst}, "
                f"{w['exposed_comm_pct']:.1f}%, "
                f"overlap {w.get('comm_comp_overlap_pct')}%){why}",
                scope=Scope(rank=worst),
                evidence=[_evidence(w, f"exposed communication {w['exposed_comm_ms']} ms per step")],
                facts={
                    **base,
                    "ranks": exposed,
                    "rank": worst,
                    "exposed_comm_pct": w["exposed_comm_pct"],
                    "comm_comp_overlap_pct": w.get("comm_comp_overlap_pct"),
                    "straggler": straggler["rank"] if straggler else None,
                    "collectives_per_step": w.get("collectives_per_step"),
                },
            )
        )
    stalled = sorted(
        r
        for r, s in ranks.items()
        if s.get("step_ms") and 100.0 * (s.get("data_ms") or 0.0) / s["step_ms"] >= data_pct
    )
    if stalled:
        worst = max(stalled, key=lambda r: ranks[r]["data_ms"])
        w = ranks[worst]
        share = round(100.0 * w["data_ms"] / w["step_ms"], 1)
        out.append(
            codes.TRACE_DATA_STALL.finding(
                f"{len(stalled)} rank(s) wait for their DataLoader {data_pct:g}% or more of each step "
                f"(worst: rank {worst}, {w['data_ms']:.1f} ms of a {w['step_ms']:.1f} ms step, {share}%)",
                scope=Scope(rank=worst),
                evidence=[_evidence(w, f"DataLoader __next__ {w['data_ms']} ms per step")],
                facts={
                    **base,
                    "ranks": stalled,
                    "rank": worst,
                    "data_ms": w["data_ms"],
                    "step_ms": w["step_ms"],
                    "data_pct_of_step": share,
                },
            )
        )
    gpu = {r: s for r, s in ranks.items() if s.get("kind") == "gpu"}
    idle = _ranks_over(gpu, "idle_pct", idle_pct)
    if idle:
        worst = max(idle, key=lambda r: gpu[r]["idle_pct"])
        w = gpu[worst]
        out.append(
            codes.TRACE_GPU_IDLE.finding(
                f"{len(idle)} of {len(gpu)} rank(s) leave the GPU idle {idle_pct:g}% or more of the "
                f"analysed window (worst: rank {worst}, {w['idle_pct']:.1f}% idle, compute "
                f"{w['compute_pct']:.1f}%)",
                scope=Scope(rank=worst),
                evidence=[_evidence(w, f"GPU idle {w['idle_ms']} ms per step")],
                facts={
                    **base,
                    "ranks": idle,
                    "rank": worst,
                    "idle_pct": w["idle_pct"],
                    "compute_pct": w["compute_pct"],
                },
            )
        )
    bound = sorted(
        r
        for r, s in gpu.items()
        if (s.get("short_kernel_pct") or 0.0) >= short_pct and s["idle_pct"] >= launch_idle_pct
    )
    if bound:
        worst = max(bound, key=lambda r: gpu[r]["short_kernel_pct"])
        w = gpu[worst]
        out.append(
            codes.TRACE_LAUNCH_BOUND.finding(
                f"{len(bound)} rank(s) are kernel-launch bound: {w['short_kernel_pct']:.0f}% of rank "
                f"{worst}'s compute "
                f"kernels run shorter on the GPU than their launch call on the CPU, and its GPU idles "
                f"{w['idle_pct']:.1f}%",
                scope=Scope(rank=worst),
                evidence=[_evidence(w, f"{w['kernels']} kernels, {w['short_kernel_pct']}% short")],
                facts={
                    **base,
                    "ranks": bound,
                    "rank": worst,
                    "short_kernel_pct": w["short_kernel_pct"],
                    "idle_pct": w["idle_pct"],
                },
            )
        )
    return out
