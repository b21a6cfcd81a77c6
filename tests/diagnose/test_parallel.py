"""Work beside the parent in a forked process (text/parallel.beside): the result comes back,
errors surface in the parent, the child never outlives the context and never writes the
parent's unflushed output a second time; a pool's worker that SIGTERM cannot end is killed
(map_in_workers)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time

import pytest

from pgdoctor.diagnose.text import parallel
from pgdoctor.diagnose.text.parallel import beside


def test_the_result_comes_from_the_child_and_sees_memory_as_at_the_fork() -> None:
    data = list(range(100_000))
    with beside(lambda: (os.getpid(), sum(data))) as result:
        data.clear()  # after the fork: the child still has every item
        pid, total = result()
    assert pid != os.getpid() and total == sum(range(100_000))
    assert multiprocessing.active_children() == []


def test_an_error_in_the_child_is_raised_in_the_parent() -> None:
    calls: list[int] = []

    def boom() -> int:
        calls.append(os.getpid())
        raise ValueError("bad events")

    with pytest.raises(ValueError, match="bad events"), beside(boom) as result:
        result()
    assert calls == [os.getpid()]  # the child's call left no trace here; the parent's raised
    assert multiprocessing.active_children() == []


def test_a_result_never_asked_for_leaves_no_child() -> None:
    with beside(lambda: __import__("time").sleep(30)):
        pass
    assert multiprocessing.active_children() == []


def test_the_parents_unflushed_output_is_written_once() -> None:
    code = (
        "import sys\nfrom pgdoctor.diagnose.text.parallel import beside\n"
        "sys.stdout.write('pending|')\nwith beside(lambda: 41 + 1) as r:\n    v = r()\nprint(v)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert out == "pending|42\n"


def test_disabled_it_runs_here_when_asked() -> None:
    with beside(lambda: os.getpid(), enabled=False) as result:
        assert result() == os.getpid()


def _stuck_in_a_worker(item: int) -> int:
    """In a pool worker: a child that SIGTERM cannot end (as one deadlocked before it reset the parent's
    handler), that never answers. In the parent: the answer."""
    if os.getpid() != PARENT[0]:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(600)
    return item * 2


PARENT = [0]


def test_a_worker_that_sigterm_cannot_end_is_killed_and_its_work_done_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pool.terminate() waited for such a worker without a bound (a test worker sat 300 s in its join)."""
    PARENT[0] = os.getpid()
    monkeypatch.setattr(parallel, "WORKER_RESULT_TIMEOUT_S", 1.0)
    start = time.monotonic()
    before = set(multiprocessing.active_children())
    assert list(parallel.map_in_workers(_stuck_in_a_worker, [1, 2, 3], 2)) == [2, 4, 6]
    assert time.monotonic() - start < 60
    assert set(multiprocessing.active_children()) <= before
