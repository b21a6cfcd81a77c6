"""The first bytes of a file or an archive's member: what every test of what it is reads (a dump, a
trace, a binary, an earlier report), once. A module of its own so that the reader and the archive
unpacker (which the reader calls) take the one size from the same place."""

from __future__ import annotations

HEAD_BYTES = 8192


def read_head(path: str) -> bytes:
    """The first HEAD_BYTES of a file; b"" when it cannot be read (the scan then says why)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(HEAD_BYTES)
    except OSError:
        return b""
