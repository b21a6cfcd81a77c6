"""What a process measures of its own step for the detectors of a loss computed over the whole
batch on each rank's micro-batch alone (coupling.py) and of a gradient clipping computed from each
rank's local shards (clipping.py). Each is a few numbers per step, never a tensor:

- `output_shape` (common.output_shape): the shape of the output that is compared. Pairwise scores
  of a batch (InfoNCE's `za @ zb.T`) have a dimension besides the first that is the batch size:
  [B, B] in the reference, [b, b] on a rank.
- `loss_coupling`: in the reference at step 0, how much the loss's gradient for rank 0's rows of
  the output moves when only the other ranks' rows change. Zero for a loss that is a mean or a sum
  of per-sample terms; in-batch negatives (or a statistic of the outputs over the batch) move it,
  and such a loss on a rank sees its own micro-batch only.
- `grad_scale`: the one factor by which the optimizer's step multiplied this process's gradients in
  place (a clipping inside `step()`), 1.0 where it left them alone, absent where the parameters'
  gradients were not all scaled alike. Under fsdp, of the rank's local shards.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Callable, Optional

from pgdoctor.verify.tensors import output_tensors

# Relative spread below which the per-parameter factors are one factor: each element is rounded
# once when scaled (6e-8 in float32), so a uniform scaling agrees to ~1e-7.
UNIFORM = 1e-4
# The other ranks' rows of the output are moved by this factor for the coupling test.
NUDGE = 1.5
# torch is seeded alike before each call of the loss (one that draws noise draws the same twice).
SEED = 4321


def _local(t: Any) -> Any:
    return t.to_local() if hasattr(t, "to_local") else t


def grad_norms(params: list[Any]) -> list[Optional[float]]:
    """Each parameter's local gradient norm (float64), None where it has no gradient."""
    import torch

    out: list[Optional[float]] = []
    for p in params:
        g = p.grad
        if g is None:
            out.append(None)
            continue
        g = _local(g)
        if getattr(g, "is_sparse", False):
            g = g.coalesce().values()
        out.append(float(torch.linalg.vector_norm(g.detach().double())) if g.numel() else 0.0)
    return out


def grad_scale(before: list[Optional[float]], after: list[Optional[float]]) -> Optional[float]:
    """The one factor after / before shared by every parameter with a non-zero gradient; None where
    there is none, or where the factors differ (an optimizer that rewrote some gradients only)."""
    pairs = [(b, a) for b, a in zip(before, after) if b]
    if not pairs or any(a is None for _, a in pairs):
        return None  # no gradient, or the step took some away
    ratios = [a / b for b, a in pairs if a is not None]
    lo, hi = min(ratios), max(ratios)
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi - lo > UNIFORM * max(abs(hi), 1e-30):
        return None
    return (lo + hi) / 2


def _rows(out: Any, total: int) -> list[Any]:
    """The floating tensors of an output whose first dimension is the batch: the leaves the coupling
    test differentiates against."""
    return [t for t in output_tensors(out) if t.is_floating_point() and t.ndim and t.shape[0] == total]


def _rebuilt(out: Any, swap: Callable[[Any], Any]) -> Any:
    import torch

    if isinstance(out, torch.Tensor):
        return swap(out)
    if isinstance(out, Mapping):
        return type(out)({k: _rebuilt(v, swap) for k, v in out.items()}) if type(out) is dict else out
    if isinstance(out, (tuple, list)):
        return type(out)(_rebuilt(v, swap) for v in out)
    return out


def loss_coupling(loss_fn: Any, out: Any, target: Any, sizes: list[int]) -> Optional[float]:
    """The largest change of the loss's gradient on rank 0's rows of the output when the other
    ranks' rows are multiplied by NUDGE, relative to its largest value: 0 for a loss of per-sample
    terms, well above rounding when each sample's loss reads the others' outputs. None where the
    output has no rows of the batch, the loss does not depend on them (a loss computed in
    forward), or it cannot be called so."""
    import torch

    total, mine = sum(sizes), sizes[0] if sizes else 0
    if len(sizes) < 2 or not mine or mine == total:
        return None
    rows = {id(t): t for t in _rows(out, total)}
    if not rows:
        return None

    def grads(nudged: bool) -> Optional[list[Any]]:
        leaves = {k: t.detach().clone() for k, t in rows.items()}
        if nudged:
            for t in leaves.values():
                t[mine:] *= NUDGE
        for t in leaves.values():
            t.requires_grad_(True)
        torch.manual_seed(SEED)
        with torch.enable_grad():
            loss = loss_fn(_rebuilt(out, lambda t: leaves.get(id(t), t)), target)
            if not isinstance(loss, torch.Tensor) or loss.numel() != 1 or not loss.requires_grad:
                return None
            got = torch.autograd.grad(loss, list(leaves.values()), allow_unused=True)
        return [None if g is None else g[:mine].detach().double() for g in got]

    # The reference's RNG goes on as the ranks' does (an optimizer or the next step may draw from it).
    cuda = sorted({t.device.index or 0 for t in rows.values() if t.device.type == "cuda"})
    try:
        with torch.random.fork_rng(devices=cuda):
            base, moved = grads(False), grads(True)
    except Exception:  # a loss that cannot take the output so gives no evidence
        return None
    if base is None or moved is None:
        return None
    pairs = [(a, b) for a, b in zip(base, moved) if a is not None and b is not None]
    scale = max((float(a.abs().max()) for a, _ in pairs if a.numel()), default=0.0)
    if not pairs or not scale or not math.isfinite(scale):
        return None
    change = max(float((a - b).abs().max()) for a, b in pairs if a.numel())
    return change / scale if math.isfinite(change) else None


class ScaledInStep:
    """Around an optimizer step: the gradients' norms before it, and after it the one factor the
    step multiplied them by (StepRecord.grad_scale), recorded where there is one."""

    def __init__(self, model: Any):
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.before = grad_norms(self.params)

    def record(self, rec: Any) -> None:
        factor = grad_scale(self.before, grad_norms(self.params))
        if factor is not None:
            rec["grad_scale"] = factor
