"""`--largest-model`: the biggest model of a family shape each layout can train on the given
GPUs (the ZeRO paper's Table 2 question). The family is the LLaMA-style shape of
pgdoctor.plan.model.shape_from_params (the nearest well-known shape, the count kept exact), or
the user's --layers/--hidden/--heads; the count is bisected on a log scale per layout.

With activations and overheads negligible (one token, no overhead) it reproduces the ZeRO
paper's memory analysis for 32 GB V100s with mixed-precision Adam: on 64 GPUs plain DP 2B,
ZeRO-1 7.6B, ZeRO-2 14.4B, ZeRO-3 128B (Rajbhandari et al. 2020, Table 2, left).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

from pgdoctor.plan.layouts import PlanInput, evaluate
from pgdoctor.plan.model import check_divisible, shape_from_params


@dataclass(frozen=True)
class Largest:
    dp: int
    tp: int
    pp: int
    zero: int
    params: int  # 0: not even the smallest probe fits

    def to_json(self) -> dict[str, object]:
        return dict(self.__dict__)


def _fits(
    inp: PlanInput, overrides: dict[str, Any], params: int, dp: int, tp: int, pp: int, zero: int
) -> bool:
    try:
        shape = shape_from_params(params, **dict(overrides))
    except ValueError:
        return False
    if check_divisible(shape, tp, pp):
        return False
    trial = replace(inp, memory=replace(inp.memory, shape=shape))
    lay = evaluate(trial, dp, tp, pp, zero)
    return lay.fits


def largest_models(
    inp: PlanInput,
    layouts: list[tuple[int, int, int, int]],
    overrides: Optional[dict[str, Any]] = None,
    lo: int = 10**7,
    hi: int = 10**14,
    rel: float = 0.001,
) -> list[Largest]:
    """The largest parameter count (to `rel`) that fits for each (dp, tp, pp, zero), largest first."""
    overrides = overrides or {}
    out = []
    for dp, tp, pp, zero in layouts:
        if not _fits(inp, overrides, lo, dp, tp, pp, zero):
            out.append(Largest(dp, tp, pp, zero, 0))
            continue
        a, b = lo, hi
        while b / a > 1 + rel:
            mid = int((a * b) ** 0.5)
            if _fits(inp, overrides, mid, dp, tp, pp, zero):
                a = mid
            else:
                b = mid
        out.append(Largest(dp, tp, pp, zero, a))
    return sorted(out, key=lambda r: -r.params)
