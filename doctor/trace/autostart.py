"""The live socket without a line of code: `pgdoctor run` puts a directory holding only a
`sitecustomize.py` (pgdoctor.hang.shim) first on the job's PYTHONPATH and sets PGDOCTOR_LIVE=1. Python
imports sitecustomize at every interpreter start, so each rank starts its private socket
(pgdoctor.trace.live) before the training script runs, and `pgdoctor hang` reads it without
ptrace. The shim then runs the sitecustomize it shadows (a distribution's or the user's), and it
never stops a job: where pgdoctor cannot be imported (another Python), the job runs as before.
`pgdoctor run` removes the directory when the job ends.

Only a rank starts a socket: a process with a rank variable (RANK, SLURM_PROCID,
OMPI_COMM_WORLD_RANK, PMI_RANK) whose parent does not carry the same rank, so the launcher, a
spawned DataLoader worker and the rank's own helper processes never do.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Optional

RANK_KEYS = ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK")


def _environ_of(pid: int) -> Optional[dict[str, str]]:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            raw = fh.read()
    except OSError:  # another uid (slurmstepd): unknown
        return None
    out = {}
    for item in raw.split(b"\0"):
        k, eq, v = item.partition(b"=")
        if eq:
            out[k.decode("utf-8", "replace")] = v.decode("utf-8", "replace")
    return out


def is_rank(environ: Mapping[str, str], parent: Optional[Mapping[str, str]]) -> bool:
    """A rank process: it has a rank variable its parent (when readable) does not share."""
    keys = [k for k in RANK_KEYS if environ.get(k, "") != ""]
    if not keys:
        return False
    return parent is None or any(parent.get(k) != environ[k] for k in keys)


def start_if_rank() -> Optional[str]:
    """Start the socket in a rank process; its path, or None. Never raises: a job must not fail
    because its evidence tier could not start."""
    try:
        if not is_rank(os.environ, _environ_of(os.getppid())):
            return None
        from pgdoctor.trace import live

        return live.start()
    except Exception as exc:  # any error leaves the job alone
        print(f"pgdoctor: live socket not started: {exc}", file=sys.stderr)
        return None
