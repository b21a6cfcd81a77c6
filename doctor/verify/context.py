"""What the data-parallel detectors (detectors.py, loss_weights.py) read: the run's records, rank 0's
comparison against the reference, the buffers' drift across ranks, and the facts every finding
carries; and the Cause a detector answers with."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Optional

from pgdoctor.model import Finding
from pgdoctor.verify.compare import Comparison, compare_recorded, rtol, tolerance_text
from pgdoctor.verify.diagnosis import _first, where
from pgdoctor.verify.launch import Run
from pgdoctor.verify.records import ErrorRecord, RankRecord, Setup


@dataclass
class Cause:
    finding: Finding
    name: Optional[str]  # verify.cause
    first: Optional[dict[str, Any]] = None


@dataclass
class Context:
    run: Run
    world: int
    steps: int
    strategy: str
    eval_mode: bool
    ref: RankRecord = field(init=False)
    ranks: list[RankRecord] = field(init=False)
    setup: Setup = field(init=False)

    def __post_init__(self) -> None:
        self.ref = self.run.reference or {}  # type: ignore[assignment]
        self.ranks = list(self.run.ranks)  # type: ignore[arg-type]
        self.setup = self.ref.get("setup") or next(
            (r["setup"] for r in self.ranks if r.get("setup")), Setup()
        )

    @property
    def dtype(self) -> str:
        return self.setup.get("dtype", "float32")

    @cached_property
    def order(self) -> list[str]:
        """Model order: the reference's parameters and buffers, then any that only some ranks
        have, in their order."""
        out = self.setup.get("params", []) + self.setup.get("buffers", [])
        seen = set(out)
        for res in self.ranks:
            for n in res.get("setup", {}).get("params", []) + res.get("setup", {}).get("buffers", []):
                if n not in seen:
                    seen.add(n)
                    out.append(n)
        return out

    @property
    def tolerance(self) -> str:
        return tolerance_text(self.dtype, self.world, self.steps)

    @cached_property
    def errors(self) -> dict[int, ErrorRecord]:
        return {r: res["error"] for r, res in enumerate(self.ranks) if res.get("error")}

    @cached_property
    def silent(self) -> list[int]:
        return [
            r
            for r, res in enumerate(self.ranks)
            if not res or (len(res.get("steps", [])) < self.steps and r not in self.errors)
        ]

    @property
    def finished(self) -> bool:
        return bool(self.ranks) and not self.errors and not self.silent

    @cached_property
    def comparison(self) -> Optional[Comparison]:
        if not self.finished or not self.ref.get("steps"):
            return None
        return compare_recorded(self.ref["steps"], self.ranks[0]["steps"], self.order, self.dtype)

    @cached_property
    def drift(self) -> list[tuple[int, str, int]]:
        """(step, buffer, rank) where a rank's buffer is not within tolerance of rank 0's."""
        out: list[tuple[int, str, int]] = []
        if not self.finished:
            return out
        for r, res in enumerate(self.ranks[1:], start=1):
            for rec in res.get("steps", []):
                for n, d in rec.get("peer_diffs", {}).items():
                    ref_max = d.get("ref_max", 0.0)
                    rel = d["abs"] / ref_max if ref_max > 0 else (0.0 if d["abs"] == 0 else math.inf)
                    if rel > rtol(self.dtype, rec["step"]):
                        out.append((rec["step"], n, r))
        return sorted(out)

    @property
    def diverged(self) -> bool:
        cmp = self.comparison
        return (cmp is not None and not cmp.equivalent) or bool(self.drift)

    def rank_order(self, names: Sequence[str]) -> list[str]:
        order = self.order
        return sorted(names, key=lambda n: (order.index(n) if n in order else len(order), n))

    def facts(self, cmp: Optional[Comparison] = None, **more: Any) -> dict[str, Any]:
        out: dict[str, Any] = {
            "world_size": self.world,
            "steps": self.steps,
            "tolerance": self.tolerance,
            "strategy": self.strategy,
        }
        if cmp is not None and cmp.first is not None:
            out.update(
                first_divergent_param=cmp.first.name,
                first_divergent_step=cmp.first.step,
                first_divergent_kind=cmp.first.kind,
            )
            if cmp.first.detail and "at" in cmp.first.detail:
                out["first_divergent_detail"] = _first(cmp.first.name, cmp.first.step, cmp.first.detail)[
                    "detail"
                ]
        if cmp is not None:
            out.update(max_abs_diff=cmp.max_abs, max_rel_diff=cmp.max_rel)
        return out | more

    def div(self) -> str:
        return where(self.comparison) if self.comparison is not None and self.comparison.first else ""

    def first(self) -> Optional[dict[str, Any]]:
        f = self.comparison.first if self.comparison is not None else None
        return _first(f.name, f.step, f.detail) if f else None


def _ranks(rs: Sequence[int]) -> str:
    return ", ".join(map(str, rs))
