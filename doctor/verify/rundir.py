"""The temp directory of one verify / bench scaling run: the ranks' records and the reference's
tensor files live there, and it is removed when the run ends.

A pgdoctor killed with SIGKILL (the OOM killer, a scheduler) cannot remove it, and a 124M
model's reference leaves gigabytes in it. So the owning process holds an exclusive flock on
`owner.lock` inside the directory for as long as the run lasts; the kernel drops the lock when
that process dies, however it dies. Every new run first sweeps the directories of this prefix
whose lock it can take: their owner is gone."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

PREFIX = "pgdoctor-verify-"
LOCK = "owner.lock"
# A directory without its lock file is one being created right now, or one of an older
# pgdoctor; past this age it is nobody's.
UNLOCKED_AGE_S = 600.0


def sweep_stale(root: str | None = None) -> list[str]:
    """Remove the run directories whose owner has died; returns their paths."""
    root = root or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = [n for n in os.listdir(root) if n.startswith(PREFIX)]
    except OSError:
        return removed
    for name in names:
        path = os.path.join(root, name)
        try:
            if not os.path.isdir(path) or os.path.islink(path) or os.stat(path).st_uid != os.getuid():
                continue
            fd = os.open(os.path.join(path, LOCK), os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            try:
                if time.time() - os.stat(path).st_mtime > UNLOCKED_AGE_S:
                    shutil.rmtree(path, ignore_errors=True)
                    removed.append(path)
            except OSError:
                pass
            continue
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)  # its owner is alive
            continue
        try:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
        finally:
            os.close(fd)
    return removed


@contextlib.contextmanager
def run_dir(kind: str = "") -> Iterator[Path]:
    """A fresh run directory, locked by this process, removed on the way out (a SIGKILL leaves
    it to the next run's sweep)."""
    sweep_stale()
    path = Path(tempfile.mkdtemp(prefix=PREFIX + (f"{kind}-" if kind else "")))
    fd = os.open(path / LOCK, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        os.close(fd)
