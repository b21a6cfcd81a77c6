"""Find the few lines worth reading in a stream of byte chunks.

This is the only code that touches every byte, so it never runs a per-line regex: it searches
each big chunk for a short list of literal anchors (CPython's fast substring search, several
GB/s each) and cuts a bounded window of raw lines around each hit. Everything after this works
on windows only. Anchors are deliberately loose (`rror` matches Error and error); the category
modules decide what a hit means.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Optional

# Literal anchors and the formats that need them. A format not containing one of these is
# invisible to diagnose, so every category module's patterns must contain an anchor.
ANCHORS: tuple[bytes, ...] = (
    b"rror",  # exceptions (...Error:), "CUDA error", "unhandled system error", ChildFailedError, "Bus error"
    b"WARN",  # NCCL WARN lines (NCCL prints every failure it sees at WARN)
    b"imeout",  # watchdog "collective operation timeout", "Timeout(ms)=", "monitor thread timeout"
    b"imed out",  # gloo "Timed out waiting", heartbeat monitor, store and socket timeouts
    b"ut of memory",  # CUDA OOM; kernel "Out of memory: Killed process"
    b"xception",  # exceptions whose type does not end in Error; "terminated with exception"
    b"SIG",  # launcher messages naming SIGKILL, SIGSEGV, SIGABRT, SIGTERM
    b"Kill",  # kernel "Killed process", shell "Killed", launcher "Killing subprocess", OOMKilled
    b"VRM",  # NVRM: Xid ..., NVRM: GPU ... has fallen off the bus (kernel log)
    b"xitcode",  # torchrun "failed (exitcode: -9)" and its failure table
    b"ation fault",  # "Segmentation fault" (shell, mpirun, faulthandler)
    b"core dumped",  # shell "Illegal instruction (core dumped)", "Aborted (core dumped)"
)
# Each anchor is one pass of CPython's literal search over the chunk (1.5-3 GB/s); an alternation
# of all of them in one regex is several times slower, because sre then tries a match at almost
# every byte. So: few anchors, one pass each, and the category modules decide what a hit means.
_ANCHOR_RES = tuple(re.compile(re.escape(a)) for a in ANCHORS)

LINES_BEFORE = 24
LINES_AFTER = 48
BYTES_BEFORE = 16 << 10
BYTES_AFTER = 32 << 10
# A line longer than this is cut into pieces around each hit: a 100 MB line costs no more
# than a short one.
MAX_LINE = 64 << 10
LOOKAHEAD = BYTES_AFTER + MAX_LINE
HISTORY = BYTES_BEFORE + MAX_LINE
MAX_HITS_PER_SOURCE = 100_000
# A hit line must also show one of these before a window is cut around it: the anchors are
# deliberately loose ("rror" is in "val_error"), and a log that prints a metric named like that on
# every step must not spend its window budget on it. Every category pattern passes this filter.
WORTH = re.compile(rb"Error\b|Exception\b|Interrupt\b|\berror\b|\bexception\b|NCCL WARN|[Tt]imed out|\btimeout\b|"
                   rb"Timeout|out of memory|SIG[A-Z]{3,4}|Kill|NVRM|exitcode|Segmentation fault|core dumped")


try:  # numpy counts newlines ~4x faster than bytes.count; optional
    import numpy as _np
except ImportError:  # pragma: no cover - numpy is not a dependency
    _np = None  # type: ignore[assignment]


def count_newlines(buf: bytes, start: int = 0, end: int = -1) -> int:
    end = len(buf) if end < 0 else end
    if _np is None or end - start < (1 << 20):
        return buf.count(b"\n", start, end)
    a = _np.frombuffer(buf, dtype=_np.uint8, count=end - start, offset=start)
    total = 0
    for i in range(0, len(a), 1 << 22):
        total += int(_np.count_nonzero(a[i:i + (1 << 22)] == 10))
    return total


@dataclass(frozen=True)
class Window:
    """Raw lines around one hit. `first_line` is the 1-based line number of lines[0];
    `hit` indexes the hit line."""

    first_line: int
    lines: tuple[bytes, ...]
    hit: int

    @property
    def hit_line(self) -> int:
        return self.first_line + self.hit


def _hit_positions(buf: bytes, start: int, end: int) -> list[int]:
    found: set[int] = set()
    for rx in _ANCHOR_RES:
        for m in rx.finditer(buf, start, end):
            found.add(m.start())
    return sorted(found)


def _window(buf: bytes, pos: int, line_no: int, floor: int) -> tuple[Optional[Window], int]:
    """The window around the hit at `pos` on line `line_no` (None when the hit line is not worth
    one); and the position where the next hit may start (the end of the hit line, so one line
    gives one window)."""
    ls = buf.rfind(b"\n", floor, pos) + 1 if pos > floor else floor
    if ls < floor:
        ls = floor
    le = buf.find(b"\n", pos)
    if le < 0:
        le = len(buf)
    hs, he = ls, le
    if he - hs > MAX_LINE:  # a giant line: keep a slice around the hit only
        hs = max(ls, pos - MAX_LINE // 4)
        he = min(le, pos + 3 * MAX_LINE // 4)
    if not WORTH.search(buf, hs, he):
        return None, le + 1
    lines: list[bytes] = [buf[hs:he]]
    # lines before, bounded in count and bytes
    before: list[bytes] = []
    cur = ls
    lo = max(floor, ls - BYTES_BEFORE)
    while len(before) < LINES_BEFORE and cur > lo:
        prev = buf.rfind(b"\n", lo, cur - 1) + 1
        if prev <= 0 and lo > 0:
            break
        before.append(buf[max(prev, lo):cur - 1])
        cur = prev
    before.reverse()
    after: list[bytes] = []
    cur = le + 1
    hi = min(len(buf), le + 1 + BYTES_AFTER)
    while len(after) < LINES_AFTER and cur < hi:
        nxt = buf.find(b"\n", cur, hi)
        if nxt < 0:
            after.append(buf[cur:hi])
            break
        after.append(buf[cur:nxt])
        cur = nxt + 1
    return Window(line_no - len(before), (*before, *lines, *after), len(before)), le + 1


@dataclass
class ScanStats:
    bytes: int = 0
    lines: int = 0
    hits: int = 0


def scan_chunks(chunks: Iterable[bytes], stats: Optional[ScanStats] = None) -> Iterator[Window]:
    """Windows around every hit, in stream order, with exact line numbers. `stats` gets the
    byte and line counts of the whole stream when it ends."""
    stats = stats if stats is not None else ScanStats()
    buf = b""
    base_line = 1  # line number of buf[0]
    scan_from = 0
    hits = 0
    it = iter(chunks)
    eof = False
    while not eof:
        try:
            chunk = next(it)
        except StopIteration:
            chunk = b""
            eof = True
        if chunk:
            stats.bytes += len(chunk)
            buf = buf + chunk if buf else chunk
            if len(buf) - scan_from < LOOKAHEAD * 2:
                continue
        limit = len(buf) if eof else len(buf) - LOOKAHEAD
        if limit > scan_from:
            counted_pos, counted_line = 0, base_line
            next_free = scan_from
            for pos in _hit_positions(buf, scan_from, limit):
                if pos < next_free:
                    continue
                if hits >= MAX_HITS_PER_SOURCE:
                    break
                counted_line += count_newlines(buf, counted_pos, pos)
                counted_pos = pos
                win, next_free = _window(buf, pos, counted_line, 0)
                if win is None:
                    continue
                hits += 1
                stats.hits = hits
                yield win
            scan_from = max(limit, next_free)
        if eof:
            stats.lines = base_line - 1 + count_newlines(buf) + (1 if buf and not buf.endswith(b"\n") else 0)
            return
        # Keep a line-aligned history before scan_from for the next windows' context.
        keep = max(0, scan_from - HISTORY)
        if keep:
            nl = buf.find(b"\n", keep, scan_from)
            keep = nl + 1 if nl >= 0 else keep
            base_line += count_newlines(buf, 0, keep)
            buf = buf[keep:]
            scan_from -= keep
