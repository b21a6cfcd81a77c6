"""`pgdoctor verify`: is the distributed run the same training as one process? The reference,
the ranks (`worker.py`), the comparison (`compare.py`), the causes (`diagnosis.py`,
`split.py`), and `pgdoctor bench scaling` (`scaling.py`).

The package is callable: `pgdoctor.verify(build, nproc=2)` runs the check on a module-level
function (or an entry string) and returns a VerifyResult.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from pgdoctor.verify.result import STRATEGIES as STRATEGIES
from pgdoctor.verify.result import VerifyResult

BACKENDS = ("gloo", "nccl")


def verify(
    build: Any,
    nproc: int = 2,
    steps: int = 3,
    strategy: str = "ddp",
    backend: str = "gloo",
    timeout_s: float = 120.0,
    pg_timeout_s: float = 60.0,
) -> VerifyResult:
    """Train `build` (a module-level function or "file.py:NAME" / "pkg.mod:NAME") in one process
    and in `nproc` ranks for `steps` steps, compare, and name the cause of a divergence.
    Raises pgdoctor.verify.entry.EntryError when the entry cannot be used or raises."""
    import time

    from pgdoctor.verify.entry import check, entry_of
    from pgdoctor.verify.launch import launch
    from pgdoctor.verify.result import assemble, check_args, config, diagnose

    check_args(strategy, nproc, steps)
    entry = check(entry_of(build))
    t0 = time.monotonic()
    cfg = config(nproc, steps, strategy, backend, pg_timeout_s)
    dg = diagnose(launch(entry, strategy, nproc, cfg, timeout_s), nproc, steps, strategy)
    eval_dg = None
    if dg.rerun_eval:
        run = launch(entry, strategy, nproc, {**cfg, "eval": True}, timeout_s)
        eval_dg = diagnose(run, nproc, steps, strategy, eval_mode=True)
    return assemble(dg, eval_dg, nproc, steps, strategy, time.monotonic() - t0)


def verify_many(
    builds: Any,
    nproc: int = 2,
    steps: int = 3,
    strategy: str = "ddp",
    backend: str = "gloo",
    timeout_s: float = 120.0,
    pg_timeout_s: float = 60.0,
) -> list[Any]:
    """`verify` of several entries in one spawn of `nproc` ranks (pgdoctor.verify.batch): one
    VerifyResult, or the EntryError it raised, per entry, each as `verify` alone gives it. An
    item is an entry (as for `verify`) or (entry, strategy)."""
    from pgdoctor.verify.batch import verify_many as run

    return run(
        builds,
        nproc=nproc,
        steps=steps,
        strategy=strategy,
        backend=backend,
        timeout_s=timeout_s,
        pg_timeout_s=pg_timeout_s,
    )


class _CallableModule(types.ModuleType):
    """`pgdoctor.verify(build, nproc=2)`: the package is the function."""

    def __call__(self, build: Any, nproc: int = 2, **kwargs: Any) -> VerifyResult:
        return verify(build, nproc=nproc, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
