"""The temp directory of one verify / bench scaling run: the ranks' records and the reference's
tensor files live there, and it is removed when the run ends.

A pgdoctor killed with SIGKILL (the OOM killer, a scheduler) cannot remove it, and a 124M
model's reference leaves gigabytes in it. So the owning process holds an exclusive flock on
`owner.lock` inside the directory for as long as the run lasts; the kernel drops the lock when
that process dies, however it dies. Every new run first sweeps the directories of this prefix
whose lock it can take: their owner is gone. That sweep is clean_stale_temp
(probes/processes.py), the same one every pgdoctor command runs at its start."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from pgdoctor.probes.processes import LOCKED_PREFIXES, OWNER_LOCK, clean_stale_temp

PREFIX = LOCKED_PREFIXES[0]


@contextlib.contextmanager
def run_dir(kind: str = "") -> Iterator[Path]:
    """A fresh run directory, locked by this process, removed on the way out (a SIGKILL leaves
    it to the next run's sweep)."""
    clean_stale_temp()
    path = Path(tempfile.mkdtemp(prefix=PREFIX + (f"{kind}-" if kind else "")))
    fd = os.open(path / OWNER_LOCK, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        os.close(fd)
