from __future__ import annotations

import os

import pytest

from tests.helpers.paths import FIXTURES, TESTS  # noqa: F401  (re-exported for fixtures)


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
