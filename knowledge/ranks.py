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
