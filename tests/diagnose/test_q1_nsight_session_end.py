"""Nsight Systems closes the NVTX ranges still open when the session stops at the session's stop
time: pgdoctor's export reader took them as ranges that ended, so a hung job's unfinished step
became a step of 12 s and the ranks' "end". A range ending exactly at the session's end
(ANALYSIS_DETAILS: stopTime - startTime on the events' clock, or stopTime) is still open at the
end, left out as one with no end is. From the real export of a hung 3-rank job
(tests/fixtures/nsys/cpu_timeout_rank2_3ranks.sqlite, nsys 2022.4: every rank's `step n=2`, and
ranks 0 and 1's `bwd`, end at the session's end)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from pgdoctor.diagnose.profile.analyze import analyze_traces
from pgdoctor.diagnose.profile.nsight import closed_ranges

HUNG = Path(__file__).resolve().parents[1] / "fixtures" / "nsys" / "cpu_timeout_rank2_3ranks.sqlite"


def _at_session_end(path: Path) -> list[str]:
    con = sqlite3.connect(path)
    try:
        start, stop = con.execute("SELECT startTime, stopTime FROM ANALYSIS_DETAILS").fetchone()
        rows = con.execute(
            "SELECT coalesce(text, (SELECT value FROM StringIds WHERE id = textId)) FROM NVTX_EVENTS "
            "WHERE end = ?",
            (stop - start,),
        ).fetchall()
        return sorted(str(r[0]) for r in rows)
    finally:
        con.close()


def test_the_export_closes_open_ranges_at_the_session_end() -> None:
    # the premise, from the real export: the unfinished step of each rank ends at the session's end
    assert _at_session_end(HUNG) == ["bwd", "bwd", "step n=2", "step n=2", "step n=2"]
    con = sqlite3.connect(HUNG)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        cond = closed_ranges(con, tables)
        ended = con.execute(f"SELECT count(*) FROM NVTX_EVENTS e WHERE {cond}").fetchone()[0]
        total = con.execute("SELECT count(*) FROM NVTX_EVENTS e WHERE e.end IS NOT NULL").fetchone()[0]
    finally:
        con.close()
    assert total - ended == 5


def test_a_range_open_at_the_session_end_is_no_step_that_ended() -> None:
    traces, _ = analyze_traces([str(HUNG)])
    # only step n=1 ended on each rank: step n=2 was still open when the session stopped
    assert {r: s["steps"] for r, s in traces["ranks"].items()} == {"0": 1, "1": 1, "2": 1}
    stop = traces["stopped"]
    assert stop["ranks"] == [2] and stop["others"] == [0, 1]
    # the others' last activity is their all_reduce that gave up waiting (22.74 s), not the
    # session's end (29.93 s), and no step of 12 s stands for a step that never ended
    assert 4.9 < stop["early_s"] < 5.2, stop
    assert stop["others_last_step_ms"] < 1000.0, stop


def test_without_the_session_table_the_ranges_are_read_as_before(tmp_path: Path) -> None:
    """An export without ANALYSIS_DETAILS gives no session end: only ranges without an end are open."""
    copy = tmp_path / "no_details.sqlite"
    shutil.copy(HUNG, copy)
    con = sqlite3.connect(copy)
    con.execute("DROP TABLE ANALYSIS_DETAILS")
    con.commit()
    con.close()
    traces, _ = analyze_traces([str(copy)])
    assert {r: s["steps"] for r, s in traces["ranks"].items()} == {"0": 2, "1": 2, "2": 2}
