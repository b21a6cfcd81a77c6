"""Gradient clipping whose norm each rank computes from what it holds: under fully_shard every
rank holds a shard of each gradient (a DTensor), and a norm of the local shards (`to_local()`, or
FSDP1's flat parameters given to torch.nn.utils.clip_grad_norm_) is its shard's norm, not the
model's; each rank then multiplies its shard by its own factor, and the model's gradient is no
longer one direction scaled.

Evidence (step_evidence.grad_scale): every process records the one factor by which the optimizer's
step multiplied its gradients in place. A clipping by the global norm gives the same factor on
every rank (the reference's, while the gradients agree); a factor that differs across ranks at a
step is a clipping, or any scaling, computed per rank. A step that rewrote some gradients only
records no factor and is never read as clipping.
"""

from __future__ import annotations

from typing import Optional

from pgdoctor.checks.codes import verify as codes
from pgdoctor.verify.context import Cause, Context

# Factors further apart than this share: a global clipping's factor is one number on every rank,
# and the recorded ratio of norms agrees with it to ~1e-7.
SPREAD = 1e-3


def clip_local_shards(ctx: Context) -> Optional[Cause]:
    ref_steps = ctx.ref.get("steps") or []
    for step, recs in enumerate(zip(*(res.get("steps", []) for res in ctx.ranks))):
        factors = [rec.get("grad_scale") for rec in recs]
        if len(factors) < 2 or any(f is None for f in factors):
            continue
        lo, hi = min(factors), max(factors)  # type: ignore[type-var]
        if hi - lo <= SPREAD * max(abs(hi), abs(lo)):  # type: ignore[operator]
            continue
        ref = ref_steps[step].get("grad_scale") if step < len(ref_steps) else None
        fsdp = ctx.strategy == "fsdp"
        return Cause(
            codes.CLIP_LOCAL_SHARDS.finding(
                f"{ctx.div()}. At step {step} the optimizer's step multiplied the gradients by another "
                "factor on each rank: "
                + "; ".join(f"{f:.4g} on rank {r}" for r, f in enumerate(factors[:8]))  # type: ignore[str-format]
                + (f" (the reference: {ref:.4g}, one factor for the whole model)" if ref is not None else "")
                + ": a gradient clipping whose norm each rank computes from what it holds"
                + (
                    ". Under fully_shard a rank holds a shard of every gradient, and a norm of the local "
                    "shards (to_local()) is that shard's norm, not the model's; clip with "
                    "torch.nn.utils.clip_grad_norm_ on the parameters themselves (DTensors: it "
                    "all-reduces the shards' norms), or FSDP1's model.clip_grad_norm_"
                    if fsdp
                    else ". Every rank holds the same averaged gradients after DDP's all-reduce, so the "
                    "factor reads something of the rank (its own max_norm, or a norm taken before the "
                    "all-reduce); clip with torch.nn.utils.clip_grad_norm_ after backward, the same on "
                    "every rank"
                ),
                facts=ctx.facts(ctx.comparison, step=step, grad_scales=factors, grad_scale_reference=ref),
            ),
            "clip_local_shards",
            ctx.first(),
        )
    return None
