"""Scanning one big plain file with several processes.

The anchor search is the only per-byte work and CPython cannot run it on two threads at once
(the literal search holds the GIL), so a large regular file is cut into byte ranges that worker
processes search independently. Each worker returns only the offsets of its hits and newline
counts; the parent then reads a bounded slice around each hit and cuts the same windows as the
sequential scanner, with exact line numbers. Memory stays flat in every process (8 MiB reads).
Gzip files and stdin are read sequentially.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Optional

from pgdoctor.diagnose.text.scan import (
    _ANCHOR_RES,
    ANCHORS,
    HISTORY,
    LOOKAHEAD,
    MAX_HITS_PER_SOURCE,
    MAX_LINE,
    WORTH,
    ScanStats,
    Window,
    _window,
    count_newlines,
)

MIN_PARALLEL_BYTES = 64 << 20
READ_BYTES = 8 << 20
_OVERLAP = max(len(a) for a in ANCHORS) - 1


def default_workers(size: int) -> int:
    env = os.environ.get("PGDOCTOR_SCAN_WORKERS")
    if env is not None:
        try:
            return max(1, int(env))
        except ValueError:
            return 1
    if size < MIN_PARALLEL_BYTES or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(4, os.cpu_count() or 1))


def _scan_range(path: str, start: int, end: int) -> tuple[list[tuple[int, int]], int]:
    """Hits (absolute offset, newlines in [start, offset)) whose match starts in [start, end), and
    the newlines in [start, end)."""
    hits: list[tuple[int, int]] = []
    newlines = 0
    with open(path, "rb") as fh:
        fh.seek(start)
        pos = start
        while pos < end:
            want = min(READ_BYTES, end - pos)
            block = fh.read(want + _OVERLAP)
            if not block:
                break
            limit = min(want, len(block))
            found: set[int] = set()
            for rx in _ANCHOR_RES:
                for m in rx.finditer(block):
                    if m.start() < limit:
                        found.add(m.start())
            counted, at, line_end = newlines, 0, -1
            for off in sorted(found):
                if off < line_end:
                    continue  # one hit per line
                le = block.find(b"\n", off)
                line_end = le if le >= 0 else len(block)
                ls = block.rfind(b"\n", max(0, off - MAX_LINE), off) + 1
                if le >= 0 and not WORTH.search(block, max(ls, off - MAX_LINE // 4), min(le, off + MAX_LINE)):
                    continue  # the parent would drop it too; a line cut by the block end is kept
                if len(hits) >= MAX_HITS_PER_SOURCE:
                    break
                counted += count_newlines(block, at, off)
                at = off
                hits.append((pos + off, counted))
            newlines += count_newlines(block, 0, limit)
            pos += limit
            fh.seek(pos)
    return hits, newlines


def scan_file(path: str, workers: int, stats: Optional[ScanStats] = None) -> Iterator[Window]:
    """Windows around every hit of a regular file, in file order, as scan.scan_chunks yields them."""
    stats = stats if stats is not None else ScanStats()
    size = os.path.getsize(path)
    step = -(-size // workers)
    ranges = [(i, min(size, i + step)) for i in range(0, size, step)] or [(0, 0)]
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=len(ranges), mp_context=ctx) as pool:
        results = list(pool.map(_scan_range, [path] * len(ranges), [r[0] for r in ranges], [r[1] for r in ranges]))
    stats.bytes = size
    base = 0
    located: list[tuple[int, int]] = []
    for hits, newlines in results:
        located.extend((off, base + n) for off, n in hits)
        base += newlines
    total_newlines = base
    with open(path, "rb") as fh:
        if size:
            fh.seek(size - 1)
            last = fh.read(1)
        else:
            last = b"\n"
        stats.lines = total_newlines + (0 if last == b"\n" else 1)
        next_free = -1
        for off, nl_before in located:
            if off < next_free:
                continue
            if stats.hits >= MAX_HITS_PER_SOURCE:
                break
            lo = max(0, off - HISTORY)
            fh.seek(lo)
            buf = fh.read(off - lo + LOOKAHEAD)
            cut = 0
            if lo > 0:  # start the slice at a line start, as the sequential scanner's buffer does
                nl = buf.find(b"\n", 0, off - lo)
                cut = nl + 1 if nl >= 0 else 0
            buf = buf[cut:]
            win, free = _window(buf, off - lo - cut, nl_before + 1, 0)
            next_free = lo + cut + free
            if win is None:
                continue
            stats.hits += 1
            yield win
