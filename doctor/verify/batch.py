"""`verify_many`: several verify runs in one spawn of N ranks, each the run `verify` alone gives.

Importing torch in every rank is most of a small run's time; a batch pays it once. The ranks
(worker.run_batch) do the runs one after the other, each with its own out_dir, reference, seed and
a fresh process group (the reference of an entry run again with another strategy and the same
settings is the first run's, linked: it is a function of them). The deadline restarts for every
run that all ranks finish (`timeout_s` per run). The first run that does not finish cleanly on
every rank (a rank raised, crashed or hung) ends the batch there, as it ends a single run: the
failing rank leaves (worker.run_batch), the others get the grace a single run gives them, then are
killed. That run is reported from its own records and from each rank's output since the run began;
the runs before it are kept, and the runs after it go to a new batch. Entries that need the
eval-mode re-run (VER110) get it in a second batch.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Union

from pgdoctor.probes.processes import ChildOutcome, WaitPolicy, run_children, with_free_port
from pgdoctor.verify.entry import EntryError, check, entry_of
from pgdoctor.verify.launch import (
    GRACE_S,
    Run,
    _read,
    first_error,
    rank_env,
    reference_hung,
)
from pgdoctor.verify.records import RankRecord
from pgdoctor.verify.result import VerifyResult, assemble, check_args, config, diagnose
from pgdoctor.verify.rundir import run_dir
from pgdoctor.verify.worker import EXIT_ENTRY_ERROR, EXIT_INTERNAL_ERROR

Outcome = Union[Run, EntryError]


def _clean(res: RankRecord) -> bool:
    return bool(res) and "error" not in res and "entry_error" not in res


def _run_of(out: Path, nproc: int, outcomes: Sequence[ChildOutcome], wall: float) -> Outcome:
    """One run's records, as launch() reads them."""
    ref = _read(out / "reference.json")
    ranks = tuple(_read(out / f"rank{r}.json") for r in range(nproc))
    entry_error = first_error([ref, *ranks])  # a bug of pgdoctor raises: it ends the whole batch, exit 4
    if entry_error is not None:
        return entry_error
    hung = reference_hung(ref, outcomes[0])  # every batch run's reference goes first
    return hung if hung is not None else Run(ref, ranks, tuple(outcomes), wall)


def _slice(o: ChildOutcome, index: int) -> ChildOutcome:
    """The child's output during run `index` (what a single run of it would have printed)."""
    err = o.stderr
    at = err.find(f"pgdoctor-batch: run {index}: ")
    if at >= 0:
        err = err[err.find("\n", at) + 1 :]
    nxt = err.find(f"pgdoctor-batch: run {index + 1}: ")
    return replace(o, stderr=err if nxt < 0 else err[:nxt])


def launch_batch(items: Sequence[dict[str, Any]], nproc: int, timeout_s: float) -> list[Outcome]:
    """Run every item (an entry, its role and its cfg, as launch() takes them) in N ranks; one
    Run (or the EntryError the entry raised) per item, in order."""
    results: list[Outcome] = []
    todo = list(items)
    while todo:
        got = _one_batch(todo, nproc, timeout_s)
        results.extend(got)
        todo = todo[len(got) :]
    return results


def _one_batch(items: Sequence[dict[str, Any]], nproc: int, timeout_s: float) -> list[Outcome]:
    """The runs of one spawn up to the first that failed, that one included (at least one)."""
    with run_dir("batch") as out_dir:
        batch = []
        for i, item in enumerate(items):
            (out_dir / str(i)).mkdir()
            batch.append(
                {
                    **item["cfg"],
                    "entry": item["entry"],
                    "role": item["role"],
                    "out_dir": str(out_dir / str(i)),
                    "reference_first": True,
                }
            )
        cfg_path = out_dir / "batch.config.json"
        pg_timeout = max(float(it["cfg"].get("pg_timeout_s", 30)) for it in items)
        cfg_path.write_text(json.dumps({"batch": batch, "pg_timeout_s": pg_timeout}), encoding="utf-8")
        argvs = [[sys.executable, "-m", "pgdoctor.verify.worker", str(cfg_path)] for _ in range(nproc)]
        names = ["reference.json", *(f"rank{r}.json" for r in range(nproc))]
        finished: list[float] = []
        t0 = time.monotonic()

        def progress() -> int:
            while len(finished) < len(items) and all(
                (out_dir / str(len(finished)) / n).exists() for n in names
            ):
                finished.append(time.monotonic())
            return len(finished)

        def spawn(port: int) -> list[ChildOutcome]:
            for i in range(len(items)):  # a second spawn (the port was taken) reads none of the first's
                for n in names:
                    (out_dir / str(i) / n).unlink(missing_ok=True)
            finished.clear()
            # timeout_s per run, restarted as each finishes; the whole batch at most one run's worth more.
            return run_children(
                argvs,
                [rank_env(dict(os.environ), r, nproc, port) for r in range(nproc)],
                WaitPolicy(
                    timeout_s,
                    grace_s=GRACE_S,
                    progress=progress,
                    stop_on=(EXIT_ENTRY_ERROR, EXIT_INTERNAL_ERROR),
                    hard_timeout_s=timeout_s * (len(items) + 1),
                ),
                guarded=True,  # what the entry's build() starts in a session of its own dies with the rank
            )

        outcomes = with_free_port(spawn)
        progress()  # the runs that finished after the last poll
        got: list[Outcome] = []
        start = t0
        for i in range(len(items)):
            d = out_dir / str(i)
            records = [_read(d / "reference.json"), *(_read(d / f"rank{r}.json") for r in range(nproc))]
            if not all(_clean(res) for res in records):
                got.append(_run_of(d, nproc, [_slice(o, i) for o in outcomes], time.monotonic() - start))
                break
            end = finished[i] if i < len(finished) else time.monotonic()
            got.append(_run_of(d, nproc, outcomes, end - start))
            start = end
        return got


def verify_many(
    builds: Sequence[Any],
    nproc: int = 2,
    steps: int = 3,
    strategy: str = "ddp",
    backend: str = "gloo",
    timeout_s: float = 120.0,
    pg_timeout_s: float = 60.0,
) -> list[Union[VerifyResult, EntryError]]:
    """pgdoctor.verify.verify_many: one VerifyResult (or the EntryError) per item, an item an
    entry or (entry, strategy)."""
    items: list[dict[str, Any]] = []
    out: list[Union[VerifyResult, EntryError, None]] = []
    for b in builds:
        build, strat = b if isinstance(b, tuple) else (b, strategy)
        check_args(strat, nproc, steps)
        try:
            entry = check(entry_of(build))
        except EntryError as exc:
            out.append(exc)
            continue
        out.append(None)
        items.append(
            {
                "entry": entry,
                "role": strat,
                "at": len(out) - 1,
                "cfg": config(nproc, steps, strat, backend, pg_timeout_s),
            }
        )
    runs = launch_batch(items, nproc, timeout_s)
    first = []
    for item, run in zip(items, runs):
        first.append(run if isinstance(run, EntryError) else diagnose(run, nproc, steps, item["role"]))
    again = [(item, dg) for item, dg in zip(items, first) if not isinstance(dg, EntryError) and dg.rerun_eval]
    evals = launch_batch([{**it, "cfg": {**it["cfg"], "eval": True}} for it, _ in again], nproc, timeout_s)
    eval_of = {id(dg): run for (_, dg), run in zip(again, evals)}
    for item, run, dg in zip(items, runs, first):
        if isinstance(dg, EntryError):
            out[item["at"]] = dg
            continue
        wall = run.wall_s if isinstance(run, Run) else 0.0
        eval_dg = None
        if id(dg) in eval_of:
            erun = eval_of[id(dg)]
            if isinstance(erun, EntryError):
                out[item["at"]] = erun
                continue
            eval_dg = diagnose(erun, nproc, steps, item["role"], eval_mode=True)
            wall += erun.wall_s
        out[item["at"]] = assemble(dg, eval_dg, nproc, steps, item["role"], wall)
    return [r for r in out if r is not None]
