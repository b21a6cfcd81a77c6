"""Flight-recorder times are each node's own wall clock: a node whose clock runs ahead must not make
its ranks look late (doctor/diagnose/flight/clocks.py). Dumps from tests/helpers/fr_unseen3.py's
simulator, in torch 2.8+'s pickle format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pgdoctor.diagnose.api import diagnose_paths
from pgdoctor.diagnose.flight.clocks import clock_offsets
from pgdoctor.diagnose.flight.dump import read_dumps
from pgdoctor.diagnose.flight.entries import table_of
from tests.helpers.fr_unseen3 import Case, Rank, exp, run, world, world_steps

S = 1_000_000_000
TIMES = ("time_created_ns", "time_discovered_started_ns", "time_discovered_completed_ns")


def _stalled(ranks: dict[int, Rank]) -> None:
    """Every rank entered the last all_reduce and none completed it."""
    for rk in ranks.values():
        rk.entries[-1].update(state="started", retired=False, time_discovered_completed_ns=None)
        rk.entries[-1].pop("duration_ms", None)


def _shift(ranks: dict[int, Rank], who: set[int], by_s: float, last_only: bool = False) -> None:
    for r in who:
        for e in ranks[r].entries[-1:] if last_only else ranks[r].entries:
            for k in TIMES:
                if e.get(k):
                    e[k] += int(by_s * S)


def _job(tmp: Path, edit: Any, n: int = 4) -> Path:
    case = Case("clocks", run(world(n), world_steps(n, 10)), "2.10", exp(None), edit=edit)
    case.write(str(tmp))
    return tmp


def _root(d: Path) -> Any:
    return next(f for f in diagnose_paths([], [str(d)]).findings if f.severity.value == "fail")


def test_a_node_whose_clock_runs_ahead_is_not_a_late_rank(tmp_path: Path) -> None:
    """All four ranks entered seq 10 together and it stalled; rank 3's node clock is 15 min
    ahead. Read as written, rank 3 'entered 900 s after the first rank, past the 600 s timeout'."""
    d = _job(tmp_path, lambda rs: (_stalled(rs), _shift(rs, {3}, 900)))
    root = _root(d)
    assert (root.code, root.facts["kind"], root.facts["culprit_ranks"]) == (
        "RUN283",
        "not_completed",
        [0, 1, 2, 3],
    )
    offsets = table_of(read_dumps([str(d)])).offset_ns
    assert list(offsets) == [3] and abs(offsets[3] - 900 * S) < S


def test_a_rank_that_was_late_is_still_late_on_a_node_whose_clock_is_behind(tmp_path: Path) -> None:
    """Rank 3 entered seq 10 700 s after its peers (past their 600 s timeout), and its node's clock
    runs 900 s behind: read as written it entered first; on one clock it is the late one."""
    d = _job(tmp_path, lambda rs: (_stalled(rs), _shift(rs, {3}, 700, last_only=True), _shift(rs, {3}, -900)))
    root = _root(d)
    assert (root.code, root.facts["kind"], root.facts["culprit_ranks"]) == ("RUN281", "late", [3])


def test_offsets_need_three_clocks_and_ignore_the_watchdogs_noise(tmp_path: Path) -> None:
    two = _job(tmp_path / "two", lambda rs: _shift(rs, {1}, 900), n=2)
    assert table_of(read_dumps([str(two)])).offset_ns == {}  # which of two clocks is off is unknown
    noise = _job(tmp_path / "noise", lambda rs: _shift(rs, {2}, 1.5))
    assert table_of(read_dumps([str(noise)])).offset_ns == {}
    assert clock_offsets({}) == {}
