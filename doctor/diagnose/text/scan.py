"""Find the few lines worth reading in a stream of byte chunks.

This is the only code that touches every byte, so it never runs a per-line regex: one search
for a short list of literal anchors over each big chunk (`engine.py`: Hyperscan when installed,
else CPython's literal search) finds the hit lines, and a bounded window of raw lines is cut
around each hit worth reading (`budget.py` decides which repeats are only counted). Everything
after this works on windows only. Anchors are deliberately loose (`rror` matches Error and
error); the category modules decide what a hit means.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Callable, Optional

from pgdoctor.diagnose.event import LINES_AFTER, LINES_BEFORE
from pgdoctor.diagnose.rules import ANCHORS as RULE_ANCHORS
from pgdoctor.diagnose.rules import WORTH
from pgdoctor.diagnose.text import shapes
from pgdoctor.diagnose.text.budget import MAX_READS, HitBudget
from pgdoctor.diagnose.text.engine import finder, line_test
from pgdoctor.diagnose.text.normalize import strip_ansi
from pgdoctor.model import lazy_re

# The literal anchors and the line test come from the rule modules' signature rows (rules/__init__.py):
# a format no row declares is invisible to diagnose. The markers of an encoded paste (shapes.py) are
# searched in the same pass: such a line is judged on its decoded text, where the rows' anchors are.
ANCHORS: tuple[bytes, ...] = RULE_ANCHORS + tuple(m for m in shapes.MARKERS if m not in RULE_ANCHORS)

BYTES_BEFORE = 16 << 10
BYTES_AFTER = 32 << 10
# A line longer than this is cut into pieces around each hit: a 100 MB line costs no more
# than a short one.
MAX_LINE = 64 << 10
LOOKAHEAD = BYTES_AFTER + MAX_LINE + 1
HISTORY = BYTES_BEFORE + MAX_LINE + 1
_PEEK = 8 << 10
# Windows read in full per source; past it only new kinds of line are read (budget.py), and the
# report says how many were counted instead.
MAX_HITS_PER_SOURCE = MAX_READS
_OVERLAP = max(len(a) for a in ANCHORS) - 1
# (start, end) stream offsets -> sorted stream offsets of the anchors that start in [start, end)
Positions = Callable[[int, int], list[int]]


def anchor_positions(buf: bytes, start: int = 0, end: int = -1) -> list[int]:
    """Sorted start offsets of the anchors in buf[start:end], by the chosen engine."""
    return finder(ANCHORS, lazy_re.is_caseless())[1](buf, start, len(buf) if end < 0 else end)


def worth(buf: bytes, start: int, end: int, whole: bool) -> bool:
    """Whether WORTH matches in buf[start:end]; `whole`: that is a whole line (the fast engine).
    A line that carries a marker of an encoded paste or a colour escape is also tried decoded
    (shapes.decode, strip_ansi): it is worth reading when that text holds a row's anchor and
    matches WORTH."""
    if whole:
        if line_test(WORTH)[1](buf, start, end):
            return True
    elif WORTH.search(buf, start, end) is not None:
        return True
    # (colours: "\x1b[31mERROR" fails WORTH's "\bERROR\b" until the escape is gone)
    if buf.find(b"\x1b[", start, end) >= 0 or _marked(buf, start, end):
        return _worth_decoded(buf[start:end])
    return False


def _marked(buf: bytes, start: int, end: int) -> bool:
    # memchr for the markers' first bytes before the expression: most lines hold none of them
    if all(buf.find(b, start, end) < 0 for b in shapes.HEADS):
        return False
    return shapes.MARKED.search(buf, start, end) is not None


@functools.cache
def _lower_rule_anchors() -> tuple[bytes, ...]:
    """The rows' anchors lower-cased, for a caseless reading (model/lazy_re.caseless, text/recase.py): made
    the first time one asks, not at the start of every call."""
    return tuple(dict.fromkeys(a.lower() for a in RULE_ANCHORS))


def _worth_decoded(line: bytes) -> bool:
    text = shapes.decode(strip_ansi(line.decode("utf-8", "replace"))).encode("utf-8", "replace")
    if lazy_re.is_caseless():
        low = text.lower()
        return any(a in low for a in _lower_rule_anchors()) and WORTH.search(text) is not None
    return any(a in text for a in RULE_ANCHORS) and WORTH.search(text) is not None


def engine_name() -> str:
    return finder(ANCHORS)[0]


def count_newlines(buf: bytes, start: int = 0, end: int = -1) -> int:
    return buf.count(b"\n", start, len(buf) if end < 0 else end)


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


def hit_line_bounds(buf: bytes, pos: int, at_start: bool, eof: bool) -> tuple[int, int, int, int]:
    """(line start, line end, slice start, slice end) of the line holding `pos`. The line's ends
    are looked for within MAX_LINE of the hit only, so the answer never depends on how much of
    the stream is in the buffer: -1 for an end further away (a giant line). The slice is the
    whole line, or a piece of MAX_LINE bytes around the hit of a giant line."""
    lo = max(0, pos - MAX_LINE)
    nl = buf.rfind(b"\n", lo, pos)
    ls = nl + 1 if nl >= 0 else (0 if lo == 0 and at_start else -1)
    le = buf.find(b"\n", pos, pos + MAX_LINE)
    if le < 0 and eof and len(buf) <= pos + MAX_LINE:
        le = len(buf)
    if ls >= 0 and le >= 0 and le - ls <= MAX_LINE:
        return ls, le, ls, le
    hs = max(ls, pos - MAX_LINE // 4)
    he = min(le if le >= 0 else len(buf), pos + 3 * MAX_LINE // 4)
    return ls, le, hs, he


def _cut(buf: bytes, ls: int, le: int, hs: int, he: int, line_no: int, at_start: bool) -> Window:
    """The window of lines around the hit line [hs, he): up to LINES_BEFORE whole lines within
    BYTES_BEFORE before its start `ls` (a line cut by that bound is left out, unless it starts the
    stream), up to LINES_AFTER lines within BYTES_AFTER after its end `le`. A giant line whose
    start or end is unknown (-1) has no lines on that side."""
    # A small slice first: when it already holds all the lines wanted, whole, the result is the
    # same as from the full byte bound, without copying 32 KiB per hit of a hit-dense log.
    before: list[bytes] = []
    if ls > 0:
        lo = max(0, ls - BYTES_BEFORE)
        parts = buf[max(lo, ls - 1 - _PEEK) : ls - 1].rsplit(b"\n", LINES_BEFORE)
        if len(parts) <= LINES_BEFORE and ls - 1 - _PEEK > lo:
            parts = buf[lo : ls - 1].rsplit(b"\n", LINES_BEFORE)
        before = parts if len(parts) <= LINES_BEFORE and lo == 0 and at_start else parts[1:]
    after: list[bytes] = []
    if le >= 0:
        hi = min(len(buf), le + 1 + BYTES_AFTER)
        after = buf[le + 1 : min(hi, le + 1 + _PEEK)].split(b"\n", LINES_AFTER)
        if len(after) <= LINES_AFTER and le + 1 + _PEEK < hi:
            after = buf[le + 1 : hi].split(b"\n", LINES_AFTER)
        if len(after) > LINES_AFTER or not after[-1]:
            after.pop()
    return Window(line_no - len(before), (*before, buf[hs:he], *after), len(before))


@dataclass
class ScanStats:
    bytes: int = 0
    lines: int = 0
    hits: int = 0  # windows read
    budget: HitBudget = field(default_factory=lambda: HitBudget(MAX_HITS_PER_SOURCE))


def scan_chunks(
    chunks: Iterable[bytes], stats: Optional[ScanStats] = None, positions: Optional[Positions] = None
) -> Iterator[Window]:
    """Windows around every hit, in stream order, with exact line numbers. `stats` gets the
    byte and line counts of the whole stream when it ends. `positions(start, end)` gives the
    anchor offsets in [start, end) of the stream (default: search the buffer); the parallel
    scanner passes the offsets its workers found, so both cut the same windows."""
    stats = stats if stats is not None else ScanStats()
    budget = stats.budget
    buf = b""
    base_line = 1  # line number of buf[0]
    base_off = 0  # stream offset of buf[0]
    scan_from = 0
    skip_line = False
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
            if positions is None:  # an anchor that starts before limit may end after it
                found = anchor_positions(buf, scan_from, min(len(buf), limit + _OVERLAP))
                while found and found[-1] >= limit:
                    found.pop()
            else:
                found = [p - base_off for p in positions(scan_from + base_off, limit + base_off)]
            counted_pos, counted_line = 0, base_line
            next_free = scan_from
            if skip_line:  # the giant line of the last hit goes on: no second window for it
                nl = buf.find(b"\n", scan_from, limit)
                skip_line = nl < 0
                next_free = limit if skip_line else nl + 1
            at_start = base_off == 0
            for pos in found:
                if pos < next_free:
                    continue  # one window per line: its first anchor
                counted_line += buf.count(b"\n", counted_pos, pos)
                counted_pos = pos
                ls, le, hs, he = hit_line_bounds(buf, pos, at_start, eof)
                if le >= 0:
                    next_free = le + 1
                else:
                    nl = buf.find(b"\n", pos, limit)
                    skip_line = nl < 0
                    next_free = limit if skip_line else nl + 1
                if worth(buf, hs, he, hs == ls and he == le) and budget.admit(buf[hs:he], counted_line):
                    stats.hits += 1
                    yield _cut(buf, ls, le, hs, he, counted_line, at_start)
            scan_from = max(limit, next_free)
        if eof:
            stats.lines = base_line - 1 + count_newlines(buf) + (1 if buf and not buf.endswith(b"\n") else 0)
            return
        # Keep the history the next windows' context may need (hit_line_bounds looks MAX_LINE
        # back, _cut BYTES_BEFORE further).
        keep = max(0, scan_from - HISTORY)
        if keep:
            base_line += count_newlines(buf, 0, keep)
            buf = buf[keep:]
            base_off += keep
            scan_from -= keep
