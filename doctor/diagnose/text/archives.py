"""Archives of a job's output, tar (.tar, .tar.gz/.tgz, .tar.xz, .tar.bz2) and zip (a GitHub
attachment), told by content, not by name: each member is its own source, named ARCHIVE:MEMBER, so
a rank is read from its file's name, evidence cites the member, and the flight-recorder dumps and
profiler traces inside are found as in the unpacked directory. Read as one stream, a tarball was one
log whose lines ran across files with the headers' NUL blocks between them; a zip was refused.

Members are unpacked into a private temp directory (`pgdoctor-archive-PID-*`: removed when the
diagnosis ends, at exit, or by the next pgdoctor's sweep of a dead pid's entries) under their own
relative paths with every '..' and absolute part dropped, so nothing is written outside it. Only
regular files are unpacked (links, devices and FIFOs never). A bomb stops at MAX_MEMBERS members or
MAX_BYTES unpacked (bytes counted as written: a zip's sizes can lie), and a cut or corrupt archive
where the damage starts; both say what was left. A zip that holds a torch checkpoint (torch.save
writes zip: `<name>/data.pkl`, `<name>/data/0`...) is not unpacked: it is no log.

A member that is binary by its head (what diagnose calls a binary file: a .npy, an image, a core) is
not written at all: a dataset shard named by mistake was 10,000 files unpacked only to be skipped.
What the readers of the unpacked files say (a dump's evidence, a cut trace's skip line) names the
temp file; renamed() gives every such string its member's ARCHIVE:MEMBER back."""

from __future__ import annotations

import atexit
import functools
import os
import posixpath
import re
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, Optional

from pgdoctor.diagnose.text.head import HEAD_BYTES  # as much of a member as never_log reads

MAX_MEMBERS = 10_000
_TEMP_PREFIX = "pgdoctor-archive-"  # then the pid, then mkdtemp's own part
MAX_BYTES = 4 << 30
# Members looked at (headers read), unpacked or not: a job directory's dataset shard of 300,000 members
# not named like logs was walked whole (30 s, ~100 us and ~220 B of gzip a member) and a larger one until
# --timeout, though none of them is unpacked. Ten times MAX_MEMBERS: a job's output with its logs last
# is read whole.
MAX_LOOKED = 100_000
# In a job directory (found, not named), a tar is as often a dataset shard (webdataset) as logs:
# only members named like logs or the recorder's and profiler's files are unpacked from it.
_LISTED_SUFFIXES = (".log", ".txt", ".out", ".err", ".json", ".jsonl", ".pkl", ".pickle", ".gz")
_ERRORS = (tarfile.TarError, zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError)


def kind(path: str) -> Optional[str]:
    """ "tar" (plain or compressed: gzip, xz, bzip2), "zip", "checkpoint" (a torch.save zip), or None."""
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()
            if any(n.endswith("/data.pkl") or n == "data.pkl" for n in names[:64]):
                return "checkpoint"
            return "zip"
        # An empty archive says nothing, and a log that starts with a run of NULs (logrotate's
        # copytruncate) reads as one: a tar is one with a first member. Only a head that can start a
        # tar is opened as one: tarfile's "r:*" reads NULs as an LZMA-alone stream to their end (a
        # 400 MB hole took 100 s before the log was read at all).
        if not _tar_head(path):
            return None
        with tarfile.open(path, "r:*") as tf:
            return "tar" if tf.next() is not None else None
    except _ERRORS:  # a cut compressed file, a permission flipped under us: not an archive to open
        return None


_MADE: set[str] = set()


def remove(directory: str) -> None:
    """Remove an unpacked archive's directory (diagnose does when it is done with its members)."""
    _MADE.discard(directory)
    shutil.rmtree(directory, ignore_errors=True)


@atexit.register
def _remove_all() -> None:
    for d in list(_MADE):
        remove(d)


@dataclass
class Unpacked:
    path: str  # the archive
    directory: str
    members: list[tuple[str, str]] = field(default_factory=list)  # (ARCHIVE:MEMBER, unpacked path)
    skipped: list[str] = field(default_factory=list)  # "ARCHIVE: why what was left was not read"
    binary: list[tuple[str, str]] = field(default_factory=list)  # (ARCHIVE:MEMBER, what it is): not written
    looked: int = 0  # members looked at, every level

    def no_log(self) -> Optional[str]:
        """Why this archive, named, is no input (every member binary, read to its end), or None."""
        if self.members or self.skipped or not self.binary:
            return None
        first, what = self.binary[0]
        return (
            f"no member is a text log (0 of {self.looked} members read as logs, {len(self.binary)} binary "
            f"skipped: {first} is {what}); give the job's log files or their directory"
        )

    def note(self) -> Optional[str]:
        """What was read of an archive that also held binary members, for the report's notes."""
        if not self.binary or not self.members:
            return None
        return (
            f"{self.path}: {len(self.members)} of {self.looked} members read, {len(self.binary)} binary "
            "skipped unread"
        )


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


def _tar_members(path: str) -> Iterator[tuple[str, int, Callable[[], IO[bytes]]]]:
    with tarfile.open(path, "r|*") as tf:  # a stream: one pass, whatever the compression
        for member in tf:
            if member.isreg():
                yield member.name, member.size, functools.partial(_extracted, tf, member)


def _extracted(tf: tarfile.TarFile, member: tarfile.TarInfo) -> IO[bytes]:
    fh = tf.extractfile(member)
    if fh is None:  # isreg() members always have one; kept for the type
        raise tarfile.TarError(f"{member.name}: no data")
    return fh


def _zip_members(path: str) -> Iterator[tuple[str, int, Callable[[], IO[bytes]]]]:
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            # Unix type bits where the writer set them (zip -y stores links so); Python's writestr
            # leaves them out, which is a regular file.
            kind_bits = stat.S_IFMT(info.external_attr >> 16)
            if info.is_dir() or (kind_bits and kind_bits != stat.S_IFREG):
                continue
            yield info.filename, info.file_size, functools.partial(zf.open, info)


# What one member of a zip can raise on its own, the others still readable: a password (RuntimeError),
# a method zipfile lacks (Deflate64, which Windows' Explorer writes past 2 GiB; AES; NotImplementedError),
# a bad CRC or a damaged stream (BadZipFile, zlib.error, EOFError). Each was an internal error (exit 4)
# or ended the whole archive.
_MEMBER_ERRORS = (RuntimeError, NotImplementedError, zipfile.BadZipFile, zlib.error, EOFError)


# What tells a member that is no log from its first bytes and its name (diagnose's own test of a file,
# given by the caller: what it reads as dumps, traces and hang evidence is never binary to it).
NeverLog = Callable[[bytes, str], Optional[str]]


def unpack(path: str, listed: bool, archive: str, never_log: Optional[NeverLog] = None) -> Unpacked:
    """The regular members of the archive, `archive` being what kind() found ("tar" or "zip"), unpacked
    (see the module docstring); `never_log(head, name)` says what a member is that is not written
    (a binary), or None."""
    out = Unpacked(path, tempfile.mkdtemp(prefix=f"{_TEMP_PREFIX}{os.getpid()}-"))
    _MADE.add(out.directory)
    used = _Budget()
    try:
        _unpack_into(out, path, path, listed, archive, out.directory, used, 0, never_log)
    except BaseException:  # the deadline (--timeout) or ^C mid-walk: nothing is left for exit to remove
        remove(out.directory)
        raise
    out.looked = used.looked
    return out


@dataclass
class _Budget:
    """What every level of one outermost archive has used so far."""

    bytes: int = 0  # unpacked
    looked: int = 0  # members looked at
    passed: int = 0  # of those, not unpacked: not named like logs in a job directory
    passed_bytes: int = 0  # their sizes


# An archive inside an archive (the job's logs.tar.gz inside a support bundle's zip, one tar per node
# inside the job's tar) is unpacked in its turn, its members named OUTER:INNER:MEMBER, down to this
# depth. Before, an inner zip was "a binary file" and an inner tar was read as one log whose lines
# were its headers' NUL blocks. Every level draws on the outer archive's one budget of members and
# bytes, so nesting never multiplies what a bomb may write.
MAX_DEPTH = 3
# What a tar starts with: gzip, xz, the older .lzma, bzip2 around it; a plain (POSIX or GNU) tar says
# "ustar" at 257.
_TAR_HEADS = (b"\x1f\x8b", b"\xfd7zXZ\x00", b"\x5d\x00\x00", b"BZh")


def _tar_head(path: str) -> bool:
    with open(path, "rb") as fh:
        return _is_tar_head(fh.read(262))


def _is_tar_head(head: bytes) -> bool:
    return head.startswith(_TAR_HEADS) or head[257:262] == b"ustar"


def _unpack_into(
    out: Unpacked,
    path: str,
    label: str,
    listed: bool,
    archive: str,
    directory: str,
    used: _Budget,
    depth: int,
    never_log: Optional[NeverLog] = None,
) -> None:
    """Unpacks `path` (named `label` in evidence) into `directory`; `used` holds what every level has
    used so far."""
    seen: set[str] = set()
    members = _zip_members(path) if archive == "zip" else _tar_members(path)
    try:
        for name, size, opener in members:
            if used.looked >= MAX_LOOKED or used.passed_bytes > MAX_BYTES:
                out.skipped.append(
                    f"{label}: members past the first {used.looked} were not read ({len(out.members)} read, "
                    f"{used.passed} ({used.passed_bytes >> 20} MiB) binary or not named like logs passed "
                    f"over; limits {MAX_LOOKED} members looked at, {MAX_BYTES >> 30} GiB passed over)"
                )
                break
            used.looked += 1
            if not _wanted(name, listed):
                used.passed += 1
                used.passed_bytes += max(0, size)  # a tar stream reads (and inflates) them to pass them
                continue
            if len(out.members) >= MAX_MEMBERS or used.bytes + size > MAX_BYTES:
                out.skipped.append(
                    f"{label}: members past {len(out.members)} files / {used.bytes >> 20} MiB were not read "
                    f"(limits {MAX_MEMBERS} files, {MAX_BYTES >> 30} GiB)"
                )
                break
            try:
                with opener() as src:
                    head = src.read(HEAD_BYTES)
                    what = None if _archive_head(head) or never_log is None else never_log(head, name)
                    if what is not None:
                        out.binary.append((f"{label}:{name}", what))
                        used.passed += 1
                        used.passed_bytes += max(0, size)
                        continue
                    dest = _destination(directory, name, seen)
                    used.bytes += _copy(head, src, dest, MAX_BYTES - used.bytes)
            except _MEMBER_ERRORS as exc:
                if archive != "zip":  # a tar is one stream: what follows the damage is lost too
                    raise
                out.skipped.append(f"{label}:{name}: not read ({exc})")
                continue
            inner = _inner_archive(dest) if depth < MAX_DEPTH else None
            if inner is not None:
                _unpack_into(
                    out,
                    dest,
                    f"{label}:{name}",
                    listed,
                    inner,
                    tempfile.mkdtemp(dir=directory),
                    used,
                    depth + 1,
                    never_log,
                )
                os.unlink(dest)  # its members stand for it
                continue
            out.members.append((f"{label}:{name}", dest))
    except (*_ERRORS, *_MEMBER_ERRORS) as exc:
        out.skipped.append(f"{label}: the archive is cut or damaged after {len(out.members)} members ({exc})")


# A member's path as it is unpacked: its own (the rank's directory and the file's name are read from it)
# where that can be made, else its base name alone in a directory of its own. Names that a file system
# refuses or that collide (a member 'a' and a member 'a/b.log', a name of 300 bytes, a path deeper than
# PATH_MAX) stopped the archive there as "cut or damaged" and lost every member after it: an OOM in
# the next member was "[ok] no failure found".
_NAME_MAX, _PATH_MAX, _MAX_LEVELS = 255, 4000, 64


def _short(part: str) -> str:
    raw = part.encode("utf-8", "surrogateescape")
    if len(raw) <= _NAME_MAX:
        return part
    head = raw[:100].decode("utf-8", "ignore")
    return f"{head}~{raw[-100:].decode('utf-8', 'ignore')}"


def _destination(directory: str, name: str, seen: set[str]) -> str:
    rel = "/".join(_short(p) for p in _relative(name).split("/"))
    while rel in seen:  # two members of one name (an archive appended to): both are read
        rel += "~"
    seen.add(rel)
    dest = os.path.join(directory, rel)
    # os.makedirs recurses once a level: 1,500 levels were a RecursionError that ended a tar.
    if rel.count("/") < _MAX_LEVELS and len(os.fsencode(dest)) < _PATH_MAX:
        try:
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            if not os.path.isdir(dest):
                return dest
        except OSError:  # a member's file where this path needs a directory
            pass
    own = tempfile.mkdtemp(dir=directory, prefix="member-")
    return os.path.join(own, _short(posixpath.basename(rel)))


def _inner_archive(dest: str) -> Optional[str]:
    found = kind(dest)
    return found if found in ("tar", "zip") else None


def _archive_head(head: bytes) -> bool:
    """A member that may be an archive to unpack in its turn (a plain tar's NUL blocks, a zip's
    binary headers): never judged binary by its head."""
    return head.startswith((b"PK\x03\x04", b"PK\x05\x06")) or _is_tar_head(head)


def _copy(head: bytes, src: IO[bytes], dest: str, budget: int) -> int:
    """Bytes written, `head` (already read) first, at most `budget` (a member that inflates past its
    stated size stops there)."""
    head = head[:budget]
    done = len(head)
    with open(dest, "wb") as fh:
        fh.write(head)
        while done < budget:
            block = src.read(min(1 << 20, budget - done))
            if not block:
                break
            fh.write(block)
            done += len(block)
    return done


def renamed(value: Any, unpacked: list[Unpacked]) -> Any:
    """`value` (JSON-like: str, list, tuple, dict with its keys) with every unpacked file's path
    replaced by its ARCHIVE:MEMBER, and an unpacked directory by its archive. The readers of dumps,
    traces and hang evidence name the file they opened; this is the one place their words are
    translated back, so none of them (nor one added later) can leak a temp path gone after exit."""
    names = {u.directory: u.path for u in unpacked}
    names.update((dest, name) for u in unpacked for name, dest in u.members)
    if not names:
        return value
    lengths = sorted({len(k) for k in names}, reverse=True)  # the longest path that matches wins
    prefix = re.compile("|".join(re.escape(u.directory) for u in unpacked))

    def one(text: str) -> str:
        out, at = [], 0
        for m in prefix.finditer(text):
            if m.start() < at:
                continue
            start = m.start()
            key = next((text[start : start + n] for n in lengths if text[start : start + n] in names), None)
            if key is None:
                continue
            out += [text[at:start], names[key]]
            at = start + len(key)
        return "".join(out) + text[at:] if out else text

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return one(v) if _TEMP_PREFIX in v else v
        if isinstance(v, dict):
            return {walk(k): walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if type(v) is tuple:  # a named tuple's fields are left as they are
            return tuple(walk(x) for x in v)
        return v

    return walk(value)
