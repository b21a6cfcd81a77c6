"""What a diagnosis of a verify run holds (Diagnosis), shared by the data-parallel detectors
(detectors.py) and the pp / tp comparison (split.py): the findings, the cause, the first
divergent tensor, the comparison and the losses per step."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from pgdoctor.model import Finding
from pgdoctor.verify.compare import Comparison
from pgdoctor.verify.records import RankRecord


@dataclass
class Diagnosis:
    findings: list[Finding] = field(default_factory=list)
    cause: Optional[str] = None
    first: Optional[dict[str, Any]] = None
    comparison: Optional[Comparison] = None
    tolerance: str = ""
    rerun_eval: bool = False  # nothing explains the divergence: try without randomness
    losses: dict[str, list[float]] = field(default_factory=dict)  # reference, distributed (mean over ranks)
    peak_rss_mib: dict[str, float] = field(default_factory=dict)  # per rank, from the records
    dropout: Optional[list[str]] = None  # the model's dropout modules (None: not known)


def losses(ref: RankRecord, ranks: Sequence[RankRecord]) -> dict[str, list[float]]:
    dist = [[rec["loss"] for rec in r.get("steps", []) if "loss" in rec] for r in ranks]
    dist = [d for d in dist if d]
    per_step = [sum(v) / len(v) for v in zip(*dist)] if dist else []
    return {"reference": [rec["loss"] for rec in ref.get("steps", [])], "distributed": per_step}


def _first(name: str, step: int, detail: Optional[Any] = None) -> dict[str, Any]:
    out: dict[str, Any] = {"param": name, "step": step}
    if detail and "at" in detail:
        out["detail"] = {k: detail[k] for k in ("at", "ref", "dist", "over") if k in detail}
    return out


def where(cmp: Comparison) -> str:
    f = cmp.first
    if f is None:
        return ""
    what = {
        "grads": "gradient",
        "params": "parameter after the optimizer step",
        "buffers": "buffer",
        "output": "output",
    }.get(f.kind, f.kind)
    if f.abs_diff == float("inf"):
        return f"first divergent: {f.name} ({what}) at step {f.step}: present on one side only"
    return (
        f"first divergent: {f.name} ({what}) at step {f.step}: max abs diff {f.abs_diff:.3g}, "
        f"max rel diff {f.rel_diff:.3g}"
    )


def _short(text: str, n: int = 400) -> str:
    first = " ".join(text.split())
    return first if len(first) <= n else first[: n - 3] + "..."
