"""Running out of threads, processes, memory or file descriptors is the environment's limit: one
line naming it and exit 3 (engine/errors.py: resource_exhaustion, applied by main()), and where
threads or processes cannot be had the work runs in the calling thread instead."""

from __future__ import annotations

import errno
import resource
import subprocess
import sys
import threading

import pytest

from pgdoctor.diagnose.text import parallel
from pgdoctor.engine.errors import resource_exhaustion


@pytest.mark.parametrize(
    ("exc", "word"),
    [
        (MemoryError(), "memory"),
        (RuntimeError("can't start new thread"), "thread"),
        (BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable"), "ulimit -u"),
        (OSError(errno.ENOMEM, "Cannot allocate memory"), "memory"),
        (OSError(errno.EMFILE, "Too many open files"), "ulimit -n"),
    ],
)
def test_each_exhausted_resource_is_named(exc: BaseException, word: str) -> None:
    got = resource_exhaustion(exc)
    assert got and word in got


@pytest.mark.parametrize("exc", [RuntimeError("other"), OSError(errno.ENOENT, "x"), ValueError("x")])
def test_other_errors_are_not_a_limit(exc: BaseException) -> None:
    assert resource_exhaustion(exc) is None


def test_probes_run_in_this_thread_when_no_thread_can_be_started(monkeypatch: pytest.MonkeyPatch) -> None:
    from pgdoctor.engine.runner import Selection, collect
    from pgdoctor.probes.base import ProbeContext

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    snap = collect(ProbeContext(env={}, level="quick"), Selection(only=("launch",)), timeout_s=30.0)
    assert snap.probes and all(p.status.value in ("passed", "unavailable") for p in snap.probes), snap.probes


def test_no_thread_is_started_under_a_low_address_space_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under ulimit -v below THREADS_NEED_AS a thread could fail inside its own start-up, and
    Thread.start would wait for it forever: the probes run in the calling thread instead."""
    from pgdoctor.engine.runner import Selection, collect
    from pgdoctor.probes.base import ProbeContext

    started: list[str] = []
    real_start = threading.Thread.start

    def spy(self: threading.Thread) -> None:
        started.append(self.name)
        real_start(self)

    monkeypatch.setattr(threading.Thread, "start", spy)
    monkeypatch.setattr(resource, "getrlimit", lambda which: (200 << 20, resource.RLIM_INFINITY))
    snap = collect(ProbeContext(env={}, level="quick"), Selection(only=("launch",)), timeout_s=30.0)
    assert snap.probes and all(p.status.value in ("passed", "unavailable") for p in snap.probes), snap.probes
    assert not [n for n in started if n.startswith("probe:")], started


def test_file_workers_fall_back_to_this_process_when_fork_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    import multiprocessing.context

    def refuse(*args: object, **kwargs: object) -> None:
        raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")

    monkeypatch.setattr(multiprocessing.context.ForkContext, "Pool", refuse)
    monkeypatch.setattr(multiprocessing.context.ForkProcess, "start", refuse)
    assert list(parallel.map_in_workers(abs, [-1, -2, 3], 3)) == [1, 2, 3]
    with parallel.beside(lambda: 42) as result:
        assert result() == 42


_HELD_AT_FORK = threading.Lock()


def _negate_under_the_lock(x: int) -> int:
    with _HELD_AT_FORK:
        return -x


def test_a_worker_stuck_on_a_lock_held_at_the_fork_is_replaced_by_this_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A forked worker inherits a lock another thread held at the fork, locked for ever: its results
    come from this process after WORKER_RESULT_TIMEOUT_S, and the stuck workers are ended."""
    monkeypatch.setattr(parallel, "WORKER_RESULT_TIMEOUT_S", 1.0)
    _HELD_AT_FORK.acquire()
    # released in this process only, after the pool forked with it held and before the timeout ends
    release = threading.Timer(1.5, _HELD_AT_FORK.release)
    release.start()
    try:
        assert list(parallel.map_in_workers(_negate_under_the_lock, [1, 2, 3], 3)) == [-1, -2, -3]
    finally:
        release.join()


def _low_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (120 << 20, 120 << 20))


def test_check_under_a_low_address_space_limit_is_never_a_crash() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "check", "--level", "quick"],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        preexec_fn=_low_address_space,
    )
    assert p.returncode in (0, 1, 3), (p.returncode, p.stderr[-1500:])
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr[-1500:]
