"""Findings of `pgdoctor plan`: pure rules over the ranked layouts (no snapshot involved).

They judge the layout the plan would run: the recommended one, or, when nothing fits, the one
closest to fitting. With --tp/--pp/--zero the user has chosen it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from pgdoctor.checks.codes.plan import PLAN101, PLAN102, PLAN103, PLAN104, PLAN105, PLAN106
from pgdoctor.knowledge.units import fmt_bytes, fmt_seconds
from pgdoctor.model import Evidence, Finding
from pgdoctor.plan.layouts import Layout

BUBBLE_LIMIT = 0.20


def plan_findings(
    layouts: Sequence[Layout],
    gpus_per_node: int,
    micro_batch: int,
    global_batch: Optional[int],
    fabric_label: str = "",
    fits_from: Optional[Layout] = None,
) -> list[Finding]:
    """Findings on the layout the plan would run. `fits_from`: when nothing fits, the best
    layout on the fewest nodes on which something does (pgdoctor.plan.layouts.smallest_fit)."""
    if not layouts:
        return []
    lay = layouts[0]
    facts = {"dp": lay.dp, "tp": lay.tp, "pp": lay.pp, "zero": lay.zero}
    out: list[Finding] = []
    mem = lay.memory
    if not lay.host_fits:
        host = lay.host_memory_bytes or 0
        out.append(
            PLAN106.finding(
                f"{lay.label} offloads {fmt_bytes(lay.host_node_bytes)} of states per node (with DeepSpeed's "
                f"1.5x buffers) to {fmt_bytes(host)} of host memory "
                f"({fmt_bytes(lay.host_node_bytes - host)} over)",
                evidence=[
                    Evidence(
                        f"host states {fmt_bytes(mem.host_bytes)} per rank: fp32 master, optimizer state and "
                        "fp32 gradients (and 16-bit parameters with parameter offload)"
                    )
                ],
                facts={**facts, "host_node_bytes": lay.host_node_bytes, "host_memory_bytes": host},
            )
        )
    if lay.headroom_bytes < 0:
        gpus = lay.gpus
        hint = ""
        if fits_from is not None:
            n = fits_from.gpus
            hint = (
                f"; fits from {n // gpus_per_node} nodes ({n} GPUs) as {fits_from.label}, "
                f"{fmt_bytes(fits_from.memory.total)} per GPU"
            )
        out.append(
            PLAN101.finding(
                f"no layout of {gpus} GPU{'s' if gpus > 1 else ''} fits {fmt_bytes(lay.gpu_memory_bytes)}: "
                f"the closest, "
                f"{lay.label}, needs {fmt_bytes(mem.total)} per GPU ({fmt_bytes(-lay.headroom_bytes)} "
                f"over){hint}",
                evidence=[
                    Evidence(
                        f"states {fmt_bytes(mem.states.total)} (params {fmt_bytes(mem.states.params)}, grads "
                        f"{fmt_bytes(mem.states.grads)}, master {fmt_bytes(mem.states.master)}, optimizer "
                        f"{fmt_bytes(mem.states.optimizer)}), activations {fmt_bytes(mem.activations)}, "
                        f"buffers "
                        f"{fmt_bytes(mem.buffers)}, overhead {fmt_bytes(mem.overhead)}"
                    )
                ],
                facts={
                    **facts,
                    "needed_bytes": mem.total,
                    "gpu_memory_bytes": lay.gpu_memory_bytes,
                    "over_bytes": -lay.headroom_bytes,
                    "fits_from_gpus": (fits_from.gpus) if fits_from else None,
                },
            )
        )
    tr = lay.traffic
    if tr.total_s > lay.compute_s > 0:
        parts = [
            f"{name} {fmt_seconds(s)}" for name, s in (("dp", tr.dp_s), ("tp", tr.tp_s), ("pp", tr.pp_s)) if s
        ]
        out.append(
            PLAN102.finding(
                f"{lay.label}: communication {fmt_seconds(tr.total_s)} per step ({', '.join(parts)}) "
                f"vs compute {fmt_seconds(lay.compute_s)}",
                evidence=[
                    Evidence(
                        f"busbw dp {tr.dp_busbw_gbps:.3g} GB/s, tp {tr.tp_busbw_gbps:.3g} GB/s, "
                        f"pp {tr.pp_busbw_gbps:.3g} GB/s {fabric_label}".strip()
                    )
                ],
                facts={
                    **facts,
                    "comm_s": tr.total_s,
                    "dp_s": tr.dp_s,
                    "tp_s": tr.tp_s,
                    "pp_s": tr.pp_s,
                    "compute_s": lay.compute_s,
                },
            )
        )
    if lay.tp > gpus_per_node:
        out.append(
            PLAN103.finding(
                f"tp={lay.tp} spans {lay.tp // gpus_per_node} nodes of {gpus_per_node} GPUs: its all-reduces "
                f"(4 per layer per micro-batch) run at {tr.tp_busbw_gbps:.3g} GB/s, {fmt_seconds(tr.tp_s)} "
                f"per step",
                facts={
                    **facts,
                    "gpus_per_node": gpus_per_node,
                    "tp_busbw_gbps": tr.tp_busbw_gbps,
                    "tp_s": tr.tp_s,
                },
            )
        )
    if lay.bubble > BUBBLE_LIMIT:
        out.append(
            PLAN104.finding(
                f"pp={lay.pp} with {lay.micro_batches} micro-batches: the pipeline bubble is "
                f"{lay.bubble:.0%} of each step",
                facts={**facts, "micro_batches": lay.micro_batches, "bubble": lay.bubble},
            )
        )
    if global_batch is not None and not lay.batch_divisible:
        out.append(
            PLAN105.finding(
                f"global batch {global_batch} is not divisible by dp {lay.dp} x micro-batch {micro_batch} = "
                f"{lay.dp * micro_batch}",
                facts={**facts, "global_batch": global_batch, "micro_batch": micro_batch},
            )
        )
    return out
