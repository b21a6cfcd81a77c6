"""Where pgdoctor keeps what it can rebuild but would rather not: PGDOCTOR_CACHE, else
$XDG_CACHE_HOME/pgdoctor, else ~/.cache/pgdoctor (scripts/nsys-setup.sh spells the
common case in shell). Nothing in it is needed: every reader falls back to building the thing again, and every
writer gives up silently on a read-only or missing home."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Optional


def cache_dir() -> Optional[Path]:
    """The cache's folder, or None where there is no sound place for one. A relative
    XDG_CACHE_HOME is ignored, as the XDG spec says (it wrote a `relcache/pgdoctor` into whatever
    directory pgdoctor ran in). The home must exist: an empty HOME made it `/.cache`, and a
    missing one (`HOME=/nonexistent` in a container or a service) was created, by a root user,
    along with the cache."""
    explicit = os.environ.get("PGDOCTOR_CACHE")
    if explicit:
        return Path(explicit)  # the user's own choice, relative or not
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg, "pgdoctor")
    home = os.path.expanduser("~")
    if not os.path.isabs(home) or home == "/" or not os.path.isdir(home):
        return None
    return Path(home, ".cache", "pgdoctor")


def read_cached(sub: str, name: str) -> Optional[bytes]:
    """The bytes of cache_dir()/sub/name, or None when it is not there or cannot be read."""
    base = cache_dir()
    if base is None:
        return None
    try:
        return (base / sub / name).read_bytes()
    except OSError:
        return None


def write_cached(sub: str, name: str, data: bytes, keep: int = 4) -> None:
    """Writes cache_dir()/sub/name atomically (a reader sees the old file or the whole new one,
    also with several processes writing at once), then keeps the `keep` newest files of that
    folder: a new catalogue version gets a new name, and old ones must not pile up. Errors are
    swallowed: the cache is an optimisation."""
    base = cache_dir()
    if base is None:
        return
    folder = base / sub
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
