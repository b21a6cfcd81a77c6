"""The temp directory of one verify / bench scaling run: the ranks' records and the reference's
tensor files live there, and it is removed when the run ends.

A pgdoctor killed with SIGKILL (the OOM killer, a scheduler) cannot remove it, and a 124M
model's reference leaves gigabytes in it. So the owning process holds an exclusive flock on
`owner.lock` inside the directory for as long as the run lasts; the kernel drops the lock when
that process dies, however it dies. Every new run first runs pgdoctor's one temp sweep
(probes/processes.clean_stale_temp, also run at every command's start), which removes the
directories whose lock it can take: their owner is gone."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from pgdoctor.probes.processes import OWNER_LOCK, clean_stale_temp, owned_dir, remove_temp

PREFIX = "pgdoctor-verify-"
LOCK = OWNER_LOCK


def sweep_stale(root: str | None = None) -> list[str]:
    """Remove the temp entries whose owner has died (pgdoctor's one sweep); returns their paths."""
    return clean_stale_temp(root)


@contextlib.contextmanager
def run_dir(kind: str = "") -> Iterator[Path]:
    """A fresh run directory, locked by this process, removed on the way out (a SIGKILL leaves
    it to the next run's sweep)."""
    sweep_stale()
    path = owned_dir(PREFIX + (f"{kind}-" if kind else ""))
    try:
        yield Path(path)
    finally:
        remove_temp(path)
