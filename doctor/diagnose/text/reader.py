"""Input sources as streams of byte chunks: files, directories (recursively), '-' for stdin,
gzip, xz/lzma and bzip2 (detected by their magic bytes, not by the name), tar archives (each
member a source: text/archives.py), zip archives the same way; UTF-16 and UTF-32 are transcoded. A
compressed file or an archive pgdoctor cannot read (zstd, 7z, lz4) is named as one.
Nothing is read whole: memory stays flat on a multi-GB log (standard input keeps at most its
first REPLAY_BYTES for a second reading)."""

from __future__ import annotations

import bz2
import codecs
import functools
import lzma
import os
import select
import stat
import sys
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Optional

from pgdoctor.diagnose.text.head import read_head
from pgdoctor.model import lazy_re

if TYPE_CHECKING:
    from pgdoctor.diagnose.text import archives

CHUNK_BYTES = 8 << 20
GZIP_MAGIC = b"\x1f\x8b"
XZ_MAGIC = b"\xfd7zXZ\x00"
# bzip2: "BZh", the block size 1-9, then a block's or the end's magic
_BZ2_HEAD = lazy_re.compile(rb"BZh[1-9](?:1AY&SY|\x17rE8P\x90)")
# Formats that hold a log but that pgdoctor does not decode: the user is told, nothing is guessed.
_UNDECODED = (
    (b"\x28\xb5\x2f\xfd", "zstd-compressed", "zstd -d"),
    (b"7z\xbc\xaf\x27\x1c", "a 7z archive", "7z x"),
    (b"\x04\x22\x4d\x18", "lz4-compressed", "lz4 -d"),
)


def _compression(head: bytes) -> Optional[str]:
    """'xz' (also the older .lzma: a properties byte 0x5d and a dictionary size), 'bz2', or None."""
    if head.startswith(XZ_MAGIC):
        return "xz"
    if len(head) >= 13 and head[:3] == b"\x5d\x00\x00" and head[5:13] == b"\xff" * 8:
        return "xz"
    if _BZ2_HEAD.match(head):
        return "bz2"
    return None


def undecoded(head: bytes, listed: bool = False) -> Optional[str]:
    """Why a file that starts with `head` cannot be read as a log (a compressed file or archive
    pgdoctor does not decode), or None. Zip and tar archives are read (text/archives.py)."""
    for magic, what, tool in _UNDECODED:
        if head.startswith(magic):
            return f"{what}, which pgdoctor does not decode ({tool} it first)"
    return None


class SourceError(ValueError):
    """A path that cannot be read as a log (missing, unreadable)."""


@dataclass(frozen=True)
class Source:
    name: str
    chunks: Callable[[], Iterator[bytes]]
    path: Optional[str] = None  # a regular file that may be scanned in parallel
    listed: bool = False  # found by expanding a directory, not named by the user
    caseless: bool = False  # read with the rows matching case-insensitively (a paste retyped in lower case)


def _file_chunks(path: str, chunk_bytes: int) -> Iterator[bytes]:
    with open(path, "rb") as raw:
        yield from stream_chunks(raw, chunk_bytes)


def stream_chunks(raw: BinaryIO, chunk_bytes: int = CHUNK_BYTES, depth: int = 0) -> Iterator[bytes]:
    """Chunks of a binary stream as UTF-8-ish text: gunzipped when it is gzip, transcoded when
    it is UTF-16 (PowerShell's `>` writes that). A truncated or corrupt gzip ends the stream where
    the damage starts (a cut-off paste is still read); a text that merely starts with the gzip
    magic is read as text. What a decompression gives is read by the same rules again (`depth`
    counts the layers)."""
    head = raw.read(4)
    if head[:2] == GZIP_MAGIC:
        yield from _inner(_gunzip_or_text(head, raw, chunk_bytes), chunk_bytes, depth)
        return
    if head[:3] in (XZ_MAGIC[:3], b"\x5d\x00\x00", b"BZh"):
        head += raw.read(9)
        kind = _compression(head)
        if kind:
            yield from _inner(_decompress_chunks(head, raw, chunk_bytes, kind), chunk_bytes, depth)
            return
    encoding = utf16_encoding(head)
    if encoding:
        yield from _transcode(head, raw, chunk_bytes, encoding)
        return
    if head:
        yield head
    while True:
        block = raw.read(chunk_bytes)
        if not block:
            return
        yield block


# A decompressed stream that is itself compressed or UTF-16 (a .gz that logrotate gzipped again, a
# PowerShell log gzipped) is decoded again, this many layers deep; it was read as binary noise and
# answered "[ok] no failure found".
MAX_LAYERS = 3


def _inner(chunks: Iterator[bytes], chunk_bytes: int, depth: int) -> Iterator[bytes]:
    first = next(chunks, b"")
    layered = first[:2] == GZIP_MAGIC or _compression(first[:16]) or utf16_encoding(first[:4])
    if depth + 1 < MAX_LAYERS and layered:
        yield from stream_chunks(_ChunkReader(first, chunks), chunk_bytes, depth + 1)  # type: ignore[arg-type]
        return
    if first:
        yield first
    yield from chunks


class _ChunkReader:
    """A generator of chunks as the read(n) of a file, for stream_chunks to read a layer from."""

    def __init__(self, first: bytes, rest: Iterator[bytes]):
        self._buf, self._rest = first, rest

    def read(self, n: int = -1) -> bytes:
        while n < 0 or len(self._buf) < n:
            more = next(self._rest, None)
            if more is None:
                break
            self._buf += more
        size = len(self._buf) if n < 0 else n
        out, self._buf = self._buf[:size], self._buf[size:]
        return out


def _decompress_chunks(head: bytes, raw: BinaryIO, chunk_bytes: int, kind: str) -> Iterator[bytes]:
    """xz/lzma or bzip2, at most chunk_bytes out at a time (a bomb is a long stream, never a big
    buffer); concatenated streams are chained; the damage of a cut or corrupt file ends it."""
    new = (lambda: lzma.LZMADecompressor()) if kind == "xz" else (lambda: bz2.BZ2Decompressor())
    decomp: Any = new()
    data = head
    while True:
        try:
            while data or not decomp.needs_input:
                out = decomp.decompress(data, chunk_bytes)
                data = b""
                if out:
                    yield out
                if decomp.eof:  # the next of concatenated streams (xz pads them with NULs)
                    decomp, data = new(), decomp.unused_data.lstrip(b"\x00")
        except (lzma.LZMAError, OSError, EOFError):
            return
        data = raw.read(chunk_bytes)
        if not data:
            return


def utf16_encoding(head: bytes) -> Optional[str]:
    """'utf-16' (with a BOM), 'utf-16-le'/'-be' (NULs at every other byte of ASCII), 'utf-32' (with
    a BOM), or None."""
    if head[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"):
        return "utf-32"
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "utf-16"
    if len(head) >= 4 and head[1] == 0 and head[3] == 0 and head[0] and head[2]:
        return "utf-16-le"
    if len(head) >= 4 and head[0] == 0 and head[2] == 0 and head[1] and head[3]:
        return "utf-16-be"
    return None


def _transcode(head: bytes, raw: BinaryIO, chunk_bytes: int, encoding: str) -> Iterator[bytes]:
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    block = head
    while True:
        more = raw.read(chunk_bytes)
        text = decoder.decode(block, final=not more)
        if text:
            yield text.encode("utf-8", "replace")
        if not more:
            return
        block = more


def _gunzip_or_text(head: bytes, raw: BinaryIO, chunk_bytes: int) -> Iterator[bytes]:
    first = raw.read(chunk_bytes)
    try:
        zlib.decompressobj(47).decompress(head + first, 1)
    except zlib.error:  # not gzip after all: text that starts with the same two bytes
        yield head + first
        while True:
            block = raw.read(chunk_bytes)
            if not block:
                return
            yield block
    yield from _gunzip_chunks(head + first, raw, chunk_bytes)


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


def needs_decoding(path: str) -> bool:
    """gzip, xz, bzip2, UTF-16 or UTF-32: read through stream_chunks, not scanned in place by byte offsets."""
    with open(path, "rb") as fh:
        head = fh.read(16)
    return head[:2] == GZIP_MAGIC or _compression(head) is not None or utf16_encoding(head[:4]) is not None


# Files that are never a log, by their magic number: named what they are in the refusal.
_BINARY_MAGIC = (
    (b"\x7fELF", "an ELF executable, library or core"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    # A dataset shard's arrays (np.save): a small one's head is its ASCII header, text by the NUL count.
    (b"\x93NUMPY", "a NumPy array (.npy)"),
    (b"\x89HDF\r\n\x1a\n", "an HDF5 file"),
)


def binary_kind(head: bytes) -> str:
    """What a binary file (is_binary) is, for the one line that refuses a named one."""
    for magic, what in _BINARY_MAGIC:
        if head.startswith(magic):
            return what
    return "NUL bytes and control bytes where a log has text: a checkpoint, an image, a core"


def is_binary(head: bytes) -> bool:
    """A checkpoint, an image, a core: a known magic number, or NUL bytes in the head (read_head) of a
    file that is neither gzip nor UTF-16, and what is not NUL is not mostly text. A log with a hole
    (logrotate's copytruncate leaves a run of NULs) or a few stray bytes is still a log."""
    if head.startswith(tuple(magic for magic, _ in _BINARY_MAGIC)):
        return True
    if head.startswith(GZIP_MAGIC) or _compression(head) or utf16_encoding(head[:4]) or b"\x00" not in head:
        return False
    rest = head.replace(b"\x00", b"")
    if not rest:
        return True
    texty = sum(1 for b in rest if b in (9, 10, 13) or 32 <= b < 127 or b >= 0x80)
    return texty < 0.95 * len(rest)


# Every report shape pgdoctor writes, by how it starts: JSON, or the console's first line.
_OWN_REPORT_START = lazy_re.compile(
    rb'\s*\{\s*"schema_version":\s*\d+,\s*"command":\s*"(?:diagnose|check|repro|bench|plan|verify)"'
    rb"|\[(?:x|!|ok)\] (?:Root cause: [A-Z]+\d{3} |no failure found in )|# HELP pgdoctor_"
)
# ... and the shapes that name it further in: HTML and JUnit XML.
_OWN_REPORT_NAMED = lazy_re.compile(rb"<title>pgdoctor |<testsuites name=\"pgdoctor ")


def is_pgdoctor_report(head: bytes) -> bool:
    """A report pgdoctor wrote earlier (diagnose -o job/report.json), from the head of the file
    (read_head): read again, it would cite its own quotes of the logs as new evidence."""
    # Anchored at the start, where a log's first line ("[rank0]: ...") fails in a few bytes; the
    # search through the head only runs when "pgdoctor" is in it.
    return bool(
        _OWN_REPORT_START.match(head) or (b"pgdoctor" in head and _OWN_REPORT_NAMED.search(head[:4096]))
    )


# How much of standard input is kept for a second reading (a paste is small; a multi-GB stream is not kept).
REPLAY_BYTES = 64 << 20


class Replay:
    """A stream that can be read once (standard input), kept as it is read so that a second reading
    (diagnose/lookahead.py: does the rest of the log say otherwise?) sees the same chunks. Past
    REPLAY_BYTES, or when the first reading stopped early, a second reading yields nothing, which
    lookahead treats as a source it cannot read again."""

    def __init__(self, chunks: Callable[[], Iterator[bytes]], limit: int = REPLAY_BYTES) -> None:
        self._chunks = chunks
        self._limit = limit
        self._kept: Optional[list[bytes]] = []
        self._size = 0
        self._started = self._complete = False

    def __call__(self) -> Iterator[bytes]:
        if self._started:
            return iter(self._kept or []) if self._complete else iter(())
        self._started = True
        return self._first()

    def _first(self) -> Iterator[bytes]:
        for chunk in self._chunks():
            if self._kept is not None:
                self._size += len(chunk)
                if self._size > self._limit:
                    self._kept = None  # too big to keep: no second reading
                else:
                    self._kept.append(chunk)
            yield chunk
        self._complete = True


def open_sources(
    paths: Sequence[str],
    chunk_bytes: int = CHUNK_BYTES,
    skipped: Optional[list[str]] = None,
    unpacked: Optional[list[archives.Unpacked]] = None,
    never_log: Optional[archives.NeverLog] = None,
) -> list[Source]:
    """One Source per file ('-' is stdin); directories expand recursively in name order; a tar
    or zip archive is one Source per member (text/archives.py), unpacked into a temp directory that is
    added to `unpacked` for the caller to remove (else it goes at exit); a member that `never_log`
    calls binary is not unpacked, and an archive named with nothing else in it is an error. Files of a
    directory that cannot be read go to `skipped` ("path: reason"); a named one is an error."""
    from pgdoctor.diagnose import walk
    from pgdoctor.diagnose.text import archives

    sources: list[Source] = []
    for path in paths:
        if path == "-":
            sources.append(Source("<stdin>", Replay(lambda: stream_chunks(sys.stdin.buffer, chunk_bytes))))
            continue
        listed = os.path.isdir(path)
        if listed:
            files, refused = walk.files_under(path)
            for folder, why in refused:
                if folder == path:
                    raise SourceError(f"cannot read {path}: {why}")
                if skipped is not None:
                    skipped.append(f"{folder}: {why}")
        elif os.path.exists(path):
            files = [path]
        elif os.path.islink(path):
            raise SourceError(f"cannot read {path}: a dangling or looping symbolic link")
        else:
            raise SourceError(f"no such file or directory: {path}")
        for f in files:
            reason = _unreadable(f, listed)
            if reason and not listed:
                raise SourceError(f"cannot read {f}: {reason}")
            if reason:  # one bad entry of a job directory must not hide the other logs
                if skipped is not None:
                    skipped.append(f"{f}: {reason}")
                continue
            # Regular files only: testing a named pipe would consume what it carries.
            archive = archives.kind(f) if os.path.isfile(f) else None
            if archive == "checkpoint" and not listed:
                raise SourceError(
                    f"cannot read {f}: a torch checkpoint (the zip torch.save writes), not a log"
                )
            if archive in ("tar", "zip"):
                got = archives.unpack(f, listed, archive, never_log)
                # Named, as a named binary file is: a dataset shard given by mistake was "no failure found".
                refusal = None if listed else got.no_log()
                if refusal:
                    archives.remove(got.directory)
                    raise SourceError(f"cannot read {f}: {refusal}")
                if unpacked is not None:
                    unpacked.append(got)
                if skipped is not None:
                    skipped.extend(got.skipped)
                sources += [
                    Source(name, functools.partial(_file_chunks, dest, chunk_bytes), dest, True)
                    for name, dest in got.members
                ]
                continue
            if os.path.isfile(f):
                sources.append(Source(f, functools.partial(_file_chunks, f, chunk_bytes), f, listed))
            else:  # a pipe the user named (`<(kubectl logs ...)`, a FIFO): read once, as stdin is
                pipe = functools.partial(stream_chunks, _open_pipe(f), chunk_bytes)
                sources.append(Source(f, Replay(pipe), None, listed))
    return sources


# How long a named pipe may stay without a process writing to it before it is an error (a FIFO
# that nothing will ever open for writing would block the open, and pgdoctor, forever).
PIPE_WRITER_WAIT_S = 10.0


def _open_pipe(path: str, wait_s: float = PIPE_WRITER_WAIT_S) -> BinaryIO:
    """The pipe at `path`, open for reading once a writer has shown up. Opened without blocking:
    poll() reports input, or a writer that came and went, and (Linux) nothing for a FIFO that has
    never had a writer. After `wait_s` with nothing reported, one non-blocking read tells a writer
    that has not written yet (EAGAIN: read on, as from stdin) from no writer at all (end of file)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror or 'cannot open'}") from None
    first = b""
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        if not poller.poll(int(wait_s * 1000)):
            try:
                first = os.read(fd, 1)
            except BlockingIOError:
                pass  # a writer holds it open and has not written yet
            else:
                if not first:
                    raise SourceError(
                        f"cannot read {path}: no process wrote to this pipe within {wait_s:g} s"
                    )
        os.set_blocking(fd, True)
        return _Prepended(first, os.fdopen(fd, "rb"))  # type: ignore[return-value]
    except BaseException:
        os.close(fd)
        raise


class _Prepended:
    """A binary stream that yields `head` (bytes already read off the pipe) before the rest."""

    def __init__(self, head: bytes, raw: BinaryIO) -> None:
        self._head, self._raw = head, raw

    def read(self, n: int = -1) -> bytes:
        if n < 0 or n > len(self._head):
            head, self._head = self._head, b""
            return head + self._raw.read(n - len(head) if n >= 0 else -1)
        head, self._head = self._head[:n], self._head[n:]
        return head


def _unreadable(path: str, listed: bool) -> Optional[str]:
    """Why a file cannot be scanned, or None. A pipe the user names (`<(kubectl logs ...)`) is
    read; one found in a directory is skipped, since nothing may ever write to it."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "a dangling symbolic link" if os.path.islink(path) else "no such file"
    except OSError as exc:
        return exc.strerror or "cannot stat"
    if listed and not stat.S_ISREG(st.st_mode):
        return "not a regular file (a FIFO, socket or device)"
    if stat.S_ISDIR(st.st_mode):
        return "a directory"
    # /dev/zero, /dev/urandom, a disk: endless or not text, never a log (a pipe or stdin is read).
    if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
        return "a device, not a log file"
    if not os.access(path, os.R_OK):
        return "permission denied"
    if stat.S_ISREG(st.st_mode):
        return undecoded(read_head(path)[:8], listed)
    return None


def text_sources(pairs: Iterable[tuple[str, str]], chunk_bytes: int = CHUNK_BYTES) -> Iterator[Source]:
    """(name, text) pairs as Sources, for callers that already hold the logs in memory."""
    for name, text in pairs:
        data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
        yield Source(name, functools.partial(_slices, data, chunk_bytes))


def _slices(data: bytes, size: int) -> Iterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i : i + size]
