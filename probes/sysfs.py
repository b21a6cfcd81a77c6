"""Every read of /sys, /proc and /dev goes through an FsReader rooted at a directory, so tests
run the probes on fixture trees instead of this machine's files."""

from __future__ import annotations

import os
from pathlib import Path


class FsReader:
    def __init__(self, root: str | os.PathLike[str] = "/"):
        self.root = Path(root)

    def path(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def read_text(self, path: str, limit: int = 1 << 20) -> str:
        """The file's text (at most `limit` bytes). Raises OSError as the OS does."""
        with open(self.path(path), "rb") as fh:
            return fh.read(limit).decode("utf-8", "replace")

    def read_stripped(self, path: str) -> str:
        return self.read_text(path).strip()

    def exists(self, path: str) -> bool:
        return self.path(path).exists()

    def listdir(self, path: str) -> list[str]:
        """Sorted entries; [] when the directory does not exist."""
        try:
            return sorted(os.listdir(self.path(path)))
        except FileNotFoundError:
            return []

    def statvfs_total_bytes(self, path: str) -> int:
        st = os.statvfs(self.path(path))
        return st.f_blocks * st.f_frsize
