"""Where pgdoctor keeps what it can rebuild but would rather not: PGDOCTOR_CACHE, else
$XDG_CACHE_HOME/pgdoctor, else ~/.cache/pgdoctor (scripts/nsys-setup.sh spells the same rule in
shell). Nothing in it is needed: every reader falls back to building the thing again, and every
writer gives up silently on a read-only or missing home."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Optional


def cache_dir() -> Path:
    base = os.environ.get("PGDOCTOR_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pgdoctor"
    )
    return Path(base)


def read_cached(sub: str, name: str) -> Optional[bytes]:
    """The bytes of cache_dir()/sub/name, or None when it is not there or cannot be read."""
    try:
        return (cache_dir() / sub / name).read_bytes()
    except OSError:
        return None


def write_cached(sub: str, name: str, data: bytes, keep: int = 4) -> None:
    """Writes cache_dir()/sub/name atomically (a reader sees the old file or the whole new one,
    also with several processes writing at once), then keeps the `keep` newest files of that
    folder: a new catalogue version gets a new name, and old ones must not pile up. Errors are
    swallowed: the cache is an optimisation."""
    folder = cache_dir() / sub
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, folder / name)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        entries = sorted(
            (p for p in folder.iterdir() if not p.name.startswith(".tmp-")),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )
        for old in entries[keep:]:
            old.unlink(missing_ok=True)
    except OSError:
        return
