"""Run tests/helpers/fr_workload.py as a real gloo job and collect its dumps and per-rank output."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from pgdoctor.probes.processes import ChildOutcome, run_children
from tests.helpers.hang_lab import quiet_port

WORKLOAD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fr_workload.py")


@dataclass
class FrRun:
    out: str
    outcomes: list[ChildOutcome]

    def log_text(self, rank: int) -> str:
        o = self.outcomes[rank]
        return o.stdout + o.stderr


def rank_envs(world: int, buffer_size: int, pg_timeout_s: float, **extra: str) -> list[dict[str, str]]:
    """The environments of `world` local gloo ranks with the flight recorder on (a free port of their
    own, nothing of an outer launcher's TORCH_/NCCL_/MASTER_ settings)."""
    port = quiet_port()
    envs = []
    for r in range(world):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_", "NCCL_", "MASTER_"))}
        env.update(
            RANK=str(r),
            WORLD_SIZE=str(world),
            LOCAL_RANK=str(r),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
            TORCH_FR_BUFFER_SIZE=str(buffer_size),
            FR_TIMEOUT_S=f"{pg_timeout_s:g}",
            OMP_NUM_THREADS="1",
            **extra,
        )
        envs.append(env)
    return envs


def run(
    scenario: str,
    out: str,
    world: int = 3,
    timeout_s: float = 60.0,
    buffer_size: int = 200,
    pg_timeout_s: float = 3.0,
    status_out: str = "",
) -> FrRun:
    """status_out: a directory for each rank's header-only dumps too (includeCollectives=False)."""
    envs = rank_envs(world, buffer_size, pg_timeout_s, FR_STATUS_DIR=status_out)
    outcomes = run_children([[sys.executable, WORKLOAD, scenario, out]] * world, envs, timeout_s)
    return FrRun(out, outcomes)
