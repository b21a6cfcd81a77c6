from __future__ import annotations

import os
import shutil
import signal
import tempfile

import pytest

from tests.helpers.paths import FIXTURES, TESTS  # noqa: F401  (re-exported for fixtures)

_CHILD_TMP = "PGDOCTOR_TEST_CHILD_TMPDIR"


def pytest_configure(config: pytest.Config) -> None:
    """Every child process of the suite gets TMPDIR in one directory that is removed when the
    session ends, also on failure and Ctrl-C: torchrun's agent leaves a torchelastic_* log dir in
    TMPDIR on every launch (about 20 per suite run piled up in /tmp). The controller keeps the
    TMPDIR it started with (tempfile caches it first), so pytest's tmp_path stays where it was and
    short enough for AF_UNIX socket paths; xdist workers inherit the directory, so their own temp
    files go there too, and it is removed with the rest."""
    if os.environ.get(_CHILD_TMP):
        return  # an xdist worker: the controller made it and removes it
    tempfile.gettempdir()
    path = tempfile.mkdtemp(prefix="pgdoctor-tests-")
    config.stash[_child_tmp_key] = path
    os.environ[_CHILD_TMP] = os.environ["TMPDIR"] = path
    # torch.compile's cache goes by tempfile.gettempdir(), which this process cached as /tmp: in a run
    # without workers (PGDOCTOR_TEST_WORKERS=0, or pytest alone) a compiled entry left /tmp/torchinductor_*.
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(path, "torchinductor"))
    # SIGTERM (a CI or `timeout` limit, a scheduler's stop) ends the session as Ctrl-C does, so that
    # pytest_unconfigure still removes the directory and xdist stops its workers: by default the signal
    # killed the controller outright and left the directory behind.
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _interrupt)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_unconfigure(config: pytest.Config) -> None:
    path = config.stash.get(_child_tmp_key, None)
    if path:
        shutil.rmtree(path, ignore_errors=True)


_child_tmp_key = pytest.StashKey[str]()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest tests first: the `large` ones (1.5-3 minutes each), then those that declare a timeout
    above the default, longest first (the README walk: about 2 minutes). Collected late (tests/verify,
    tests/cli) they ran at the end while the other workers had nothing left to do. The rest keep their
    order (the sort is stable)."""
    items.sort(key=lambda item: (item.get_closest_marker("large") is None, -_declared_timeout(item)))


def _declared_timeout(item: pytest.Item) -> float:
    """The test's own timeout mark in seconds, 0 where it has none (it runs under the default)."""
    mark = item.get_closest_marker("timeout")
    return float(mark.args[0]) if mark is not None and mark.args else 0.0


def child_pids(pid: int | None = None) -> set[int]:
    """Live (non-zombie) descendants of `pid` (default: this process), read from /proc."""
    root = pid or os.getpid()
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            parents[int(entry)] = int(fields[1])
    found: set[int] = set()
    frontier = {root}
    while frontier:
        nxt = {p for p, pp in parents.items() if pp in frontier and p not in found}
        found |= nxt
        frontier = nxt
    return found


@pytest.fixture
def no_leftover_children():
    """Fails the test if it leaves any descendant process of the test process running."""
    before = child_pids()
    yield
    import time

    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        left = child_pids() - before
        if not left:
            return
        time.sleep(0.1)
    pytest.fail(f"processes left behind: {sorted(left)}")
