"""Tar archives of a job's output (.tar, .tar.gz/.tgz, .tar.xz, .tar.bz2; told by content, not by
name): each member is its own source, named ARCHIVE:MEMBER, so a rank is read from its file's name,
evidence cites the member, and the flight-recorder dumps and profiler traces inside are found as
in the unpacked directory. Read as one stream, a tarball was one log whose lines ran across files
with the headers' NUL blocks between them.

Members are unpacked into a private temp directory (probes.processes.temp_dir: removed when the
diagnosis ends, at exit, or by the next pgdoctor's sweep if this one is killed) under their own
relative paths with every '..' and absolute part dropped, so nothing is written outside it. Only
regular files are unpacked (links, devices and FIFOs never). A bomb stops at MAX_MEMBERS members or
MAX_BYTES unpacked, and a cut or corrupt archive where the damage starts; both say what was left."""

from __future__ import annotations

import os
import posixpath
import shutil
import tarfile
from dataclasses import dataclass, field

from pgdoctor.probes.processes import temp_dir

MAX_MEMBERS = 10_000
MAX_BYTES = 4 << 30
# In a job directory (found, not named), a tar is as often a dataset shard (webdataset) as logs:
# only members named like logs or the recorder's and profiler's files are unpacked from it.
_LISTED_SUFFIXES = (".log", ".txt", ".out", ".err", ".json", ".jsonl", ".pkl", ".pickle", ".gz")
_ERRORS = (tarfile.TarError, OSError, EOFError, ValueError)


def is_tar(path: str) -> bool:
    """Whether a regular file is a tar archive, plain or compressed (gzip, xz, bzip2)."""
    try:
        return tarfile.is_tarfile(path)
    except _ERRORS:  # a cut compressed file, a permission flipped under us: not an archive to open
        return False


@dataclass
class Unpacked:
    directory: str
    members: list[tuple[str, str]] = field(default_factory=list)  # (ARCHIVE:MEMBER, unpacked path)
    skipped: list[str] = field(default_factory=list)  # "ARCHIVE: why what was left was not read"


def _relative(name: str) -> str:
    parts = [
        p for p in posixpath.normpath("/" + name.replace("\\", "/")).split("/") if p not in ("", ".", "..")
    ]
    return "/".join(parts) or "member"


def _wanted(name: str, listed: bool) -> bool:
    if not listed:
        return True
    base = posixpath.basename(name).lower()
    return base.endswith(_LISTED_SUFFIXES) or "." not in base


def unpack(path: str, listed: bool) -> Unpacked:
    """The archive's regular members, unpacked (see the module docstring)."""
    out = Unpacked(temp_dir("archive", tracked=True))
    total = 0
    seen: set[str] = set()
    try:
        with tarfile.open(path, "r|*") as tf:  # a stream: one pass, whatever the compression
            for member in tf:
                if not member.isreg() or not _wanted(member.name, listed):
                    continue
                if len(out.members) >= MAX_MEMBERS or total + member.size > MAX_BYTES:
                    out.skipped.append(
                        f"{path}: members past {len(out.members)} files / {total >> 20} MiB were not read "
                        f"(limits {MAX_MEMBERS} files, {MAX_BYTES >> 30} GiB)"
                    )
                    break
                rel = _relative(member.name)
                while rel in seen:  # two members of one name (an archive appended to): both are read
                    rel += "~"
                seen.add(rel)
                dest = os.path.join(out.directory, rel)
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                src = tf.extractfile(member)
                if src is None:
                    continue
                with src, open(dest, "wb") as fh:
                    shutil.copyfileobj(src, fh, 1 << 20)
                total += member.size
                out.members.append((f"{path}:{member.name}", dest))
    except _ERRORS as exc:
        out.skipped.append(f"{path}: the archive is cut or damaged after {len(out.members)} members ({exc})")
    return out
