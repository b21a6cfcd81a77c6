"""The files under a directory a user names, in name order, and the folders below it that could not
be listed. os.walk drops a folder it cannot list without a word (its default onerror is None): a
job directory's unreadable rank folder was neither read nor named as skipped, and a named folder
that could not be listed was "the directories named hold no file"."""

from __future__ import annotations

import os


def files_under(top: str) -> tuple[list[str], list[tuple[str, str]]]:
    """(files, [(folder, why it was not listed)]); a link to a folder is not followed (no loops)."""
    files: list[str] = []
    refused: list[tuple[str, str]] = []

    def note(exc: OSError) -> None:
        refused.append((exc.filename or top, (exc.strerror or type(exc).__name__).lower()))

    for root, dirs, names in os.walk(top, onerror=note):
        dirs.sort()
        files.extend(os.path.join(root, n) for n in sorted(names))
    return files, refused
