"""Start the N ranks of one verify or scaling run, each a `python -m pgdoctor.verify.worker`
child under a deadline (rank 0 first runs the one-process reference, before it joins the process
group), and read back their JSON results.
Every child runs in its own session and is killed on every exit path (probes.processes)."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from pgdoctor.probes.processes import ChildOutcome, WaitPolicy, run_children, with_free_port
from pgdoctor.verify.entry import EntryError, InternalError
from pgdoctor.verify.records import RankRecord
from pgdoctor.verify.rundir import run_dir
from pgdoctor.verify.worker import EXIT_ENTRY_ERROR, EXIT_INTERNAL_ERROR  # the worker's exit statuses

# After the first rank fails, how long the others get to fail on their own and say so.
GRACE_S = 5.0


@dataclass(frozen=True)
class Run:
    reference: Optional[RankRecord]
    ranks: tuple[RankRecord, ...]  # {} for a rank that wrote nothing
    outcomes: tuple[ChildOutcome, ...]  # one per rank; rank 0's process also ran the reference
    wall_s: float

    def rank_outcome(self, rank: int) -> ChildOutcome:
        return self.outcomes[rank]


def rank_env(base: Mapping[str, str], rank: int, world: int, port: int) -> dict[str, str]:
    env = dict(base)
    env.update(
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(world),
        LOCAL_WORLD_SIZE=str(world),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        OMP_NUM_THREADS="1",
        PYTHONUNBUFFERED="1",
    )
    # Local ranks talk over loopback only (gloo's pairs bind the interface's address); a user's
    # choice of interface still wins.
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    env.pop("PGDOCTOR_TRACE_DIR", None)
    return env


def launch(
    entry: str,
    role: str,
    nproc: int,
    cfg: Mapping[str, Any],
    timeout_s: float,
    reference: bool = True,
    port: Optional[int] = None,
) -> Run:
    """Run the reference (when asked) and `nproc` ranks of `role` at once; raise EntryError when
    the user's entry raised or broke the contract in any of them. `port`: the MASTER_PORT tried
    first (default: one from free_port); a port a rank finds taken is replaced once."""
    with run_dir() as out_path:
        out_dir = str(out_path)
        # Rank 0 runs the reference first, before it joins the process group (worker.main).
        base = {"entry": entry, "out_dir": out_dir, **cfg, "reference_first": reference}
        paths = []
        for name, who in (("reference", "reference"), ("ranks", role)):
            p = Path(out_dir) / f"{name}.config.json"
            p.write_text(json.dumps({**base, "role": who}), encoding="utf-8")
            paths.append(str(p))
        env = dict(os.environ)
        argvs = [[sys.executable, "-m", "pgdoctor.verify.worker", paths[1]] for _ in range(nproc)]
        records = [Path(out_dir) / "reference.json", *(Path(out_dir) / f"rank{r}.json" for r in range(nproc))]

        def spawn(port: int) -> list[ChildOutcome]:
            for p in records:  # a second spawn (the port was taken) reads none of the first's
                p.unlink(missing_ok=True)
            # A rank whose entry raised (worker.EXIT_ENTRY_ERROR) ends the run: the EntryError is
            # all there is to report, and its peers wait for it in the process group's rendezvous.
            return run_children(
                argvs,
                [rank_env(env, r, nproc, port) for r in range(nproc)],
                WaitPolicy(timeout_s, grace_s=GRACE_S, stop_on=(EXIT_ENTRY_ERROR, EXIT_INTERNAL_ERROR)),
                guarded=True,  # what the entry's build() starts in a session of its own dies with the rank
            )

        t0 = time.monotonic()
        outcomes = with_free_port(spawn, port)
        wall = time.monotonic() - t0
        ref = _read(Path(out_dir) / "reference.json") if reference else None
        ranks = tuple(_read(Path(out_dir) / f"rank{r}.json") for r in range(nproc))
    entry_error = first_error([ref, *ranks])
    if entry_error is not None:
        raise entry_error
    hung = reference_hung(ref, outcomes[0]) if reference else None
    if hung is not None:
        raise hung
    return Run(ref, ranks, tuple(outcomes), wall)


def first_error(records: Sequence[Optional[RankRecord]]) -> Optional[EntryError]:
    """The records' first entry error, or None; pgdoctor's own exception in any worker (a record's
    `internal_error`) is raised first, as InternalError: a bug, exit 4, whatever the entry did."""
    for res in records:
        if res and "internal_error" in res:
            err = res["internal_error"]
            raise InternalError(f"verify: {err['message']}", err.get("traceback", ""))
    for res in records:
        if res and "entry_error" in res:
            entry = res["entry_error"]
            return EntryError(entry["message"], entry.get("traceback", ""))
    return None


def reference_hung(ref: Optional[RankRecord], rank0: ChildOutcome) -> Optional[EntryError]:
    """The one-process reference (rank 0's process, before any process group) that the deadline
    killed before it wrote its record: the entry's own code hangs or is slow with no
    distribution involved, so nothing was compared and it is the entry's error, not a verdict."""
    if ref or not rank0.timed_out:
        return None
    last = tail(rank0.stderr, 3).replace("\n", " | ")
    return EntryError(
        f"the one-process reference did not finish within --timeout ({rank0.duration_s:.0f} s): the entry's "
        "own code (build(), data(), the model's forward or backward; no process group involved) hangs, "
        "or needs a longer --timeout" + (f"; its last output: {last}" if last else "")
    )


def _read(path: Path) -> RankRecord:
    """A process's record (records.RankRecord), {} when it wrote none."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}  # type: ignore[return-value]


def tail(text: str, lines: int = 8) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])
