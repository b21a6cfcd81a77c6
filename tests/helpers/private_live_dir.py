"""An autouse fixture for rooms whose tests start instrumented processes (in-process or children):
each test's live sockets go under its own temporary directory. With PGDOCTOR_LIVE_DIR unset they
would go to /tmp/pgdoctor-live-<uid> (the default that `pgdoctor run` and `hang` read), and a rank
that is killed leaves its socket file there."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def private_live_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGDOCTOR_LIVE_DIR", str(tmp_path / "live"))
