"""Real torchrun jobs for the hang tests: started in their own session, waited for until every
rank is in place (each writes a ready file right before the call where it stays), and killed
with all their descendants when the test ends, however it ends."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from tests.conftest import child_pids
from tests.helpers.paths import ROOT


@dataclass
class Job:
    launcher: subprocess.Popen[bytes]
    ready_dir: Path
    log: Path

    @property
    def pid(self) -> int:
        return self.launcher.pid

    def rank_pids(self) -> dict[int, int]:
        return {int(p.name.split("-")[1]): int(p.read_text() or 0) for p in self.ready_dir.glob("ready-*")}

    def wait_ready(self, ranks: int, timeout_s: float = 60.0, settle_s: float = 0.5) -> dict[int, int]:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            got = {r: p for r, p in self.rank_pids().items() if p}
            if len(got) >= ranks:
                time.sleep(settle_s)  # from the ready file into the blocking call
                return got
            if self.launcher.poll() is not None:
                raise AssertionError(
                    f"the job ended ({self.launcher.returncode}): {self.log.read_text()[-3000:]}"
                )
            time.sleep(0.1)
        raise AssertionError(f"ranks not ready after {timeout_s} s: {self.log.read_text()[-3000:]}")


def torchrun_argv(
    scenario: str, args: Sequence[int] = (), nproc: int = 4, node: Optional[tuple[int, int, str]] = None
) -> list[str]:
    """`python -m torch.distributed.run --standalone` (or, with node=(node_rank, nnodes, endpoint),
    a c10d rendezvous on loopback) running tests/helpers/hang_job.py as a module
    (PYTHONPATH is the repository root)."""
    launch = (
        ["--standalone"]
        if node is None
        else [
            "--nnodes",
            str(node[1]),
            "--node-rank",
            str(node[0]),
            "--rdzv-backend",
            "c10d",
            "--rdzv-endpoint",
            node[2],
            "--rdzv-id",
            "hangtest",
        ]
    )
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        *launch,
        "--nproc-per-node",
        str(nproc),
        "--monitor-interval",
        "0.2",
        "-m",
        "tests.helpers.hang_job",
        scenario,
        *map(str, args),
    ]


def job_env(ready_dir: Path, life_s: float, extra: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID")
    }
    # The ranks' live sockets (PGDOCTOR_TEST_LIVE=1) go beside the ready files, so a rank killed by
    # the test leaves no socket file behind in /tmp/pgdoctor-live-<uid>.
    live_dir = ready_dir.parent / "live"
    live_dir.mkdir(mode=0o700, exist_ok=True)
    env.update(
        {
            "HANG_READY_DIR": str(ready_dir),
            "HANG_LIFE_S": str(life_s),
            "OMP_NUM_THREADS": "1",
            "PGDOCTOR_LIVE_DIR": str(live_dir),
            "PYTHONPATH": str(ROOT),
            "PYTHONWARNINGS": "ignore",
        }
    )
    env.update(extra or {})
    return env


def quiet_port() -> int:
    """A TCP port for a test job's MASTER_PORT: the product's free_port (below the kernel's ephemeral
    range, never given twice in this process), which pgdoctor's own spawns of ranks use too."""
    from pgdoctor.probes.processes import free_port

    return free_port()


def kill_tree(pid: int) -> None:
    """SIGKILL a process and every descendant, by pid (torchrun puts its ranks in other sessions)."""
    for p in [*sorted(child_pids(pid)), pid]:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, signal.SIGKILL)


@contextlib.contextmanager
def started_job(
    argv: Sequence[str], life_s: float = 40.0, env: Optional[Mapping[str, str]] = None
) -> Iterator[Job]:
    """The job `argv` started in its own session, its output in a temporary log; killed whole at exit."""
    with tempfile.TemporaryDirectory(prefix="pgdoctor-hangtest-") as tmp:
        ready = Path(tmp) / "ready"
        ready.mkdir()
        log = Path(tmp) / "job.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                list(argv),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=ROOT,
                env=job_env(ready, life_s, env),
                start_new_session=True,
            )
        try:
            yield Job(proc, ready, log)
        finally:
            kill_tree(proc.pid)
            proc.wait(timeout=10)


@contextlib.contextmanager
def torchrun_job(
    scenario: str,
    args: Sequence[int] = (),
    nproc: int = 4,
    life_s: float = 40.0,
    env: Optional[Mapping[str, str]] = None,
    node: Optional[tuple[int, int, str]] = None,
    argv_prefix: Sequence[str] = (),
) -> Iterator[Job]:
    with started_job([*argv_prefix, *torchrun_argv(scenario, args, nproc, node)], life_s, env) as job:
        yield job
