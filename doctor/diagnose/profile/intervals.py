"""Interval arithmetic on sorted, disjoint [start, end) lists: union, intersection, difference.
Everything here is linear after one sort, so a rank's 10^6 kernels cost a second, not minutes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

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
