"""Candidate layouts dp x tp x pp x ZeRO stage for a number of GPUs: evaluate, rank, recommend.

A layout is valid when tp and pp divide the GPUs, the heads and MLP width divide over tp, and
tp either fits in a node or spans whole nodes. ZeRO-2/3 are not combined with pipeline
parallelism (DeepSpeed refuses it: gradients would be resharded every micro-batch).

Ranking: layouts that fit before those that do not; among those that fit, the ones whose
global batch divides into dp x micro-batch first, then those with at least 5% of the GPU's
memory free (a tighter fit is left to the allocator's luck), then the shortest estimated step
per token (compute / (1 - bubble) + exposed communication, at 1% resolution), then the least model
parallelism, the lowest ZeRO stage and the least memory, so that equal speeds prefer the
simpler layout. Layouts that do not fit are ordered by how far over they are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Optional

from pgdoctor.plan.comm import Fabric, Traffic, TrafficInput, bubble_fraction, flops_per_step, traffic
from pgdoctor.plan.memory import MemoryInput, StageMemory, worst_stage
from pgdoctor.plan.model import check_divisible, stage_layers

DEFAULT_TFLOPS = 400.0
# A layout with less free memory than this share of the GPU "fits" on paper only: allocator
# fragmentation and a longer sequence in the data take more than that. Ranked after the others.
TIGHT_FRACTION = 0.05


@dataclass(frozen=True)
class PlanInput:
    memory: MemoryInput
    fabric: Fabric
    gpu_memory_bytes: int
    global_batch: Optional[int] = None
    tflops: float = DEFAULT_TFLOPS  # achieved per GPU, not peak
    tp: Optional[int] = None
    pp: Optional[int] = None
    zero: Optional[int] = None


@dataclass(frozen=True)
class Layout:
    dp: int
    tp: int
    pp: int
    zero: int
    micro_batches: int
    micro_batches_assumed: bool
    batch_divisible: bool
    memory: StageMemory
    gpu_memory_bytes: int
    traffic: Traffic
    tokens_per_step: int
    compute_s: float
    bubble: float
    exposed_comm_s: float
    notes: tuple[str, ...] = field(default=())

    @property
    def fits(self) -> bool:
        return self.memory.total <= self.gpu_memory_bytes

    @property
    def headroom_bytes(self) -> int:
        """Free bytes per GPU; negative: by how much it does not fit."""
        return self.gpu_memory_bytes - self.memory.total

    @property
    def tight(self) -> bool:
        return self.fits and self.headroom_bytes < TIGHT_FRACTION * self.gpu_memory_bytes

    @property
    def step_s(self) -> float:
        return self.compute_s / (1.0 - self.bubble) + self.exposed_comm_s

    @property
    def compute_fraction(self) -> float:
        """Share of the step spent computing (1.0: no bubble, no exposed communication)."""
        return self.compute_s / self.step_s if self.step_s > 0 else 1.0

    @property
    def label(self) -> str:
        return f"dp={self.dp} tp={self.tp} pp={self.pp} zero={self.zero}"

    def to_json(self) -> dict[str, object]:
        return {
            "dp": self.dp, "tp": self.tp, "pp": self.pp, "zero": self.zero,
            "micro_batches": self.micro_batches, "micro_batches_assumed": self.micro_batches_assumed,
            "batch_divisible": self.batch_divisible, "fits": self.fits, "tight": self.tight,
            "headroom_bytes": self.headroom_bytes,
            "memory": self.memory.to_json(), "communication": self.traffic.to_json(),
            "tokens_per_step": self.tokens_per_step, "compute_s": self.compute_s, "bubble": self.bubble,
            "exposed_comm_s": self.exposed_comm_s, "step_s": self.step_s, "compute_fraction": self.compute_fraction, "notes": list(self.notes) + list(self.memory.notes),
        }


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def candidates(inp: PlanInput) -> list[tuple[int, int, int, int]]:
    """(dp, tp, pp, zero) of every valid layout under the user's constraints."""
    n = inp.fabric.gpus
    g = inp.fabric.gpus_per_node
    shape = inp.memory.shape
    out = []
    for tp in _divisors(n):
        if inp.tp is not None and tp != inp.tp:
            continue
        if g % tp and tp % g:
            continue
        for pp in _divisors(n // tp):
            if inp.pp is not None and pp != inp.pp:
                continue
            if check_divisible(shape, tp, pp):
                continue
            dp = n // (tp * pp)
            stages = (0,) if dp == 1 else ((0, 1) if pp > 1 else (0, 1, 2, 3))
            for zero in stages:
                if inp.zero is not None and zero != inp.zero:
                    continue
                out.append((dp, tp, pp, zero))
    return out


def micro_batches(inp: PlanInput, dp: int, pp: int) -> tuple[int, bool, bool]:
    """(m, assumed, divisible): micro-batches per step per pipeline."""
    mb = inp.memory.micro_batch
    per_step = dp * mb
    if inp.global_batch is None:
        # Without a global batch every layout gets the same one: a micro-batch per GPU (pure DP
        # without accumulation), so that all layouts are compared on the same tokens per step.
        return inp.fabric.gpus * mb // per_step, True, True
    return max(1, inp.global_batch // per_step), False, inp.global_batch % per_step == 0


def evaluate(inp: PlanInput, dp: int, tp: int, pp: int, zero: int) -> Layout:
    mi = inp.memory
    shape = mi.shape
    m, assumed, divisible = micro_batches(inp, dp, pp)
    mem = worst_stage(mi, tp, pp, dp, zero, m)
    first = stage_layers(shape.layers, pp)[0]
    act_bytes = 4 if mi.precision.name == "fp32" else 2
    tr = traffic(
        TrafficInput(
            numel=mem.numel, layers=first, grad_bytes=mi.precision.grad_bytes,
            param_bytes=mi.precision.param_bytes, act_bytes=act_bytes, seq_len=mi.seq_len,
            micro_batch=mi.micro_batch, hidden=shape.hidden, micro_batches=m, recompute=mi.recompute,
        ),
        inp.fabric, dp, tp, pp, zero,
    )
    tokens = m * dp * mi.micro_batch * mi.seq_len
    flops = flops_per_step(shape.params, shape.layers, shape.hidden, mi.seq_len, tokens, mi.recompute)
    compute = flops / (inp.fabric.gpus * inp.tflops * 1e12)
    # The DP traffic can hide behind backward: only the last micro-batch's for DDP and ZeRO-1
    # (they sync once, at the end), every backward for ZeRO-2, all of compute for ZeRO-3.
    window = {0: compute * 2 / 3 / m, 1: compute * 2 / 3 / m, 2: compute * 2 / 3, 3: compute}[zero]
    exposed = tr.tp_s + tr.pp_s + max(0.0, tr.dp_s - window)
    notes = []
    if assumed:
        notes.append(f"global batch assumed {m * dp * mi.micro_batch} (a micro-batch per GPU; set --global-batch)")
    return Layout(dp, tp, pp, zero, m, assumed, divisible, mem, inp.gpu_memory_bytes, tr, tokens, compute,
                  bubble_fraction(pp, m), exposed, tuple(notes))


def _rank_key(lay: Layout) -> tuple[object, ...]:
    if not lay.fits:
        return (1, -lay.headroom_bytes)
    # Layouts process different numbers of tokens per step, so they are compared per token;
    # within 1% of each other they count as equal, so the simpler layout wins.
    per_token = lay.step_s / lay.tokens_per_step
    bucket = math.floor(math.log(per_token) / math.log(1.01)) if per_token > 0 else 0
    return (0, not lay.batch_divisible, lay.tight, bucket, lay.tp * lay.pp, lay.zero, lay.memory.total)


def plan(inp: PlanInput) -> list[Layout]:
    """Every valid layout, best first."""
    return sorted((evaluate(inp, *c) for c in candidates(inp)), key=_rank_key)


def smallest_fit(inp: PlanInput, max_nodes: int = 1024) -> Optional[Layout]:
    """The best layout on the fewest whole nodes (same node size) on which one fits with at
    least 5% to spare, or None up to max_nodes. Doubling, then bisection: fitting is monotonic
    in the node count for ZeRO-3 (states divide by dp), which every multi-GPU candidate set
    includes."""
    def best(nodes: int) -> Optional[Layout]:
        trial = replace(inp, fabric=replace(inp.fabric, nodes=nodes), global_batch=None)
        fitting = [lay for lay in plan(trial) if lay.fits and not lay.tight]
        return fitting[0] if fitting else None

    hi = inp.fabric.nodes
    while best(hi) is None:
        if hi >= max_nodes:
            return None
        hi = min(max_nodes, hi * 2)
    lo = max(inp.fabric.nodes, hi // 2)
    while lo < hi:
        mid = (lo + hi) // 2
        if best(mid) is None:
            lo = mid + 1
        else:
            hi = mid
    return best(hi)


def recommended(layouts: Sequence[Layout]) -> Optional[Layout]:
    return layouts[0] if layouts and layouts[0].fits else None
