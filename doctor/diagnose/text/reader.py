"""Input sources as streams of byte chunks: files, directories (recursively), '-' for stdin,
gzip (detected by its magic bytes, not by the name). Nothing is read whole: memory stays flat
on a multi-GB log."""

from __future__ import annotations

import functools
import os
import sys
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import BinaryIO, Callable, Optional

CHUNK_BYTES = 8 << 20
GZIP_MAGIC = b"\x1f\x8b"


class SourceError(ValueError):
    """A path that cannot be read as a log (missing, unreadable)."""


@dataclass(frozen=True)
class Source:
    name: str
    chunks: Callable[[], Iterator[bytes]]
    path: Optional[str] = None  # a regular file that may be scanned in parallel
    listed: bool = False  # found by expanding a directory, not named by the user


def _file_chunks(path: str, chunk_bytes: int) -> Iterator[bytes]:
    with open(path, "rb") as raw:
        yield from stream_chunks(raw, chunk_bytes)


def stream_chunks(raw: BinaryIO, chunk_bytes: int = CHUNK_BYTES) -> Iterator[bytes]:
    """Chunks of a binary stream, gunzipped when it starts with the gzip magic. A truncated or
    corrupt gzip ends the stream where the damage starts (a cut-off paste is still read)."""
    head = raw.read(2)
    if head == GZIP_MAGIC:
        yield from _gunzip_chunks(head, raw, chunk_bytes)
        return
    if head:
        yield head
    while True:
        block = raw.read(chunk_bytes)
        if not block:
            return
        yield block


def _gunzip_chunks(head: bytes, raw: BinaryIO, chunk_bytes: int) -> Iterator[bytes]:
    # zlib with wbits=47 reads gzip and chains concatenated members (as `cat a.gz b.gz` makes).
    decomp = zlib.decompressobj(47)
    pending = head
    while True:
        block = raw.read(chunk_bytes)
        data = pending + block
        pending = b""
        if not data:
            break
        try:
            while data:
                out = decomp.decompress(data, chunk_bytes)
                if out:
                    yield out
                data = decomp.unconsumed_tail
                if decomp.eof:
                    rest = decomp.unused_data
                    decomp = zlib.decompressobj(47)
                    data = rest if rest.startswith(GZIP_MAGIC) else b""
        except zlib.error:
            return
        if not block:
            break
    try:
        tail = decomp.flush()
    except zlib.error:
        return
    if tail:
        yield tail


def is_gzip(path: str) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


def is_binary(path: str) -> bool:
    """NUL bytes in the first 8 KiB of a file that is not gzip: a checkpoint, an image, a core."""
    with open(path, "rb") as fh:
        head = fh.read(8192)
    return not head.startswith(GZIP_MAGIC) and b"\x00" in head


def _walk(path: str) -> list[str]:
    out: list[str] = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        out.extend(os.path.join(root, f) for f in sorted(files))
    return out


def open_sources(paths: Sequence[str], chunk_bytes: int = CHUNK_BYTES) -> list[Source]:
    """One Source per file ('-' is stdin); directories expand recursively in name order."""
    sources: list[Source] = []
    for path in paths:
        if path == "-":
            sources.append(Source("<stdin>", lambda: stream_chunks(sys.stdin.buffer, chunk_bytes)))
            continue
        listed = os.path.isdir(path)
        if listed:
            files = _walk(path)
        elif os.path.exists(path):
            files = [path]
        else:
            raise SourceError(f"no such file or directory: {path}")
        for f in files:
            if not os.access(f, os.R_OK):
                raise SourceError(f"cannot read {f}: permission denied")
            sources.append(Source(f, functools.partial(_file_chunks, f, chunk_bytes), f, listed))
    return sources


def text_sources(pairs: Iterable[tuple[str, str]], chunk_bytes: int = CHUNK_BYTES) -> Iterator[Source]:
    """(name, text) pairs as Sources, for callers that already hold the logs in memory."""
    for name, text in pairs:
        data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
        yield Source(name, functools.partial(_slices, data, chunk_bytes))


def _slices(data: bytes, size: int) -> Iterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i:i + size]
