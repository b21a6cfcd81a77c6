"""Comparison of a distributed run against the one-process reference, tensor by tensor, with a
tolerance derived from the dtype and the reduction order.

Tolerance: |dist - ref| <= rtol x scale for every element, where scale is the largest |ref| of
that kind (gradients, parameters, buffers) over the whole model at that step: a norm-wise bound,
since rounding errors of a sum scale with the magnitude of the summands, not of the result. A
tensor that is mathematically zero (the gradient of an attention key bias) is rounding noise
on both sides, and Adam turns such noise into updates of up to lr x g / eps: against its own
magnitude it would always differ. rtol = eps(dtype) x 2^12 x (1 + step): 2^12 covers the other
summation order of the all-reduce (N partial sums added in a ring instead of one reduction over
the whole batch) through forward, backward and the optimizer; (1 + step) lets the difference
grow by one such bound per optimizer step. A real bug differs by orders of magnitude more (a
missing SyncBatchNorm or a sum loss shows at 1e-2 to 1; float32's bound is 4.9e-4 at step 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

EPS = {"float64": 2.22e-16, "float32": 1.19e-7, "float16": 9.77e-4, "bfloat16": 7.81e-3}
FACTOR = 2**12
# 16-bit types: every op's result is rounded to 8 or 11 bits, which dwarfs the order of the reduction
# (the matmuls accumulate in float32), so a difference is a few eps, not 2^12 of them; eps x 2^12 is
# 32 for bfloat16, a bound no bug could cross (a sum loss under autocast differs by 0.5). Measured:
# tests/fixtures/verify/u2/bf16_autocast.py differs by 0.75 eps of bfloat16 over 3 AdamW steps.
LOW_PRECISION_FACTOR = 2**2
LOW_PRECISION = ("float16", "bfloat16")
KINDS = ("grads", "params", "buffers")


def factor(dtype: str) -> int:
    return LOW_PRECISION_FACTOR if dtype in LOW_PRECISION else FACTOR


def listed(items: Sequence[str], n: int, sep: str = ", ") -> str:
    """The first n items joined by sep, and how many more there are: how verify's messages name a
    list that may be long (modules, parameters, settings)."""
    more = f" and {len(items) - n} more" if len(items) > n else ""
    return sep.join(items[:n]) + more


def least_precise(dtypes: Iterable[str]) -> str:
    """The floating dtype with the largest eps among `dtypes` (float32 when none is known): the
    tolerance follows the coarsest rounding the training goes through."""
    known = [d for d in dtypes if d in EPS]
    return max(known, key=EPS.__getitem__) if known else "float32"


def rtol(dtype: str, step: int) -> float:
    return EPS.get(dtype, EPS["float32"]) * factor(dtype) * (1 + step)


def tolerance_text(dtype: str, world: int, steps: int) -> str:
    eps = EPS.get(dtype, EPS["float32"])
    return (
        f"{dtype}: |dist - ref| <= eps x 2^{factor(dtype).bit_length() - 1} x (1 + step) x max|ref| of that "
        "kind over the model (eps "
        f"{eps:.2e}; "
        f"{rtol(dtype, 0):.1e} at step 0, {rtol(dtype, max(steps - 1, 0)):.1e} at step {max(steps - 1, 0)}): "
        f"the all-reduce adds {world} partial sums in another order than one process's reduction "
        f"over the whole batch"
    )


@dataclass
class Divergence:
    step: int
    kind: str  # grads | params | buffers | output
    name: str
    abs_diff: float
    rel_diff: float
    detail: Optional[Mapping[str, Any]] = None  # where the largest difference is, both values there


@dataclass
class Comparison:
    max_abs: float = 0.0
    max_rel: float = 0.0
    first: Optional[Divergence] = None
    missing: list[tuple[int, str, str]] = field(default_factory=list)  # (step, kind, name) absent on one side
    worst: dict[tuple[int, str], Divergence] = field(default_factory=dict)

    @property
    def equivalent(self) -> bool:
        return self.first is None

    def add(self, dv: Divergence, tol: float) -> None:
        """One compared tensor: the maxima grow; over the tolerance it may be the first divergence
        and the worst of its step and kind."""
        self.max_abs, self.max_rel = max(self.max_abs, dv.abs_diff), max(self.max_rel, dv.rel_diff)
        if dv.rel_diff > tol:
            if self.first is None:
                self.first = dv
            w = self.worst.get((dv.step, dv.kind))
            if w is None or dv.rel_diff > w.rel_diff:
                self.worst[(dv.step, dv.kind)] = dv


def in_model_order(order: Sequence[str], *present: Iterable[str]) -> list[str]:
    """The names present on either side: model order first, then the others sorted."""
    names = set().union(*present)
    return [n for n in order if n in names] + sorted(names - set(order))


def diff(a: Sequence[float], b: Sequence[float], scale: float = 0.0) -> tuple[float, float]:
    """(max abs difference, that over max(scale, max|b|))."""
    if len(a) != len(b):
        return float("inf"), float("inf")
    if not b:
        return 0.0, 0.0
    d = max(abs(x - y) for x, y in zip(a, b))
    scale = max(scale, max(abs(y) for y in b))
    return d, (d / scale if scale > 0 else (0.0 if d == 0 else float("inf")))


def magnitude(tensors: Mapping[str, Sequence[float]]) -> float:
    return max((abs(v) for t in tensors.values() for v in t), default=0.0)


def compare(
    ref_steps: Sequence[Mapping[str, Any]],
    dist_steps: Sequence[Mapping[str, Any]],
    order: Iterable[str],
    dtype: str,
    kinds: Sequence[str] = KINDS,
) -> Comparison:
    """Walk the steps in order, gradients before parameters before buffers, names in model
    order; the first tensor over the tolerance is the first divergence."""
    order = list(order)
    out = Comparison()
    for step, (ref, dist) in enumerate(zip(ref_steps, dist_steps)):
        tol = rtol(dtype, step)
        for kind in kinds:
            r, d = ref.get(kind) or {}, dist.get(kind) or {}
            scale = magnitude(r)
            for name in in_model_order(order, r, d):
                if name not in r or name not in d:
                    out.missing.append((step, kind, name))
                    if out.first is None:
                        out.first = Divergence(step, kind, name, float("inf"), float("inf"))
                    continue
                a, rel = diff(d[name], r[name], scale)
                if a == float("inf"):
                    out.missing.append((step, kind, name))
                out.add(Divergence(step, kind, name, a, rel), tol)
    return out


def compare_recorded(
    ref_steps: Sequence[Mapping[str, Any]],
    dist_steps: Sequence[Mapping[str, Any]],
    order: Iterable[str],
    dtype: str,
) -> Comparison:
    """`compare` over what a data-parallel rank 0 recorded: per step, kind and tensor the largest
    difference from the reference's (records.TensorDiff), against the reference's scale of that
    kind; the same walk, the same tolerance, no values in this process."""
    order = list(order)
    out = Comparison()
    for step, (ref, dist) in enumerate(zip(ref_steps, dist_steps)):
        tol = rtol(dtype, step)
        for kind in KINDS:
            names_ref = set(ref.get("names", {}).get(kind, []))
            d = dist.get("diffs", {}).get(kind, {})
            scale = ref.get("scale", {}).get(kind, 0.0)
            for name in in_model_order(order, names_ref, d):
                td = d.get(name)
                a = float(td["abs"]) if td is not None and name in names_ref else float("inf")
                if a == float("inf"):
                    out.missing.append((step, kind, name))
                    rel = float("inf")
                else:
                    rel = a / scale if scale > 0 else (0.0 if a == 0 else float("inf"))
                out.add(Divergence(step, kind, name, a, rel, td), tol)
    return out


def grad_ratio(ref: Mapping[str, Sequence[float]], dist: Mapping[str, Sequence[float]]) -> Optional[float]:
    """The least-squares factor k with ref ~= k x dist over every gradient both have."""
    num = den = 0.0
    for name, r in ref.items():
        d = dist.get(name)
        if d is None or len(d) != len(r):
            continue
        num += sum(x * y for x, y in zip(r, d))
        den += sum(y * y for y in d)
    return num / den if den > 0 else None


def close(a: Sequence[float], b: Sequence[float], dtype: str, step: int = 0) -> bool:
    return diff(a, b)[1] <= rtol(dtype, step)


def finite(x: float) -> Optional[float]:
    return x if x == x and abs(x) != float("inf") else None
