"""A world of 100,000 ranks (WORLD_SIZE is whatever the environment says): rank lists are ranges,
the multi-node merge is linear, and a missing majority is one finding, not one per rank."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from pgdoctor.checks import load_all
from pgdoctor.checks.base import Config
from pgdoctor.engine.multinode import Budget, _merge
from pgdoctor.engine.runner import Selection
from pgdoctor.knowledge.ranks import count_label, rank_ranges, rank_runs
from pgdoctor.model import Snapshot

load_all()


def test_rank_ranges_read_as_people_write_them() -> None:
    assert rank_ranges([5, 0, 1, 2, 3, 7, 8, 9, 9]) == "0-3, 5, 7-9"
    assert count_label(range(1021)) == "ranks 0-1020 (1021)"
    assert count_label([7]) == "rank 7"
    assert rank_ranges(range(0, 40, 2), max_runs=3) == "0, 2, 4 and 17 more"


@given(st.sets(st.integers(min_value=0, max_value=5000), max_size=300))
def test_rank_runs_cover_exactly_the_ranks(ranks: set[int]) -> None:
    runs = rank_runs(ranks)
    assert {r for a, b in runs for r in range(a, b + 1)} == ranks
    assert all(b1 + 1 < a2 for (_, b1), (a2, _) in zip(runs, runs[1:]))  # maximal runs, in order


def test_a_hundred_thousand_missing_ranks_are_one_finding() -> None:
    size = 100_000
    node0 = {"rank": 0, "host": "n0", "address": "10.0.0.1", "facts": {}}
    snap = Snapshot("n0", time.time(), "0", "quick", ())
    missing = list(range(1, size))
    expected = {r: f"n{r}" for r in missing}
    report = _merge(
        snap,
        [node0],
        missing,
        expected,
        None,
        size,
        Config(),
        Selection(only=("net",)),
        Budget(time.monotonic(), 10.0),
        {},
    )
    net114 = [f for f in report.findings if f.code == "NET114"]
    assert len(net114) == 1
    (f,) = net114
    assert "ranks 1-99999 (99999) of 100000" in f.message and f.facts["count"] == 99_999
    assert f.scope.host is None and f.scope.rank is None  # the cluster's finding, not rank 0's host
    assert report.meta["multinode"]["missing"] == missing


def test_a_few_missing_ranks_keep_a_finding_each_with_their_host() -> None:
    nodes = [{"rank": r, "host": f"n{r}", "address": f"10.0.0.{r}", "facts": {}} for r in (0, 1, 3)]
    snap = Snapshot("n0", time.time(), "0", "quick", ())
    report = _merge(
        snap,
        nodes,
        [2],
        {2: "n2"},
        None,
        4,
        Config(),
        Selection(only=("net",)),
        Budget(time.monotonic(), 10.0),
        {},
    )
    (f,) = [f for f in report.findings if f.code == "NET114"]
    assert f.scope.rank == 2 and f.scope.host == "n2" and "3 of 4 ranks arrived" in f.message
