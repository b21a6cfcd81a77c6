"""Rank lists as people read them: runs of consecutive ranks as ranges, so that a job of a
hundred thousand ranks gives one short line, never a list of every rank."""

from __future__ import annotations

from collections.abc import Iterable


def rank_runs(ranks: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted, de-duplicated ranks as (first, last) runs of consecutive ranks."""
    runs: list[tuple[int, int]] = []
    for r in sorted(set(ranks)):
        if runs and r == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], r)
        else:
            runs.append((r, r))
    return runs


def _word(first: int, last: int) -> str:
    return f"{first}-{last}" if last > first else str(first)


def run_words(ranks: Iterable[int]) -> list[str]:
    """['0-3', '5', '7-9']: each run of consecutive ranks as one word."""
    return [_word(a, b) for a, b in rank_runs(ranks)]


def rank_ranges(ranks: Iterable[int], max_runs: int = 12) -> str:
    """'0-3, 5, 7-99999': at most `max_runs` runs, then how many ranks are left unnamed."""
    runs = rank_runs(ranks)
    shown = [_word(a, b) for a, b in runs[:max_runs]]
    rest = sum(b - a + 1 for a, b in runs[max_runs:])
    return ", ".join(shown) + (f" and {rest} more" if rest else "")


def count_label(ranks: Iterable[int], max_runs: int = 12) -> str:
    """'ranks 0-1020 (1021)' / 'rank 7'."""
    uniq = set(ranks)
    if len(uniq) == 1:
        return f"rank {next(iter(uniq))}"
    return f"ranks {rank_ranges(uniq, max_runs)} ({len(uniq)})"


# Bounds on numbers read from inputs (file names, dumps, log lines). A number past them is not
# a rank or a pid but a timestamp, a typo or an attack; it is dropped where it is parsed, so no
# analysis builds a range, a set or a loop over an input's span.
MAX_RANK = (1 << 20) - 1  # 1,048,575: ten times the largest jobs run today
MAX_PID = 1 << 22  # Linux's PID_MAX_LIMIT (pid_max can be set no higher)
# Ranks spawned on one host (--nproc), each a Python process with torch (~300 MB): more is a typo
# that would fork the host to its knees, not a measurement. A larger world runs under a launcher.
MAX_LOCAL_RANKS = 256


def bounded(value: object, limit: int = MAX_RANK) -> int | None:
    """`value` as a number in 0..limit, else None: booleans, floats, negative numbers, digit
    strings longer than the limit's own and anything past `limit` are not ranks (or pids)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        s = value.strip()
        if not s.isdigit() or not s.isascii() or len(s) > len(str(limit)):
            return None
        value = int(s)
    if not isinstance(value, int) or not 0 <= value <= limit:
        return None
    return value


def missing_ranks(seen: Iterable[int], world: int) -> list[int]:
    """The ranks of 0..world-1 that are not in `seen`, sorted; [] when `world` is no job's size (0,
    negative, or more than MAX_RANK + 1 ranks: a mangled line's forty nines, never a world to walk)."""
    if not 0 < world <= MAX_RANK + 1:
        return []
    have = set(seen)
    return [r for r in range(world) if r not in have]


def span_gaps(values: Iterable[int], limit: int) -> list[int] | None:
    """The numbers missing inside the span of `values` (sorted), or None when there are more
    than `limit` of them. Linear in the values given, never in their span: 0 and 10**30 cost
    what two values cost."""
    gaps: list[int] = []
    prev: int | None = None
    for v in sorted(set(values)):
        if prev is not None and v - prev > 1:
            if len(gaps) + (v - prev - 1) > limit:
                return None
            gaps.extend(range(prev + 1, v))  # at most `limit` numbers in all
        prev = v
    return gaps
