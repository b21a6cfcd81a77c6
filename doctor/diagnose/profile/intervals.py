"""Interval arithmetic on sorted, disjoint [start, end) lists: union, intersection, difference.
Everything here is linear after one sort, so a rank's 10^6 kernels cost a second, not minutes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Optional

Spans = list[tuple[float, float]]


def union(spans: Iterable[tuple[float, float]]) -> Spans:
    out: Spans = []
    for s, e in sorted(spans):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def total(spans: Sequence[tuple[float, float]]) -> float:
    return sum(e - s for s, e in spans)


def intersect(a: Sequence[tuple[float, float]], b: Sequence[tuple[float, float]]) -> Spans:
    out: Spans = []
    i = j = 0
    while i < len(a) and j < len(b):
        s = max(a[i][0], b[j][0])
        e = min(a[i][1], b[j][1])
        if s < e:
            out.append((s, e))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def subtract(a: Sequence[tuple[float, float]], b: Sequence[tuple[float, float]]) -> Spans:
    out: Spans = []
    j = 0
    for s, e in a:
        while j < len(b) and b[j][1] <= s:
            j += 1
        k = j
        cur = s
        while k < len(b) and b[k][0] < e:
            if b[k][0] > cur:
                out.append((cur, b[k][0]))
            cur = max(cur, b[k][1])
            k += 1
        if cur < e:
            out.append((cur, e))
    return out


def clip(spans: Sequence[tuple[float, float]], lo: float, hi: float) -> Spans:
    return [(max(s, lo), min(e, hi)) for s, e in spans if e > lo and s < hi]


class Running:
    """The union of intervals fed in (start, end) order, kept as its total and its bounds only:
    the same sum as total(union(spans)) in constant memory, for tables streamed sorted."""

    __slots__ = ("_e", "_s", "first", "last", "total")

    def __init__(self) -> None:
        self.total = 0.0
        self.first: Optional[float] = None  # start of the union's first interval
        self.last: Optional[float] = None  # end of its last one, once closed
        self._s = self._e = 0.0

    def add(self, s: float, e: float) -> None:
        if e <= s:
            return
        if self.first is not None and s <= self._e:
            if e > self._e:
                self._e = e
            return
        if self.first is None:
            self.first = s
        else:
            self.total += self._e - self._s
        self._s, self._e = s, e

    def close(self) -> Running:
        """Adds the interval still open; call once, after the last add."""
        if self.first is not None:
            self.total += self._e - self._s
            self.last = self._e
        return self


@dataclass
class GpuTotals:
    """What a rank's GPU breakdown is computed from (microseconds), however the events were read."""

    busy: float  # union of every kept GPU event
    compute: float
    comm: float
    memory: float
    overlap: float  # communication during which compute kernels run
    window: tuple[float, float]
    kernels: int  # GPU events kept
    launched: int  # compute kernels whose launch call is known
    short: int  # of those, shorter on the GPU than their launch call


@dataclass
class CpuTotals:
    """What a rank's CPU breakdown is computed from (microseconds inside the analysed window):
    the step thread's compute and data loading, communication on any thread, the part of it not
    hidden behind that compute or loading, and the part overlapping compute."""

    compute: float
    data: float
    comm: float
    exposed: float
    overlap: float
