"""Work beside the parent in a forked process (text/parallel.beside): the result comes back,
errors surface in the parent, the child never outlives the context and never writes the
parent's unflushed output a second time."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys

import pytest

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
