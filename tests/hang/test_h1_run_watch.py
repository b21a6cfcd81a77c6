"""h1: `pgdoctor run`'s watch while a stall snapshot is being taken. On a loaded node the snapshot
of a long silent checkpoint took seconds, the job stepped again meanwhile, and its step lines were
dropped as "what reading the ranks makes them print": the run of a job that recovered and exited
0 then reported the snapshot's hang as its root cause (tests/hang/test_run.py's silent-pause test
failed that way under load). Pure: the pump reads a byte stream, no process."""

from __future__ import annotations

import io
import threading

from pgdoctor.hang.supervise import Watch, _pump


def pump(watch: Watch, text: str) -> None:
    src = io.BufferedReader(io.BytesIO(text.encode()))  # type: ignore[arg-type]
    _pump(src, io.BytesIO(), io.BytesIO(), watch, threading.Lock())


def test_a_step_seen_during_a_snapshot_is_progress_after_it() -> None:
    watch = Watch(last_progress=0.0, last_output=0.0, last_snapshot=0.0)
    pump(watch, "rank 0 step 0\nrank 1 step 0\n")  # before the stall
    watch.last_progress, watch.armed = 0.0, False
    watch.snapshotting, watch.last_snapshot = True, 1.0  # a snapshot began at 1.0
    pump(watch, "[W1207 01:53:50.032 Utils.hpp:137] Warning: TORCH_NCCL_TRACE_BUFFER_SIZE is deprecated\n")
    assert watch.last_progress == 0.0 and not watch.armed  # what reading the ranks prints is not
    pump(watch, "rank 0 step 1\n")
    assert watch.last_progress > watch.last_snapshot and watch.armed


def test_a_new_line_during_a_snapshot_without_a_step_is_not_progress() -> None:
    watch = Watch(last_progress=0.0, last_output=0.0)
    watch.snapshotting = True
    pump(watch, "saving checkpoint\nloss 2.31\n")
    assert watch.last_progress == 0.0 and watch.progress_lines == 2


def test_a_later_snapshot_without_a_hang_does_not_hide_the_recovery(tmp_path) -> None:
    """hang-1 named a culprit at t=1, the job stepped at t=2, and hang-2 at t=3 caught its ranks
    exiting (no stack, no culprit): the job recovered after its hang, so an exit 0 has no root cause."""
    from pgdoctor.hang.supervise import Supervisor, final_report

    sup = Supervisor(["true"], 2.0, str(tmp_path / "ev"))
    try:
        (tmp_path / "ev").mkdir()
        w = sup.watch
        w.snapshots = [{"dir": "hang-1", "culprit": "rank 0 ..."}, {"dir": "hang-2", "culprit": None}]
        w.last_hang_snapshot, w.last_progress, w.last_snapshot = 1.0, 2.0, 3.0
        report = final_report(sup, 0, 1.0)
    finally:
        import shutil

        shutil.rmtree(sup.live_dir, ignore_errors=True)
    assert report.meta["progress"]["recovered_after_snapshot"] is True
