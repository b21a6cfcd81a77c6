"""A verify run's outcome: the diagnosis of one launch (data parallel or split), the eval-mode
re-run folded in (VER110), and the VerifyResult the command, `pgdoctor.verify(...)` and
`verify_many` return."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from pgdoctor.verify.compare import listed


@dataclass
class VerifyResult:
    equivalent: bool
    world_size: int
    steps: int
    strategy: str
    max_abs_diff: float
    max_rel_diff: float
    first_divergent: Optional[dict[str, Any]]
    cause: Optional[str]
    tolerance: str
    findings: list[Any] = field(default_factory=list)
    eval_mode_rerun: bool = False
    wall_s: float = 0.0
    loss: dict[str, list[float]] = field(default_factory=dict)  # per step: reference, distributed
    peak_rss_mib: dict[str, float] = field(default_factory=dict)  # per rank (rank 0's includes the reference)

    def to_json(self) -> dict[str, Any]:
        return {
            "equivalent": self.equivalent,
            "world_size": self.world_size,
            "steps": self.steps,
            "max_abs_diff": self.max_abs_diff,
            "max_rel_diff": self.max_rel_diff,
            "first_divergent": self.first_divergent,
            "cause": self.cause,
            "strategy": self.strategy,
            "tolerance": self.tolerance,
            "eval_mode_rerun": self.eval_mode_rerun,
            "loss": self.loss,
            "wall_s": round(self.wall_s, 3),
            "peak_rss_mib": self.peak_rss_mib,
        }

    def __bool__(self) -> bool:
        return self.equivalent


def _num(x: float) -> float:
    return x if x == x and abs(x) != float("inf") else -1.0


STRATEGIES = ("ddp", "fsdp", "pp", "tp")


def check_args(strategy: str, nproc: int, steps: int) -> None:
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
    if nproc < 1 or steps < 1:
        raise ValueError("nproc and steps must be at least 1")


def config(nproc: int, steps: int, strategy: str, backend: str, pg_timeout_s: float) -> dict[str, Any]:
    """What the ranks of one run are told (worker.run_role)."""
    return {
        "steps": steps,
        "backend": backend,
        "pg_timeout_s": pg_timeout_s,
        "strategy": strategy,
        "data_world": nproc if strategy in ("ddp", "fsdp") else 1,
    }


def diagnose(run: Any, nproc: int, steps: int, strategy: str, eval_mode: bool = False) -> Any:
    """The Diagnosis of one launch; `.rerun_eval` asks for the same run in eval mode."""
    if strategy in ("pp", "tp"):
        from pgdoctor.verify.split import diagnose_split

        dg = diagnose_split(run, nproc, steps, strategy)
        dg.peak_rss_mib = peak_rss(run)
        return dg
    from pgdoctor.verify.detectors import diagnose_data_parallel

    dg = diagnose_data_parallel(run, nproc, steps, strategy, eval_mode=eval_mode)
    dg.peak_rss_mib = peak_rss(run)
    return dg


def randomness(dg: Any) -> str:
    """What draws random numbers in train mode only: the dropout modules when the model has any;
    else the forward's own draws (torch.randn noise under `if self.training`), not dropout."""
    names = dg.dropout
    if names:
        return f"each rank draws its own dropout masks: {listed(names, 4)}"
    if names is None:
        return "each rank draws its own dropout masks"
    return (
        "the model holds no dropout module: its forward draws random numbers in train mode, "
        "e.g. torch.randn noise, and each rank draws its own"
    )


def peak_rss(run: Any) -> dict[str, float]:
    return {
        f"rank{r}": round(float(res["peak_rss_mib"]), 1)
        for r, res in enumerate(run.ranks)
        if res and "peak_rss_mib" in res
    }


def assemble(dg: Any, eval_dg: Any, nproc: int, steps: int, strategy: str, wall_s: float) -> VerifyResult:
    """The result of a diagnosis, with `eval_dg` the eval-mode re-run's when `dg.rerun_eval`."""
    from pgdoctor.model import Severity

    rerun = eval_dg is not None
    rss = dict(dg.peak_rss_mib)
    if eval_dg is not None:
        rss = {k: max(v, eval_dg.peak_rss_mib.get(k, 0.0)) for k, v in rss.items()}
    if eval_dg is not None:
        from pgdoctor.checks.codes import verify as codes
        from pgdoctor.verify.diagnosis import where

        first_cmp = dg.comparison
        dg = eval_dg
        if not dg.findings and first_cmp is not None:
            dg.findings.append(
                codes.NONDETERMINISTIC.finding(
                    f"in train mode the runs differ ({where(first_cmp)}); re-run in eval mode (dropout off) "
                    f"they are equivalent: the difference is the model's randomness ({randomness(dg)}), not "
                    "a bug; the comparison above was made in eval mode",
                    facts={
                        "train_mode_max_abs_diff": first_cmp.max_abs,
                        "train_mode_max_rel_diff": first_cmp.max_rel,
                        "world_size": nproc,
                        "steps": steps,
                        "tolerance": dg.tolerance,
                    },
                )
            )
            dg.cause = "nondeterminism"
    cmp = dg.comparison
    failed = any(f.severity.rank >= Severity.FAIL.rank for f in dg.findings)
    first = dg.first
    if first is None and failed and cmp is not None and cmp.first is not None:
        first = {"param": cmp.first.name, "step": cmp.first.step}
    return VerifyResult(
        equivalent=not failed,
        world_size=nproc,
        steps=steps,
        strategy=strategy,
        max_abs_diff=_num(cmp.max_abs) if cmp else 0.0,
        max_rel_diff=_num(cmp.max_rel) if cmp else 0.0,
        first_divergent=first if failed else None,
        cause=dg.cause,
        tolerance=dg.tolerance,
        findings=list(dg.findings),
        eval_mode_rerun=rerun,
        wall_s=wall_s,
        loss=dg.losses,
        peak_rss_mib=rss,
    )
