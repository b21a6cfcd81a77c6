"""Writes tests/fixtures/codes/HNG1xx/{bad,good}/: `pgdoctor hang --save` snapshots of real torchrun
jobs (torch CPU, gloo), which `pgdoctor diagnose DIR` reads. Run from the repository root:

    python -m tests.helpers.make_hang_fixtures

HNG101 bad: rank 2 sleeps in hang_culprit.nap, ranks 0,1,3 wait in all_reduce; good: a healthy job.
HNG102 bad: only rank 0 of a 2-rank job seen (rank 1 sleeps elsewhere: another node's view);
       good: both ranks seen (HNG101 instead).
HNG103 bad: the stack tools never answer (a fake py-spy that sleeps), so no rank has a stack;
       good: the HNG101 snapshot (every stack read).
HNG104 bad: the healthy job (it fires: progress); good: the HNG101 snapshot.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.helpers.hang_lab import torchrun_job
from tests.helpers.paths import FIXTURES

CODES = FIXTURES / "codes"


def save(dest: Path, *args: str, env: dict[str, str] | None = None) -> None:
    shutil.rmtree(dest, ignore_errors=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pgdoctor",
            "hang",
            "--interval",
            "0.3",
            "--tiers",
            "proc,py-spy",
            "--save",
            str(dest),
            *args,
        ],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    print(dest, sorted(p.name for p in dest.iterdir()))


def copy(src: Path, dest: Path) -> None:
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(src, dest)


def main() -> None:
    with torchrun_job("sleep", [2]) as job:
        job.wait_ready(4)
        save(CODES / "HNG101" / "bad", str(job.pid))
    with torchrun_job("healthy", nproc=2) as job:
        job.wait_ready(2)
        save(CODES / "HNG104" / "bad", str(job.pid), "--samples", "4")
    with torchrun_job("sleep", [1], nproc=2) as job:
        pids = job.wait_ready(2)
        save(CODES / "HNG102" / "bad", str(pids[0]))
        save(CODES / "HNG102" / "good", str(job.pid))
        with tempfile.TemporaryDirectory() as tmp:
            for tool in ("py-spy", "pystack"):
                (Path(tmp) / tool).write_text("#!/bin/sh\nexec sleep 600\n")
                (Path(tmp) / tool).chmod(0o755)
            save(
                CODES / "HNG103" / "bad",
                str(job.pid),
                "--timeout",
                "2",
                env={**os.environ, "PATH": f"{tmp}:{os.environ['PATH']}"},
            )
    copy(CODES / "HNG104" / "bad", CODES / "HNG101" / "good")
    copy(CODES / "HNG101" / "bad", CODES / "HNG103" / "good")
    copy(CODES / "HNG101" / "bad", CODES / "HNG104" / "good")


if __name__ == "__main__":
    main()
