"""Start the ranks of a lab run on this host and gather what they left: each rank's exit,
stdout and stderr, its result file, its flight-recorder dump and its trace events."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from pgdoctor.lab.spec import LabSpec
from pgdoctor.lab.worker import fr_dir, result_path
from pgdoctor.probes.processes import ChildOutcome, WaitPolicy, run_children, with_free_port

FR_BUFFER_ENTRIES = 2000
# After the first rank fails, how long the others get to fail on their own and write what
# they know (their timeout error, their flight-recorder dump) before they are killed.
GRACE_S = 3.0


@dataclass(frozen=True)
class LabRun:
    spec: LabSpec
    outcomes: tuple[ChildOutcome, ...]
    results: tuple[dict[str, Any], ...]  # rank<N>.json of each rank ({} when it wrote none)
    wall_s: float

    @property
    def fr_dir(self) -> Optional[str]:
        d = fr_dir(self.spec.run_dir)
        return str(d) if d.is_dir() and any(d.iterdir()) else None

    def sources(self) -> list[tuple[str, str]]:
        """Each rank's output as a (name, text) log source, stderr first. A kept run names the
        files launch() wrote (what a finding cites exists); otherwise a bare name."""
        out = []
        for o in self.outcomes:
            for kind, text in (("stderr", o.stderr), ("stdout", o.stdout)):
                if text:
                    name = f"rank{o.index}.{kind}"
                    out.append((os.path.join(self.spec.run_dir, name) if self.spec.keep else name, text))
        return out


def rank_env(base: Mapping[str, str], rank: int, world: int, port: int, spec: LabSpec) -> dict[str, str]:
    env = dict(base)
    env.update(
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(world),
        LOCAL_WORLD_SIZE=str(world),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        OMP_NUM_THREADS="1",
        # Flight recorder on, with torch's dump-file naming inside the run directory.
        TORCH_FR_BUFFER_SIZE=str(FR_BUFFER_ENTRIES),
        TORCH_FR_DUMP_TEMP_FILE=str(fr_dir(spec.run_dir) / "nccl_trace_rank_"),
        PYTHONUNBUFFERED="1",
    )
    # Fewer malloc arenas: under the oom fault's address-space cap, each new arena would
    # reserve 64 MiB of address space in whatever thread touched malloc first.
    env.setdefault("MALLOC_ARENA_MAX", "2")
    env.pop("PGDOCTOR_TRACE_DIR", None)  # the worker enables tracing from the spec
    # No live socket for `pgdoctor hang` in lab ranks (instrument() would start one): the lab
    # kills its failing ranks, and a SIGKILLed rank leaves its socket file behind.
    env["PGDOCTOR_LIVE"] = "0"
    return env


def launch(spec: LabSpec, timeout_s: float = 60.0, extra_env: Optional[Mapping[str, str]] = None) -> LabRun:
    Path(spec.run_dir).mkdir(parents=True, exist_ok=True)
    if spec.trace_dir:
        Path(spec.trace_dir).mkdir(parents=True, exist_ok=True)
    base = dict(os.environ)
    base.update(extra_env or {})
    argv = [sys.executable, "-m", "pgdoctor.lab.worker", spec.to_json()]

    def spawn(port: int) -> list[ChildOutcome]:
        for r in range(spec.nproc):  # a second spawn (the port was taken) reads none of the first's
            result_path(spec.run_dir, r).unlink(missing_ok=True)
        envs = [rank_env(base, r, spec.nproc, port, spec) for r in range(spec.nproc)]
        return run_children([argv] * spec.nproc, envs, WaitPolicy(timeout_s, grace_s=GRACE_S))

    import time

    t0 = time.monotonic()
    outcomes = with_free_port(spawn)
    wall = time.monotonic() - t0
    results = []
    for r in range(spec.nproc):
        try:
            results.append(json.loads(result_path(spec.run_dir, r).read_text(encoding="utf-8")))
        except (OSError, ValueError):
            results.append({})
    run = LabRun(spec, tuple(outcomes), tuple(results), wall)
    if spec.keep:
        for name, text in run.sources():
            Path(name).write_text(text, encoding="utf-8")
    return run
