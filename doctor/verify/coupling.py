"""A loss over the whole batch computed by each rank over its own micro-batch: in-batch negatives
(InfoNCE, CLIP, SimCLR) without an all_gather of the embeddings. Each sample is contrasted with the
others of its batch, so a rank's micro-batch of b samples gives b - 1 negatives where one process
gives world x b - 1: another loss, whatever DDP averages. Two pieces of evidence (step_evidence.py):

- the output holds a dimension besides the first that is the batch size on both sides, [B, B]
  pairwise scores in the reference against [b, b] on a rank for the same samples
  (`in_batch_negatives`);
- the model is the same per sample (each rank's output rows equal the reference's rows of its
  samples) but the reference's loss gradient on rank 0's rows moves when only the other ranks'
  rows of the output change: the loss reads every sample's output, which a rank has for its own
  micro-batch only (`loss_couples_samples`). A loss divided by a count or statistic of its targets
  (loss_weights.py) does not move it: its outputs' terms stay per sample.

VER106 (a forward that reads the rank) differs on the probe, one input on every rank; this family's
probe is the same everywhere. VER107's weighted mean keeps the rows and the gradient per sample.
"""

from __future__ import annotations

from typing import Any, Optional

from pgdoctor.checks.codes import verify as codes
from pgdoctor.verify.compare import close
from pgdoctor.verify.context import Cause, Context, _ranks

# The reference's loss gradient on rank 0's rows moved by more than this share of its largest value:
# a loss of per-sample terms moves it by 0 (each row's gradient is computed from that row alone).
COUPLED = 1e-3

FIX = (
    "gather the embeddings of every rank with their gradient before the similarity "
    "(torch.distributed.nn.functional.all_gather; torch.distributed.all_gather cuts the gradient), "
    "score this rank's samples against the whole batch and offset the labels by rank x micro-batch"
)


def _step0(ctx: Context) -> Optional[tuple[dict[str, Any], list[dict[str, Any]]]]:
    ref_steps = ctx.ref.get("steps") or []
    firsts = [res["steps"][0] for res in ctx.ranks if res.get("steps")]
    if not ref_steps or len(firsts) != len(ctx.ranks) or len(firsts) < 2:
        return None
    return ref_steps[0], firsts  # type: ignore[return-value]


def in_batch_negatives(ctx: Context) -> Optional[Cause]:
    got = _step0(ctx)
    if got is None:
        return None
    ref, firsts = got
    ref_shape = list(ref.get("output_shape") or [])
    shapes = [list(rec.get("output_shape") or []) for rec in firsts]
    sizes = [int(rec.get("batch", 0)) for rec in firsts]
    total = sum(sizes)
    if any(b in (0, total) for b in sizes):
        return None
    # a dimension besides the first that follows the batch on both sides
    follows = [
        all(len(s) == len(ref_shape) and s[k] == b for s, b in zip(shapes, sizes))
        for k in range(len(ref_shape))
    ]
    dims = [k for k in range(1, len(ref_shape)) if ref_shape[k] == total and follows[k]]
    if not dims:
        return None
    return Cause(
        codes.LOSS_OVER_MICRO_BATCH.finding(
            f"{ctx.div()}. For the same samples the output is {ref_shape} in the reference and "
            + "; ".join(f"{s} on rank {r}" for r, s in enumerate(shapes[:4]))
            + f": its dimension {dims[0]} is the batch ({total} samples in one process, "
            f"{_ranks(sizes)} on the ranks), so each sample is scored against the others of its own "
            f"micro-batch only (in-batch negatives: InfoNCE, CLIP, SimCLR), {min(sizes) - 1} negatives "
            f"on a rank against {total - 1}, another loss than one process's; " + FIX,
            facts=ctx.facts(
                ctx.comparison, output_shape_reference=ref_shape, output_shapes=shapes, batch_dims=dims
            ),
        ),
        "in_batch_negatives",
        ctx.first(),
    )


def loss_couples_samples(ctx: Context) -> Optional[Cause]:
    got = _step0(ctx)
    if got is None:
        return None
    ref, firsts = got
    coupling = ref.get("loss_coupling")
    if coupling is None or coupling <= COUPLED:
        return None
    parts = ref.get("output_parts") or []
    same_rows = all(
        rec.get("output_part") and close(rec["output_part"], part, ctx.dtype)
        for rec, part in zip(firsts, parts)
    )
    if len(parts) != len(firsts) or not same_rows:
        return None  # the model itself is not the same per sample: not the loss's doing
    return Cause(
        codes.LOSS_OVER_MICRO_BATCH.finding(
            f"{ctx.div()}. Each rank's outputs equal the reference's rows of its samples, but the loss "
            "reads every sample's output: in the reference, the loss's gradient on rank 0's rows moves "
            f"by {coupling:.3g} of its size when only the other ranks' rows change (0 for a loss of "
            "per-sample terms). A rank computes that loss over its own micro-batch only (in-batch "
            "negatives: InfoNCE, CLIP, SimCLR; or a statistic of the outputs over the batch), another "
            "loss than one process's; " + FIX + " (a statistic: all-reduce it)",
            facts=ctx.facts(ctx.comparison, loss_coupling=coupling),
        ),
        "loss_couples_samples",
        ctx.first(),
    )
