"""The recommendation in words: why this layout, what the runner-up costs, what to change first;
and, when nothing fits, what to try first (sharding, an 8-bit optimizer, offload, LoRA), each
with the memory it would need.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Optional

from pgdoctor.knowledge.units import fmt_bytes, fmt_seconds
from pgdoctor.plan.finetune import FineTune
from pgdoctor.plan.layouts import Layout, PlanInput, best_per_layout, plan
from pgdoctor.plan.memory import OPTIMIZERS
from pgdoctor.plan.moe import total_params


def _costs(lay: Layout) -> str:
    tr = lay.traffic
    parts = []
    hidden = tr.dp_s - max(0.0, lay.exposed_comm_s - tr.tp_s - tr.pp_s - lay.offload_s)
    if tr.dp_s:
        parts.append(f"dp traffic {fmt_seconds(tr.dp_s)} ({fmt_seconds(hidden)} of it behind backward)")
    if tr.tp_s:
        parts.append(f"exposed tp all-reduces {fmt_seconds(tr.tp_s)}")
    if tr.pp_s or lay.bubble:
        parts.append(f"pipeline bubble {lay.bubble:.0%}")
    if lay.offload_s:
        parts.append(
            f"offload {fmt_seconds(lay.offload_s)} (of it the CPU optimizer step "
            f"{fmt_seconds(lay.offload_cpu_s)})"
        )
    if lay.recompute == "full":
        parts.append("full recomputation's extra forward (+33% compute)")
    return ", ".join(parts) or "no communication"


def _speed_lever(best: Layout, layouts: Sequence[Layout]) -> str:
    faster = [
        lay
        for lay in layouts
        if not lay.fits and lay.step_s / lay.tokens_per_step < 0.97 * best.step_s / best.tokens_per_step
    ]
    tr = best.traffic
    if best.recompute == "full":
        cand = [
            lay
            for lay in faster
            if (lay.dp, lay.tp, lay.pp, lay.zero) == (best.dp, best.tp, best.pp, best.zero)
        ]
        if cand:
            c = min(cand, key=lambda lay: -lay.headroom_bytes)
            return (
                f"for speed, recompute {c.recompute} would save {1 - c.step_s / best.step_s:.0%} of the step "
                f"but needs {fmt_bytes(-c.headroom_bytes)} more than the GPU has"
            )
        return "for speed, a larger micro-batch or less recomputation once memory allows"
    if best.bubble >= max(tr.tp_s, best.exposed_comm_s) / best.step_s and best.bubble > 0:
        return "for speed, more micro-batches per step (--global-batch) to shrink the bubble"
    if best.exposed_comm_s > 0.05 * best.step_s:
        return "for speed, measured bandwidth (--from) first, then a faster link for the exposed traffic"
    return "for speed, the step is compute-bound: raise achieved TFLOP/s (kernels, FP8 where supported)"


def explain(layouts: Sequence[Layout], inp: PlanInput) -> Optional[str]:
    """One paragraph on the recommended layout, or None when nothing fits."""
    if not layouts or not layouts[0].fits:
        return None
    best = layouts[0]
    rows = best_per_layout(layouts)
    free = best.headroom_bytes
    text = (
        f"Why {best.label} ({best.settings}): the fastest layout that leaves at least "
        f"{best.headroom_fraction:.0%} free; {fmt_seconds(best.step_s)} per step, "
        f"{best.tokens_per_s:,.0f} tokens/s, {fmt_bytes(free)} free per GPU; it pays {_costs(best)}."
    )
    runner = next((lay for lay in rows[1:] if lay.fits), None)
    same = None
    if runner is not None:
        slower = runner.step_s / runner.tokens_per_step / (best.step_s / best.tokens_per_step) - 1
        text += (
            f" Runner-up {runner.label} ({runner.settings}): {slower:+.0%} step time per token, "
            f"{fmt_bytes(runner.headroom_bytes)} free."
        )
    roomier = [
        lay for lay in layouts if lay.fits and lay.headroom_bytes > free + 0.05 * best.gpu_memory_bytes
    ]
    if roomier:
        r = min(roomier, key=lambda lay: lay.step_s / lay.tokens_per_step)
        cost = r.step_s / r.tokens_per_step / (best.step_s / best.tokens_per_step) - 1
        same = "the runner-up" if r is runner else f"{r.label} ({r.settings})"
        text += (
            f" First change: for headroom, {same} frees {fmt_bytes(r.headroom_bytes - free)} more at "
            f"{cost:+.0%} per token;"
        )
    else:
        text += " First change:"
    return text + f" {_speed_lever(best, layouts)}."


def _best(inp: PlanInput) -> Optional[Layout]:
    try:
        lays = plan(inp)
    except ValueError:
        return None
    return lays[0] if lays else None


def alternatives(inp: PlanInput, fits_from: Optional[Layout]) -> Optional[str]:
    """When nothing fits: what to try first, with the memory each option needs per GPU."""
    mi = inp.memory
    base = _best(inp)
    if base is None or base.fits:
        return None
    shape = mi.shape
    options: list[tuple[str, Layout, str]] = []
    if mi.optimizer.kind == "dense" and mi.optimizer.state_bytes == 8:
        eight = _best(replace(inp, memory=replace(mi, optimizer=OPTIMIZERS["adamw8bit"])))
        if eight is not None:
            options.append(
                ("8-bit AdamW (bitsandbytes, 2 B of state per parameter)", eight, "quantized optimizer state")
            )
    if mi.offload == "none" and inp.pp in (None, 1):
        off = _best(replace(inp, memory=replace(mi, offload="optimizer"), zero=None))
        if off is not None:
            options.append(
                (
                    f"CPU offload of the optimizer (ZeRO-Offload; {fmt_bytes(off.host_node_bytes)} host "
                    f"memory per node)",
                    off,
                    f"PCIe transfers and the CPU optimizer step {fmt_seconds(off.offload_s)} per step",
                )
            )
    if fits_from is not None:
        n = fits_from.gpus
        options.append(
            (
                f"sharding over more GPUs (ZeRO-3/FSDP or tp/pp; from {n // inp.fabric.gpus_per_node} "
                f"node(s), {n} GPUs)",
                fits_from,
                "same training, more GPUs",
            )
        )
    if mi.finetune is None:
        lora = _best(
            replace(
                inp,
                memory=replace(
                    mi,
                    finetune=FineTune(lora_rank=16, lora_targets=("q", "k", "v", "o", "gate", "up", "down")),
                ),
            )
        )
        if lora is not None:
            options.append(
                ("LoRA r=16 on attn,mlp if this is fine-tuning", lora, "trains an adapter, not the model")
            )
    fitting = [o for o in options if o[1].fits]
    # A mixture of experts' shape counts the dense part only; the experts are the bulk of its states.
    count = shape.params if mi.moe is None else total_params(shape, mi.moe)
    lines = [
        # Per GPU, not per parameter: the closest layout may shard the states (ZeRO) or split the
        # parameters (tp, pp, ep), so states / numel is no bytes-per-parameter figure (the B/param
        # line above gives the convention).
        f"Nothing fits {inp.fabric.gpus} x {fmt_bytes(inp.gpu_memory_bytes)}: {count / 1e9:.3g}B "
        f"parameters need {fmt_bytes(base.memory.states.total)} per GPU for their model states alone on the "
        f"closest layout ({base.label}), {fmt_bytes(base.memory.total)} in all."
    ]
    for what, lay, cost in options:
        verdict = (
            f"fits, {fmt_bytes(lay.headroom_bytes)} free"
            if lay.fits
            else f"{fmt_bytes(-lay.headroom_bytes if lay.headroom_bytes < 0 else 0)} over"
        )
        lines.append(
            f"  {what}: {fmt_bytes(lay.memory.total)} per GPU as {lay.label}, {verdict}; {lay.settings}, "
            f"{fmt_seconds(lay.step_s)} per step ({cost})"
        )
    if fitting:
        first = fitting[0]
        lines.append(
            f"Try first: {first[0]}, because it is the first option, in order of least change to the "
            f"training on the GPUs you have, that fits: {fmt_bytes(first[1].headroom_bytes)} free "
            f"({first[2]})."
        )
    return "\n".join(lines)
