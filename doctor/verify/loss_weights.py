"""A loss that divides by a quantity of its own micro-batch: a count (`(loss * mask).sum() /
mask.sum()`, valid labels, kept tokens) or a statistic (the targets' variance). torch's ignore_index
is read from the loss object (detectors.unequal_token_counts); a mask applied by hand is not, so it
is read from the losses themselves.

At step 0 every side has the same weights, so for a loss that is a mean over the samples of equal
micro-batches the reference's loss of the whole batch is the mean of the ranks' losses. One that lies
strictly between the ranks' losses but away from their mean is a mean weighted by something each
micro-batch counts differently (with 2 ranks the weights are solved for); DDP weighs the ranks
equally. A reference's loss outside the ranks' range is not such a mean: the loss couples the
samples of a batch (in-batch negatives, named before this one from its own evidence: coupling.py),
and is never called a weighting; neither is a forward that is not the same per sample on both
sides (noise drawn in forward)."""

from __future__ import annotations

import math
from typing import Optional

from pgdoctor.checks.codes import verify as codes
from pgdoctor.verify.compare import close, rtol
from pgdoctor.verify.context import Cause, Context

# Away from the mean by more than this share of the ranks' spread: rounding moves the reference's
# loss by eps-sized amounts, a per-rank count by a share of the spread (0.26 in u2/masked_mean_loss).
MIN_SHARE = 0.05


def _step0_losses(ctx: Context) -> Optional[tuple[float, list[float]]]:
    ref_steps = ctx.ref.get("steps") or []
    firsts = [res["steps"][0] for res in ctx.ranks if res.get("steps")]
    if not ref_steps or len(firsts) != len(ctx.ranks) or len(firsts) < 2:
        return None
    if len({rec.get("batch") for rec in firsts}) != 1:
        return None  # unequal micro-batches: their own detector
    # The forward must be the same per sample on both sides (each rank's outputs against the
    # reference's rows of its samples): noise drawn in forward, or a model that mixes the samples
    # of a batch, moves the losses by itself and is not a loss's weighting.
    parts = ref_steps[0].get("output_parts") or []
    if len(parts) != len(firsts) or not all(
        rec.get("output_part") and close(rec["output_part"], part, ctx.dtype)
        for rec, part in zip(firsts, parts)
    ):
        return None
    ref, per = ref_steps[0].get("loss"), [rec.get("loss") for rec in firsts]
    if ref is None or None in per or not all(math.isfinite(v) for v in (ref, *per)):  # type: ignore[arg-type]
        return None
    return float(ref), [float(v) for v in per]  # type: ignore[arg-type]


def unequal_loss_weights(ctx: Context) -> Optional[Cause]:
    got = _step0_losses(ctx)
    if got is None:
        return None
    ref, per = got
    lo, hi, mean = min(per), max(per), sum(per) / len(per)
    noise = rtol(ctx.dtype, 0) * max(abs(ref), abs(lo), abs(hi))
    spread = hi - lo
    if spread <= noise or abs(ref - mean) <= max(noise, MIN_SHARE * spread):
        return None
    if not lo + noise < ref < hi - noise:
        return None
    losses = ", ".join(f"{v:.6g}" for v in per)
    weights: Optional[list[float]] = None
    how = "a mean weighted unequally would"
    if len(per) == 2:
        w0 = (ref - per[1]) / (per[0] - per[1])
        weights = [w0, 1 - w0]
        how = f"a mean weighted {w0:.2f} : {1 - w0:.2f} would (equal micro-batches, so 0.50 : 0.50 expected)"
    return Cause(
        codes.UNEQUAL_MICRO_BATCHES.finding(
            f"{ctx.div()}. At step 0, with the same weights everywhere, the reference's loss "
            f"{ref:.6g} is not the mean of the ranks' losses ({losses}) but lies between them, as "
            f"{how}: the loss divides by a quantity of its own micro-batch that differs across ranks, "
            "a count (tokens a padding or loss mask keeps, (loss * mask).sum() / mask.sum(), valid "
            "labels) or a statistic (its targets' variance or norm), and DDP averages the ranks' losses "
            "with equal weight; for a count, sum the loss, all-reduce the count, divide by it and "
            "multiply by the world size; for a statistic, all-reduce it before dividing",
            facts=ctx.facts(ctx.comparison, loss_reference=ref, loss_ranks=per, loss_weights=weights),
        ),
        # not unequal_token_counts: the losses cannot tell a count from a batch statistic
        "unequal_loss_weights",
        ctx.first(),
    )
